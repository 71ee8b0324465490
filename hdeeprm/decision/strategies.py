"""Start strategies: which of the ordered queued jobs a decision starts.

A decision orders the queue with its job-selection policy, then a start
strategy walks that order and asks the core selection to place jobs. HDeepRM's
only strategy so far is the original's **head-of-line** start: jobs are
started in order until the first one that does not fit, which blocks the rest
(Herrera et al. 2019). Backfilling strategies (EASY, conservative; Lifka 1995,
Mu'alem and Feitelson 2001) are further entries of :data:`START_STRATEGIES`.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from hdeeprm.registry import Registry
from hdeeprm.workload.model import Job


class StartStrategy:
    """Base class of start strategies.

    Subclasses implement :meth:`start`; they never touch the simulator
    themselves: ``place(job)`` does (cores, bookkeeping, EXECUTE_JOB).
    """

    name = ""

    def start(self, ordered: Sequence[Job], place: Callable[[Job], bool]) -> list[Job]:
        """Start jobs of ``ordered``.

        Args:
            ordered: Queued jobs in the decision's job-selection order.
            place: Starts one job now when it fits; returns whether it started.

        Returns:
            The started jobs, in the order they were started.
        """
        raise NotImplementedError


class HeadOfLine(StartStrategy):
    """Start jobs in order until the first that does not fit (head-of-line blocking)."""

    name = "head_of_line"

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
#: The strategy used when none is named (the original HDeepRM's).
DEFAULT_START_STRATEGY = HeadOfLine.name


def make_start_strategy(name: str) -> StartStrategy:
    """A fresh start strategy of the given name (see :data:`START_STRATEGIES`).

    Raises:
        OptionsError: an unknown name (lists the valid ones and the closest).
    """
    return START_STRATEGIES[name]()
