"""The ``commit_head`` start strategy: RLScheduler's commitment to the head of the sorted queue.

RLScheduler's scheduler (Zhang et al., SC'20; https://github.com/DIR-LAB/deep-batch-scheduler,
``HPCSimPickJobs.py`` l. 464-482 and 739-757) sorts the queue, takes the first job
and, when it does not fit, lets time pass until it does: the jobs that arrive
meanwhile wait behind it, whatever their priority, and the queue is sorted again
only once that job has started. HDeepRM's ``head_of_line`` re-sorts the queue at
every decision, so a job arriving with a better key overtakes a blocked head; under
``commit_head`` it does not.

What a decision starts: the committed job first, when one is queued (nothing when
it still does not fit); then the jobs of the decision's order, in order, until the
first that does not fit, which becomes the committed job. A committed job that
left the queue (rejected) releases the commitment.

The action mask treats the strategy as one that may start jobs behind the first
of an order (``head_only`` False): a pair is allowed when any queued job fits, even
though the committed job may block it.

RLScheduler's event loop differs from HDeepRM's batches in one case: a job
arriving into an *empty* queue is taken alone (l. 770-787), so when several jobs
arrive at the same instant into an empty queue they are tried in arrival order, not
sorted. :mod:`hdeeprm.run.rlscheduler` replays their loop exactly; this strategy is
the rule for HDeepRM's own engine and agents.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

from hdeeprm.decision.start_strategy import StartStrategy
from hdeeprm.workload.model import Job


class CommitHead(StartStrategy):
    """Commit to the first job of the order that does not fit until it starts (module docstring)."""

    name = "commit_head"

    def bind(self, manager) -> None:
        """Start with no committed job."""
        self.committed: int | None = None

    def start(self, ordered: Sequence[Job], place: Callable[[Job], bool]) -> list[Job]:
        """The committed job if it fits, then the longest prefix of the rest that fits.

        Args:
            ordered: Queued jobs in the decision's order.
            place: See :meth:`StartStrategy.start`.

        Returns:
            The started jobs, in start order.
        """
        started: list[Job] = []
        rest = list(ordered)
        if getattr(self, "committed", None) is not None:
            head = next((j for j in rest if j.index == self.committed), None)
            if head is not None:
                if not place(head):
                    return started
                started.append(head)
                rest.remove(head)
            self.committed = None
        for job in rest:
            if not place(job):
                self.committed = job.index
                break
            started.append(job)
        return started
