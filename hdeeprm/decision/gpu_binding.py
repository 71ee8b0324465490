"""Jobs that ask for cores and GPUs together: filter, score, bind (the GPU side of the workload manager).

On a platform whose nodes carry GPUs (an HDeepRM platform JSON with ``gpus`` in its node types, e.g.
``platforms/mixed_cpu_gpu.json``), a job may ask for ``res`` cores *and* ``num_gpu`` GPUs (``gpu_milli``
thousandths of each: 1000 = a whole GPU, less = a share of one). Its cores and GPUs are on one node, as a
Kubernetes pod's: the decision takes the steps of the Kubernetes scheduler framework,

1. **filter**: the nodes where the GPUs fit now (allowed model, whole GPUs free or a GPU with the share left)
   and that have ``res`` free cores (the GPU placement state counts each node's free cores, in thousandths,
   kept in step with the CPU state by :meth:`GpuBinder.take_cores` and :meth:`GpuBinder.give_cores`);
2. **score**: the run's GPU placement policy (:data:`~hdeeprm.decision.gpu_scoring.GPU_PLACEMENTS`,
   ``best_fit`` by default) picks the node and its GPUs;
3. **reserve/bind**: the decision's core selection takes ``res`` cores of that node (node memory
   included); when it cannot (memory), the node is filtered out and the next best is tried; the GPUs are
   bound with the cores, and both are released together when the job ends.

A job asking for more whole GPUs than the largest node holds is a **gang** (:meth:`GpuBinder.parts`): parts of
that many GPUs, its cores split in proportion, each part filtered, scored and bound in turn on another node,
rolled back all together when one part fits nowhere (the GPU replay's spread jobs,
:mod:`hdeeprm.decision.gpu_manager`).

A job that asks for no GPU never comes here: its cores are chosen as on a CPU-only platform (on any node),
only the free-core counts of the GPU state follow it.

**Run-time estimates.** Backfilling plans with estimated run times. A job given GPUs runs its requested time
(the trace duration, on the run's reference GPU type) times the run-time factor of those GPUs
(:meth:`~hdeeprm.simulation.gpu_model.GpuModel.factor`: 0.805 on an A100 SXM4, 1.121 on a V100 PCIe against a V100
SXM2 at FP32). With ``gpu_jobs.estimate`` ``"scaled"`` (the default) the reservations use that product, the
estimate of the timed GPU replay (:class:`RunTimeEstimate`, one rule for both): the estimate of a running job is
taken on the GPUs it holds, that of a job about to backfill on the GPUs the placement picked for it. With
``"requested"`` they use the requested time as it is (a scheduler that does not know the GPUs' speeds).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from hdeeprm.decision.contention import ResourceState
from hdeeprm.decision.gpu_manager import Placement, fit_together, split_in_proportion
from hdeeprm.decision.gpu_choices import plan_parts, select_node
from hdeeprm.decision.gpu_placement import PlacementPolicy, PlacementState, PodRequest
from hdeeprm.decision.gpu_scoring import placement_policy
from hdeeprm.errors import OptionsError
from hdeeprm.platform.openb import MILLI, GpuCluster
from hdeeprm.workload.model import Job

if TYPE_CHECKING:
    from hdeeprm.simulation.gpu_model import GpuModel, GpuShare, GpuSpeedModel

#: GPU placement policy of a mixed run that names none.
DEFAULT_BINDING_PLACEMENT = "best_fit"
#: How a mixed run's reservations estimate the run time of a job given GPUs (``gpu_jobs.estimate``, see the module
#: docstring): ``"scaled"`` = requested time x the GPUs' run-time factor, ``"requested"`` = requested time.
GPU_ESTIMATES = ("scaled", "requested")
#: Estimate of a mixed run that names none: the GPU replay's.
DEFAULT_GPU_ESTIMATE = "scaled"


@dataclass(frozen=True)
class RunTimeEstimate:
    """Estimated run time of a job on given GPUs: its duration times their run-time factor (the one rule).

    What the timed GPU replay's backfilling plans with (:class:`~hdeeprm.run.gpu_replay.GpuReplay`) and what a
    mixed run's reservations use with ``gpu_jobs.estimate`` ``"scaled"``. With a GPU model's factor it is exact
    (the kernel runs a job given GPUs its duration times the same factor).

    Attributes:
        durations: Each job's duration on the reference GPU type (the trace duration, a mixed run's requested
            time), seconds, by job index.
        factor: ``(job index, placements) -> run-time factor`` (:meth:`~hdeeprm.simulation.gpu_model.GpuModel.factor`).
        fastest: The smallest factor any GPU of the platform gives (a lower bound of every job's factor: the share
            and spread penalties are >= 1).
    """

    durations: Sequence[float] | np.ndarray
    factor: Callable[[int, Sequence[GpuShare]], float]
    fastest: float

    @classmethod
    def of(cls, model: GpuModel, durations: Sequence[float] | np.ndarray) -> RunTimeEstimate:
        """The estimate of ``model``'s speed model (its :meth:`~hdeeprm.simulation.gpu_model.GpuModel.factor`).

        Args:
            model: The run's GPU model.
            durations: Duration of each job on the reference GPU type, seconds, by job index.
        """
        slowness = np.asarray(model.slowness)[:-1]   # per GPU model; the last entry is "no GPU"
        return cls(durations, model.factor, float(slowness.min()) if slowness.size else 1.0)

    def __call__(self, job: int, placed: Sequence[GpuShare]) -> float:
        """Seconds job ``job`` is expected to run on ``placed`` (its placements): duration x factor."""
        return float(self.durations[job]) * self.factor(job, placed)

    def least(self, job: int) -> float:
        """Seconds job ``job`` runs at least, wherever it is placed: duration x :attr:`fastest`."""
        return float(self.durations[job]) * self.fastest


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
        placement: A name of :data:`~hdeeprm.decision.gpu_scoring.GPU_PLACEMENTS` or weighted policies
            (:func:`~hdeeprm.decision.gpu_scoring.placement_policy`), without the fragmentation model.
        rng: Random generator (node tie ranks, the ``random`` policy).
        estimate: How backfilling estimates the run time of a job given GPUs (see the module docstring): a
            :class:`RunTimeEstimate` over the jobs' requested times, or None (the requested time as it is).
        speed: The run's speed model (:class:`~hdeeprm.simulation.gpu_model.GpuSpeedModel`, the one the run's
            :class:`~hdeeprm.simulation.gpu_model.GpuModel` times the jobs with), read by ``high_gflops`` and
            ``low_power``; None: its defaults.

    Attributes:
        state: The GPU placement state (free GPU shares and free cores per node).
        held: GPUs of the running jobs, by job index.
        estimate: The ``estimate`` given.

    Raises:
        OptionsError: An unknown placement name (with the closest valid one), or one that needs the fragmentation
            model (``fgd``).
    """

    def __init__(self, cluster: GpuCluster, core_node: np.ndarray, placement: str = DEFAULT_BINDING_PLACEMENT,
                 rng: np.random.Generator | None = None, estimate: RunTimeEstimate | None = None,
                 speed: GpuSpeedModel | None = None) -> None:
        self.cluster = cluster
        self.estimate = estimate
        self.core_node = np.asarray(core_node)
        self.policy = binding_policy(placement)
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.rank = self.rng.permutation(cluster.nb_nodes)
        self.state = PlacementState(cluster, speed=speed)
        self._empty = PlacementState(cluster)   # the platform with nothing running (never changed)
        self.held: dict[int, list[Placement]] = {}
        self._pending: dict[int, list[Placement]] = {}
        self._widest = int(cluster.gpu_count.max(initial=0))
        self._any_model = np.ones(len(cluster.models) + 1, dtype=bool)

    def run_time(self, job: Job, placed: Sequence[Placement] | None) -> float:
        """Seconds ``job`` is expected to run on ``placed`` (its GPUs; None or empty: it holds none).

        Its requested time, times the GPUs' run-time factor with a :attr:`estimate` (see the module docstring).
        """
        if self.estimate is None or not placed or not job.num_gpu:
            return job.requested_time
        return self.estimate(job.index, placed)

    def duration(self, job: Job) -> float:
        """Seconds ``job`` runs on the reference GPU type: what :meth:`run_time` multiplies by its GPUs' factor."""
        if self.estimate is None or not job.num_gpu:
            return job.requested_time
        return float(self.estimate.durations[job.index])

    def least_run_time(self, job: Job) -> float:
        """Seconds ``job`` runs at least wherever its GPUs are (:meth:`run_time`'s lower bound), before placing it."""
        if self.estimate is None or not job.num_gpu:
            return job.requested_time
        return self.estimate.least(job.index)

    def pod(self, job: Job) -> PodRequest:
        """The node-level request of ``job``: its cores (thousandths) and its GPUs, any GPU model."""
        return PodRequest(job.res * MILLI, 0, job.num_gpu, job.gpu_milli, self._any_model)

    def parts(self, job: Job) -> list[tuple[int, PodRequest]]:
        """``(cores, request)`` of each node-level part of ``job``: one, or a gang of several.

        A job asking for more whole GPUs than the largest node holds is spread over nodes as in a GPU replay
        (:mod:`hdeeprm.decision.gpu_manager`): parts of that many whole GPUs plus the remainder, its cores split
        in proportion (the remainder on the first part).
        """
        num, widest = job.num_gpu, self._widest
        if num <= widest or job.gpu_milli < MILLI:
            return [(job.res, self.pod(job))]
        sizes = [widest] * (num // widest) + ([num % widest] if num % widest else [])
        return [(cores, PodRequest(cores * MILLI, 0, size, MILLI, self._any_model))
                for cores, size in zip(split_in_proportion(job.res, sizes, num), sizes)]

    def never_fits(self, job: Job) -> str | None:
        """Why ``job``'s cores and GPUs fit no node (or, for a gang, no set of nodes) of the empty platform, or None."""
        if not job.num_gpu:
            return None
        parts = self.parts(job)
        if len(parts) == 1 and len(self._empty.fitting_nodes(parts[0][1])) == 0:
            return (f"requests {job.res} cores and {job.num_gpu} x {job.gpu_milli} milli-GPU on one node, no node "
                    "has them")
        if len(parts) > 1 and not fit_together(self._empty.free_copy(), [pod for _, pod in parts]):
            return (f"requests {job.num_gpu} whole GPUs spread over {len(parts)} nodes "
                    f"({'+'.join(str(pod.num_gpu) for _, pod in parts)} GPUs with {job.res} cores in proportion); "
                    "the platform's nodes cannot hold them together")
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
        parts = self.parts(job)
        if len(parts) == 1:
            nodes = state.fitting_nodes(parts[0][1])
            if mem is None or len(nodes) == 0:
                return len(nodes) > 0
            free_cores = np.bincount(self.core_node[free], minlength=self.cluster.nb_nodes)[nodes]
            return bool((np.minimum(np.floor(mem[nodes] / job.mem), free_cores) >= job.res).any())
        # A gang: each part on the fitting node with the fewest free GPUs (memory permitting), all at once.
        room = np.bincount(self.core_node[free], minlength=self.cluster.nb_nodes)
        if mem is not None:
            room = np.minimum(np.floor(mem / job.mem), room)
        return plan_parts(state, [pod for _, pod in parts], (room * MILLI).astype(np.int64)) is not None

    def what_if(self) -> PlacementState:
        """A copy of the GPU state to release and take resources in (backfilling's reservations)."""
        return self.state.free_copy()

    def pending(self, job: Job) -> list[Placement] | None:
        """The GPUs :meth:`choose` picked for ``job`` last (before it is bound), one placement per part, or None."""
        return self._pending.get(job.index)

    def move(self, state: PlacementState, job: Job, cores: np.ndarray, share: list[Placement] | None,
             sign: int) -> None:
        """Take (``sign`` = -1) or give back (+1) ``job``'s cores and GPUs ``share`` in what-if ``state``."""
        state.add_cpu(self.core_node[np.asarray(cores, dtype=np.int64)], sign * MILLI)
        for p in share or ():
            (state.release if sign > 0 else state.place)(p.node, p.gpus, p.pod)

    def choose(self, job: Job, select_cores: Callable[[np.ndarray, int], np.ndarray | None]
               ) -> np.ndarray | None:
        """Cores for ``job`` where its GPUs fit now, part by part (all or nothing), or None (nothing changes).

        Each part goes on the best-scored node where its GPUs and cores fit; when the decision's core selection
        cannot take the part's cores there (memory), the node is filtered out and the next best is tried.

        Args:
            job: A queued job with ``num_gpu`` > 0.
            select_cores: The decision's core selection: (mask of the cores it may take, bool (nb_cores,), how
                many) -> core ids, or None.

        Returns:
            Core ids, int64 (job.res,), each part's on its node; its GPUs are kept for :meth:`take_cores`.
        """
        state = self.state
        active = state.active
        chosen: list[tuple[np.ndarray, Placement, PodRequest]] = []
        try:
            for count, pod in self.parts(job):
                excluded = np.ones(self.cluster.nb_nodes, dtype=bool) if active is None else active.copy()
                while True:
                    state.active = excluded
                    picked = select_node(state, pod, self.policy, self.rank, self.rng)
                    if picked is None:
                        return None
                    node, gpus = picked
                    mask = self.core_node == node
                    for cores, _, _ in chosen:   # the cores an earlier part of the gang took
                        mask[cores] = False
                    cores = select_cores(mask, count) if count else np.empty(0, dtype=np.int64)
                    if cores is not None:
                        break
                    excluded = excluded.copy()
                    excluded[node] = False   # its memory cannot hold the part's cores: filter it out, score again
                state.active = active
                state.place(node, gpus, pod)   # held while the next parts are placed
                gpu_part = PodRequest(0, 0, pod.num_gpu, pod.gpu_milli, pod.allowed)   # cores: take_cores counts them
                chosen.append((np.asarray(cores, dtype=np.int64), Placement(node, gpus, gpu_part), pod))
        finally:
            state.active = active
            for _, placed, pod in reversed(chosen):
                state.release(placed.node, placed.gpus, pod)
        self._pending[job.index] = [placed for _, placed, _ in chosen]
        return np.concatenate([cores for cores, _, _ in chosen])

    def take_cores(self, job: Job, cores: np.ndarray) -> list[Placement] | None:
        """Bind what ``job`` starts on: its cores (in the free-core counts) and the GPUs chosen for it, if any."""
        share = self._pending.pop(job.index, None)
        self.move(self.state, job, cores, share, -1)
        if share is not None:
            self.held[job.index] = share
        return share

    def give_cores(self, job: Job, cores: np.ndarray) -> None:
        """Release what ``job`` held (it ended): its cores and its GPUs."""
        self.move(self.state, job, cores, self.held.pop(job.index, None), +1)
