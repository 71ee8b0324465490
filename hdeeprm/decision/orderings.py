"""Job orderings (job-selection policies): the order in which a decision tries queued jobs.

HDeepRM's six job-selection policies (Herrera et al., "HDeepRM: Deep
Reinforcement Learning for Workload Management in Heterogeneous Clusters",
2019; the original HDeepRM's ``workload_manager.py``). Each sorts the pending
jobs by one ascending key, stably, so ties keep submission order:

==============  ===========================================  ====================
name            key (ascending)                              job attribute
==============  ===========================================  ====================
``random``      a fresh random permutation at each decision  —
``first``       submission order (FCFS)                      queue order
``shortest``    requested time (s, SWF field 9)              ``requested_time``
``smallest``    requested cores (SWF field 8)                ``res``
``low_mem``     memory per core (MB)                         ``mem``
``low_mem_bw``  memory bandwidth per core (GB/s)             ``mem_bw``
==============  ===========================================  ====================

Every ordering is registered once in :data:`JOB_ORDERINGS`, in action-index
order (:mod:`hdeeprm.decision.actions`); the sort key of a policy is written
only here and read by the queue ordering and by the action mask
(:class:`QueueHeads`).
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from hdeeprm.registry import Registry
from hdeeprm.workload.model import Job

_index_of = operator.attrgetter("index")


@dataclass(frozen=True)
class JobOrdering:
    """One job-selection policy.

    Attributes:
        name: Registered name.
        key: Job attribute sorted ascending (stable), or None for the queue's own
            (submission) order, or for ``random``.
        random: A fresh random permutation of the queue at each decision.
    """

    name: str
    key: str | None = None
    random: bool = False

    def order(self, queue: list[Job], rng: np.random.Generator) -> list[Job]:
        """The queue in this policy's order.

        Args:
            queue: Pending jobs in submission order (not modified).
            rng: Generator of the ``random`` permutation.

        Returns:
            ``queue`` itself for the submission order, else a new list.
        """
        if self.random:
            return [queue[i] for i in rng.permutation(len(queue))]
        if self.key is None:
            return queue
        return sorted(queue, key=operator.attrgetter(self.key))


#: The job-selection policies, in action-index order.
JOB_ORDERINGS: Registry[JobOrdering] = Registry("job-selection policy")
for _ordering in (JobOrdering("random", random=True), JobOrdering("first"),
                  JobOrdering("shortest", "requested_time"), JobOrdering("smallest", "res"),
                  JobOrdering("low_mem", "mem"), JobOrdering("low_mem_bw", "mem_bw")):
    JOB_ORDERINGS.register(_ordering.name, _ordering)

#: Job attributes the keyed orderings sort by (columns of :class:`QueueHeads`' table).
KEY_COLUMNS: tuple[str, ...] = tuple(JOB_ORDERINGS[n].key for n in JOB_ORDERINGS if JOB_ORDERINGS[n].key)
#: Columns whose lexicographic minimum stands for the ``random`` policy's head in the mask:
#: the smallest job (cores, then memory), the one most likely to fit.
_RANDOM_HEAD = (KEY_COLUMNS.index("res"), KEY_COLUMNS.index("mem"))


class QueueHeads:
    """The first job each job-selection policy would try, for the action mask.

    Args:
        jobs: All jobs of the workload, by index, when known in advance: their keys are
            tabulated once (float64, (nb_jobs, len(KEY_COLUMNS))); None reads the keys of
            the queued jobs at each call.
    """

    def __init__(self, jobs: Sequence[Job] | None = None) -> None:
        self._table = None if jobs is None else self._keys(jobs)
        # (name, column) per policy: column -1 = queue order, -2 = random.
        self._plan = [(name, -2 if o.random else (-1 if o.key is None else KEY_COLUMNS.index(o.key)))
                      for name, o in ((n, JOB_ORDERINGS[n]) for n in JOB_ORDERINGS)]

    @staticmethod
    def _keys(jobs: Sequence[Job]) -> np.ndarray:
        return np.array([[getattr(j, k) for k in KEY_COLUMNS] for j in jobs], dtype=np.float64).reshape(
            len(jobs), len(KEY_COLUMNS))

    def __call__(self, queue: Sequence[Job]) -> dict[str, int]:
        """Queue position of each policy's first job (``random``: the smallest job).

        Args:
            queue: Pending jobs in submission order, non-empty.

        Returns:
            ``{policy name: position in queue}``; ties go to the earliest submitted job.
        """
        if self._table is None:
            keys = self._keys(queue)
        else:
            keys = self._table[np.fromiter(map(_index_of, queue), dtype=np.intp, count=len(queue))]
        firsts = keys.argmin(axis=0).tolist()   # first minimum per column: submission order breaks ties
        heads = {}
        for name, col in self._plan:
            if col >= 0:
                heads[name] = firsts[col]
            elif col == -1:
                heads[name] = 0
            else:
                res, mem = _RANDOM_HEAD
                heads[name] = int(np.lexsort((keys[:, mem], keys[:, res]))[0])
        return heads
