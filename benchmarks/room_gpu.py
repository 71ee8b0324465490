"""How much room the heuristics leave on queueing Philly windows on a heterogeneous GPU cluster, before any agent runs.

Usage (from the repository root)::

    python benchmarks/room_gpu.py                     # every triple on the 8 training and 5 test windows
    python benchmarks/room_gpu.py --workers 2 --csv /tmp/room_gpu.csv

**Scenario, fixed before any training** (issue 36, deliverable 1a): windows of 200 consecutive jobs of the Philly
table (``philly:derived``: Jeon et al., USENIX ATC 2019, jobs in submission order) replayed on
``platforms/mixed_cpu_gpu.json`` (4 Dell R740 nodes with 2 V100 PCIe each and 2 DGX A100 with 8 A100 SXM4 each:
two GPU generations of different speed and power, plus 8 CPU-only nodes). The windows are cut at fixed job
positions and split by time, so every test job was submitted after every training job:

- **training windows** (:data:`TRAIN_WINDOWS`): first jobs 20,000, 24,000, ..., 48,000 (8 windows);
- **held-out test windows** (:data:`TEST_WINDOWS`): first jobs 60,000, 64,000, ..., 76,000 (5 windows).

The replays are deterministic: the ``random`` placement and the node tie ranks draw from seed
:data:`SEED` (``GpuRunConfig.seed``). No window was chosen by looking at a result.

**Heuristics**: every triple of :data:`~hdeeprm.decision.gpu_scoring.GPU_PLACEMENTS` (10 placements, including the
speed- and power-aware ``high_gflops`` and ``low_power``) x :data:`~hdeeprm.decision.gpu_manager.GPU_ORDERINGS`
(3 orderings) x :data:`~hdeeprm.decision.gpu_manager.GPU_START_STRATEGIES` (4 start strategies): 120 triples,
replayed by :func:`~hdeeprm.run.gpu_replay.simulate_gpu` with the default speed model (run times scaled by the
GPU types' peak-rate ratios).

**Printed**: per window, its best triple by mean job completion time (JCT, s), that JCT, the mean bounded
slowdown (tau = 10 s) of the same run, and its queueing share (mean queueing delay / mean JCT); then per split
the *per-window oracle* (each window's best triple, chosen in hindsight: a bound no single policy reaches) and
the *best single triple*, chosen on the training windows by mean JCT and applied unchanged to the test windows
(the baseline an agent must beat), with the room: ``1 - oracle / best single``. Timing is measured here, never
asserted in tests.
"""
from __future__ import annotations

import argparse
import csv
import itertools
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
os.environ.setdefault("HDEEPRM_SHARED", str(ROOT.parent / "shared"))
sys.path.insert(0, str(ROOT))

#: The heterogeneous GPU platform of the scenario (V100 PCIe and A100 SXM4 nodes).
PLATFORM = "platforms/mixed_cpu_gpu.json"
#: The trace (a registry name, :mod:`hdeeprm.workload.datasets`).
TRACE = "philly:derived"
#: Jobs of a window.
WINDOW = 200
#: First job of each training window (all submitted before every test window's jobs).
TRAIN_WINDOWS = tuple(range(20_000, 48_001, 4_000))
#: First job of each held-out test window.
TEST_WINDOWS = tuple(range(60_000, 76_001, 4_000))
#: Seed of the replays (node tie ranks, the ``random`` placement).
SEED = 0


def triples() -> list[tuple[str, str, str]]:
    """Every (placement, ordering, start strategy) of the GPU replay, in registry order."""
    from hdeeprm.decision.gpu_manager import GPU_ORDERINGS, GPU_START_STRATEGIES
    from hdeeprm.decision.gpu_scoring import GPU_PLACEMENTS

    return list(itertools.product(GPU_PLACEMENTS.names(), GPU_ORDERINGS.names(), GPU_START_STRATEGIES))


def replay_window(first: int) -> dict[tuple[str, str, str], dict[str, float]]:
    """Every triple on the window starting at job ``first``: triple -> (JCT, bounded slowdown, queueing delay)."""
    from hdeeprm.outputs.gpu_outputs import gpu_summary
    from hdeeprm.platform.gpu_platform import load_gpu_cluster
    from hdeeprm.run.gpu_replay import GpuRunConfig, simulate_gpu
    from hdeeprm.workload.datasets import resolve_path
    from hdeeprm.workload.gpu_jobs import read_gpu_workload

    cluster = load_gpu_cluster(ROOT / PLATFORM)
    jobs = read_gpu_workload(resolve_path(TRACE, ROOT)).window(first, WINDOW)
    out = {}
    for placement, ordering, strategy in triples():
        config = GpuRunConfig(placement=placement, ordering=ordering, start_strategy=strategy, seed=SEED)
        m = gpu_summary(simulate_gpu(cluster, jobs, config))
        out[placement, ordering, strategy] = {"jct": m["jct_mean"], "bsld": m["mean_bounded_slowdown"],
                                              "delay": m["queueing_delay_mean"]}
    return out


def room(results: dict[int, dict], windows: tuple[int, ...], single: tuple[str, str, str]) -> tuple[float, float]:
    """(per-window oracle mean JCT, ``single``'s mean JCT) over ``windows``, seconds."""
    oracle = sum(min(r["jct"] for r in results[w].values()) for w in windows) / len(windows)
    return oracle, sum(results[w][single]["jct"] for w in windows) / len(windows)


def main(argv: list[str] | None = None) -> int:
    """Replay every triple on every window and print the room table."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=os.cpu_count(), help="processes (default: every core)")
    p.add_argument("--csv", metavar="FILE", help="also write every (window, triple) figure")
    args = p.parse_args(argv)
    tic, cpu = time.perf_counter(), time.process_time()
    windows = TRAIN_WINDOWS + TEST_WINDOWS
    with ProcessPoolExecutor(max(1, args.workers)) as pool:
        results = dict(zip(windows, pool.map(replay_window, windows)))
    names = triples()
    print(f"{len(names)} triples (placement + ordering + start strategy) on {WINDOW}-job Philly windows, {PLATFORM}")
    print(f"{'split':6s} {'first job':>9s}  {'best triple by mean JCT':46s} {'JCT s':>8s} {'bsld':>8s} {'queue':>6s}")
    for w in windows:
        best = min(names, key=lambda t: results[w][t]["jct"])
        r = results[w][best]
        print(f"{'train' if w in TRAIN_WINDOWS else 'test':6s} {w:>9,d}  {' + '.join(best):46s} {r['jct']:8.0f} "
              f"{r['bsld']:8.1f} {r['delay'] / r['jct']:6.1%}")
    single = min(names, key=lambda t: sum(results[w][t]["jct"] for w in TRAIN_WINDOWS))
    print(f"best single triple on the training windows: {' + '.join(single)}")
    for split, ws in (("train", TRAIN_WINDOWS), ("test", TEST_WINDOWS)):
        oracle, best = room(results, ws, single)
        bsld = sum(results[w][single]["bsld"] for w in ws) / len(ws)
        print(f"{split:5s}: best single {best:8.0f} s (bsld {bsld:.1f}), per-window oracle {oracle:8.0f} s: "
              f"room {1.0 - oracle / best:.1%}")
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as f:
            out = csv.writer(f)
            out.writerow(["first_job", "split", "placement", "ordering", "start_strategy", "jct_mean",
                          "mean_bounded_slowdown", "queueing_delay_mean"])
            for w in windows:
                for t in names:
                    r = results[w][t]
                    out.writerow([w, "train" if w in TRAIN_WINDOWS else "test", *t, r["jct"], r["bsld"], r["delay"]])
    print(f"{time.perf_counter() - tic:.1f} s wall, {time.process_time() - cpu:.1f} CPU-s in this process "
          f"({args.workers} workers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
