"""Short REINFORCE training on a real-trace window, before/after comparison.

Trains ``examples/agents/reinforce.py`` on the first 300 jobs of the KTH-SP2
log (PWA, registry name ``pwa:KTH-SP2-1996-2.1-cln``: ``hdeeprm-workload fetch``
gets it; pass ``--options`` for another window) on ``platforms/kth_sp2.json`` with the ``avg_job_slowdown`` objective
and six job-selection policies (core selection ``high_gflops``), then prints
the objective (total reward of an episode, higher is better) and the mean
bounded slowdown of the untrained and the trained policy::

    python examples/learning/train_real_trace.py [--episodes 30] [--eval 3]

Each figure is the mean over ``--eval`` episodes with actions sampled from
the policy (exploration as in training); the trained policy is also run
greedily (``run: test``). Runs in about half a minute.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def evaluate(agent, inputs, episodes: int) -> tuple[float, float]:
    """Mean (total reward, mean bounded slowdown) over ``episodes`` episodes, no update."""
    from hdeeprm.run.episode import run_episode

    hierarchy, workload, options, observer, reward = inputs
    totals, bsld = [], []
    for _ in range(episodes):
        episode, _ = run_episode(hierarchy, workload, options, agent, record=False, observer=observer, reward=reward)
        totals.append(sum(agent.rewards))
        bsld.append(episode.metrics()["mean_bounded_slowdown"])
        agent.clear()
    return float(np.mean(totals)), float(np.mean(bsld))


def main(argv: list[str] | None = None) -> int:
    """Train, evaluate and print the before/after figures."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--options", default=str(HERE / "kth_window.json"))
    p.add_argument("--agent", default=str(HERE.parent / "agents" / "reinforce.py"))
    p.add_argument("--episodes", type=int, default=30, help="training episodes (default 30)")
    p.add_argument("--eval", type=int, default=3, help="evaluation episodes (default 3)")
    args = p.parse_args(argv)

    import torch

    from hdeeprm.agents import instantiate_agent, load_agent_class
    from hdeeprm.config.build import build_platform, build_workload
    from hdeeprm.config.options import load_options
    from hdeeprm.decision.observation import make_observer
    from hdeeprm.decision.reward import make_reward
    from hdeeprm.run.episode import run_episode

    options = load_options(args.options)
    hierarchy = build_platform(options)
    workload = build_workload(options, hierarchy)
    observer = make_observer(options.observation, hierarchy, workload, options.queue_sensitivity)
    reward = make_reward(options.objective)
    torch.manual_seed(options.seed)
    agent = instantiate_agent(load_agent_class(args.agent), gamma=options.gamma, hidden=options.hidden,
                              action_size=len(options.actions), observation_size=observer.size, lr=options.lr,
                              seed=options.seed, options=options)
    inputs = (hierarchy, workload, options, observer, reward)
    before = evaluate(agent, inputs, args.eval)
    for _ in range(args.episodes):
        run_episode(hierarchy, workload, options, agent, record=False, observer=observer, reward=reward)
        agent.end_episode()
    after = evaluate(agent, inputs, args.eval)
    agent.run = "test"
    greedy = evaluate(agent, inputs, 1)
    print(f"{len(workload.jobs)} jobs, {hierarchy.nb_cores} cores, objective {options.objective}, "
          f"{args.episodes} training episodes")
    print(f"  untrained (sampled): total reward {before[0]:10.3f}   mean bounded slowdown {before[1]:8.1f}")
    print(f"  trained   (sampled): total reward {after[0]:10.3f}   mean bounded slowdown {after[1]:8.1f}")
    print(f"  trained   (greedy):  total reward {greedy[0]:10.3f}   mean bounded slowdown {greedy[1]:8.1f}")
    return 0 if after[0] > before[0] else 1


if __name__ == "__main__":
    sys.exit(main())
