"""``hdeeprm-evaluate``: compare policies (and trained agents) on windows of a real trace.

Usage::

    hdeeprm-evaluate [options.json] [-w TRACE] [-P PLATFORM] -p POLICY [POLICY ...]
                     [-n WINDOWS] [-l JOBS] [--test-fraction F] [--on test|train|all]
                     [-s START_STRATEGY] [--seed S] [-j PROCESSES] [-o OUTDIR] [-q]
                     [--train agent.py --train-episodes K [-im in.pt] [-om out.pt]]
    hdeeprm-evaluate --protocol rlscheduler -w TRACE -p all|KEY[,KEY][+backfilling] ...
                     [-n WINDOWS] [-l JOBS] [--seed S] [--first-jobs N | --window-starts I,J,...]

``POLICY`` is ``ordering-core_selection[+start_strategy]`` (comma lists give
every combination: ``first,shortest-high_gflops+head_of_line,easy_backfilling``)
or ``agent.py[:model.pt][+start_strategy]``. See :mod:`hdeeprm.run.evaluate`.
``--protocol rlscheduler`` replays RLScheduler's evaluation instead (its trace
reading, window draw, scheduler and heuristics; :mod:`hdeeprm.run.rlscheduler`).
"""
from __future__ import annotations

import argparse
import shlex
import sys

from hdeeprm.cli import add_run_arguments, command, guarded
from hdeeprm.cli.verbosity import add_verbosity_arguments, log_level

DEFAULT_OUTDIR = "hdeeprm-evaluation"
#: Evaluation protocols: HDeepRM's own (the default) and RLScheduler's.
PROTOCOLS: tuple[str, ...] = ("hdeeprm", "rlscheduler")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``hdeeprm-evaluate``."""
    from hdeeprm.run.evaluate import (DEFAULT_NB_WINDOWS, DEFAULT_SPLIT, DEFAULT_TEST_FRACTION,
                                      DEFAULT_WINDOW_LENGTH, SPLITS)

    p = argparse.ArgumentParser(
        prog="hdeeprm-evaluate",
        description="Compare scheduling policies and trained agents on windows of an SWF trace, each replayed on "
                    "an empty cluster; prints mean bounded slowdown, waiting time, turnaround, utilization, "
                    "makespan and energy per policy (mean ± std over the windows) and writes summary.csv, "
                    "windows.csv and bounded_slowdown.png to OUTDIR.")
    p.add_argument("options", nargs="?",
                   help="options file (trace, platform, seed, conversion and agent settings); optional with -w and -P")
    p.add_argument("-w", "--workload", help="SWF trace (.swf, .swf.gz, or a registry name: pwa:SDSC-SP2-1998-4.2-cln), "
                   "replacing the options' workload_file_path")
    p.add_argument("-P", "--platform", help="HDeepRM platform JSON, replacing the options' platform_file_path")
    p.add_argument("-p", "--policies", nargs="+", default=[], metavar="POLICY",
                   help="'ordering-core_selection[+start_strategy]' (comma lists allowed in each part) or "
                        "'agent.py[:model.pt][+start_strategy]'")
    p.add_argument("-n", "--windows", type=int, default=DEFAULT_NB_WINDOWS,
                   help=f"windows drawn from the trace (default {DEFAULT_NB_WINDOWS})")
    p.add_argument("-l", "--length", type=int, default=DEFAULT_WINDOW_LENGTH,
                   help=f"consecutive jobs per window (default {DEFAULT_WINDOW_LENGTH})")
    p.add_argument("--test-fraction", type=float, default=DEFAULT_TEST_FRACTION,
                   help=f"share of the windows kept for testing (default {DEFAULT_TEST_FRACTION})")
    p.add_argument("--on", choices=SPLITS, default=DEFAULT_SPLIT,
                   help=f"windows the policies are compared on (default {DEFAULT_SPLIT})")
    p.add_argument("-s", "--start-strategy", metavar="NAME",
                   help="start strategy of policies without '+strategy' and of the training (default: the options')")
    p.add_argument("--seed", type=int, help="seed of the windows, the split and the runs (default: the options')")
    add_run_arguments(p, DEFAULT_OUTDIR, quiet="no progress bars", jobs="processes to run the windows on")
    p.add_argument("--train", metavar="AGENT_PY", help="train this agent on the training windows first, "
                                                      "then compare it with the policies")
    p.add_argument("--train-episodes", type=int, default=0, help="training episodes, one window each (with --train)")
    p.add_argument("-im", "--inmodel", help="checkpoint the training starts from (with --train)")
    p.add_argument("-om", "--outmodel", help="checkpoint the training writes (default OUTDIR/model.pt)")
    p.add_argument("--protocol", choices=PROTOCOLS, default=PROTOCOLS[0],
                   help="hdeeprm (default): HDeepRM's conversion, disjoint windows and engine; rlscheduler: "
                        "RLScheduler's (SC'20) trace reading, window draw, scheduler and heuristics, to compare "
                        "with its published table (policies: all, or rls_fcfs, rls_wfp3, rls_unicep, rls_sjf, "
                        "rls_f1, comma lists, optional +backfilling; -n, -l and --seed default to 10, 1024, 1)")
    p.add_argument("--first-jobs", type=int, default=0, metavar="N",
                   help="rlscheduler protocol: draw windows from the first N kept jobs (their batch_job_slice; "
                        "0 = all; their table uses 10000 for SDSC-SP2)")
    p.add_argument("--window-starts", metavar="I,J,...",
                   help="rlscheduler protocol: explicit window starts (0-based kept-job indices) instead of the draw")
    add_verbosity_arguments(p)
    return p


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Parse and cross-check the command line."""
    parser = build_parser()
    args = parser.parse_args(argv)
    refuse_trace_as_options(parser, args, sys.argv[1:] if argv is None else list(argv))
    if args.protocol == "rlscheduler":
        _check_rlscheduler(parser, args)
        return args
    if args.first_jobs or args.window_starts:
        parser.error("--first-jobs and --window-starts go with --protocol rlscheduler")
    if not args.options and not (args.workload and args.platform):
        parser.error("give an options file, or both -w TRACE and -P PLATFORM")
    if not args.policies and not args.train:
        parser.error("give the policies to compare with -p (e.g. -p first-high_gflops+easy_backfilling) or --train")
    if args.train and args.train_episodes < 1:
        parser.error("--train needs --train-episodes >= 1")
    if (args.inmodel or args.outmodel or args.train_episodes) and not args.train:
        parser.error("-im, -om and --train-episodes go with --train agent.py")
    if args.jobs < 1:
        parser.error(f"-j must be >= 1, got {args.jobs}")
    return args


def refuse_trace_as_options(parser: argparse.ArgumentParser, args: argparse.Namespace, argv: list[str]) -> None:
    """Refuse a trace given where the options file goes, in one line showing the command with ``-w TRACE``.

    Args:
        parser: The command's parser (its ``exit``).
        args: The parsed command line.
        argv: The command line as given (without the program name), rewritten for the message.

    Raises:
        SystemExit: Code 2, after ``hdeeprm-evaluate: error: TRACE is a trace, not an options file (JSON): pass it
            with -w: hdeeprm-evaluate -w TRACE ...`` (``-P PLATFORM.json`` added when no platform is given;
            with ``-w`` given too: give an options file or drop TRACE).
    """
    from hdeeprm.config.options import TRACE_SUFFIXES

    trace = args.options
    if not trace or not trace.lower().endswith(TRACE_SUFFIXES):
        return
    what = f"{parser.prog}: error: {trace} is a trace, not an options file (JSON)"
    if args.workload:
        parser.exit(2, f"{what}, and -w {args.workload} gives the trace already: give an options file in its "
                       "place or drop it\n")
    at = argv.index(trace)
    fixed = [*argv[:at], "-w", trace, *argv[at + 1:]]
    if not args.platform and args.protocol != "rlscheduler":
        fixed += ["-P", "PLATFORM.json"]   # without options, -P names the platform (RLScheduler's is the trace's)
    parser.exit(2, f"{what}: pass it with -w: {shlex.join([parser.prog, *fixed])}\n")


def _check_rlscheduler(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Cross-check the options of ``--protocol rlscheduler``."""
    if not args.workload and not args.options:
        parser.error("--protocol rlscheduler needs the trace: -w TRACE (or an options file naming it)")
    if not args.policies:
        parser.error("give RLScheduler heuristics with -p (e.g. -p all, or -p rls_f1 rls_f1+backfilling)")
    from hdeeprm.run.evaluate import DEFAULT_SPLIT, DEFAULT_TEST_FRACTION

    if (args.train or args.platform or args.start_strategy or args.inmodel or args.outmodel or args.train_episodes
            or args.on != DEFAULT_SPLIT or args.test_fraction != DEFAULT_TEST_FRACTION or args.jobs != 1):
        parser.error("-P, -s, --on, --test-fraction, -j and the training options go with the hdeeprm protocol "
                     "(RLScheduler's machine is the trace's MaxNodes header, its scheduler commits to the head, "
                     "it has no train/test split)")
    if args.first_jobs < 0:
        parser.error(f"--first-jobs must be >= 0, got {args.first_jobs}")
    if args.window_starts:
        try:
            args.window_starts = [int(x) for x in args.window_starts.split(",")]
        except ValueError:
            parser.error(f"--window-starts must be comma-separated integers, got '{args.window_starts}'")
        if args.first_jobs:
            parser.error("give --first-jobs or --window-starts, not both")


def _options(args: argparse.Namespace):
    """The base options: the file's (or the defaults), with -w, -P and --seed applied."""
    from pathlib import Path

    from hdeeprm.config.options import Options, load_options
    from hdeeprm.workload.datasets import resolve_path

    options = load_options(args.options) if args.options else Options(source="<command line>")
    changes = {}
    if args.workload:
        changes["workload_file_path"] = resolve_path(args.workload)   # a path, or a registry name's file
    if args.platform:
        changes["platform_file_path"] = str(Path(args.platform).resolve())
        if args.options and "nb_resources" in options.given:
            changes["nb_resources"] = None   # checked against the options' platform, not this one
    if args.seed is not None:
        changes["seed"] = args.seed
    if args.start_strategy:
        from hdeeprm.decision.strategies import START_STRATEGIES

        changes["start_strategy"] = START_STRATEGIES.check(args.start_strategy)
    return options.replace(**changes) if changes else options


@command("hdeeprm-evaluate")
def main(argv: list[str] | None = None) -> int:
    """Entry point; returns the exit code (0 ok, 2 bad input)."""
    args = parse_args(argv)
    return guarded("hdeeprm-evaluate", lambda: _run(args), level=log_level(args))


def _run_rlscheduler(args: argparse.Namespace) -> int:
    from hdeeprm.run.rlscheduler import RLS_SEED, format_rls_table, run_rlscheduler_evaluation
    from hdeeprm.workload.datasets import resolve_path

    if args.workload:
        trace = resolve_path(args.workload)
    else:
        from hdeeprm.config.options import load_options

        trace = load_options(args.options).workload_file_path
    result = run_rlscheduler_evaluation(trace, args.policies, nb_windows=args.windows, length=args.length,
                                        seed=RLS_SEED if args.seed is None else args.seed,
                                        first_jobs=args.first_jobs, starts=args.window_starts, outdir=args.outdir)
    print(f"RLScheduler protocol: {len(result.starts)} windows of {result.length} jobs of {trace} "
          f"(starts {', '.join(map(str, result.starts))}); mean over the windows")
    print(format_rls_table(result.summary))
    print(f"outputs in {args.outdir}")
    return 0


def _run(args: argparse.Namespace) -> int:
    if args.protocol == "rlscheduler":
        return _run_rlscheduler(args)
    from hdeeprm.outputs.evaluation import format_table
    from hdeeprm.run.evaluate import describe_windows, run_evaluation

    result = run_evaluation(_options(args), args.policies, nb_windows=args.windows, length=args.length,
                            test_fraction=args.test_fraction, split=args.on, jobs=args.jobs, outdir=args.outdir,
                            train=args.train, train_episodes=args.train_episodes, inmodel=args.inmodel,
                            outmodel=args.outmodel, quiet=args.quiet)
    windows = result.plan.selected(args.on)
    print(f"{describe_windows(windows, args.on, args.length)} (first jobs "
          f"{', '.join(str(w.first_job) for w in windows)}), seed {result.plan.options.seed}; "
          f"mean ± std over the windows")
    print(format_table(result.summary))
    best = min(result.summary, key=lambda s: s["mean_bounded_slowdown_mean"])
    print(f"lowest mean bounded slowdown: {best['policy']} ({best['mean_bounded_slowdown_mean']:.4g})")
    print(f"outputs in {result.outdir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
