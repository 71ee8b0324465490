"""Plots of an ``hdeeprm-launch`` output folder (matplotlib, Agg backend, PNG files).

=======================  ==========================  =======================================
plot                     reads                       shows
=======================  ==========================  =======================================
``rewards``              ``rewards.log``             total reward per episode
``losses``               ``losses.log``              training loss per episode
``action_preferences``   ``probs.json``              mean preference of each action per episode
``gantt``                ``out_jobs.csv``            cores of every job over time (s)
``utilization``          ``out_jobs.csv``            busy cores over time (s)
``queue_size``           ``out_jobs.csv``            pending jobs over time (s)
=======================  ==========================  =======================================

Every reader is a plain function returning numpy arrays, so the same data
can be plotted or checked elsewhere.
"""
from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from hdeeprm.errors import InputError

#: Plots and the file each one needs.
PLOTS: dict[str, str] = {"rewards": "rewards.log", "losses": "losses.log", "action_preferences": "probs.json",
                         "gantt": "out_jobs.csv", "utilization": "out_jobs.csv", "queue_size": "out_jobs.csv"}


def read_log(path: str | Path) -> np.ndarray:
    """One float per line (``rewards.log``, ``losses.log``, ``makespans.log``), float64 (n,).

    Raises:
        InputError: a line is not a number, or the file is not UTF-8 text (names the file and line).
    """
    values = []
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8").strip()
            except UnicodeDecodeError:
                raise InputError("line must be UTF-8 text", path=str(path), line=lineno) from None
            if not line:
                continue
            try:
                values.append(float(line))
            except ValueError:
                raise InputError(f"line must be a number, got {line!r}", path=str(path), line=lineno) from None
    return np.asarray(values, dtype=np.float64)


def read_probs(path: str | Path) -> tuple[list[str], np.ndarray]:
    """The action names and mean preferences per episode of ``probs.json``.

    Returns:
        ``(names, probs)``: one name per action; float64 (episodes, actions).

    Raises:
        InputError: not JSON, or not ``{"actions": [names], "mean_per_episode": [[numbers], ...]}``
            with one number per action in every episode.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise InputError("probs.json must be UTF-8 JSON text", path=str(path)) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"malformed JSON: {exc.msg} (column {exc.colno})", path=str(path), line=exc.lineno) from None
    rows = data.get("mean_per_episode") if isinstance(data, dict) else None
    try:
        probs = np.asarray(rows, dtype=np.float64)
    except (TypeError, ValueError):
        probs = np.zeros(0)
    if probs.ndim != 2 or probs.shape[0] == 0:
        raise InputError("'mean_per_episode' must be a non-empty list of equal-length lists of numbers",
                         path=str(path))
    names = data.get("actions") or [str(i) for i in range(probs.shape[1])]
    if not isinstance(names, list) or len(names) != probs.shape[1]:
        raise InputError(f"'actions' must name the {probs.shape[1]} actions of 'mean_per_episode', got {names!r}",
                         path=str(path))
    return [str(name) for name in names], probs


def read_jobs(path: str | Path) -> dict[str, np.ndarray | list]:
    """The columns of ``out_jobs.csv`` the plots need.

    Returns:
        ``submit``, ``start``, ``finish`` (s, float64 (n,), NaN for rejected
        jobs' start), ``res`` (int64 (n,)), ``ran`` (bool (n,): the job started),
        ``cores`` (list of int arrays: allocated core ids).

    Raises:
        InputError: a missing column or a malformed number.
    """
    from procset import ProcSet

    submit, start, finish, res, ran, cores = [], [], [], [], [], []
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        reader = csv.DictReader(f)
        for lineno, row in enumerate(reader, 2):
            try:
                started = row["final_state"] != "REJECTED" and row["starting_time"] not in ("", "-1")
                submit.append(float(row["submission_time"]))
                start.append(float(row["starting_time"]) if started else np.nan)
                finish.append(float(row["finish_time"]))
                res.append(int(row["requested_number_of_resources"]))
                alloc = row["allocated_resources"] if started else ""
                cores.append(np.fromiter(ProcSet.from_str(alloc), dtype=np.int64) if alloc else
                             np.zeros(0, np.int64))
            except KeyError as exc:
                raise InputError(f"missing column {exc}", path=str(path)) from None
            except ValueError as exc:
                raise InputError(f"malformed value: {exc}", path=str(path), line=lineno) from None
            ran.append(started)
    return {"submit": np.asarray(submit), "start": np.asarray(start), "finish": np.asarray(finish),
            "res": np.asarray(res, dtype=np.int64), "ran": np.asarray(ran, dtype=bool), "cores": cores}


def step_counts(up: np.ndarray, down: np.ndarray, weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """A counter raised at times ``up`` and lowered at times ``down`` (by ``weights``, default 1).

    At equal times decreases are applied before increases.

    Returns:
        ``(times, values)``: float64 (k,), the counter right after each time (a step function).
    """
    w = np.ones(up.size) if weights is None else np.asarray(weights, dtype=np.float64)
    t = np.concatenate([down, up])
    d = np.concatenate([-w, w])
    order = np.lexsort((d, t))
    t, v = t[order], np.cumsum(d[order])
    last = np.r_[t[1:] != t[:-1], True]
    return t[last], v[last]


def busy_cores(jobs: dict) -> tuple[np.ndarray, np.ndarray]:
    """Busy cores over time from :func:`read_jobs`: ``(times s, cores)``."""
    ran = jobs["ran"]
    return step_counts(jobs["start"][ran], jobs["finish"][ran], jobs["res"][ran])


def queue_size(jobs: dict) -> tuple[np.ndarray, np.ndarray]:
    """Pending jobs over time from :func:`read_jobs`: ``(times s, jobs)``; a job leaves at start or rejection."""
    leave = np.where(jobs["ran"], jobs["start"], jobs["finish"])
    return step_counts(jobs["submit"], leave)


def _integer_ticks(axis) -> None:
    """Ticks only at integers on ``axis`` (episodes, cores: never 2.25)."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(integer=True))


def _plot_series(ax, values: np.ndarray, ylabel: str, title: str) -> None:
    x = np.arange(1, values.size + 1)
    # A line through one point is invisible: mark the points of short series.
    ax.plot(x, values, lw=0.8, label="episode", marker="o" if values.size < 3 else None)
    _integer_ticks(ax.xaxis)
    if values.size >= 10:
        k = max(values.size // 20, 2)
        smooth = np.convolve(values, np.ones(k) / k, mode="valid")
        ax.plot(x[k - 1:], smooth, lw=1.6, label=f"mean of {k}")
        ax.legend()
    ax.set_xlabel("episode")
    ax.set_ylabel(ylabel)
    ax.set_title(title)


def _rewards(outdir: Path, ax) -> None:
    _plot_series(ax, read_log(outdir / "rewards.log"), "total reward", "Rewards")


def _losses(outdir: Path, ax) -> None:
    _plot_series(ax, read_log(outdir / "losses.log"), "loss", "Losses")


def _action_preferences(outdir: Path, ax) -> None:
    names, probs = read_probs(outdir / "probs.json")
    x = np.arange(1, probs.shape[0] + 1)
    ax.stackplot(x, probs.T, labels=names)
    ax.set_xlim(1, max(probs.shape[0], 2))
    ax.set_ylim(0, 1)
    ax.set_xlabel("episode")
    ax.set_ylabel("mean preference")
    ax.set_title("Action preferences")
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.0, 1.0))


def _gantt(outdir: Path, ax) -> None:
    jobs = read_jobs(outdir / "out_jobs.csv")
    cmap = __import__("matplotlib").colormaps["tab20"]
    for i in np.flatnonzero(jobs["ran"]).tolist():
        s, f = jobs["start"][i], jobs["finish"][i]
        cores = jobs["cores"][i]
        if cores.size == 0:
            continue
        # One bar per run of consecutive cores.
        breaks = np.flatnonzero(np.diff(cores) != 1) + 1
        for run in np.split(cores, breaks):
            ax.broken_barh([(s, f - s)], (run[0], run.size), facecolors=cmap(i % 20), edgecolor="k", lw=0.2)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("core")
    _integer_ticks(ax.yaxis)
    ax.set_title("Gantt chart")


def _step_plot(ax, series: tuple[np.ndarray, np.ndarray], ylabel: str, title: str) -> None:
    times, values = series
    # A step through one point is invisible: mark the points of short series.
    ax.step(times, values, where="post", marker="o" if times.size < 3 else None)
    _integer_ticks(ax.yaxis)
    ax.set_xlabel("time (s)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)


def _utilization(outdir: Path, ax) -> None:
    _step_plot(ax, busy_cores(read_jobs(outdir / "out_jobs.csv")), "busy cores", "Utilization")


def _queue_size(outdir: Path, ax) -> None:
    _step_plot(ax, queue_size(read_jobs(outdir / "out_jobs.csv")), "pending jobs", "Queue size")


_DRAW: dict[str, Callable] = {"rewards": _rewards, "losses": _losses, "action_preferences": _action_preferences,
                              "gantt": _gantt, "utilization": _utilization, "queue_size": _queue_size}


def available_plots(outdir: str | Path) -> list[str]:
    """The plots whose input file exists (and is not empty) in ``outdir``."""
    outdir = Path(outdir)
    return [name for name, f in PLOTS.items() if (outdir / f).is_file() and (outdir / f).stat().st_size > 0]


def make_plots(outdir: str | Path, plots: Sequence[str] | None = None, dest: str | Path | None = None,
               dpi: int = 120) -> list[Path]:
    """Draw plots of an output folder into ``{dest}/{plot}.png``.

    Args:
        outdir: The ``hdeeprm-launch`` output folder.
        plots: Names from :data:`PLOTS`; None = every plot whose input exists.
        dest: Folder of the PNG files (default ``outdir``).
        dpi: Resolution.

    Returns:
        The files written, in order.

    Raises:
        InputError: an unknown plot name, or a requested plot's input file is missing or malformed.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from hdeeprm.registry import suggest

    outdir = Path(outdir)
    dest = Path(dest) if dest is not None else outdir
    dest.mkdir(parents=True, exist_ok=True)
    names = available_plots(outdir) if plots is None else list(plots)
    written = []
    for name in names:
        if name not in PLOTS:
            raise InputError(f"unknown plot '{name}' ({suggest(name, list(PLOTS))})")
        source = outdir / PLOTS[name]
        if not source.is_file():
            raise InputError(f"plot '{name}' needs {PLOTS[name]}, which is missing", path=str(source))
        fig, ax = plt.subplots(figsize=(8, 4.5))
        try:
            _DRAW[name](outdir, ax)
            fig.tight_layout()
            path = dest / f"{name}.png"
            fig.savefig(path, dpi=dpi)
        finally:
            plt.close(fig)
        written.append(path)
    return written
