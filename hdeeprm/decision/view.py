"""A typed, read-only view of the decision system's state, for observations and rewards.

Observations (:mod:`hdeeprm.decision.observation`) and rewards
(:mod:`hdeeprm.decision.reward`) read the state through a :class:`StateView`,
whichever simulator runs underneath (the embedded engine or a real Batsim
through PyBatsim), instead of reaching into the manager or the engine. The
arrays it returns are the live ones: read them, never write them.
"""
from __future__ import annotations

import operator
from collections.abc import Callable, Mapping, Sequence

import numpy as np

from hdeeprm.decision.contention import ResourceState
from hdeeprm.decision.manager import WorkloadManager
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.workload.model import Job, Workload

_index_of = operator.attrgetter("index")


class QueueIndex:
    """Job indices of the manager's queue, cached between calls (callable).

    The manager only appends to its queue list or replaces it by a new list
    (:class:`~hdeeprm.decision.manager.WorkloadManager`), so a list seen before with
    the same first job and the same job at the previously last position only
    gained jobs at its end: only those are read. Anything else rebuilds.
    """

    def __init__(self) -> None:
        self._list = self._first = self._last = None
        self._n = 0
        self._buf = np.empty(64, dtype=np.intp)

    def __call__(self, queue: Sequence[Job]) -> np.ndarray:
        """Indices of the jobs of ``queue`` (non-empty), intp, shape (len(queue),) (a view, do not keep)."""
        n = len(queue)
        cached = self._n
        if (queue is self._list and n >= cached and cached
                and queue[0] is self._first and queue[cached - 1] is self._last):
            if n > cached:
                if n > self._buf.size:
                    self._buf = np.resize(self._buf, 2 * n)
                self._buf[cached:n] = list(map(_index_of, queue[cached:]))
        else:
            if n > self._buf.size:
                self._buf = np.empty(2 * n, dtype=np.intp)
            self._buf[:n] = list(map(_index_of, queue))
            self._list = queue
            self._first = queue[0]
        self._n = n
        self._last = queue[n - 1]
        return self._buf[:n]


class StateView:
    """What an observation or a reward may read at a decision.

    Args:
        manager: The workload manager of the run.
        workload: The jobs of the run.
        progress: ``progress(job) -> float``, the fraction in [0, 1] of a running job's
            work done (the simulator's).

    Attributes:
        hierarchy: The platform (static).
        workload: The jobs (static).
    """

    __slots__ = ("_manager", "_progress", "hierarchy", "workload", "queue_indices")

    def __init__(self, manager: WorkloadManager, workload: Workload, progress: Callable[[Job], float]) -> None:
        self._manager = manager
        self._progress = progress
        self.hierarchy: ResourceHierarchy = manager.hierarchy
        self.workload = workload
        #: ``queue_indices(queue)``: the job indices of the queue (intp, (len,)), cached
        #: between the reward of a step and the next observation.
        self.queue_indices = QueueIndex()

    @property
    def now(self) -> float:
        """Simulated time of the decision, seconds."""
        return self._manager.now

    @property
    def queue(self) -> Sequence[Job]:
        """Pending jobs in submission order (do not modify)."""
        return self._manager.queue

    @property
    def queue_before(self) -> int:
        """Queue length at the previous decision (for the queue-variation observation)."""
        return self._manager.queue_before

    @property
    def running(self) -> Mapping[int, tuple[Job, np.ndarray]]:
        """Running jobs by index: ``(job, core ids int64 (job.res,))`` (do not modify)."""
        return self._manager.running

    @property
    def resources(self) -> ResourceState:
        """The heterogeneity layer: free cores, node memory, processor bandwidth, core pstates."""
        return self._manager.resources

    def progress(self, job: Job) -> float:
        """Fraction of ``job``'s work done now, in [0, 1]."""
        return self._progress(job)
