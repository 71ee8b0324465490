"""The GPU type library: GPU models from vendor datasheets, kept apart from the processor library.

A GPU library file is a JSON object mapping type names to descriptions::

    "A100 SXM4 80GB": {"vendor": "NVIDIA", "arch": "Ampere", "form_factor": "SXM4",
                       "fp64": 9.7, "fp64_tensor": 19.5, "fp32": 19.5, "tf32": 156.0, "fp16": 312.0,
                       "memory": 80, "mem_bw": 2039, "tdp": 400, "idle_power": 60, "idle_estimate": true,
                       "mig_instances": 7, "sharing": ["time-slicing", "MPS", "MIG"],
                       "interconnect": "NVLink 3.0, 600 GB/s", "aliases": [],
                       "_source": "NVIDIA A100 Tensor Core GPU datasheet (...)"}

Rates are peak dense TFLOP/s (``null`` where the vendor publishes none), ``memory``
in GB, ``mem_bw`` in GB/s, ``tdp`` and ``idle_power`` in W (``idle_estimate``
marks an idle power that is an estimate, as vendors rarely publish one). Every
entry must cite its source in ``"_source"``. ``aliases`` are other names of the
same model, e.g. the GPU model names of the Alibaba openb trace (``V100M16``).

The library shipped in ``hdeeprm/platform/data/gpu_types.json`` is read first,
then the user's files in order; an entry replaces an earlier one of the same
name. An alias that is also a type name (the name wins) or that moves from one type to
another, and a type name that takes over an alias, are logged as warnings; empty names
are refused. Values outside :data:`RANGES` are rejected with a one-line
:class:`~hdeeprm.errors.PlatformError` naming the file, the entry's line and the
field (a consumer GPU at 1e31 FLOP/s is a typo, not a GPU).
"""
from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hdeeprm.errors import PlatformError
from hdeeprm.platform.library import DATA_DIR, check_fields, closest, key_line, read_json_text

log = logging.getLogger(__name__)

#: The GPU library shipped with HDeepRM.
DEFAULT_GPU_LIBRARY = DATA_DIR / "gpu_types.json"

#: Accepted (exclusive lower, inclusive upper) bounds of the numeric fields, with their units. The upper
#: bounds sit well above any GPU sold today (H100 SXM: 989 dense FP16 TFLOP/s, 3.35 TB/s, 700 W).
RANGES: dict[str, tuple[float, float, str]] = {
    "fp64": (0.0, 5000.0, "TFLOP/s"), "fp64_tensor": (0.0, 5000.0, "TFLOP/s"), "fp32": (0.0, 5000.0, "TFLOP/s"),
    "tf32": (0.0, 10000.0, "TFLOP/s"), "fp16": (0.0, 20000.0, "TFLOP/s"), "memory": (0.0, 1024.0, "GB"),
    "mem_bw": (0.0, 20000.0, "GB/s"), "tdp": (0.0, 2000.0, "W"), "idle_power": (0.0, 2000.0, "W"),
}
_RATES = ("fp64", "fp64_tensor", "fp32", "tf32", "fp16")
_TEXT = ("vendor", "arch", "form_factor", "interconnect")
_FIELDS = (*_TEXT, *RANGES, "idle_estimate", "mig_instances", "sharing", "aliases", "id")
#: Ways a device can be shared, as the ``sharing`` field spells them.
SHARING_MODES = ("time-slicing", "MPS", "MIG", "vGPU")
#: Largest number of MIG instances (A100 and H100: 7).
MAX_MIG_INSTANCES = 7


@dataclass(frozen=True, slots=True)
class GpuType:
    """A GPU model of the library.

    Attributes:
        name: Library key, e.g. ``"A100 SXM4 80GB"``.
        vendor, arch, form_factor, interconnect: Descriptive text from the datasheet.
        fp64, fp64_tensor, fp32, tf32, fp16: Peak dense rates in TFLOP/s (None: not published / no such unit).
        memory: Device memory in GB.
        mem_bw: Memory bandwidth in GB/s (None when unknown).
        tdp: Maximum board power in W (None when unknown).
        idle_power: Idle board power in W (None when unknown).
        idle_estimate: Whether ``idle_power`` is an estimate rather than a vendor figure.
        mig_instances: Largest number of MIG instances (0: no MIG).
        sharing: Sharing modes among :data:`SHARING_MODES`.
        aliases: Other names of the model (e.g. openb's ``"V100M16"``).
        source: The ``_source`` text (vendor datasheet name and URL).
        file: The library file that defined it.
    """

    name: str
    vendor: str
    arch: str
    form_factor: str
    interconnect: str
    fp64: float | None
    fp64_tensor: float | None
    fp32: float | None
    tf32: float | None
    fp16: float | None
    memory: float
    mem_bw: float | None
    tdp: float | None
    idle_power: float | None
    idle_estimate: bool
    mig_instances: int
    sharing: tuple[str, ...]
    aliases: tuple[str, ...]
    source: str
    file: str = ""

    def peak(self, precision: str) -> float | None:
        """Peak rate in FLOP/s at ``precision`` (``"fp64"``, ``"fp32"``, ``"tf32"``, ``"fp16"``), None if unknown."""
        value = getattr(self, precision)
        return None if value is None else value * 1e12


def _number(entry: Mapping[str, Any], key: str, what: str, path: str, line: int | None) -> float | None:
    if key not in entry:
        raise PlatformError(f"{what} must have a {key!r} field (null when the vendor publishes none)", path, line)
    value = entry[key]
    if value is None:
        return None
    low, high, unit = RANGES[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low < value <= high:
        raise PlatformError(f"{what}: {key} must be a number in ({low:g}, {high:g}] {unit} or null, got {value!r}",
                            path, line)
    return float(value)


def parse_gpu_type(name: str, entry: Any, path: str, line: int | None = None) -> GpuType:
    """Check one library entry and build its :class:`GpuType`.

    Args:
        name: The entry's key.
        entry: The decoded JSON value.
        path: The library file, for messages.
        line: The entry's line in ``path``, if known.

    Returns:
        The GPU type.

    Raises:
        PlatformError: A field is missing, unknown, of the wrong type or out of :data:`RANGES`; the idle
            power is not below the TDP; ``_source`` is missing; e.g. ``gpu type 'X': fp32 must be a number in
            (0, 5000] TFLOP/s or null, got 1e+19 (lib.json:12)``.
    """
    what = f"gpu type {name!r}"
    if not isinstance(entry, dict):
        raise PlatformError(f"{what} must be a JSON object, got {type(entry).__name__}", path, line)
    check_fields(entry, _FIELDS, what, path, line)
    source = entry.get("_source")
    if not isinstance(source, str) or not source.strip():
        raise PlatformError(f"{what} must cite its source in '_source' (vendor datasheet name and URL)", path, line)
    values = {key: _number(entry, key, what, path, line) for key in RANGES}
    if values["memory"] is None:
        raise PlatformError(f"{what}: memory must be a number in (0, 1024] GB, got null", path, line)
    if values["fp32"] is not None and values["fp16"] is not None and values["fp16"] < values["fp32"] / 4:
        raise PlatformError(f"{what}: fp16 ({values['fp16']:g}) below a quarter of fp32 ({values['fp32']:g}) "
                            "TFLOP/s: check the units", path, line)
    idle, tdp = values["idle_power"], values["tdp"]
    if idle is not None and (tdp is None or idle >= tdp):
        raise PlatformError(f"{what}: idle_power must be below tdp, got {idle:g} W >= {tdp} W", path, line)
    mig = entry.get("mig_instances", 0)
    if isinstance(mig, bool) or not isinstance(mig, int) or not 0 <= mig <= MAX_MIG_INSTANCES:
        raise PlatformError(f"{what}: mig_instances must be an integer in 0..{MAX_MIG_INSTANCES}, got {mig!r}",
                            path, line)
    sharing = entry.get("sharing", ["time-slicing"])
    if not isinstance(sharing, list) or any(mode not in SHARING_MODES for mode in sharing):
        raise PlatformError(f"{what}: sharing must be a list among {', '.join(SHARING_MODES)}, got {sharing!r}",
                            path, line)
    if ("MIG" in sharing) != (mig > 0):
        raise PlatformError(f"{what}: sharing lists MIG exactly when mig_instances > 0, got {sharing!r} and {mig}",
                            path, line)
    aliases = entry.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) and a.strip() for a in aliases):
        raise PlatformError(f"{what}: aliases must be a list of non-empty names, got {aliases!r}", path, line)
    idle_estimate = entry.get("idle_estimate", False)
    if not isinstance(idle_estimate, bool):
        raise PlatformError(f"{what}: idle_estimate must be true or false, got {idle_estimate!r}", path, line)
    text = {key: str(entry.get(key, "")) for key in _TEXT}
    return GpuType(name=name, **text, **values, idle_estimate=idle_estimate, mig_instances=mig,
                   sharing=tuple(sharing), aliases=tuple(aliases), source=source, file=path)


class GpuTypeLibrary:
    """GPU types by name (and by alias), read from library files; build with :meth:`load`.

    Attributes:
        types: GPU types by library name.
        aliases: Alias -> library name.
        files: The files read, in order.
    """

    def __init__(self) -> None:
        self.types: dict[str, GpuType] = {}
        self.aliases: dict[str, str] = {}
        self.files: list[str] = []

    @classmethod
    def load(cls, extra_files: Iterable[str | Path] = (), *, defaults: bool = True) -> GpuTypeLibrary:
        """Read :data:`DEFAULT_GPU_LIBRARY` (unless ``defaults`` is False), then ``extra_files`` in order.

        Raises:
            PlatformError: A file is missing, is not JSON, or has an invalid entry (see :func:`parse_gpu_type`).
        """
        lib = cls()
        for path in (*((DEFAULT_GPU_LIBRARY,) if defaults else ()), *extra_files):
            lib.add_file(path)
        return lib

    def add_file(self, path: str | Path) -> None:
        """Add (or replace) the entries of one library file; see :meth:`load`."""
        spath = str(path)
        data, text = read_json_text(path, "gpu type library")
        if not isinstance(data, dict):
            raise PlatformError(f"a gpu type library must be a JSON object, got {type(data).__name__}", spath)
        self.files.append(spath)
        for name, entry in data.items():
            if name.startswith("_"):
                continue
            line = key_line(text, name)
            if not name.strip():
                raise PlatformError(f"gpu type names must not be empty, got {name!r}", spath, line)
            gpu = parse_gpu_type(name, entry, spath, line)
            if name in self.aliases and self.aliases[name] != name:
                log.warning("gpu type %r (%s:%s) is also an alias of gpu type %r: the name wins, so %r now means "
                            "the new type", name, spath, line, self.aliases[name], name)
            self.types[name] = gpu
            for alias in gpu.aliases:
                self._add_alias(alias, name, spath, line)

    def _add_alias(self, alias: str, name: str, path: str, line: int | None) -> None:
        """Map ``alias`` to ``name``, warning when it shadows a type name or moves from another type."""
        if alias != name and alias in self.types:
            log.warning("alias %r of gpu type %r (%s:%s) is the name of gpu type %r: the name wins, the alias is "
                        "never used", alias, name, path, line, alias)
        elif self.aliases.get(alias, name) != name:
            log.warning("alias %r moves from gpu type %r to %r (%s:%s)", alias, self.aliases[alias], name, path,
                        line)
        self.aliases[alias] = name

    def __getitem__(self, name: str) -> GpuType:
        """The GPU type called ``name`` (library name or alias); see :meth:`lookup`."""
        return self.lookup(name, "gpu type")

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is a library name or an alias."""
        return name in self.types or name in self.aliases

    def lookup(self, name: Any, what: str, path: str | None = None, line: int | None = None) -> GpuType:
        """The GPU type ``name`` (library name or alias).

        Raises:
            PlatformError: e.g. ``model must be a known gpu type, got 'V100M61'; did you mean 'V100M16'?
                (libraries searched: ...)``.
        """
        if isinstance(name, str) and name in self.types:
            return self.types[name]
        if isinstance(name, str) and name in self.aliases:
            return self.types[self.aliases[name]]
        raise PlatformError(self.unknown(name, what), path, line)

    def unknown(self, name: Any, what: str) -> str:
        """The message for a name that is neither a library name nor an alias, with the closest known one.

        Args:
            name: The unknown name.
            what: The field that gave it (e.g. ``"gpu_spec"``).

        Returns:
            e.g. ``gpu_spec must be a known gpu type, got 'v100m16'; did you mean 'V100M16'? (libraries searched:
            ...)`` (a mis-cased name gets its right case).
        """
        hint = closest(str(name), [*self.types, *self.aliases])
        suggestion = f"; did you mean {hint!r}?" if hint else ""
        return (f"{what} must be a known gpu type, got {name!r}{suggestion} "
                f"(libraries searched: {', '.join(self.files)})")


@functools.lru_cache(maxsize=1)
def _default_gpu_library() -> GpuTypeLibrary:
    return GpuTypeLibrary.load()


def load_gpu_library(extra_files: Iterable[str | Path] = ()) -> GpuTypeLibrary:
    """The shipped GPU library extended by ``extra_files`` (the shipped one is read once and cached).

    Returns:
        A library; do not modify it (it may be the shared cached instance).
    """
    extra = tuple(extra_files)
    if not extra:
        return _default_gpu_library()
    lib = GpuTypeLibrary.load()
    for path in extra:
        lib.add_file(path)
    return lib
