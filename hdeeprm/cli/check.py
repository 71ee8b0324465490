"""``hdeeprm-check options.json [-cw workload.json]``: validate a run's inputs before a long run."""
from __future__ import annotations

import argparse
import sys

from hdeeprm.errors import HDeepRMError


def main(argv: list[str] | None = None) -> int:
    """Entry point; exit code 0 when every check passes, 1 when some fail, 2 on unreadable input."""
    p = argparse.ArgumentParser(prog="hdeeprm-check", description="Validate platform, workload and options.")
    p.add_argument("options", help="options file of hdeeprm-launch")
    p.add_argument("-cw", "--custom-workload", help="Batsim JSON workload instead of the options' trace")
    args = p.parse_args(argv)
    try:
        from hdeeprm.run.check import run_checks
        from hdeeprm.config.build import build_platform, build_workload
        from hdeeprm.config.options import load_options

        options = load_options(args.options)
        hierarchy = build_platform(options)
        workload = build_workload(options, hierarchy, args.custom_workload)
    except HDeepRMError as exc:
        print(f"hdeeprm-check: error: {exc}", file=sys.stderr)
        return 2
    failed = 0
    for name, problems in run_checks(hierarchy, workload).items():
        print(f"{'ok  ' if not problems else 'FAIL'} {name}")
        for problem in problems:
            print(f"     - {problem}")
        failed += bool(problems)
    for reason, count in workload.report.items():
        print(f"     workload report: {reason}: {count}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
