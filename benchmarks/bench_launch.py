"""Jobs/s and decisions/s of classic policy-pair replays on the embedded engine.

Usage (from the repository root)::

    python benchmarks/bench_launch.py                 # the shipped examples
    python benchmarks/bench_launch.py examples/sdsc_sp2_gaia_first_high_gflops.json --repeat 3
    python benchmarks/bench_launch.py benchmarks/kth_golden.json --record \
        -cw ../shared/batsim-golden/kth2000-delay/workload.json   # next to bench_server.py
    python benchmarks/bench_launch.py --scaling        # SDSC-SP2 on Gaia: 1k, 5k, 10k, 20k, all jobs

For each options file: the workload conversion time, then the simulation time
(best of ``--repeat`` runs, without the Batsim-format logs, as in training)
with the jobs/s and decisions/s it gives. With ``--launch OUTDIR``: what
``hdeeprm-launch`` does instead (inputs built, outputs streamed to OUTDIR as jobs
end, summary written), its wall time, jobs/s and the peak resident memory of the
process (``getrusage``), e.g. to check that memory does not grow with the number
of jobs (``nb_jobs`` in the options). Timing is measured here, never asserted in
tests.

With ``--scaling`` (default options: ``examples/sdsc_sp2_gaia_first_high_gflops.json``, the
54,044 SDSC-SP2 jobs on UniLu Gaia): for the first ``--sizes`` jobs of the trace (``nb_jobs``
overridden; 0 = all), one line each with the seconds and jobs/s of the simulation alone, of
``launch`` in this process (outputs written), and of the whole process (``python -m
hdeeprm.cli.launch -q`` in a fresh interpreter: start-up, imports, conversion, simulation,
outputs), then the microseconds per job of each, which stay flat when the cost is linear in
the number of jobs.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hdeeprm.decision.contention import bookkeeping_path
from hdeeprm.outputs.stream import output_rows_path

ROOT = Path(__file__).resolve().parents[1]
# The examples name the public traces as $HDEEPRM_SHARED/traces/... (default: ../shared).
os.environ.setdefault("HDEEPRM_SHARED", str(ROOT.parent / "shared"))
DEFAULT = ["examples/quickstart.json", "examples/kth_sp2_first_high_gflops.json",
           "examples/sdsc_sp2_gaia_first_high_gflops.json"]
#: Options and trace window sizes of ``--scaling`` (0 = the whole trace).
SCALING_OPTIONS = "examples/sdsc_sp2_gaia_first_high_gflops.json"
SCALING_SIZES = (1000, 5000, 10000, 20000, 0)


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


def window_options(path: str, nb_jobs: int, folder: Path) -> Path:
    """A copy of the options file with ``nb_jobs`` set (0 = left out: the whole trace) and absolute paths."""
    data = json.loads(Path(path).read_text())
    for key in ("workload_file_path", "platform_file_path"):
        value = data.get(key)
        if value and not value.startswith("$") and not Path(value).is_absolute():
            data[key] = str((Path(path).resolve().parent / value).resolve())
    if nb_jobs:
        data["nb_jobs"] = nb_jobs
    out = folder / f"options_{nb_jobs or 'all'}.json"
    out.write_text(json.dumps(data))
    return out


def bench_scaling(path: str, sizes: list[int], repeat: int) -> None:
    """Print simulate, in-process launch and whole-process seconds and jobs/s for each window size."""
    from hdeeprm.agents.base import ClassicAgent
    from hdeeprm.config.build import build_platform, build_workload
    from hdeeprm.config.options import load_options
    from hdeeprm.run.episode import run_episode
    from hdeeprm.run.launch import launch

    print(f"{Path(path).name}, first N jobs (best of {repeat} for simulate and launch; process: one fresh "
          f"interpreter running hdeeprm-launch -q)")
    print(f"{'jobs':>7} {'simulate s':>10} {'jobs/s':>8} {'launch s':>9} {'jobs/s':>8} {'process s':>9} "
          f"{'jobs/s':>8}   us/job: simulate launch process")
    with tempfile.TemporaryDirectory(prefix="hdeeprm-bench-") as tmp:
        for size in sizes:
            options_file = window_options(path, size, Path(tmp))
            options = load_options(options_file)
            hierarchy = build_platform(options)
            workload = build_workload(options, hierarchy)
            n = len(workload.jobs)
            simulate = launched = float("inf")
            for _ in range(repeat):
                t0 = time.perf_counter()
                run_episode(hierarchy, workload, options, ClassicAgent(0), record=False)
                simulate = min(simulate, time.perf_counter() - t0)
                t0 = time.perf_counter()
                launch(options, outdir=Path(tmp) / "launch", quiet=True)
                launched = min(launched, time.perf_counter() - t0)
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-m", "hdeeprm.cli.launch", str(options_file), "-o",
                            str(Path(tmp) / "process"), "-q"], check=True)
            process = time.perf_counter() - t0
            print(f"{n:>7} {simulate:>10.3f} {n / simulate:>8,.0f} {launched:>9.3f} {n / launched:>8,.0f} "
                  f"{process:>9.3f} {n / process:>8,.0f}   {1e6 * simulate / n:>14.0f} {1e6 * launched / n:>6.0f} "
                  f"{1e6 * process / n:>7.0f}", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("options", nargs="*", default=None,
                   help=f"options files (default: the shipped examples; with --scaling: {SCALING_OPTIONS})")
    p.add_argument("--repeat", type=int, default=1)
    p.add_argument("--record", action="store_true", help="also keep the logs of the Batsim-format outputs")
    p.add_argument("-cw", "--custom-workload", help="Batsim JSON workload instead of the options' trace "
                   "(e.g. ../shared/batsim-golden/kth2000-delay/workload.json, to compare with bench_server.py)")
    p.add_argument("--launch", metavar="OUTDIR", help="time the whole launch with its outputs streamed to OUTDIR "
                   "(one options file) and print its peak resident memory")
    p.add_argument("--scaling", action="store_true",
                   help="simulate, launch and whole-process seconds for the first --sizes jobs of the trace")
    p.add_argument("--sizes", type=int, nargs="+", default=list(SCALING_SIZES),
                   help="with --scaling: jobs of each window, 0 = all (default: 1000 5000 10000 20000 0)")
    args = p.parse_args(argv)
    print(f"contention bookkeeping: {bookkeeping_path()}; output rows: {output_rows_path()}")
    if args.scaling:
        for path in args.options or [str(ROOT / SCALING_OPTIONS)]:
            bench_scaling(path, args.sizes, args.repeat)
        return 0
    args.options = args.options or [str(ROOT / f) for f in DEFAULT]
    if args.launch:
        for path in args.options:
            bench_launch(path, args.launch)
        return 0
    for path in args.options:
        bench(path, args.repeat, args.record, args.custom_workload)
    return 0


if __name__ == "__main__":
    sys.exit(main())
