"""Held-out evidence in HDeepRM's protocol: a linear policy-pair agent searched by the cross-entropy method.

One command per seed (CPU)::

    python benchmarks/heldout_cem.py --trace sdsc_sp2 --seed 0 --cpu-minutes 25 -o runs/heldout_cem/sdsc_sp2_s0
    python benchmarks/heldout_ppo.py --aggregate runs/heldout_cem/sdsc_sp2_s0 runs/heldout_cem/sdsc_sp2_s1 ...

The protocol, fixed before any reported run, is ``benchmarks/heldout_ppo.py``'s (the same options, the same 15
training and 10 test windows of 1,024 jobs drawn with the options' seed, the same heuristics: every job ordering
x head of line, EASY and conservative backfilling, ``high_gflops``; the same budget rule: ``--cpu-minutes`` of
process CPU time for everything before the test, the training windows' heuristics included; the same test and
gain), with another agent:

* **Agent**: ``examples/agents/linear_cem.py`` (:class:`~hdeeprm.agents.evolution.LinearPolicyAgent`), in
  HDeepRM's own action space: at every decision it picks one of ``--pairs`` policy pairs, the orderings (with
  ``high_gflops``) of lowest mean bounded slowdown on the training windows under the start strategy of the best
  heuristic there, the best first (so the untrained agent is that heuristic), and acts under that start
  strategy. Its observation is ``generations`` (busy cores, work left, free memory and bandwidth of each
  processor generation, then the 21 queue values).
* **Search**: :func:`hdeeprm.run.evolve.train_cem`, population 16, elite 4, the weights judged by their mean
  bounded slowdown on the 15 training windows; the best weights there are kept (selection on training windows
  only) and run once, greedily, on the test windows.

Outputs (``-o``): ``heuristics_train.csv``, ``training.csv`` (one row per generation), ``test.csv``, ``model.pt``
and ``run.json`` in ``heldout_ppo.py``'s format, so that ``heldout_ppo.py --aggregate`` reads them.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from heldout_ppo import (CORE, LENGTH, METRIC, NB_WINDOWS, ROOT, TEST_FRACTION, TRACES, seed_arguments,  # noqa: E402
                         table, test_table, write_csv)

from hdeeprm.config.options import load_options  # noqa: E402
from hdeeprm.decision.actions import action_index  # noqa: E402
from hdeeprm.run.evaluate import evaluate, plan  # noqa: E402
from hdeeprm.run.evolve import train_cem  # noqa: E402
from hdeeprm.run.policies import Policy, parse_policy_list  # noqa: E402

AGENT = ROOT / "examples" / "agents" / "linear_cem.py"


def train_and_test(args) -> int:
    """Search for ``--cpu-minutes`` (the heuristics' table included), test once; print and write the results."""
    out = Path(args.outdir)
    out.mkdir(parents=True, exist_ok=True)
    cpu0, wall0 = time.process_time(), time.time()
    options = load_options(TRACES[args.trace])
    the_plan = plan(options, nb_windows=NB_WINDOWS, length=LENGTH, test_fraction=TEST_FRACTION)
    train, test = the_plan.selected("train"), the_plan.selected("test")
    heuristics = table(options, train)
    best_train = min(heuristics, key=lambda k: np.mean(heuristics[k]))
    strategy = parse_policy_list([best_train])[0].strategy
    same = [label for label in heuristics if parse_policy_list([label])[0].strategy == strategy]
    pairs = sorted(same, key=lambda k: np.mean(heuristics[k]))[:args.pairs]
    write_csv(out / "heuristics_train.csv",
              [{"policy": k, METRIC: float(np.mean(v)), **{f"window_{w.index}": x for w, x in zip(train, v)}}
               for k, v in sorted(heuristics.items(), key=lambda kv: np.mean(kv[1]))])
    print(f"{args.trace}: {len(train)} training, {len(test)} test windows of {LENGTH} jobs; best heuristic on the "
          f"training windows {best_train} ({np.mean(heuristics[best_train]):.2f}); the agent picks among "
          f"{', '.join(p.split('+')[0] for p in pairs)} under {strategy}", flush=True)
    policies = parse_policy_list(pairs)
    agent_options = options.replace(seed=args.seed, start_strategy=strategy, observation="generations",
                                    actions=[action_index(p.job, p.core) for p in policies])
    left = args.cpu_minutes - (time.process_time() - cpu0) / 60
    model = out / "model.pt"
    history = train_cem(agent_options, str(AGENT), the_plan.windows, outmodel=model, trace=the_plan.trace,
                        population=16, elite=4, generations=10_000, cpu_minutes=max(left, 0.0),
                        on_generation=lambda r: print(f"generation {r['generation']:3d}  best {r['best']:8.2f}  "
                                                      f"best so far {r['best_so_far']:8.2f}  "
                                                      f"{time.process_time() - cpu0:6.0f} CPU-s", flush=True))
    train_cpu = (time.process_time() - cpu0) / 60
    write_csv(out / "training.csv", history)
    # ---- the test, once
    agent_policy = Policy(label="linear CEM agent (greedy)", strategy=strategy, agent=str(AGENT), model=str(model))
    agent = [float(row[METRIC]) for row in evaluate(agent_options, [agent_policy], test, trace=the_plan.trace)]
    heur, best_test, a, b, gain = test_table(options, test, agent_policy.label, agent, out)
    (out / "run.json").write_text(json.dumps({
        "trace": args.trace, "seed": args.seed, "cpu_minutes_budget": args.cpu_minutes,
        "cpu_minutes_training": train_cpu, "generations": len(history), "pairs": pairs, "strategy": strategy,
        "core_selection": CORE, "selected_train_mean": history[-1]["best_so_far"], "selected_epoch": "best",
        "best_train_heuristic": best_train, "best_train_heuristic_mean": float(np.mean(heuristics[best_train])),
        "windows": [vars(w) for w in the_plan.windows], "agent_test_mean": a, "best_test_heuristic": best_test,
        "best_test_heuristic_mean": b, "gain_percent": gain, "args": vars(args)}, indent=1))
    print(f"\nseed {args.seed}: {len(history)} generations, {train_cpu:.1f} CPU-minutes before the test; training "
          f"mean {np.mean(heuristics[pairs[0]]):.2f} -> {history[-1]['best_so_far']:.2f}")
    print(f"test mean bounded slowdown: agent {a:.2f}, best heuristic of the test windows {best_test} {b:.2f}, "
          f"the start {pairs[0]} {np.mean(heur[pairs[0]]):.2f}; gain {gain:+.1f} %; {time.time() - wall0:.0f} s wall")
    return 0


def main() -> int:
    """Parse the command line; search and test one seed."""
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    seed_arguments(p, 25.0, "runs/heldout_cem")
    p.add_argument("--pairs", type=int, default=4, help="policy pairs the agent chooses from (default 4)")
    args = p.parse_args()
    args.outdir = args.outdir or f"runs/heldout_cem/{args.trace}_s{args.seed}"
    return train_and_test(args)


if __name__ == "__main__":
    raise SystemExit(main())
