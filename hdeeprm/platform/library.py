"""Type libraries: the processor, node and network models platforms are built from.

A library file is a JSON object mapping type names to descriptions (HDeepRM's
format, the same as the original HDeepRM's ``data/*.json``):

- processor type: ``{"type": "CPU", "cores": 6, "clock_rate": 2.26 (GHz),
  "dpflops_per_cycle": 4, "power": 60 (W, TDP of the whole processor),
  "mem_bw": 32.0 (GB/s, shared by its cores), "uarch": ..., "llc_size": ... (MB)}``;
- node type: ``{"processors": [{"type": "Xeon L5640", "number": 2}],
  "memory": {"type": "DDR3-1333", "capacity": 48 (GB)}}``, optionally with
  ``"gpus": [{"type": "A100 SXM4 80GB", "number": 8, "grouping": "NVLink"}]`` (GPU types
  from the GPU type library, :mod:`hdeeprm.platform.gpu_types`; grouping ``NVLink`` or ``PCIe``);
- network type: ``{"bandwidth": "32Gbps"}`` (SimGrid bandwidth units);
- memory type (accepted for compatibility, unused): ``{"latency": "103.5ns"}``.

Keys starting with ``_`` (``"_doc"``, ``"_source"``) are comments, and so is
``"id"``. The kind of each entry is told by its fields, so one file may mix
kinds; a file may also group them under ``"processor_types"``,
``"node_types"``, ``"network_types"`` and ``"memory_types"``.

The libraries shipped in ``hdeeprm/platform/data/`` are always read first;
files given by the user are read after them, in order, and an entry replaces
any earlier entry of the same kind and name. Looking up an unknown name raises
a :class:`~hdeeprm.errors.PlatformError` that names the closest known name
(``difflib``) and the files searched.
"""
from __future__ import annotations

import difflib
import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdeeprm.errors import PlatformError
from hdeeprm.jsontext import decode_json
from hdeeprm.platform.hierarchy import NodeType, ProcessorType
from hdeeprm.reading import MAX_GPUS_PER_NODE, read_text

#: Folder of the libraries shipped with HDeepRM.
DATA_DIR = Path(__file__).resolve().parent / "data"
#: The shipped library files, in reading order.
DEFAULT_LIBRARY_FILES: tuple[Path, ...] = (DATA_DIR / "processor_types.json", DATA_DIR / "node_types.json",
                                          DATA_DIR / "network_types.json")

# SimGrid units (https://simgrid.org/doc/latest/XML_reference.html), to bytes per second and seconds.
_BANDWIDTH_UNITS = {"": 1.0, "Bps": 1.0, "bps": 0.125}
for _i, _p in enumerate("kMGTPE", start=1):
    _BANDWIDTH_UNITS[f"{_p}Bps"] = 1000.0 ** _i
    _BANDWIDTH_UNITS[f"{_p}bps"] = 1000.0 ** _i / 8
    _BANDWIDTH_UNITS[f"{_p.upper()}iBps"] = 1024.0 ** _i
    _BANDWIDTH_UNITS[f"{_p.upper()}ibps"] = 1024.0 ** _i / 8
_BANDWIDTH_UNITS["KBps"] = 1000.0
_BANDWIDTH_UNITS["Kbps"] = 1000.0 / 8
_TIME_UNITS = {"": 1.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9, "ps": 1e-12, "m": 60.0, "h": 3600.0,
               "d": 86400.0, "w": 604800.0}
_QUANTITY = re.compile(r"^\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*([A-Za-z]*)\s*$")

_PROCESSOR_FIELDS = ("type", "cores", "clock_rate", "dpflops_per_cycle", "power", "mem_bw", "uarch", "llc_size", "id")
_NODE_FIELDS = ("processors", "memory", "gpus", "id")
#: How the GPUs of a node are connected (informative: the timed GPU model does not time communication).
GPU_GROUPINGS = ("NVLink", "PCIe")
_NETWORK_FIELDS = ("bandwidth", "id")
_MEMORY_FIELDS = ("latency", "id")
_GROUPS = {"processor_types": "processor", "node_types": "node", "network_types": "network",
           "memory_types": "memory"}


@dataclass(frozen=True, slots=True)
class NetworkType:
    """A network technology from a type library.

    Attributes:
        name: Library key, e.g. ``"InfiniBand QDR"``.
        bandwidth: Bandwidth of one link in bytes per second.
        bandwidth_text: The bandwidth as written (SimGrid units), e.g. ``"32Gbps"``.
        source: Library file that defined it.
    """

    name: str
    bandwidth: float
    bandwidth_text: str
    source: str = ""


def parse_quantity(value: Any, units: Mapping[str, float], what: str, path: str | None = None,
                   line: int | None = None) -> float:
    """Parse a SimGrid quantity such as ``"10Gbps"`` or ``"50us"`` into SI units.

    Args:
        value: A string ``<number><unit>`` or a plain non-negative number (already in SI units).
        units: Unit suffix -> factor to the SI unit.
        what: Name of the field, for messages.
        path: File being read, for messages.
        line: Line in that file, if known.

    Returns:
        The value in the SI unit of ``units`` (bytes/s or seconds).

    Raises:
        PlatformError: The value is not a non-negative number with a known unit.
    """
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
        return float(value)
    match = _QUANTITY.match(value) if isinstance(value, str) else None
    if match is None or match.group(2) not in units:
        known = ", ".join(u for u in units if u)
        raise PlatformError(f"{what} must be a non-negative number with a unit among {known}, got {value!r}",
                            path, line)
    return float(match.group(1)) * units[match.group(2)]


def parse_bandwidth(value: Any, what: str, path: str | None = None, line: int | None = None) -> float:
    """Parse a SimGrid bandwidth (``"10Gbps"``, ``"1.25GBps"``) into bytes per second; see :func:`parse_quantity`."""
    return parse_quantity(value, _BANDWIDTH_UNITS, what, path, line)


def parse_latency(value: Any, what: str, path: str | None = None, line: int | None = None) -> float:
    """Parse a SimGrid time (``"0us"``, ``"500us"``, ``"1ms"``) into seconds; see :func:`parse_quantity`."""
    return parse_quantity(value, _TIME_UNITS, what, path, line)


def closest(name: str, candidates: Iterable[str]) -> str | None:
    """The candidate closest to ``name``, or None.

    Tried in order: a case-insensitive equal name, the first (sorted) name that
    starts with ``name``, then ``difflib``'s closest match (ratio >= 0.6).
    """
    pool = list(candidates)
    lowered = {c.lower(): c for c in pool}
    if name.lower() in lowered:
        return lowered[name.lower()]
    prefixed = sorted(c for c in pool if name and c.lower().startswith(name.lower()))
    if prefixed:
        return prefixed[0]
    found = difflib.get_close_matches(name, pool, n=1, cutoff=0.6)
    return found[0] if found else None


def read_json(path: str | Path, what: str) -> Any:
    """Read a JSON file, turning I/O and syntax errors into PlatformError.

    Args:
        path: The file.
        what: What the file is, for messages (``"platform file"``, ``"type library"``).

    Returns:
        The decoded JSON value.

    Raises:
        PlatformError: ``"cannot read <what>: <reason> (<path>)"`` or
            ``"malformed JSON: <reason> at column <c> (<path>:<line>)"``.
    """
    return read_json_text(path, what)[0]


def read_json_text(path: str | Path, what: str) -> tuple[Any, str]:
    """As :func:`read_json`, also returning the file's text (for :func:`key_line`)."""
    text = read_text(path, what, PlatformError)   # the reading rules: UTF-8, a byte-order mark skipped
    try:
        return decode_json(text, str(path), PlatformError), text
    except json.JSONDecodeError as exc:
        raise PlatformError(f"malformed JSON: {exc.msg} at column {exc.colno}", str(path), exc.lineno) from None


def check_positive_int(value: Any, what: str, path: str | None, line: int | None = None) -> int:
    """Return ``value`` if it is an integer >= 1.

    Raises:
        PlatformError: "<what> must be a positive integer, got <value>".
    """
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise PlatformError(f"{what} must be a positive integer, got {value!r}", path, line)
    return value


def check_positive_number(value: Any, what: str, path: str | None, line: int | None = None) -> float:
    """Return ``value`` as float if it is a finite number > 0, else raise PlatformError."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < float("inf"):
        raise PlatformError(f"{what} must be a positive number, got {value!r}", path, line)
    return float(value)


def check_fields(entry: Mapping[str, Any], allowed: tuple[str, ...], what: str, path: str | None,
                 line: int | None = None) -> None:
    """Reject keys of ``entry`` that are not in ``allowed`` (keys starting with ``_`` are comments).

    Raises:
        PlatformError: "<what> has an unknown field 'x' (did you mean 'y'?)".
    """
    for key in entry:
        if key.startswith("_") or key in allowed:
            continue
        hint = closest(key, allowed)
        suggestion = f" (did you mean {hint!r}?)" if hint else f" (known fields: {', '.join(allowed)})"
        raise PlatformError(f"{what} has an unknown field {key!r}{suggestion}", path, line)


def key_line(text: str, key: str) -> int | None:
    """1-based line of the first occurrence of ``"key":`` in a JSON text (a cheap locator for messages)."""
    match = re.search(re.escape(json.dumps(key)) + r"\s*:", text)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _require(entry: Mapping[str, Any], key: str, what: str, path: str, line: int | None) -> Any:
    if key not in entry:
        raise PlatformError(f"{what} must have a {key!r} field", path, line)
    return entry[key]


class TypeLibrary:
    """Processor, node and network types by name, read from library files.

    Build with :meth:`load`; instances are read-only afterwards.

    Attributes:
        processors: Processor types by name.
        nodes: Node types by name.
        networks: Network types by name.
        memories: Memory types by name (raw dicts; informative only).
        files: The files read, in order (later ones override earlier ones).
    """

    def __init__(self) -> None:
        self.processors: dict[str, ProcessorType] = {}
        self.nodes: dict[str, NodeType] = {}
        self.networks: dict[str, NetworkType] = {}
        self.memories: dict[str, dict[str, Any]] = {}
        self.files: list[str] = []

    @classmethod
    def load(cls, extra_files: Iterable[str | Path] = (), *, defaults: bool = True) -> TypeLibrary:
        """Read the shipped libraries (unless ``defaults`` is False), then ``extra_files`` in order.

        Args:
            extra_files: User library files; their entries extend or replace earlier ones.
            defaults: Whether to read :data:`DEFAULT_LIBRARY_FILES` first.

        Returns:
            The library.

        Raises:
            PlatformError: A file is missing, is not valid JSON, or has an invalid entry
                (the message names the file, the entry's line and the field).
        """
        lib = cls()
        for path in (*(DEFAULT_LIBRARY_FILES if defaults else ()), *extra_files):
            lib._add_file(path)
        return lib

    def _add_file(self, path: str | Path) -> None:
        spath = str(path)
        data, text = read_json_text(path, "type library")
        if not isinstance(data, dict):
            raise PlatformError(f"a type library must be a JSON object, got {type(data).__name__}", spath)
        self.files.append(spath)
        if any(key in _GROUPS for key in data):
            for group, entries in data.items():
                if group.startswith("_"):
                    continue
                if group not in _GROUPS:
                    hint = closest(group, _GROUPS)
                    raise PlatformError(f"unknown library section {group!r}"
                                        + (f" (did you mean {hint!r}?)" if hint else ""), spath, key_line(text, group))
                if not isinstance(entries, dict):
                    raise PlatformError(f"{group} must be a JSON object", spath, key_line(text, group))
                for name, entry in entries.items():
                    if not name.startswith("_"):
                        self._add_entry(name, entry, _GROUPS[group], spath, key_line(text, name))
            return
        for name, entry in data.items():
            if not name.startswith("_"):
                self._add_entry(name, entry, None, spath, key_line(text, name))

    def _add_entry(self, name: str, entry: Any, kind: str | None, path: str, line: int | None) -> None:
        if not isinstance(entry, dict):
            raise PlatformError(f"type {name!r} must be a JSON object, got {type(entry).__name__}", path, line)
        if kind is None:
            kind = ("processor" if "cores" in entry else "node" if "processors" in entry
                    else "network" if "bandwidth" in entry else "memory" if "latency" in entry else None)
        if kind is None:
            raise PlatformError(f"type {name!r} must be a processor type (with 'cores'), a node type (with "
                                f"'processors') or a network type (with 'bandwidth')", path, line)
        what = f"{kind} type {name!r}"
        if kind == "processor":
            self.processors[name] = _parse_processor(name, entry, what, path, line)
        elif kind == "node":
            self.nodes[name] = _parse_node(name, entry, what, path, line)
        elif kind == "network":
            check_fields(entry, _NETWORK_FIELDS, what, path, line)
            text = _require(entry, "bandwidth", what, path, line)
            bandwidth = parse_bandwidth(text, f"{what}: bandwidth", path, line)
            if bandwidth <= 0:
                raise PlatformError(f"{what}: bandwidth must be positive, got {text!r}", path, line)
            self.networks[name] = NetworkType(name, bandwidth, str(text), path)
        else:
            check_fields(entry, _MEMORY_FIELDS, what, path, line)
            self.memories[name] = dict(entry)

    # ------------------------------------------------------------------ look-ups
    def processor(self, name: Any, what: str, path: str | None = None, line: int | None = None) -> ProcessorType:
        """The processor type ``name``; see :meth:`lookup`."""
        return self.lookup(self.processors, "processor", name, what, path, line)

    def node(self, name: Any, what: str, path: str | None = None, line: int | None = None) -> NodeType:
        """The node type ``name``; see :meth:`lookup`."""
        return self.lookup(self.nodes, "node", name, what, path, line)

    def network(self, name: Any, what: str, path: str | None = None, line: int | None = None) -> NetworkType:
        """The network type ``name``; see :meth:`lookup`."""
        return self.lookup(self.networks, "network", name, what, path, line)

    def lookup(self, table: Mapping[str, Any], kind: str, name: Any, what: str, path: str | None,
               line: int | None) -> Any:
        """Find ``name`` in ``table``, or raise a PlatformError that suggests the closest name.

        Args:
            table: One of :attr:`processors`, :attr:`nodes`, :attr:`networks`.
            kind: ``"processor"``, ``"node"`` or ``"network"``, for the message.
            name: The name asked for.
            what: The field that holds the name, e.g. ``"clusters[0].nodes[2].type"``.
            path: The file that asked for it.
            line: The line in that file, if known.

        Raises:
            PlatformError: e.g. "clusters[0].nodes[0].type must be a known node type, got
                'Bullx B500'; did you mean 'Bullx B500-0'? (libraries searched: ...)".
        """
        if isinstance(name, str) and name in table:
            return table[name]
        if not isinstance(name, str):
            raise PlatformError(f"{what} must be a {kind} type name (a string), got {name!r}", path, line)
        hint = closest(name, table)
        suggestion = f"; did you mean {hint!r}?" if hint else ""
        raise PlatformError(f"{what} must be a known {kind} type, got {name!r}{suggestion} "
                            f"(libraries searched: {', '.join(self.files)})", path, line)


def _parse_processor(name: str, entry: Mapping[str, Any], what: str, path: str, line: int | None) -> ProcessorType:
    check_fields(entry, _PROCESSOR_FIELDS, what, path, line)
    kind = entry.get("type", "CPU")
    if kind != "CPU":
        raise PlatformError(f"{what}: type must be 'CPU' (the only device type supported), got {kind!r}", path, line)
    values = {key: _require(entry, key, what, path, line)
              for key in ("cores", "clock_rate", "dpflops_per_cycle", "power", "mem_bw")}
    llc = entry.get("llc_size")
    uarch = entry.get("uarch")
    return ProcessorType(
        name=name,
        cores=check_positive_int(values["cores"], f"{what}: cores", path, line),
        clock_rate=check_positive_number(values["clock_rate"], f"{what}: clock_rate", path, line),
        dpflops_per_cycle=check_positive_number(values["dpflops_per_cycle"], f"{what}: dpflops_per_cycle", path, line),
        power=check_positive_number(values["power"], f"{what}: power", path, line),
        mem_bw=check_positive_number(values["mem_bw"], f"{what}: mem_bw", path, line),
        kind="CPU",
        uarch=None if uarch is None else str(uarch),
        llc_size=None if llc is None else check_positive_number(llc, f"{what}: llc_size", path, line),
        source=path,
    )


def _parse_node(name: str, entry: Mapping[str, Any], what: str, path: str, line: int | None) -> NodeType:
    check_fields(entry, _NODE_FIELDS, what, path, line)
    procs = _require(entry, "processors", what, path, line)
    if not isinstance(procs, list) or not procs:
        raise PlatformError(f"{what}: processors must be a non-empty list, got {procs!r}", path, line)
    slots = []
    for i, slot in enumerate(procs):
        where = f"{what}: processors[{i}]"
        if not isinstance(slot, dict):
            raise PlatformError(f"{where} must be an object with 'type' and 'number', got {slot!r}", path, line)
        check_fields(slot, ("type", "number"), where, path, line)
        ptype = _require(slot, "type", where, path, line)
        if not isinstance(ptype, str):
            raise PlatformError(f"{where}.type must be a string, got {ptype!r}", path, line)
        slots.append((ptype, check_positive_int(_require(slot, "number", where, path, line), f"{where}.number",
                                                path, line)))
    memory = _require(entry, "memory", what, path, line)
    if not isinstance(memory, dict):
        raise PlatformError(f"{what}: memory must be an object with 'capacity' (GB), got {memory!r}", path, line)
    check_fields(memory, ("type", "capacity"), f"{what}: memory", path, line)
    capacity = check_positive_number(_require(memory, "capacity", f"{what}: memory", path, line),
                                     f"{what}: memory.capacity", path, line)
    return NodeType(name=name, processors=tuple(slots), memory_capacity=capacity,
                    memory_type=str(memory.get("type", "")), source=path, gpus=_parse_gpus(entry, what, path, line))


def _parse_gpus(entry: Mapping[str, Any], what: str, path: str, line: int | None) -> tuple[tuple[str, int, str], ...]:
    gpus = entry.get("gpus", [])
    if not isinstance(gpus, list):
        raise PlatformError(f"{what}: gpus must be a list of {{type, number, grouping}}, got {gpus!r}", path, line)
    out = []
    for i, slot in enumerate(gpus):
        where = f"{what}: gpus[{i}]"
        if not isinstance(slot, dict):
            raise PlatformError(f"{where} must be an object with 'type', 'number' and 'grouping', got {slot!r}",
                                path, line)
        check_fields(slot, ("type", "number", "grouping"), where, path, line)
        gtype = _require(slot, "type", where, path, line)
        if not isinstance(gtype, str) or not gtype:
            raise PlatformError(f"{where}.type must be a GPU type name, got {gtype!r}", path, line)
        grouping = slot.get("grouping", "PCIe")
        if grouping not in GPU_GROUPINGS:
            raise PlatformError(f"{where}.grouping must be one of {', '.join(GPU_GROUPINGS)}, got {grouping!r}",
                                path, line)
        number = check_positive_int(_require(slot, "number", where, path, line), f"{where}.number", path, line)
        if number > MAX_GPUS_PER_NODE:
            raise PlatformError(f"{where}.number must be an integer in 1..{MAX_GPUS_PER_NODE} (GPUs of one node), "
                                f"got {number}", path, line)
        out.append((gtype, number, grouping))
    return tuple(out)


@functools.lru_cache(maxsize=1)
def _default_library() -> TypeLibrary:
    return TypeLibrary.load()


def load_library(extra_files: Iterable[str | Path] = ()) -> TypeLibrary:
    """The shipped libraries extended by ``extra_files`` (the shipped ones are read once and cached).

    Args:
        extra_files: User library files, read in order after the shipped ones.

    Returns:
        A library; do not modify it (it may be the shared cached instance).
    """
    extra = tuple(extra_files)
    if not extra:
        return _default_library()
    base = _default_library()
    lib = TypeLibrary()
    lib.processors, lib.nodes = dict(base.processors), dict(base.nodes)
    lib.networks, lib.memories, lib.files = dict(base.networks), dict(base.memories), list(base.files)
    for path in extra:
        lib._add_file(path)
    return lib
