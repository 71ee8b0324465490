"""Scheduling metrics of a finished simulation (the field's standard ones).

Definitions (Feitelson & Rudolph, "Metrics and benchmarking for parallel job
scheduling", JSSPP 1998; Feitelson, "Metric and workload effects on computer
systems evaluation", 2003), for every job that ran (completed or killed),
with w its waiting time, r its execution time and n its cores:

* waiting time w = start − submission (s);
* turnaround = finish − submission = w + r (s);
* slowdown = turnaround / r, Batsim's "stretch" (https://batsim.readthedocs.io/en/latest/output-jobs.html);
  +inf for a job that ran 0 s (its turnaround is then > 0 or the ratio is undefined);
  this is why the bounded slowdown exists;
* bounded slowdown = max((w + r) / max(r, τ), 1), τ = 10 s;
* utilization = Σ r·n / (P × (makespan − first submission)), P the cores of the platform;
* makespan = time of the last job end (s, since t = 0, as Batsim);
* energy = joules consumed by all cores **from the first job submission to the last job
  end**: Batsim's ``consumed_joules`` (``docs/engine.rst``, "Energy accounting"). The
  energy of the idle platform before the first submission is not counted.

Rejected jobs are counted but enter no time metric. These functions are the
only definitions: ``out_jobs.csv``, ``out_schedule.csv`` and
``out_metrics.json`` are all computed with them, so one run cannot give two
answers.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from hdeeprm.workload.model import Job, JobState

#: τ of the bounded slowdown, seconds (the usual 10 s threshold).
BOUNDED_SLOWDOWN_TAU = 10.0
#: Final states of jobs that ran (to success, to a walltime kill or to KILL_JOB).
RAN_STATES = frozenset({JobState.COMPLETED_SUCCESSFULLY, JobState.COMPLETED_WALLTIME_REACHED,
                        JobState.COMPLETED_KILLED})
#: Final states of jobs that were killed (walltime or KILL_JOB).
KILLED_STATES = frozenset({JobState.COMPLETED_WALLTIME_REACHED, JobState.COMPLETED_KILLED})


def slowdown(turnaround: np.ndarray, runtime: np.ndarray) -> np.ndarray:
    """Slowdown (Batsim's stretch) = turnaround / execution time; +inf where the job ran 0 s.

    Args:
        turnaround: Seconds, float64, shape (n,).
        runtime: Execution times in seconds, float64, shape (n,).

    Returns:
        float64, shape (n,).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(runtime > 0, turnaround / np.where(runtime > 0, runtime, 1.0), np.inf)


def job_slowdown(turnaround: float, runtime: float) -> float:
    """:func:`slowdown` of one job, without NumPy (for writers that go job by job).

    Args:
        turnaround: Seconds.
        runtime: Execution time in seconds.

    Returns:
        turnaround / runtime, +inf when the job ran 0 s.
    """
    return turnaround / runtime if runtime > 0 else math.inf


def bounded_slowdown(turnaround: np.ndarray, runtime: np.ndarray, tau: float = BOUNDED_SLOWDOWN_TAU) -> np.ndarray:
    """Bounded slowdown max(turnaround / max(runtime, τ), 1) (Feitelson et al., JSSPP 1997).

    Args:
        turnaround: Seconds, float64, shape (n,).
        runtime: Execution times in seconds, float64, shape (n,).
        tau: Threshold τ in seconds.

    Returns:
        float64, shape (n,), every value >= 1.
    """
    return np.maximum(turnaround / np.maximum(runtime, tau), 1.0)


def summarize(jobs: Sequence[Job], states: Sequence[JobState], start: np.ndarray, finish: np.ndarray,
              nb_cores: int, energy: float) -> dict[str, float | int]:
    """Compute the metrics summary of one simulation.

    Args:
        jobs: The workload's jobs, by index.
        states: Final state of each job, by index.
        start: Start time of each job in seconds, float64, shape (nb_jobs,), NaN if it never ran.
        finish: End time of each job in seconds, float64, shape (nb_jobs,), NaN if it never ran.
        nb_cores: Cores of the platform (P).
        energy: Energy consumed by the platform between the first submission and the last
            job end, joules (:func:`~hdeeprm.simulation.kernel.consumed_joules`).

    Returns:
        A flat dict: ``nb_jobs``, ``nb_completed``, ``nb_killed``, ``nb_rejected``, and
        ``mean_``/``max_`` of ``waiting_time``, ``turnaround_time``, ``slowdown``,
        ``bounded_slowdown``, then ``utilization`` (0…1), ``makespan`` (s) and
        ``energy`` (J).
    """
    n = len(jobs)
    submit = np.fromiter((j.subtime for j in jobs), dtype=np.float64, count=n)
    res = np.fromiter((j.res for j in jobs), dtype=np.float64, count=n)
    return summarize_arrays(submit, res, states, start, finish, nb_cores, energy)


def summarize_arrays(submit: np.ndarray, amount: np.ndarray, states: Sequence[JobState], start: np.ndarray,
                     finish: np.ndarray, capacity: float, energy: float) -> dict[str, float | int]:
    """:func:`summarize` over arrays, whatever the jobs hold: cores in CPU runs, thousandths of GPUs in GPU runs.

    Args:
        submit: Submission time of each job in seconds, float64 (J,).
        amount: What each job holds while it runs (cores, or thousandths of a GPU), float64 (J,).
        states: Final state of each job.
        start, finish: As :func:`summarize`.
        capacity: What the platform holds, in the unit of ``amount`` (cores, or 1000 x GPUs).
        energy: Joules between the first submission and the last job end.

    Returns:
        The keys of :func:`summarize`; ``utilization`` is held amount x run time over capacity x span.
    """
    n = len(submit)
    ran = np.fromiter((s in RAN_STATES for s in states), dtype=bool, count=n)
    out: dict[str, float | int] = {
        "nb_jobs": n,
        "nb_completed": sum(s is JobState.COMPLETED_SUCCESSFULLY for s in states),
        "nb_killed": sum(s in KILLED_STATES for s in states),
        "nb_rejected": sum(s is JobState.REJECTED for s in states),
    }
    w = start[ran] - submit[ran]
    r = finish[ran] - start[ran]
    turnaround = finish[ran] - submit[ran]
    for name, values in (("waiting_time", w), ("turnaround_time", turnaround),
                         ("slowdown", slowdown(turnaround, r)), ("bounded_slowdown", bounded_slowdown(turnaround, r))):
        out[f"mean_{name}"] = float(values.mean()) if values.size else 0.0
        out[f"max_{name}"] = float(values.max()) if values.size else 0.0
    makespan = float(finish[ran].max()) if ran.any() else 0.0
    first = float(submit.min()) if n else 0.0
    span = makespan - first
    out["utilization"] = float((r * amount[ran]).sum() / (capacity * span)) if span > 0 and capacity else 0.0
    out["makespan"] = makespan
    out["energy"] = float(energy)
    return out
