"""The start strategy interface, and the strategies that reserve nothing (head of line, greedy).

Head of line and greedy are written once, :func:`start_in_order`, for the workload manager's jobs and the GPU
replay's (:class:`~hdeeprm.decision.gpu_manager.GpuManager`).

The registry of every strategy, with the table of what each starts, is
:mod:`hdeeprm.decision.strategies`.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TypeVar

from hdeeprm.workload.model import Job

#: A job as a strategy sees it (a :class:`~hdeeprm.workload.model.Job`, or a GPU job's index).
T = TypeVar("T")


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
    #: Whether the timed GPU replay can use it (:meth:`start_replay`).
    replays = False

    @staticmethod
    def start_replay(replay, now: float) -> list:
        """This strategy's decision in the timed GPU replay, over the hooks its manager offers.

        Args:
            replay: The :class:`~hdeeprm.decision.gpu_manager.GpuManager` (``in_order``, ``easy_view``,
                ``reservations``, ``ordered_queue``).
            now: The decision's time, seconds.

        Returns:
            ``(job index, placements)`` of the jobs started, in start order.

        Raises:
            NotImplementedError: A strategy the GPU replay does not have (``replays`` False).
        """
        raise NotImplementedError

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


def start_in_order(ordered: Iterable[T], place: Callable[[T], object], blocking: bool) -> list[tuple[T, object]]:
    """The strategies without reservation, written once for every resource: place the jobs of a decision in order.

    Head of line (``blocking``; the original HDeepRM's, Herrera et al. 2019) stops at the first job that does not
    fit; greedy (the Kubernetes scheduler's pending pods) tries every job, one that does not fit blocking nobody.

    Args:
        ordered: The queued jobs (any job type: :class:`~hdeeprm.workload.model.Job` objects, GPU job indices) in
            the decision's order.
        place: Starts one job now when it fits and returns what it started it on, else None or False.
        blocking: Head of line (True) or greedy (False).

    Returns:
        ``(job, what place returned)`` of the started jobs, in start order.
    """
    started = []
    for job in ordered:
        placed = place(job)
        if placed is not None and placed is not False:
            started.append((job, placed))
        elif blocking:
            break
    return started


class HeadOfLine(StartStrategy):
    """Start jobs in order until the first that does not fit (head-of-line blocking)."""

    name = "head_of_line"
    head_only = True
    replays = True

    @staticmethod
    def start_replay(replay, now: float) -> list:
        """The GPU replay's queue in order, up to the first job that does not fit."""
        return replay.in_order(blocking=True)

    def start(self, ordered: Sequence[Job], place: Callable[[Job], bool]) -> list[Job]:
        """Start the longest prefix of ``ordered`` that fits (see :meth:`StartStrategy.start`)."""
        return [job for job, _ in start_in_order(ordered, place, True)]


class Greedy(StartStrategy):
    """Start every job of the order that fits now; one that does not fit blocks nobody (no reservation)."""

    name = "greedy"
    replays = True

    @staticmethod
    def start_replay(replay, now: float) -> list:
        """Every job of the GPU replay's queue that fits, in order."""
        return replay.in_order(blocking=False)

    def start(self, ordered: Sequence[Job], place: Callable[[Job], bool]) -> list[Job]:
        """Start each job of ``ordered`` that fits, in order (see :meth:`StartStrategy.start`)."""
        return [job for job, _ in start_in_order(ordered, place, False)]
