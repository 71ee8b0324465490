"""Train and evaluate Stable-Baselines3 PPO on HDeepRM's Gymnasium environment.

    pip install "hdeeprm[sb3]"        # stable-baselines3
    python examples/sb3_ppo.py [--steps 4096] [--jobs 100]

The environment replays the first ``--jobs`` jobs of the Lublin-Feitelson
trace shipped in ``workloads/`` on ``platforms/kth_sp2.json`` (100 cores),
objective ``avg_job_slowdown``, ``minimal`` observation, the six job-selection
policies with ``high_gflops`` core selection. It prints the mean episode
reward of the untrained and the trained PPO policy (deterministic actions)
and of two classic pairs for reference. Runs in well under a minute.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ACTIONS = ["random-high_gflops", "first-high_gflops", "shortest-high_gflops", "smallest-high_gflops",
           "low_mem-high_gflops", "low_mem_bw-high_gflops"]


def make_env(jobs: int, seed: int = 0):
    """The environment of this example."""
    import gymnasium

    import hdeeprm  # noqa: F401  (registers hdeeprm/HDeepRM-v0)

    return gymnasium.make("hdeeprm/HDeepRM-v0", platform=ROOT / "platforms" / "kth_sp2.json",
                          workload=ROOT / "workloads" / "lublin_500_100.swf", nb_jobs=jobs, seed=seed,
                          objective="avg_job_slowdown", observation="minimal", actions=ACTIONS)


def episode_reward(env, policy, seed: int = 0) -> float:
    """Total reward of one episode where ``policy(obs) -> action``."""
    obs, _ = env.reset(seed=seed)
    total, done = 0.0, False
    while not done:
        obs, reward, terminated, truncated, _ = env.step(policy(obs))
        total += reward
        done = terminated or truncated
    return total


def main(argv: list[str] | None = None) -> int:
    """Train PPO, print untrained / trained / classic episode rewards."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=4096, help="PPO training steps (default 4096)")
    p.add_argument("--jobs", type=int, default=100, help="jobs of the trace (default 100)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="auto",
                   help="torch device of the network: auto (SB3's default: CUDA when present), cpu or cuda")
    args = p.parse_args(argv)
    try:
        from stable_baselines3 import PPO
    except ImportError:
        print("this example needs stable-baselines3: pip install 'hdeeprm[sb3]'", file=sys.stderr)
        return 2

    env = make_env(args.jobs, args.seed)
    model = PPO("MlpPolicy", env, n_steps=512, batch_size=64, learning_rate=3e-3, seed=args.seed, verbose=0,
                device=args.device)

    def ppo(obs):
        return int(model.predict(obs, deterministic=True)[0])

    untrained = episode_reward(env, ppo)
    from stable_baselines3.common.logger import Logger

    model.set_logger(Logger(folder=None, output_formats=[]))   # SB3's default makes an empty temp folder
    model.learn(total_timesteps=args.steps)
    trained = episode_reward(env, ppo)
    print(f"PPO on {args.jobs} Lublin jobs, 100 cores, objective avg_job_slowdown, {args.steps} steps")
    print(f"  untrained PPO        {untrained:10.4f}")
    print(f"  trained PPO          {trained:10.4f}")
    for i, name in enumerate(ACTIONS[1:4], 1):
        print(f"  classic {name:22s} {episode_reward(env, lambda obs, a=i: a):10.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
