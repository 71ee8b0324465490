"""Loading HDeepRM platform JSON: totals of real platforms, libraries, and exact error messages."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from hdeeprm.errors import PlatformError
from hdeeprm.platform import DEFAULT_LIBRARY_FILES, load_library, load_platform
from tests.conftest import REFERENCE, ROOT

PLATFORMS = ROOT / "platforms"
LIBS = ", ".join(str(p) for p in DEFAULT_LIBRARY_FILES)

# (clusters, nodes, processors, cores, mean per-core peak GFLOP/s rounded to 2 decimals) from the
# original HDeepRM README; processors of DAS-2 differ on purpose (see node type DAS2-fs0).
TOTALS = {
    "gaia": (1, 153, 342, 2280, 11.72),
    "mc2": (32, 641, 1548, 10002, 16.42),
    "ricc": (1, 1024, 2048, 8192, 11.72),
    "pik": (1, 320, 640, 2560, 12.0),
    "das2": (1, 72, 144, 144, 1.0),
    "learning": (1, 1, 2, 4, 4.2),
}
OURS = {"gaia": "gaia", "metacentrum": "mc2", "ricc": "ricc", "pik": "pik", "das2": "das2", "learning": "learning"}


def _totals(h):
    s = h.summary()
    return s["clusters"], s["nodes"], s["processors"], s["cores"], round(s["mean_core_gflops"], 2)


@pytest.mark.parametrize("name", sorted(TOTALS))
def test_reference_platforms_load_unchanged_with_published_totals(name):
    path = REFERENCE / "platform_examples" / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"reference platform not found at {path}")
    assert _totals(load_platform(path)) == TOTALS[name]


@pytest.mark.parametrize("ours", sorted(OURS))
def test_shipped_platforms_have_the_same_totals(ours):
    assert _totals(load_platform(PLATFORMS / f"{ours}.json")) == TOTALS[OURS[ours]]


def test_kth_sp2_is_100_identical_cores_of_0_64_gflops():
    h = load_platform(PLATFORMS / "kth_sp2.json")
    assert (h.nb_clusters, h.nb_nodes, h.nb_processors, h.nb_cores) == (1, 100, 100, 100)
    assert np.all(h.core_speed == 0.64e9)
    assert h.reference_speed == 0.64e9
    assert np.all(h.node_memory == 2048.0)


def test_reference_das2_with_original_libraries_keeps_one_dual_core_processor():
    data = REFERENCE / "data"
    if not data.is_dir():
        pytest.skip("reference libraries not found")
    libs = [data / f for f in ("processor_types.json", "node_types.json", "network_types.json", "memory_types.json")]
    h = load_platform(REFERENCE / "platform_examples" / "das2.json", extra_libraries=libs)
    # The original's files (with "_doc" keys and "id" fields) load unchanged and override ours.
    assert (h.nb_nodes, h.nb_processors, h.nb_cores) == (72, 72, 144)
    assert h.core_power[0] == 29 / 2


def _write(tmp_path: Path, name: str, data) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data, indent=2) if not isinstance(data, str) else data)
    return path


def _platform(nodes, **cluster):
    return {"clusters": [{"id": "c", "nodes": nodes, **cluster}]}


def test_extra_library_overrides_and_adds_types(tmp_path):
    extra = _write(tmp_path, "extra.json", {
        "_doc": "a user library",
        "Xeon L5640": {"type": "CPU", "cores": 6, "clock_rate": 2.26, "dpflops_per_cycle": 4, "power": 120,
                       "mem_bw": 32},
        "My CPU": {"type": "CPU", "cores": 3, "clock_rate": 2.0, "dpflops_per_cycle": 16, "power": 90, "mem_bw": 10},
        "My Node": {"processors": [{"type": "My CPU", "number": 1}, {"type": "Xeon L5640", "number": 1}],
                    "memory": {"type": "DDR4", "capacity": 0.5}},
    })
    plat = _write(tmp_path, "p.json", _platform([{"type": "My Node", "number": 2}]))
    h = load_platform(plat, extra_libraries=[extra])
    assert h.nb_cores == 18
    assert h.core_speed[:3].tolist() == [32e9] * 3 and h.core_power[:3].tolist() == [30.0] * 3
    assert h.core_speed[3:9].tolist() == [9.04e9] * 6 and h.core_power[3:9].tolist() == [20.0] * 6
    assert h.node_memory.tolist() == [512.0, 512.0]
    assert h.processor_type == ["My CPU", "Xeon L5640"] * 2
    # The shipped library itself is untouched by the override.
    assert load_library().processors["Xeon L5640"].power == 60.0


def test_unknown_node_type_suggests_closest_and_lists_libraries(tmp_path):
    plat = _write(tmp_path, "p.json", _platform([{"type": "Dell R721", "number": 1}]))
    with pytest.raises(PlatformError) as err:
        load_platform(plat)
    assert str(err.value) == (f"clusters[0].nodes[0].type must be a known node type, got 'Dell R721'; did you "
                              f"mean 'Dell R720'? (libraries searched: {LIBS}) ({plat})")


def test_unknown_processor_type_in_user_node_type_blames_the_library(tmp_path):
    extra = _write(tmp_path, "extra.json", {
        "Custom": {"processors": [{"type": "Xeon L564", "number": 2}], "memory": {"capacity": 8}}})
    plat = _write(tmp_path, "p.json", _platform([{"type": "Custom", "number": 1}]))
    with pytest.raises(PlatformError) as err:
        load_platform(plat, extra_libraries=[extra])
    assert str(err.value) == (f"node type 'Custom': processors[0].type must be a known processor type, got "
                              f"'Xeon L564'; did you mean 'Xeon L5640'? (libraries searched: {LIBS}, {extra}) "
                              f"({extra})")


def test_negative_node_number(tmp_path):
    plat = _write(tmp_path, "gaia.json", _platform([{"type": "Dell R720", "number": 2},
                                                    {"type": "Dell R820", "number": -1}]))
    with pytest.raises(PlatformError, match=r"^clusters\[0\]\.nodes\[1\]\.number must be a positive integer, "
                                            r"got -1 \(.*gaia\.json\)$"):
        load_platform(plat)


def test_missing_platform_file(tmp_path):
    path = tmp_path / "nope.json"
    with pytest.raises(PlatformError) as err:
        load_platform(path)
    assert str(err.value) == f"platform file not found ({path})"


def test_malformed_json_names_the_line(tmp_path):
    plat = _write(tmp_path, "p.json", '{\n  "clusters": [\n    {"nodes": [}\n  ]\n}\n')
    with pytest.raises(PlatformError) as err:
        load_platform(plat)
    assert str(err.value) == f"malformed JSON: Expecting value at column 16 ({plat}:3)"
    assert err.value.line == 3


def test_bad_library_entry_names_its_line(tmp_path):
    extra = _write(tmp_path, "extra.json", '{\n  "_doc": "x",\n  "Bad": {"cores": 0, "clock_rate": 1, '
                   '"dpflops_per_cycle": 4, "power": 10, "mem_bw": 1}\n}\n')
    with pytest.raises(PlatformError) as err:
        load_library([extra])
    assert str(err.value) == f"processor type 'Bad': cores must be a positive integer, got 0 ({extra}:3)"


def test_misspelt_field_is_rejected_with_suggestion(tmp_path):
    plat = _write(tmp_path, "p.json", {"clusters": [{"node": [{"type": "Dell R720", "number": 1}]}]})
    with pytest.raises(PlatformError) as err:
        load_platform(plat)
    assert str(err.value) == f"clusters[0] has an unknown field 'node' (did you mean 'nodes'?) ({plat})"


def test_duplicate_cluster_ids_and_bad_latency(tmp_path):
    nodes = [{"type": "Dell R720", "number": 1}]
    dup = _write(tmp_path, "d.json", {"clusters": [{"id": "a", "nodes": nodes}, {"id": "a", "nodes": nodes}]})
    with pytest.raises(PlatformError) as err:
        load_platform(dup)
    assert str(err.value) == f"clusters[1].id must be unique, got 'a' (also clusters[0].id) ({dup})"
    lat = _write(tmp_path, "l.json", _platform(nodes, local_links={"type": "InfiniBand QDR", "latency": "5 parsecs"}))
    with pytest.raises(PlatformError, match=r"^clusters\[0\]\.local_links\.latency must be a non-negative number "
                                            r"with a unit among s, ms, us, ns, ps, m, h, d, w, got '5 parsecs'"):
        load_platform(lat)


def test_links_are_parsed_to_bytes_per_second_and_seconds(tmp_path):
    plat = _write(tmp_path, "p.json", {**_platform([{"type": "Dell R720", "number": 1}],
                                                   local_links={"type": "InfiniBand QDR", "latency": "50us"}),
                                       "global_links": {"type": "Gigabit Ethernet 1000BASE-T", "latency": "1ms"}})
    h = load_platform(plat)
    assert h.cluster_links[0].bandwidth == 32e9 / 8 and h.cluster_links[0].latency == pytest.approx(50e-6)
    assert h.global_links.bandwidth == 1.25e8 and h.global_links.latency == pytest.approx(1e-3)
