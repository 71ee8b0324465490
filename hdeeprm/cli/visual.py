"""``hdeeprm-visual``: plot an ``hdeeprm-launch`` output folder into PNG files.

Usage::

    hdeeprm-visual OUTDIR [-p rewards losses action_preferences gantt utilization queue_size] [-o DEST]
                   [--window START END | --jobs FIRST LAST]

Without ``-p`` every plot whose input file exists is drawn, ``rewards`` only for a learning run (an agent
that got rewards); time axes are in seconds, hours or days by the span shown (see :mod:`hdeeprm.outputs.visual`).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from hdeeprm.cli import command, guarded
from hdeeprm.cli.verbosity import add_verbosity_arguments, log_level
from hdeeprm.errors import InputError

PROG = "hdeeprm-visual"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``hdeeprm-visual``."""
    from hdeeprm.outputs.visual import GANTT_MAX_JOBS, PLOTS

    p = argparse.ArgumentParser(prog=PROG,
                                description="Plot rewards, losses, action preferences, Gantt chart, utilization "
                                            "and queue size of an hdeeprm-launch output folder (PNG files).")
    p.add_argument("outdir", help="the hdeeprm-launch output folder")
    p.add_argument("-p", "--plots", nargs="+", choices=list(PLOTS), metavar="PLOT",
                   help=f"plots to draw (default: all whose input exists, rewards only for a learning run): "
                        f"{', '.join(PLOTS)}")
    p.add_argument("-o", "--dest", help="folder of the PNG files (default: OUTDIR)")
    p.add_argument("--dpi", type=int, default=120, help="resolution (default 120)")
    p.add_argument("--window", nargs=2, type=float, metavar=("START", "END"),
                   help="time window in seconds: the Gantt chart draws the jobs running then, utilization and "
                        "queue show that span")
    p.add_argument("--jobs", nargs=2, type=int, metavar=("FIRST", "LAST"),
                   help="the Gantt chart draws these jobs in submission order (1-based, inclusive); without "
                        f"--window or --jobs it draws at most the first {GANTT_MAX_JOBS} jobs to start")
    add_verbosity_arguments(p)
    return p


@command(PROG)
def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad input, 130 interrupted)."""
    args = build_parser().parse_args(argv)
    return guarded(PROG, lambda: _plot(args), level=log_level(args))


def _plot(args: argparse.Namespace) -> int:
    """Draw the plots of ``args.outdir`` and print the files written; 2 when there is nothing to plot."""
    from hdeeprm.outputs.visual import make_plots

    if not Path(args.outdir).is_dir():
        raise InputError("output folder not found", path=args.outdir)
    if args.dest:
        from hdeeprm.files import check_output_folder

        check_output_folder(args.dest)
    written = make_plots(args.outdir, args.plots, args.dest, dpi=args.dpi,
                         window=tuple(args.window) if args.window else None,
                         job_range=tuple(args.jobs) if args.jobs else None)
    if not written:
        print(f"{PROG}: nothing to plot in {args.outdir}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
