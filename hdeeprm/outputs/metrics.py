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

A summary's ``mean_slowdown`` and ``max_slowdown`` are +inf when a job ran 0 s: the JSON outputs write them
``null`` and say why under ``"undefined"`` (:func:`undefined_reasons`, :func:`hdeeprm.jsontext.encode_json`);
the CSVs keep ``inf``. A run that mixes CPU and GPU jobs also gets the summary of each kind
(:func:`summarize_kinds`, ``cpu_jobs_*`` and ``gpu_jobs_*``).

Rejected jobs are counted but enter no time metric. These functions are the
only definitions: ``out_jobs.csv``, ``out_schedule.csv`` and
``out_metrics.json`` are all computed with them, so one run cannot give two
answers.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

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


#: The metrics of :func:`summarize` that :func:`summarize_kinds` gives for each kind of job.
KIND_METRICS = ("nb_jobs", "mean_waiting_time", "mean_turnaround_time", "mean_bounded_slowdown")
#: The kinds of job of a mixed run: the key prefix of their metrics, and whether the kind asks for GPUs.
JOB_KINDS = (("cpu_jobs", False), ("gpu_jobs", True))


def summarize_kinds(jobs: Sequence[Job], states: Sequence[JobState], start: np.ndarray,
                    finish: np.ndarray) -> dict[str, float | int]:
    """:data:`KIND_METRICS` of the CPU jobs and of the GPU jobs (those asking for a GPU, ``num_gpu`` > 0).

    Each kind's figures are :func:`summarize_arrays`'s over that kind's jobs alone (0.0 for a kind without
    jobs that ran), so they are defined as the all-jobs figures are.

    Args:
        jobs, states, start, finish: As :func:`summarize`.

    Returns:
        ``cpu_jobs_nb_jobs``, ``cpu_jobs_mean_waiting_time`` (s), ``cpu_jobs_mean_turnaround_time`` (s),
        ``cpu_jobs_mean_bounded_slowdown``, then the same four ``gpu_jobs_*``.
    """
    n = len(jobs)
    submit = np.fromiter((j.subtime for j in jobs), dtype=np.float64, count=n)
    gpu = np.fromiter((j.num_gpu > 0 for j in jobs), dtype=bool, count=n)
    out: dict[str, float | int] = {}
    for kind, asks_gpu in JOB_KINDS:
        pick = np.flatnonzero(gpu == asks_gpu)
        kind_states = [states[i] for i in pick]
        summary = summarize_arrays(submit[pick], np.zeros(len(pick)), kind_states, start[pick], finish[pick], 0, 0.0)
        out.update({f"{kind}_{key}": summary[key] for key in KIND_METRICS})
    return out


def zero_runtime_jobs(states: Sequence[JobState], start: np.ndarray, finish: np.ndarray) -> int:
    """The jobs that ran (:data:`RAN_STATES`) for 0 s: those whose slowdown is +inf.

    Args:
        states, start, finish: As :func:`summarize`.
    """
    ran = np.fromiter((s in RAN_STATES for s in states), dtype=bool, count=len(states))
    return int(np.count_nonzero(finish[ran] - start[ran] <= 0))


def undefined_reasons(metrics: Mapping[str, object], zero_runtime: int | None = None) -> dict[str, str]:
    """Why each non-finite figure of a metrics summary has no value (what the JSON outputs and the summary say).

    Args:
        metrics: A summary (:func:`summarize`, or a run's with more keys).
        zero_runtime: The jobs that ran 0 s (:func:`zero_runtime_jobs`), when known.

    Returns:
        ``{key: reason}`` for each slowdown of ``metrics`` that is not finite, e.g. ``"mean_slowdown":
        "1 job ran 0 s, so its slowdown (turnaround / run time) divides by 0; mean_bounded_slowdown (tau = 10 s) is
        defined"``; empty when every figure is finite.
    """
    who = ("a job" if not zero_runtime else "1 job" if zero_runtime == 1 else f"{zero_runtime} jobs") + " ran 0 s"
    its = "its" if zero_runtime == 1 or not zero_runtime else "their"
    return {key: f"{who}, so {its} slowdown (turnaround / run time) divides by 0; mean_bounded_slowdown "
                 f"(tau = {BOUNDED_SLOWDOWN_TAU:g} s) is defined"
            for key, value in metrics.items()
            if key.endswith("slowdown") and "bounded" not in key and isinstance(value, float)
            and not math.isfinite(value)}
