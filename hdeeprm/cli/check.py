"""``hdeeprm-check options.json [-cw workload.json]``: validate a run's inputs before a long run.

Loads the platform and the workload as ``hdeeprm-launch`` would, runs every check of
:mod:`hdeeprm.run.check` and prints ``ok``/``FAIL`` per check with its problems, then the
workload's conversion report. Exit code 0 when every check passes, 1 when one fails,
2 on unreadable input (message on stderr as ``hdeeprm-check: error: ...``).
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from hdeeprm.cli import command, guarded
from hdeeprm.cli.launch import OPTIONS_HELP

PROG = "hdeeprm-check"


def _check(args: argparse.Namespace) -> int:
    """Load the inputs, run the checks, print the outcome; 1 when a check fails, else 0."""
    from hdeeprm.config.build import build_platform, build_workload
    from hdeeprm.config.options import load_options
    from hdeeprm.run.check import run_checks
    from hdeeprm.workload.convert import format_report

    options = load_options(args.options)
    hierarchy = build_platform(options, args.library)
    workload = build_workload(options, hierarchy, args.custom_workload)
    failed = 0
    for name, problems in run_checks(hierarchy, workload).items():
        print(f"{'ok  ' if not problems else 'FAIL'} {name}")
        for problem in problems:
            print(f"     - {problem}")
        failed += bool(problems)
    if workload.report:
        print("workload report:")
        print(format_report(workload.report))
    return 1 if failed else 0


@command(PROG)
def main(argv: Sequence[str] | None = None) -> int:
    """Run ``hdeeprm-check``.

    Args:
        argv: Arguments without the program name (default ``sys.argv[1:]``).

    Returns:
        0 when every check passes, 1 when some fail, 2 on unreadable input or a usage
        error (message on stderr, no traceback).
    """
    parser = argparse.ArgumentParser(prog=PROG, description="Validate platform, workload and options.",
                                     epilog=OPTIONS_HELP + " Exit codes: 0 every check passes, 1 a check "
                                            "fails, 2 bad input, 130 interrupted.")
    parser.add_argument("options", help="options file of hdeeprm-launch")
    parser.add_argument("-cw", "--custom-workload", help="Batsim JSON workload instead of the options' trace")
    parser.add_argument("--library", action="append", default=[], metavar="types.json",
                        help="extra type library JSON for the platform (repeatable), as hdeeprm-launch --library")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return guarded(PROG, lambda: _check(args), failure_code=2)


if __name__ == "__main__":
    sys.exit(main())
