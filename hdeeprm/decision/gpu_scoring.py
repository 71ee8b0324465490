"""Scoring plugins of GPU placements: the policies of :data:`GPU_PLACEMENTS` and their weighted combinations.

The *score* stage of the Kubernetes scheduler framework for GPU pods: the filter (which nodes fit a pod) is
:class:`~hdeeprm.decision.gpu_placement.PlacementState`'s, and the walk over the fitting nodes in the order of
preference is :mod:`~hdeeprm.decision.gpu_choices`' (:func:`~hdeeprm.decision.gpu_choices.select_node`,
:func:`~hdeeprm.decision.gpu_choices.place_job`).

Every policy scores the fitting nodes with integers (higher is better); the node with the
best score wins, ties going to the node that comes first in a random order of the nodes drawn
once per run. Scores follow the plug-ins of the ATC'23 simulator of Weng et al.
(``hkust-adsl/kubernetes-scheduler-simulator``, ``pkg/simulator/plugin/*_score.go``),
including their integer truncations, which decide the ties:

==================  ==============================================================================
``random``          a uniformly random fitting node (``random_score.go``)
``first_fit``       the first fitting node in the cluster's node order
``best_fit``        least CPU and GPU left after placing, each over the largest node's, weight 1/2 each
                    (``best_fit_score.go``)
``worst_fit``       most CPU and GPU left after placing (the mirror of ``best_fit``: spreading)
``dot_product``     smallest dot product of the node's free (CPU, GPU) and the pod's request, both over
                    the largest node's (Tetris, SIGCOMM'14; ``dot_product_score.go``, merged GPU dimension)
``gpu_packing``     prefer a partly used GPU, then free GPUs of a used node, then idle nodes
                    (``gpu_packing_score.go``)
``gpu_clustering``  prefer nodes already running pods of the same GPU shape (``gpu_clustering_score.go``)
``fgd``             least growth of the node's fragmentation (fragmentation gradient descent, ATC'23;
                    ``fgd_score.go``)
``high_gflops``     the fastest GPU type first (highest speed: the inverse of the run-time factor of the
                    run's speed model, peak-rate ratios of the GPU type library), then ``best_fit``
``low_power``       the lowest-power GPU type first (lowest TDP, W, of the GPU type library), then
                    ``best_fit``
==================  ==============================================================================

``high_gflops`` and ``low_power`` are the GPU counterparts of the CPU core selections of the same
names (:mod:`~hdeeprm.decision.core_selection`); they are not in the ATC'23 simulator.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from hdeeprm.decision.fragmentation import frag_numerator
from hdeeprm.decision.gpu_placement import MAX_SCORE, PlacementPolicy, PlacementState, PodRequest, gpu_fits
from hdeeprm.errors import OptionsError
from hdeeprm.platform.openb import MILLI
from hdeeprm.registry import Registry

def _random(state, pod, nodes, rng):
    scores = np.zeros(len(nodes), dtype=np.int64)
    scores[rng.integers(len(nodes))] = MAX_SCORE
    return scores, None


def _first_fit(state, pod, nodes, rng):
    return -nodes, None


def _left_after(state, pod, nodes):
    # (cpu left - request) / largest cpu x 1/2 + (GPU left - request) / largest GPU x 1/2, in best_fit_score.go's
    # operation order so that the truncation to an integer matches.
    cpu = (state.cpu_left[nodes] - pod.cpu) / state.cpu_norm * 0.5
    gpu = (state.total_left[nodes] - pod.gpu_request) / state.gpu_norm * 0.5
    return (0.0 + cpu) + gpu


def _best_fit(state, pod, nodes, rng):
    return ((1.0 - _left_after(state, pod, nodes)) * MAX_SCORE).astype(np.int64), None


def _worst_fit(state, pod, nodes, rng):
    return (_left_after(state, pod, nodes) * MAX_SCORE).astype(np.int64), None


def _dot_product(state, pod, nodes, rng):
    inner = (0.0 + (state.cpu_left[nodes] / state.cpu_norm) * (pod.cpu / state.cpu_norm))
    inner = inner + (state.total_left[nodes] / state.gpu_norm) * (pod.gpu_request / state.gpu_norm)
    return (float(MAX_SCORE) * (1.0 - inner / 2.0)).astype(np.int64), None


def _gpu_packing(state, pod, nodes, rng):
    if pod.num_gpu == 0:
        return np.zeros(len(nodes), dtype=np.int64), None
    left = state.gpu_left[nodes]
    free = (left == MILLI).sum(axis=1)
    idle_node = free == state.gpu_count[nodes]
    if pod.shares_gpu:
        tightest = np.where(gpu_fits(left, state.gpu_memory_left, pod, nodes), left, 2 * MILLI).min(axis=1)
        used = np.where(tightest == MILLI, np.maximum(MAX_SCORE // 2 - 1, MAX_SCORE // 3),
                        np.maximum(MAX_SCORE - (tightest * 100 // MILLI) // 10, MAX_SCORE // 2))
    else:
        used = np.full(len(nodes), max(MAX_SCORE // 2 - pod.num_gpu, MAX_SCORE // 3), dtype=np.int64)
    return np.where(idle_node, np.maximum(MAX_SCORE // 3 - free, free), used).astype(np.int64), None


def _gpu_clustering(state, pod, nodes, rng):
    if pod.num_gpu == 0:
        return np.zeros(len(nodes), dtype=np.int64), None
    quarter = MAX_SCORE // 4
    base = quarter * (state.gpu_norm - state.total_left[nodes]) // state.gpu_norm
    shapes = state.shapes[nodes]
    same = shapes[:, pod.shape_tag]
    nb_shapes = shapes.sum(axis=1)
    bonus = np.where(same, np.where(nb_shapes == 1, 3 * quarter, 2 * quarter), np.where(nb_shapes == 0, quarter, 0))
    return base + bonus, None


def fgd_score(delta: np.ndarray, total_weight: int) -> np.ndarray:
    """FGD's node score from the fragmentation decrease ``delta`` (numerator units, see ``frag_numerator``).

    ``int(sigmoid(decrease / 1000) x 100)`` with the decrease in thousandths of a GPU (``fgd_score.go``).
    """
    return (MAX_SCORE / (1.0 + np.exp(-(delta / total_weight) / MILLI))).astype(np.int64)


def _fgd(state, pod, nodes, rng):
    key = ("fgd", pod.cpu, pod.num_gpu, pod.gpu_milli, pod.gpu_memory if pod.shares_gpu else 0)
    return state.cached_scores(key, nodes, lambda stale: _fgd_scores(state, pod, stale))


def _fgd_scores(state, pod, nodes):
    typical = state.typical
    if pod.num_gpu == 0:
        frag = frag_numerator(state.cpu_left[nodes] - pod.cpu, state.total_left[nodes], state.count[nodes],
                              state.below[nodes], state.model[nodes], typical)
        return fgd_score(state.frag[nodes] - frag, typical.total), None
    if not pod.shares_gpu:
        frag = frag_numerator(state.cpu_left[nodes] - pod.cpu, state.total_left[nodes] - pod.gpu_request,
                              state.count[nodes] - pod.num_gpu, state.below[nodes], state.model[nodes], typical)
        return fgd_score(state.frag[nodes] - frag, typical.total), None
    # One candidate per (node, distinct free share) among the GPUs that fit, keeping the lowest GPU index.
    left = state.gpu_left[nodes]
    row, gpu = np.nonzero(gpu_fits(left, state.gpu_memory_left, pod, nodes))
    value = left[row, gpu]
    _, first = np.unique(row * (2 * MILLI + 1) + value, return_index=True)
    row, gpu, value = row[first], gpu[first], value[first]
    after = value - pod.gpu_milli
    need = typical.gpu_milli
    node = nodes[row]
    count = state.count[node] - (value[:, None] >= need) + (after[:, None] >= need)
    below = state.below[node] - np.where(value[:, None] < need, value[:, None], 0) + np.where(after[:, None] < need,
                                                                                              after[:, None], 0)
    frag = frag_numerator(state.cpu_left[node] - pod.cpu, state.total_left[node] - pod.gpu_milli, count, below,
                          state.model[node], typical)
    score = fgd_score(state.frag[node] - frag, typical.total)
    order = np.lexsort((gpu, -score, row))
    best = order[np.r_[True, row[order][1:] != row[order][:-1]]]
    return score[best], gpu[best]


def _by_type(key: np.ndarray, state: PlacementState, pod: PodRequest, nodes: np.ndarray, rng) -> np.ndarray:
    """Scores by ``key`` of each node's GPU model first, then by ``best_fit``'s score.

    ``key x 101 + best_fit``: lexicographic, as ``best_fit``'s scores lie in 0..:data:`MAX_SCORE`. A CPU-only pod,
    which no GPU type speeds up, is scored by ``best_fit`` alone.
    """
    tie = _best_fit(state, pod, nodes, rng)[0]
    if pod.num_gpu == 0:
        return tie
    return key[state.model[nodes]] * (MAX_SCORE + 1) + tie


def _high_gflops(state, pod, nodes, rng):
    return _by_type(state.type_keys[0], state, pod, nodes, rng), None


def _low_power(state, pod, nodes, rng):
    return _by_type(state.type_keys[1], state, pod, nodes, rng), None


#: Node-selection policies for GPU pods, by name (registration order is the index the ATC'23 runs seed with).
GPU_PLACEMENTS: Registry[PlacementPolicy] = Registry("GPU placement policy")
for _policy in (PlacementPolicy("random", _random, gpu_selection="random"),
                PlacementPolicy("first_fit", _first_fit),
                PlacementPolicy("best_fit", _best_fit),
                PlacementPolicy("worst_fit", _worst_fit),
                PlacementPolicy("dot_product", _dot_product),
                PlacementPolicy("gpu_packing", _gpu_packing),
                PlacementPolicy("gpu_clustering", _gpu_clustering),
                PlacementPolicy("fgd", _fgd, needs_fragmentation=True),
                PlacementPolicy("high_gflops", _high_gflops),
                PlacementPolicy("low_power", _low_power)):
    GPU_PLACEMENTS.register(_policy.name, _policy)


def draws_random(policy: PlacementPolicy) -> bool:
    """Whether ``policy`` draws random numbers (``random``, alone or weighted with others).

    A policy that does not scores and chooses GPUs from the state alone: asked again on the same state, it gives the
    same nodes and GPUs (what the backfilling passes' memos of refused shapes rely on).
    """
    return any(part.partition(":")[0] == "random" for part in policy.name.split("+"))


def weighted_placement(weights: Mapping[str, float]) -> PlacementPolicy:
    """Several placement policies scoring together, with weights: the Kubernetes scheduler framework's score phase.

    As Kubernetes normalises each score plugin's scores to [0, 100] before weighting them
    (https://kubernetes.io/docs/concepts/scheduling-eviction/scheduling-framework/, "Score" and "NormalizeScore"),
    each policy's scores over the fitting nodes are scaled min-max to [0, :data:`MAX_SCORE`] (all
    :data:`MAX_SCORE` when they are equal), then summed with the weights. A shared GPU is the one the heaviest
    policy that chooses GPUs chose; else the best-fitting one.

    Args:
        weights: Policy name (of :data:`GPU_PLACEMENTS`) -> weight (> 0), in the order they were written.

    Returns:
        The combined policy, named ``"fgd:1+best_fit:0.5"`` style.

    Raises:
        OptionsError: An unknown policy name, or a weight that is not a finite number > 0.
    """
    plugins = []
    for name, weight in weights.items():
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not 0 < weight < float("inf"):
            raise OptionsError(f"the weight of placement policy {name!r} must be a finite number > 0, got {weight!r}")
        plugins.append((GPU_PLACEMENTS[GPU_PLACEMENTS.check(name)], float(weight)))

    def score(state, pod, nodes, rng):
        total = np.zeros(len(nodes))
        chosen, chooser = None, 0.0
        for policy, weight in plugins:
            values, gpus = policy.score(state, pod, nodes, rng)
            low, high = values.min(), values.max()
            total += weight * (np.full(len(nodes), float(MAX_SCORE)) if high == low
                               else (values - low) * (MAX_SCORE / (high - low)))
            if gpus is not None and weight > chooser:
                chosen, chooser = gpus, weight
        return total, chosen

    name = "+".join(f"{policy.name}:{weight:g}" for policy, weight in plugins)
    return PlacementPolicy(name, score, needs_fragmentation=any(p.needs_fragmentation for p, _ in plugins))


def placement_policy(spec: str) -> PlacementPolicy:
    """The placement policy a run names: one of :data:`GPU_PLACEMENTS`, or weighted ``"fgd:1+best_fit:0.5"``.

    Raises:
        OptionsError: An unknown name (with the closest valid one), a malformed weight, or a policy named twice
            (``placement 'best_fit:1+best_fit:0.5' names policy 'best_fit' twice: ...``; one weight each, as the
            run records the string as written).
    """
    if ":" not in spec and "+" not in spec:
        return GPU_PLACEMENTS[GPU_PLACEMENTS.check(spec)]
    weights: dict[str, float] = {}
    for part in spec.split("+"):
        name, _, weight = part.partition(":")
        try:
            value = float(weight) if weight else 1.0
        except ValueError:
            raise OptionsError(f"placement {spec!r}: the weight of {name.strip()!r} must be a number, got "
                               f"{weight!r} (write e.g. 'fgd:1+best_fit:0.5')") from None
        policy = GPU_PLACEMENTS.check(name.strip())   # its registered name: an alias and its name are one policy
        if policy in weights:
            raise OptionsError(f"placement {spec!r} names policy {policy!r} twice: give each policy once, with "
                               "one weight (e.g. 'fgd:1+best_fit:0.5')")
        weights[policy] = value
    return weighted_placement(weights)
