"""RLScheduler's shipped trained policies on their 10 test windows, in the project's kernel and environment.

Usage (from the repository root)::

    python benchmarks/rlscheduler_shipped.py              # SDSC-SP2 and Lublin-1, without and with backfilling
    python benchmarks/rlscheduler_shipped.py --samples 10 # the sampled test (their rule) with 10 seeds
    python benchmarks/rlscheduler_shipped.py --samples 0  # argmax only (about 5 s)

Loads each bounded-slowdown model of ``$HDEEPRM_SHARED/reference/rlscheduler-models/`` into
:class:`~hdeeprm.agents.kernel_ppo.RaggedKernel` (:func:`~hdeeprm.agents.kernel_ppo.load_rlscheduler_model`) and
runs it on ``hdeeprm/RLScheduler-v0`` over their 10 windows of 1,024 jobs (seed 1; SDSC-SP2 from its first 10,000
jobs; :func:`~hdeeprm.workload.rlscheduler.sample_starts` with :mod:`hdeeprm.run.rlscheduler`'s constants), with
:func:`~hdeeprm.agents.kernel_ppo.window_bounded_slowdowns`:

* **argmax** (the largest score): the mean bounded slowdown of each window (0.1) and their mean (0.01), beside the
  values the models' README lists from their own unchanged ``HPCEnv``, and whether each is the same once rounded
  (``tests/agents/test_rlscheduler_shipped_models.py`` asserts them all);
* **sampled** as their ``compare-make-table.py`` samples (``tf.multinomial``), with generators seeded
  0 .. ``--samples`` - 1: mean and standard deviation over the seeds of the 10-window mean, beside the figure their
  README table publishes for the same model (466.44 / 397.82 for SDSC-SP2, 254.67 / 58.64 for Lublin-1).

Exit status 0 when every argmax figure is the README's, 1 otherwise.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("HDEEPRM_SHARED", ROOT.parent / "shared"))
MODELS_DIR = SHARED / "reference" / "rlscheduler-models"
#: Trace label -> (model file, trace file, their --batch_job_slice, published RL figure without / with backfilling).
MODELS = {"SDSC-SP2": ("bsld-sdsc_sp2.npz", "SDSC-SP2-1998-4.2-cln.swf.gz", 10_000, (466.44, 397.82)),
          "Lublin-1": ("bsld-lublin256.npz", "lublin_256.swf", 0, (254.67, 58.64))}


def their_argmax_figures(folder: Path) -> dict[tuple[str, bool], tuple[float, list[float]]]:
    """``{(trace label, backfilling): (mean, per-window values)}`` as the models' README lists them ({} without it)."""
    readme = folder / "README.md"
    if not readme.is_file():
        return {}
    rows = re.findall(r"^- (\S+), (no backfilling|backfilling): ([\d.]+) \(([^)]*)\)",
                      readme.read_text(encoding="utf-8"), flags=re.M)
    return {(label, kind == "backfilling"): (float(mean), [float(v) for v in values.split(",")])
            for label, kind, mean, values in rows}


def main(argv: list[str] | None = None) -> int:
    """Print argmax (per window, beside their env's) and sampled mean bounded slowdowns of each shipped model."""
    from hdeeprm.agents.kernel_ppo import load_rlscheduler_model, ragged_numpy, window_bounded_slowdowns
    from hdeeprm.env.rlscheduler import RLSchedulerEnv
    from hdeeprm.run.rlscheduler import RLS_NB_WINDOWS, RLS_SEED, RLS_WINDOW_LENGTH
    from hdeeprm.workload.rlscheduler import read_rlscheduler_swf, sample_starts

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--samples", type=int, default=3, help="seeds of the sampled test (default 3; 0: argmax only)")
    args = p.parse_args(argv)
    theirs = their_argmax_figures(MODELS_DIR)
    same_everywhere = True
    summary = []
    for label, (model, trace_name, first_jobs, published) in MODELS.items():
        trace = read_rlscheduler_swf(SHARED / "traces" / trace_name)
        starts = sample_starts(len(trace), RLS_WINDOW_LENGTH, RLS_NB_WINDOWS, RLS_SEED, first_jobs)
        scores, _ = ragged_numpy(load_rlscheduler_model(MODELS_DIR / model))
        for backfilling in (False, True):
            variant = "with backfilling" if backfilling else "without backfilling"
            env = RLSchedulerEnv(trace, length=RLS_WINDOW_LENGTH, backfilling=backfilling, starts=starts)
            values = window_bounded_slowdowns(env, scores, starts)
            mean = float(np.mean(values))
            print(f"{label} {variant}, {model}, windows starting at {', '.join(map(str, starts))}")
            print(f"  argmax, ours:          {mean:8.2f}  ({', '.join(f'{v:.1f}' for v in values)})")
            if (label, backfilling) in theirs:
                their_mean, their_values = theirs[label, backfilling]
                same = round(mean, 2) == their_mean and [round(v, 1) for v in values] == their_values
                same_everywhere &= same
                print(f"  argmax, their HPCEnv:  {their_mean:8.2f}  ({', '.join(f'{v:.1f}' for v in their_values)})"
                      f"  {'same' if same else 'DIFFERENT'}")
            sampled = [float(np.mean(window_bounded_slowdowns(env, scores, starts, np.random.default_rng(seed))))
                       for seed in range(args.samples)]
            if sampled:
                print(f"  sampled (seeds 0-{args.samples - 1}): {np.mean(sampled):8.2f} +- {np.std(sampled):.2f}"
                      f"  (their README table: {published[backfilling]:.2f})")
            summary.append((label, variant, mean, sampled, published[backfilling]))
    print(f"\n{'model':10s} {'backfilling':12s} {'argmax':>9s} {'sampled mean +- sd':>20s} {'published':>10s}")
    for label, variant, mean, sampled, published in summary:
        spread = f"{np.mean(sampled):11.2f} +- {np.std(sampled):6.2f}" if sampled else f"{'-':>20s}"
        print(f"{label:10s} {variant.split()[0]:12s} {mean:9.2f} {spread} {published:10.2f}")
    return 0 if same_everywhere else 1


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
