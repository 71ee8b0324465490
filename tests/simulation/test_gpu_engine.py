"""The timed GPU replay on tiny hand-worked platforms, and a Philly window on the real openb cluster."""
from __future__ import annotations

import numpy as np
import pytest

from hdeeprm.decision.gpu_manager import GPU_ORDERINGS
from hdeeprm.errors import OptionsError, WorkloadError
from hdeeprm.platform.openb import gpu_cluster
from hdeeprm.run.gpu_replay import GpuRunConfig, simulate_gpu
from hdeeprm.workload.gpu_jobs import gpu_jobs

V100 = "V100M16"   # openb alias of the reference type V100 SXM2 16GB: speed factor 1, idle 40 W, TDP 300 W



def _two_gpu_node():
    return gpu_cluster([("n0", 8000, 65536, 2, V100)])


def _mixed_jobs():
    # id, submit, duration, num_gpu, gpu_milli, cpu_milli, memory_mib, gpu_memory_mib, spec
    return gpu_jobs([("frac", 0, 100, 1, 500, 1000, 1024, 0, ""), ("pair", 10, 50, 2, 1000, 1000, 1024, 0, ""),
                     ("one", 20, 30, 1, 1000, 0, 0, 0, "")])


def test_fractional_and_whole_gpu_jobs_on_one_two_gpu_node():
    result = simulate_gpu(_two_gpu_node(), _mixed_jobs(), GpuRunConfig(placement="first_fit"))
    # frac takes half of GPU 0 at 0 s; pair needs both GPUs whole: waits until frac ends at 100 s;
    # one fits GPU 1 at 20 s (non-blocking queue) and ends at 50 s.
    assert result.start_time.tolist() == [0.0, 100.0, 20.0]
    assert result.finish_time.tolist() == [100.0, 150.0, 50.0]
    assert result.gpu.gpu_ids(0) == [0] and result.gpu.gpu_ids(1) == [0, 1] and result.gpu.gpu_ids(2) == [1]
    assert result.gpu.timeline.allocated.tolist() == [500, 500, 1500, 500, 2000, 0]
    # power: 2 x 40 W idle + 260 W x allocated GPUs; energy from 0 s to the last end (150 s)
    assert result.gpu.energy == pytest.approx(210 * 20 + 470 * 30 + 210 * 50 + 600 * 50)


def test_blocking_queue_keeps_the_head_of_line():
    config = GpuRunConfig(placement="first_fit", start_strategy="head_of_line")
    result = simulate_gpu(_two_gpu_node(), _mixed_jobs(), config)
    assert result.start_time.tolist() == [0.0, 100.0, 150.0]
    assert result.finish_time.tolist() == [100.0, 150.0, 180.0]


def test_job_fits_only_on_its_allowed_type_and_runs_at_that_type_speed():
    cluster = gpu_cluster([("t4", 8000, 65536, 1, "T4"), ("v100", 8000, 65536, 1, V100)])
    jobs = gpu_jobs([("v", 0, 100, 1, 1000, 0, 0, 0, V100), ("any", 0, 100, 1, 1000, 0, 0, 0, "")])
    result = simulate_gpu(cluster, jobs, GpuRunConfig(placement="first_fit"))
    assert [p.node for p in result.gpu.placements[0]] == [1]
    assert [p.node for p in result.gpu.placements[1]] == [0]
    assert result.finish_time[0] == 100.0
    assert result.finish_time[1] == pytest.approx(100 * 15.7 / 8.1)   # FP32 rate ratio V100 SXM2 / T4


def test_gpu_memory_constraint_selects_the_type():
    cluster = gpu_cluster([("t4", 8000, 65536, 1, "T4"), ("v32", 8000, 65536, 1, "V100M32")])
    jobs = gpu_jobs([("big", 0, 10, 1, 1000, 0, 0, 20 * 1024, "")])
    result = simulate_gpu(cluster, jobs, GpuRunConfig(placement="first_fit"))
    assert [p.node for p in result.gpu.placements[0]] == [1]


def test_energy_of_a_half_utilized_gpu():
    cluster = gpu_cluster([("n0", 8000, 65536, 1, V100)])
    jobs = gpu_jobs([("half", 0, 100, 1, 500, 0, 0, 0, "")])
    result = simulate_gpu(cluster, jobs)
    # 40 W idle + (300 - 40) W x 0.5 = 170 W for 100 s; the job's own energy is 300 W x 0.5 x 100 s
    assert result.gpu.energy == pytest.approx(17000.0)
    assert result.gpu.job_energy[0] == pytest.approx(15000.0)
    assert result.gpu.timeline.power.tolist() == [170.0, 40.0]


def test_never_fitting_jobs_are_rejected_with_their_reason():
    jobs = gpu_jobs([("four", 0, 10, 4, 1000, 0, 0, 0, ""), ("a100", 0, 10, 1, 1000, 0, 0, 0, "A100"),
                     ("cpu", 5, 10, 1, 1000, 9000, 0, 0, ""), ("ok", 5, 10, 1, 1000, 0, 0, 0, "")])
    result = simulate_gpu(_two_gpu_node(), jobs)
    assert result.rejected.tolist() == [True, True, True, False]
    assert result.reasons[0] == "asks for 4 GPUs, the cluster has 2 allowed"
    assert result.reasons[1].startswith("no node has a GPU of an allowed model (gpu_spec A100")
    assert result.reasons[2].startswith("fits no node even when the cluster is empty (9000 milli-CPU")
    assert result.finish_time[:3].tolist() == [0.0, 0.0, 5.0]
    assert result.start_time[3] == 5.0


def test_a_job_wider_than_any_node_spreads_and_pays_the_spread_factor():
    cluster = gpu_cluster([("n0", 8000, 65536, 2, V100), ("n1", 8000, 65536, 2, V100)])
    jobs = gpu_jobs([("wide", 0, 100, 3, 1000, 0, 0, 0, ""), ("frac", 0, 100, 1, 250, 0, 0, 0, "")])
    result = simulate_gpu(cluster, jobs, GpuRunConfig(spread_slowdown=1.5, share_slowdown=1.2))
    assert sorted(p.node for p in result.gpu.placements[0]) == [0, 1]
    assert result.finish_time[0] == pytest.approx(150.0)
    assert result.finish_time[1] == pytest.approx(120.0)


def test_a_spread_job_whose_parts_cannot_fit_together_is_rejected():
    """4 GPUs on nodes of 2, 1 and 1 GPUs: parts 2 + 2, each fits n0 alone, never both at once."""
    cluster = gpu_cluster([("n0", 8000, 65536, 2, V100), ("n1", 8000, 65536, 1, V100),
                           ("n2", 8000, 65536, 1, V100)])
    jobs = gpu_jobs([("wide", 0, 100, 4, 1000, 0, 0, 0, ""), ("ok", 0, 10, 3, 1000, 0, 0, 0, "")])
    result = simulate_gpu(cluster, jobs)
    assert result.rejected.tolist() == [True, False]
    assert result.reasons[0].startswith("its parts (2+2 GPUs) do not fit the empty cluster together")
    assert sorted(p.node for p in result.gpu.placements[1]) == [0, 1]


def test_orderings_are_registered_and_bad_options_fail():
    assert set(GPU_ORDERINGS.names()) >= {"first", "smallest_gpu_demand", "shortest_gpu_time"}
    with pytest.raises(OptionsError, match="unknown GPU job ordering"):
        simulate_gpu(_two_gpu_node(), _mixed_jobs(), GpuRunConfig(ordering="lifo"))
    with pytest.raises(OptionsError, match=">= 1"):
        simulate_gpu(_two_gpu_node(), _mixed_jobs(), GpuRunConfig(share_slowdown=0.5))
    with pytest.raises(WorkloadError, match="gpu_milli"):
        gpu_jobs([("bad", 0, 10, 2, 500, 0, 0, 0, "")])


def test_smallest_gpu_demand_ordering_starts_the_small_job_first():
    cluster = gpu_cluster([("n0", 8000, 65536, 2, V100)])
    jobs = gpu_jobs([("hold", 0, 10, 2, 1000, 0, 0, 0, ""), ("big", 1, 10, 2, 1000, 0, 0, 0, ""),
                     ("small", 2, 10, 1, 1000, 0, 0, 0, "")])
    fcfs = simulate_gpu(cluster, jobs, GpuRunConfig(start_strategy="head_of_line"))
    small = simulate_gpu(cluster, jobs, GpuRunConfig(start_strategy="head_of_line", ordering="smallest_gpu_demand"))
    assert fcfs.start_time.tolist() == [0.0, 10.0, 20.0]
    assert small.start_time.tolist() == [0.0, 20.0, 10.0]


def _max_share_per_gpu(result) -> int:
    """Largest total share any GPU holds at any instant (sweep over start/end events)."""
    events = []
    for job, placed in enumerate(result.gpu.placements):
        for p in placed:
            for g in p.gpus:
                gid = int(result.gpu.gpu_offset[p.node] + g)
                events.append((result.finish_time[job], 0, gid, -p.pod.gpu_milli))
                events.append((result.start_time[job], 1, gid, p.pod.gpu_milli))
    load: dict[int, int] = {}
    worst = 0
    for _t, _kind, gid, delta in sorted(events):
        load[gid] = load.get(gid, 0) + delta
        worst = max(worst, load[gid])
    return worst


@pytest.mark.slow
def test_philly_window_on_openb_respects_capacity_and_is_deterministic(shared):
    from hdeeprm.platform.openb import read_openb_nodes
    from hdeeprm.workload.gpu_jobs import read_gpu_workload

    cluster = read_openb_nodes(shared / "traces/gpu/openb_node_list_gpu_node.csv")
    jobs = read_gpu_workload(shared / "traces/gpu/philly-derived.csv.gz").window(1000, 600)
    config = GpuRunConfig(placement="best_fit", seed=3)
    first = simulate_gpu(cluster, jobs, config)
    again = simulate_gpu(cluster, jobs, config)
    assert len(jobs) == 600
    assert np.array_equal(first.start_time, again.start_time, equal_nan=True)
    assert np.array_equal(first.finish_time, again.finish_time, equal_nan=True)
    assert first.gpu.energy == again.gpu.energy
    assert sorted(first.completion_order) == list(range(600))
    ran = ~first.rejected
    assert np.all(first.start_time[ran] >= jobs.submit[ran]) and np.all(first.finish_time[ran] > first.start_time[ran])
    assert all(first.reasons[i] for i in np.flatnonzero(first.rejected))
    assert _max_share_per_gpu(first) <= 1000
    assert first.gpu.timeline.allocated.max() <= 1000 * cluster.nb_gpus
    assert "G2" in first.gpu.stand_ins   # no rates or power published: the reference type stands in


@pytest.mark.slow
def test_backfilling_on_a_philly_window_keeps_capacity_and_the_reservations(shared):
    # 300 Philly jobs on 4 DGX A100 nodes (32 GPUs): the queue builds up, so reservations matter.
    from hdeeprm.workload.gpu_jobs import read_gpu_workload

    cluster = gpu_cluster([(f"dgx{i}", 256000, 1048576, 8, "A100 SXM4 40GB") for i in range(4)])
    jobs = read_gpu_workload(shared / "traces/gpu/philly-derived.csv.gz").window(20000, 300)
    runs = {s: simulate_gpu(cluster, jobs, GpuRunConfig(start_strategy=s, seed=1))
            for s in ("head_of_line", "easy_backfilling", "conservative_backfilling")}
    for result in runs.values():
        ran = ~result.rejected
        assert sorted(result.completion_order) == list(range(300))
        assert np.all(result.start_time[ran] >= jobs.submit[ran])
        assert _max_share_per_gpu(result) <= 1000
    wait = {s: float(np.nanmean(r.start_time - jobs.submit)) for s, r in runs.items()}
    # Backfilling fills holes the head of line leaves: both wait less on average.
    assert wait["conservative_backfilling"] < wait["head_of_line"] and wait["easy_backfilling"] < wait["head_of_line"]


def test_release_restores_the_placement_state_and_its_fragmentation():
    from hdeeprm.decision.gpu_placement import PlacementState, PodRequest
    from hdeeprm.decision.fragmentation import typical_pods

    cluster = _two_gpu_node()
    typical = typical_pods(_mixed_jobs().as_pods(), cluster.models)
    state = PlacementState(cluster, typical)
    before = (state.gpu_left.copy(), state.frag.copy(), state.shapes.copy(), state.cpu_left.copy())
    pod = PodRequest(1000, 1024, 1, 500, np.array([True, False]))
    state.place(0, np.array([1]), pod)
    state.place(0, np.array([1]), pod)
    assert state.gpu_left[0].tolist() == [1000, 0] and state.frag[0] != before[1][0]
    state.release(0, np.array([1]), pod)
    assert state.shapes[0, 0]   # one shared pod still there
    state.release(0, np.array([1]), pod)
    for now, then in zip((state.gpu_left, state.frag, state.shapes, state.cpu_left), before):
        assert np.array_equal(now, then)


def test_a_throughput_table_overrides_the_rate_ratio():
    cluster = gpu_cluster([("t4", 8000, 65536, 1, "T4")])
    jobs = gpu_jobs([("j", 0, 100, 1, 1000, 0, 0, 0, "")])
    result = simulate_gpu(cluster, jobs, GpuRunConfig(throughput={"T4": 0.25}))
    assert result.finish_time[0] == pytest.approx(400.0)
    with pytest.raises(OptionsError, match="must be a known gpu type"):
        simulate_gpu(cluster, jobs, GpuRunConfig(throughput={"T5": 0.25}))


def _reservation_jobs():
    # A (1 GPU, 100 s) runs from 0 s; B (both GPUs, 50 s) arrives at 10 s and blocks; C (1 GPU, 200 s) at 20 s
    # and D (1 GPU, 60 s) at 30 s could take the free GPU.
    return gpu_jobs([("A", 0, 100, 1, 1000, 0, 0, 0, ""), ("B", 10, 50, 2, 1000, 0, 0, 0, ""),
                     ("C", 20, 200, 1, 1000, 0, 0, 0, ""), ("D", 30, 60, 1, 1000, 0, 0, 0, "")])


@pytest.mark.parametrize("strategy, starts", [
    # greedy: C takes GPU 1 at 20 s until 220 s, D takes GPU 0 when A ends (100 s): B is overtaken by both
    # and waits until C ends (220 s).
    ("greedy", [0.0, 220.0, 20.0, 100.0]),
    # head of line: nothing passes B, which starts when A ends (100 s); C and D follow at 150 s.
    ("head_of_line", [0.0, 100.0, 150.0, 150.0]),
    # EASY: B's reservation is at A's end (100 s, the shadow time). C would hold GPU 1 past it: it waits.
    # D ends at 30 + 60 = 90 s <= 100 s: it backfills at 30 s. B starts at 100 s as reserved, C at 150 s.
    ("easy_backfilling", [0.0, 100.0, 150.0, 30.0]),
])
def test_a_large_gpu_job_gets_a_reservation_under_easy(strategy, starts):
    result = simulate_gpu(_two_gpu_node(), _reservation_jobs(), GpuRunConfig(start_strategy=strategy))
    assert result.start_time.tolist() == starts


def test_conservative_backfilling_protects_every_reservation_where_easy_protects_the_head():
    # Two nodes of 2 GPUs, first_fit. A (2 GPUs, 50 s) takes n0 and X (1 GPU, 100 s) n1 at 0 s. B (2 GPUs, 200 s)
    # blocks at 10 s: its reservation is n0 at 50 s (A's end). C (2 GPUs, 10 s) blocks at 20 s: conservative
    # reserves n1 for it at 100 s (X's end). D (1 GPU, 100 s) at 30 s fits n1's free GPU until 130 s.
    # EASY: D does not delay the head B (n0 is free at 50 s): it starts at 30 s, and C waits for it until 130 s.
    # Conservative: D would hold n1 into C's reservation [100, 110): it is reserved after C, on n1 at 110 s.
    cluster = gpu_cluster([("n0", 8000, 65536, 2, V100), ("n1", 8000, 65536, 2, V100)])
    jobs = gpu_jobs([("A", 0, 50, 2, 1000, 0, 0, 0, ""), ("X", 0, 100, 1, 1000, 0, 0, 0, ""),
                     ("B", 10, 200, 2, 1000, 0, 0, 0, ""), ("C", 20, 10, 2, 1000, 0, 0, 0, ""),
                     ("D", 30, 100, 1, 1000, 0, 0, 0, "")])
    easy = simulate_gpu(cluster, jobs, GpuRunConfig(placement="first_fit", start_strategy="easy_backfilling"))
    assert easy.start_time.tolist() == [0.0, 0.0, 50.0, 130.0, 30.0]
    conservative = simulate_gpu(cluster, jobs, GpuRunConfig(placement="first_fit",
                                                            start_strategy="conservative_backfilling"))
    assert conservative.start_time.tolist() == [0.0, 0.0, 50.0, 100.0, 110.0]
    assert [p.node for p in conservative.gpu.placements[3]] == [1] and conservative.gpu.gpu_ids(4) == [2]


def test_conservative_backfilling_on_the_reservation_case_lets_d_pass_within_the_shadow():
    # The EASY case above it: D (ends 90 s) fits before B's reservation at 100 s; C is reserved after B (150 s).
    result = simulate_gpu(_two_gpu_node(), _reservation_jobs(), GpuRunConfig(start_strategy="conservative_backfilling"))
    assert result.start_time.tolist() == [0.0, 100.0, 150.0, 30.0]


def test_a_cpu_only_job_runs_its_duration_whatever_the_gpus_of_its_node():
    # The T4 node is ~1.94x slower than the V100 reference; a pod that uses no GPU must not pay it
    # (issue 22: a 151 s CPU-only pod ran 292.68 s on a T4 node).
    cluster = gpu_cluster([("t4", 8000, 65536, 1, "T4")])
    jobs = gpu_jobs([("cpu", 0, 151, 0, 0, 1000, 1024, 0, ""), ("gpu", 0, 100, 1, 1000, 1000, 1024, 0, "")])
    result = simulate_gpu(cluster, jobs, GpuRunConfig(placement="first_fit"))
    assert result.gpu.speed.tolist() == [1.0, pytest.approx(15.7 / 8.1)]
    assert result.finish_time[0] == 151.0
    assert result.finish_time[1] == pytest.approx(100 * 15.7 / 8.1)


def test_weighted_placement_policies_score_together_as_kubernetes_plugins():
    # node 0 has 1 of its 2 GPUs taken by "a" (first job); "b" asks for 1 GPU: first_fit prefers node 0 (lowest
    # index), worst_fit node 1 (most left). Each policy's scores are scaled to [0, 100] over the fitting nodes, then
    # weighted: the heavier one decides.
    cluster = gpu_cluster([("n0", 8000, 65536, 2, V100), ("n1", 8000, 65536, 2, V100)])
    jobs = gpu_jobs([("a", 0, 100, 1, 1000, 0, 0, 0, ""), ("b", 10, 100, 1, 1000, 0, 0, 0, "")])
    for placement, node in (("first_fit", 0), ("worst_fit", 1), ("first_fit:1+worst_fit:2", 1),
                            ("first_fit:2+worst_fit:1", 0)):
        result = simulate_gpu(cluster, jobs, GpuRunConfig(placement=placement))
        assert [p.node for p in result.gpu.placements[1]] == [node], placement
    # one policy with a weight places exactly as the policy alone
    alone = simulate_gpu(_two_gpu_node(), _mixed_jobs(), GpuRunConfig(placement="best_fit"))
    weighted = simulate_gpu(_two_gpu_node(), _mixed_jobs(), GpuRunConfig(placement="best_fit:3"))
    assert weighted.start_time.tolist() == alone.start_time.tolist() and weighted.gpu.gpu_ids(0) == alone.gpu.gpu_ids(0)


@pytest.mark.parametrize("placement, message", [
    ("fdg", "unknown GPU placement policy 'fdg' (valid: random, first_fit, best_fit, worst_fit, dot_product, "
            "gpu_packing, gpu_clustering, fgd, high_gflops, low_power; did you mean 'fgd'?)"),
    ("fgd:x", "placement 'fgd:x': the weight of 'fgd' must be a number, got 'x' (write e.g. 'fgd:1+best_fit:0.5')"),
    ("fgd:0+best_fit", "the weight of placement policy 'fgd' must be a finite number > 0, got 0.0"),
])
def test_a_bad_placement_is_one_line_when_the_options_load(placement, message, tmp_path):
    from hdeeprm.config.options import parse_options

    with pytest.raises(OptionsError) as err:
        parse_options({"gpu": {"placement": placement}}, str(tmp_path / "o.json"))
    assert str(err.value) == f"gpu.placement: {message} ({tmp_path / 'o.json'})"


def test_the_gpu_model_is_a_resource_model_and_its_fit_test_follows_the_shares():
    from hdeeprm.decision.gpu_placement import Placement, PodRequest
    from hdeeprm.simulation.gpu_model import GpuModel
    from hdeeprm.simulation.resource_model import ResourceModel

    model = GpuModel(_two_gpu_node(), _mixed_jobs())
    assert isinstance(model, ResourceModel) and model.name == "gpu"
    allowed = np.ones(2, dtype=bool)

    def on(gpus, milli):
        return [Placement(0, np.array(gpus), PodRequest(0, 0, len(gpus), milli, allowed))]

    model.advance(0.0)
    assert model.fits(0, on([0], 500)) and model.start(0, on([0], 500), 100.0) == 1.0
    # GPU 0 holds 500 of 1000: another half fits there, a whole GPU does not; GPU 1 is free
    assert model.fits(1, on([0], 500)) and not model.fits(1, on([0], 1000)) and not model.fits(1, on([0, 1], 1000))
    assert model.fits(1, on([1], 1000))
    model.end(0)
    assert model.fits(1, on([0, 1], 1000)) and not model.milli.any()
