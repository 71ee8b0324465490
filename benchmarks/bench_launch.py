"""Jobs/s and decisions/s of classic policy-pair replays on the embedded engine.

Usage (from the repository root)::

    python benchmarks/bench_launch.py                 # the shipped examples
    python benchmarks/bench_launch.py examples/sdsc_sp2_gaia_first_high_gflops.json --repeat 3
    python benchmarks/bench_launch.py benchmarks/kth_golden.json --record \
        -cw ../shared/batsim-golden/kth2000-delay/workload.json   # next to bench_server.py

For each options file: the workload conversion time, then the simulation time
(best of ``--repeat`` runs, without the Batsim-format logs, as in training)
with the jobs/s and decisions/s it gives. With ``--launch OUTDIR``: what
``hdeeprm-launch`` does instead (inputs built, outputs streamed to OUTDIR as jobs
end, summary written), its wall time, jobs/s and the peak resident memory of the
process (``getrusage``), e.g. to check that memory does not grow with the number
of jobs (``nb_jobs`` in the options). Timing is measured here, never asserted in
tests.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The examples name the public traces as $HDEEPRM_SHARED/traces/... (default: ../shared).
os.environ.setdefault("HDEEPRM_SHARED", str(ROOT.parent / "shared"))
DEFAULT = ["examples/quickstart.json", "examples/kth_sp2_first_high_gflops.json",
           "examples/sdsc_sp2_gaia_first_high_gflops.json"]


def bench(path: str, repeat: int, record: bool, custom_workload: str | None = None) -> None:
    """Print conversion and simulation speed of one options file."""
    from hdeeprm.agents.base import ClassicAgent
    from hdeeprm.config.build import build_platform, build_workload
    from hdeeprm.run.episode import run_episode
    from hdeeprm.config.options import load_options

    options = load_options(path)
    hierarchy = build_platform(options)
    t0 = time.perf_counter()
    workload = build_workload(options, hierarchy, custom_workload)
    convert = time.perf_counter() - t0
    best, episode = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        episode, _ = run_episode(hierarchy, workload, options, ClassicAgent(0), record=record)
        best = min(best, time.perf_counter() - t0)
    n, d = len(workload.jobs), episode.manager.decisions
    print(f"{Path(path).name}: {n} jobs on {hierarchy.nb_cores} cores, convert {convert:.2f} s, "
          f"simulate {best:.2f} s -> {n / best:,.0f} jobs/s, {d / best:,.0f} decisions/s "
          f"({d} decisions)", flush=True)


def bench_launch(path: str, outdir: str) -> None:
    """Print the whole ``hdeeprm-launch`` run of one options file: seconds, jobs/s, peak MiB."""
    import resource

    from hdeeprm.run.launch import launch

    t0 = time.perf_counter()
    result = launch(path, outdir=outdir, quiet=True)
    wall = time.perf_counter() - t0
    n = result.metrics[-1]["nb_jobs"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # Linux: KiB
    print(f"{Path(path).name}: launch of {n} jobs with outputs in {wall:.2f} s -> {n / wall:,.0f} jobs/s, "
          f"peak resident memory {peak:,.0f} MiB", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("options", nargs="*", default=[str(ROOT / f) for f in DEFAULT])
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--record", action="store_true", help="also keep the logs of the Batsim-format outputs")
    p.add_argument("-cw", "--custom-workload", help="Batsim JSON workload instead of the options' trace "
                   "(e.g. ../shared/batsim-golden/kth2000-delay/workload.json, to compare with bench_server.py)")
    p.add_argument("--launch", metavar="OUTDIR", help="time the whole launch with its outputs streamed to OUTDIR "
                   "(one options file) and print its peak resident memory")
    args = p.parse_args(argv)
    if args.launch:
        for path in args.options:
            bench_launch(path, args.launch)
        return 0
    for path in args.options:
        bench(path, args.repeat, args.record, args.custom_workload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
