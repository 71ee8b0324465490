"""Start strategies: which of the ordered queued jobs a decision starts.

A decision orders the queue with its job-selection policy, then a start
strategy walks that order and asks the core selection to place jobs. Every
strategy combines with any ordering and any core selection:

=============================  ================================================================
name                           what a decision starts
=============================  ================================================================
``head_of_line`` (default)     jobs in order until the first that does not fit, which blocks
                               the rest (the original HDeepRM's, Herrera et al. 2019)
``easy_backfilling``           head of line, then EASY backfilling (Lifka, "The ANL/IBM SP
                               scheduling system", JSSPP 1995): one reservation for the
                               blocked head, computed from requested times; a later job starts
                               now if it does not delay that reservation
``conservative_backfilling``   a reservation for every queued job, in order (Mu'alem and
                               Feitelson, "Utilization, predictability, workloads, and user
                               runtime estimates in scheduling the IBM SP2 with backfilling",
                               IEEE TPDS 12(6), 2001); a job starts now if its reservation is now
=============================  ================================================================

The backfilling strategies live in :mod:`hdeeprm.decision.backfilling`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from hdeeprm.registry import Registry
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


#: The start strategies by name; ``head_of_line`` is the default.
START_STRATEGIES: Registry[type[StartStrategy]] = Registry("start strategy")
START_STRATEGIES.register(HeadOfLine.name, HeadOfLine)
from hdeeprm.decision.backfilling import ConservativeBackfilling, EasyBackfilling  # noqa: E402  (they subclass StartStrategy)

START_STRATEGIES.register(EasyBackfilling.name, EasyBackfilling)
START_STRATEGIES.register(ConservativeBackfilling.name, ConservativeBackfilling)
#: The strategy used when none is named (the original HDeepRM's).
DEFAULT_START_STRATEGY = HeadOfLine.name


def make_start_strategy(name: str) -> StartStrategy:
    """A fresh start strategy of the given name (see :data:`START_STRATEGIES`).

    Raises:
        OptionsError: an unknown name (lists the valid ones and the closest).
    """
    return START_STRATEGIES[name]()
