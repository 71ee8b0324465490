"""What ``hdeeprm-launch`` does for an options file with a ``gpu`` block: a timed GPU replay.

Inputs: ``platform_file_path`` is a GPU platform (an HDeepRM platform JSON whose node types have
GPUs, e.g. ``platforms/dgx_a100.json``, or an openb node list ``.csv``); ``workload_file_path``
is a timed GPU workload (the Philly per-job table, e.g. ``$HDEEPRM_SHARED/traces/gpu/philly-derived.csv.gz``,
or an openb pod list); ``nb_jobs`` and ``gpu.first_job`` pick a window of it. The policy is the
``gpu`` block's placement and ordering (a classic policy: no agent).

Outputs in the output folder, as a CPU run: ``out_jobs.csv`` (Batsim's columns plus the GPUs of each
job), ``out_metrics.json``, ``episodes.csv``, ``makespans.log``, ``run.json``, plus
``out_gpu_timeline.csv``, ``jct_cdf.png`` and ``gpu_timeline.png``
(:mod:`hdeeprm.outputs.gpu_outputs`).
"""
from __future__ import annotations

import csv
import logging
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

from hdeeprm.config.options import Options
from hdeeprm.errors import OptionsError
from hdeeprm.files import atomic_write
from hdeeprm.outputs.gpu_outputs import write_gpu_outputs
from hdeeprm.platform.gpu_platform import load_gpu_cluster
from hdeeprm.platform.openb import GpuCluster
from hdeeprm.run.gpu_replay import GpuRunConfig, simulate_gpu
from hdeeprm.simulation.kernel import DEFAULT_CLOCK
from hdeeprm.run.lifecycle import FAILED, INTERRUPTED, RUNNING, RunResult, claim_outdir, end_failed, write_run_info
from hdeeprm.workload.gpu_jobs import GpuJobs, read_gpu_workload

log = logging.getLogger(__name__)


def gpu_config(options: Options) -> GpuRunConfig:
    """The :class:`GpuRunConfig` of the options' ``gpu`` block (its defaults for the keys not given), seeded."""
    block = {k: v for k, v in (options.gpu or {}).items() if k != "first_job"}
    return GpuRunConfig(**block, seed=options.seed)


def check_gpu_clock(options: Options) -> None:
    """Refuse a ``clock`` other than the exact one in a GPU run (options with a ``gpu`` block).

    The ``"batsim"`` clock reproduces Batsim's 6-decimal protocol (decisions up to 0.5 us late, as a real Batsim
    applies them), so that CPU runs match Batsim runs; a timed GPU replay has no Batsim counterpart (Batsim has no
    GPU model; ``--simulator batsim`` is refused for it), so it times its jobs on the exact clock only.

    Raises:
        OptionsError: ``"clock 'batsim' does not apply to a GPU run (options with a 'gpu' block): ...
            (options.json)"``.
    """
    if options.clock != DEFAULT_CLOCK:
        raise OptionsError(f"clock {options.clock!r} does not apply to a GPU run (options with a 'gpu' block): its "
                           f"jobs are timed on the exact clock (Batsim's protocol clock models a Batsim run, and "
                           f"Batsim has no GPU); drop clock or set it to \"{DEFAULT_CLOCK}\"", path=options.source)


def load_gpu_inputs(options: Options, libraries: Sequence[str | Path] = (),
                    gpu_libraries: Sequence[str | Path] = ()) -> tuple[GpuCluster, GpuJobs, GpuRunConfig]:
    """The cluster, the job window and the run configuration of options with a ``gpu`` block.

    What ``hdeeprm-launch`` runs and ``hdeeprm-check`` checks.

    Args:
        options: Options with a ``gpu`` block.
        libraries: Extra processor/node type libraries for a platform JSON (``--library``).
        gpu_libraries: Extra GPU type libraries (``--gpu-library``).

    Returns:
        ``(cluster, jobs, config)``; a warning is logged when the job window is empty or the platform
        has no GPU.

    Raises:
        OptionsError: A missing platform or workload, ``nb_resources`` not the platform's GPUs, invalid
            ``gpu`` values, a ``clock`` other than ``"exact"`` (:func:`check_gpu_clock`).
        PlatformError, WorkloadError: Invalid input files.
    """
    check_gpu_clock(options)
    for name in ("platform_file_path", "workload_file_path"):
        if not getattr(options, name):
            raise OptionsError(f"{name} is required for a GPU run", path=options.source)
    cluster = load_gpu_cluster(options.platform_file_path, extra_libraries=libraries, gpu_libraries=gpu_libraries)
    if options.nb_resources is not None and options.nb_resources != cluster.nb_gpus:
        raise OptionsError(f"nb_resources must equal the GPU platform's GPUs ({cluster.nb_gpus}), "
                           f"got {options.nb_resources}", path=options.source)
    first = int((options.gpu or {}).get("first_job", 0))
    jobs = read_gpu_workload(options.workload_file_path).window(first, options.nb_jobs)
    config = gpu_config(options)
    if len(jobs) == 0:
        log.warning("the GPU workload selection is empty (%s, first_job %d, nb_jobs %s): the run has no job",
                    jobs.source, first, options.nb_jobs)
    if cluster.nb_gpus == 0:
        log.warning("the GPU platform %s has no GPU: every job asking for one is rejected", cluster.source)
    return cluster, jobs, config


def launch_gpu(options: Options, *, outdir: str | Path, quiet: bool = True, libraries: Sequence[str | Path] = (),
               gpu_libraries: Sequence[str | Path] = (), unsupported: dict | None = None):
    """Run the timed GPU replay of ``options`` and write its outputs into ``outdir``.

    The run owns ``outdir`` as a CPU run does (:func:`~hdeeprm.run.lifecycle.claim_outdir` once the inputs are read,
    ``run.json`` with ``"status"`` running, then finished, interrupted or failed).

    Args:
        options: Options with a ``gpu`` block.
        outdir: Output folder, created if needed.
        quiet: Unused (no progress bar: the replay is one pass).
        libraries: Extra processor/node type libraries for a platform JSON.
        gpu_libraries: Extra GPU type libraries.
        unsupported: Launch arguments given that a GPU run cannot honour (name -> value); any set one is an error.

    Returns:
        A :class:`~hdeeprm.run.lifecycle.RunResult` with one metrics dict.

    Raises:
        OptionsError: A missing platform or workload, an agent, a custom workload, several runs or the Batsim
            simulator asked for, or invalid ``gpu`` values.
        PlatformError, WorkloadError: Invalid input files.
    """
    given = {name: value for name, value in (unsupported or {}).items() if value}
    if given:
        raise OptionsError(f"a GPU run (options with a 'gpu' block) takes a classic GPU policy and one run on the "
                           f"embedded simulator: drop {', '.join(sorted(given))}", path=options.source)
    cluster, jobs, config = load_gpu_inputs(options, libraries, gpu_libraries)
    outdir = Path(outdir)
    workload = SimpleNamespace(source=jobs.source, jobs=jobs.ids, report=jobs.report)   # what run.json reports
    extra = {"simulator": "gpu", "platform": {"source": cluster.source, "nodes": cluster.nb_nodes,
                                              "gpus": cluster.nb_gpus, "models": list(cluster.models)}}
    lock = claim_outdir(outdir, keep=(options.source, options.workload_file_path, options.platform_file_path,
                                      *libraries, *gpu_libraries))
    try:
        write_run_info(outdir, options, workload, {**extra, "episodes_completed": 0}, status=RUNNING)
        log.info("GPU run: %d jobs on %d GPUs of %d nodes, %s / %s, outputs in %s", len(jobs), cluster.nb_gpus,
                 cluster.nb_nodes, config.placement, config.ordering, outdir)
        try:
            result = simulate_gpu(cluster, jobs, config)
            metrics = {"episode": 0, **write_gpu_outputs(outdir, result), "reward": "", "loss": ""}
            with atomic_write(outdir / "episodes.csv") as f:
                writer = csv.DictWriter(f, fieldnames=list(metrics))
                writer.writeheader()
                writer.writerow(metrics)
            with atomic_write(outdir / "makespans.log") as f:
                f.write(f"{float(metrics['makespan'])!r}\n")
            write_run_info(outdir, options, workload, {**extra, "episodes_completed": 1})
        except KeyboardInterrupt:
            write_run_info(outdir, options, workload, {**extra, "episodes_completed": 0}, status=INTERRUPTED)
            raise
        except Exception as exc:
            end_failed(outdir, exc, lambda more: write_run_info(
                outdir, options, workload, {**extra, "episodes_completed": 0, **more}, status=FAILED))
            raise
    finally:
        lock.release()
    return RunResult(metrics=[metrics], outdir=outdir)
