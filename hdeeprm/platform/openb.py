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

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hdeeprm.errors import PlatformError
from hdeeprm.platform.gpu_types import GpuType, GpuTypeLibrary, load_gpu_library
from hdeeprm.reading import (MAX_GPUS_PER_NODE, MAX_MEMORY_MIB, MAX_NODE_CPU_MILLI, check_name, iter_csv_rows,
                             parse_int)

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


def read_openb_nodes(path: str | Path, library: GpuTypeLibrary | None = None) -> GpuCluster:
    """Read an openb node list (``openb_node_list_gpu_node.csv``, ``openb_node_list_all_node.csv``).

    The file follows the project's reading rules (:mod:`hdeeprm.reading`): UTF-8 (a byte-order mark is
    skipped), plain or gzip-compressed, integers in ASCII digits within plausible bounds.

    Args:
        path: The CSV file (header ``sn,cpu_milli,memory_mib,gpu,model``).
        library: GPU types to resolve the models with (default: the shipped library, where openb's names are
            aliases, e.g. ``V100M16`` -> ``V100 SXM2 16GB``).

    Returns:
        The cluster; blank lines are skipped and counted in ``skipped``.

    Raises:
        PlatformError: Wrong header, a row with the wrong number of fields, an empty or duplicate node name, a
            number that is not an integer within its bound (``cpu_milli`` 1..
            :data:`~hdeeprm.reading.MAX_NODE_CPU_MILLI`, ``memory_mib`` 1..:data:`~hdeeprm.reading.MAX_MEMORY_MIB`,
            ``gpu`` 0..:data:`~hdeeprm.reading.MAX_GPUS_PER_NODE`), a GPU model unknown to the library, a node with GPUs
            and no model or a model and no GPUs, bytes that are not UTF-8, corrupt gzip data (each message names
            the file, the line and the field).
    """
    library = library or load_gpu_library()
    spath = str(path)
    names: list[str] = []
    columns: list[tuple[int, int, int, int]] = []
    models: dict[str, int] = {}
    skipped: Counter[str] = Counter()
    seen: dict[str, int] = {}
    rows = iter_csv_rows(spath, "openb node list", PlatformError)
    header = next(rows, (1, []))[1]
    if tuple(c.strip() for c in header) != NODE_COLUMNS:
        raise PlatformError(f"header must be {','.join(NODE_COLUMNS)}, got {','.join(header) or 'an empty file'}",
                            spath, 1)
    for line, row in rows:
        if not row or all(not cell.strip() for cell in row):
            skipped["blank line"] += 1
            continue
        if len(row) != len(NODE_COLUMNS):
            raise PlatformError(f"a node row must have {len(NODE_COLUMNS)} fields, got {len(row)}", spath, line)
        name = check_name(row[0], "sn", seen, PlatformError, spath, line)
        cpu = parse_int(row[1], "cpu_milli", PlatformError, spath, line, 1, MAX_NODE_CPU_MILLI,
                        "thousandths of a core of one node")
        memory = parse_int(row[2], "memory_mib", PlatformError, spath, line, 1, MAX_MEMORY_MIB, "MiB of one node")
        count = parse_int(row[3], "gpu", PlatformError, spath, line, 0, MAX_GPUS_PER_NODE, "GPUs of one node")
        model = row[4].strip()
        if (count > 0) != bool(model):
            raise PlatformError(f"model must be given exactly when gpu > 0, got gpu={count} and model={model!r}",
                                spath, line, "model")
        index = -1
        if model:
            if model not in models:
                library.lookup(model, "model", spath, line)
                models[model] = len(models)
            index = models[model]
        names.append(name)
        columns.append((cpu, memory, count, index))
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
