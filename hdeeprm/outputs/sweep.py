"""Outputs of ``hdeeprm-sweep``: the summary table as Parquet, and the plot of every cell's main metrics.

The rows are those of :func:`hdeeprm.run.sweep.summary_rows` (one per cell: its name, the
swept option values, status, error, wall time, then the metrics summary of
:func:`hdeeprm.outputs.metrics.summarize`), also written as ``summary.csv``.

* **Parquet** (https://parquet.apache.org/docs/file-format/), written with pyarrow
  (an optional dependency: ``pip install pyarrow``): one typed column per CSV
  column; numbers stay numbers (int64 or float64), booleans booleans, a missing value
  (a failed cell's metrics, a finished cell's error) is null, not an empty string.
* **Plot**: one panel per metric of :data:`PLOT_METRICS`, one horizontal bar per cell
  in grid order, labelled with the cell's swept values and coloured by the value of the
  first (slowest-varying) grid key, so the cells that share it form one block; a failed
  cell has no bar and says so. Readable up to about 50 cells (the figure grows with the grid).

Both are written atomically (:func:`hdeeprm.files.atomic_write`), as ``summary.csv`` is: a full disk leaves
the previous file whole, or none.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hdeeprm.files import atomic_write
from hdeeprm.outputs.evaluation import METRIC_LABELS

#: The message when pyarrow is missing (the sweep goes on and writes the CSV and the plot).
PARQUET_MISSING = "summary.parquet not written: it needs pyarrow (pip install pyarrow, or pip install -e '.[parquet]')"
#: Metrics drawn by :func:`plot_summary`, keys of the metrics summary (titles and units from
#: :data:`~hdeeprm.outputs.evaluation.METRIC_LABELS`).
PLOT_METRICS: tuple[str, ...] = ("makespan", "mean_waiting_time", "mean_bounded_slowdown", "energy")


def _column(values: list[Any], type_name: str | None = None):
    """A pyarrow array of one column, "" as null: of type ``type_name`` (a pyarrow alias), else inferred.

    Inferred: ints, floats, bools or text; a column of nulls only is float64 (metrics are
    numbers); a column whose values have no common type (e.g. a swept option given as a
    number and as a name) is written as text, each value as the CSV writes it.
    """
    import pyarrow as pa

    values = [None if v == "" else v for v in values]
    if type_name is not None:
        return pa.array(values, type=pa.type_for_alias(type_name))
    if all(v is None for v in values):
        return pa.array(values, type=pa.float64())
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def summary_table(rows: Sequence[Mapping[str, Any]], types: Mapping[str, str] | None = None):
    """The summary rows as a :class:`pyarrow.Table`, one column per key, in the rows' key order.

    Args:
        rows: Dicts with the same keys (at least one row).
        types: Column name -> pyarrow type alias (``"string"``, ``"float64"``...) for the columns
            whose type is known whatever their values (e.g. an error column that is all null).

    Returns:
        The table; see the module docstring for the column types.

    Raises:
        ImportError: pyarrow is not installed.
    """
    import pyarrow as pa

    types = types or {}
    return pa.table({key: _column([row[key] for row in rows], types.get(key)) for key in rows[0]})


def write_parquet(path: str | Path, rows: Sequence[Mapping[str, Any]], types: Mapping[str, str] | None = None) -> Path:
    """Write the summary rows as a Parquet file (:func:`summary_table`, ``types`` as there).

    Returns:
        The file written.

    Raises:
        ImportError: pyarrow is not installed (nothing is written).
        OSError: The file cannot be written (naming it; the previous one stays whole).
    """
    import pyarrow.parquet as pq

    table = summary_table(rows, types)
    path = Path(path)
    with atomic_write(path, binary=True) as f:
        pq.write_table(table, f)
    return path


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def plot_summary(rows: Sequence[Mapping[str, Any]], keys: Sequence[str], path: str | Path, *,
                 metrics: Sequence[str] = PLOT_METRICS, labels: Sequence[str] | None = None,
                 title: str = "", dpi: int = 110) -> Path:
    """Bars of every cell's main metrics, grouped by the swept values (PNG, matplotlib's Agg backend).

    A panel's axis is logarithmic when its values span more than a factor 20.

    Args:
        rows: Summary rows (``status`` and the ``metrics`` keys; a missing metric is ``""`` or None).
        keys: The swept option names (the grid's keys, slowest-varying first).
        path: The PNG file to write.
        metrics: Keys of the metrics summary, one panel each.
        labels: One label per row (default: the row's values of ``keys`` joined by ``, ``).
        title: Title of the figure.
        dpi: Resolution.

    Returns:
        The file written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(rows)
    if labels is None:
        labels = [", ".join(str(row[k]) for k in keys) or row.get("cell", str(i)) for i, row in enumerate(rows)]
    labels = [f"{label} (failed)" if row.get("status") == "failed" else label for label, row in zip(labels, rows)]
    groups = [str(row[keys[0]]) for row in rows] if len(keys) > 1 else [""] * n
    palette = plt.get_cmap("tab10")
    order = list(dict.fromkeys(groups))
    colors = [palette(order.index(g) % 10) for g in groups]
    height = max(2.8, 1.4 + 0.24 * n)   # inches
    fig, axes = plt.subplots(1, len(metrics), sharey=True, squeeze=False, figsize=(2.2 + 2.9 * len(metrics), height))
    try:
        positions = list(range(n))
        for ax, metric in zip(axes[0], metrics):
            values = [_number(row.get(metric)) for row in rows]
            shown = [(p, v, c) for p, v, c in zip(positions, values, colors) if v is not None]
            if shown:
                ax.barh([p for p, _, _ in shown], [v for _, v, _ in shown], color=[c for _, _, c in shown])
                positive = [v for _, v, _ in shown if v > 0]
                if len(positive) == len(shown) and max(positive) / min(positive) > 20:
                    ax.set_xscale("log")
            for p in range(1, n):   # a thin line between blocks of the first key
                if groups[p] != groups[p - 1]:
                    ax.axhline(p - 0.5, color="0.6", linewidth=0.6)
            label = METRIC_LABELS.get(metric, metric)
            ax.set_title(f"mean {label}" if metric.startswith("mean_") else label, fontsize="medium")
            ax.grid(axis="x", alpha=0.3)
            ax.tick_params(axis="x", labelsize="small")
        axes[0][0].set_yticks(positions, labels, fontsize="small")
        axes[0][0].set_ylim(n - 0.5, -0.5)   # the first cell on top
        axes[0][0].set_ylabel(", ".join(keys) if keys else "cell")
        if len(order) > 1:
            handles = [plt.Rectangle((0, 0), 1, 1, color=palette(i % 10)) for i in range(len(order))]
            fig.legend(handles, order, title=keys[0], loc="upper right", fontsize="small", ncols=min(len(order), 4))
        if title:
            fig.suptitle(title, x=0.01, ha="left")
        top = 0.55 if len(order) > 1 else 0.2 if title else 0.0   # inches kept for the legend or the title
        fig.tight_layout(rect=(0, 0, 1, 1 - top / height))
        path = Path(path)
        with atomic_write(path, binary=True) as f:
            fig.savefig(f, dpi=dpi, format="png")
    finally:
        plt.close(fig)
    return path
