"""Learned GPU agents against the best classic policy on held-out scenarios (the evidence of issue 14).

Usage (from the repository root; needs stable-baselines3, and sb3-contrib for ``placement``)::

    nice -n 5 python benchmarks/gpu_learning.py provisioning --algo ars --steps 3000000 --eval-every 600000 --seed 0
    nice -n 5 python benchmarks/gpu_learning.py placement --steps 30000 --eval-every 10000 --seed 0
    python benchmarks/gpu_learning.py headroom      # the most any job-and-node agent can gain in mean JCT

The protocol (scenarios, metrics, baselines, model selection) is fixed here, before the reported runs:

- **Training and model selection** see the ``train`` scenarios only
  (:data:`~hdeeprm.env.gpu_scenarios.GPU_SCENARIOS`): the agent trains on episodes drawn from them;
  every ``--eval-every`` steps its deterministic policy is scored on each of them and the checkpoint
  with the best mean is kept. The ``test`` scenarios (other generator seeds and loads, other Philly
  windows, the openb window on the 1,213-node cluster) are run once, at the end.
- **provisioning**: ARS (sb3-contrib, linear policy; ``--algo ppo``: SB3's PPO) on
  ``hdeeprm/GpuProvisioning-v1``; metric the grader score
  (:func:`~hdeeprm.env.gpu_provisioning.grade`, budget credit); classic policies every entry of
  :data:`~hdeeprm.env.gpu_provisioning.PROVISIONING_HEURISTICS` (always hold, always scale down, the
  reactive autoscaler); the best one per test scenario is the baseline.
- **placement**: MaskablePPO (sb3-contrib) on ``hdeeprm/GpuPlacement-v0`` (easy -> hard curriculum,
  FCFS queue); metric mean job completion time (JCT, lower is better), with the time-averaged GPU
  allocation rate beside it; classic policies every pair of
  :data:`~hdeeprm.decision.gpu_scoring.GPU_PLACEMENTS` x :data:`~hdeeprm.decision.gpu_manager.GPU_ORDERINGS`
  on the same replay; the best pair per test scenario by JCT (and, separately, by allocation rate) is the
  baseline. The MLP sees at most the 20 nodes of the largest training cluster: larger test clusters are
  reported as not run.
- Training CPU-minutes are the process CPU time (``time.process_time``) of training and model selection,
  with one torch thread. Each episode's seed is ``--seed``.

Prints one row per held-out scenario: agent metric, best classic policy (name) and metric, win or lose.
The best classic policy of each scenario is picked in hindsight, scenario by scenario (an oracle no
single classic policy matches); for provisioning a last line also compares the mean score over the
held-out scenarios with that of the best single classic policy. Timing figures come from this
script, never from tests.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HDEEPRM_SHARED", str(ROOT.parent / "shared"))
sys.path.insert(0, str(ROOT))

from hdeeprm.decision.gpu_manager import GPU_ORDERINGS  # noqa: E402
from hdeeprm.decision.gpu_placement import Placement, PlacementState  # noqa: E402
from hdeeprm.decision.gpu_scoring import GPU_PLACEMENTS  # noqa: E402
from hdeeprm.env.gpu_placement import GpuPlacementEnv  # noqa: E402
from hdeeprm.env.gpu_provisioning import PROVISIONING_HEURISTICS, GpuProvisioningEnvV1  # noqa: E402
from hdeeprm.env.gpu_scenarios import scenarios  # noqa: E402
from hdeeprm.run.gpu_replay import GpuReplay, GpuRunConfig  # noqa: E402

#: Steps after which a provisioning episode is truncated (jobs not started count late).
MAX_STEPS = 3000
#: Truncation of ARS's training episodes (cheaper candidates; selection and tests use :data:`MAX_STEPS`).
TRAIN_STEPS = 1000


def provisioning_score(scenario: str, act, seed: int) -> tuple[float, float]:
    """Grader score and spent / budget of one provisioning episode; ``act(env, obs)`` -> action."""
    env = GpuProvisioningEnvV1(task=scenario, max_steps=MAX_STEPS)
    obs, _ = env.reset(seed=seed)
    done = False
    while not done:
        obs, _, term, trunc, info = env.step(act(env, obs))
        done = term or trunc
    return info["score"], info["spent"] / info["budget"]


def placement_metrics(scenario: str, act, seed: int, max_nodes: int | None = None) -> dict[str, float]:
    """Episode metrics of the placement env driven by ``act(env, obs)`` -> action."""
    env = GpuPlacementEnv(scenario=[scenario], max_nodes=max_nodes)
    obs, info = env.reset(seed=seed)
    done = info["job"] < 0
    while not done:
        obs, _, done, _, info = env.step(act(env, obs))
    return info["metrics"]


def classic_metrics(scenario: str, placement: str, ordering: str) -> dict[str, float]:
    """Episode metrics of the plain replay with one placement policy and ordering."""
    s = scenarios([scenario])[0]
    replay = GpuReplay(s.cluster(), s.jobs(), GpuRunConfig(placement=placement, ordering=ordering))
    while replay.step():
        pass
    return replay.metrics()


#: Every classic placement x ordering pair the GPU tables compare with.
PAIRS = [(p, o) for p in GPU_PLACEMENTS.names() for o in GPU_ORDERINGS.names()]


def classic_pairs(scenario: str) -> dict[str, dict[str, float]]:
    """Episode metrics of every pair of :data:`PAIRS` on ``scenario``, by ``"placement+ordering"``."""
    return {f"{p}+{o}": classic_metrics(scenario, p, o) for p, o in PAIRS}


class Selector:
    """Keeps the checkpoint whose deterministic policy scores best on the training scenarios."""

    def __init__(self, evaluate, higher_is_better: bool) -> None:
        self.evaluate, self.sign = evaluate, 1.0 if higher_is_better else -1.0
        self.best, self.params, self.history = -float("inf"), None, []

    def __call__(self, model, steps: int) -> None:
        """Score ``model`` after ``steps`` steps; keep its parameters when best so far."""
        value = self.evaluate(model)
        self.history.append((steps, value))
        print(f"  after {steps:7d} steps: train-scenario mean {value:.4f}", flush=True)
        if self.sign * value > self.best:
            self.best, self.params = self.sign * value, model.get_parameters()


def train(model, steps: int, every: int, selector: Selector) -> float:
    """Learn ``steps`` steps, selecting every ``every``; returns the CPU minutes spent."""
    from stable_baselines3.common.logger import Logger

    model.set_logger(Logger(folder=None, output_formats=[]))   # SB3's default: an empty temp folder per learn()
    tic = time.process_time()
    done = 0
    while done < steps:
        chunk = min(every, steps - done)
        model.learn(total_timesteps=chunk, reset_num_timesteps=False)
        done += chunk
        selector(model, done)
    model.set_parameters(selector.params)
    return (time.process_time() - tic) / 60.0


def provisioning_model(algo: str, seed: int):
    """An untrained SB3 model on GpuProvisioning-v1's train scenarios.

    ``ars``: sb3-contrib's Augmented Random Search (Mania et al., NeurIPS 2018), a linear policy (zero at
    the start, i.e. always ``scale_down``) improved by comparing the returns of perturbed copies, each
    run on every train scenario once (one fixed scenario per vectorised env, episodes truncated at
    :data:`TRAIN_STEPS`); ``ppo``: SB3's PPO with an MLP on 4 envs drawing train scenarios.
    """
    from stable_baselines3.common.vec_env import DummyVecEnv

    names = [s.name for s in scenarios("train")]
    if algo == "ars":
        from sb3_contrib import ARS

        venv = DummyVecEnv([lambda n=n: GpuProvisioningEnvV1(task=n, max_steps=TRAIN_STEPS) for n in names])
        return ARS("LinearPolicy", venv, n_delta=6, n_top=3, n_eval_episodes=len(names), seed=seed, device="cpu")
    from stable_baselines3 import PPO

    venv = DummyVecEnv([lambda: GpuProvisioningEnvV1(task="train", max_steps=MAX_STEPS)] * 4)
    venv.seed(seed)
    return PPO("MlpPolicy", venv, n_steps=2048, batch_size=256, gamma=0.995, ent_coef=0.01, seed=seed, device="cpu")


def provisioning(args) -> int:
    """Train on GpuProvisioning-v1's train scenarios; compare on the test ones."""
    model = provisioning_model(args.algo, args.seed)

    def agent(m):
        return lambda env, obs: int(m.predict(obs, deterministic=True)[0])

    train_names = [s.name for s in scenarios("train")]
    selector = Selector(lambda m: sum(provisioning_score(n, agent(m), args.seed)[0] for n in train_names)
                        / len(train_names), higher_is_better=True)
    minutes = train(model, args.steps, args.eval_every, selector)
    print(f"\n{type(model).__name__} on hdeeprm/GpuProvisioning-v1, {args.steps} steps, seed {args.seed}, "
          f"{minutes:.1f} CPU-minutes (training + selection on the train scenarios)")
    print(f"{'held-out scenario':18s} {'agent score':>11s} {'(spent/B)':>9s}  {'best classic':>12s} "
          f"{'score':>6s} {'(spent/B)':>9s}  result")
    wins = 0
    means = {"agent": 0.0, **{n: 0.0 for n in PROVISIONING_HEURISTICS.names()}}
    tests = scenarios("test")
    for s in tests:
        mine, spent = provisioning_score(s.name, agent(model), args.seed)
        classic = {n: provisioning_score(s.name, lambda env, obs, n=n: PROVISIONING_HEURISTICS[n](env), args.seed)
                   for n in PROVISIONING_HEURISTICS.names()}
        for name, value in [("agent", mine), *((n, classic[n][0]) for n in classic)]:
            means[name] += value / len(tests)
        best = max(classic, key=lambda n: classic[n][0])
        win = mine > classic[best][0]
        wins += win
        print(f"{s.name:18s} {mine:11.3f} {spent:9.2f}  {best:>12s} {classic[best][0]:6.3f} "
              f"{classic[best][1]:9.2f}  {'WIN' if win else 'lose'}")
    print(f"agent wins on {wins} of {len(tests)} held-out scenarios against the best classic policy of each; "
          f"training CPU-minutes {minutes:.1f}")
    single = max(PROVISIONING_HEURISTICS.names(), key=lambda n: means[n])
    print("mean score over the held-out scenarios: " + ", ".join(f"{n} {v:.3f}" for n, v in means.items())
          + f"; best single classic policy: {single} "
          + ("(agent WINS)" if means["agent"] > means[single] else "(agent loses)"))
    return 0


def placement(args) -> int:
    """Train MaskablePPO on GpuPlacement-v0's train scenarios; compare on the test ones."""
    from sb3_contrib import MaskablePPO

    env = GpuPlacementEnv(scenario="train", curriculum=True, curriculum_episodes=20)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=512, batch_size=128, seed=args.seed, verbose=0,
                        device="cpu")

    def agent(m):
        return lambda e, obs: int(m.predict(obs, deterministic=True, action_masks=e.action_masks())[0])

    train_names = [s.name for s in scenarios("train")]
    selector = Selector(lambda m: sum(placement_metrics(n, agent(m), args.seed, env.nb_nodes)["jct_mean"]
                                      for n in train_names) / len(train_names), higher_is_better=False)
    minutes = train(model, args.steps, args.eval_every, selector)
    print(f"\nMaskablePPO on hdeeprm/GpuPlacement-v0, {args.steps} steps, seed {args.seed}, {minutes:.1f} CPU-minutes "
          f"(training + selection on the train scenarios); classic: {len(PAIRS)} placement x ordering pairs")
    print(f"{'held-out scenario':18s} {'agent JCT s':>11s} {'best pair by JCT':>30s} {'JCT s':>9s}  result  "
          f"{'agent alloc':>11s} {'best pair by allocation':>30s} {'alloc':>6s}  result")
    for s in scenarios("test"):
        if s.cluster().nb_nodes > env.nb_nodes:
            print(f"{s.name:18s} not run: {s.cluster().nb_nodes} nodes, the MLP sees {env.nb_nodes}")
            continue
        mine = placement_metrics(s.name, agent(model), args.seed, env.nb_nodes)
        classic = classic_pairs(s.name)
        by_jct = min(classic, key=lambda k: classic[k]["jct_mean"])
        by_alloc = max(classic, key=lambda k: classic[k]["gpu_allocation_rate"])
        print(f"{s.name:18s} {mine['jct_mean']:11.0f} {by_jct:>30s} {classic[by_jct]['jct_mean']:9.0f}  "
              f"{'WIN ' if mine['jct_mean'] < classic[by_jct]['jct_mean'] else 'lose'}    "
              f"{mine['gpu_allocation_rate']:11.3f} {by_alloc:>30s} {classic[by_alloc]['gpu_allocation_rate']:6.3f}  "
              f"{'WIN' if mine['gpu_allocation_rate'] > classic[by_alloc]['gpu_allocation_rate'] else 'lose'}")
    return 0


def fastest_run_times(scenario: str) -> np.ndarray:
    """The shortest run time each job of ``scenario`` can have on its cluster, in seconds, float64 (J,).

    Run times depend on the placement: a job runs its duration times the run-time factor of the GPUs it gets
    (:meth:`~hdeeprm.simulation.gpu_model.GpuModel.factor`, the replay's speed model: peak-rate ratios of the GPU
    type library, the default ``GpuRunConfig``'s reference type and precision). The shortest is its duration times
    the smallest factor over the GPU types of the nodes its (first) part fits on the empty cluster; for a job
    spread over nodes that is a lower bound (its factor is its slowest part's, times the spread penalty). NaN for
    a job rejected at submission (by every policy alike).
    """
    s = scenarios([scenario])[0]
    cluster, jobs = s.cluster(), s.jobs()
    replay = GpuReplay(cluster, jobs, GpuRunConfig())
    manager, model, empty = replay.manager, replay.model, PlacementState(cluster)
    fastest = np.full(len(jobs), np.nan)
    for job, parts in enumerate(manager.chunks):
        if manager.reasons[job] is not None:
            continue
        nodes = empty.fitting_nodes(parts[0])
        _, first = np.unique(cluster.gpu_model[nodes], return_index=True)   # one node per GPU type
        fastest[job] = float(jobs.duration[job]) * min(
            model.factor(job, [Placement(node, empty.choose_gpus(node, parts[0], "best", None), parts[0])])
            for node in nodes[first].tolist())
    return fastest


def headroom(args) -> int:
    """The most any job-and-node agent can gain over the best pair's mean JCT on each held-out scenario.

    A job's completion time (JCT) is its queueing delay plus its run time, and no non-preemptive schedule runs a
    job faster than on its fastest GPU type without waiting: each job's JCT is at least its
    :func:`fastest_run_times` entry (the speed model: run times depend on the placement). The jobs that run are the
    same under every policy (a job that fits no node of the empty cluster is rejected by all), so no schedule's mean
    JCT is below the mean of those run times, and the gain of any agent over the best pair is at most
    ``1 - mean fastest run time / best pair's mean JCT``.
    """
    print(f"{'held-out scenario':18s} {'best pair by JCT':>30s} {'JCT s':>9s} {'delay s':>8s} {'fastest s':>9s} "
          f"{'max gain':>8s}")
    gains = []
    for s in scenarios("test"):
        classic = classic_pairs(s.name)
        best = min(classic, key=lambda k: classic[k]["jct_mean"])
        m = classic[best]
        bound = float(np.nanmean(fastest_run_times(s.name)))
        gains.append(1.0 - bound / m["jct_mean"])
        print(f"{s.name:18s} {best:>30s} {m['jct_mean']:9.0f} {m['queueing_delay_mean']:8.0f} {bound:9.0f} "
              f"{gains[-1]:8.1%}")
    print(f"mean over the {len(gains)} held-out scenarios: at most {np.mean(gains):.1%} better than the best pair "
          f"of each (every job on its fastest GPU type, without waiting)")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Parse the command line, train, print the table; returns the exit status."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("env", choices=("provisioning", "placement", "headroom"),
                   help="headroom: the largest JCT gain over the best pair any non-preemptive agent can reach "
                        "(run times depend on the GPU type: the speed model)")
    p.add_argument("--steps", type=int, default=400_000, help="training steps")
    p.add_argument("--eval-every", type=int, default=50_000, help="steps between two model-selection evaluations")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--algo", choices=("ars", "ppo"), default="ars", help="provisioning learner")
    args = p.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    return {"provisioning": provisioning, "placement": placement, "headroom": headroom}[args.env](args)


if __name__ == "__main__":
    sys.exit(main())
