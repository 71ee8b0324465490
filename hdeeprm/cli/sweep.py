"""``hdeeprm-sweep``: a grid of ``hdeeprm-launch`` runs, one summary table.

Usage::

    hdeeprm-sweep OPTIONS_OR_SWEEP.json [-g NAME=V1,V2 ...] [-o OUTDIR]
                  [--backend processes|ray] [-j N] [--address RAY_ADDRESS] [--rerun] [-q]

The file is an options file or a sweep file ``{"options": "options.json", "grid":
{"seed": [1, 2], ...}}``; ``-g`` adds grid keys (or replaces the file's). Writes
``OUTDIR/summary.csv``, ``summary.parquet`` (when pyarrow is installed) and ``summary.png``. See
:mod:`hdeeprm.run.sweep`. Exit codes: 0 every cell finished, 1 some cell failed,
2 bad input, 130 interrupted.
"""
from __future__ import annotations

import argparse
import sys

from hdeeprm.cli import add_run_arguments, command, guarded
from hdeeprm.cli.verbosity import add_verbosity_arguments, log_level

DEFAULT_OUTDIR = "hdeeprm-sweep"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``hdeeprm-sweep``."""
    from hdeeprm.run.sweep import BACKENDS, DEFAULT_BACKEND

    p = argparse.ArgumentParser(
        prog="hdeeprm-sweep",
        description="Run hdeeprm-launch on every combination of option values (policy pairs, start strategies, "
                    "seeds, nb_jobs, traces, platforms...), each run in its own subfolder of OUTDIR, on local "
                    "processes or on Ray; writes OUTDIR/summary.csv and summary.parquet (with pyarrow), one row per "
                    "run: its values, status, error, wall time and metrics, and summary.png, its main metrics. "
                    "Cells already finished in OUTDIR are not run again.")
    p.add_argument("file", metavar="OPTIONS_OR_SWEEP.json",
                   help="an options file, or a sweep file {\"options\": \"options.json\", \"grid\": {NAME: [values]}}")
    p.add_argument("-g", "--grid", action="append", default=[], metavar="NAME=V1,V2",
                   help="option values to cross (repeatable), e.g. -g policy_pair=first-high_gflops,"
                        "shortest-low_power -g seed=1,2,3; names as in the options file (seed, nb_jobs, "
                        "first_job, start_strategy, contention, objective, policy_pair, ...)")
    add_run_arguments(p, DEFAULT_OUTDIR, quiet="no progress bar",
                      jobs="worker processes, or CPUs of the local Ray instance")
    p.add_argument("--backend", choices=BACKENDS, default=DEFAULT_BACKEND,
                   help=f"where the runs go (default {DEFAULT_BACKEND}; ray needs pip install 'ray[default]')")
    p.add_argument("--address", help="with --backend ray: a running Ray cluster (e.g. auto, or ray://host:10001)")
    p.add_argument("--rerun", action="store_true", help="run again the cells already finished in OUTDIR")
    add_verbosity_arguments(p)
    return p


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse and cross-check the command line."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"-j must be >= 1, got {args.jobs}")
    if args.address and args.backend != "ray":
        parser.error("--address goes with --backend ray")
    return args


@command("hdeeprm-sweep")
def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code."""
    args = parse_args(argv)
    return guarded("hdeeprm-sweep", lambda: _run(args), level=log_level(args))


def _run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from hdeeprm.outputs.sweep import PARQUET_MISSING
    from hdeeprm.run.sweep import FAILED, PARQUET_FILE, PLOT_FILE, SUMMARY_FILE, load_sweep, parse_grid_args, run_sweep

    options, grid, source = load_sweep(args.file)
    given = parse_grid_args(args.grid)
    grid.update(given)   # -g values: messages say "<command line>", paths are relative to the working folder
    rows = run_sweep(options, grid, outdir=args.outdir, backend=args.backend, jobs=args.jobs, address=args.address,
                     source=source, sources=dict.fromkeys(given, "<command line>"), rerun=args.rerun,
                     quiet=args.quiet)
    failed = [row for row in rows if row["status"] == FAILED]
    for row in failed:
        print(f"hdeeprm-sweep: cell {row['cell']} failed: {row['error']}", file=sys.stderr)
    outdir = Path(args.outdir)
    tables = [name for name in (SUMMARY_FILE, PARQUET_FILE) if (outdir / name).is_file()]
    print(f"{len(rows) - len(failed)} of {len(rows)} run(s) finished; summary in {outdir / tables[0]}"
          + "".join(f", {name}" for name in tables[1:]) + f" and {PLOT_FILE}")
    if PARQUET_FILE not in tables:
        print(f"hdeeprm-sweep: {PARQUET_MISSING}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
