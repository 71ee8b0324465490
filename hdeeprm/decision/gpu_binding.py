"""Jobs that ask for cores and GPUs together: filter, score, bind (the GPU side of the workload manager).

On a platform whose nodes carry GPUs (an HDeepRM platform JSON with ``gpus`` in its node types, e.g.
``platforms/mixed_cpu_gpu.json``), a job may ask for ``res`` cores *and* ``num_gpu`` GPUs (``gpu_milli``
thousandths of each: 1000 = a whole GPU, less = a share of one). Its cores and GPUs are on one node, as a
Kubernetes pod's: the decision takes the steps of the Kubernetes scheduler framework,

1. **filter**: the nodes where the GPUs fit now (allowed model, whole GPUs free or a GPU with the share left)
   and that have ``res`` free cores (the GPU placement state counts each node's free cores, in thousandths,
   kept in step with the CPU state by :meth:`GpuBinder.take_cores` and :meth:`GpuBinder.give_cores`);
2. **score**: the run's GPU placement policy (:data:`~hdeeprm.decision.gpu_placement.GPU_PLACEMENTS`,
   ``best_fit`` by default) picks the node and its GPUs;
3. **reserve/bind**: the decision's core selection takes ``res`` cores of that node (node memory
   included); when it cannot (memory), the node is filtered out and the next best is tried; the GPUs are
   bound with the cores, and both are released together when the job ends.

A job that asks for no GPU never comes here: its cores are chosen as on a CPU-only platform (on any node),
only the free-core counts of the GPU state follow it.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hdeeprm.decision.contention import ResourceState
from hdeeprm.decision.gpu_manager import Placement
from hdeeprm.decision.gpu_placement import PlacementPolicy, PlacementState, PodRequest, placement_policy, select_node
from hdeeprm.errors import OptionsError
from hdeeprm.platform.openb import MILLI, GpuCluster
from hdeeprm.workload.model import Job

#: GPU placement policy of a mixed run that names none.
DEFAULT_BINDING_PLACEMENT = "best_fit"


def binding_policy(placement: str) -> PlacementPolicy:
    """The placement policy that scores the nodes of jobs asking for cores and GPUs.

    Raises:
        OptionsError: An unknown name, or a policy that scores with the ATC'23 fragmentation (``fgd``): it needs
            the typical pods of a GPU replay's workload.
    """
    policy = placement_policy(placement)
    if policy.needs_fragmentation:
        raise OptionsError(f"placement {placement!r} scores with the ATC'23 fragmentation, which needs the typical "
                           "pods of a GPU replay; in a mixed run use a policy without it (e.g. best_fit)")
    return policy


class GpuBinder:
    """Filter, score and bind the GPUs of jobs that ask for cores and GPUs (see the module docstring).

    Args:
        cluster: The GPU side of the platform, one node per node of the CPU hierarchy, in the same order.
        core_node: Node of each core, int (nb_cores,).
        placement: A name of :data:`~hdeeprm.decision.gpu_placement.GPU_PLACEMENTS` or weighted policies
            (:func:`~hdeeprm.decision.gpu_placement.placement_policy`), without the fragmentation model.
        rng: Random generator (node tie ranks, the ``random`` policy).

    Attributes:
        state: The GPU placement state (free GPU shares and free cores per node).
        held: GPUs of the running jobs, by job index.

    Raises:
        OptionsError: An unknown placement name (with the closest valid one), or one that needs the fragmentation
            model (``fgd``).
    """

    def __init__(self, cluster: GpuCluster, core_node: np.ndarray, placement: str = DEFAULT_BINDING_PLACEMENT,
                 rng: np.random.Generator | None = None) -> None:
        self.cluster = cluster
        self.core_node = np.asarray(core_node)
        self.policy = binding_policy(placement)
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.rank = self.rng.permutation(cluster.nb_nodes)
        self.state = PlacementState(cluster)
        self._empty = PlacementState(cluster)   # the platform with nothing running (never changed)
        self.held: dict[int, Placement] = {}
        self._pending: dict[int, Placement] = {}
        self._any_model = np.ones(len(cluster.models) + 1, dtype=bool)

    def pod(self, job: Job) -> PodRequest:
        """The node-level request of ``job``: its cores (thousandths) and its GPUs, any GPU model."""
        return PodRequest(job.res * MILLI, 0, job.num_gpu, job.gpu_milli, self._any_model)

    def never_fits(self, job: Job) -> str | None:
        """Why ``job``'s cores and GPUs fit no node even when the platform is empty, or None."""
        if not job.num_gpu:
            return None
        if len(self._empty.fitting_nodes(self.pod(job))) == 0:
            return (f"requests {job.res} cores and {job.num_gpu} x {job.gpu_milli} milli-GPU on one node, no node "
                    "has them")
        return None

    def fits_now(self, job: Job, resources: ResourceState) -> bool:
        """Whether ``job``'s cores (with their node memory) and GPUs fit on one node now."""
        return self.fits(job, self.state, resources.core_free, resources.node_free_mem if job.mem > 0.0 else None)

    def fits(self, job: Job, state: PlacementState, free: np.ndarray, mem: np.ndarray | None) -> bool:
        """Whether ``job``'s cores and GPUs fit on one node of ``state`` (a real or what-if GPU state).

        Args:
            job: A job with ``num_gpu`` > 0.
            state: GPU placement state whose free-core counts match ``free``.
            free: Free cores, bool (nb_cores,).
            mem: Free memory per node in MB, float (nb_nodes,), or None when the job asks for none.
        """
        nodes = state.fitting_nodes(self.pod(job))
        if mem is None or len(nodes) == 0:
            return len(nodes) > 0
        free_cores = np.bincount(self.core_node[free], minlength=self.cluster.nb_nodes)[nodes]
        return bool((np.minimum(np.floor(mem[nodes] / job.mem), free_cores) >= job.res).any())

    def what_if(self) -> PlacementState:
        """A copy of the GPU state to release and take resources in (backfilling's reservations)."""
        return self.state.free_copy()

    def pending(self, job: Job) -> Placement | None:
        """The GPUs :meth:`choose` picked for ``job`` last (before it is bound), or None."""
        return self._pending.get(job.index)

    def move(self, state: PlacementState, job: Job, cores: np.ndarray, share: Placement | None, sign: int) -> None:
        """Take (``sign`` = -1) or give back (+1) ``job``'s cores and GPUs ``share`` in what-if ``state``."""
        state.cpu_left += sign * np.bincount(self.core_node[np.asarray(cores, dtype=np.int64)],
                                             minlength=self.cluster.nb_nodes) * MILLI
        if share is not None:
            (state.release if sign > 0 else state.place)(share.node, share.gpus, share.pod)

    def choose(self, job: Job, select_cores: Callable[[np.ndarray], np.ndarray | None]
               ) -> np.ndarray | None:
        """Cores for ``job`` on the best node where its GPUs fit now, or None (nothing changes).

        Args:
            job: A queued job with ``num_gpu`` > 0.
            select_cores: The decision's core selection restricted to the cores of a mask, bool (nb_cores,).

        Returns:
            Core ids, int64 (job.res,), all on one node; its GPUs are kept for :meth:`take_cores`.
        """
        pod, state = self.pod(job), self.state
        active = state.active
        excluded = np.ones(self.cluster.nb_nodes, dtype=bool) if active is None else active.copy()
        try:
            while True:
                state.active = excluded
                chosen = select_node(state, pod, self.policy, self.rank, self.rng)
                if chosen is None:
                    return None
                node, gpus = chosen
                cores = select_cores(self.core_node == node)
                if cores is not None:   # the cores are counted by take_cores: the GPU part alone is placed
                    self._pending[job.index] = Placement(node, gpus, PodRequest(0, 0, pod.num_gpu, pod.gpu_milli,
                                                                                pod.allowed))
                    return cores
                excluded = excluded.copy()
                excluded[node] = False   # its memory cannot hold the job's cores: filter it out, score again
        finally:
            state.active = active

    def take_cores(self, job: Job, cores: np.ndarray) -> Placement | None:
        """Bind what ``job`` starts on: its cores (in the free-core counts) and the GPUs chosen for it, if any."""
        share = self._pending.pop(job.index, None)
        self.move(self.state, job, cores, share, -1)
        if share is not None:
            self.held[job.index] = share
        return share

    def give_cores(self, job: Job, cores: np.ndarray) -> None:
        """Release what ``job`` held (it ended): its cores and its GPUs."""
        self.move(self.state, job, cores, self.held.pop(job.index, None), +1)
