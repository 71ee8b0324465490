"""CPU and GPU jobs together: the start strategies on the mixed example, per kind of job.

Usage (from the repository root)::

    python benchmarks/bench_mixed.py                                   # examples/mixed_kth_philly_easy.json
    python benchmarks/bench_mixed.py --strategies easy_backfilling greedy --gpu-jobs 500

Runs the options file (KTH-SP2 jobs and Philly jobs on ``platforms/mixed_cpu_gpu.json``) once per start
strategy, as ``hdeeprm-launch`` does (:func:`hdeeprm.run.launch.launch`, outputs in a temporary folder), and
prints, for the CPU jobs and for the GPU jobs, the run's own per-kind figures (``cpu_jobs_*`` and ``gpu_jobs_*``
of ``out_metrics.json``, :func:`hdeeprm.outputs.metrics.summarize_kinds`): their number, mean waiting time (h) and
mean bounded slowdown (tau = 10 s), then the cores' and the GPUs' energy (GJ), the makespan (days) and the wall
time of the run. Timing is measured here, never asserted in tests.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HDEEPRM_SHARED", str(ROOT.parent / "shared"))
STRATEGIES = ("easy_backfilling", "greedy", "head_of_line")


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    from hdeeprm.config.options import load_options
    from hdeeprm.outputs.metrics import JOB_KINDS
    from hdeeprm.run.launch import launch

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("options", nargs="?", default=str(ROOT / "examples" / "mixed_kth_philly_easy.json"))
    p.add_argument("--strategies", nargs="+", default=list(STRATEGIES))
    p.add_argument("--gpu-jobs", type=int, help="GPU jobs of the window (default: the options')")
    args = p.parse_args(argv)
    base = load_options(args.options)
    if args.gpu_jobs is not None:
        base = base.replace(gpu_jobs={**base.gpu_jobs, "nb_jobs": args.gpu_jobs})
    print(f"{'strategy':<18}{'kind':<6}{'jobs':>6}{'wait h':>9}{'bsld':>10}   {'cores GJ':>9}{'GPUs GJ':>9}"
          f"{'days':>7}{'wall s':>8}")
    for strategy in args.strategies:
        with tempfile.TemporaryDirectory() as outdir:
            tic = time.perf_counter()
            metrics = launch(base.replace(start_strategy=strategy), outdir=outdir, quiet=True).metrics[0]
            wall = time.perf_counter() - tic
        for kind, _ in JOB_KINDS:
            tail = (f"   {metrics['cpu_energy'] / 1e9:>9.3f}{metrics['gpu_energy'] / 1e9:>9.3f}"
                    f"{metrics['makespan'] / 86400:>7.2f}{wall:>8.1f}") if kind == "cpu_jobs" else ""
            print(f"{strategy:<18}{kind.removesuffix('_jobs'):<6}{metrics[kind + '_nb_jobs']:>6}"
                  f"{metrics[kind + '_mean_waiting_time'] / 3600:>9.2f}"
                  f"{metrics[kind + '_mean_bounded_slowdown']:>10.1f}{tail}", flush=True)
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
