"""Start-up of ``hdeeprm-serve``: seconds to the first ``/health`` 200, and to the refusal of an unknown id.

Usage (from the repository root)::

    python benchmarks/bench_serve_start.py                         # GpuProvisioning-v1, median of 5 runs
    python benchmarks/bench_serve_start.py --runs 9 --env hdeeprm/GpuPlacement-v0 --kwargs scenario=easy-gen

Each run starts ``python -m hdeeprm.cli.serve ENV --port PORT`` as a separate process (as users run it) on
a free loopback port and polls ``/health`` every 20 ms until it answers 200 (the server is stopped right
after); then it runs ``python -m hdeeprm.cli.serve GpuProvisioning-v9`` (an unknown id) and times its exit
with status 2. Prints each run, the medians, and the machine's load (``uptime``) before and after, since
start-up time on a 2-core machine depends on what else runs. Timing is measured here, never asserted in
tests (``tests/serve/test_serve_cli.py`` keeps generous bounds).
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: The mistyped id of the refusal measurement.
UNKNOWN_ID = "GpuProvisioning-v9"


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def uptime() -> str:
    """``uptime``'s line (the load averages), or the load averages of ``os.getloadavg``."""
    try:
        return subprocess.run(["uptime"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "load average: " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def environ() -> dict[str, str]:
    """The environment of the server processes: this checkout first on the path."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}


def time_to_health(env_id: str, kwargs: list[str], max_seconds: float) -> float:
    """Seconds from starting ``hdeeprm-serve env_id`` to its first ``/health`` 200.

    Raises:
        RemoteEnvError: The server exited or did not answer within ``max_seconds``.
    """
    from hdeeprm.serve.client import wait_until_healthy

    port = free_port()
    start = time.perf_counter()
    server = subprocess.Popen([sys.executable, "-m", "hdeeprm.cli.serve", env_id, "--port", str(port), *kwargs],
                              cwd=ROOT, env=environ(), stderr=subprocess.PIPE, text=True)
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}", max_seconds, server, poll=0.02)
        return time.perf_counter() - start
    finally:
        server.terminate()
        server.communicate(timeout=30)


def time_to_refusal(max_seconds: float) -> float:
    """Seconds for ``hdeeprm-serve GpuProvisioning-v9`` to exit with status 2.

    Raises:
        RuntimeError: Another exit status.
    """
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "hdeeprm.cli.serve", UNKNOWN_ID, "--port", str(free_port())],
                          cwd=ROOT, env=environ(), capture_output=True, text=True, timeout=max_seconds)
    elapsed = time.perf_counter() - start
    if done.returncode != 2 or "unknown environment id" not in done.stderr:
        raise RuntimeError(f"expected a refusal with status 2, got {done.returncode}: {done.stderr.strip()}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    """Entry point: prints the runs and their medians; returns 0."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--env", default="hdeeprm/GpuProvisioning-v1", help="id to serve [hdeeprm/GpuProvisioning-v1]")
    p.add_argument("--kwargs", nargs="*", default=[], metavar="KEY=VALUE", help="environment arguments")
    p.add_argument("--runs", type=int, default=5, help="runs of each measurement [5]")
    p.add_argument("--max-seconds", type=float, default=120.0, help="bound of each run [120]")
    args = p.parse_args(argv)
    print(f"before: {uptime()}")
    health, refusal = [], []
    for k in range(args.runs):
        health.append(time_to_health(args.env, args.kwargs, args.max_seconds))
        refusal.append(time_to_refusal(args.max_seconds))
        print(f"run {k + 1}: /health 200 after {health[-1]:.2f} s, unknown id refused after {refusal[-1]:.2f} s")
    print(f"median of {args.runs}: /health 200 after {statistics.median(health):.2f} s ({args.env}), "
          f"unknown id refused after {statistics.median(refusal):.2f} s")
    print(f"after: {uptime()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
