"""Benchmark: HDeepRMEnv steps per second (``minimal`` observation, KTH-SP2 on its 100-core platform).

Usage::

    python benchmarks/bench_env.py [--jobs 5000 ...] [--steps 20000] [--observation minimal ...]
                                   [--actions all|first] [--profile]
    python benchmarks/bench_env.py --jobs 256 10000 --observation minimal normal   # window and observation
    python benchmarks/bench_env.py --jobs 256 10000 --episode-head 300               # the same states

Replays a window of the KTH-SP2 trace (``$HDEEPRM_SHARED/traces/KTH-SP2-1996-2.1-cln.swf.gz``, default ``../shared``,
or ``--trace``) on ``platforms/kth_sp2.json`` and times ``env.step`` with actions
drawn uniformly at random (pre-drawn, so the agent costs nothing), resetting
when an episode ends. Reports steps/s for the whole loop and, with
``--profile``, the functions where the time goes (cProfile, sorted by own time).
Several ``--jobs`` and ``--observation`` values give one line per pair, then, per
observation, the steps/s of the largest window over the smallest one's (1.0 = no slowdown
on long windows; resets of the short window's many episodes are part of its loop).

A long window also reaches longer queues (KTH-SP2: 6 jobs on average over the first 256 jobs,
180 over the first 10,000), and the observation's percentiles and the reward's sum run over the
queue. ``--episode-head N`` separates the two: it times only the first N steps of an episode, over
and over (resets not timed), so every window steps through the same states (its first jobs, the
same actions): what is left of a slowdown then grows with the window itself.
"""
from __future__ import annotations

import argparse
import os
import cProfile
import pstats
import sys
import time
from pathlib import Path

import numpy as np

from hdeeprm.decision.contention import bookkeeping_path
from hdeeprm.decision.observation import OBSERVATIONS

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = (Path(os.environ.get("HDEEPRM_SHARED", ROOT.parent / "shared")) / "traces"
                 / "KTH-SP2-1996-2.1-cln.swf.gz")


def make_env(trace: Path, jobs: int, observation: str, actions: str, mask: bool = True):
    """The benchmarked environment (see the module docstring)."""
    from hdeeprm.env.environment import HDeepRMEnv
    from hdeeprm.platform import load_platform
    from hdeeprm.workload.convert import swf_to_workload

    hierarchy = load_platform(ROOT / "platforms" / "kth_sp2.json")
    workload = swf_to_workload(trace, nb_cores=hierarchy.nb_cores, reference_speed=hierarchy.reference_speed,
                               nb_jobs=jobs, seed=0)
    acts = None if actions == "all" else ["first-high_gflops"]
    return HDeepRMEnv(platform=hierarchy, workload=workload, observation=observation,
                      objective="avg_job_slowdown", actions=acts, action_mask=mask)


def run(env, steps: int, seed: int = 0, head: int = 0) -> tuple[float, int]:
    """Take ``steps`` random steps; returns (seconds, episodes finished).

    With ``head`` > 0: the first ``head`` steps of an episode, the same actions each time, then a reset with
    the same seed (not timed), until ``steps`` steps are timed; returns (seconds, 0).
    """
    rng = np.random.default_rng(seed)
    if head:
        first = rng.integers(env.action_space.n, size=head).tolist()
        seconds, done = 0.0, 0
        step = env.step
        while done < steps:
            env.reset(seed=seed)
            actions = first[:steps - done]
            t0 = time.perf_counter()
            for a in actions:
                step(a)
            seconds += time.perf_counter() - t0
            done += len(actions)
        return seconds, 0
    actions = rng.integers(env.action_space.n, size=steps).tolist()
    env.reset(seed=seed)
    episodes = 0
    step = env.step
    t0 = time.perf_counter()
    for a in actions:
        _, _, terminated, truncated, _ = step(a)
        if terminated or truncated:
            episodes += 1
            env.reset()
    return time.perf_counter() - t0, episodes


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print steps/s."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    p.add_argument("--jobs", type=int, nargs="+", default=[5000],
                   help="jobs of the trace window, one or more (default 5000)")
    p.add_argument("--steps", type=int, default=20000, help="timed steps (default 20000)")
    p.add_argument("--observation", nargs="+", default=["minimal"], choices=OBSERVATIONS.names(),
                   help="observation type(s) (default minimal)")
    p.add_argument("--actions", default="all", choices=("all", "first"),
                   help="all 36 policy pairs (default) or the single pair first-high_gflops")
    p.add_argument("--no-mask", action="store_true", help="leave action_mask out of info")
    p.add_argument("--profile", action="store_true", help="print the top functions by own time")
    p.add_argument("--episode-head", type=int, default=0, metavar="N",
                   help="time only the first N steps of an episode, over and over (the same states in every window)")
    args = p.parse_args(argv)
    print(f"contention bookkeeping: {bookkeeping_path()}")
    if not args.trace.is_file():
        print(f"trace not found: {args.trace}", file=sys.stderr)
        return 2
    for observation in args.observation:
        rates = {jobs: bench(args, jobs, observation) for jobs in args.jobs}
        if len(rates) > 1:
            small, large = min(rates), max(rates)
            print(f"{observation}: a {large}-job window steps at {rates[large] / rates[small]:.2f} x the speed of "
                  f"a {small}-job one")
    return 0


def bench(args: argparse.Namespace, jobs: int, observation: str) -> float:
    """Time one window and observation; prints the line and returns the steps/s."""
    env = make_env(args.trace, jobs, observation, args.actions, not args.no_mask)
    run(env, min(2000, args.steps))  # warm-up
    if args.profile:
        prof = cProfile.Profile()
        prof.enable()
    seconds, episodes = run(env, args.steps, seed=1, head=args.episode_head)
    if args.profile:
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    mask = "off" if args.no_mask else "on"
    print(f"{args.steps} steps in {seconds:.3f} s: {args.steps / seconds:,.0f} steps/s "
          f"({observation} observation, {env.action_space.n} actions, action_mask {mask}, "
          f"{jobs}-job KTH-SP2 window, {env.hierarchy.nb_cores} cores, "
          + (f"the first {args.episode_head} steps of an episode)" if args.episode_head
             else f"{episodes} episodes ended)"), flush=True)
    return args.steps / seconds


if __name__ == "__main__":
    sys.exit(main())
