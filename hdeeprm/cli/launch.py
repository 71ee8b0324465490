"""``hdeeprm-launch``: run a workload on a platform with an agent.

Usage (the original HDeepRM's form and flags)::

    hdeeprm-launch [agent.py] options.json [-a agent.py] [-cw workload.json]
                   [-im in.pt] [-om out.pt] [-nr N] [-o OUTDIR] [--quiet]
                   [--simulator embedded|batsim] [--batsim PATH]
"""
from __future__ import annotations

import argparse
import sys

from hdeeprm.cli import guarded

DEFAULT_OUTDIR = "hdeeprm-run"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``hdeeprm-launch``."""
    p = argparse.ArgumentParser(
        prog="hdeeprm-launch",
        description="Simulate a workload on a heterogeneous platform with a classic policy pair or a "
                    "learning agent; writes Batsim-format outputs and metrics to OUTDIR.")
    p.add_argument("files", nargs="+", metavar="[agent.py] options.json",
                   help="the options file, optionally preceded by the agent file")
    p.add_argument("-a", "--agent", help="agent file: its first class subclassing hdeeprm.agents.base.Agent decides")
    p.add_argument("-cw", "--custom-workload", help="Batsim JSON workload to use instead of the options' trace")
    p.add_argument("-im", "--inmodel", help="checkpoint to load the learning agent from")
    p.add_argument("-om", "--outmodel", help="checkpoint to save the learning agent to (written atomically)")
    p.add_argument("-nr", "--nb-runs", type=int, default=1, help="episodes to run in this process (default 1)")
    p.add_argument("-o", "--outdir", default=DEFAULT_OUTDIR,
                   help=f"output folder (default ./{DEFAULT_OUTDIR})")
    p.add_argument("--simulator", choices=("embedded", "batsim"), default="embedded",
                   help="embedded engine (default) or a real Batsim binary through PyBatsim")
    p.add_argument("--batsim", default="batsim", help="path of the batsim binary (with --simulator batsim)")
    p.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no summary")
    return p


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line; the agent may come first or with ``-a``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if len(args.files) > 2:
        parser.error("expected [agent.py] options.json")
    if len(args.files) == 2:
        if args.agent:
            parser.error("the agent file is given twice (positional and -a)")
        args.agent, args.options = args.files
    else:
        args.options = args.files[0]
    if args.nb_runs < 1:
        parser.error(f"-nr must be >= 1, got {args.nb_runs}")
    return args


def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad input)."""
    args = parse_args(argv)
    return guarded("hdeeprm-launch", lambda: _run(args))


def _run(args: argparse.Namespace) -> int:
    from hdeeprm.run.launch import launch

    result = launch(args.options, agent_path=args.agent, custom_workload=args.custom_workload,
                    inmodel=args.inmodel, outmodel=args.outmodel, nb_runs=args.nb_runs,
                    outdir=args.outdir, quiet=args.quiet, simulator=args.simulator, batsim=args.batsim)
    if not args.quiet:
        m = result.metrics[-1]
        print(f"outputs in {result.outdir}")
        for key in ("nb_jobs", "nb_completed", "nb_killed", "nb_rejected", "makespan", "mean_waiting_time",
                    "mean_turnaround_time", "mean_slowdown", "mean_bounded_slowdown", "utilization", "energy"):
            value = m[key]
            print(f"  {key:24s} {value:.6g}" if isinstance(value, float) else f"  {key:24s} {value}")
        for key in ("jct_mean", "jct_median", "jct_p95", "jct_p99", "queueing_delay_mean", "gpu_allocation_rate",
                    "gpu_fragmentation_ratio", "gpu_occupancy"):
            if key in m:   # a GPU run
                print(f"  {key:24s} {m[key]:.6g}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
