"""Core and job selection policies on a hand-made platform (expected picks worked out by hand)."""
import re
import numpy as np
import pytest

from hdeeprm.decision.contention import ResourceState
from hdeeprm.errors import OptionsError
from hdeeprm.decision.actions import (ORIGINAL_CORE_POLICIES, ORIGINAL_JOB_POLICIES, VOID, action_index,
                                      parse_policy_pair)
from hdeeprm.decision.core_selection import CoreSelector, _rank_in_group
from hdeeprm.decision.orderings import JOB_ORDERINGS

from .helpers import job, small_hierarchy


def selector(seed=0):
    state = ResourceState(small_hierarchy())
    return state, CoreSelector(state, np.random.default_rng(seed))


def test_action_index_map_is_the_original_order():
    assert action_index("random", "random") == 0
    assert action_index("first", "high_gflops") == 7
    assert action_index("low_mem_bw", "low_power") == 35
    assert VOID == 36
    assert ORIGINAL_JOB_POLICIES == ("random", "first", "shortest", "smallest", "low_mem", "low_mem_bw")
    assert ORIGINAL_CORE_POLICIES == ("random", "high_gflops", "high_cores", "high_mem", "high_mem_bw",
                                      "low_power")


def test_unknown_policy_suggests_the_closest():
    with pytest.raises(OptionsError, match=re.escape(
            "unknown core-selection policy 'high_glops' (valid: random, high_gflops, high_cores, high_mem, "
            "high_mem_bw, low_power, contiguous; did you mean 'high_gflops'?)")):
        parse_policy_pair("first-high_glops")
    with pytest.raises(OptionsError, match=re.escape("policy pair must be 'job_policy-core_policy', got 'first'")):
        parse_policy_pair("first")


def test_high_gflops_takes_the_fastest_processor_first():
    _, sel = selector()
    assert sel.select(job(0, 3), "high_gflops").tolist() == [2, 3, 0]


def test_low_power_takes_the_cheapest_cores():
    _, sel = selector()
    assert sel.select(job(0, 5), "low_power").tolist() == [4, 5, 6, 7, 0]


def test_high_cores_packs_onto_the_busiest_processor():
    state, sel = selector()
    state.allocate(job(9, 1), np.array([4]), 0.0)   # processor 2 has 1 busy core
    assert sel.select(job(0, 4), "high_cores").tolist() == [5, 6, 7, 0]


def test_high_mem_alternates_when_each_core_takes_memory():
    # node 1 has 16 GB free, node 0 8 GB: with 6 GB per core node 1 first (16 -> 10 GB),
    # then node 1 again (10 > 8 -> 4 GB), then node 0 (8 > 4).
    _, sel = selector()
    assert sel.select(job(0, 3, mem=6 * 1024.0), "high_mem").tolist() == [4, 5, 0]


def test_high_mem_bw_spreads_bandwidth():
    # remaining GB/s: p0 32, p1 32, p2 40; each core takes 10 GB/s
    # p2 (40->30), p0 (32->22), p1 (32->22), p2 (30->20)
    _, sel = selector()
    assert sel.select(job(0, 4, mem_bw=10.0), "high_mem_bw").tolist() == [4, 0, 2, 5]


def test_memory_is_a_hard_limit_per_node():
    _, sel = selector()
    # 5 GB per core: node 0 (8 GB) takes one core, node 1 (16 GB) three: at most 4 cores.
    assert sel.select(job(0, 5, mem=5 * 1024.0), "high_gflops") is None
    got = sel.select(job(0, 4, mem=5 * 1024.0), "high_gflops").tolist()
    assert got == [2, 4, 5, 6]


def test_random_core_selection_is_seeded_and_respects_memory():
    a = selector(seed=3)[1].select(job(0, 4, mem=5 * 1024.0), "random").tolist()
    b = selector(seed=3)[1].select(job(0, 4, mem=5 * 1024.0), "random").tolist()
    assert a == b
    nodes = small_hierarchy().core_node[a]
    assert (nodes == 0).sum() == 1 and (nodes == 1).sum() == 3


def test_job_policies_sort_stably_by_their_key():
    q = [job(0, 4, walltime=50, mem=10), job(1, 1, walltime=10, mem=30), job(2, 2, walltime=10, mem=10)]
    rng = np.random.default_rng(0)
    assert [j.index for j in JOB_ORDERINGS["first"].order(q, rng)] == [0, 1, 2]
    assert [j.index for j in JOB_ORDERINGS["shortest"].order(q, rng)] == [1, 2, 0]
    assert [j.index for j in JOB_ORDERINGS["smallest"].order(q, rng)] == [1, 2, 0]
    assert [j.index for j in JOB_ORDERINGS["low_mem"].order(q, rng)] == [0, 2, 1]
    assert sorted(j.index for j in JOB_ORDERINGS["random"].order(q, rng)) == [0, 1, 2]


def test_rank_in_group():
    assert _rank_in_group(np.array([3, 1, 3, 3, 1])).tolist() == [0, 0, 1, 2, 1]


def test_high_mem_on_single_core_nodes_takes_the_most_free_memory_first_ties_by_core():
    from pathlib import Path
    from hdeeprm.platform import load_platform

    h = load_platform(Path(__file__).resolve().parents[2] / "platforms" / "kth_sp2.json")   # 100 one-core nodes
    state = ResourceState(h)
    sel = CoreSelector(state, np.random.default_rng(0))
    state.node_free_mem[:] = 100.0
    state.node_free_mem[[7, 3, 50]] = [300.0, 300.0, 200.0]
    state.core_free[3] = False
    assert sel.select(job(0, 4, mem_bw=0.0), "high_mem").tolist() == [7, 50, 0, 1]
    state.processor_used_bw[:] = 5.0
    state.processor_used_bw[[0, 2, 4]] = 0.0   # the most bandwidth left first, ties by core id
    assert sel.select(job(0, 4, mem_bw=1.0), "high_mem_bw").tolist() == [0, 2, 4, 1]


def test_dynamic_policies_on_single_core_groups_pick_as_the_per_core_rule():
    # The sort used when every node and processor holds one core (KTH-SP2) against the general loop that
    # re-chooses the best group after every core, on random states (ties, memory caps, too few candidates).
    from pathlib import Path
    from hdeeprm.platform import load_platform

    h = load_platform(Path(__file__).resolve().parents[2] / "platforms" / "kth_sp2.json")
    state = ResourceState(h)
    fast, loop = CoreSelector(state, np.random.default_rng(0)), CoreSelector(state, np.random.default_rng(0))
    loop._single = {True: False, False: False}
    assert fast._single == {True: True, False: True}
    rng = np.random.default_rng(1)
    for _ in range(2000):
        state.node_free_mem[:] = rng.choice([0.0, 100.0, 200.0, rng.random() * 500], size=h.nb_nodes)
        state.processor_used_bw[:] = rng.choice([0.0, 1.0, rng.random() * 5], size=h.nb_processors)
        cand = rng.random(h.nb_cores) < rng.random()
        j = job(0, int(rng.integers(1, 12)), mem=float(rng.choice([0.0, 50.0])), mem_bw=float(rng.choice([0.0, 1.0])))
        cap = None if j.mem == 0 else rng.integers(0, 3, size=h.nb_nodes)
        for by_node in (True, False):
            a, b = fast._dynamic(j, cand, cap, by_node=by_node), loop._dynamic(j, cand, cap, by_node=by_node)
            assert (a is None and b is None) or a.tolist() == b.tolist()
