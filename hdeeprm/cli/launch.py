"""``hdeeprm-launch``: run a workload on a platform with an agent.

Usage (the original HDeepRM's form and flags)::

    hdeeprm-launch [agent.py] options.json [-a agent.py] [-cw workload.json]
                   [-im in.pt] [-om out.pt] [--checkpoint-every N] [-nr N] [-o OUTDIR]
                   [--library types.json ...] [--gpu-library gpus.json ...] [--quiet]
                   [--simulator embedded|batsim] [--batsim PATH]

Exit codes: 0 done, 2 bad input, 3 the agent failed (see :mod:`hdeeprm.cli`), 130 interrupted.
"""
from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from hdeeprm.cli import add_library_arguments, add_run_arguments, command, guarded
from hdeeprm.cli.verbosity import add_verbosity_arguments, log_level

DEFAULT_OUTDIR = "hdeeprm-run"
#: Where the help sends users for the options file.
OPTIONS_HELP = ("The options file is JSON: its keys, defaults and units are documented in the README's "
                "'Options file' section and in hdeeprm.config.options.Options (unknown keys are rejected with "
                "the closest valid name); ready-made ones are in the repository's examples/ folder "
                "(examples/quickstart.json, examples/learning/learning.json).")
EPILOG = OPTIONS_HELP + " Exit codes: 0 done, 2 bad input, 3 the agent failed, 130 interrupted."
#: The summary printed after a run: metric key of :mod:`hdeeprm.outputs.metrics` and its unit
#: (``{tau}`` is :data:`hdeeprm.outputs.metrics.BOUNDED_SLOWDOWN_TAU`, filled in when printing so
#: that the command line does not import NumPy before it has parsed its arguments).
SUMMARY: tuple[tuple[str, str], ...] = (
    ("nb_jobs", "jobs"), ("nb_completed", "jobs"), ("nb_killed", "jobs"), ("nb_rejected", "jobs"),
    ("makespan", "s"), ("mean_waiting_time", "s"), ("mean_turnaround_time", "s"),
    ("mean_slowdown", "(turnaround / run time)"), ("mean_bounded_slowdown", "(tau = {tau:g} s)"),
    ("utilization", "(busy core time / available, 0-1)"), ("energy", "J"))
#: Metrics a GPU run (an options file with a ``gpu`` block) prints after :data:`SUMMARY`, with their units.
GPU_SUMMARY: tuple[tuple[str, str], ...] = (
    ("jct_mean", "s"), ("jct_median", "s"), ("jct_p95", "s"), ("jct_p99", "s"), ("queueing_delay_mean", "s"),
    ("gpu_allocation_rate", "(allocated GPU share / GPUs, 0-1)"),
    ("gpu_fragmented_share", "(ATC'23 fragmented share / GPUs, 0-1)"), ("gpu_occupancy", "(busy GPUs / GPUs, 0-1)"))
#: What ``utilization`` measures in a GPU run (its summary line's unit instead of :data:`SUMMARY`'s).
GPU_UTILIZATION = "(allocated GPU time / available, 0-1)"


def _positive_int(text: str) -> int:
    """An argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be an integer >= 1, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``hdeeprm-launch``."""
    p = argparse.ArgumentParser(
        prog="hdeeprm-launch", epilog=EPILOG,
        description="Simulate a workload on a heterogeneous platform with a classic policy pair or a "
                    "learning agent; writes Batsim-format outputs and metrics to OUTDIR.")
    p.add_argument("agent_file", nargs="?", metavar="agent.py", help="the agent file (as -a)")
    p.add_argument("options", metavar="options.json", help="the options file (JSON), exactly one")
    p.add_argument("-a", "--agent", metavar="agent.py",
                   help="agent file: its first class subclassing hdeeprm.agents.base.Agent decides")
    p.add_argument("-cw", "--custom-workload", metavar="workload.json",
                   help="Batsim JSON workload to use instead of the options' trace")
    p.add_argument("-im", "--inmodel", metavar="in.pt", help="checkpoint to load the learning agent from")
    p.add_argument("-om", "--outmodel", metavar="out.pt",
                   help="checkpoint to save the learning agent to (written atomically at the end, on Ctrl-C and "
                        "with --checkpoint-every; e.g. OUTDIR/model.pt)")
    p.add_argument("--checkpoint-every", type=_positive_int, metavar="N",
                   help="also save -om every N episodes")
    p.add_argument("-nr", "--nb-runs", type=int, default=1, metavar="N",
                   help="episodes to run in this process (default 1)")
    add_run_arguments(p, DEFAULT_OUTDIR, quiet="no progress bar, no summary",
                      outdir="; the outputs of a previous run in it are removed first")
    add_library_arguments(p)
    p.add_argument("--simulator", choices=("embedded", "batsim"), default="embedded",
                   help="embedded engine (default) or a real Batsim binary through PyBatsim")
    p.add_argument("--batsim", default="batsim", metavar="PATH",
                   help="path of the batsim binary (with --simulator batsim)")
    add_verbosity_arguments(p)
    return p


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse the command line; the agent may come first or with ``-a``."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.agent_file is not None:
        if args.agent_file.lower().endswith(".json"):
            parser.error(f"expected [agent.py] options.json (one options file), got two JSON files: "
                         f"{args.agent_file} {args.options}")
        if args.agent:
            parser.error("the agent file is given twice (positional and -a)")
        args.agent = args.agent_file
    if args.nb_runs < 1:
        parser.error(f"-nr must be >= 1, got {args.nb_runs}")
    if args.checkpoint_every is not None and not args.outmodel:
        parser.error("--checkpoint-every needs -om out.pt")
    return args


@command("hdeeprm-launch")
def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad input, 3 agent failure, 130 interrupted)."""
    args = parse_args(argv)
    return guarded("hdeeprm-launch", lambda: _run(args), level=log_level(args))


def _run(args: argparse.Namespace) -> int:
    from hdeeprm.run.launch import launch

    result = launch(args.options, agent_path=args.agent, custom_workload=args.custom_workload,
                    inmodel=args.inmodel, outmodel=args.outmodel, nb_runs=args.nb_runs,
                    outdir=args.outdir, quiet=args.quiet, simulator=args.simulator, batsim=args.batsim,
                    checkpoint_every=args.checkpoint_every, libraries=args.library,
                    gpu_libraries=args.gpu_library)
    if not args.quiet:
        print(f"outputs in {result.outdir}")
        print(format_summary(result.metrics[-1], undefined_in(result.outdir)))
    return 0


def undefined_in(outdir) -> dict[str, str]:
    """Why ``OUTDIR/out_metrics.json`` has no value for some figures (its ``"undefined"`` key; {} when none)."""
    import json

    try:
        return json.loads((Path(outdir) / "out_metrics.json").read_text(encoding="utf-8")).get("undefined") or {}
    except (OSError, ValueError, AttributeError):
        return {}


def format_summary(metrics: dict, undefined: dict[str, str] | None = None) -> str:
    """The summary printed after a run: one ``key  value unit`` line per metric of :data:`SUMMARY`.

    A GPU run's metrics also get the lines of :data:`GPU_SUMMARY`; a run of CPU and GPU jobs the figures of
    each kind of job (:func:`hdeeprm.outputs.metrics.summarize_kinds`). A figure without a value (a slowdown
    when a job ran 0 s) reads ``undefined: REASON`` on its line.

    Args:
        metrics: An episode's metrics (:func:`hdeeprm.outputs.metrics.summarize`).
        undefined: Why figures have no value, by key (:func:`undefined_in`); default: the reasons of
            :func:`hdeeprm.outputs.metrics.undefined_reasons`.

    Returns:
        The lines, indented by two blanks, no trailing line break.
    """
    from hdeeprm.outputs.metrics import BOUNDED_SLOWDOWN_TAU, JOB_KINDS, KIND_METRICS, undefined_reasons

    units = dict(SUMMARY)
    kinds = [(f"{kind}_{key}", units[key]) for kind, _ in JOB_KINDS for key in KIND_METRICS]
    items = [*SUMMARY, *(item for item in (*GPU_SUMMARY, *kinds) if item[0] in metrics)]
    width = max(24, *(len(key) + 1 for key, _ in items))
    undefined = {**undefined_reasons(metrics), **(undefined or {})}
    lines = []
    gpu_run = "nb_gpus" in metrics
    for key, unit in items:
        if key == "utilization" and gpu_run:
            unit = GPU_UTILIZATION
        value = metrics[key]
        if key in undefined and isinstance(value, float) and not math.isfinite(value):
            lines.append(f"  {key:{width}s} undefined: {undefined[key]}")
            continue
        text = f"{value:.6g}" if isinstance(value, float) else f"{value}"
        lines.append(f"  {key:{width}s} {text} {unit.format(tau=BOUNDED_SLOWDOWN_TAU)}".rstrip())
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
