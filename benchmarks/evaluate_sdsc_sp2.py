"""The SDSC-SP2 comparison: classic orderings with and without EASY, and a REINFORCE agent.

Usage (from the repository root)::

    python benchmarks/evaluate_sdsc_sp2.py [-o runs/evidence] [-j 2] [--episodes 300]
                                           [--platforms sdsc_sp2_128 sdsc_sp2_gaia]

For each platform options file of ``examples/evaluation/`` (SDSC-SP2 from the
Parallel Workloads Archive, read from ``$HDEEPRM_SHARED/traces``; the 128-core
``platforms/sdsc_sp2.json`` and UniLu Gaia), it prints and runs two
``hdeeprm-evaluate`` commands on 10 windows of 1,024 jobs (seed 1998):

1. the baselines on all 10 windows: FCFS (``first``), SJF (``shortest``), F1,
   WFP3 and UNICEP, each with head-of-line starts and with EASY backfilling,
   core selection ``high_gflops`` (only the orderings and strategies registered
   in this checkout: the script says which are missing);
2. ``examples/agents/reinforce.py`` (choosing among the options file's orderings)
   trained for ``--episodes`` episodes on the 5 training windows, with EASY
   backfilling when it is registered (``-s``), compared with the same baselines on
   the 5 test windows.

Paths are the repository's: the script runs from the repository root, and
``-o`` is relative to it.

Each command's table is printed after it. The figures are the project's
evidence, not a test: nothing is asserted.
"""
from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The examples name the public traces as $HDEEPRM_SHARED/traces/... (default: ../shared).
os.environ.setdefault("HDEEPRM_SHARED", str(ROOT.parent / "shared"))
#: The orderings of the comparison: FCFS, SJF, F1 (Carastan-Santos and de Camargo, SC'17),
#: WFP3 and UNICEP (Tang et al., 2009).
ORDERINGS = ("first", "shortest", "f1", "wfp3", "unicep")
STRATEGIES = ("head_of_line", "easy_backfilling")
CORE = "high_gflops"
AGENT = "examples/agents/reinforce.py"


def policies() -> tuple[list[str], str]:
    """The policy specs this checkout can run (reports what it cannot) and the agent's start strategy."""
    from hdeeprm.decision.orderings import JOB_ORDERINGS
    from hdeeprm.decision.strategies import START_STRATEGIES

    orderings = [o for o in ORDERINGS if o in JOB_ORDERINGS]
    strategies = [s for s in STRATEGIES if s in START_STRATEGIES]
    missing = [n for n in ORDERINGS if n not in orderings] + [s for s in STRATEGIES if s not in strategies]
    if missing:
        print(f"# not registered in this checkout, left out: {', '.join(missing)}")
    return [f"{','.join(orderings)}-{CORE}+{','.join(strategies)}"], strategies[-1]


def run(argv: list[str]) -> None:
    """Print the command, then run it (its table is printed by the command)."""
    from hdeeprm.cli.evaluate import main

    print(f"\n$ hdeeprm-evaluate {shlex.join(argv)}", flush=True)
    code = main(argv)
    if code:
        sys.exit(code)


def main(argv: list[str] | None = None) -> int:
    """Run the comparisons."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("-o", "--outdir", default="runs/evidence", help="output folder (default runs/evidence)")
    p.add_argument("-j", "--jobs", type=int, default=1, help="processes of the comparisons (default 1)")
    p.add_argument("--episodes", type=int, default=300, help="training episodes of the agent (default 300)")
    p.add_argument("--platforms", nargs="+", default=["sdsc_sp2_128", "sdsc_sp2_gaia"],
                   help="options files of examples/evaluation/ (default: sdsc_sp2_128 sdsc_sp2_gaia)")
    args = p.parse_args(argv)
    os.chdir(ROOT)
    specs, agent_strategy = policies()
    common = ["-n", "10", "-l", "1024", "-j", str(args.jobs), "-q"]
    for name in args.platforms:
        options = f"examples/evaluation/{name}.json"
        run([options, "-p", *specs, "--on", "all", *common, "-o", f"{args.outdir}/{name}-baselines"])
        run([options, "-p", *specs, "--train", AGENT, "--train-episodes", str(args.episodes), "-s", agent_strategy,
             *common, "-o", f"{args.outdir}/{name}-agent"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
