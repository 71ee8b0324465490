"""Benchmark: speed-up of ``hdeeprm-sweep -j N`` and ``hdeeprm-evaluate -j N`` over one worker, whole process.

Usage (from the repository root)::

    python benchmarks/bench_scale_out.py sweep --workers 1 12            # 12 cells: 12 policy pairs, SDSC-SP2 on Gaia
    python benchmarks/bench_scale_out.py evaluate --workers 1 12         # 100 runs: 10 windows x 10 policies
    python benchmarks/bench_scale_out.py sweep evaluate --workers 1 2 --nb-jobs 5000   # a 2-core machine
    python benchmarks/bench_scale_out.py ceiling cpu --workers 1 8 12 --nb-jobs 20000  # what the machine allows

``sweep``: ``hdeeprm-sweep`` on ``examples/sdsc_sp2_gaia_first_high_gflops.json`` (the SDSC-SP2 trace on
UniLu Gaia, ``--nb-jobs`` jobs, 0 = all 54,044) crossed with the first ``--cells`` policy pairs
(job orderings x core selections, in the registries' order), every cell a whole ``hdeeprm-launch``
with all its outputs. ``evaluate``: ``hdeeprm-evaluate`` on ``examples/evaluation/sdsc_sp2_gaia.json`` with
``--windows`` windows of 1,024 jobs (all of them, ``--on all``) x ``--policies`` policy pairs.

``ceiling`` and ``cpu`` measure what the machine itself allows, with no pool at all: N independent copies of
one command started at once, N times the work of one copy. ``ceiling`` runs N one-cell sweeps (the sweep's
first cell, ``-j 1``: the work of one worker, outputs included), ``cpu`` N copies of a pure-Python loop (no
input, no output, a few kB of memory). Their efficiency is one copy's wall time over N copies' wall time: 1.0
when N copies run as fast as one, the most any pool of N workers could reach for that work.

Each is run once per ``--workers`` value as a fresh process (``python -m hdeeprm.cli.sweep ... -j N``),
the wall time measured around the whole process: start-up, imports, the workers' start (each imports
once and stays up for every cell or window: :func:`hdeeprm.run.pool.worker_map`), the runs, the summary.
Printed, per value: the wall time, the speed-up over the first value (``--workers``' first, 1 by default)
and the parallel efficiency, speed-up / (N / first); the issue's target is an efficiency >= 0.6 with N
workers on N free cores. The machine's CPU count, its physical cores (``/proc/cpuinfo``: hardware threads
of one core share it) and its load average are printed first: the figures mean something only with N
free cores. Timing is measured here, never asserted in tests.
"""
from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HDEEPRM_SHARED", str(ROOT.parent / "shared"))
SWEEP_OPTIONS = ROOT / "examples" / "sdsc_sp2_gaia_first_high_gflops.json"
EVALUATE_OPTIONS = ROOT / "examples" / "evaluation" / "sdsc_sp2_gaia.json"
#: Seconds an interrupted command gets to stop its workers before it is killed.
STOP_TIMEOUT = 15.0


def policy_pairs(nb: int) -> list[str]:
    """The first ``nb`` policy pairs ``ordering-core_selection``, orderings varying slowest (the registries' order)."""
    from hdeeprm.decision.actions import CORE_POLICIES, JOB_POLICIES

    pairs = [f"{job}-{core}" for job in JOB_POLICIES for core in CORE_POLICIES]
    if nb > len(pairs):
        raise SystemExit(f"at most {len(pairs)} policy pairs, got {nb}")
    return pairs[:nb]


def sweep_command(workers: int, outdir: str, args: argparse.Namespace) -> list[str]:
    """The ``hdeeprm-sweep`` command line of one measurement."""
    return [sys.executable, "-m", "hdeeprm.cli.sweep", str(SWEEP_OPTIONS), "-q", "-o", outdir, "-j", str(workers),
            "-g", "policy_pair=" + ",".join(policy_pairs(args.cells)),
            *(("-g", f"nb_jobs={args.nb_jobs}") if args.nb_jobs else ())]


def evaluate_command(workers: int, outdir: str, args: argparse.Namespace) -> list[str]:
    """The ``hdeeprm-evaluate`` command line of one measurement."""
    return [sys.executable, "-m", "hdeeprm.cli.evaluate", str(EVALUATE_OPTIONS), "-q", "-o", outdir,
            "-j", str(workers), "-n", str(args.windows), "--on", "all", "-p", *policy_pairs(args.policies)]


def ceiling_command(workers: int, outdir: str, args: argparse.Namespace) -> list[str]:
    """One copy of ``ceiling``: the sweep's first cell as a one-worker sweep."""
    return sweep_command(1, outdir, argparse.Namespace(**{**vars(args), "cells": 1}))


#: Iterations of ``cpu``'s loop (about 3 s on one core of the 2-core development machine).
CPU_LOOP = 30_000_000


def cpu_command(workers: int, outdir: str, args: argparse.Namespace) -> list[str]:
    """One copy of ``cpu``: a pure-Python loop of :data:`CPU_LOOP` iterations."""
    return [sys.executable, "-c", f"x = 0\nfor i in range({CPU_LOOP}):\n    x += i & 7"]


COMMANDS = {"sweep": sweep_command, "evaluate": evaluate_command, "ceiling": ceiling_command, "cpu": cpu_command}
#: Modes that run N copies of one command instead of one command with N workers.
COPIES = ("ceiling", "cpu")


def physical_cores() -> int | None:
    """Distinct (physical id, core id) pairs of ``/proc/cpuinfo`` (Linux): the cores behind the CPUs, None if unknown.

    Two hardware threads of one core share its execution units, so N workers on N CPUs that are N / 2 cores
    cannot reach N times one worker's speed.
    """
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return None
    pairs, physical = set(), "0"
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key == "physical id":
            physical = value.strip()
        elif key == "core id":
            pairs.add((physical, value.strip()))
    return len(pairs) or None


def wall_seconds(command: list[str], copies: int = 1) -> float:
    """Wall seconds of ``copies`` copies of ``command`` started at once, run to their end (outputs discarded).

    A failure stops the benchmark. ``command`` may hold ``{copy}``, replaced by each copy's number (its
    output folder).

    When the benchmark is stopped (Ctrl-C, or SIGTERM as ``timeout`` sends it), the command gets SIGTERM
    (the command-line tools then stop their workers; SIGINT would not reach a command started from a shell
    that ignores it) before the benchmark exits, so no sweep or evaluation runs on behind it and loads the
    next measurement.
    """
    start = time.perf_counter()
    children = [subprocess.Popen([arg.replace("{copy}", str(k)) for arg in command], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, cwd=ROOT) for k in range(copies)]
    try:
        errors = [child.communicate()[1] for child in children]
    except BaseException:
        for child in children:
            child.send_signal(signal.SIGTERM)
        for child in children:
            try:
                child.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                child.kill()
        raise
    wall = time.perf_counter() - start
    for child, err in zip(children, errors):
        if child.returncode:
            raise SystemExit(f"{' '.join(command)} failed ({child.returncode}): {err.strip()[-2000:]}")
    return wall


def _stop(signum: int, frame: object) -> None:
    """SIGTERM: stop as Ctrl-C does (the running command is interrupted too, see :func:`wall_seconds`)."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("what", nargs="+", choices=tuple(COMMANDS),
                   help="which command to scale out (ceiling, cpu: N copies of one command, see the docstring)")
    p.add_argument("--workers", type=int, nargs="+", default=[1, 2],
                   help="worker counts, the first the reference (default 1 2)")
    p.add_argument("--cells", type=int, default=12, help="sweep: policy pairs crossed (default 12)")
    p.add_argument("--nb-jobs", type=int, default=0, help="sweep: jobs of the trace per cell (default 0 = all)")
    p.add_argument("--windows", type=int, default=10, help="evaluate: windows (default 10)")
    p.add_argument("--policies", type=int, default=10, help="evaluate: policy pairs (default 10)")
    args = p.parse_args(argv)
    signal.signal(signal.SIGTERM, _stop)
    if min(args.workers) < 1:
        p.error("--workers must be >= 1")
    print(f"{os.cpu_count()} CPUs ({physical_cores() or 'unknown'} physical cores), {len(os.sched_getaffinity(0))} "
          f"usable; load average "
          f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    for what in args.what:
        size = {"sweep": f"{args.cells} cells, {args.nb_jobs or 'all'} jobs each",
                "evaluate": f"{args.windows * args.policies} runs: {args.windows} windows x {args.policies} policies",
                "ceiling": f"copies of a one-cell sweep, {args.nb_jobs or 'all'} jobs",
                "cpu": f"copies of a {CPU_LOOP:,}-iteration Python loop"}[what]
        copies = what in COPIES
        reference = None
        for workers in args.workers:
            with tempfile.TemporaryDirectory(prefix="bench-scale-out-") as outdir:
                if copies:
                    wall = wall_seconds(COMMANDS[what](1, os.path.join(outdir, "{copy}"), args), copies=workers)
                else:
                    wall = wall_seconds(COMMANDS[what](workers, outdir, args))
            if reference is None:
                reference = (workers, wall)
            # N copies do N times the work of one: their speed-up counts the work, a pool's counts the wall.
            speed_up = reference[1] / wall * (workers / reference[0] if copies else 1.0)
            efficiency = speed_up / (workers / reference[0])
            print(f"{what} ({size}), {workers} {'copies' if copies else 'workers'}: {wall:.2f} s, speed-up "
                  f"{speed_up:.2f} x {reference[0]}, efficiency {efficiency:.2f}"
                  f"{'' if copies else ' (target >= 0.6)'}; load average {os.getloadavg()[0]:.2f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
