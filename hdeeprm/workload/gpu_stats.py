"""Statistics of a timed GPU workload, printed side by side for several workloads (``hdeeprm-workload gpu-stats``).

The quantities the GPU trace studies report (Jeon et al., ATC 2019, on Philly; Hu et al.,
"Characterization and Prediction of Deep Learning Workloads in Large-Scale GPU Datacenters",
SC 2021, on Helios): arrival rate and its hour-of-day and weekday swing, burstiness (coefficient of
variation of the inter-arrival times, 1 for a Poisson process; largest number of submissions in one
minute), the GPUs per job, the durations per size, GPU time, and the share of jobs with a GPU type
or memory constraint.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from hdeeprm.workload.gpu_jobs import GpuJobs

#: Job sizes (GPUs) reported one by one; larger ones are summed in ``share_gpus_gt8``.
REPORTED_SIZES = (1, 2, 4, 8)


def gpu_workload_stats(jobs: GpuJobs) -> dict[str, float | int]:
    """Statistics of ``jobs`` (a flat dict of numbers, see the module docstring).

    Hour of day and weekday come from the workload's ``clock`` (seconds since a Monday 00:00 at submission 0).
    """
    n = len(jobs)
    out: dict[str, float | int] = {"jobs": n}
    if not n:
        return out
    span = float(jobs.submit.max() - jobs.submit.min())
    out["span_days"] = span / 86400.0
    out["jobs_per_hour"] = n / (span / 3600.0) if span > 0 else float("nan")
    gaps = np.diff(jobs.submit)
    out["interarrival_cv"] = float(gaps.std() / gaps.mean()) if gaps.size and gaps.mean() > 0 else float("nan")
    # counts per minute that has a job: memory grows with the jobs, not with the time span (a bincount would
    # allocate one counter per minute from 0 to the last submission)
    out["max_jobs_in_a_minute"] = int(np.unique(jobs.submit // 60, return_counts=True)[1].max())
    clock = jobs.clock + jobs.submit
    hours = np.bincount((clock // 3600 % 24).astype(np.int64), minlength=24) / n * 24
    days = np.bincount((clock // 86400 % 7).astype(np.int64), minlength=7) / n * 7
    out["hour_factor_max"] = float(hours.max())
    out["hour_factor_min"] = float(hours.min())
    out["weekend_over_weekday"] = float(days[5:].mean() / days[:5].mean()) if days[:5].mean() > 0 else float("nan")
    gpus = jobs.num_gpu
    for k in REPORTED_SIZES:
        out[f"share_{k}_gpu"] = float((gpus == k).mean())
    out["share_gpus_gt8"] = float((gpus > 8).mean())
    out["share_fractional"] = float(((gpus == 1) & (jobs.gpu_milli < 1000)).mean())
    out["max_gpus"] = int(gpus.max())
    d = jobs.duration
    out["duration_median_s"] = float(np.median(d))
    out["duration_mean_s"] = float(d.mean())
    out["duration_p90_s"] = float(np.percentile(d, 90))
    out["log_duration_sd"] = float(np.log(d).std())
    for k in REPORTED_SIZES:
        sel = d[gpus == k]
        out[f"duration_median_{k}_gpu_s"] = float(np.median(sel)) if sel.size else float("nan")
    out["gpu_hours"] = float((gpus * jobs.gpu_milli / 1000.0 * d).sum() / 3600.0)
    out["share_constrained"] = float(np.mean([bool(s) for s in jobs.gpu_spec]) if n else 0.0)
    return out


def format_gpu_stats(columns: Mapping[str, Mapping[str, float | int]]) -> str:
    """A text table: one row per statistic, one column per workload (the union of the keys, in first-seen order)."""
    keys: list[str] = []
    for stats in columns.values():
        keys += [k for k in stats if k not in keys]

    def cell(value) -> str:
        if value is None:
            return "-"
        return f"{value:d}" if isinstance(value, int) else f"{value:.4g}"

    rows = [["statistic", *columns]] + [[k, *(cell(s.get(k)) for s in columns.values())] for k in keys]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)
