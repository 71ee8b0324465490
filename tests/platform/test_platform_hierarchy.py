"""ResourceHierarchy arrays, pstates and host specs, checked by hand on real and toy platforms."""
from __future__ import annotations

import numpy as np
import pytest

from hdeeprm.platform import hierarchy as resources
from hdeeprm.platform import load_library, load_platform
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.platform.hosts import HostSpec
from tests.conftest import ROOT

PLATFORMS = ROOT / "platforms"


@pytest.fixture(scope="module")
def gaia():
    return load_platform(PLATFORMS / "gaia.json")


@pytest.fixture(scope="module")
def learning():
    return load_platform(PLATFORMS / "learning.json")


@pytest.mark.parametrize("name, speed, power, mem_bw", [
    ("Xeon L5640", 2.26 * 4 * 1e9, 60 / 6, 32.0),       # Westmere-EP, 6 cores, SSE: 4 DP FLOP/cycle, 60 W
    ("Xeon E5-2660", 2.2 * 8 * 1e9, 95 / 8, 51.2),      # Sandy Bridge-EP, AVX: 8, 95 W, 4 x DDR3-1600
    ("Opteron 6274", 2.2 * 8 * 1e9, 115 / 16, 51.2),    # 16 cores, 115 W
    ("Xeon E5472", 3.0 * 4 * 1e9, 80 / 4, 12.8),        # FSB 1600 MT/s x 8 B
    ("Pentium III", 1.0e9, 29.0, 1.06),
])
def test_per_core_speed_and_power_by_hand(name, speed, power, mem_bw):
    ptype = load_library().processors[name]
    assert ptype.core_speed == pytest.approx(speed, rel=1e-15)
    assert ptype.core_power == power
    assert ptype.mem_bw == mem_bw


def test_gaia_layout_is_contiguous_and_ordered(gaia):
    # First node: Bullx B500-0 = 2 x Xeon L5640 (6 cores), 48 GB.
    assert gaia.core_processor[:12].tolist() == [0] * 6 + [1] * 6
    assert gaia.core_node[:13].tolist() == [0] * 12 + [1]
    assert gaia.node_memory[0] == 48 * 1024.0
    assert gaia.core_speed[0] == 9.04e9 and gaia.core_power[0] == 10.0
    # Last node: SGI UV-2000 = 16 x Xeon E5-4650 v2 (10 cores, 2.4 GHz, AVX, 95 W), 4 TB.
    assert gaia.node_type[-1] == "SGI UV-2000"
    assert gaia.node_n_processors[-1] == 16 and gaia.node_n_cores[-1] == 160
    assert gaia.core_speed[-1] == 19.2e9 and gaia.core_power[-1] == 9.5
    assert gaia.node_memory[-1] == 4096 * 1024.0
    # Every processor's cores are one slice, every node's processors too.
    for p in (0, 1, 200, gaia.nb_processors - 1):
        first, n = gaia.processor_first_core[p], gaia.processor_n_cores[p]
        assert np.all(gaia.core_processor[first:first + n] == p)
        assert gaia.core_processor[first + n - 1] == p and (first + n == gaia.nb_cores
                                                            or gaia.core_processor[first + n] == p + 1)
    assert np.all(np.diff(gaia.core_processor) >= 0) and np.all(np.diff(gaia.processor_node) >= 0)
    assert gaia.node_first_processor[1] == 2 and gaia.processor_first_core[2] == 12
    for arr in (gaia.core_processor, gaia.core_node, gaia.processor_node, gaia.processor_first_core,
                gaia.processor_n_cores, gaia.node_cluster, gaia.node_first_processor, gaia.node_n_processors):
        assert arr.dtype == np.int64
    for arr in (gaia.core_speed, gaia.core_power, gaia.processor_mem_bw, gaia.node_memory):
        assert arr.dtype == np.float64
    assert gaia.reference_speed == pytest.approx(gaia.core_speed.mean())


def test_host_names_sort_bytewise_in_core_order():
    h = load_platform(PLATFORMS / "metacentrum.json")
    assert h.host_names[0] == "core00000" and h.host_names[-1] == "core10001"
    assert sorted(h.host_names, key=str.encode) == h.host_names
    assert len(set(h.host_names)) == h.nb_cores


def test_pstate_constants_are_the_design_table():
    assert (resources.P0, resources.P1, resources.P2, resources.P3) == (0, 1, 2, 3)
    assert resources.INITIAL_PSTATE == resources.P3
    assert resources.PSTATE_SPEED_FACTORS == (1.0, 0.75, 0.0, 0.0)
    assert resources.PSTATE_POWER_FACTORS == (1.0, 1.0, 0.25, 0.05)


def test_learning_host_specs_by_hand(learning):
    specs = learning.host_specs()
    assert [s.name for s in specs] == ["core0000", "core0001", "core0002", "core0003"]
    # Test0_0: 1.0 GHz x 4 = 4 GFLOP/s, 80 W / 2 cores = 40 W.
    assert specs[0].speeds == (4e9, 3e9, 0.001, 0.001)
    assert specs[0].idle_watts == specs[0].computing_watts == (40.0, 40.0, 10.0, 2.0)
    # Test0_1: 1.1 GHz x 4 = 4.4 GFLOP/s, 100 W / 2 = 50 W.
    assert specs[3].speeds == (4.4e9, 3.3e9, 0.001, 0.001)
    assert specs[3].computing_watts == (50.0, 50.0, 12.5, 2.5)
    assert {s.initial_pstate for s in specs} == {3}
    assert specs[2].properties == {"cluster": "learning_cluster", "node": "0", "processor": "1",
                                   "node_type": "Test0", "processor_type": "Test0_1"}
    assert learning.pstate_powers()[0].tolist() == [40.0, 40.0, 10.0, 2.0]
    assert learning.pstate_speeds()[3].tolist() == [4.4e9, 3.3e9, 0.0, 0.0]


def test_summary_of_learning(learning):
    assert learning.summary() == {"clusters": 1, "nodes": 1, "processors": 2, "cores": 4,
                                  "peak_gflops": pytest.approx(16.8), "mean_core_gflops": pytest.approx(4.2),
                                  "max_power_w": 180.0, "memory_gb": 32.0}


def test_from_hosts_is_flat_and_in_batsim_id_order():
    hosts = [HostSpec("h10", (2e9,), (5.0,), (9.0,)), HostSpec("h2", (1e9, 5e8), (1.0, 0.5), (3.0, 2.0), 1)]
    h = ResourceHierarchy.from_hosts(hosts)
    assert h.host_names == ["h10", "h2"]
    assert (h.nb_clusters, h.nb_nodes, h.nb_processors, h.nb_cores) == (1, 2, 2, 2)
    assert h.core_speed.tolist() == [2e9, 1e9] and h.core_power.tolist() == [9.0, 3.0]
    assert np.all(np.isinf(h.node_memory))
    assert h.host_specs() == [hosts[0], hosts[1]]
    assert h.reference_speed == 1.5e9
