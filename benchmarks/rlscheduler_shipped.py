"""RLScheduler's shipped trained policies on their 10 test windows, in the project's kernel and environment.

Usage (from the repository root)::

    python benchmarks/rlscheduler_shipped.py              # SDSC-SP2 and Lublin-1, without and with backfilling
    python benchmarks/rlscheduler_shipped.py --samples 5  # the sampled test (their rule) with 5 seeds

Loads each bounded-slowdown model of ``$HDEEPRM_SHARED/reference/rlscheduler-models/`` into
:class:`~hdeeprm.agents.kernel_ppo.RaggedKernel` (:func:`~hdeeprm.agents.kernel_ppo.load_rlscheduler_model`) and
runs it on ``hdeeprm/RLScheduler-v0`` over their 10 windows of 1,024 jobs (seed 1; SDSC-SP2 from its first 10,000
jobs): the largest score (argmax), whose per-window values the models' README lists from their own ``HPCEnv``
(``tests/agents/test_rlscheduler_shipped_models.py`` checks them all), and sampled as their
``compare-make-table.py`` samples (``tf.multinomial``), with generators seeded 0 .. ``--samples`` - 1, beside the
figure their README table publishes for the same model (466.44 / 397.82 for SDSC-SP2, 254.67 / 58.64 for Lublin-1).
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("HDEEPRM_SHARED", ROOT.parent / "shared"))
#: Trace label -> (model file, trace file, their --batch_job_slice, published RL figure without / with backfilling).
MODELS = {"SDSC-SP2": ("bsld-sdsc_sp2.npz", "SDSC-SP2-1998-4.2-cln.swf.gz", 10_000, (466.44, 397.82)),
          "Lublin-1": ("bsld-lublin256.npz", "lublin_256.swf", 0, (254.67, 58.64))}


def main(argv: list[str] | None = None) -> int:
    """Print argmax and sampled mean bounded slowdowns of each shipped model."""
    from hdeeprm.agents.kernel_ppo import load_rlscheduler_model, ragged_numpy, window_bounded_slowdowns
    from hdeeprm.env.rlscheduler import RLSchedulerEnv
    from hdeeprm.workload.rlscheduler import read_rlscheduler_swf, sample_starts

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=3, help="seeds of the sampled test (default 3)")
    args = p.parse_args(argv)
    print(f"{'model':10s} {'backfilling':12s} {'argmax':>9s} {'sampled mean +- sd':>20s} {'published':>10s}")
    for label, (model, trace_name, first_jobs, published) in MODELS.items():
        trace = read_rlscheduler_swf(SHARED / "traces" / trace_name)
        starts = sample_starts(len(trace), 1024, 10, 1, first_jobs)
        scores, _ = ragged_numpy(load_rlscheduler_model(SHARED / "reference" / "rlscheduler-models" / model))
        for backfilling in (False, True):
            env = RLSchedulerEnv(trace, length=1024, backfilling=backfilling, starts=starts)
            argmax = np.mean(window_bounded_slowdowns(env, scores, starts))
            sampled = [np.mean(window_bounded_slowdowns(env, scores, starts, np.random.default_rng(seed)))
                       for seed in range(args.samples)]
            print(f"{label:10s} {'with' if backfilling else 'without':12s} {argmax:9.2f} "
                  f"{np.mean(sampled):11.2f} +- {np.std(sampled):6.2f} {published[backfilling]:10.2f}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
