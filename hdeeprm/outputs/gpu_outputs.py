"""Metrics, files and plots of a timed GPU run (a result with its ``gpu`` part and timeline).

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

from pathlib import Path

import numpy as np

from hdeeprm.outputs.batsim_csv import (GPU_JOB_COLUMNS, GPU_JOBS_HEADER, RAN_STATES, batsim_totals, format_job_row,
                                        gpu_job_cells, interval_set, schedule_cells)
from hdeeprm.jsontext import encode_json
from hdeeprm.outputs.metrics import summarize_arrays, undefined_reasons, zero_runtime_jobs
from hdeeprm.simulation.results import SimulationResult
from hdeeprm.workload.model import JobState

__all__ = ["GPU_JOB_COLUMNS", "TIMELINE_COLUMNS", "gpu_summary", "write_gpu_jobs_csv", "gpu_schedule_totals",
           "write_gpu_timeline_csv", "plot_gpu_run", "write_gpu_outputs"]
#: Columns of ``out_gpu_timeline.csv``.
TIMELINE_COLUMNS = ("time", "allocated_gpu_milli", "busy_gpus", "fragmented_gpu_milli", "gpu_power_w", "queued_jobs")


def _time_mean(times: np.ndarray, values: np.ndarray, end: float) -> float:
    """Time-weighted mean of a step function (value ``values[i]`` from ``times[i]`` to the next instant) up to end."""
    if len(times) == 0 or end <= times[0]:
        return 0.0
    edges = np.minimum(np.append(times[1:], end), end)
    width = np.maximum(edges - times, 0.0)
    return float((values * width).sum() / (end - times[0]))


def gpu_summary(result: SimulationResult) -> dict[str, float | int]:
    """The metrics summary of a GPU run (see the module docstring), a flat dict.

    Keys: ``nb_jobs``, ``nb_completed``, ``nb_killed`` (0), ``nb_rejected``, ``mean_``/``max_`` of
    ``waiting_time``, ``turnaround_time``, ``slowdown``, ``bounded_slowdown``, then ``utilization``,
    ``makespan`` (s), ``energy`` (J, GPUs only), ``jct_mean``, ``jct_median``, ``jct_p95``, ``jct_p99``,
    ``queueing_delay_mean``, ``queueing_delay_median``, ``queueing_delay_p95``, ``gpu_allocation_rate``,
    ``gpu_fragmented_share`` (the ATC'23 fragmented GPU share over the GPU capacity, time mean; the ATC'23
    ``fragmentation_ratio`` divides by the idle share instead), ``gpu_occupancy``, ``gpu_energy``, ``nb_gpus``.

    Args:
        result: A GPU replay's result (its ``gpu`` part and timeline filled, :mod:`hdeeprm.run.gpu_replay`).
    """
    gpu = result.gpu
    jobs, line = gpu.jobs, gpu.timeline
    ran = ~result.rejected
    start, finish = result.start_time, result.finish_time
    capacity = 1000.0 * gpu.cluster.nb_gpus
    out = summarize_arrays(jobs.submit, jobs.gpu_request, result.state, start, finish, capacity, gpu.energy)
    wait = start[ran] - jobs.submit[ran]
    jct = finish[ran] - jobs.submit[ran]
    makespan = out["makespan"]
    for name, values, cuts in (("jct", jct, (("mean", None), ("median", 50), ("p95", 95), ("p99", 99))),
                               ("queueing_delay", wait, (("mean", None), ("median", 50), ("p95", 95)))):
        for label, q in cuts:
            out[f"{name}_{label}"] = (0.0 if not values.size else float(values.mean()) if q is None
                                      else float(np.percentile(values, q)))
    if capacity:
        out["gpu_allocation_rate"] = _time_mean(line.times, line.allocated / capacity, makespan)
        out["gpu_fragmented_share"] = _time_mean(line.times, line.fragmented / capacity, makespan)
        out["gpu_occupancy"] = _time_mean(line.times, line.busy_gpus / gpu.cluster.nb_gpus, makespan)
    out["gpu_energy"] = gpu.energy
    out["nb_gpus"] = gpu.cluster.nb_gpus
    return out


def write_gpu_jobs_csv(path: str | Path, result: SimulationResult) -> None:
    """Write ``out_jobs.csv``: Batsim's columns plus :data:`GPU_JOB_COLUMNS`, one row per job in completion order.

    Rejected jobs follow Batsim's layout for REJECT_JOB (see :mod:`hdeeprm.outputs.batsim_csv`) with the reason in
    ``metadata``.
    """
    gpu = result.gpu
    jobs = gpu.jobs
    lines = [GPU_JOBS_HEADER]
    name = jobs.name
    start, finish = result.start_time.tolist(), result.finish_time.tolist()
    for i in result.completion_order:
        sub, res = float(jobs.submit[i]), int(jobs.num_gpu[i])
        if result.state[i] is JobState.REJECTED:
            row = format_job_row(jobs.ids[i], name, "gpu", sub, res, -1.0, JobState.REJECTED, -1.0,
                                 finish[i], None, -1.0, result.reasons[i])
        else:
            row = format_job_row(jobs.ids[i], name, "gpu", sub, res, -1.0, JobState.COMPLETED_SUCCESSFULLY,
                                 start[i], finish[i], interval_set(p.node for p in gpu.placements[i]),
                                 float(gpu.job_energy[i]))
        lines.append(f"{row},{gpu_job_cells(gpu, i)}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def gpu_schedule_totals(result: SimulationResult) -> dict[str, object]:
    """Batsim's ``out_schedule.csv`` totals (:func:`~hdeeprm.outputs.batsim_csv.batsim_totals`) for a GPU run.

    The machines are the GPUs: ``nb_computing_machines`` = GPUs, ``time_computing`` = Σ over jobs of GPUs held x
    execution time, ``time_idle`` = Σ over GPUs that ran a job of (end of its last job - its busy time, shared
    jobs counted once each); no switching or sleeping. ``consumed_joules`` is the GPU energy.
    """
    gpu = result.gpu
    ended = [i for i in result.completion_order if result.state[i] in RAN_STATES]
    busy = np.zeros(gpu.cluster.nb_gpus)
    last_end = np.full(gpu.cluster.nb_gpus, -np.inf)
    sizes = []
    for job in ended:
        gpus = gpu.gpu_ids(job)
        busy[gpus] += result.finish_time[job] - result.start_time[job]
        last_end[gpus] = np.maximum(last_end[gpus], result.finish_time[job])
        sizes.append(len(gpus))
    return batsim_totals(result, ended, sizes, busy, last_end, gpu.cluster.nb_gpus, gpu.energy if ended else 0.0)


def write_gpu_timeline_csv(path: str | Path, result: SimulationResult) -> None:
    """Write ``out_gpu_timeline.csv``: the state after every instant (:data:`TIMELINE_COLUMNS`).

    Times ``%f`` s, the fragmented share and the power with 3 decimals (``nan`` where the run does not measure
    the fragmentation: a mixed CPU + GPU run has no typical pods).
    """
    line = result.gpu.timeline
    lines = [",".join(TIMELINE_COLUMNS)]
    for row in zip(line.times, line.allocated, line.busy_gpus, line.fragmented, line.power, line.queued):
        lines.append(f"{row[0]:f},{row[1]},{row[2]},{row[3]:.3f},{row[4]:.3f},{row[5]}")
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


def plot_gpu_run(outdir: str | Path, result: SimulationResult) -> list[Path]:
    """Write ``jct_cdf.png`` (job completion time CDF) and ``gpu_timeline.png`` (GPU use over time).

    The timeline shows the allocation rate, the occupancy and the ATC'23 fragmentation ratio (matplotlib, Agg).

    Returns:
        The files written.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outdir = Path(outdir)
    gpu = result.gpu
    line, config, nb_gpus = gpu.timeline, gpu.config, gpu.cluster.nb_gpus
    ran = ~result.rejected
    jct = np.sort(result.finish_time[ran] - gpu.jobs.submit[ran])
    fig, ax = plt.subplots(figsize=(6, 4))
    if jct.size:
        ax.step(np.maximum(jct, 1e-3), np.arange(1, jct.size + 1) / jct.size, where="post")
        ax.set_xscale("log")
    ax.set_xlabel("job completion time (s)")
    ax.set_ylabel("fraction of jobs")
    ax.set_title(f"JCT CDF ({config.placement}, {config.ordering})")
    ax.grid(True, alpha=0.3)
    files = [outdir / "jct_cdf.png", outdir / "gpu_timeline.png"]
    fig.tight_layout()
    fig.savefig(files[0], dpi=120)
    plt.close(fig)
    capacity = 1000.0 * max(nb_gpus, 1)
    fig, ax = plt.subplots(figsize=(7, 4))
    hours = line.times / 3600.0
    ax.step(hours, 100 * line.allocated / capacity, where="post", label="GPU allocation rate")
    ax.step(hours, 100 * line.busy_gpus / max(nb_gpus, 1), where="post", label="GPU occupancy")
    ax.step(hours, 100 * line.fragmented / capacity, where="post", label="fragmentation (ATC'23)")
    ax.set_xlabel("time (h)")
    ax.set_ylabel("% of the GPU capacity")
    ax.legend(loc="best")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(files[1], dpi=120)
    plt.close(fig)
    return files


def write_gpu_outputs(outdir: str | Path, result: SimulationResult, *, plots: bool = True) -> dict[str, float | int]:
    """Write every output of a GPU run into ``outdir`` (see the module docstring) and return its summary.

    ``out_metrics.json`` holds the summary, the stand-in types used, the rejection reasons counted, and the
    run's configuration.
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    summary = gpu_summary(result)
    write_gpu_jobs_csv(outdir / "out_jobs.csv", result)
    write_gpu_timeline_csv(outdir / "out_gpu_timeline.csv", result)
    (outdir / "out_schedule.csv").write_text("\n".join(schedule_cells(gpu_schedule_totals(result))) + "\n",
                                             encoding="utf-8")
    reasons: dict[str, int] = {}
    for reason in result.reasons.values():
        reasons[reason] = reasons.get(reason, 0) + 1
    config = result.gpu.config
    extra = {"gpu_stand_ins": result.gpu.stand_ins, "rejections": reasons,
             "gpu_config": {k: getattr(config, k) for k in config.__dataclass_fields__}}
    zero_runtime = zero_runtime_jobs(result.state, result.start_time, result.finish_time)
    (outdir / "out_metrics.json").write_text(encode_json({**summary, **extra},
                                                         reasons=undefined_reasons(summary, zero_runtime)) + "\n")
    if plots:
        plot_gpu_run(outdir, result)
    return summary
