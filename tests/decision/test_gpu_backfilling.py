"""Hand-worked GPU replays of the backfilling start strategies and of GPU memory as a capacity (issue 35).

Every run uses the GPU type of its nodes as the reference type, so that a job runs exactly its trace duration
(run-time factor 1) and the start times below can be worked out by hand.
"""
import numpy as np
import pytest

from hdeeprm.decision.gpu_placement import PlacementState, PodRequest
from hdeeprm.platform.openb import gpu_cluster
from hdeeprm.run.gpu_replay import GpuRunConfig, simulate_gpu
from hdeeprm.workload.gpu_jobs import gpu_jobs

#: The GPUs of a "Dell R740 2xV100" node (platforms: node_types.json): 32 GB = 32,768 MiB each.
V100 = "V100 PCIe 32GB"
GIB = 1024


def _r740s(count):
    return gpu_cluster([(f"n{i}", 40000, 393216, 2, V100) for i in range(count)])


def _placed(result, job):
    return [(p.node, p.gpus.tolist()) for p in result.gpu.placements[job]]


@pytest.mark.parametrize("strategy", ["easy_backfilling", "conservative_backfilling"])
def test_a_backfilling_job_takes_the_node_no_reservation_needs(strategy):
    """Two R740 nodes n0, n1 (2 V100 each), ``first_fit``, ``fcfs``, exact estimates (run s = trace s).

    Pods (submit s, run s, whole GPUs): A (0, 100, 1), B (0, 300, 1), C (0, 100, 1), D (0, 1000, 1),
    E (1, 10, 2), F (2, 500, 1).

    - 0 s: first fit puts A on n0 GPU 0, B on n0 GPU 1, C on n1 GPU 0, D on n1 GPU 1. Estimated ends: A and C
      100 s, B 300 s, D 1000 s.
    - 1 s: E needs a whole node. At 100 s each node has one free GPU (A's, C's); at 300 s B ends and n0 is free:
      E's reservation is n0 from 300 s to 310 s (EASY: the head's shadow time, 300 s).
    - 2 s: F fits nowhere now (every GPU busy). Conservative: at 100 s, F fits n0 GPU 0 (first in the rule's
      order: fewest free GPUs, a tie, then the lowest index) but would hold it to 600 s, into E's reservation of
      n0: refused there; n1 GPU 0 (C's) is needed by no reservation: F is reserved there from 100 s.
    - 100 s: A and C end. EASY: E still does not fit (one free GPU per node). F backfills if it does not delay E:
      it ends at 600 s > 300 s, so E must still fit at 300 s with F's GPU taken. First fit offers n0 GPU 0: E
      would no longer fit n0 at 300 s: refused there; n1 GPU 0: n0 stays free for E: F starts at 100 s on n1.
      Conservative: F's reservation has come; it starts on n1 GPU 0.
    - 300 s: B ends; E starts on n0 (both GPUs) and ends at 310 s. F ends at 600 s, D at 1000 s.

    Before issue 35 both strategies tried F on first fit's node only (n0) and gave up: F started at 300 s.
    """
    jobs = gpu_jobs([("A", 0, 100, 1, 1000, 0, 0, 0, ""), ("B", 0, 300, 1, 1000, 0, 0, 0, ""),
                     ("C", 0, 100, 1, 1000, 0, 0, 0, ""), ("D", 0, 1000, 1, 1000, 0, 0, 0, ""),
                     ("E", 1, 10, 2, 1000, 0, 0, 0, ""), ("F", 2, 500, 1, 1000, 0, 0, 0, "")])
    result = simulate_gpu(_r740s(2), jobs, GpuRunConfig(placement="first_fit", ordering="fcfs",
                                                        start_strategy=strategy, reference_type=V100))
    #                                           A    B    C    D      E      F
    assert result.start_time.tolist() == [0.0, 0.0, 0.0, 0.0, 300.0, 100.0]
    assert result.finish_time.tolist() == [100.0, 300.0, 100.0, 1000.0, 310.0, 600.0]
    assert [_placed(result, j) for j in range(6)] == [[(0, [0])], [(0, [1])], [(1, [0])], [(1, [1])],
                                                      [(0, [0, 1])], [(1, [0])]]


def _memory_jobs():
    # One V100 (32 GiB). A (0 s, 100 s, half the GPU, 8 GiB), B (0 s, 100 s, half, 28 GiB), C (0 s, 150 s,
    # a quarter, 8 GiB). A and B together need 36 GiB, B and C 36 GiB: neither pair can share the GPU; A and C
    # (16 GiB, 750 thousandths) can.
    return gpu_jobs([("A", 0, 100, 1, 500, 0, 0, 8 * GIB, ""), ("B", 0, 100, 1, 500, 0, 0, 28 * GIB, ""),
                     ("C", 0, 150, 1, 250, 0, 0, 8 * GIB, "")])


@pytest.mark.parametrize("strategy, starts", [
    # greedy: A at 0 s (24 GiB left). B fits the share (500 left) but not the memory: it waits. C fits (250 of
    # 500, 8 of 24 GiB): 0 s. At 100 s A ends: 24 GiB left for B's 28: waits. C ends at 150 s: B starts.
    ("greedy", [0.0, 150.0, 0.0]),
    # EASY: B is the blocked head; A's end at 100 s frees its 8 GiB: the shadow time is 100 s. C would run to
    # 150 s, past it, and with C's 8 GiB taken B does not fit at 100 s (24 < 28 GiB): C waits. B starts at
    # 100 s (4 GiB left), C (8 GiB) when B ends at 200 s.
    ("easy_backfilling", [0.0, 100.0, 200.0]),
    # Conservative: B is reserved at 100 s, holding 28 GiB to 200 s. C fits now by share and memory, but from
    # 100 s to 150 s it would share the GPU with B: 750 thousandths fit, 36 GiB do not: it is reserved after B,
    # at 200 s (the profile counts GPU memory; counting shares only, C would start at 0 s and take B's place).
    ("conservative_backfilling", [0.0, 100.0, 200.0]),
])
def test_jobs_share_a_gpu_only_while_their_gpu_memory_fits_it(strategy, starts):
    cluster = gpu_cluster([("v", 8000, 65536, 1, V100)])
    result = simulate_gpu(cluster, _memory_jobs(), GpuRunConfig(start_strategy=strategy, reference_type=V100))
    assert result.start_time.tolist() == starts


def test_two_jobs_of_20_gib_do_not_share_a_32_gb_v100():
    # The case: two 500-thousandth jobs of 20 GiB each. On a one-GPU node the second waits for the first
    # (100 s); on an R740 (2 GPUs) it takes the second GPU although the first GPU has the share left.
    jobs = gpu_jobs([("a", 0, 100, 1, 500, 0, 0, 20 * GIB, ""), ("b", 0, 100, 1, 500, 0, 0, 20 * GIB, "")])
    one = simulate_gpu(gpu_cluster([("v", 8000, 65536, 1, V100)]), jobs, GpuRunConfig(reference_type=V100))
    assert one.start_time.tolist() == [0.0, 100.0]
    two = simulate_gpu(_r740s(1), jobs, GpuRunConfig(reference_type=V100))
    assert two.start_time.tolist() == [0.0, 0.0] and [_placed(two, j) for j in (0, 1)] == [[(0, [0])], [(0, [1])]]


def test_gpu_memory_is_held_by_shares_and_by_whole_gpus():
    cluster = _r740s(1)
    allowed = np.array([True, False])
    state = PlacementState(cluster)
    assert state.gpu_memory_left.tolist() == [[32768, 32768]]
    shared = PodRequest(1000, 0, 1, 300, allowed, gpu_memory=20 * GIB)
    state.place(0, state.choose_gpus(0, shared, "best", None), shared)    # GPU 0: 700 left, 12 GiB left
    assert state.gpu_memory_left.tolist() == [[12288, 32768]]
    # A second one fits GPU 0's share (the tightest fit) but not its memory: it goes to GPU 1.
    assert state.choose_gpus(0, shared, "best", None).tolist() == [1]
    small = PodRequest(1000, 0, 1, 300, allowed, gpu_memory=10 * GIB)
    assert state.choose_gpus(0, small, "best", None).tolist() == [0]    # 10 GiB fit GPU 0's 12
    whole = PodRequest(1000, 0, 1, 1000, allowed, gpu_memory=1 * GIB)
    state.place(0, np.array([1]), whole)                                 # a whole GPU holds all its memory
    assert state.gpu_memory_left.tolist() == [[12288, 0]]
    assert list(state.fitting_nodes(shared)) == [] and list(state.fitting_nodes(small)) == [0]
    assert not state.has_room(0, np.array([0]), shared) and state.has_room(0, np.array([0]), small)
    state.release(0, np.array([1]), whole)
    state.release(0, np.array([0]), shared)
    assert state.gpu_memory_left.tolist() == [[32768, 32768]]
    # A job without a GPU memory need is limited by its share only, as the openb and Philly traces' jobs are.
    free = PodRequest(1000, 0, 1, 300, allowed)
    for _ in range(3):
        state.place(0, np.array([0]), free)
    assert state.gpu_left.tolist() == [[100, 1000]] and state.gpu_memory_left.tolist() == [[32768, 32768]]
