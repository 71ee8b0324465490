"""GPU clusters: the openb node list reader and the :class:`GpuCluster` it builds.

The Alibaba GPU cluster trace v2023 ("openb", ``alibaba/clusterdata``, folder
``cluster-trace-gpu-v2023``; Weng et al., "Beware of Fragmentation: Scheduling
GPU-Sharing Workloads with Fragmentation Gradient Descent", USENIX ATC 2023)
lists its nodes in a CSV file with the header ``sn,cpu_milli,memory_mib,gpu,model``:
node name, CPU in thousandths of a core, memory in MiB, number of GPUs and GPU
model (``V100M16``, ``V100M32``, ``P100``, ``T4``, ``A10`` and the undisclosed
``G2``, ``G3``; empty for a node without GPUs).

A :class:`GpuCluster` is a plain columnar description (NumPy arrays, one entry
per node), separate from the CPU :class:`~hdeeprm.platform.hierarchy.ResourceHierarchy`
for now: every node has one GPU model, so a later engine can take it node by
node (GPU count and type beside the node's processors).
"""
from __future__ import annotations

import csv
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hdeeprm.errors import PlatformError
from hdeeprm.platform.gpu_types import GpuType, GpuTypeLibrary, load_gpu_library

#: Header of an openb node list.
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
#: Thousandths of a device: openb's unit of CPU and GPU shares.
MILLI = 1000


@dataclass(frozen=True)
class GpuCluster:
    """Nodes with CPU, memory and GPUs of one model each.

    Attributes:
        names: Node names (openb's ``sn``), length N.
        cpu_milli: CPU of each node in thousandths of a core, int64 (N,).
        memory_mib: Memory of each node in MiB, int64 (N,).
        gpu_count: GPUs of each node, int64 (N,).
        gpu_model: Index of each node's GPU model in ``models``, int64 (N,); -1 for a node without GPUs.
        models: GPU model names as the input spells them (e.g. ``"V100M16"``).
        gpu_types: The library entry of each model (same order as ``models``).
        source: The file read ("" when built in code).
        skipped: Rows not turned into nodes, by reason (e.g. ``{"blank line": 1}``).
        groupings: How the GPUs of each model are connected (``"NVLink"``, ``"PCIe"``), by model name, when the
            input says (a platform JSON does, an openb node list does not).
    """

    names: tuple[str, ...]
    cpu_milli: np.ndarray
    memory_mib: np.ndarray
    gpu_count: np.ndarray
    gpu_model: np.ndarray
    models: tuple[str, ...]
    gpu_types: tuple[GpuType, ...]
    source: str = ""
    skipped: dict[str, int] = field(default_factory=dict)
    groupings: dict[str, str] = field(default_factory=dict)

    @property
    def nb_nodes(self) -> int:
        """Number of nodes."""
        return len(self.names)

    @property
    def nb_gpus(self) -> int:
        """Number of GPUs."""
        return int(self.gpu_count.sum())

    @property
    def max_gpus_per_node(self) -> int:
        """Largest number of GPUs on one node (0 for a CPU-only cluster)."""
        return int(self.gpu_count.max(initial=0))

    def summary(self) -> list[dict]:
        """One row per GPU model (and one for nodes without GPUs): nodes, GPUs, memory and peak rates.

        Returns:
            Dicts with ``model``, ``type`` (library name), ``nodes``, ``gpus``, ``gpu_memory_gb`` (total),
            ``fp32_tflops`` and ``fp16_tflops`` (total peak, None when unknown) and ``tdp_w`` (total, None when
            unknown).
        """
        rows = []
        for index, model in enumerate(self.models):
            on = self.gpu_model == index
            gpus = int(self.gpu_count[on].sum())
            gpu = self.gpu_types[index]
            rows.append({"model": model, "type": gpu.name, "nodes": int(on.sum()), "gpus": gpus,
                         "gpu_memory_gb": gpus * gpu.memory,
                         "fp32_tflops": None if gpu.fp32 is None else gpus * gpu.fp32,
                         "fp16_tflops": None if gpu.fp16 is None else gpus * gpu.fp16,
                         "tdp_w": None if gpu.tdp is None else gpus * gpu.tdp})
        cpu_only = int((self.gpu_model < 0).sum())
        if cpu_only:
            rows.append({"model": "", "type": "(no GPU)", "nodes": cpu_only, "gpus": 0, "gpu_memory_gb": 0.0,
                         "fp32_tflops": 0.0, "fp16_tflops": 0.0, "tdp_w": 0.0})
        return rows


def _int_field(value: str, name: str, path: str, line: int) -> int:
    try:
        number = int(value)
    except ValueError:
        raise PlatformError(f"{name} must be a non-negative integer, got {value!r}", path, line) from None
    if number < 0:
        raise PlatformError(f"{name} must be a non-negative integer, got {value!r}", path, line)
    return number


def read_openb_nodes(path: str | Path, library: GpuTypeLibrary | None = None) -> GpuCluster:
    """Read an openb node list (``openb_node_list_gpu_node.csv``, ``openb_node_list_all_node.csv``).

    Args:
        path: The CSV file (header ``sn,cpu_milli,memory_mib,gpu,model``).
        library: GPU types to resolve the models with (default: the shipped library, where openb's names are
            aliases, e.g. ``V100M16`` -> ``V100 SXM2 16GB``).

    Returns:
        The cluster; blank lines are skipped and counted in ``skipped``.

    Raises:
        PlatformError: Wrong header, a row with the wrong number of fields, a negative or non-integer
            number, a duplicate node name, a GPU model unknown to the library, a node with GPUs and no model or a
            model and no GPUs (each message names the file, the line and the field).
    """
    library = library or load_gpu_library()
    spath = str(path)
    names: list[str] = []
    columns: list[tuple[int, int, int, int]] = []
    models: dict[str, int] = {}
    skipped: Counter[str] = Counter()
    seen: set[str] = set()
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.reader(f))
    except OSError as exc:
        raise PlatformError(f"cannot read openb node list: {exc.strerror or exc}", spath) from None
    if not rows or tuple(c.strip() for c in rows[0]) != NODE_COLUMNS:
        got = ",".join(rows[0]) if rows else "an empty file"
        raise PlatformError(f"header must be {','.join(NODE_COLUMNS)}, got {got}", spath, 1)
    for line, row in enumerate(rows[1:], start=2):
        if not row or all(not cell.strip() for cell in row):
            skipped["blank line"] += 1
            continue
        if len(row) != len(NODE_COLUMNS):
            raise PlatformError(f"a node row must have {len(NODE_COLUMNS)} fields, got {len(row)}", spath, line)
        name, cpu, memory, gpus, model = (cell.strip() for cell in row)
        if not name or name in seen:
            raise PlatformError(f"sn must be a unique node name, got {name!r}", spath, line)
        seen.add(name)
        count = _int_field(gpus, "gpu", spath, line)
        if (count > 0) != bool(model):
            raise PlatformError(f"model must be given exactly when gpu > 0, got gpu={count} and model={model!r}",
                                spath, line)
        index = -1
        if model:
            if model not in models:
                library.lookup(model, "model", spath, line)
                models[model] = len(models)
            index = models[model]
        names.append(name)
        columns.append((_int_field(cpu, "cpu_milli", spath, line), _int_field(memory, "memory_mib", spath, line),
                        count, index))
    table = np.array(columns, dtype=np.int64).reshape(-1, 4)
    return GpuCluster(names=tuple(names), cpu_milli=table[:, 0].copy(), memory_mib=table[:, 1].copy(),
                      gpu_count=table[:, 2].copy(), gpu_model=table[:, 3].copy(), models=tuple(models),
                      gpu_types=tuple(library[m] for m in models), source=spath, skipped=dict(skipped))


def gpu_cluster(nodes: list[tuple[str, int, int, int, str]], library: GpuTypeLibrary | None = None) -> GpuCluster:
    """Build a cluster in code, e.g. for tests: ``[(name, cpu_milli, memory_mib, gpus, model), ...]``.

    Raises:
        PlatformError: A model unknown to the library.
    """
    library = library or load_gpu_library()
    models = list(dict.fromkeys(m for *_, m in nodes if m))
    return GpuCluster(names=tuple(n[0] for n in nodes), cpu_milli=np.array([n[1] for n in nodes], dtype=np.int64),
                      memory_mib=np.array([n[2] for n in nodes], dtype=np.int64),
                      gpu_count=np.array([n[3] for n in nodes], dtype=np.int64),
                      gpu_model=np.array([models.index(n[4]) if n[4] else -1 for n in nodes], dtype=np.int64),
                      models=tuple(models), gpu_types=tuple(library.lookup(m, "model") for m in models))
