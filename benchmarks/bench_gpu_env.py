"""Benchmark: steps per second of the GPU job-slot environment beside its CPU counterpart, in one run.

Usage (from the repository root)::

    python benchmarks/bench_gpu_env.py                           # GpuJobSlot-v0 and HDeepRM-JobSlot-v0
    python benchmarks/bench_gpu_env.py --steps 50000 --envs hdeeprm/GpuJobSlot-v0 hdeeprm/GpuPlacement-v0
    python benchmarks/bench_gpu_env.py --profile                 # where the time goes (cProfile, own time)

Each environment is made with its defaults (``GpuJobSlot-v0``: its ``"train"`` scenarios, drawn per episode,
Philly windows on the shipped platforms; ``HDeepRM-JobSlot-v0``: its default trace window) and stepped with
actions drawn uniformly among the ones its ``action_mask`` allows (one pre-drawn uniform number per step, so
the agent costs next to nothing), resetting when an episode ends; resets are part of the timed loop. Prints
steps/s and microseconds per step of each, then each one's cost per step over the first's. Timing is measured
here, never asserted in tests.
"""
from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time

import numpy as np

#: Environments timed by default: the GPU job-slot env, then the CPU one it mirrors (RLScheduler's action space).
DEFAULT_ENVS = ("hdeeprm/GpuJobSlot-v0", "hdeeprm/HDeepRM-JobSlot-v0")


def run(env, steps: int, seed: int = 0) -> tuple[float, int]:
    """Step ``env`` ``steps`` times with uniformly drawn allowed actions; returns (seconds, episodes ended)."""
    draws = np.random.default_rng(seed).random(steps)
    _, info = env.reset(seed=seed)
    episodes = 0
    start = time.perf_counter()
    for u in draws:
        allowed = np.flatnonzero(info["action_mask"])
        action = int(allowed[int(u * len(allowed))]) if len(allowed) else 0
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            episodes += 1
            _, info = env.reset()
    return time.perf_counter() - start, episodes


def main(argv: list[str] | None = None) -> int:
    """Time each environment and print steps/s, us/step and the ratio to the first."""
    import gymnasium

    import hdeeprm  # noqa: F401  (registers the environments)

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--envs", nargs="+", default=list(DEFAULT_ENVS), help="environment ids (default: %(default)s)")
    p.add_argument("--steps", type=int, default=20000, help="timed steps per environment (default 20000)")
    p.add_argument("--profile", action="store_true", help="print the top functions by own time")
    args = p.parse_args(argv)
    costs = {}
    for env_id in args.envs:
        env = gymnasium.make(env_id).unwrapped
        run(env, min(2000, args.steps), seed=99)   # warm-up: imports, first scenarios read
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
        seconds, episodes = run(env, args.steps, seed=1)
        if args.profile:
            prof.disable()
            pstats.Stats(prof).sort_stats("tottime").print_stats(20)
        costs[env_id] = seconds / args.steps
        print(f"{env_id:30s} {args.steps} steps in {seconds:.3f} s: {args.steps / seconds:,.0f} steps/s, "
              f"{1e6 * costs[env_id]:.1f} us/step ({episodes} episodes ended)", flush=True)
    first = args.envs[0]
    for env_id in args.envs[1:]:
        print(f"{env_id} costs {costs[env_id] / costs[first]:.2f} x {first} per step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
