"""Read an HDeepRM platform JSON file into a :class:`~hdeeprm.platform.hierarchy.ResourceHierarchy`.

The format (the original HDeepRM's, accepted unchanged)::

    {
      "clusters": [
        {"id": "gaia_cluster",                        (optional, default "cluster<i>")
         "nodes": [{"type": "Bullx B500-0", "number": 60}, ...],
         "local_links": {"type": "InfiniBand QDR", "latency": "0us"}},   (optional)
        ...
      ],
      "global_links": {"type": "InfiniBand QDR", "latency": "0us"}       (optional)
    }

Node and network types come from the type libraries
(:mod:`hdeeprm.platform.library`). Keys starting with ``_`` are comments.
Every error names the file and the JSON path of the offending value, e.g.
``clusters[0].nodes[2].number must be a positive integer, got -1 (gaia.json)``.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hdeeprm.errors import PlatformError
from hdeeprm.platform.library import (TypeLibrary, check_fields, check_positive_int, load_library, parse_latency,
                                      read_json)
from hdeeprm.platform.hierarchy import LinkSpec, NodeType, ResourceHierarchy

_TOP_FIELDS = ("clusters", "global_links")
_CLUSTER_FIELDS = ("id", "nodes", "local_links")


def load_platform(path: str | Path, *, extra_libraries: Iterable[str | Path] = ()) -> ResourceHierarchy:
    """Read an HDeepRM platform JSON file.

    Args:
        path: The platform file.
        extra_libraries: User type-library files, read after the shipped ones
            (their entries extend or replace the shipped types).

    Returns:
        The resource hierarchy of the platform.

    Raises:
        PlatformError: The file or a library is missing or malformed, or a value is
            invalid; the message names the file and the JSON path (and the line
            for JSON syntax errors and library entries), and suggests the
            closest known type name for unknown types.
    """
    library = load_library(extra_libraries)
    return platform_from_dict(read_json(path, "platform file"), library, str(path))


def platform_from_dict(data: Any, library: TypeLibrary, source: str | None = None) -> ResourceHierarchy:
    """Build the hierarchy of an already decoded platform description.

    Args:
        data: The decoded JSON (see the module docstring).
        library: Type library to resolve node, processor and network types.
        source: Name of the file it came from, for messages.

    Returns:
        The resource hierarchy.

    Raises:
        PlatformError: As :func:`load_platform`.
    """
    if not isinstance(data, dict):
        raise PlatformError(f"a platform must be a JSON object with 'clusters', got {type(data).__name__}", source)
    check_fields(data, _TOP_FIELDS, "the platform", source)
    clusters = data.get("clusters")
    if not isinstance(clusters, list) or not clusters:
        raise PlatformError(f"clusters must be a non-empty list, got {clusters!r}", source)
    layout = []
    seen: dict[str, int] = {}
    checked: set[str] = set()
    for c, cluster in enumerate(clusters):
        where = f"clusters[{c}]"
        if not isinstance(cluster, dict):
            raise PlatformError(f"{where} must be an object with 'nodes', got {cluster!r}", source)
        check_fields(cluster, _CLUSTER_FIELDS, where, source)
        cid = cluster.get("id", f"cluster{c}")
        if not isinstance(cid, str) or not cid:
            raise PlatformError(f"{where}.id must be a non-empty string, got {cid!r}", source)
        if cid in seen:
            raise PlatformError(f"{where}.id must be unique, got {cid!r} (also clusters[{seen[cid]}].id)", source)
        seen[cid] = c
        nodes = cluster.get("nodes")
        if not isinstance(nodes, list) or not nodes:
            raise PlatformError(f"{where}.nodes must be a non-empty list, got {nodes!r}", source)
        entries = []
        for n, node in enumerate(nodes):
            nwhere = f"{where}.nodes[{n}]"
            _check_typed_object(node, ("type", "number"), nwhere, source)
            ntype = library.node(node["type"], f"{nwhere}.type", source)
            if ntype.name not in checked:
                _check_node_processors(ntype, library)
                checked.add(ntype.name)
            number = check_positive_int(node.get("number"), f"{nwhere}.number", source)
            entries.append((ntype, number))
        layout.append((cid, entries, _links(cluster.get("local_links"), f"{where}.local_links", library, source)))
    global_links = _links(data.get("global_links"), "global_links", library, source)
    return ResourceHierarchy.from_layout(layout, library.processors, global_links)


def _check_typed_object(spec: Any, fields: tuple[str, str], where: str, source: str | None) -> None:
    """``spec`` must be an object with only ``fields``, among them ``type``.

    Raises:
        PlatformError: naming ``where`` (a JSON path) and the file.
    """
    if not isinstance(spec, dict):
        raise PlatformError(f"{where} must be an object with '{fields[0]}' and '{fields[1]}', got {spec!r}", source)
    check_fields(spec, fields, where, source)
    if "type" not in spec:
        raise PlatformError(f"{where} must have a 'type' field", source)


def _check_node_processors(ntype: NodeType, library: TypeLibrary) -> None:
    """Resolve the processor types of a node type, blaming the library file that defined it."""
    for i, (pname, _number) in enumerate(ntype.processors):
        library.processor(pname, f"node type {ntype.name!r}: processors[{i}].type", ntype.source or None)


def _links(spec: Any, where: str, library: TypeLibrary, source: str | None) -> LinkSpec | None:
    if spec is None:
        return None
    _check_typed_object(spec, ("type", "latency"), where, source)
    net = library.network(spec["type"], f"{where}.type", source)
    latency = parse_latency(spec.get("latency", 0.0), f"{where}.latency", source)
    return LinkSpec(type=net.name, bandwidth=net.bandwidth, latency=latency, bandwidth_text=net.bandwidth_text)
