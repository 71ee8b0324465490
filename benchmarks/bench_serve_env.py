"""Load test of ``hdeeprm-serve``: steps per second over the network beside the in-process environment.

Usage (from the repository root)::

    python benchmarks/bench_serve_env.py                           # GpuProvisioning-v1, easy, 2,000 steps
    python benchmarks/bench_serve_env.py --steps 5000 --clients 1 4 --task medium
    python benchmarks/bench_serve_env.py --env hdeeprm/GpuPlacement-v0 --kwargs scenario=easy-gen

Starts ``hdeeprm-serve ENV`` as a separate process (as users run it) on a free loopback port, then
drives ``--steps`` steps (actions drawn uniformly at random beforehand, from the action mask when there
is one; a new episode when one ends) in process, then through :class:`hdeeprm.serve.Client` over the
WebSocket session path and over the HTTP session routes, with each ``--clients`` count of concurrent
clients (threads of this process, each with its own session and seed; the total is ``--steps`` per
client). Prints steps/s of each and the ratio to in-process. Bounded: ``--steps`` per client, at most
``--max-seconds`` per line. Timing is measured here, never asserted in tests.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def drive(env, steps: int, seed: int, deadline: float) -> int:
    """Run ``steps`` random steps on ``env`` (stops at ``deadline``); returns the steps taken."""
    rng = np.random.default_rng(seed)
    _, info = env.reset(seed=seed)
    n = env.action_space.n
    for k in range(steps):
        mask = info.get("action_mask")
        allowed = np.flatnonzero(mask) if mask is not None and mask.any() else None
        action = int(rng.choice(allowed)) if allowed is not None else int(rng.integers(n))
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            _, info = env.reset()
        if time.monotonic() > deadline:
            return k + 1
    return steps


def concurrent(make, clients: int, steps: int, max_seconds: float) -> float:
    """Steps per second of ``clients`` environments from ``make`` driven at once (one thread each)."""
    envs = [make() for _ in range(clients)]
    done = [0] * clients
    deadline = time.monotonic() + max_seconds

    def run(i: int) -> None:
        done[i] = drive(envs[i], steps, seed=i, deadline=deadline)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    start = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - start
    for env in envs:
        env.close()
    return sum(done) / elapsed


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    import gymnasium

    import hdeeprm
    from hdeeprm.cli.serve import parse_assignments
    from hdeeprm.serve import Client
    from hdeeprm.serve.client import RemoteEnvError, wait_until_healthy
    from hdeeprm.simulation.batsim.pybatsim_adapter import free_loopback_port

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default=hdeeprm.GPU_PROVISIONING_V1_ENV_ID)
    p.add_argument("--task", default="easy", help="reset's task ('' for none)")
    p.add_argument("--kwargs", nargs="*", default=[], metavar="KEY=VALUE", help="environment arguments")
    p.add_argument("--steps", type=int, default=2000, help="steps per client")
    p.add_argument("--clients", type=int, nargs="+", default=[1, 4])
    p.add_argument("--max-seconds", type=float, default=60.0, help="bound of each measurement")
    args = p.parse_args(argv)
    kwargs = parse_assignments(args.kwargs)
    task = args.task or None

    port = free_loopback_port()
    url = f"http://127.0.0.1:{port}"
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    server = subprocess.Popen([sys.executable, "-m", "hdeeprm.cli.serve", args.env, "--port", str(port),
                               "--max-sessions", str(2 * max(args.clients)), *args.kwargs], cwd=ROOT, env=environ)
    try:
        try:
            wait_until_healthy(url, 60, server)
        except RemoteEnvError as exc:
            print(exc, file=sys.stderr)
            return 1
        local_kwargs = {**kwargs, **({"task": task} if task else {})}
        print(f"{args.env} task={task} {args.steps} steps per client, server on {url} (separate process)")
        print(f"{'clients':>7} {'in-process':>11} {'WebSocket':>10} {'HTTP':>8}   steps/s (ratio to in-process)")
        for clients in args.clients:
            local = concurrent(lambda: gymnasium.make(args.env, **local_kwargs), clients, args.steps,
                               args.max_seconds)
            ws = concurrent(lambda: Client(url, task=task), clients, args.steps, args.max_seconds)
            http = concurrent(lambda: Client(url, task=task, transport="http"), clients, args.steps,
                              args.max_seconds)
            print(f"{clients:>7} {local:>11.0f} {ws:>10.0f} {http:>8.0f}   (WebSocket {ws / local:.3f}, "
                  f"HTTP {http / local:.3f})")
    finally:
        server.terminate()
        server.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
