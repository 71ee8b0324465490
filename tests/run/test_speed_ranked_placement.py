"""``high_gflops`` ranks GPU types by the run's own speed model, in the GPU replay and in a mixed run (hand-worked).

A job's run time on a GPU type is its duration (on the reference type, V100 SXM2 16GB by default) times the type's
run-time factor: ``rate(reference) / rate(type)`` at the run's ``precision`` (library peak rates), a ``stand_in``'s
rates for a type without them, or ``1 / throughput`` for a type the run measured. ``high_gflops`` must put first
the type with the smallest factor *of this run*, not the one fastest by the datasheet's FP32 rate.

Library peak rates (TFLOP/s) used below: V100 SXM2 15.7 FP32 / 125 FP16, T4 8.1 / 65, P100 PCIe 9.3 / 18.7,
V100 PCIe 32GB 14.0 FP32, A100 SXM4 19.5 FP32; the openb type G2 has none (it runs at its stand-in's rates).
"""
from __future__ import annotations

import json

import pytest

from hdeeprm.decision.actions import action_index
from hdeeprm.platform.gpu_platform import load_gpu_cluster
from hdeeprm.platform.loader import load_platform
from hdeeprm.platform.openb import gpu_cluster
from hdeeprm.run.episode import Episode
from hdeeprm.run.gpu_replay import GpuRunConfig, simulate_gpu
from hdeeprm.simulation.gpu_model import GpuSpeedModel
from hdeeprm.workload.gpu_jobs import gpu_jobs
from hdeeprm.workload.model import DELAY, Job, Profile, Workload


def _replay(types, **speed):
    # one single-GPU node per type, in this order; one whole-GPU job of 100 s on the reference type
    cluster = gpu_cluster([(f"n{k}", 8000, 65536, 1, name) for k, name in enumerate(types)])
    jobs = gpu_jobs([("j", 0, 100, 1, 1000, 1000, 1024, 0, "")])
    result = simulate_gpu(cluster, jobs, GpuRunConfig(placement="high_gflops", **speed))
    return [p.node for p in result.gpu.placements[0]], float(result.finish_time[0])


@pytest.mark.parametrize("types, speed, node, run_time", [
    # Datasheet (FP32): A100 factor 15.7 / 19.5 = 0.805, T4 15.7 / 8.1 = 1.938: the A100.
    (("T4", "A100 SXM4 40GB"), {}, 1, 100 * 15.7 / 19.5),
    # Measured: these jobs run 3x as fast on a T4 as on the reference (factor 1/3 < 0.805): the T4.
    (("T4", "A100 SXM4 40GB"), {"throughput": {"T4": 3.0}}, 0, 100 / 3),
    # FP32: P100 15.7 / 9.3 = 1.688 beats T4 1.938; FP16: T4 125 / 65 = 1.923 beats P100 125 / 18.7 = 6.684.
    (("T4", "P100 PCIe 16GB"), {}, 1, 100 * 15.7 / 9.3),
    (("T4", "P100 PCIe 16GB"), {"precision": "fp16"}, 0, 100 * 125 / 65),
    # G2 has no rates: it runs as its stand-in. FP16, stand-in the reference (factor 1): G2 beats T4 (1.923);
    # stand-in a P100 (6.684): the T4.
    (("T4", "G2"), {"precision": "fp16"}, 1, 100.0),
    (("T4", "G2"), {"precision": "fp16", "stand_in": "P100 PCIe 16GB"}, 0, 100 * 125 / 65),
])
def test_the_replay_places_on_the_runs_fastest_type(types, speed, node, run_time):
    placed, finish = _replay(types, **speed)
    assert placed == [node]
    assert finish == pytest.approx(run_time)


def _mixed(tmp_path, speed: GpuSpeedModel):
    # Node 0: Dell R740 2xV100 (V100 PCIe 32GB, 40 cores), node 1: DGX A100 (A100 SXM4 40GB, 128 cores).
    path = tmp_path / "two_nodes.json"
    path.write_text(json.dumps({
        "clusters": [{"id": "two", "nodes": [{"type": "Dell R740 2xV100", "number": 1},
                                             {"type": "DGX A100", "number": 1}],
                      "local_links": {"type": "InfiniBand QDR", "latency": "0us"}}],
        "global_links": {"type": "InfiniBand QDR", "latency": "0us"}}))
    hierarchy, cluster = load_platform(path), load_gpu_cluster(path)
    assert [t.name for t in cluster.gpu_types] == ["V100 PCIe 32GB", "A100 SXM4 40GB"]
    jobs = Workload([Job(0, "X", 0.0, 2, -1.0, Profile("p0", DELAY, 100.0), requested_time=100.0, num_gpu=1,
                         gpu_milli=1000)])
    episode = Episode(hierarchy, jobs, actions=[action_index("first", "high_gflops")], gpus=cluster,
                      gpu_placement="high_gflops", gpu_speed=speed)
    while episode.advance():
        episode.apply(0)
    result = episode.engine.result()
    return {int(hierarchy.core_node[c]) for c in result.allocation[0]}, float(result.finish_time[0])


def test_a_mixed_run_places_on_its_fastest_type(tmp_path):
    # Datasheet: A100 0.805 < V100 PCIe 15.7 / 14.0 = 1.121: the DGX A100 (node 1).
    assert _mixed(tmp_path, GpuSpeedModel()) == ({1}, pytest.approx(100 * 15.7 / 19.5))
    # Measured: 2x the reference's speed on the V100 PCIe (factor 0.5 < 0.805): the R740 (node 0).
    assert _mixed(tmp_path, GpuSpeedModel(throughput={"V100 PCIe 32GB": 2.0})) == ({0}, pytest.approx(50.0))
