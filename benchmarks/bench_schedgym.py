"""HDeepRM-JobSlot-v0 against RLScheduler's SchedGym: steps per second on SDSC-SP2 256-job windows.

Usage (from the repository root)::

    git clone https://github.com/DIR-LAB/deep-batch-scheduler /tmp/rlscheduler   # their code, never committed
    python benchmarks/bench_schedgym.py --rlscheduler /tmp/rlscheduler [--seconds 20] [--seed 0]

Both environments replay windows of 256 consecutive SDSC-SP2 jobs (RLScheduler's ``JOB_SEQUENCE_SIZE``) on the
machine's 128 processors with uniformly random *valid* actions (a queued job that is shown: RLScheduler's
``pairs`` with a job, HDeepRM's ``action_mask``), drawn in the loop on both sides by the same cheap draw
(:func:`pick`, Python's ``random``: NumPy's ``Generator.choice`` cost about 10 µs a step, a harness cost
that belongs to neither environment), and count steps per second over ``--seconds`` of wall time, resets
included: SchedGym's ``reset`` draws a window start and schedules the window with its comparison
heuristics, HDeepRM's converts the window's jobs and builds its environment, then runs it to the first
decision. Each side reads its trace and builds its platform once, untimed (SchedGym's ``my_init``;
HDeepRM's :class:`~hdeeprm.config.trace_windows.TraceWindows`).
HDeepRM runs its default model on ``examples/evaluation/sdsc_sp2_128.json``: ``parallel_homogeneous`` jobs,
HDeepRM's contention model (pstate switches), the options' objective as the reward of every step.

SchedGym is RLScheduler's ``HPCSimPickJobs.HPCEnv`` (SC'20, https://github.com/DIR-LAB/deep-batch-scheduler),
imported from the checkout given: it imports TensorFlow and the old ``gym`` package only for types and seeding,
so when they are not installed, minimal stand-ins are put in ``sys.modules`` (``gym.Env``, ``spaces.Box``,
``spaces.Discrete`` and ``utils.seeding.np_random`` returning a NumPy ``RandomState``, as gym 0.x did). Their trace
reader wants an uncompressed SWF file: the trace is decompressed into a temporary file. Timing is measured here,
never asserted in tests.
"""
from __future__ import annotations

import argparse
import gzip
import os
import random
import shutil
import sys
import tempfile
import time
import types
from pathlib import Path

import numpy as np

from hdeeprm.decision.contention import bookkeeping_path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HDEEPRM_SHARED", str(ROOT.parent / "shared"))
WINDOW = 256
OPTIONS = ROOT / "examples" / "evaluation" / "sdsc_sp2_128.json"


def _stand_ins() -> None:
    """Minimal ``tensorflow`` and ``gym`` modules for importing SchedGym when they are not installed."""
    try:
        import gym  # noqa: F401
    except ImportError:
        gym = types.ModuleType("gym")
        spaces, utils, seeding = (types.ModuleType(f"gym.{name}") for name in ("spaces", "utils", "utils.seeding"))

        class Space:
            def __init__(self, *args, **kwargs) -> None:
                self.args, self.kwargs = args, kwargs

        gym.Env, spaces.Box, spaces.Discrete = object, Space, Space
        seeding.np_random = lambda seed=None: (np.random.RandomState(seed), seed)
        gym.spaces, gym.utils, utils.seeding = spaces, utils, seeding
        sys.modules.update({"gym": gym, "gym.spaces": spaces, "gym.utils": utils, "gym.utils.seeding": seeding})
    try:
        import tensorflow  # noqa: F401
    except ImportError:
        sys.modules["tensorflow"] = types.ModuleType("tensorflow")


def pick(draw: random.Random, candidates):
    """A uniformly random element of ``candidates`` (a non-empty sequence), the same draw for both environments."""
    return candidates[int(draw.random() * len(candidates))]


def schedgym_steps(checkout: Path, trace: Path, seconds: float, seed: int) -> tuple[int, int, float]:
    """Random valid steps of SchedGym for ``seconds``: (steps, episodes started, wall seconds)."""
    _stand_ins()
    sys.path.insert(0, str(checkout))
    import HPCSimPickJobs as sched_gym

    env = sched_gym.HPCEnv(shuffle=False, backfil=False, skip=False, job_score_type=0, batch_job_slice=0,
                           build_sjf=False)
    env.seed(seed)
    env.my_init(workload_file=str(trace))
    draw = random.Random(seed)
    steps = episodes = 0
    start = time.perf_counter()
    env.reset()
    episodes += 1
    while time.perf_counter() - start < seconds:
        valid = [k for k, pair in enumerate(env.pairs) if pair[0]]
        done = env.step(pick(draw, valid) if valid else 0)[2]
        steps += 1
        if done:
            env.reset()
            episodes += 1
    return steps, episodes, time.perf_counter() - start


def hdeeprm_steps(seconds: float, seed: int) -> tuple[int, int, float]:
    """Random valid steps of HDeepRM-JobSlot-v0 on random 256-job SDSC-SP2 windows: (steps, episodes, seconds)."""
    from hdeeprm.config.build import build_platform
    from hdeeprm.config.options import load_options
    from hdeeprm.env.job_slot import JobSlotEnv
    from hdeeprm.config.trace_windows import TraceWindows

    options = load_options(OPTIONS)
    hierarchy = build_platform(options)   # built once, as SchedGym builds its cluster once (not timed)
    windows = TraceWindows(options, hierarchy)   # the trace read once, as SchedGym's my_init (not timed)
    nb_usable = len(windows.workload().jobs)
    rng, draw = np.random.default_rng(seed), random.Random(seed)
    steps = episodes = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        first = int(rng.integers(0, nb_usable - WINDOW))
        env = JobSlotEnv(options.replace(first_job=first, nb_jobs=WINDOW), platform=hierarchy,
                         workload=windows.workload(first, WINDOW))
        _, info = env.reset(seed=seed)
        episodes += 1
        done = False
        while not done and time.perf_counter() - start < seconds:
            action = int(pick(draw, np.flatnonzero(info["action_mask"])))
            _, _, terminated, truncated, info = env.step(action)
            steps += 1
            done = terminated or truncated
    return steps, episodes, time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rlscheduler", type=Path, required=True, help="a checkout of DIR-LAB/deep-batch-scheduler")
    p.add_argument("--trace", type=Path, default=Path(os.environ["HDEEPRM_SHARED"]) / "traces" /
                   "SDSC-SP2-1998-4.2-cln.swf.gz")
    p.add_argument("--seconds", type=float, default=20.0, help="wall time of each measurement (default 20)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    print(f"contention bookkeeping: {bookkeeping_path()}")
    if not (args.rlscheduler / "HPCSimPickJobs.py").is_file():
        p.error(f"--rlscheduler {args.rlscheduler}: no HPCSimPickJobs.py there (a checkout of "
                "DIR-LAB/deep-batch-scheduler is needed)")
    ours = hdeeprm_steps(args.seconds, args.seed)
    with tempfile.TemporaryDirectory() as tmp:
        trace = Path(tmp) / "sdsc.swf"
        with gzip.open(args.trace, "rb") as src, open(trace, "wb") as dst:
            shutil.copyfileobj(src, dst)
        theirs = schedgym_steps(args.rlscheduler.resolve(), trace, args.seconds, args.seed)
    for name, (steps, episodes, wall) in (("HDeepRM-JobSlot-v0", ours), ("SchedGym (RLScheduler)", theirs)):
        print(f"{name:<24}{steps:>9} steps {episodes:>6} episodes {wall:>6.1f} s {steps / wall:>9,.0f} steps/s")
    print(f"ratio HDeepRM / SchedGym: {(ours[0] / ours[2]) / (theirs[0] / theirs[2]):.2f}x")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main())
