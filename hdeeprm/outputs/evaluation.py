"""Outputs of ``hdeeprm-evaluate``: the per-policy table, its CSV files and the box plot.

An evaluation runs every policy on every window of a trace; each run gives one
metrics summary (:func:`hdeeprm.outputs.metrics.summarize`, the only
definitions of the metrics). Here those summaries are aggregated per policy
over the windows: the mean with the sample standard deviation (ddof = 1, 0 for
a single window), and the median with the first and third quartiles (NumPy's
linear interpolation, :func:`numpy.percentile`). Box plots follow matplotlib's
convention (box = interquartile range, whiskers = 1.5 IQR, Tukey 1977).
"""
from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from hdeeprm.files import atomic_write

#: Metrics an evaluation reports, as (key of the metrics summary, column title, unit).
#: Bounded slowdown uses τ = 10 s (:data:`hdeeprm.outputs.metrics.BOUNDED_SLOWDOWN_TAU`).
EVALUATION_METRICS: tuple[tuple[str, str, str], ...] = (
    ("mean_bounded_slowdown", "bounded slowdown", ""),
    ("mean_waiting_time", "waiting time", "s"),
    ("mean_turnaround_time", "turnaround", "s"),
    ("utilization", "utilization", ""),
    ("makespan", "makespan", "s"),
    ("energy", "energy", "J"),
)
#: Label of each metric of :data:`EVALUATION_METRICS`: its title and, when it has one, its unit in brackets.
METRIC_LABELS: dict[str, str] = {key: f"{title} ({unit})" if unit else title for key, title, unit in EVALUATION_METRICS}
#: Statistics of each metric over the windows, as written in ``summary.csv``.
STATISTICS: tuple[str, ...] = ("mean", "std", "median", "q1", "q3")
#: The metric of the box plot.
BOX_METRIC = "mean_bounded_slowdown"


def spread(values: Sequence[float]) -> dict[str, float]:
    """Mean, sample standard deviation, median and quartiles of ``values``.

    Args:
        values: One value per window (at least one).

    Returns:
        ``{"mean", "std", "median", "q1", "q3"}``; ``std`` has ddof = 1 and is 0.0
        for a single value.
    """
    v = np.asarray(values, dtype=np.float64)
    q1, median, q3 = np.percentile(v, [25.0, 50.0, 75.0])
    return {"mean": float(v.mean()), "std": float(v.std(ddof=1)) if v.size > 1 else 0.0,
            "median": float(median), "q1": float(q1), "q3": float(q3)}


def aggregate(rows: Sequence[Mapping], labels: Sequence[str]) -> list[dict]:
    """One summary per policy over its windows.

    Args:
        rows: Per-window results: each has ``"policy"`` (a label) and the keys of
            :data:`EVALUATION_METRICS`.
        labels: The policies, in the order of the table.

    Returns:
        One dict per label: ``policy``, ``windows`` (how many), then
        ``<metric>_<statistic>`` for every metric and :data:`STATISTICS`.
    """
    out = []
    for label in labels:
        mine = [r for r in rows if r["policy"] == label]
        summary: dict = {"policy": label, "windows": len(mine)}
        for key, _, _ in EVALUATION_METRICS:
            stats = spread([r[key] for r in mine]) if mine else dict.fromkeys(STATISTICS, float("nan"))
            summary.update({f"{key}_{s}": stats[s] for s in STATISTICS})
        out.append(summary)
    return out


def format_number(value: float, scale: float | None = None) -> str:
    """A table number: 3 significant digits below 100, whole numbers below 10^6, else ``1.234e+08``.

    Args:
        value: The number.
        scale: The magnitude that picks the format (default ``|value|``), so that a
            mean and its spread are written alike.
    """
    if value != value or value in (float("inf"), float("-inf")):
        return str(value)
    scale = abs(value) if scale is None else scale
    if scale >= 1e6:
        return f"{value:.3e}"
    if scale >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def _cell(mean: float, std: float) -> str:
    return f"{format_number(mean)} ± {format_number(std, max(abs(mean), abs(std)) if abs(mean) >= 1e6 else None)}"


def format_table(summary: Sequence[Mapping]) -> str:
    """The printed table: one row per policy, ``mean ± std`` over the windows of each metric.

    Args:
        summary: The output of :func:`aggregate`.

    Returns:
        Lines joined by newlines (no trailing newline).
    """
    heads = ["policy"] + [METRIC_LABELS[key] for key, _, _ in EVALUATION_METRICS]
    body = [[str(s["policy"])] + [_cell(s[f"{key}_mean"], s[f"{key}_std"]) for key, _, _ in EVALUATION_METRICS]
            for s in summary]
    widths = [max(len(row[i]) for row in [heads, *body]) for i in range(len(heads))]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(heads, widths)))]
    lines.append("  ".join("-" * w for w in widths))
    for row in body:
        lines.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths))))
    return "\n".join(lines)


def write_csv(path: str | Path, rows: Sequence[Mapping]) -> Path:
    """Write dicts with the same keys as a CSV file (header = the first row's keys), atomically.

    The rows go to a temporary file beside ``path``, renamed over it at the end
    (:func:`hdeeprm.files.atomic_write`): a full disk leaves the previous file whole, or none.

    Returns:
        The file written.

    Raises:
        OSError: The file cannot be written (``No space left on device: PATH``).
    """
    path = Path(path)
    with atomic_write(path, newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    return path


def plot_boxes(rows: Sequence[Mapping], labels: Sequence[str], path: str | Path, *, metric: str = BOX_METRIC,
               title: str = "", dpi: int = 120) -> Path:
    """One box per policy of a metric's per-window values (PNG, matplotlib's Agg backend).

    The value axis is logarithmic when the values span more than a factor 20
    (bounded slowdowns often do).

    Args:
        rows: Per-window results (``"policy"`` and ``metric`` keys).
        labels: The policies, in the order of the boxes.
        path: The PNG file to write.
        metric: Key of the metrics summary to plot.
        title: Title of the figure.
        dpi: Resolution.

    Returns:
        The file written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    data = [np.asarray([r[metric] for r in rows if r["policy"] == label], dtype=np.float64) for label in labels]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(labels) + 2.0), 4.8))
    try:
        ax.boxplot(data, showmeans=True)
        ax.set_xticks(range(1, len(labels) + 1), labels, rotation=30, ha="right", fontsize="small")
        values = np.concatenate(data) if data else np.zeros(0)
        if values.size and values.min() > 0 and values.max() / values.min() > 20:
            ax.set_yscale("log")
        ax.set_ylabel(f"{METRIC_LABELS.get(metric, metric)} per window")
        ax.set_title(title)
        fig.tight_layout()
        path = Path(path)
        fig.savefig(path, dpi=dpi)
    finally:
        plt.close(fig)
    return path


def plot_training(rows: Sequence[Mapping], path: str | Path, *, metric: str = BOX_METRIC, dpi: int = 120) -> Path:
    """The learning curves of a training: episode return and training-window score against decisions (PNG).

    Two panels over the cumulative decisions (the agent's steps) at the end of each episode: the episode's
    return (sum of rewards) and ``metric`` of its training window, each with its running mean over the last
    10 episodes.

    Args:
        rows: One row per training episode with ``decisions`` (cumulative), ``reward`` and ``metric``
            (:func:`hdeeprm.run.evaluate.train_agent`).
        path: The PNG file to write.
        metric: Key of the metrics summary plotted as the training-window score.
        dpi: Resolution.

    Returns:
        The file written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = np.asarray([r["decisions"] for r in rows], dtype=np.float64)
    fig, axes = plt.subplots(2, 1, sharex=True, figsize=(7.0, 5.6))
    try:
        for ax, key, label in ((axes[0], "reward", "episode return"),
                               (axes[1], metric, f"{METRIC_LABELS.get(metric, metric)}, training window")):
            values = np.asarray([r[key] for r in rows], dtype=np.float64)
            window = min(10, len(values))
            running = np.convolve(values, np.ones(window) / window, mode="valid") if window else values
            ax.plot(steps, values, ".", alpha=0.4, label="episode")
            ax.plot(steps[window - 1:], running, "-", label=f"mean of the last {window}")
            ax.set_ylabel(label)
            ax.legend(fontsize="small")
        axes[1].set_xlabel("decisions (agent steps)")
        fig.tight_layout()
        path = Path(path)
        fig.savefig(path, dpi=dpi)
    finally:
        plt.close(fig)
    return path
