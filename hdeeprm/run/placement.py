"""Placement-only GPU experiments: the ATC'23 protocol (Weng et al., Fig. 9(a)) on a :class:`GpuCluster`.

Protocol of the published experiment, as its artifact runs it
(``hkust-adsl/kubernetes-scheduler-simulator``, ``experiments/run_scripts`` and
``pkg/simulator``), for each seed:

1. the trace's pods in a random order, followed by pods drawn with replacement from the
   trace until one more would bring the total GPU request above ``ratio`` (1.3) x the
   cluster's GPU capacity (a trace already above it loses random pods instead);
2. a random order of the nodes, which breaks score ties (the lowest-ranked best node wins);
3. pods placed one at a time, never removed; a pod that fits nowhere is skipped;
4. after every pod: arrived GPU request, allocated GPU share and fragmentation recorded.

The workload (order, resampled pods, node ranks) depends on the seed only, so every policy
sees the same arrivals for a seed. The typical pods of the fragmentation measure come from the
trace before resampling.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from hdeeprm.errors import OptionsError
from hdeeprm.decision.gpu_choices import select_node
from hdeeprm.decision.gpu_placement import PlacementState, PodRequest
from hdeeprm.decision.gpu_scoring import GPU_PLACEMENTS
from hdeeprm.decision.fragmentation import TypicalPods, allowed_models, typical_pods
from hdeeprm.outputs.gpu_metrics import mean_and_sd, value_at_arrived
from hdeeprm.platform.openb import MILLI, GpuCluster
from hdeeprm.workload.openb import OpenbPods

#: Total GPU request the ATC'23 experiment brings in, as a multiple of the cluster's GPU capacity.
ATC23_RATIO = 1.3
#: Largest ratio of the experiment: ten times the cluster's GPUs brought in (the paper's curves stop at 130 %;
#: beyond, the arrivals only grow the memory and the time taken).
MAX_RATIO = 10.0
#: Seeds of the ATC'23 runs (the artifact's ``tune_seed`` 42..51).
ATC23_SEEDS = tuple(range(42, 52))
#: The six policies of ATC'23 Fig. 9(a), in the paper's order.
ATC23_POLICIES = ("random", "dot_product", "gpu_clustering", "gpu_packing", "best_fit", "fgd")
#: The paper's allocation ratio (%) at 100 % arrived on the default trace: mean and standard deviation over its
#: 10 seeds (population sd), from the artifact's ``experiments/analysis/expected_results/analysis_allo_discrete.csv``.
ATC23_PUBLISHED = {"random": (86.30, 0.31), "dot_product": (90.62, 0.18), "gpu_clustering": (91.65, 0.58),
                   "gpu_packing": (91.78, 0.50), "best_fit": (92.86, 0.14), "fgd": (95.23, 0.10)}
#: The paper's fragmented GPU share (% of the GPU capacity) at 100 % arrived on the default trace (Fig. 7), mean and
#: population sd over its 10 seeds, from the artifact's ``expected_results/analysis_frag_discrete.csv``.
ATC23_PUBLISHED_FRAGMENTATION = {"random": (13.49, 0.30), "dot_product": (9.30, 0.19), "gpu_clustering": (8.21, 0.58),
                                 "gpu_packing": (8.13, 0.51), "best_fit": (7.05, 0.14), "fgd": (4.73, 0.11)}


@dataclass(frozen=True)
class PlacementRun:
    """The record of one policy on one arrival sequence (S pods arrived).

    Attributes:
        policy: Policy name.
        seed: Seed of the arrivals.
        capacity: GPUs x 1000.
        arrived: GPU request arrived after each pod, thousandths of a GPU, int64 (S,).
        allocated: GPU share allocated after each pod, thousandths of a GPU, int64 (S,).
        fragmented: Fragmented GPU share after each pod (ATC'23), thousandths of a GPU, float64 (S,).
        node: Node of each pod, -1 when it fit nowhere, int64 (S,).
    """

    policy: str
    seed: int
    capacity: int
    arrived: np.ndarray
    allocated: np.ndarray
    fragmented: np.ndarray
    node: np.ndarray

    @property
    def nb_failed(self) -> int:
        """Pods that fit nowhere."""
        return int((self.node < 0).sum())

    def allocation_at(self, percents: Sequence[int] | np.ndarray) -> np.ndarray:
        """Allocation ratio (%) at whole arrived percentages (see :func:`value_at_arrived`)."""
        return value_at_arrived(self.arrived, self.allocated, self.capacity, np.asarray(percents))

    def fragmentation_at(self, percents: Sequence[int] | np.ndarray) -> np.ndarray:
        """Fragmented share (% of the capacity) at whole arrived percentages."""
        return value_at_arrived(self.arrived, self.fragmented, self.capacity, np.asarray(percents))

    @property
    def fragmentation_ratio(self) -> np.ndarray:
        """Fragmented share of the idle GPU share after each pod, in [0, 1], float64 (S,) (1 when nothing is idle)."""
        idle = self.capacity - self.allocated
        return np.divide(self.fragmented, idle, out=np.ones(len(idle)), where=idle > 0)

    def fragmentation_ratio_at(self, percents: Sequence[int] | np.ndarray) -> np.ndarray:
        """Fragmentation ratio (% of the idle GPU share) at whole arrived percentages (ATC'23 Fig. 7(b))."""
        return value_at_arrived(self.arrived, self.fragmentation_ratio * self.capacity, self.capacity,
                                np.asarray(percents))


def arrival_order(pods: OpenbPods, capacity: int, ratio: float, rng: np.random.Generator) -> np.ndarray:
    """Pod indices in arrival order (step 1 of the module's protocol), int64.

    Args:
        pods: The trace.
        capacity: The cluster's GPUs x 1000.
        ratio: Target total GPU request over ``capacity``.
        rng: The seed's generator.
    """
    order = rng.permutation(len(pods))
    request = pods.gpu_request
    target = ratio * capacity
    total = int(request.sum())
    if total > target:
        keep = np.ones(len(order), dtype=bool)
        while total > target:
            alive = np.flatnonzero(keep)
            drop = alive[rng.integers(len(alive))]
            keep[drop] = False
            total -= int(request[order[drop]])
        return order[keep]
    extra: list[np.ndarray] = []
    while True:
        draws = rng.integers(len(pods), size=max(64, int(2 * (target - total) / max(request.mean(), 1)) + 64))
        reached = total + np.cumsum(request[draws])
        stop = int(np.searchsorted(reached, target, side="right"))
        extra.append(draws[:stop])
        if stop < len(draws):
            break
        total = int(reached[-1])
    return np.concatenate([order, *extra])


def pod_requests(pods: OpenbPods, models: tuple[str, ...]) -> list[PodRequest]:
    """One :class:`PodRequest` per pod, with its allowed models among the cluster's ``models``."""
    masks = {spec: allowed_models(spec, models) for spec in set(pods.gpu_spec)}
    return [PodRequest(int(c), int(m), int(n), int(g), masks[s])
            for c, m, n, g, s in zip(pods.cpu_milli, pods.memory_mib, pods.num_gpu, pods.gpu_milli, pods.gpu_spec)]


def run_placement(cluster: GpuCluster, requests: Sequence[PodRequest], order: np.ndarray, policy: str,
                  typical: TypicalPods, rank: np.ndarray, rng: np.random.Generator, seed: int = 0) -> PlacementRun:
    """Place the pods ``order`` names, one at a time, with ``policy``.

    Args:
        cluster: The cluster (empty at the start).
        requests: Every pod's request (indexed by ``order``).
        order: Pod indices in arrival order, int64 (S,).
        policy: A name of :data:`~hdeeprm.decision.gpu_scoring.GPU_PLACEMENTS`.
        typical: Typical pods of the fragmentation measure.
        rank: Tie-break rank of each node, int64 (N,).
        rng: The policy's random generator.
        seed: Seed of the arrivals, recorded in the result.

    Returns:
        The run's record.

    Raises:
        OptionsError: Unknown policy name (with the closest valid one).
    """
    chosen = GPU_PLACEMENTS[policy]
    state = PlacementState(cluster, typical)
    steps = len(order)
    arrived = np.empty(steps, dtype=np.int64)
    allocated = np.empty(steps, dtype=np.int64)
    fragmented = np.empty(steps, dtype=np.int64)
    node_of = np.full(steps, -1, dtype=np.int64)
    capacity = MILLI * cluster.nb_gpus
    total_arrived, total_allocated, total_frag = 0, 0, int(state.frag.sum())
    for step, index in enumerate(order):
        pod = requests[index]
        total_arrived += pod.gpu_request
        placed = select_node(state, pod, chosen, rank, rng)
        if placed is not None:
            node, gpus = placed
            before = int(state.frag[node])
            state.place(node, gpus, pod)
            total_frag += int(state.frag[node]) - before
            total_allocated += pod.gpu_request
            node_of[step] = node
        arrived[step], allocated[step], fragmented[step] = total_arrived, total_allocated, total_frag
    return PlacementRun(policy=policy, seed=seed, capacity=capacity, arrived=arrived, allocated=allocated,
                        fragmented=fragmented / typical.total, node=node_of)


def check_experiment_inputs(cluster: GpuCluster, pods: OpenbPods) -> None:
    """Refuse a cluster and pod list the experiment cannot run on (see :func:`run_experiment`).

    Raises:
        OptionsError: A cluster without GPU, or a pod list without pods or without any GPU request.
    """
    if cluster.nb_gpus == 0:
        raise OptionsError(f"the node list {cluster.source} has no GPU: the ATC'23 experiment places GPU requests")
    if len(pods) == 0:
        raise OptionsError(f"the pod list {pods.source} has no pod")
    if not pods.gpu_request.any():
        raise OptionsError(f"the pod list {pods.source} asks for no GPU (every pod has num_gpu 0 or gpu_milli 0): "
                           "the ATC'23 experiment brings in GPU requests up to ratio x the GPUs; give a pod list "
                           "with GPU pods")


def run_experiment(cluster: GpuCluster, pods: OpenbPods, policies: Iterable[str] = ATC23_POLICIES,
                   seeds: Iterable[int] = ATC23_SEEDS, ratio: float = ATC23_RATIO) -> list[PlacementRun]:
    """The ATC'23 placement experiment: every policy on every seed's arrivals (see the module docstring).

    Args:
        cluster: The cluster.
        pods: The trace.
        policies: Policy names.
        seeds: Seeds of the arrivals (one arrival sequence and node ranking per seed).
        ratio: Total GPU request brought in, over the cluster's GPU capacity.

    Returns:
        One run per (seed, policy), seeds outermost.

    Raises:
        OptionsError: Unknown policy name, a ``ratio`` that is not a finite number in (0, :data:`MAX_RATIO`],
            a negative seed, a cluster without GPU, or a pod list without pods or without any GPU request
            (the arrivals, drawn until they ask for ``ratio`` x the GPUs, would never end).
    """
    from hdeeprm.arguments import count, real

    policies = [GPU_PLACEMENTS.check(name) for name in policies]
    ratio = real("ratio", ratio, positive=True, maximum=MAX_RATIO)
    seeds = [count("seed", seed, 0) for seed in seeds]
    check_experiment_inputs(cluster, pods)
    typical = typical_pods(pods, cluster.models)
    requests = pod_requests(pods, cluster.models)
    capacity = MILLI * cluster.nb_gpus
    runs = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        order = arrival_order(pods, capacity, ratio, rng)
        rank = rng.permutation(cluster.nb_nodes)
        for name in policies:
            policy_rng = np.random.default_rng([seed, GPU_PLACEMENTS.index(name)])
            runs.append(run_placement(cluster, requests, order, name, typical, rank, policy_rng, seed))
    return runs


def summarize(runs: Sequence[PlacementRun], percent: int = 100,
              what: str = "allocation") -> dict[str, tuple[float, float, int]]:
    """Per policy, a ratio read at ``percent`` arrived: mean, population standard deviation, number of seeds.

    Args:
        runs: The runs.
        percent: Arrived ratio, in % of the GPU capacity.
        what: ``"allocation"`` (allocation ratio, %), ``"fragmentation"`` (fragmented share, % of capacity) or
            ``"fragmentation_ratio"`` (% of the idle GPU share).
    """
    table: dict[str, list[float]] = {}
    for run in runs:
        at = getattr(run, f"{what}_at")
        table.setdefault(run.policy, []).append(float(at([percent])[0]))
    out = {}
    for name, values in table.items():
        mean, sd = mean_and_sd(np.array(values)[:, None])
        out[name] = (float(mean[0]), float(sd[0]), len(values))
    return out
