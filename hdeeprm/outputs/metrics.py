"""Scheduling metrics of a finished simulation (the field's standard ones).

Definitions (Feitelson & Rudolph, "Metrics and benchmarking for parallel job
scheduling", JSSPP 1998; Feitelson, "Metric and workload effects on computer
systems evaluation", 2003), for every job that ran (completed or killed),
with w its waiting time, r its execution time and n its cores:

* waiting time w = start − submission (s);
* turnaround = finish − submission = w + r (s);
* slowdown = turnaround / r (Batsim's "stretch");
* bounded slowdown = max((w + r) / max(r, τ), 1), τ = 10 s;
* utilization = Σ r·n / (P × (makespan − first submission)), P the cores of the platform;
* makespan = time of the last job end (s, since t = 0, as Batsim);
* energy = joules consumed by all cores (from the simulator).

Rejected jobs are counted but enter no time metric.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hdeeprm.workload.model import Job, JobState

#: τ of the bounded slowdown, seconds (the usual 10 s threshold).
BOUNDED_SLOWDOWN_TAU = 10.0


def summarize(jobs: Sequence[Job], states: Sequence[JobState], start: np.ndarray, finish: np.ndarray,
              nb_cores: int, energy: float) -> dict[str, float | int]:
    """Compute the metrics summary of one simulation.

    Args:
        jobs: The workload's jobs, by index.
        states: Final state of each job, by index.
        start: Start time of each job in seconds, float64, shape (nb_jobs,), NaN if it never ran.
        finish: End time of each job in seconds, float64, shape (nb_jobs,), NaN if it never ran.
        nb_cores: Cores of the platform (P).
        energy: Energy consumed by the platform, joules.

    Returns:
        A flat dict: ``nb_jobs``, ``nb_completed``, ``nb_killed``, ``nb_rejected``, and
        ``mean_``/``max_`` of ``waiting_time``, ``turnaround_time``, ``slowdown``,
        ``bounded_slowdown``, then ``utilization`` (0…1), ``makespan`` (s) and
        ``energy`` (J).
    """
    n = len(jobs)
    submit = np.fromiter((j.subtime for j in jobs), dtype=np.float64, count=n)
    res = np.fromiter((j.res for j in jobs), dtype=np.float64, count=n)
    ran = np.fromiter((s in (JobState.COMPLETED_SUCCESSFULLY, JobState.COMPLETED_WALLTIME_REACHED,
                             JobState.COMPLETED_KILLED) for s in states), dtype=bool, count=n)
    out: dict[str, float | int] = {
        "nb_jobs": n,
        "nb_completed": sum(s is JobState.COMPLETED_SUCCESSFULLY for s in states),
        "nb_killed": sum(s in (JobState.COMPLETED_WALLTIME_REACHED, JobState.COMPLETED_KILLED) for s in states),
        "nb_rejected": sum(s is JobState.REJECTED for s in states),
    }
    w = start[ran] - submit[ran]
    r = finish[ran] - start[ran]
    turnaround = w + r
    with np.errstate(divide="ignore", invalid="ignore"):
        slowdown = np.where(r > 0, turnaround / np.where(r > 0, r, 1.0), 1.0)
    bsld = np.maximum(turnaround / np.maximum(r, BOUNDED_SLOWDOWN_TAU), 1.0)
    for name, values in (("waiting_time", w), ("turnaround_time", turnaround), ("slowdown", slowdown),
                         ("bounded_slowdown", bsld)):
        out[f"mean_{name}"] = float(values.mean()) if values.size else 0.0
        out[f"max_{name}"] = float(values.max()) if values.size else 0.0
    makespan = float(finish[ran].max()) if ran.any() else 0.0
    first = float(submit.min()) if n else 0.0
    span = makespan - first
    out["utilization"] = float((r * res[ran]).sum() / (nb_cores * span)) if span > 0 else 0.0
    out["makespan"] = makespan
    out["energy"] = float(energy)
    return out
