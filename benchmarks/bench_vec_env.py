"""Benchmark: total steps/s of HDeepRM-v0 on 1 process vs N worker processes (Gymnasium and SB3 vector envs).

Usage::

    python benchmarks/bench_vec_env.py [--jobs 5000] [--steps 8000] [--observation minimal] [--envs-per-worker 8]
                                       [--gpu-scenario test-openb]
                                       [--no-mask] [--no-shared-memory]
                                       [--start-method fork] [--workers 2]

Each environment replays the same window of the KTH-SP2 trace on ``platforms/kth_sp2.json``
(as ``bench_env.py``; every worker reads the trace itself) with actions drawn uniformly at random
and pre-drawn, so the agent costs nothing. Printed, each over ``--steps`` vector steps:

* 1 process: one env stepped in this process (reset when its episode ends), the reference;
* :class:`hdeeprm.env.vector.BatchedVectorEnv` of N x ``--envs-per-worker`` envs on N = ``--workers`` processes
  (stepped in turn in each worker, observations through shared memory: one round trip per worker and
  vector step; platform and workload built once here and shared by a worker's envs), over
  ``--steps / --envs-per-worker`` vector steps (the same env steps per worker);
* ``gymnasium.vector.AsyncVectorEnv`` of N envs (N worker processes; observations through shared
  memory unless ``--no-shared-memory``; NEXT_STEP autoreset);
* Stable-Baselines3's ``SubprocVecEnv`` of N envs (when SB3 is installed);
* the round trip of a vector step over N workers whose env does nothing (same spaces, same
  kind of info): the inter-process cost every step pays whatever the env, which bounds the
  speed-up (``1 / (step + round trip / 2)`` per env and process at best).

Total steps/s counts every sub-env step, and the ratio is that over the 1-process figure (the
targets: >= 1.7 on 2 processes, >= 4 with 8 workers on 8 free cores). Each line also gives the CPU time
per env step of all the processes involved (this one and the workers, from ``/proc/PID/stat``, Linux)
and the speed-up it allows on N free cores, ``N x (1-process CPU per step) / (its CPU per step)``: wall-clock ratios
need a quiet machine (``uptime``), this bound much less so. Timing is measured here, never
asserted in tests.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_TRACE = (Path(os.environ.get("HDEEPRM_SHARED", ROOT.parent / "shared")) / "traces"
                 / "KTH-SP2-1996-2.1-cln.swf.gz")


def env_maker(trace: Path, jobs: int, observation: str, mask: bool):
    """A picklable constructor of the benchmarked env (paths only: each worker builds its inputs)."""
    from hdeeprm.env.environment import HDeepRMEnv

    return partial(HDeepRMEnv, platform=str(ROOT / "platforms" / "kth_sp2.json"), workload=str(trace),
                   nb_jobs=jobs, seed=0, observation=observation, objective="avg_job_slowdown", action_mask=mask)


def built_maker(trace: Path, jobs: int, observation: str, mask: bool):
    """The benchmarked env's constructor on inputs built once here (the recipe for BatchedVectorEnv)."""
    from hdeeprm.env.environment import HDeepRMEnv

    probe = env_maker(trace, jobs, observation, mask)()
    return partial(HDeepRMEnv, platform=probe.hierarchy, workload=probe.workload, seed=0, observation=observation,
                   objective="avg_job_slowdown", action_mask=mask)


def gpu_placement_maker(scenario: str):
    """A picklable constructor of ``hdeeprm/GpuPlacement-v0`` on one scenario (a slow step: many nodes)."""
    from hdeeprm.env.gpu_placement import GpuPlacementEnv

    return partial(GpuPlacementEnv, scenario=scenario)


def cpu_seconds(pids: list[int]) -> float:
    """CPU seconds (user + system) used so far by this process and the processes ``pids`` (Linux ``/proc``)."""
    total = time.process_time()
    tick = os.sysconf("SC_CLK_TCK")
    for pid in pids:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        total += (int(fields[11]) + int(fields[12])) / tick   # utime, stime (proc(5) fields 14, 15)
    return total


def time_single(maker, actions: np.ndarray) -> tuple[float, float]:
    """Wall and CPU seconds of ``len(actions)`` steps of one env in this process."""
    env = maker()
    env.reset(seed=0)
    step = env.step
    c0, t0 = time.process_time(), time.perf_counter()
    for a in actions.tolist():
        _, _, terminated, truncated, _ = step(a)
        if terminated or truncated:
            env.reset()
    return time.perf_counter() - t0, time.process_time() - c0


def time_vector(venv, actions: np.ndarray, pids: list[int], sb3: bool = False) -> tuple[float, float]:
    """Wall and CPU seconds (this process and the workers ``pids``) of ``len(actions)`` vector steps of ``venv``.

    ``venv`` is a Gymnasium, an SB3 or a :class:`~hdeeprm.env.vector.BatchedVectorEnv` vector env; it is closed
    after.
    """
    if sb3:
        venv.seed(0)
        venv.reset()
    else:
        venv.reset(seed=0)
    step = venv.step
    try:
        c0, t0 = cpu_seconds(pids), time.perf_counter()
        for a in actions:
            step(a)
        return time.perf_counter() - t0, cpu_seconds(pids) - c0
    finally:
        venv.close()


def nop_maker(space, n: int):
    """Constructor of a do-nothing env: observation space ``space``, Discrete(n) actions, an info as HDeepRM-v0's."""
    return partial(_make_nop, space, n)


def _make_nop(space, n: int):
    import gymnasium
    from gymnasium import spaces

    class Nop(gymnasium.Env):
        def __init__(self):
            self.observation_space = space
            self.action_space = spaces.Discrete(n)
            self.obs = space.sample()
            self.info = {"time": 0.0, "queue": 1, "jobs_ended": 0, "action_mask": np.ones(n, bool)}

        def reset(self, *, seed=None, options=None):
            super().reset(seed=seed)
            return self.obs, dict(self.info)

        def step(self, action):
            return self.obs, 0.0, False, False, dict(self.info)

    return Nop()


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print the figures."""
    from hdeeprm.decision.observation import OBSERVATIONS

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    p.add_argument("--jobs", type=int, default=5000, help="jobs of the trace window (default 5000)")
    p.add_argument("--steps", type=int, default=8000, help="timed vector steps (default 8000)")
    p.add_argument("--observation", default="minimal", choices=OBSERVATIONS.names())
    p.add_argument("--gpu-scenario", metavar="NAME",
                   help="benchmark hdeeprm/GpuPlacement-v0 on this scenario instead (e.g. test-openb: 1,213 nodes, "
                        "a slow step); --jobs, --observation and --no-mask do not apply")
    p.add_argument("--no-mask", action="store_true", help="leave action_mask out of info")
    p.add_argument("--envs-per-worker", type=int, default=8,
                   help="sub-envs per worker of hdeeprm.env.vector.BatchedVectorEnv (default 8; 0 skips it)")
    p.add_argument("--no-shared-memory", action="store_true",
                   help="AsyncVectorEnv sends observations through the pipes instead of shared memory")
    p.add_argument("--start-method", default=None, choices=("fork", "forkserver", "spawn"),
                   help="how the workers start (default: each library's own: fork for Gymnasium, forkserver "
                        "for SB3)")
    p.add_argument("--workers", type=int, default=2, help="worker processes of every vector env (default 2)")
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error(f"--workers must be >= 1, got {args.workers}")
    nb_processes = args.workers
    if not args.trace.is_file():
        print(f"trace not found: {args.trace}", file=sys.stderr)
        return 2
    import gymnasium

    if args.gpu_scenario:
        maker = gpu_placement_maker(args.gpu_scenario)
    else:
        maker = env_maker(args.trace, args.jobs, args.observation, not args.no_mask)
    probe = maker()
    n, space = int(probe.action_space.n), probe.observation_space
    actions = np.random.default_rng(1).integers(n, size=(args.steps, nb_processes))
    time_single(maker, actions[: min(500, args.steps), 0])   # warm-up
    wall, cpu = time_single(maker, actions[:, 0])
    one, one_cpu = args.steps / wall, cpu / args.steps
    what = (f"GpuPlacement-v0, scenario {args.gpu_scenario}" if args.gpu_scenario else
            f"{args.observation} observation, action_mask {'off' if args.no_mask else 'on'}, {args.jobs}-job KTH-SP2 "
            f"window")
    print(f"1 process, 1 env: {one:,.0f} steps/s, {1e6 * one_cpu:,.0f} us CPU per step ({what}, {n} actions, "
          f"{args.steps} steps; load average {os.getloadavg()[0]:.2f})", flush=True)
    shm = not args.no_shared_memory

    def report(name: str, envs: int, vector_steps: int, wall: float, cpu: float) -> None:
        total = envs * vector_steps
        print(f"{name}: {total / wall:,.0f} steps/s = {total / wall / one:.2f} x 1 process; "
              f"{1e6 * cpu / total:,.0f} us CPU per step, bound on {nb_processes} free cores "
              f"{nb_processes * one_cpu * total / cpu:.2f} x",
              flush=True)

    per = args.envs_per_worker
    if per:
        from hdeeprm.env.vector import BatchedVectorEnv

        envs = nb_processes * per
        shared = maker if args.gpu_scenario else built_maker(args.trace, args.jobs, args.observation, not args.no_mask)
        venv = BatchedVectorEnv([shared] * envs, workers=nb_processes, context=args.start_method)
        batched = np.random.default_rng(2).integers(n, size=(max(1, args.steps // per), envs))
        report(f"BatchedVectorEnv, {envs} envs on {nb_processes} processes ({per} per worker, shared memory)", envs,
               len(batched), *time_vector(venv, batched, [proc.pid for proc in venv.processes]))
    venv = gymnasium.vector.AsyncVectorEnv([maker] * nb_processes, shared_memory=shm, context=args.start_method)
    pids = [proc.pid for proc in venv.processes]
    report(f"AsyncVectorEnv, {nb_processes} envs on {nb_processes} processes (shared memory {'on' if shm else 'off'})",
           nb_processes, args.steps, *time_vector(venv, actions[:, :nb_processes], pids))
    try:
        from stable_baselines3.common.vec_env import SubprocVecEnv
    except ImportError:
        print("SubprocVecEnv: skipped (pip install stable-baselines3)")
    else:
        venv = SubprocVecEnv([maker] * nb_processes, start_method=args.start_method)
        pids = [proc.pid for proc in venv.processes]
        report(f"SubprocVecEnv, {nb_processes} envs on {nb_processes} processes", nb_processes, args.steps,
               *time_vector(venv, actions[:, :nb_processes], pids, sb3=True))
    nop = nop_maker(space, n)
    venv = gymnasium.vector.AsyncVectorEnv([nop] * nb_processes, shared_memory=shm, context=args.start_method)
    wall, _ = time_vector(venv, actions[:, :nb_processes], [proc.pid for proc in venv.processes])
    print(f"AsyncVectorEnv round trip of a do-nothing env: {wall / args.steps * 1e6:,.0f} us per vector step "
          f"(an HDeepRM step takes {1e6 / one:,.0f} us)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
