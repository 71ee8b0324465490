"""Write a resource hierarchy as a SimGrid platform XML for Batsim 4.2.1 / SimGrid 3.32.

Layout (SimGrid platform DTD 4.1):

- every core is one ``<host>`` named after :attr:`ResourceHierarchy.host_names`,
  with ``speed="G f,0.75G f,0.001f,0.001f"`` (FLOP/s per pstate, see
  :mod:`hdeeprm.platform.hierarchy`), ``pstate="3"`` (initial pstate), and the
  properties ``wattage_per_state`` (one ``Idle:AllCores`` pair per pstate,
  comma-separated, the name SimGrid >= 3.28 reads; the older
  ``watt_per_state`` would be ignored), ``wattage_off`` (the initial
  pstate's wattage; hosts are never switched off), ``cluster``, ``node``,
  ``processor``, ``node_type`` and ``processor_type``;
- each cluster is a ``<zone routing="Cluster">`` (a SimGrid star) with a
  private link per host, a backbone and a router used as gateway;
- Batsim's ``master_host`` sits in a zone of its own, without a ``role``
  property (Batsim 4.2.1 gives its default ``--master-host`` the role
  ``master`` itself and aborts on ``role=master`` there: "master,master");
  the root ``routing="Full"`` zone joins all zones pairwise through one
  global backbone with ``<zoneRoute>`` (the shape of Batsim's
  ``cluster512.xml``, which Batsim 4.2.1 runs; unlike a Full zone with one
  route per host pair it grows linearly with the number of hosts).

By default the network is ideal (every link 0 s latency, 1000 TBps), so
Batsim's protocol messages take no measurable simulated time and
simultaneous events stay in one message (docs/engine.rst, "Same-instant
event order"). With ``network="library"`` the private links and cluster
backbones take the bandwidth of the cluster's ``local_links`` type and its
latency, and the global backbone those of ``global_links`` (clusters without
links stay ideal).
"""
from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path

from lxml import etree

from hdeeprm.errors import PlatformError
from hdeeprm.platform.hierarchy import MASTER_HOST_SPEED, LinkSpec, ResourceHierarchy
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.platform.simgrid_reader import DEFAULT_MASTER_HOST

#: DOCTYPE line of SimGrid platform files.
SIMGRID_DOCTYPE = '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">'
#: Bandwidth and latency of the ideal network.
IDEAL_BANDWIDTH = "1000TBps"
IDEAL_LATENCY = "0us"
NETWORK_MODES = ("ideal", "library")


def fmt_number(value: float) -> str:
    """Shortest decimal text that reads back as exactly ``value`` (``"9040000000"``, ``"0.001"``)."""
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


@functools.lru_cache(maxsize=4096)
def speed_attribute(speeds: Sequence[float]) -> str:
    """SimGrid ``speed`` attribute: one ``<FLOP/s>f`` per pstate, comma-separated (``speeds`` a tuple, cached)."""
    return ",".join(f"{fmt_number(s)}f" for s in speeds)


@functools.lru_cache(maxsize=4096)
def wattage_attribute(idle: Sequence[float], computing: Sequence[float]) -> str:
    """SimGrid >= 3.28 ``wattage_per_state``: one ``Idle:AllCores`` pair (W) per pstate, comma-separated.

    Args are tuples (the result is cached).
    """
    return ",".join(f"{fmt_number(i)}:{fmt_number(c)}" for i, c in zip(idle, computing))


def _prop(parent: etree._Element, key: str, value: str) -> None:
    etree.SubElement(parent, "prop", id=key, value=value)


def _link_values(link: LinkSpec | None, network: str) -> tuple[str, str]:
    if network == "ideal" or link is None:
        return IDEAL_BANDWIDTH, IDEAL_LATENCY
    return link.bandwidth_text, f"{fmt_number(link.latency)}s"


def _host(zone: etree._Element, spec: HostSpec, bandwidth: str, latency: str) -> None:
    host = etree.SubElement(zone, "host", id=spec.name, speed=speed_attribute(spec.speeds),
                            pstate=str(spec.initial_pstate))
    _prop(host, "wattage_per_state", wattage_attribute(spec.idle_watts, spec.computing_watts))
    _prop(host, "wattage_off", fmt_number(spec.idle_watts[spec.initial_pstate]))
    for key, value in spec.properties.items():
        if key not in ("wattage_per_state", "wattage_off", "watt_per_state", "watt_off"):
            _prop(host, key, str(value))
    link = f"{spec.name}_link"
    etree.SubElement(zone, "link", id=link, bandwidth=bandwidth, latency=latency, sharing_policy="SPLITDUPLEX")
    etree.SubElement(zone, "host_link", id=spec.name, up=f"{link}_UP", down=f"{link}_DOWN")


def _star_zone(root: etree._Element, zone_id: str, props: dict[str, str]) -> etree._Element:
    zone = etree.SubElement(root, "zone", id=zone_id, routing="Cluster")
    for key, value in props.items():
        _prop(zone, key, value)
    etree.SubElement(zone, "router", id=f"{zone_id}_router")
    return zone


def simgrid_platform_tree(hierarchy: ResourceHierarchy, *, network: str = "ideal") -> etree._ElementTree:
    """Build the SimGrid platform XML tree of a hierarchy (see the module docstring).

    Args:
        hierarchy: The platform.
        network: ``"ideal"`` (default) or ``"library"`` (link types' bandwidth and latency).

    Returns:
        The XML tree (root ``<platform version="4.1">``).

    Raises:
        PlatformError: ``network`` is not one of :data:`NETWORK_MODES`.
    """
    if network not in NETWORK_MODES:
        raise PlatformError(f"network must be one of {', '.join(NETWORK_MODES)}, got {network!r}")
    platform = etree.Element("platform", version="4.1")
    platform.append(etree.Comment(
        f" Generated by HDeepRM: {hierarchy.nb_cores} cores (one host each, names in core order) in "
        f"{hierarchy.nb_clusters} cluster(s) + {DEFAULT_MASTER_HOST}. Pstates per core: 0 = G, 1 = 0.75 G (memory "
        "bandwidth contention), 2 = idle core of a busy processor (0.25 P), 3 = core of an idle processor "
        f"(0.05 P, initial); idle pstates run at 0.001 flop/s. Network: {network}. "))
    root = etree.SubElement(platform, "zone", id="hdeeprm", routing="Full")
    master_zone = _star_zone(root, "master", {})
    bb_bw, bb_lat = _link_values(hierarchy.global_links, network)
    master = HostSpec(DEFAULT_MASTER_HOST, (MASTER_HOST_SPEED,), (0.0,), (0.0,), 0, {})
    _host(master_zone, master, bb_bw, bb_lat)
    etree.SubElement(master_zone, "backbone", id="master_backbone", bandwidth=IDEAL_BANDWIDTH, latency=IDEAL_LATENCY)
    specs = hierarchy.host_specs()
    zones = ["master"]
    core = 0
    for c, cid in enumerate(hierarchy.cluster_id):
        zone_id = f"cluster{c}"
        zones.append(zone_id)
        zone = _star_zone(root, zone_id, {"cluster": cid})
        bandwidth, latency = _link_values(hierarchy.cluster_links[c], network)
        first = int(hierarchy.cluster_first_node[c])
        last = first + int(hierarchy.cluster_n_nodes[c])
        end = int(hierarchy.node_first_core[last - 1] + hierarchy.node_n_cores[last - 1]) if last > first else core
        for spec in specs[core:end]:
            _host(zone, spec, bandwidth, latency)
        core = end
        etree.SubElement(zone, "backbone", id=f"{zone_id}_backbone", bandwidth=bandwidth, latency=latency)
    etree.SubElement(root, "link", id="global_backbone", bandwidth=bb_bw, latency=bb_lat)
    for i, src in enumerate(zones):
        for dst in zones[i + 1:]:
            route = etree.SubElement(root, "zoneRoute", src=src, dst=dst, gw_src=f"{src}_router",
                                     gw_dst=f"{dst}_router")
            etree.SubElement(route, "link_ctn", id="global_backbone")
    return etree.ElementTree(platform)


def write_simgrid_platform(hierarchy: ResourceHierarchy, path: str | Path, *, network: str = "ideal") -> Path:
    """Write the SimGrid platform XML of a hierarchy for Batsim 4.2.1 / SimGrid 3.32.

    Args:
        hierarchy: The platform.
        path: Output file (its folder must exist).
        network: ``"ideal"`` (default: 0 latency, 1000 TBps) or ``"library"``.

    Returns:
        ``path`` as a Path.

    Raises:
        PlatformError: Bad ``network``.
        OSError: The file cannot be written (a missing folder, a full disk), naming it; the file is
            written atomically (:func:`hdeeprm.files.atomic_write`).
    """
    from hdeeprm.files import atomic_write

    tree = simgrid_platform_tree(hierarchy, network=network)
    out = Path(path)
    data = etree.tostring(tree, xml_declaration=True, encoding="UTF-8", pretty_print=True, doctype=SIMGRID_DOCTYPE)
    with atomic_write(out, binary=True) as f:   # a full disk: OSError naming the file, and no partial XML
        f.write(data)
    return out
