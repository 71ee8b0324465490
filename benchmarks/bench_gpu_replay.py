"""Timed GPU replay: GPU placement policies and job orderings on a window of the Philly trace.

Usage (from the repository root)::

    python benchmarks/bench_gpu_replay.py                          # Philly jobs 20000..22999 on 20 DGX A100
    python benchmarks/bench_gpu_replay.py --platform $HDEEPRM_SHARED/traces/gpu/openb_node_list_gpu_node.csv
    python benchmarks/bench_gpu_replay.py --first 40000 --jobs 5000 --policies best_fit fgd

Replays the window with every policy (FCFS) and then every ordering (with ``best_fit``) through
:func:`hdeeprm.run.gpu_replay.simulate_gpu` and prints job completion time (mean, median,
p95, p99, hours), mean queueing delay (h), time-weighted GPU allocation rate (%), GPU energy (GJ),
makespan (days), rejected jobs and the wall time of each run. Timing is measured here, never asserted
in tests.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("HDEEPRM_SHARED", ROOT.parent / "shared"))
sys.path.insert(0, str(ROOT))

from hdeeprm.decision.gpu_manager import DEFAULT_GPU_ORDERING, GPU_ORDERINGS  # noqa: E402
from hdeeprm.outputs.gpu_outputs import gpu_summary  # noqa: E402
from hdeeprm.platform.gpu_platform import load_gpu_cluster  # noqa: E402
from hdeeprm.run.gpu_replay import GpuRunConfig, simulate_gpu  # noqa: E402
from hdeeprm.workload.gpu_jobs import read_gpu_workload  # noqa: E402

POLICIES = ("random", "first_fit", "best_fit", "worst_fit", "dot_product", "gpu_packing", "gpu_clustering", "fgd")


def main() -> int:
    """Run the benchmark; returns the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--platform", default=str(ROOT / "platforms" / "dgx_a100.json"))
    parser.add_argument("--workload", default=str(SHARED / "traces" / "gpu" / "philly-derived.csv.gz"))
    parser.add_argument("--first", type=int, default=20000)
    parser.add_argument("--jobs", type=int, default=3000)
    parser.add_argument("--policies", nargs="+", default=list(POLICIES))
    parser.add_argument("--seed", type=int, default=2017)
    args = parser.parse_args()
    cluster = load_gpu_cluster(args.platform)
    jobs = read_gpu_workload(args.workload).window(args.first, args.jobs)
    print(f"{len(jobs)} jobs of {Path(args.workload).name} (from {args.first}) on {cluster.nb_gpus} GPUs of "
          f"{cluster.nb_nodes} nodes ({Path(args.platform).name})")
    head = (f"{'policy':15s} {'ordering':20s} {'JCT mean':>9s} {'median':>8s} {'p95':>8s} {'p99':>8s} "
            f"{'queue h':>8s} {'alloc %':>8s} {'GJ':>8s} {'days':>6s} {'rej':>4s} {'wall s':>7s}")
    print(head)
    print("-" * len(head))
    runs = [(p, DEFAULT_GPU_ORDERING) for p in args.policies] + [("best_fit", o) for o in GPU_ORDERINGS.names()
                                                                   if o != DEFAULT_GPU_ORDERING]
    for policy, ordering in runs:
        tic = time.perf_counter()
        result = simulate_gpu(cluster, jobs, GpuRunConfig(placement=policy, ordering=ordering, seed=args.seed))
        wall = time.perf_counter() - tic
        m = gpu_summary(result)
        print(f"{policy:15s} {ordering:20s} {m['jct_mean'] / 3600:9.2f} {m['jct_median'] / 3600:8.2f} "
              f"{m['jct_p95'] / 3600:8.2f} {m['jct_p99'] / 3600:8.2f} {m['queueing_delay_mean'] / 3600:8.2f} "
              f"{100 * m['gpu_allocation_rate']:8.2f} {m['gpu_energy'] / 1e9:8.3f} {m['makespan'] / 86400:6.2f} "
              f"{m['nb_rejected']:4d} {wall:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
