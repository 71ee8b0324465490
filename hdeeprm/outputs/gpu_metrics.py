"""GPU metrics of the ATC'23 experiment: allocation rate and the curves against the arrived GPU share.

Fragmentation itself is a model the placement policies score with: :mod:`hdeeprm.decision.fragmentation`.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from hdeeprm.platform.openb import MILLI

#: Arrived ratios (percent of the GPU capacity) at which the ATC'23 analysis reads the allocation ratio.
ARRIVED_PERCENTS = np.arange(0, 131)


def allocation_rate(gpu_left: np.ndarray, nb_gpus: int) -> float:
    """GPU allocation rate: allocated GPU share over the cluster's GPU capacity, in [0, 1].

    Args:
        gpu_left: Free share of each GPU in thousandths, int64 (N, G), 0 for missing GPUs.
        nb_gpus: GPUs in the cluster.
    """
    return 1.0 - float(gpu_left.sum()) / (MILLI * nb_gpus) if nb_gpus else 0.0


def value_at_arrived(arrived: np.ndarray, value: np.ndarray, capacity: int,
                     percents: np.ndarray = ARRIVED_PERCENTS) -> np.ndarray:
    """A per-pod series read at whole arrived percentages, as the ATC'23 artifact's analysis does.

    The arrived ratio of each step is rounded to a whole percent; the value at x % is the mean of the
    (two-decimal) values of the steps at x % (or, when there is none, at x - 1..x + 1 %); NaN when none.
    Source: ``experiments/analysis/merge_alloc_discrete.py`` of ``hkust-adsl/kubernetes-scheduler-simulator``.

    Args:
        arrived: GPU request arrived after each step in thousandths of a GPU, (S,).
        value: The series in thousandths of a GPU (e.g. allocated share), (S,).
        capacity: The cluster's GPUs x 1000.
        percents: Arrived percentages to read at.

    Returns:
        The value in percent of the capacity at each of ``percents``, float64.
    """
    step = np.round(np.asarray(arrived, dtype=np.float64) * 100.0 / capacity)
    val = np.round(np.asarray(value, dtype=np.float64) * 100.0 / capacity, 2)
    out = np.full(len(percents), np.nan)
    for k, x in enumerate(percents):
        pick = step == x
        if not pick.any():
            pick = (step >= x - 1) & (step <= x + 1)
        if pick.any():
            out[k] = round(float(val[pick].mean()), 2)
    return out


def mean_and_sd(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean and population standard deviation over seeds (axis 0), ignoring NaN; NaN where every seed is NaN.

    Args:
        values: float64 (seeds, X).

    Returns:
        ``(mean, sd)``, float64 (X,) each.
    """
    values = np.asarray(values, dtype=np.float64)
    seen = np.isfinite(values)
    count = seen.sum(axis=0)
    filled = np.where(seen, values, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=0) / count
        sd = np.sqrt(np.where(seen, (values - mean) ** 2, 0.0).sum(axis=0) / count)
    return mean, sd


def plot_against_arrived(series: dict[str, np.ndarray], percents: np.ndarray, ylabel: str, path: str | Path,
                         title: str = "", dpi: int = 120) -> Path:
    """Draw one curve per policy (mean over seeds, shaded +- one standard deviation) against the arrived ratio.

    Args:
        series: Policy name -> values in percent, float64 (seeds, X), NaN where missing.
        percents: Arrived ratios in percent, (X,).
        ylabel: Label of the y axis (e.g. ``"GPU allocation ratio (%)"``).
        path: PNG file to write.
        title: Figure title.
        dpi: Resolution.

    Returns:
        ``path``.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    path = Path(path)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    try:
        for name, values in series.items():
            mean, sd = mean_and_sd(values)
            ax.plot(percents, mean, label=name)
            ax.fill_between(percents, mean - sd, mean + sd, alpha=0.2)
        ax.set_xlabel("arrived GPU request (% of GPU capacity)")
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=dpi)
    finally:
        plt.close(fig)
    return path
