"""Throughput of the Batsim-protocol server path: pybatsim's EASY against ``hdeeprm-batsim``.

Runs ``pybatsim easyBackfill`` (a separate process, as users run it) against
``hdeeprm-batsim`` on the golden kth2000-delay workload with the ideal platform,
and prints jobs per wall-clock second of the whole exchange. ``hdeeprm-batsim``
imports the HDeepRM of this checkout (its root is put first on PYTHONPATH),
whichever copy is installed.

Usage::

    python benchmarks/bench_server.py [--shared DIR] [--repeat 3]

``--shared`` defaults to ``$HDEEPRM_SHARED``, else ``../shared`` next to the checkout
(the folder holding ``batsim-golden/``).
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hdeeprm.simulation.batsim.pybatsim_adapter import free_loopback_port

ROOT = Path(__file__).resolve().parents[1]


def run_once(case: Path, outdir: Path) -> float:
    """Wall-clock seconds of one EASY run of kth2000-delay (ideal platform, -E).

    Args:
        case: The kth2000-delay folder (``platform_ideal.xml``, ``workload.json``).
        outdir: Scratch folder for the outputs and the scheduler's log.

    Returns:
        Seconds from starting ``hdeeprm-batsim`` to its exit.

    Raises:
        subprocess.CalledProcessError: ``hdeeprm-batsim`` failed.
        subprocess.TimeoutExpired: The scheduler did not stop within 30 s of the end.
    """
    endpoint = f"tcp://127.0.0.1:{free_loopback_port()}"
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT),
                                                                     os.environ.get("PYTHONPATH")])))
    with open(outdir / "sched.log", "wb") as log:
        sched = subprocess.Popen(["pybatsim", "easyBackfill", "-v", "warning", "-t", "60000",
                                  "-s", endpoint], stdout=log, stderr=subprocess.STDOUT)
    try:
        t0 = time.perf_counter()
        subprocess.run(["hdeeprm-batsim", "-p", str(case / "platform_ideal.xml"), "-w",
                        str(case / "workload.json"), "-s", endpoint, "-e", str(outdir / "out"),
                        "-E", "-v", "quiet", "--timeout", "60"], check=True, env=env)
        elapsed = time.perf_counter() - t0
        sched.wait(timeout=30)
    finally:
        if sched.poll() is None:
            sched.kill()
            sched.wait()
    return elapsed


def main() -> int:
    """Run the benchmark and print the figure.

    Returns:
        0, or 2 when the golden kth2000-delay folder is not found.
    """
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shared", default=os.environ.get("HDEEPRM_SHARED", ROOT.parent / "shared"))
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    case = Path(args.shared) / "batsim-golden" / "kth2000-delay"
    if not (case / "workload.json").is_file():
        print(f"bench_server: error: {case / 'workload.json'} not found; pass --shared DIR or set "
              f"HDEEPRM_SHARED", file=sys.stderr)
        return 2
    nb_jobs = 2000
    times = []
    for _ in range(args.repeat):
        with tempfile.TemporaryDirectory() as tmp:
            times.append(run_once(case, Path(tmp)))
    best = min(times)
    print(f"kth2000-delay easy-ideal via hdeeprm-batsim + pybatsim easyBackfill: {nb_jobs} jobs, "
          f"best of {args.repeat}: {best:.2f} s = {nb_jobs / best:.0f} jobs/s "
          f"(all: {', '.join(f'{t:.2f}' for t in times)} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
