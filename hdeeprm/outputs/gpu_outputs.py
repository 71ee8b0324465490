"""Metrics, files and plots of a timed GPU run (:class:`~hdeeprm.simulation.results.GpuRunResult`).

Metrics (the field's, as in Jeon et al., ATC 2019 and Weng et al., ATC 2023), over the jobs that
ran, with the definitions of :mod:`hdeeprm.outputs.metrics` for waiting time, slowdown, bounded
slowdown and energy span:

* job completion time (JCT) = finish - submission (s): mean, median, p95, p99 (NumPy's linear
  percentiles); queueing delay = start - submission (s): mean, median, p95, max;
* GPU allocation rate = allocated GPU share / (1000 x GPUs), and the ATC'23 fragmentation ratio =
  fragmented share / (1000 x GPUs), both time-weighted means from the first submission to the last
  completion; GPU occupancy = GPUs holding a job / GPUs (time-weighted); ``utilization`` (the key CPU
  runs print) = Σ GPU share x run time / (GPU capacity x span), as :func:`~hdeeprm.outputs.metrics.summarize`
  defines it for cores;
* makespan (s, last job end) and GPU energy (J, first submission to last completion).

Files: ``out_jobs.csv`` (Batsim's columns; ``allocated_resources`` the nodes, numbered in the
cluster's order, then ``allocated_gpus``: global GPU ids, node-major, and ``gpu_milli``: the share of
each), ``out_schedule.csv`` (Batsim's totals with the GPUs as the machines, see
:func:`gpu_schedule_totals`), ``out_gpu_timeline.csv`` (one row per instant), ``out_metrics.json`` and two plots:
``jct_cdf.png`` and ``gpu_timeline.png``.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from hdeeprm.outputs.batsim_csv import (BATSIM_FORMAT_VERSION, JOBS_HEADER, SCHEDULE_COLUMNS, format_job_row,
                                        interval_set)
from hdeeprm.outputs.metrics import summarize_arrays
from hdeeprm.simulation.results import GpuRunResult
from hdeeprm.workload.model import JobState

#: Extra columns of a GPU run's ``out_jobs.csv`` after Batsim's.
GPU_JOB_COLUMNS = ("allocated_gpus", "gpu_milli")
#: Columns of ``out_gpu_timeline.csv``.
TIMELINE_COLUMNS = ("time", "allocated_gpu_milli", "busy_gpus", "fragmented_gpu_milli", "gpu_power_w", "queued_jobs")


def _time_mean(times: np.ndarray, values: np.ndarray, end: float) -> float:
    """Time-weighted mean of a step function (value ``values[i]`` from ``times[i]`` to the next instant) up to end."""
    if len(times) == 0 or end <= times[0]:
        return 0.0
    edges = np.minimum(np.append(times[1:], end), end)
    width = np.maximum(edges - times, 0.0)
    return float((values * width).sum() / (end - times[0]))


def gpu_summary(result: GpuRunResult) -> dict[str, float | int]:
    """The metrics summary of a GPU run (see the module docstring), a flat dict.

    Keys: ``nb_jobs``, ``nb_completed``, ``nb_killed`` (0), ``nb_rejected``, ``mean_``/``max_`` of
    ``waiting_time``, ``turnaround_time``, ``slowdown``, ``bounded_slowdown``, then ``utilization``,
    ``makespan`` (s), ``energy`` (J, GPUs only), ``jct_mean``, ``jct_median``, ``jct_p95``, ``jct_p99``,
    ``queueing_delay_mean``, ``queueing_delay_median``, ``queueing_delay_p95``, ``gpu_allocation_rate``,
    ``gpu_fragmented_share`` (the ATC'23 fragmented GPU share over the GPU capacity, time mean; the ATC'23
    ``fragmentation_ratio`` divides by the idle share instead), ``gpu_occupancy``, ``gpu_energy``, ``nb_gpus``.
    """
    jobs = result.jobs
    ran = ~result.rejected
    capacity = 1000.0 * result.cluster.nb_gpus
    states = [JobState.REJECTED if r else JobState.COMPLETED_SUCCESSFULLY for r in result.rejected]
    out = summarize_arrays(jobs.submit, jobs.gpu_request, states, result.start, result.finish, capacity,
                           result.energy)
    wait = result.start[ran] - jobs.submit[ran]
    jct = result.finish[ran] - jobs.submit[ran]
    makespan = out["makespan"]
    for name, values, cuts in (("jct", jct, (("mean", None), ("median", 50), ("p95", 95), ("p99", 99))),
                               ("queueing_delay", wait, (("mean", None), ("median", 50), ("p95", 95)))):
        for label, q in cuts:
            out[f"{name}_{label}"] = (0.0 if not values.size else float(values.mean()) if q is None
                                      else float(np.percentile(values, q)))
    if capacity:
        out["gpu_allocation_rate"] = _time_mean(result.times, result.allocated / capacity, makespan)
        out["gpu_fragmented_share"] = _time_mean(result.times, result.fragmented / capacity, makespan)
        out["gpu_occupancy"] = _time_mean(result.times, result.busy_gpus / result.cluster.nb_gpus, makespan)
    out["gpu_energy"] = result.energy
    out["nb_gpus"] = result.cluster.nb_gpus
    return out


def write_gpu_jobs_csv(path: str | Path, result: GpuRunResult) -> None:
    """Write ``out_jobs.csv``: Batsim's columns plus :data:`GPU_JOB_COLUMNS`, one row per job in completion order.

    Rejected jobs follow Batsim's layout for REJECT_JOB (see :mod:`hdeeprm.outputs.batsim_csv`) with the reason in
    ``metadata``.
    """
    jobs = result.jobs
    lines = [JOBS_HEADER + "," + ",".join(GPU_JOB_COLUMNS)]
    name = jobs.name
    for i in result.completion_order:
        sub, res, milli = float(jobs.submit[i]), int(jobs.num_gpu[i]), int(jobs.gpu_milli[i])
        if result.rejected[i]:
            row = format_job_row(jobs.ids[i], name, "gpu", sub, res, -1.0, JobState.REJECTED, -1.0,
                                 float(result.finish[i]), None, -1.0, result.reasons[i])
            lines.append(f"{row},,{milli}")
            continue
        row = format_job_row(jobs.ids[i], name, "gpu", sub, res, -1.0, JobState.COMPLETED_SUCCESSFULLY,
                             float(result.start[i]), float(result.finish[i]),
                             interval_set(p.node for p in result.placements[i]), float(result.job_energy[i]))
        lines.append(f"{row},{interval_set(result.gpu_ids(i))},{milli}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def gpu_schedule_totals(result: GpuRunResult) -> dict[str, object]:
    """Batsim's ``out_schedule.csv`` totals (:func:`~hdeeprm.outputs.batsim_csv.schedule_totals`) for a GPU run.

    The machines are the GPUs: ``nb_computing_machines`` = GPUs, ``time_computing`` = Σ over jobs of GPUs held x
    execution time, ``time_idle`` = Σ over GPUs that ran a job of (end of its last job - its busy time, shared
    jobs counted once each); no switching or sleeping. ``consumed_joules`` is the GPU energy.
    """
    m = gpu_summary(result)
    ran = np.flatnonzero(~result.rejected)
    nb_gpus = result.cluster.nb_gpus
    busy = np.zeros(nb_gpus)
    last_end = np.full(nb_gpus, -np.inf)
    computing = 0.0
    for job in ran:
        gpus = result.gpu_ids(int(job))
        run = float(result.finish[job] - result.start[job])
        busy[gpus] += run
        last_end[gpus] = np.maximum(last_end[gpus], result.finish[job])
        computing += run * len(gpus)
    used = np.isfinite(last_end)
    n = m["nb_jobs"]
    values = [BATSIM_FORMAT_VERSION, m["energy"], m["makespan"], m["max_slowdown"], m["max_turnaround_time"],
              m["max_waiting_time"], m["mean_slowdown"], m["mean_turnaround_time"], m["mean_waiting_time"], nb_gpus, 0,
              n, m["nb_completed"], 0, m["nb_rejected"], m["nb_completed"], 0, result.scheduling_time,
              result.simulation_time, m["nb_completed"] / n if n else 0.0, computing,
              float((last_end[used] - busy[used]).sum()), 0.0, 0.0, 0.0, 0.0]
    return dict(zip(SCHEDULE_COLUMNS, values))


def write_gpu_timeline_csv(path: str | Path, result: GpuRunResult) -> None:
    """Write ``out_gpu_timeline.csv``: the state after every instant (:data:`TIMELINE_COLUMNS`)."""
    lines = [",".join(TIMELINE_COLUMNS)]
    for row in zip(result.times, result.allocated, result.busy_gpus, result.fragmented, result.power, result.queued):
        lines.append(f"{row[0]:f},{row[1]},{row[2]},{row[3]:.3f},{row[4]:.3f},{row[5]}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def plot_gpu_run(outdir: str | Path, result: GpuRunResult) -> list[Path]:
    """Write ``jct_cdf.png`` (job completion time CDF) and ``gpu_timeline.png`` (GPU use over time).

    The timeline shows the allocation rate, the occupancy and the ATC'23 fragmentation ratio (matplotlib, Agg).

    Returns:
        The files written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outdir = Path(outdir)
    ran = ~result.rejected
    jct = np.sort(result.finish[ran] - result.jobs.submit[ran])
    fig, ax = plt.subplots(figsize=(6, 4))
    if jct.size:
        ax.step(np.maximum(jct, 1e-3), np.arange(1, jct.size + 1) / jct.size, where="post")
        ax.set_xscale("log")
    ax.set_xlabel("job completion time (s)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title(f"JCT CDF ({result.config.placement}, {result.config.ordering})")
    ax.grid(True, alpha=0.3)
    files = [outdir / "jct_cdf.png", outdir / "gpu_timeline.png"]
    fig.tight_layout()
    fig.savefig(files[0], dpi=120)
    plt.close(fig)
    capacity = 1000.0 * max(result.cluster.nb_gpus, 1)
    fig, ax = plt.subplots(figsize=(7, 4))
    hours = result.times / 3600.0
    ax.step(hours, 100 * result.allocated / capacity, where="post", label="GPU allocation rate")
    ax.step(hours, 100 * result.busy_gpus / max(result.cluster.nb_gpus, 1), where="post", label="GPU occupancy")
    ax.step(hours, 100 * result.fragmented / capacity, where="post", label="fragmentation (ATC'23)")
    ax.set_xlabel("time (h)")
    ax.set_ylabel("% of the GPU capacity")
    ax.legend(loc="best")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(files[1], dpi=120)
    plt.close(fig)
    return files


def write_gpu_outputs(outdir: str | Path, result: GpuRunResult, *, plots: bool = True) -> dict[str, float | int]:
    """Write every output of a GPU run into ``outdir`` (see the module docstring) and return its summary.

    ``out_metrics.json`` holds the summary, the stand-in types used, the rejection reasons counted, and the
    run's configuration.
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    summary = gpu_summary(result)
    write_gpu_jobs_csv(outdir / "out_jobs.csv", result)
    write_gpu_timeline_csv(outdir / "out_gpu_timeline.csv", result)
    totals = gpu_schedule_totals(result)
    cells = [v if isinstance(v, str) else (str(v) if isinstance(v, int) else f"{v:f}") for v in totals.values()]
    (outdir / "out_schedule.csv").write_text(",".join(totals) + "\n" + ",".join(cells) + "\n", encoding="utf-8")
    reasons: dict[str, int] = {}
    for reason in result.reasons.values():
        reasons[reason] = reasons.get(reason, 0) + 1
    extra = {"gpu_stand_ins": result.stand_ins, "rejections": reasons,
             "gpu_config": {k: getattr(result.config, k) for k in result.config.__dataclass_fields__}}
    (outdir / "out_metrics.json").write_text(json.dumps({**summary, **extra}, indent=2) + "\n")
    if plots:
        plot_gpu_run(outdir, result)
    return summary
