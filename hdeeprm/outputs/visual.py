"""Plots of an ``hdeeprm-launch`` output folder (matplotlib, Agg backend, PNG files).

=======================  ==========================  =======================================
plot                     reads                       shows
=======================  ==========================  =======================================
``rewards``              ``rewards.log``             total reward per episode (learning runs only)
``losses``               ``losses.log``              training loss per episode
``action_preferences``   ``probs.json``              mean preference of each action per episode
``gantt``                ``out_jobs.csv``            cores of every job over time
``utilization``          ``out_jobs.csv``            busy cores over time
``queue_size``           ``out_jobs.csv``            pending jobs over time
=======================  ==========================  =======================================

Rewards are drawn for learning runs only, and always for them (:func:`learning_run` tells which):
a classic policy pair gets no reward, and its ``rewards.log`` holds a 0 per episode that would
draw as a meaningless flat line. A run of one episode draws its one point, marked, with a note.
Time axes are in seconds, hours or days, chosen from the span shown (:func:`time_unit`); the
axis label names the unit.

Every reader is a plain function returning numpy arrays, so the same data
can be plotted or checked elsewhere; :func:`draw_plot` draws one plot onto a caller's axes.
Long runs stay fast and readable: ``out_jobs.csv`` is read once for all plots; the Gantt
chart is one collection of rectangles and draws a chosen time window or job range (at most
:data:`GANTT_MAX_JOBS` jobs otherwise); utilization and queue series longer than twice
:data:`PLOT_BINS` points are drawn as the time-weighted mean per bin with a min-max band.
"""
from __future__ import annotations

import csv
import json
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from hdeeprm.errors import InputError

#: Most jobs a Gantt chart draws when no window or job range is chosen.
GANTT_MAX_JOBS = 5000
#: Bins of the utilization and queue plots when their series is longer than twice this.
PLOT_BINS = 1000


class _Context:
    """What the plots of one :func:`make_plots` call share: the folder, the choices, ``out_jobs.csv`` read once."""

    def __init__(self, outdir: Path, window=None, job_range=None) -> None:
        self.outdir, self.window, self.job_range = outdir, window, job_range
        self._jobs = None

    def jobs(self) -> dict:
        if self._jobs is None:
            self._jobs = read_jobs(self.outdir / "out_jobs.csv", cores=False)
        return self._jobs


#: Plots and the file each one needs.
PLOTS: dict[str, str] = {"rewards": "rewards.log", "losses": "losses.log", "action_preferences": "probs.json",
                         "gantt": "out_jobs.csv", "utilization": "out_jobs.csv", "queue_size": "out_jobs.csv"}
#: Units of time axes: ``(longest span shown in it (s), seconds per unit, name)``, the first that holds the span.
TIME_UNITS: tuple[tuple[float, float, str], ...] = ((2 * 3600.0, 1.0, "s"), (3 * 86400.0, 3600.0, "hours"),
                                                   (float("inf"), 86400.0, "days"))


def time_unit(span: float) -> tuple[float, str]:
    """The unit a time axis spanning ``span`` seconds is drawn in (:data:`TIME_UNITS`).

    Seconds up to 2 hours, hours up to 3 days, days beyond: a 500,000 s run reads 0 to 5.8 days.

    Args:
        span: Length of the axis, in seconds (negative or NaN counts as 0).

    Returns:
        ``(seconds per unit, unit name)``, e.g. ``(3600.0, "hours")``.
    """
    span = span if span > 0 else 0.0   # NaN fails the test too
    return next((scale, name) for limit, scale, name in TIME_UNITS if span <= limit)


def learning_run(outdir: str | Path) -> bool | None:
    """Whether the run in ``outdir`` had a learning agent, i.e. one that received rewards.

    Decided by ``episodes.csv``'s ``reward`` column (``hdeeprm-launch`` leaves it empty when the
    agent gets no reward: a classic policy pair, whose ``rewards.log`` holds 0 per episode; any
    agent file gets rewards), else by ``run.json``'s ``options.agent_type`` (``"LEARNING"``).

    Args:
        outdir: An ``hdeeprm-launch`` output folder.

    Returns:
        True or False; None when neither file tells (e.g. a folder of the original HDeepRM's logs).
    """
    outdir = Path(outdir)
    try:
        with open(outdir / "episodes.csv", newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        if rows and "reward" in rows[0]:
            return any((row.get("reward") or "").strip() for row in rows)
    except (OSError, UnicodeDecodeError, csv.Error):
        pass
    try:
        agent_type = json.loads((outdir / "run.json").read_text(encoding="utf-8"))["options"]["agent_type"]
    except (OSError, UnicodeDecodeError, ValueError, KeyError, TypeError):
        return None
    return agent_type == "LEARNING" if isinstance(agent_type, str) else None


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


def read_jobs(path: str | Path, cores: bool = True) -> dict[str, np.ndarray | list]:
    """The columns of ``out_jobs.csv`` the plots need.

    Args:
        path: The file.
        cores: Also expand every job's ``allocated_resources`` into core ids (``cores``).

    Returns:
        ``submit``, ``start``, ``finish`` (s, float64 (n,), NaN for rejected
        jobs' start), ``res`` (int64 (n,)), ``ran`` (bool (n,): the job started),
        ``alloc`` (list of str: Batsim interval sets, "" when it did not run) and, with
        ``cores``, ``cores`` (list of int arrays: allocated core ids).

    Raises:
        InputError: a missing column or a malformed number.
    """
    submit, start, finish, res, ran, allocs = [], [], [], [], [], []
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
                if cores:
                    interval_runs(alloc)   # checked here, where the line is known
            except KeyError as exc:
                raise InputError(f"missing column {exc}", path=str(path)) from None
            except ValueError as exc:
                raise InputError(f"malformed value: {exc}", path=str(path), line=lineno) from None
            ran.append(started)
            allocs.append(alloc)
    jobs = {"submit": np.asarray(submit), "start": np.asarray(start), "finish": np.asarray(finish),
            "res": np.asarray(res, dtype=np.int64), "ran": np.asarray(ran, dtype=bool), "alloc": allocs}
    if cores:
        jobs["cores"] = [np.concatenate([np.arange(a, a + n) for a, n in interval_runs(text)]).astype(np.int64)
                         if text else np.zeros(0, np.int64) for text in allocs]
    return jobs


def interval_runs(text: str) -> list[tuple[int, int]]:
    """``(first core, number of cores)`` of each run of a Batsim interval set, e.g. ``"0-3 7"``.

    Raises:
        ValueError: not an interval set.
    """
    runs = []
    for part in text.split():
        first, _, last = part.partition("-")
        a = int(first)
        b = int(last) if last else a
        if b < a:
            raise ValueError(f"interval {part!r} is decreasing")
        runs.append((a, b - a + 1))
    return runs


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


#: Note on a per-episode plot of a one-episode run.
ONE_EPISODE_NOTE = "one episode: one point (run more with hdeeprm-launch -nr N for a curve)"


def _plot_series(ax, values: np.ndarray, ylabel: str, title: str) -> None:
    x = np.arange(1, values.size + 1)
    # A line through one point is invisible: mark the points of short series.
    ax.plot(x, values, lw=0.8, label="episode", marker="o" if values.size < 3 else None)
    _integer_ticks(ax.xaxis)
    if values.size == 1:
        ax.set_xlim(0.5, 1.5)
        ax.set_xticks([1])
        ax.text(0.5, 0.95, ONE_EPISODE_NOTE, transform=ax.transAxes, ha="center", va="top", fontsize="small")
    if values.size >= 10:
        k = max(values.size // 20, 2)
        smooth = np.convolve(values, np.ones(k) / k, mode="valid")
        ax.plot(x[k - 1:], smooth, lw=1.6, label=f"mean of {k}")
        ax.legend()
    ax.set_xlabel("episode")
    ax.set_ylabel(ylabel)
    ax.set_title(title)


def _rewards(outdir: Path, ax, ctx: _Context | None = None) -> None:
    _plot_series(ax, read_log(outdir / "rewards.log"), "total reward", "Rewards")


def _losses(outdir: Path, ax, ctx: _Context | None = None) -> None:
    _plot_series(ax, read_log(outdir / "losses.log"), "loss", "Losses")


def _action_preferences(outdir: Path, ax, ctx: _Context | None = None) -> None:
    names, probs = read_probs(outdir / "probs.json")
    x = np.arange(1, probs.shape[0] + 1)
    ax.stackplot(x, probs.T, labels=names)
    ax.set_xlim(1, max(probs.shape[0], 2))
    ax.set_ylim(0, 1)
    ax.set_xlabel("episode")
    ax.set_ylabel("mean preference")
    ax.set_title("Action preferences")
    ax.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.0, 1.0))


def gantt_selection(jobs: dict, window: tuple[float, float] | None = None,
                    job_range: tuple[int, int] | None = None) -> tuple[np.ndarray, str]:
    """The jobs a Gantt chart draws, and a note saying which.

    Args:
        jobs: :func:`read_jobs`'s columns.
        window: ``(start, end)`` in seconds: the jobs running at some time of it.
        job_range: ``(first, last)``: the first-th to last-th jobs in submission order
            (1-based, inclusive; rejected ones count but draw nothing).

    Returns:
        Row indices of the jobs to draw (ascending), and a note for the title ("" when all).
        With neither selection, at most :data:`GANTT_MAX_JOBS` jobs: the first ones to start.
    """
    ran = jobs["ran"]
    if job_range is not None:
        first, last = job_range
        order = np.argsort(jobs["submit"], kind="stable")[max(first, 1) - 1:last]
        return np.sort(order[ran[order]]), f"jobs {first}-{last} by submission"
    if window is not None:
        t0, t1 = window
        keep = ran & (jobs["start"] <= t1) & (jobs["finish"] >= t0)
        return np.flatnonzero(keep), f"{t0:g}-{t1:g} s"
    rows = np.flatnonzero(ran)
    if rows.size <= GANTT_MAX_JOBS:
        return rows, ""
    rows = rows[np.argsort(jobs["start"][rows], kind="stable")[:GANTT_MAX_JOBS]]
    return np.sort(rows), f"first {GANTT_MAX_JOBS} of {int(ran.sum())} jobs (choose with a window or a job range)"


def _gantt(outdir: Path, ax, ctx: _Context | None = None) -> None:
    ctx = ctx or _Context(outdir)
    from matplotlib.collections import PolyCollection

    jobs = ctx.jobs()
    rows, note = gantt_selection(jobs, ctx.window, ctx.job_range)
    cmap = __import__("matplotlib").colormaps["tab20"]
    x, w, y, h, color = [], [], [], [], []
    for i in rows.tolist():
        s, f = jobs["start"][i], jobs["finish"][i]
        for first, n in interval_runs(jobs["alloc"][i]):   # one bar per run of consecutive cores
            x.append(s)
            w.append(f - s)
            y.append(first)
            h.append(n)
            color.append(i % 20)
    # One collection of rectangles: an artist per bar takes minutes on a long run.
    x, w, y, h = (np.asarray(v, dtype=np.float64) for v in (x, w, y, h))
    span = ctx.window or ((float(x.min()), float((x + w).max())) if x.size else (0.0, 0.0))
    scale, unit = time_unit(span[1] - span[0])
    x, w = x / scale, w / scale
    verts = np.stack([np.stack([x, y], 1), np.stack([x + w, y], 1), np.stack([x + w, y + h], 1),
                      np.stack([x, y + h], 1)], 1) if x.size else np.zeros((0, 4, 2))
    ax.add_collection(PolyCollection(verts, facecolors=cmap(np.asarray(color, dtype=np.int64) % 20),
                                     edgecolors="k", linewidths=0.2 if x.size <= 2000 else 0.0))
    if x.size:
        ax.set_xlim(span[0] / scale, span[1] / scale)
        ax.set_ylim(float(y.min()), float((y + h).max()))
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("core")
    _integer_ticks(ax.yaxis)
    ax.set_title("Gantt chart" + (f" ({note})" if note else ""))


def binned(times: np.ndarray, values: np.ndarray, bins: int,
           span: tuple[float, float] | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Time-weighted mean, minimum and maximum of a step function over equal time bins.

    Args:
        times: Instants of the steps (s), ascending, float64 (k,), k >= 1.
        values: Value from each instant on (step "post"), float64 (k,).
        bins: Number of bins.
        span: ``(start, end)`` (s) covered by the bins; default ``(times[0], times[-1])``.

    Returns:
        ``(edges (bins + 1,), mean (bins,), low (bins,), high (bins,))``; the function is 0 before
        ``times[0]``.
    """
    t0, t1 = span if span is not None else (float(times[0]), float(times[-1]))
    if t1 <= t0:
        t1 = t0 + 1.0
    edges = np.linspace(t0, t1, bins + 1)
    v = np.concatenate([[0.0], values])   # v[j + 1] holds from times[j] on; v[0] before times[0]
    t = np.concatenate([[min(t0, float(times[0]))], times])
    area = np.concatenate([[0.0], np.cumsum(v[:-1] * np.diff(t))])   # integral up to t[j]
    j = np.searchsorted(t, edges, side="right") - 1          # segment holding each edge
    at = area[j] + v[j] * (edges - t[j])
    mean = np.diff(at) / np.diff(edges)
    # Values inside [e_b, e_b+1): the one holding at e_b, then every step before e_b+1.
    first = j[:-1]
    last = np.searchsorted(t, edges[1:], side="left") - 1
    last = np.maximum(last, first)
    low = np.minimum.reduceat(v, first)   # over [first_b, first_b+1), then the value at last_b
    high = np.maximum.reduceat(v, first)
    nxt = np.r_[first[1:], v.size]
    cut = nxt > last + 1   # the reduceat segment ran past last_b: recompute those bins exactly
    for b in np.flatnonzero(cut).tolist():
        seg = v[first[b]:last[b] + 1]
        low[b], high[b] = seg.min(), seg.max()
    low, high = np.minimum(low, v[last]), np.maximum(high, v[last])
    return edges, mean, low, high


def _step_plot(ax, series: tuple[np.ndarray, np.ndarray], ylabel: str, title: str,
               window: tuple[float, float] | None = None) -> None:
    times, values = series
    if window is not None:
        keep = (times >= window[0]) & (times <= window[1])
        before = np.flatnonzero(times < window[0])
        keep[before[-1:]] = True   # the value holding at the window's start
        times, values = times[keep], values[keep]
    span = window or ((float(times[0]), float(times[-1])) if times.size else (0.0, 0.0))
    scale, unit = time_unit(span[1] - span[0])
    if times.size > 2 * PLOT_BINS:   # a long run: a step line would be a solid block
        edges, mean, low, high = binned(times, values, PLOT_BINS, window)
        mid = (edges[:-1] + edges[1:]) / 2 / scale
        ax.fill_between(mid, low, high, step="mid", alpha=0.3, lw=0, label="min-max per bin")
        width = edges[1] - edges[0]
        bin_scale, bin_unit = time_unit(width)   # the bin's own unit: 150 s, not 0.04167 hours
        ax.plot(mid, mean, lw=0.9, drawstyle="steps-mid", label=f"mean per bin of {width / bin_scale:.4g} {bin_unit}")
        ax.legend(fontsize="small")
    else:
        # A step through one point is invisible: mark the points of short series.
        ax.step(times / scale, values, where="post", marker="o" if times.size < 3 else None)
    if window is not None:
        ax.set_xlim(window[0] / scale, window[1] / scale)
    _integer_ticks(ax.yaxis)
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel(ylabel)
    ax.set_title(title)


def _utilization(outdir: Path, ax, ctx: _Context | None = None) -> None:
    ctx = ctx or _Context(outdir)
    _step_plot(ax, busy_cores(ctx.jobs()), "busy cores", "Utilization", ctx.window)


def _queue_size(outdir: Path, ax, ctx: _Context | None = None) -> None:
    ctx = ctx or _Context(outdir)
    _step_plot(ax, queue_size(ctx.jobs()), "pending jobs", "Queue size", ctx.window)


_DRAW: dict[str, Callable] = {"rewards": _rewards, "losses": _losses, "action_preferences": _action_preferences,
                              "gantt": _gantt, "utilization": _utilization, "queue_size": _queue_size}


def available_plots(outdir: str | Path) -> list[str]:
    """The plots whose input file exists (and is not empty) in ``outdir``; ``rewards`` only for a learning run.

    A run :func:`learning_run` cannot tell (no ``episodes.csv`` nor ``run.json``) draws its ``rewards.log``.
    """
    outdir = Path(outdir)
    names = [name for name, f in PLOTS.items() if (outdir / f).is_file() and (outdir / f).stat().st_size > 0]
    if "rewards" in names and learning_run(outdir) is False:
        names.remove("rewards")
    return names


def _check_plot(outdir: Path, name: str) -> None:
    """Raise :class:`InputError` when plot ``name`` cannot be drawn from ``outdir``."""
    from hdeeprm.registry import suggest

    if name not in PLOTS:
        raise InputError(f"unknown plot '{name}' ({suggest(name, list(PLOTS))})")
    source = outdir / PLOTS[name]
    if not source.is_file():
        raise InputError(f"plot '{name}' needs {PLOTS[name]}, which is missing", path=str(source))
    if name == "rewards" and learning_run(outdir) is False:
        raise InputError("plot 'rewards' is for learning runs: this run's agent got no reward (a classic policy "
                         "pair: episodes.csv's reward column is empty, rewards.log holds 0 per episode)",
                         path=str(outdir))


def _check_choices(window: tuple[float, float] | None, job_range: tuple[int, int] | None) -> None:
    """Raise :class:`InputError` on a window whose start is not before its end, or an empty job range."""
    if window is not None and not window[0] < window[1]:
        raise InputError(f"the time window must have start < end, got {window[0]:g} {window[1]:g}")
    if job_range is not None and not 1 <= job_range[0] <= job_range[1]:
        raise InputError(f"the job range must have 1 <= first <= last, got {job_range[0]} {job_range[1]}")


def draw_plot(outdir: str | Path, name: str, ax, window: tuple[float, float] | None = None,
              job_range: tuple[int, int] | None = None) -> None:
    """Draw plot ``name`` of an output folder onto a matplotlib ``ax`` (a notebook's figure, a test's check).

    Args:
        outdir: The ``hdeeprm-launch`` output folder.
        name: A name of :data:`PLOTS`.
        ax: A :class:`matplotlib.axes.Axes`.
        window: As :func:`make_plots`.
        job_range: As :func:`make_plots`.

    Raises:
        InputError: as :func:`make_plots`.
    """
    outdir = Path(outdir)
    _check_choices(window, job_range)
    _check_plot(outdir, name)
    _DRAW[name](outdir, ax, _Context(outdir, window, job_range))


def make_plots(outdir: str | Path, plots: Sequence[str] | None = None, dest: str | Path | None = None,
               dpi: int = 120, window: tuple[float, float] | None = None,
               job_range: tuple[int, int] | None = None) -> list[Path]:
    """Draw plots of an output folder into ``{dest}/{plot}.png``.

    Args:
        outdir: The ``hdeeprm-launch`` output folder.
        plots: Names from :data:`PLOTS`; None = :func:`available_plots` (every plot whose input
            exists, ``rewards`` only for a learning run).
        dest: Folder of the PNG files (default ``outdir``).
        dpi: Resolution.
        window: ``(start, end)`` in seconds: the Gantt chart draws the jobs running then, the
            utilization and queue plots show that span only.
        job_range: ``(first, last)``: the Gantt chart draws these jobs in submission order
            (1-based, inclusive). Without either, a Gantt chart draws at most
            :data:`GANTT_MAX_JOBS` jobs, and long utilization and queue series are drawn as
            :data:`PLOT_BINS` time bins (mean line, min-max band).

    Returns:
        The files written, in order.

    Raises:
        InputError: an unknown plot name, a requested plot's input file is missing or malformed,
            ``rewards`` asked of a run whose agent got no reward, an empty window or job range.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outdir = Path(outdir)
    dest = Path(dest) if dest is not None else outdir
    dest.mkdir(parents=True, exist_ok=True)
    names = available_plots(outdir) if plots is None else list(plots)
    _check_choices(window, job_range)
    ctx = _Context(outdir, window, job_range)
    written = []
    for name in names:
        _check_plot(outdir, name)
        fig, ax = plt.subplots(figsize=(8, 4.5))
        try:
            _DRAW[name](outdir, ax, ctx)
            fig.tight_layout()
            path = dest / f"{name}.png"
            fig.savefig(path, dpi=dpi)
        finally:
            plt.close(fig)
        written.append(path)
    return written
