"""Node selection for GPU pods: the placement state and the fit rule.

A :class:`PlacementState` holds, per node of a :class:`~hdeeprm.platform.openb.GpuCluster`,
the free CPU and memory, and per GPU its free share (thousandths) and its free GPU memory (MiB).
A pod fits a node when the node has its CPU and memory left, its GPU model is allowed, and: for a
pod sharing one GPU, one GPU with ``gpu_milli`` free *and* the pod's GPU memory free; for ``k``
whole GPUs, ``k`` fully free GPUs of that node; nothing more for a CPU-only pod (openb
semantics). GPU memory is a per-GPU capacity under sharing: the pods sharing a GPU hold it only
while the sum of their GPU memory fits the GPU's (:func:`gpu_memory_mib`); a whole-GPU pod takes
the GPU's whole memory (no pod shares a GPU held whole). A pod's GPU memory need also restricts
its allowed types to those with that much memory (:class:`~hdeeprm.decision.gpu_manager.GpuManager`);
the openb and Philly traces carry no GPU memory need (0: no limit beyond the share).

The policies that score the fitting nodes (:class:`PlacementPolicy`: a name and a score function) are the
scoring plugins of :mod:`~hdeeprm.decision.gpu_scoring` (:data:`~hdeeprm.decision.gpu_scoring.GPU_PLACEMENTS`).

The walk over the fitting nodes in a policy's order of preference, and the tries of every fitting node when a
placement must pass a test (it must not delay a reservation), are :mod:`~hdeeprm.decision.gpu_choices`'.

A pod sharing a GPU takes, on the chosen node, the GPU with the least free share that fits
(``random``: a random fitting GPU; ``fgd``: the GPU its score chose); whole GPUs are the first
fully free ones (``open_gpu_share.go``).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from hdeeprm.decision.fragmentation import TypicalPods, frag_numerator, gpu_fit_counts
from hdeeprm.platform.openb import MILLI, GpuCluster

if TYPE_CHECKING:
    from hdeeprm.simulation.gpu_model import GpuSpeedModel

#: Highest node score of the Kubernetes scheduling framework (``framework.MaxNodeScore``).
MAX_SCORE = 100
#: MiB per GB of GPU memory: the library's ``memory`` (GB) is read as binary gigabytes, as GPU vendors state it
#: (a "32 GB" V100 has 32 x 1024 MiB).
MIB_PER_GB = 1024
#: Resolution of ``high_gflops``'s speed key: thousandths of the fastest type's speed (types closer than that tie).
SPEED_STEPS = 1000
#: Node states whose fragmentation a placement state remembers before it starts over (bounds its memory).
FRAG_MEMO_SIZE = 65536
#: Lookups after which a placement state drops that memory if fewer than one in four found the state.
FRAG_MEMO_TRIAL = 2048


def gpu_memory_mib(cluster: GpuCluster) -> np.ndarray:
    """GPU memory of one GPU of each model of ``cluster``, in MiB, int64 (M + 1,) (last entry: no GPU, 0).

    The library's ``memory`` field (GB, vendor datasheets, :mod:`hdeeprm.platform.gpu_types`) times
    :data:`MIB_PER_GB`, rounded down (openb's ``G2``: 20.97 GB, 21,473 MiB).
    """
    return np.array([int(gpu.memory * MIB_PER_GB) for gpu in cluster.gpu_types] + [0], dtype=np.int64)


@dataclass(frozen=True, slots=True)
class PodRequest:
    """What one pod asks for.

    Attributes:
        cpu: CPU in thousandths of a core.
        memory: Memory in MiB.
        num_gpu: GPUs (0: CPU-only).
        gpu_milli: Share of each GPU in thousandths (1000: whole GPUs).
        allowed: Allowed GPU models of the cluster, bool (nb_models + 1,) (last entry: "no GPU", False).
        gpu_memory: GPU memory the pod needs on each of its GPUs, MiB (0: none beyond its share). A pod sharing a
            GPU holds that much of the GPU's memory; a whole-GPU pod holds all of it whatever it asks.
    """

    cpu: int
    memory: int
    num_gpu: int
    gpu_milli: int
    allowed: np.ndarray
    gpu_memory: int = 0
    #: Whether the pod asks for a fraction of one GPU (derived).
    shares_gpu: bool = field(init=False, repr=False, compare=False)
    #: GPU share asked for, in thousandths (derived).
    gpu_request: int = field(init=False, repr=False, compare=False)
    #: The pod's GPU shape for ``gpu_clustering``: -1 CPU-only, 0 shared GPU, k for k whole GPUs (derived).
    shape_tag: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Derived once: placements read them for every node change (a frozen dataclass sets them so).
        shares = self.num_gpu == 1 and self.gpu_milli < MILLI
        object.__setattr__(self, "shares_gpu", shares)
        object.__setattr__(self, "gpu_request", self.num_gpu * self.gpu_milli)
        object.__setattr__(self, "shape_tag", -1 if self.num_gpu == 0 else 0 if shares else self.num_gpu)

    def memory_taken(self, capacity: int) -> int:
        """GPU memory the pod holds on each of its GPUs, MiB, on a GPU of ``capacity`` MiB.

        A pod sharing a GPU holds its :attr:`gpu_memory`; a whole-GPU pod the GPU's whole ``capacity``; a CPU-only
        pod none.
        """
        return self.gpu_memory if self.shares_gpu else capacity if self.num_gpu else 0


def gpu_fits(gpu_left: np.ndarray, memory_left: np.ndarray, pod: PodRequest, rows=None) -> np.ndarray:
    """Which GPUs have room for one of ``pod``'s GPUs: the rule every fit check of the GPU decisions uses.

    A GPU fits when its free share is at least ``pod.gpu_milli`` (a whole-GPU pod: the GPU is untouched, so its
    memory is all free) and, for a pod sharing a GPU with a GPU memory need, its free GPU memory is at least
    ``pod.gpu_memory`` (GPU memory as a capacity under sharing).

    Args:
        gpu_left: Free share per GPU in thousandths, int64 (..., G) (any leading shape: nodes, profile rows).
        memory_left: Free GPU memory per GPU in MiB: the same shape, or the array ``memory_left[rows]`` has it.
        pod: The pod.
        rows: An index of ``memory_left`` (None: none), applied only when the memory test is needed, so that a pod
            without a GPU memory need costs no copy of it.

    Returns:
        bool, the shape of ``gpu_left``.
    """
    fits = gpu_left >= pod.gpu_milli
    if pod.gpu_memory and pod.shares_gpu:
        fits &= (memory_left if rows is None else memory_left[rows]) >= pod.gpu_memory
    return fits


@dataclass(frozen=True, slots=True)
class Placement:
    """Where one job (or one part of a spread job) runs.

    Attributes:
        node: Node index.
        gpus: GPU indices on that node, int64 (k,).
        pod: The request placed there.
    """

    node: int
    gpus: np.ndarray
    pod: PodRequest

    @property
    def gpu_milli(self) -> int:
        """Thousandths of each of :attr:`gpus` the job holds (the request's share)."""
        return self.pod.gpu_milli


class PlacementState:
    """Free resources of every node of a cluster, updated as pods are placed and (timed runs) released.

    Args:
        cluster: The cluster.
        typical: Typical pods; when given, per-node fragmentation is kept up to date (needed by ``fgd`` and by
            the fragmentation record).
        speed: The run's speed model (a :class:`~hdeeprm.simulation.gpu_model.GpuSpeedModel`; None: its defaults),
            read by ``high_gflops`` and ``low_power`` (:attr:`type_keys`).

    Attributes:
        cpu_norm, gpu_norm: CPU (thousandths of a core) and GPU share (thousandths) of the largest node: the
            normalisers of ``best_fit``, ``worst_fit``, ``dot_product`` and ``gpu_clustering`` (128000 and 8000 on
            openb, the ATC'23 simulator's ``MaxSpecCpu`` and ``MaxSpecGpu``).
        cpu_left: Free CPU per node in thousandths of a core, int64 (N,).
        memory_left: Free memory per node in MiB, int64 (N,).
        gpu_left: Free share per GPU in thousandths, int64 (N, G) (G: most GPUs on a node; 0 for missing GPUs).
        total_left: ``gpu_left`` summed per node, int64 (N,).
        most_left: ``gpu_left``'s largest entry per node, int64 (N,) (what a pod on one GPU fits against).
        whole_free: GPUs with all their share free per node, int64 (N,) (what a pod of whole GPUs fits against).
        gpu_memory: Memory of one GPU of each node in MiB, int64 (N,) (0 without GPUs; :func:`gpu_memory_mib`).
        gpu_memory_left: Free GPU memory per GPU in MiB, int64 (N, G) (0 for missing GPUs).
        shapes: Whether each node runs a pod of each GPU shape (see :attr:`PodRequest.shape_tag`), bool (N, G + 1).
        frag: Per-node fragmentation numerator (see :func:`~hdeeprm.decision.fragmentation.frag_numerator`), int64
            (N,), or None without typical pods.
        active: Which nodes take new pods, bool (N,), or None (all; a provisioning agent switches nodes off).
        version: How many times each node's free resources changed, int64 (N,): the key of :meth:`cached_scores`.
    """

    def __init__(self, cluster: GpuCluster, typical: TypicalPods | None = None,
                 speed: GpuSpeedModel | None = None) -> None:
        self.cluster = cluster
        self.model = cluster.gpu_model
        self.gpu_count = cluster.gpu_count
        self.cpu_left = cluster.cpu_milli.copy()
        self.memory_left = cluster.memory_mib.copy()
        width = max(cluster.max_gpus_per_node, 1)
        present = np.arange(width) < cluster.gpu_count[:, None]
        self.gpu_memory = gpu_memory_mib(cluster)[cluster.gpu_model]
        self.set_free(self.cpu_left, self.memory_left, np.where(present, MILLI, 0).astype(np.int64),
                      np.where(present, self.gpu_memory[:, None], 0).astype(np.int64))
        self.speed = speed
        self._type_keys: tuple[np.ndarray, np.ndarray] | None = None
        self.shapes = np.zeros((cluster.nb_nodes, width + 1), dtype=bool)
        self.shape_pods = np.zeros((cluster.nb_nodes, width + 1), dtype=np.int64)
        self.cpu_norm = max(int(cluster.cpu_milli.max(initial=1)), 1)
        self.gpu_norm = MILLI * width
        self.typical = typical
        self.count = self.below = self.frag = None
        self.active: np.ndarray | None = None
        self.version = np.zeros(cluster.nb_nodes, dtype=np.int64)
        self._score_cache: dict[tuple, tuple[np.ndarray, np.ndarray | None, np.ndarray]] = {}
        # a node state's fit counts and fragmentation, by (model, free CPU, free GPU share, free share per GPU);
        # None once it has proved useless (placements only, as in the ATC'23 runs: node states never come back)
        self._frag_memo: dict[tuple, tuple[np.ndarray, np.ndarray, int]] | None = {}
        self._frag_lookups = self._frag_hits = 0
        if typical is not None:
            self.count, self.below = gpu_fit_counts(self.gpu_left, typical)
            self.frag = frag_numerator(self.cpu_left, self.total_left, self.count, self.below, self.model, typical)

    def free_copy(self) -> PlacementState:
        """A copy of the free resources (and :attr:`active`), without fragmentation tracking: a what-if state."""
        copy = PlacementState.__new__(PlacementState)
        copy.__dict__.update(self.__dict__)
        for name in ("cpu_left", "memory_left", "gpu_left", "total_left", "most_left", "whole_free", "gpu_memory_left",
                     "shapes", "shape_pods"):
            setattr(copy, name, getattr(self, name).copy())
        copy.typical = copy.count = copy.below = copy.frag = None
        copy.version, copy._score_cache = self.version.copy(), {}
        return copy

    def set_free(self, cpu_left: np.ndarray, memory_left: np.ndarray, gpu_left: np.ndarray,
                 gpu_memory_left: np.ndarray) -> None:
        """Set every node's free resources at once (a what-if state of a later time), with the sums kept from them.

        Args:
            cpu_left, memory_left: Free CPU (thousandths of a core) and memory (MiB) per node, int64 (N,).
            gpu_left, gpu_memory_left: Free share (thousandths) and GPU memory (MiB) per GPU, int64 (N, G).
        """
        self.cpu_left, self.memory_left, self.gpu_left, self.gpu_memory_left = (cpu_left, memory_left, gpu_left,
                                                                                gpu_memory_left)
        self.total_left = gpu_left.sum(axis=1)
        self.most_left = gpu_left.max(axis=1, initial=0)
        self.whole_free = (gpu_left >= MILLI).sum(axis=1)

    def add_cpu(self, nodes: np.ndarray, change: int) -> None:
        """Add ``change`` thousandths of a core to the free CPU of each of ``nodes`` (int (k,), repeats add again)."""
        np.add.at(self.cpu_left, nodes, change)
        self.version[nodes] += 1
        for node in np.unique(nodes).tolist() if self.typical is not None else ():
            self._refresh_fragmentation(node)   # free CPU is part of a node's fragmentation

    def cached_scores(self, key: tuple, nodes: np.ndarray,
                      compute: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray | None]]
                      ) -> tuple[np.ndarray, np.ndarray | None]:
        """A score function's results for ``nodes``, recomputed only for the nodes changed since last asked.

        For a score that depends on nothing but the pod (summed up in ``key``) and each node's own free resources
        (as ``fgd``'s does): each node's score is kept with the node's :attr:`version` and reused while the node is
        unchanged, so a placement, which changes one node, costs one node's scoring for the next pod of that shape
        instead of every fitting node's. The results are the same integers as ``compute(nodes)``.

        Args:
            key: Everything of the pod the score depends on (hashable), with the score's name.
            nodes: Fitting nodes, int64 (K,).
            compute: Scores (and chosen GPU, or None) of some nodes, int64 (k,) each: the uncached score function.

        Returns:
            ``(scores, gpus)`` for ``nodes``, int64 (K,) each (``gpus`` None when ``compute`` gives none).
        """
        entry = self._score_cache.get(key)
        if entry is None:
            size = len(self.version)
            entry = self._score_cache[key] = (np.zeros(size, dtype=np.int64), None, np.full(size, -1, dtype=np.int64))
        scores, gpus, seen = entry
        stale = nodes[seen[nodes] != self.version[nodes]]
        if len(stale):
            fresh, chosen = compute(stale)
            scores[stale] = fresh
            if chosen is not None:
                if gpus is None:
                    gpus = np.zeros(len(scores), dtype=np.int64)
                    self._score_cache[key] = (scores, gpus, seen)
                gpus[stale] = chosen
            seen[stale] = self.version[stale]
        return scores[nodes], None if gpus is None else gpus[nodes]

    def fitting_nodes(self, pod: PodRequest) -> np.ndarray:
        """Indices of the nodes the pod fits, ascending, int64 (K,)."""
        return np.flatnonzero(self.fits(pod))

    def fits(self, pod: PodRequest) -> np.ndarray:
        """Whether the pod fits each node now, bool (N,): the filter every placement applies."""
        ok = (self.cpu_left >= pod.cpu) & (self.memory_left >= pod.memory)
        if self.active is not None:
            ok &= self.active
        if pod.num_gpu:
            ok &= pod.allowed[self.model]
            if pod.num_gpu == 1 and not (pod.gpu_memory and pod.shares_gpu):
                ok &= self.most_left >= pod.gpu_milli   # one GPU, fitting by share alone
            elif pod.gpu_milli == MILLI:
                ok &= self.whole_free >= pod.num_gpu
            else:
                ok &= gpu_fits(self.gpu_left, self.gpu_memory_left, pod).sum(axis=1) >= pod.num_gpu
        return ok

    def has_room(self, node: int, gpus: np.ndarray, pod: PodRequest) -> bool:
        """Whether ``node`` is active and has room for ``pod`` on exactly ``gpus`` now (a reserved placement)."""
        return (self.cpu_left[node] >= pod.cpu and self.memory_left[node] >= pod.memory
                and (not pod.num_gpu or bool(gpu_fits(self.gpu_left[node, gpus], self.gpu_memory_left, pod,
                                                      (node, gpus)).all()))
                and (self.active is None or bool(self.active[node])))

    @property
    def type_keys(self) -> tuple[np.ndarray, np.ndarray]:
        """Per GPU model (and a last no-GPU entry): the speed key of ``high_gflops`` and the power key of ``low_power``.

        Speed key: ``floor(SPEED_STEPS x f_min / f)``, ``f`` the model's run-time factor in the run's speed model
        (:func:`~hdeeprm.simulation.gpu_model.type_factors`: the reference type's peak rate over the model's at the
        run's precision, from the vendor datasheets of the GPU type library, or the run's measured throughput
        table) and ``f_min`` the fastest model's: the model's speed in thousandths of the fastest one's. Power key:
        ``max TDP - TDP`` in W over the cluster's models (TDP of the GPU type library; a type without one takes its
        stand-in's, as the energy model does). int64 (M + 1,) each, higher is better; computed once.

        Raises:
            OptionsError: The speed model names an unknown type or precision (see ``type_factors``).
        """
        if self._type_keys is None:
            from hdeeprm.simulation.gpu_model import GpuSpeedModel, type_factors

            slowness, _, tdp, _ = type_factors(self.cluster, self.speed or GpuSpeedModel())
            speed = np.floor(SPEED_STEPS * slowness[:-1].min(initial=1.0) / slowness + 1e-9)
            power = np.rint(tdp[:-1].max(initial=0.0) - tdp)
            speed[-1] = power[-1] = 0
            self._type_keys = (speed.astype(np.int64), power.astype(np.int64))
        return self._type_keys

    def choose_gpus(self, node: int, pod: PodRequest, how: str, rng: np.random.Generator) -> np.ndarray:
        """GPUs of ``node`` for the pod, int64 (num_gpu,).

        A shared GPU is the one with the least free share that fits (``how="best"``) or a random fitting one
        (``how="random"``), fitting by share and GPU memory (:func:`gpu_fits`); whole GPUs are the first fully free
        ones; a CPU-only pod gets none.
        """
        left = self.gpu_left[node]
        if pod.num_gpu == 0:
            return np.empty(0, dtype=np.int64)
        if not pod.shares_gpu:
            return np.flatnonzero(left == MILLI)[:pod.num_gpu]
        fits = np.flatnonzero(gpu_fits(left, self.gpu_memory_left[node], pod))
        if how == "random":
            return fits[rng.integers(len(fits))][None]
        return fits[np.argmin(left[fits])][None]

    def place(self, node: int, gpus: np.ndarray, pod: PodRequest) -> None:
        """Take the pod's resources on ``node`` and ``gpus`` (which must fit: callers use :meth:`fitting_nodes`)."""
        self.cpu_left[node] -= pod.cpu
        self.memory_left[node] -= pod.memory
        if pod.num_gpu:
            self.gpu_left[node, gpus] -= pod.gpu_milli
            self.total_left[node] -= pod.gpu_request
            self._summarise(node)
            taken = pod.memory_taken(self.gpu_memory[node])
            if taken:
                self.gpu_memory_left[node, gpus] -= taken
            self.shapes[node, pod.shape_tag] = True
            self.shape_pods[node, pod.shape_tag] += 1
        self.version[node] += 1
        self._refresh_fragmentation(node)

    def release(self, node: int, gpus: np.ndarray, pod: PodRequest) -> None:
        """Give back what :meth:`place` took for the pod on ``node`` and ``gpus`` (a finished job)."""
        self.cpu_left[node] += pod.cpu
        self.memory_left[node] += pod.memory
        if pod.num_gpu:
            self.gpu_left[node, gpus] += pod.gpu_milli
            self.total_left[node] += pod.gpu_request
            self._summarise(node)
            taken = pod.memory_taken(self.gpu_memory[node])
            if taken:
                self.gpu_memory_left[node, gpus] += taken
            self.shape_pods[node, pod.shape_tag] -= 1
            self.shapes[node, pod.shape_tag] = self.shape_pods[node, pod.shape_tag] > 0
        self.version[node] += 1
        self._refresh_fragmentation(node)

    def _summarise(self, node: int) -> None:
        left = self.gpu_left[node].tolist()   # a few GPUs: Python's max and count beat NumPy's call overhead
        self.most_left[node] = max(left, default=0)
        self.whole_free[node] = left.count(MILLI)   # a share is at most MILLI: ">= MILLI" is "== MILLI"

    def _refresh_fragmentation(self, node: int) -> None:
        if self.typical is None:
            return
        # A pure function of the node's state; where jobs end, nodes keep returning to the same few states, so it
        # is memoised, until a lookup count shows fewer than one hit in four.
        memo = self._frag_memo
        if memo is not None:
            key = (int(self.model[node]), int(self.cpu_left[node]), int(self.total_left[node]),
                   self.gpu_left[node].tobytes())
            hit = memo.get(key)
            self._frag_lookups += 1
            if hit is not None:
                self._frag_hits += 1
                self.count[node], self.below[node], self.frag[node] = hit
                return
            if self._frag_lookups >= FRAG_MEMO_TRIAL and 4 * self._frag_hits < self._frag_lookups:
                self._frag_memo = memo = None
            elif len(memo) >= FRAG_MEMO_SIZE:
                memo.clear()
        count, below = gpu_fit_counts(self.gpu_left[node:node + 1], self.typical)
        frag = frag_numerator(self.cpu_left[node:node + 1], self.total_left[node:node + 1], count, below,
                              self.model[node:node + 1], self.typical)[0]
        self.count[node], self.below[node], self.frag[node] = count[0], below[0], frag
        if memo is not None:
            memo[key] = (count[0], below[0], frag)


#: A score function: (state, pod, fitting nodes (K,), rng) -> (int64 scores (K,), chosen GPU per node (K,) or None).
ScoreFunction = Callable[[PlacementState, PodRequest, np.ndarray, np.random.Generator],
                         tuple[np.ndarray, np.ndarray | None]]


@dataclass(frozen=True, slots=True)
class PlacementPolicy:
    """A node-selection policy.

    Attributes:
        name: Registry name.
        score: Scores the fitting nodes (see :data:`ScoreFunction`).
        gpu_selection: How a shared GPU is chosen when ``score`` returns no GPU: ``"best"`` or ``"random"``.
        needs_fragmentation: Whether the state must keep per-node fragmentation (typical pods).
    """

    name: str
    score: ScoreFunction
    gpu_selection: str = "best"
    needs_fragmentation: bool = False
