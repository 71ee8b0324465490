"""GPU fragmentation (Weng et al., ATC'23): the model the placement policies score with and the runs report.

The fragmentation measure is the one of Weng et al., "Beware of Fragmentation:
Scheduling GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX
ATC 2023, section 4, as its simulator computes it (``hkust-adsl/kubernetes-scheduler-simulator``,
``pkg/utils/frag.go``, ``NodeGpuShareFragAmount``):

- the *typical pods* are the most frequent pod shapes (CPU, GPU share, GPU count, allowed
  GPU models) of the workload, taken by decreasing count until they cover 95 % of its pods,
  each weighted by its count (:func:`typical_pods`);
- for a node and a typical pod, the fragment is the node's idle GPU share (in thousandths)
  that pod could not use: all of it when the pod cannot run there (lack of CPU, of GPUs,
  wrong GPU model, or a CPU-only pod), else the idle share of the GPUs with less free share
  than the pod asks for;
- a node's fragmentation is the weighted mean over the typical pods; the cluster's amount is
  the sum over nodes and its ratio that amount over the idle GPU share.

Every quantity here is in thousandths of a GPU. The node measure is computed from per-node
counts so that a scheduler can evaluate hypothetical placements in one vectorised call
(:func:`frag_numerator`).
"""
from __future__ import annotations

import functools

from collections import Counter
from dataclasses import dataclass

import numpy as np

from hdeeprm.workload.openb import OpenbPods

#: Share of the pods the typical pods cover (the simulator's ``podPopularityThreshold`` of the ATC'23 runs).
TYPICAL_POPULARITY = 0.95


@dataclass(frozen=True)
class TypicalPods:
    """Typical pod shapes and their weights (M shapes).

    Attributes:
        cpu_milli: CPU of each shape in thousandths of a core, int64 (M,).
        gpu_milli: GPU share per GPU in thousandths, int64 (M,) (0 for CPU-only shapes).
        num_gpu: GPUs of each shape, int64 (M,).
        allowed: Whether each shape may run on each GPU model, bool (M, nb_models + 1); the last column is
            "no GPU" and is always False.
        weight: Pods of each shape in the workload, int64 (M,).
    """

    cpu_milli: np.ndarray
    gpu_milli: np.ndarray
    num_gpu: np.ndarray
    allowed: np.ndarray
    weight: np.ndarray

    @functools.cached_property
    def total(self) -> int:
        """Sum of the weights (the divisor that turns :func:`frag_numerator` into thousandths of a GPU)."""
        return int(self.weight.sum())


def allowed_models(spec: tuple[str, ...], models: tuple[str, ...]) -> np.ndarray:
    """Which of ``models`` a GPU type constraint allows, bool (nb_models + 1,), the last entry ("no GPU") False."""
    mask = np.zeros(len(models) + 1, dtype=bool)
    mask[:-1] = [not spec or m in spec for m in models]
    return mask


def typical_pods(pods: OpenbPods, models: tuple[str, ...], popularity: float = TYPICAL_POPULARITY,
                 include_cpu_pods: bool = True) -> TypicalPods:
    """The typical pods of a workload: its most frequent shapes covering ``popularity`` of its pods.

    Shapes are ``(cpu_milli, gpu_milli, num_gpu, gpu_spec)``, taken by decreasing count (ties: larger CPU,
    GPU share, GPU count, then spec first, as the ATC'23 simulator sorts them) until their pods reach
    ``popularity`` of all pods.

    Args:
        pods: The workload (the trace before any resampling).
        models: GPU model names of the cluster (column order of ``allowed``).
        popularity: Share of the pods to cover, in (0, 1].
        include_cpu_pods: Whether CPU-only pods count (they do in the ATC'23 runs).

    Returns:
        The typical pods.
    """
    keep = np.ones(len(pods), dtype=bool) if include_cpu_pods else pods.num_gpu > 0
    shapes = Counter((int(pods.cpu_milli[i]), int(pods.gpu_milli[i]), int(pods.num_gpu[i]), "|".join(pods.gpu_spec[i]))
                     for i in np.flatnonzero(keep))
    ranked = sorted(shapes.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
    total, chosen, covered = sum(shapes.values()), [], 0
    for shape, count in ranked:
        if covered >= popularity * total:
            break
        chosen.append((shape, count))
        covered += count
    return TypicalPods(cpu_milli=np.array([s[0] for s, _ in chosen], dtype=np.int64),
                       gpu_milli=np.array([s[1] for s, _ in chosen], dtype=np.int64),
                       num_gpu=np.array([s[2] for s, _ in chosen], dtype=np.int64),
                       allowed=np.array([allowed_models(tuple(m for m in s[3].split("|") if m), models)
                                         for s, _ in chosen], dtype=bool).reshape(len(chosen), len(models) + 1),
                       weight=np.array([c for _, c in chosen], dtype=np.int64))


def gpu_fit_counts(gpu_left: np.ndarray, typical: TypicalPods) -> tuple[np.ndarray, np.ndarray]:
    """Per node and typical pod: GPUs with enough free share, and the free share of the others.

    Args:
        gpu_left: Free share of each GPU of S nodes in thousandths, int64 (S, G), 0 for missing GPUs.
        typical: The typical pods (M shapes).

    Returns:
        ``(count, below)``, int64 (S, M): GPUs whose free share is at least the shape's ``gpu_milli``, and the
        summed free share of the GPUs below it.
    """
    fits = gpu_left[:, :, None] >= typical.gpu_milli[None, None, :]
    return fits.sum(axis=1), np.where(fits, 0, gpu_left[:, :, None]).sum(axis=1)


def frag_numerator(cpu_left: np.ndarray, total_left: np.ndarray, count: np.ndarray, below: np.ndarray,
                   model: np.ndarray, typical: TypicalPods) -> np.ndarray:
    """Fragmentation of S node states times ``typical.total`` (exact integers; divide to get thousandths).

    Args:
        cpu_left: Free CPU of each state in thousandths of a core, int64 (S,).
        total_left: Free GPU share of each state in thousandths, int64 (S,).
        count, below: As returned by :func:`gpu_fit_counts`, int64 (S, M).
        model: GPU model index of each state (-1: no GPU), int64 (S,).
        typical: The typical pods.

    Returns:
        ``sum_j weight_j x fragment_j``, int64 (S,), where the fragment is ``below`` when shape j can run on the
        state, else the whole ``total_left`` (ATC'23, section 4).
    """
    runs = (typical.allowed.T[model] & (cpu_left[:, None] >= typical.cpu_milli) & (count >= typical.num_gpu)
            & (typical.gpu_milli > 0))
    return np.where(runs, below, total_left[:, None]) @ typical.weight


@dataclass(frozen=True)
class Fragmentation:
    """The cluster's GPU fragmentation.

    Attributes:
        amount: Fragmented GPU share in thousandths of a GPU.
        idle: Idle GPU share in thousandths of a GPU.
    """

    amount: float
    idle: int

    @property
    def ratio(self) -> float:
        """Fragmented share of the idle GPU share, in [0, 1] (0 when nothing is idle)."""
        return self.amount / self.idle if self.idle else 0.0


def fragmentation(cpu_left: np.ndarray, gpu_left: np.ndarray, model: np.ndarray,
                  typical: TypicalPods) -> Fragmentation:
    """The ATC'23 fragmentation of a cluster state.

    Args:
        cpu_left: Free CPU of each node in thousandths of a core, int64 (N,).
        gpu_left: Free share of each GPU in thousandths, int64 (N, G), 0 for missing GPUs.
        model: GPU model index of each node (-1: no GPU), int64 (N,).
        typical: The typical pods.

    Returns:
        Amount and idle share (thousandths of a GPU).
    """
    total_left = gpu_left.sum(axis=1)
    count, below = gpu_fit_counts(gpu_left, typical)
    numerator = frag_numerator(cpu_left, total_left, count, below, model, typical)
    return Fragmentation(amount=float(numerator.sum()) / typical.total, idle=int(total_left.sum()))
