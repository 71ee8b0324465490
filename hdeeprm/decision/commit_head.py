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

Arrivals into an empty queue follow RLScheduler's event loop (l. 760-787): there, a
job arriving into an empty queue is taken alone, before the jobs ending at the same
instant release their nodes, so jobs arriving together into an empty queue are
tried in arrival order, not sorted: each starts if it fits the cores free *before*
that instant's releases, and the first that does not becomes the committed job
(and starts at once if the releases make room). This strategy does the same
(counting cores, not node memory), so that HDeepRM's engine with ``commit_head``
starts every job when RLScheduler's loop does (a test checks it on SDSC-SP2);
:mod:`hdeeprm.run.rlscheduler` replays their loop itself, backfilling included.
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
        self.manager = manager
        self.committed: int | None = None
        self._first: list[Job] = []     # arrivals into the empty queue that start first, in arrival order

    def on_batch(self, now: float, submitted: Sequence[Job], ended: Sequence[tuple[Job, object]]) -> None:
        """Jobs arriving into an empty queue: walk them in arrival order (module docstring)."""
        queue = self.manager.queue
        if self.committed is not None or len(queue) > len(submitted) or not submitted:
            return
        free = self.manager.resources.nb_free - sum(len(cores) for _, cores in ended)   # before the releases
        for job in submitted:
            if job.res > free:
                self.committed = job.index
                break
            self._first.append(job)
            free -= job.res

    def start(self, ordered: Sequence[Job], place: Callable[[Job], bool]) -> list[Job]:
        """The arrival-order jobs, the committed job if it fits, then the longest prefix of the rest that fits.

        Args:
            ordered: Queued jobs in the decision's order.
            place: See :meth:`StartStrategy.start`.

        Returns:
            The started jobs, in start order.
        """
        started: list[Job] = []
        queued = {j.index for j in ordered}
        first, self._first = self._first, []
        for job in first:
            if job.index not in queued:
                continue
            if not place(job):
                self.committed = job.index
                break
            started.append(job)
        done = {j.index for j in started}
        rest = [j for j in ordered if j.index not in done]
        if self.committed is not None:
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
