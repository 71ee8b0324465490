"""The start strategy interface, and the strategies that reserve nothing (head of line, greedy).

The registry of every strategy, with the table of what each starts, is
:mod:`hdeeprm.decision.strategies`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from hdeeprm.workload.model import Job


class StartStrategy:
    """Base class of start strategies.

    Subclasses implement :meth:`start`; they never touch the simulator
    themselves: ``place(job)`` does (cores, bookkeeping, EXECUTE_JOB).
    Strategies that keep state across decisions override :meth:`bind` and
    :meth:`on_batch`.
    """

    name = ""
    #: Whether a decision starts nothing when the first job of its order does not fit (the
    #: action mask then only looks at that job); False for strategies that look further.
    head_only = False

    def bind(self, manager) -> None:
        """Called once by the :class:`~hdeeprm.decision.manager.WorkloadManager` that uses the strategy."""

    def on_batch(self, now: float, submitted: Sequence[Job], ended: Sequence[tuple[Job, object]]) -> None:
        """Told every batch of events, before any decision on it.

        Args:
            now: Time of the batch in seconds.
            submitted: Jobs queued by the batch (rejected ones excluded), in Batsim order.
            ended: ``(job, cores)`` of the jobs that ended, in start order; ``cores`` is an int64
                array of core ids.
        """

    def start(self, ordered: Sequence[Job], place: Callable[[Job], bool]) -> list[Job]:
        """Start jobs of ``ordered``.

        Args:
            ordered: Queued jobs in the decision's job-selection order.
            place: ``place(job, cores=None)`` starts one job now when it fits, on ``cores``
                (int64 array) or, when None, on the cores the decision's core selection
                picks; returns whether it started.

        Returns:
            The started jobs, in the order they were started.
        """
        raise NotImplementedError


class HeadOfLine(StartStrategy):
    """Start jobs in order until the first that does not fit (head-of-line blocking)."""

    name = "head_of_line"
    head_only = True

    def start(self, ordered: Sequence[Job], place: Callable[[Job], bool]) -> list[Job]:
        """Start the longest prefix of ``ordered`` that fits (see :meth:`StartStrategy.start`)."""
        started = []
        for job in ordered:
            if not place(job):
                break
            started.append(job)
        return started


class Greedy(StartStrategy):
    """Start every job of the order that fits now; one that does not fit blocks nobody (no reservation)."""

    name = "greedy"

    def start(self, ordered: Sequence[Job], place: Callable[[Job], bool]) -> list[Job]:
        """Start each job of ``ordered`` that fits, in order (see :meth:`StartStrategy.start`)."""
        return [job for job in ordered if place(job)]
