"""A typed, read-only view of the decision system's state, for observations and rewards.

Observations (:mod:`hdeeprm.decision.observation`) and rewards
(:mod:`hdeeprm.decision.reward`) read the state through a :class:`StateView`,
whichever simulator runs underneath (the embedded engine or a real Batsim
through PyBatsim), instead of reaching into the manager or the engine. The
arrays it returns are the live ones: read them, never write them.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from hdeeprm.decision.contention import ResourceState
from hdeeprm.decision.manager import WorkloadManager
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.workload.model import Job, Workload


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

    __slots__ = ("_manager", "progress", "hierarchy", "workload", "queue_indices")

    def __init__(self, manager: WorkloadManager, workload: Workload, progress: Callable[[Job], float]) -> None:
        self._manager = manager
        #: ``progress(job) -> float``: fraction of ``job``'s work done now, in [0, 1] (the simulator's own).
        self.progress = progress
        self.hierarchy: ResourceHierarchy = manager.hierarchy
        self.workload = workload
        #: ``queue_indices(queue)``: the job indices of the queue (intp, (len,)), cached between the
        #: reward of a step, the next observation and the action mask (the manager's cache).
        self.queue_indices = manager.queue_indices

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
