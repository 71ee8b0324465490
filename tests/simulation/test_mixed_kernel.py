"""One kernel for cores and GPUs: a 2-node platform where jobs ask for cores, GPU shares or both, worked by hand.

Platform (node types of the shipped library): node 0 a Dell R720 (2 x Xeon E5-2660, 8 cores each, 95 W per
processor: 11.875 W per core; cores 0-15), node 1 a Dell R740 (2 x Xeon Gold 6248, 20 cores each, 150 W per
processor: 7.5 W per core; cores 16-55) with 2 x V100 PCIe 32GB (idle 30 W, TDP 250 W). The run's reference GPU
type is the V100 PCIe 32GB, so GPU jobs run their duration. Decisions: FCFS, fastest cores first
(``first-high_gflops``: node 1's cores, lowest id first), GPUs scored by ``best_fit``.

Jobs (all ``delay``, requested time = run time):

====  ==========  ======  ===============  ========
job   submit (s)  cores   GPUs             run (s)
====  ==========  ======  ===============  ========
F1    0           1       0.6 of one       100
F2    0           1       0.6 of one       300
M     10          4       1 whole          50
C     20          16      none             500
L     30          1       0.4 of one       400
====  ==========  ======  ===============  ========
"""
from __future__ import annotations

import json

import pytest

from hdeeprm.decision.actions import action_index
from hdeeprm.decision.strategies import make_start_strategy
from hdeeprm.platform.gpu_platform import load_gpu_cluster
from hdeeprm.platform.loader import load_platform
from hdeeprm.run.episode import Episode
from hdeeprm.simulation.gpu_model import GpuSpeedModel
from hdeeprm.workload.model import DELAY, Job, Profile, Workload


@pytest.fixture(scope="module")
def platform(tmp_path_factory):
    path = tmp_path_factory.mktemp("mixed") / "two_nodes.json"
    path.write_text(json.dumps({
        "clusters": [{"id": "mixed", "nodes": [{"type": "Dell R720", "number": 1},
                                               {"type": "Dell R740 2xV100", "number": 1}],
                      "local_links": {"type": "InfiniBand QDR", "latency": "0us"}}],
        "global_links": {"type": "InfiniBand QDR", "latency": "0us"}}))
    return load_platform(path), load_gpu_cluster(path)


def _jobs():
    rows = [("F1", 0, 1, 100, 1, 600), ("F2", 0, 1, 300, 1, 600), ("M", 10, 4, 50, 1, 1000), ("C", 20, 16, 500, 0, 0),
            ("L", 30, 1, 400, 1, 400)]
    return Workload([Job(i, name, float(t), res, -1.0, Profile(f"p{i}", DELAY, float(run)), requested_time=float(run),
                         num_gpu=num, gpu_milli=milli) for i, (name, t, res, run, num, milli) in enumerate(rows)])


def _run(platform, strategy):
    hierarchy, cluster = platform
    episode = Episode(hierarchy, _jobs(), actions=[action_index("first", "high_gflops")],
                      strategy=make_start_strategy(strategy), gpus=cluster,
                      gpu_speed=GpuSpeedModel(reference_type="V100 PCIe 32GB"))
    while episode.advance():
        episode.apply(0)
    return episode, episode.engine.result()


def test_easy_reserves_the_gpu_of_the_mixed_job_start_by_start(platform):
    episode, result = _run(platform, "easy_backfilling")
    # 0 s: F1 and F2 take one core each (16, 17) and 0.6 of a GPU: best_fit puts F2 on GPU 1 (0.4 left on GPU 0).
    # 10 s: M needs a whole GPU: none is free. Its reservation: F1's end (100 s) frees GPU 0 (the shadow time).
    # 20 s: C (16 cores, until 520 s) backfills on cores 18-33: at 100 s node 1 still has 23 free cores for M.
    # 30 s: L fits now (0.4 of GPU 0) but would hold GPU 0 past 100 s, when M needs it whole: it waits.
    # 100 s: F1 ends; M takes GPU 0 and cores 16, 34, 35, 36; L takes the 0.4 left on GPU 1 and core 37.
    assert result.start_time.tolist() == [0.0, 0.0, 100.0, 20.0, 100.0]
    assert result.finish_time.tolist() == [100.0, 300.0, 150.0, 520.0, 500.0]
    assert [list(a) for a in result.allocation] == [[16], [17], [16, 34, 35, 36], list(range(18, 34)), [37]]
    assert all(state.value == "COMPLETED_SUCCESSFULLY" for state in result.state)


def test_greedy_and_head_of_line_differ_as_expected(platform):
    # Greedy lets L take GPU 0 at 30 s: M waits for F2's GPU (300 s). Head of line starts nothing behind M.
    assert _run(platform, "greedy")[1].start_time.tolist() == [0.0, 0.0, 300.0, 20.0, 30.0]
    assert _run(platform, "head_of_line")[1].start_time.tolist() == [0.0, 0.0, 100.0, 100.0, 100.0]


def test_energy_of_cores_and_gpus_joule_by_joule(platform):
    episode, _ = _run(platform, "easy_backfilling")
    m = episode.metrics()
    # GPUs: 2 x 30 W idle + 220 W per allocated GPU: 1.2 GPUs on [0, 100), 2.0 on [100, 150), 1.0 on [150, 300),
    # 0.4 on [300, 500), none on [500, 520] (the window ends at the last job end).
    assert m["gpu_energy"] == pytest.approx(324 * 100 + 500 * 50 + 280 * 150 + 148 * 200 + 60 * 20)   # 130,200 J
    # Cores (docs/model.rst, pstates): a busy core draws P, an idle core of a busy processor 0.25 P, a core of an
    # idle processor 0.05 P. Node 0's two processors stay idle: 16 x 0.59375 W for 520 s.
    node0 = 16 * 0.59375 * 520
    # Processor 2 (cores 16-35, 7.5 W; idle 1.875 W): 2 busy cores on [0, 20), 18 on [20, 100), 20 on
    # [100, 150), 17 on [150, 300), 16 on [300, 520].
    p2 = sum((b * 7.5 + (20 - b) * 1.875) * dt for b, dt in ((2, 20), (18, 80), (20, 50), (17, 150), (16, 220)))
    # Processor 3 (cores 36-55): idle (0.375 W a core) on [0, 100), 2 busy on [100, 150), 1 on [150, 500), idle after.
    p3 = 20 * 0.375 * 100 + (2 * 7.5 + 18 * 1.875) * 50 + (7.5 + 19 * 1.875) * 350 + 20 * 0.375 * 20
    assert m["cpu_energy"] == pytest.approx(node0 + p2 + p3)                                       # 90,965 J
    assert m["energy"] == pytest.approx(m["cpu_energy"] + m["gpu_energy"])


def test_a_job_asking_for_more_gpus_than_any_node_is_rejected_with_its_reason(platform):
    hierarchy, cluster = platform
    jobs = Workload([Job(0, "big", 0.0, 2, -1.0, Profile("p", DELAY, 10.0), num_gpu=3, gpu_milli=1000)])
    episode = Episode(hierarchy, jobs, actions=[action_index("first", "high_gflops")], gpus=cluster)
    while episode.advance():
        episode.apply(0)
    assert [reason for _, reason in episode.manager.rejected] == [
        "requests 3 whole GPUs spread over 2 nodes (2+1 GPUs with 2 cores in proportion); the platform's nodes cannot "
        "hold them together"]


def test_a_gang_job_spreads_over_two_gpu_nodes_and_keeps_its_reservation(tmp_path):
    # Two Dell R740 2xV100 nodes (cores 0-39 and 40-79, 2 GPUs each), GPUs placed first_fit, EASY, FCFS.
    # S (1 core, 1 GPU, 100 s) at 0 s: node 0, core 0, GPU 0.
    # G (4 cores, 4 GPUs, 50 s) at 10 s: more GPUs than a node has, a gang of 2 + 2 GPUs with 2 + 2 cores. Node 0
    #   has one GPU left: G waits; its reservation is S's end (100 s), when both nodes are whole again.
    # T (1 core, 1 GPU, 200 s) at 20 s would hold a GPU past 100 s, so G could not start then: it waits.
    # U (1 core, 1 GPU, 60 s) at 30 s ends at 90 s, before the reservation: it backfills on node 0 (core 1, GPU 1).
    # 100 s: G starts, part 1 on node 0 (cores 0, 1, GPUs 0, 1), part 2 on node 1 (cores 40, 41, GPUs 0, 1).
    # 150 s: G ends; T starts on node 0 (core 0, GPU 0).
    path = tmp_path / "two_gpu_nodes.json"
    path.write_text(json.dumps({
        "clusters": [{"id": "gpus", "nodes": [{"type": "Dell R740 2xV100", "number": 2}],
                      "local_links": {"type": "InfiniBand QDR", "latency": "0us"}}],
        "global_links": {"type": "InfiniBand QDR", "latency": "0us"}}))
    rows = [("S", 0, 1, 100, 1), ("G", 10, 4, 50, 4), ("T", 20, 1, 200, 1), ("U", 30, 1, 60, 1)]
    jobs = Workload([Job(i, name, float(t), res, -1.0, Profile(f"p{i}", DELAY, float(run)), requested_time=float(run),
                         num_gpu=num, gpu_milli=1000) for i, (name, t, res, run, num) in enumerate(rows)])
    episode = Episode(load_platform(path), jobs, actions=[action_index("first", "high_gflops")],
                      strategy=make_start_strategy("easy_backfilling"), gpus=load_gpu_cluster(path),
                      gpu_placement="first_fit", gpu_speed=GpuSpeedModel(reference_type="V100 PCIe 32GB"))
    while episode.advance():
        episode.apply(0)
    result = episode.result()
    assert result.start_time.tolist() == [0.0, 100.0, 150.0, 30.0]
    assert result.finish_time.tolist() == [100.0, 150.0, 350.0, 90.0]
    assert [list(a) for a in result.allocation] == [[0], [0, 1, 40, 41], [0], [1]]
    assert [(p.node, p.gpus.tolist()) for p in result.gpu.placements[1]] == [(0, [0, 1]), (1, [0, 1])]
    assert result.gpu.speed[1] == 1.0   # no spread penalty unless the run sets one
