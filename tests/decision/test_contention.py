"""The heterogeneity layer's pstate rules (DESIGN section 4), by hand."""
import numpy as np

from hdeeprm.decision.contention import ResourceState
from hdeeprm.platform.hierarchy import P0, P1, P2, P3

from .helpers import job, small_hierarchy


def test_all_cores_start_fully_idle_in_p3():
    state = ResourceState(small_hierarchy())
    assert state.core_pstate.tolist() == [P3] * 8


def test_busy_core_p0_and_its_idle_sibling_p2():
    state = ResourceState(small_hierarchy())
    changes = state.allocate(job(0, 1, mem_bw=24.0), np.array([0]), 0.0)
    assert changes == {P0: [0], P2: [1]}
    assert state.core_pstate.tolist() == [P0, P2, P3, P3, P3, P3, P3, P3]


def test_bandwidth_oversubscription_slows_every_busy_core_to_p1_and_back():
    state = ResourceState(small_hierarchy())
    a, b = job(0, 1, mem_bw=24.0), job(1, 1, mem_bw=24.0)
    state.allocate(a, np.array([0]), 0.0)
    changes = state.allocate(b, np.array([1]), 5.0)       # 48 > 32 GB/s
    assert changes == {P1: [0, 1]}
    changes = state.release(a, [0], 15.0)                  # 24 <= 32 GB/s
    assert changes == {P0: [1], P2: [0]}
    report = state.overutilization_report(20.0)
    assert report["total_events"] == 1
    assert report["processors"]["0"]["seconds"] == 10.0


def test_memory_is_taken_and_given_back_per_node():
    state = ResourceState(small_hierarchy())
    j = job(0, 2, mem=1000.0)
    state.allocate(j, np.array([0, 4]), 0.0)
    assert state.node_free_mem.tolist() == [8192.0 - 1000.0, 16384.0 - 1000.0]
    changes = state.release(j, [0, 4], 1.0)
    assert state.node_free_mem.tolist() == [8192.0, 16384.0]
    assert changes == {P3: [0, 1, 4, 5, 6, 7]}
    assert state.nb_free == 8
