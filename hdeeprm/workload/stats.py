"""Workload statistics, like the original HDeepRM's ``hdeeprm-jobstat``.

For an SWF trace (read with the fast block reader) or a Batsim JSON workload, count the
jobs and summarise the distributions of size, run time, requested time, memory and
inter-arrival time by min, mean, median, 90th percentile and max. Unknown values (SWF -1)
are left out of each distribution; the ``count`` of a summary says how many were known.
SWF fields and units as in the Parallel Workloads Archive's definition, version 2.2
(https://www.cs.huji.ac.il/labs/parallel/workload/swf.html).
"""
from __future__ import annotations

import math
import os

import numpy as np

from hdeeprm.workload.model import DELAY, PARALLEL_HOMOGENEOUS, Workload
from hdeeprm.errors import WorkloadError
from hdeeprm.reading import READ_ERRORS
from hdeeprm.workload.swf import UNKNOWN, SWFHeader, check_unique_job_numbers, iter_swf_chunks, open_swf

#: Statistics of a summary, in print order.
SUMMARY_KEYS = ("count", "min", "mean", "median", "p90", "max")


def distribution(values: np.ndarray) -> dict[str, float]:
    """Statistics of one distribution (count, mean, percentiles, extremes).

    Args:
        values: Shape ``(n,)``, any real dtype; the known values only.

    Returns:
        ``count`` (n) and, when n > 0, ``min``, ``mean``, ``median``, ``p90`` (linear
        interpolation, numpy's default) and ``max`` as Python floats.
    """
    values = np.asarray(values, dtype=np.float64)
    out: dict[str, float] = {"count": int(values.size)}
    if values.size:
        out.update(min=float(values.min()), mean=float(values.mean()),
                   median=float(np.median(values)), p90=float(np.percentile(values, 90)),
                   max=float(values.max()))
    return out


def _interarrival(submit: np.ndarray) -> np.ndarray:
    return np.diff(np.sort(submit))


def swf_stats(path: str | os.PathLike) -> dict:
    """Statistics of an SWF trace.

    Args:
        path: The trace, plain or gzip-compressed.

    Returns:
        ``{"source", "format": "swf", "jobs", "max_procs", "max_nodes", "distributions"}``
        (``max_procs`` and ``max_nodes``: the header's ``MaxProcs`` and ``MaxNodes``, or
        None) where
        ``distributions`` maps ``"size (processors)"`` (field 8, else 5),
        ``"run time (s)"`` (4), ``"requested time (s)"`` (9), ``"memory (MB per
        processor)"`` (10, else 7, / 1024) and ``"inter-arrival time (s)"`` (2) to
        :func:`distribution` results.

    Raises:
        WorkloadError: Missing file, malformed line, or a job number (field 1) given twice.
    """
    header = SWFHeader()
    blocks = [values for values, _ in iter_swf_chunks(path, header)]
    data = np.concatenate(blocks) if blocks else np.empty((0, 18))
    check_unique_job_numbers(data[data[:, 0] != UNKNOWN, 0], path)
    size = np.where(data[:, 7] > 0, data[:, 7], data[:, 4])
    memory = np.where(data[:, 9] >= 0, data[:, 9], data[:, 6])
    submit = data[:, 1]
    return {
        "source": os.fspath(path), "format": "swf", "jobs": int(len(data)),
        "max_procs": header.max_procs, "max_nodes": header.max_nodes,
        "distributions": {
            "size (processors)": distribution(size[size > 0]),
            "run time (s)": distribution(data[data[:, 3] >= 0, 3]),
            "requested time (s)": distribution(data[data[:, 8] >= 0, 8]),
            "memory (MB per processor)": distribution(memory[memory >= 0] / 1024.0),
            "inter-arrival time (s)": distribution(_interarrival(submit[submit >= 0])),
        },
    }


def workload_stats(workload: Workload) -> dict:
    """Statistics of a workload (e.g. read from Batsim JSON).

    Args:
        workload: The workload.

    Returns:
        ``{"source", "format": "batsim-json", "jobs", "nb_res", "distributions"}`` with
        ``"size (cores)"``, ``"walltime (s)"`` (jobs with one), ``"delay (s)"`` (delay
        profiles), ``"computation (FLOP per core)"`` (parallel_homogeneous profiles),
        ``"run time on the reference core (s)"`` (FLOP / reference speed, when the
        workload has one), ``"memory (MB per core)"``, ``"memory bandwidth (GB/s per
        core)"``, ``"inter-arrival time (s)"``.
    """
    jobs = workload.jobs
    walltime = np.array([j.walltime for j in jobs], dtype=np.float64)
    delays = np.array([j.profile.delay for j in jobs if j.profile.type == DELAY])
    flops = np.array([j.profile.cpu for j in jobs if j.profile.type == PARALLEL_HOMOGENEOUS])
    dists = {
        "size (cores)": distribution(np.array([j.res for j in jobs])),
        "walltime (s)": distribution(walltime[walltime >= 0]),
        "delay (s)": distribution(delays),
        "computation (FLOP per core)": distribution(flops),
    }
    if workload.reference_speed > 0:
        dists["run time on the reference core (s)"] = distribution(flops / workload.reference_speed)
    dists["memory (MB per core)"] = distribution(np.array([j.mem for j in jobs]))
    dists["memory bandwidth (GB/s per core)"] = distribution(np.array([j.mem_bw for j in jobs]))
    dists["inter-arrival time (s)"] = distribution(_interarrival(np.array([j.subtime for j in jobs])))
    return {"source": workload.source, "format": "batsim-json", "jobs": len(jobs),
            "nb_res": workload.nb_res, "distributions": dists}


def is_json_workload(path: str | os.PathLike) -> bool:
    """Whether a file looks like a JSON workload (first non-blank character ``{``).

    Args:
        path: Any file (gzip is decompressed).

    Returns:
        True for JSON, False otherwise (then read it as SWF).

    Raises:
        WorkloadError: The file does not exist or cannot be read.
    """
    with open_swf(path) as stream:
        try:
            for text in stream:
                if text.strip():
                    return text.lstrip().startswith("{")
        except READ_ERRORS as exc:  # corrupt or truncated gzip stream
            raise WorkloadError(f"cannot read the file: {exc}", os.fspath(path)) from None
    return False


def trace_stats(path: str | os.PathLike) -> dict:
    """Statistics of an SWF trace or a Batsim JSON workload, recognised by content.

    Args:
        path: The file.

    Returns:
        :func:`swf_stats` or :func:`workload_stats` of it.

    Raises:
        WorkloadError: Missing or malformed file.
    """
    if is_json_workload(path):
        from hdeeprm.workload.batsim_json import read_batsim_workload
        workload = read_batsim_workload(path)
        workload.source = workload.source or os.fspath(path)
        return workload_stats(workload)
    return swf_stats(path)


def _fmt(value: float) -> str:
    if math.isfinite(value) and float(value).is_integer() and abs(value) < 1e9:
        return f"{int(value)}"
    return f"{value:.6g}"


def format_stats(stats: dict) -> str:
    """Format :func:`swf_stats` / :func:`workload_stats` output as a text table.

    Args:
        stats: The statistics.

    Returns:
        A header line (source, format, jobs) and one row per distribution with the
        columns of :data:`SUMMARY_KEYS` ("-" when no value is known); no trailing
        line break.
    """
    extra = (f", machine {stats['max_procs']} processors" if stats.get("max_procs") else
             f", machine {stats['max_nodes']} nodes" if stats.get("max_nodes") else
             f", nb_res {stats['nb_res']}" if stats.get("nb_res") else "")
    lines = [f"{stats['source']} ({stats['format']}): {stats['jobs']} jobs{extra}"]
    names = list(stats["distributions"])
    width = max((len(n) for n in names), default=10)
    lines.append(" " * width + "".join(f" {k:>11}" for k in SUMMARY_KEYS))
    for name in names:
        summary = stats["distributions"][name]
        cells = [_fmt(summary[k]) if k in summary else "-" for k in SUMMARY_KEYS]
        lines.append(f"{name:<{width}}" + "".join(f" {c:>11}" for c in cells))
    return "\n".join(lines)
