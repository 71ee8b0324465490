"""Peak memory and wall time of whole ``hdeeprm-launch`` runs as the number of jobs grows.

Usage (from the repository root)::

    python benchmarks/bench_memory.py                       # 1k, 5k, 20k jobs on a Curie-size platform
    python benchmarks/bench_memory.py --jobs 312000         # the length of the CEA-Curie log
    python benchmarks/bench_memory.py --nodes 153 --jobs 1000 54000   # a Gaia-size platform

Why synthetic: the issue's target is "CEA-Curie, the whole trace, in bounded memory (under
2 GB resident)", on a platform of its size. The CEA-Curie log of the Parallel Workloads
Archive (https://www.cs.huji.ac.il/labs/parallel/workload/l_cea_curie/index.html) is not among
the shared traces, so this script replays a Lublin-Feitelson trace of the same length
(``hdeeprm-workload generate``, :mod:`hdeeprm.workload.generators.lublin`, scaled to the
platform) on a platform of the same core count: 5,832 ``Dell R720`` nodes of the type library
(two 8-core Xeon E5-2660 each), 93,312 cores, the MaxProcs the issue gives for Curie. The
platform has Curie's size, not its hardware.

Each size runs in a fresh process (``hdeeprm-launch --quiet``, outputs streamed to a
temporary folder as jobs end, ``first-high_gflops``); the script prints the jobs, the wall
time, jobs/s, the peak resident memory of that process (``getrusage`` of the child, MiB) and
the memory per job added since the previous size. Timing and memory are measured here,
never asserted in tests.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from hdeeprm.decision.contention import bookkeeping_path
from hdeeprm.outputs.stream import output_rows_path

ROOT = Path(__file__).resolve().parents[1]
#: Node type and count of the default platform: 5,832 x 16 cores = 93,312 cores.
NODE_TYPE, CURIE_NODES, CORES_PER_NODE = "Dell R720", 5832, 16


def write_inputs(folder: Path, nb_nodes: int, nb_jobs: int, seed: int) -> Path:
    """Write the platform, the Lublin trace and the options file; returns the options path."""
    platform = json.loads((ROOT / "platforms" / "gaia.json").read_text())
    platform["_doc"] = {"what": f"{nb_nodes} {NODE_TYPE} nodes, the size benchmark of bench_memory.py"}
    platform["clusters"] = [dict(platform["clusters"][0], id="size_test",
                                 nodes=[{"type": NODE_TYPE, "number": nb_nodes}])]
    (folder / "platform.json").write_text(json.dumps(platform, indent=1))
    nb_cores = nb_nodes * CORES_PER_NODE
    trace = folder / f"lublin_{nb_jobs}.swf"
    subprocess.run([sys.executable, "-m", "hdeeprm.cli.workload", "generate", "--nb-cores", str(nb_cores),
                    "--nb-jobs", str(nb_jobs), "--seed", str(seed), "-o", str(trace)],
                   check=True, stdout=subprocess.DEVNULL)
    options = {"seed": seed, "nb_resources": nb_cores, "workload_file_path": trace.name,
               "platform_file_path": "platform.json",
               "pybatsim": {"log_level": "WARNING", "env": {"objective": "avg_job_slowdown"},
                            "agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops"}}}
    path = folder / f"options_{nb_jobs}.json"
    path.write_text(json.dumps(options))
    return path


#: What the child runs: hdeeprm-launch's main, then its own peak resident memory (KiB on Linux).
_CHILD = ("import resource, sys\n"
          "from hdeeprm.cli.launch import main\n"
          "rc = main(sys.argv[1:])\n"
          "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n"
          "sys.exit(rc)\n")


def run_launch(options: Path, outdir: Path) -> tuple[float, float]:
    """Run ``hdeeprm-launch --quiet`` in a child process; returns (wall seconds, its peak MiB)."""
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", _CHILD, str(options), "-o", str(outdir), "--quiet"],
                          check=True, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    return wall, int(done.stderr.strip().splitlines()[-1]) / 1024


def main(argv: list[str] | None = None) -> int:
    """Entry point."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--jobs", type=int, nargs="+", default=[1000, 5000, 20000],
                   help="numbers of jobs, ascending (each a fresh trace and process)")
    p.add_argument("--nodes", type=int, default=CURIE_NODES, help=f"{NODE_TYPE} nodes ({CURIE_NODES})")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    print(f"contention bookkeeping: {bookkeeping_path()}; output rows: {output_rows_path()}")
    print(f"platform: {args.nodes} x {NODE_TYPE} = {args.nodes * CORES_PER_NODE:,} cores; "
          f"Lublin-Feitelson trace, seed {args.seed}", flush=True)
    previous = None
    with tempfile.TemporaryDirectory(prefix="hdeeprm-mem-") as tmp:
        folder = Path(tmp)
        for n in args.jobs:
            options = write_inputs(folder, args.nodes, n, args.seed)
            wall, peak = run_launch(options, folder / f"out_{n}")
            extra = "" if previous is None else \
                f", {(peak - previous[1]) * 1024 / max(n - previous[0], 1):,.2f} KiB per added job"
            print(f"{n:>9,} jobs: {wall:8.1f} s wall, {n / wall:8,.0f} jobs/s, peak resident "
                  f"{peak:8,.0f} MiB{extra}", flush=True)
            previous = (n, peak)
            for f in (folder / f"out_{n}").glob("out_*.csv"):   # keep the disk use bounded too
                os.remove(f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
