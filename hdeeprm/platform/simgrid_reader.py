r"""Reader of SimGrid XML platforms (the ``-p`` input of Batsim) into :class:`HostSpec` lists.

Only what the embedded engine needs is read: compute hosts, their pstate speeds, initial
pstate and energy properties. Links, routes and zones are ignored (the engine models an ideal
network). Sources: SimGrid 3.32 platform description
(https://simgrid.org/doc/latest/XML_reference.html), its host-energy plugin
(``wattage_per_state``), and Batsim's host numbering (docs/engine.rst, "Host numbering").

* ``<host id speed pstate>`` with ``<prop id value>`` children;
* ``<cluster prefix radical suffix speed>``: one host per number of ``radical``
  ("0-99", "1,3-5"), named prefix + number + suffix, with the cluster's ``<prop>``\\ s;
* ``speed``: comma-separated pstate speeds with SimGrid units ("4Gf, 3Gf, 0.001f");
* ``wattage_per_state``: one ``Idle:AllCores`` (or ``Idle:OneCore:AllCores``) entry per pstate;
  absent → 0 W (SimGrid's default);
* roles follow Batsim 4.2.1 (``src/machines.cpp``, ``src/permissions.cpp``): the host named by
  ``--master-host`` (default ``master_host``) gets the role ``master``, appended after a comma to
  a ``role`` property it already has; the resulting role must be empty (a compute node),
  ``master``, ``compute_node`` or ``storage``, so ``role=master`` on ``master_host`` itself
  ("master,master") is an error, as are two master hosts or none. The master and storage hosts
  are excluded; the compute hosts are returned sorted byte-wise by name, which is Batsim's id order.
"""
from __future__ import annotations

import os
import re

from lxml import etree

from hdeeprm.errors import PlatformError
from hdeeprm.platform.hosts import HostSpec

#: SimGrid speed prefixes (decimal, SI) → multiplier of the FLOP/s unit.
_PREFIXES = {"": 1.0, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18, "Z": 1e21,
             "Y": 1e24}
_SPEED_RE = re.compile(r"^\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)\s*([kMGTPEZY]?)(f|flops)?\s*$")
_RADICAL_RE = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+))?\s*$")


def parse_speed(text: str, where: str) -> float:
    """Parse one SimGrid speed ("4.4Gf", "0.001f", "98.095Mf", "1e9") into FLOP/s.

    Args:
        text: The speed with an optional SI prefix and unit ``f``/``flops``.
        where: Context for error messages (host and file).

    Returns:
        FLOP/s.

    Raises:
        PlatformError: Not a non-negative number with a known unit.
    """
    match = _SPEED_RE.match(text)
    if match is None or (match.group(2) and not match.group(3)):
        raise PlatformError(f"speed must be a number with a unit such as '4.4Gf', got {text!r} "
                            f"({where})")
    value = float(match.group(1)) * _PREFIXES[match.group(2)]
    if value < 0:
        raise PlatformError(f"speed must be >= 0, got {text!r} ({where})")
    return value


def _parse_wattage(text: str, nb_pstates: int, where: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Parse ``wattage_per_state`` into (idle W, computing W) per pstate."""
    idle, comp = [], []
    entries = [e.strip() for e in text.split(",")]
    if len(entries) != nb_pstates:
        raise PlatformError(f"wattage_per_state must have one entry per pstate ({nb_pstates}), got "
                            f"{len(entries)} in {text!r} ({where})")
    for entry in entries:
        parts = entry.split(":")
        try:
            values = [float(p) for p in parts]
        except ValueError:
            values = []
        if len(values) not in (2, 3) or min(values) < 0:
            raise PlatformError(f"wattage_per_state entries must be 'Idle:AllCores' or "
                                f"'Idle:OneCore:AllCores' non-negative watts, got {entry!r} ({where})")
        idle.append(values[0])
        comp.append(values[-1])
    return tuple(idle), tuple(comp)


def _props(element: etree._Element) -> dict[str, str]:
    return {p.get("id"): p.get("value", "") for p in element if p.tag == "prop" and p.get("id")}


def _make_host(name: str, speed_text: str | None, pstate_text: str | None, props: dict[str, str],
               where: str) -> HostSpec:
    if speed_text is None:
        raise PlatformError(f"host {name!r} must have a 'speed' attribute ({where})")
    here = f"host {name!r}, {where}"
    speeds = tuple(parse_speed(s, here) for s in speed_text.split(","))
    try:
        pstate = int(pstate_text) if pstate_text is not None else 0
    except ValueError:
        raise PlatformError(f"pstate must be an integer, got {pstate_text!r} ({here})") from None
    if not 0 <= pstate < len(speeds):
        raise PlatformError(f"pstate must be in [0, {len(speeds) - 1}], got {pstate} ({here})")
    watts = props.get("wattage_per_state")
    if watts is None:
        idle = comp = (0.0,) * len(speeds)
    else:
        idle, comp = _parse_wattage(watts, len(speeds), here)
    return HostSpec(name=name, speeds=speeds, idle_watts=idle, computing_watts=comp,
                    initial_pstate=pstate, properties=props)


def _radical_numbers(text: str, where: str) -> list[int]:
    numbers: list[int] = []
    for part in text.split(","):
        match = _RADICAL_RE.match(part)
        if match is None:
            raise PlatformError(f"radical must be like '0-99' or '1,3-5', got {text!r} ({where})")
        lo = int(match.group(1))
        hi = int(match.group(2)) if match.group(2) is not None else lo
        if hi < lo:
            raise PlatformError(f"radical range {part.strip()!r} is decreasing ({where})")
        numbers.extend(range(lo, hi + 1))
    return numbers


#: Batsim's default ``-m/--master-host``: the host that runs Batsim's server.
DEFAULT_MASTER_HOST = "master_host"
#: The roles Batsim 4.2.1 can create from a host's ``role`` string ("" is a compute node).
BATSIM_ROLES = ("master", "compute_node", "storage")


def host_role(host: HostSpec, master_host: str = DEFAULT_MASTER_HOST) -> str:
    """The role Batsim 4.2.1 gives ``host``: its ``role`` property, plus ``master`` for the master host.

    Args:
        host: A host read from the platform.
        master_host: Batsim's ``--master-host`` name.

    Returns:
        ``""`` (a compute node), ``"master"``, ``"compute_node"`` or ``"storage"``.

    Raises:
        PlatformError: the combined role is not one Batsim can create, e.g. ``master,master`` when
            ``master_host`` carries ``role=master`` itself (Batsim aborts on it).
    """
    role = host.properties.get("role")
    if host.name == master_host:
        role = "master" if role is None else f"{role},master"
    role = role or ""
    if role and role not in BATSIM_ROLES:
        how = (" (its role property plus the 'master' role Batsim gives the --master-host): remove the "
               "property" if host.name == master_host else "")
        raise PlatformError(f"host {host.name!r} has role {role!r}{how}; Batsim 4.2.1 accepts one of "
                            f"{', '.join(BATSIM_ROLES)}")
    return role


def read_simgrid_platform(path: str | os.PathLike, master_host: str = DEFAULT_MASTER_HOST) -> list[HostSpec]:
    """Read the compute hosts of a SimGrid XML platform in Batsim id order.

    Args:
        path: A SimGrid XML platform file (version 4.x).
        master_host: Batsim's ``-m/--master-host`` (it gets the role ``master``, see :func:`host_role`).

    Returns:
        The compute hosts (master host excluded), sorted byte-wise by name: element ``i`` is
        Batsim's resource id ``i``.

    Raises:
        PlatformError: Unreadable or malformed XML, a bad speed/pstate/wattage/radical, duplicate
            host names, a role Batsim rejects, no master host or two, or no compute host.
    """
    source = os.fspath(path)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False,
                             remove_comments=True)
    try:
        tree = etree.parse(source, parser)
    except OSError as exc:
        raise PlatformError(f"cannot read the platform: {exc}", path=source) from None
    except etree.XMLSyntaxError as exc:
        raise PlatformError(f"malformed XML: {exc.msg}", path=source, line=exc.lineno) from None
    hosts: list[HostSpec] = []
    for element in tree.getroot().iter("host", "cluster"):
        where = f"{source}:{element.sourceline}"
        props = _props(element)
        if element.tag == "host":
            name = element.get("id")
            if not name:
                raise PlatformError(f"<host> must have an 'id' attribute ({where})")
            hosts.append(_make_host(name, element.get("speed"), element.get("pstate"), props, where))
            continue
        prefix, suffix = element.get("prefix", ""), element.get("suffix", "")
        radical = element.get("radical")
        if radical is None:
            raise PlatformError(f"<cluster> must have a 'radical' attribute ({where})")
        for number in _radical_numbers(radical, where):
            hosts.append(_make_host(f"{prefix}{number}{suffix}", element.get("speed"),
                                    element.get("pstate"), dict(props), where))
    try:
        roles = [host_role(h, master_host) for h in hosts]
    except PlatformError as exc:
        raise PlatformError(str(exc), path=source) from None
    compute = [h for h, role in zip(hosts, roles) if role in ("", "compute_node")]
    compute.sort(key=lambda h: h.name.encode("utf-8"))
    for a, b in zip(compute, compute[1:]):
        if a.name == b.name:
            raise PlatformError(f"host names must be unique, got {a.name!r} twice", path=source)
    if not compute:
        raise PlatformError("the platform must have at least one compute host (not master_host), "
                            "got none", path=source)
    masters = [h.name for h, role in zip(hosts, roles) if role == "master"]
    if len(masters) != 1:
        found = f"got {len(masters)}: {', '.join(masters)}" if masters else "got none"
        raise PlatformError(f"Batsim 4.2.1 needs exactly one master host (property role=master, or the host "
                            f"named {master_host!r}), {found}", path=source)
    return compute
