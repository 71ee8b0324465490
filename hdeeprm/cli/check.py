"""``hdeeprm-check options.json [-cw workload.json]`` or ``hdeeprm-check OUTDIR``: check before (or after) a run.

Given an options file, loads the platform and the workload as ``hdeeprm-launch`` would, runs
every check of :mod:`hdeeprm.run.check` (the GPU checks for options with a ``gpu`` block) and
prints ``ok``/``FAIL`` per check with its problems, then the workload's conversion report.
Given a run's output folder, says what became of the run that wrote it (finished, failed,
interrupted, running, or died without saying so: ``kill -9``, out of memory). Exit code 0
when every check passes (a finished or running run), 1 when one fails (a run that did not
finish), 2 on unreadable input (message on stderr as ``hdeeprm-check: error: ...``).
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from hdeeprm.cli import add_library_arguments, command, guarded
from hdeeprm.cli.launch import OPTIONS_HELP
from hdeeprm.cli.verbosity import add_verbosity_arguments, log_level

PROG = "hdeeprm-check"


def _print_checks(results: dict[str, list[str]]) -> int:
    """Print ``ok``/``FAIL`` per check and its problems; return the number of failed checks."""
    failed = 0
    for name, problems in results.items():
        print(f"{'ok  ' if not problems else 'FAIL'} {name}")
        for problem in problems:
            print(f"     - {problem}")
        failed += bool(problems)
    return failed


def _check_run(outdir: Path) -> int:
    """Say what became of the run of ``outdir``; 0 when it finished or still runs, else 1."""
    from hdeeprm.errors import InputError
    from hdeeprm.run.lifecycle import ALIVE, FINISHED, previous_run

    state = previous_run(outdir)
    if state is None:
        raise InputError("not a run folder (no readable run.json): give an options file or a run's output folder",
                         path=str(outdir))
    text = state["text"].replace("the previous run", "the run", 1)
    print(f"{'ok  ' if state['state'] in (FINISHED, ALIVE) else 'FAIL'} {outdir}: {text}")
    return 0 if state["state"] in (FINISHED, ALIVE) else 1


def _check(args: argparse.Namespace) -> int:
    """Load the inputs, run the checks, print the outcome; 1 when a check fails, else 0."""
    from hdeeprm.config.options import load_options
    from hdeeprm.errors import OptionsError
    from hdeeprm.run.check import check_inputs

    if Path(args.options).is_dir():
        if args.custom_workload or args.library or args.gpu_library:
            raise OptionsError("a run folder is checked alone: drop -cw, --library and --gpu-library")
        return _check_run(Path(args.options))
    options = load_options(args.options)
    results, report = check_inputs(options, args.custom_workload, args.library, args.gpu_library)
    failed = _print_checks(results)
    if report:
        print(f"workload report: {report}" if options.gpu is not None else f"workload report:\n{report}")
    return 1 if failed else 0


@command(PROG)
def main(argv: Sequence[str] | None = None) -> int:
    """Run ``hdeeprm-check``.

    Args:
        argv: Arguments without the program name (default ``sys.argv[1:]``).

    Returns:
        0 when every check passes, 1 when some fail, 2 on unreadable input or a usage
        error (message on stderr, no traceback), 130 when interrupted.
    """
    parser = argparse.ArgumentParser(prog=PROG, description="Validate platform, workload and options (CPU or GPU "
                                     "runs), or say what became of the run of an output folder.",
                                     epilog=OPTIONS_HELP + " Exit codes: 0 every check passes, 1 a check "
                                            "fails (or the run did not finish), 2 bad input, 130 interrupted.")
    parser.add_argument("options", help="options file of hdeeprm-launch, or a run's output folder")
    parser.add_argument("-cw", "--custom-workload", help="Batsim JSON workload instead of the options' trace")
    add_library_arguments(parser)
    add_verbosity_arguments(parser)
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return guarded(PROG, lambda: _check(args), failure_code=2, level=log_level(args))


if __name__ == "__main__":
    sys.exit(main())
