"""SimGrid XML export for Batsim 4.2.1 and the hdeeprm-platform command."""
from __future__ import annotations

import pytest
from lxml import etree

from hdeeprm.cli.platform import main
from hdeeprm.platform import load_platform, write_simgrid_platform
from tests.conftest import ROOT

PLATFORMS = ROOT / "platforms"


def _compute_hosts(tree):
    hosts = [h for h in tree.iter("host") if h.get("id") != "master_host"]
    return sorted(hosts, key=lambda h: h.get("id").encode())


def _props(host):
    return {p.get("id"): p.get("value") for p in host.iter("prop")}


def test_gaia_xml_hosts_sort_in_core_order_with_pstates(tmp_path):
    h = load_platform(PLATFORMS / "gaia.json")
    tree = etree.parse(str(write_simgrid_platform(h, tmp_path / "gaia.xml")))
    assert tree.docinfo.doctype == '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'
    assert tree.getroot().get("version") == "4.1"
    hosts = _compute_hosts(tree)
    assert [x.get("id") for x in hosts] == h.host_names
    # Core 0: Xeon L5640, G = 9.04 GFLOP/s, P = 10 W; last core: Xeon E5-4650 v2, 19.2 GFLOP/s, 9.5 W.
    assert hosts[0].get("speed") == "9040000000f,6780000000f,0.001f,0.001f"
    assert _props(hosts[0])["wattage_per_state"] == "10:10,10:10,2.5:2.5,0.5:0.5"
    assert _props(hosts[0])["wattage_off"] == "0.5"
    assert hosts[-1].get("speed") == "19200000000f,14400000000f,0.001f,0.001f"
    assert _props(hosts[-1])["wattage_per_state"] == "9.5:9.5,9.5:9.5,2.375:2.375,0.475:0.475"
    assert {x.get("pstate") for x in hosts} == {"3"}
    assert _props(hosts[12]) == {"wattage_per_state": "10:10,10:10,2.5:2.5,0.5:0.5", "wattage_off": "0.5",
                                 "cluster": "gaia_cluster", "node": "1", "processor": "2",
                                 "node_type": "Bullx B500-0", "processor_type": "Xeon L5640"}
    # Batsim 4.2.1 makes its default --master-host the master itself; a role property there aborts it.
    assert [x.get("id") for x in tree.iter("host") if x.get("id") not in h.host_names] == ["master_host"]
    assert [x.get("id") for x in tree.iter("host") if "role" in _props(x)] == []
    # Ideal network: every link and backbone 0 latency, 1000 TBps; every host has a private link.
    links = list(tree.iter("link", "backbone"))
    assert {(x.get("bandwidth"), x.get("latency")) for x in links} == {("1000TBps", "0us")}
    assert len(list(tree.iter("host_link"))) == h.nb_cores + 1


@pytest.mark.slow
def test_metacentrum_zones_are_joined_pairwise(tmp_path):
    h = load_platform(PLATFORMS / "metacentrum.json")
    tree = etree.parse(str(write_simgrid_platform(h, tmp_path / "mc.xml", network="library")))
    zones = tree.getroot().find("zone")
    assert len(zones.findall("zone")) == 33  # master + 32 clusters
    assert len(zones.findall("zoneRoute")) == 33 * 32 // 2
    hosts = _compute_hosts(tree)
    assert [x.get("id") for x in hosts] == h.host_names
    bandwidths = {x.get("bandwidth") for x in tree.iter("link") if x.get("id") != "global_backbone"}
    assert bandwidths == {"1Gbps"}  # Gigabit Ethernet everywhere (the master's link follows global_links)
    assert {x.get("bandwidth") for x in tree.iter("backbone")} == {"1Gbps", "1000TBps"}  # master zone stays ideal


def test_round_trip_through_the_simgrid_reader(tmp_path):
    reader = pytest.importorskip("hdeeprm.platform.simgrid_reader")
    h = load_platform(PLATFORMS / "learning.json")
    read = reader.read_simgrid_platform(write_simgrid_platform(h, tmp_path / "l.xml"))
    expected = h.host_specs()
    assert [(s.name, s.speeds, s.idle_watts, s.computing_watts, s.initial_pstate) for s in read] == \
        [(s.name, s.speeds, s.idle_watts, s.computing_watts, s.initial_pstate) for s in expected]
    back = type(h).from_hosts(read)
    assert back.core_speed.tolist() == h.core_speed.tolist()
    assert back.core_power.tolist() == h.core_power.tolist()


def test_cli_summary_and_xml(tmp_path, capsys):
    assert main(["summary", str(PLATFORMS / "learning.json")]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "cluster           nodes  processors  cores  peak GFLOP/s  GFLOP/s/core  power W  memory GB",
        "----------------  -----  ----------  -----  ------------  ------------  -------  ---------",
        "learning_cluster      1           2      4         16.80          4.20    180.0         32",
    ]
    out = tmp_path / "p.xml"
    assert main(["xml", str(PLATFORMS / "kth_sp2.json"), "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out}: 100 hosts + master_host\n"
    assert len(_compute_hosts(etree.parse(str(out)))) == 100


def test_cli_error_is_one_line_on_stderr_with_status_2(tmp_path, capsys):
    missing = tmp_path / "none.json"
    assert main(["xml", str(missing), "-o", str(tmp_path / "x.xml")]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == f"hdeeprm-platform: error: platform file not found ({missing})\n"
