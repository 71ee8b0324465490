"""SimGrid XML platforms → HostSpec lists in Batsim id order (golden platforms + edge cases)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from hdeeprm.errors import PlatformError
from hdeeprm.platform.simgrid_reader import parse_speed, read_simgrid_platform

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import GOLDEN  # noqa: E402

needs_golden = pytest.mark.skipif(not GOLDEN.is_dir(), reason=f"golden data not found at {GOLDEN}")


def read_ids(path: Path) -> list[str]:
    return [line.split(",", 1)[1] for line in path.read_text().splitlines()[1:]]


@needs_golden
@pytest.mark.parametrize("case, platform", [("kth2000-delay", "platform_ideal.xml"),
                                            ("kth2000-delay", "platform.xml"),
                                            ("hetero-ptask", "platform.xml"),
                                            ("small-mixed", "small_platform.xml")])
def test_golden_platforms_give_batsim_ids(case, platform):
    hosts = read_simgrid_platform(GOLDEN / case / platform)
    assert [h.name for h in hosts] == read_ids(GOLDEN / case / "host_ids.csv")


@needs_golden
def test_golden_host_tables():
    kth = read_simgrid_platform(GOLDEN / "kth2000-delay" / "platform_ideal.xml")
    assert (kth[0].speeds, kth[0].idle_watts, kth[0].computing_watts) == ((1e9,), (95.0,), (190.0,))
    hetero = read_simgrid_platform(GOLDEN / "hetero-ptask" / "platform.xml")
    assert hetero[4].speeds == (4.4e9, 3.3e9, 0.001, 0.001)
    assert hetero[4].idle_watts == hetero[4].computing_watts == (25.0, 25.0, 6.25, 1.25)
    assert {h.initial_pstate for h in hetero} == {3}
    assert [h.properties["group"] for h in hetero] == ["4Gf"] * 4 + ["4.4Gf"] * 4
    small = read_simgrid_platform(GOLDEN / "small-mixed" / "small_platform.xml")
    assert [h.speeds[0] for h in small] == [48.492e6, 76.296e6, 48.492e6, 76.296e6]
    assert small[0].idle_watts == (0.0,)  # no energy properties: 0 W


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "p.xml"
    path.write_text(f"<?xml version='1.0'?>\n<platform version=\"4.1\"><zone id=\"z\" routing=\"Full\">\n"
                    f"{body}\n</zone></platform>\n")
    return path


def test_cluster_expansion_three_value_wattage_and_master_role(tmp_path):
    path = write(tmp_path, """
    <cluster id="c" prefix="n-" suffix=".x" radical="8-10,1" speed="2Gf,1e9f" pstate="1">
      <prop id="wattage_per_state" value="10:15:20, 5:7:9"/>
    </cluster>
    <cluster id="m" prefix="boss" radical="0-0" speed="1Gf"><prop id="role" value="master"/></cluster>""")
    hosts = read_simgrid_platform(path)
    assert [h.name for h in hosts] == ["n-1.x", "n-10.x", "n-8.x", "n-9.x"]
    assert hosts[0].speeds == (2e9, 1e9) and hosts[0].initial_pstate == 1
    assert (hosts[0].idle_watts, hosts[0].computing_watts) == ((10.0, 5.0), (20.0, 9.0))


def test_roles_follow_batsim_storage_hosts_and_other_master_names(tmp_path):
    # A host merely named like the master is a compute node; storage hosts are not compute hosts;
    # -m names another master host.
    path = write(tmp_path, """
    <host id="master_host0" speed="1Gf"/><host id="disk" speed="1Gf"><prop id="role" value="storage"/></host>
    <host id="n1" speed="1Gf"><prop id="role" value="compute_node"/></host><host id="boss" speed="1Gf"/>""")
    assert [h.name for h in read_simgrid_platform(path, master_host="boss")] == ["master_host0", "n1"]


@pytest.mark.parametrize("text, value", [("4Gf", 4e9), ("0.001f", 0.001), ("98.095Mf", 98.095e6),
                                         ("1e9", 1e9), ("1.5kflops", 1500.0), ("2Tf", 2e12)])
def test_speed_units(text, value):
    assert parse_speed(text, "here") == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize("body, message", [
    ('<host id="a" speed="fast"/>',
     "speed must be a number with a unit such as '4.4Gf', got 'fast' (host 'a', {p}:3)"),
    ('<host id="a" speed="1Gf,2Gf" pstate="2"/>', "pstate must be in [0, 1], got 2 (host 'a', {p}:3)"),
    ('<host id="a" speed="1Gf"><prop id="wattage_per_state" value="1:2, 3:4"/></host>',
     "wattage_per_state must have one entry per pstate (1), got 2 in '1:2, 3:4' (host 'a', {p}:3)"),
    ('<host id="a" speed="1Gf"><prop id="wattage_per_state" value="1"/></host>',
     "wattage_per_state entries must be 'Idle:AllCores' or 'Idle:OneCore:AllCores' non-negative "
     "watts, got '1' (host 'a', {p}:3)"),
    ('<host id="master_host" speed="1Gf"/>',
     "the platform must have at least one compute host (not master_host), got none ({p})"),
    ('<host id="a" speed="1Gf"/><host id="a" speed="1Gf"/>', "host names must be unique, got 'a' twice ({p})"),
    # Batsim 4.2.1 appends 'master' to the --master-host's own role property and aborts on the result.
    ('<host id="a" speed="1Gf"/><host id="master_host" speed="1Gf"><prop id="role" value="master"/></host>',
     "host 'master_host' has role 'master,master' (its role property plus the 'master' role Batsim gives the "
     "--master-host): remove the property; Batsim 4.2.1 accepts one of master, compute_node, storage ({p})"),
    ('<host id="a" speed="1Gf"><prop id="role" value="boss"/></host><host id="master_host" speed="1Gf"/>',
     "host 'a' has role 'boss'; Batsim 4.2.1 accepts one of master, compute_node, storage ({p})"),
    ('<host id="a" speed="1Gf"/>', "Batsim 4.2.1 needs exactly one master host (property role=master, or the "
     "host named 'master_host'), got none ({p})"),
    ('<host id="a" speed="1Gf"/><host id="master_host" speed="1Gf"/><host id="b" speed="1Gf">'
     '<prop id="role" value="master"/></host>', "Batsim 4.2.1 needs exactly one master host (property "
     "role=master, or the host named 'master_host'), got 2: master_host, b ({p})"),
    ('<host id="a" speed="1Gf">', "malformed XML: "),
])
def test_malformed_platforms(tmp_path, body, message):
    path = write(tmp_path, body)
    with pytest.raises(PlatformError) as info:
        read_simgrid_platform(path)
    assert str(info.value).startswith(message.format(p=path))
