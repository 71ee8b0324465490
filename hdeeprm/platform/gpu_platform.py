"""GPU clusters from either kind of platform file, and the GPU table of ``hdeeprm-platform summary``.

Two inputs describe the GPUs of a platform:

- an **openb node list** (CSV, ``sn,cpu_milli,memory_mib,gpu,model``): the real 1,213-node,
  6,212-GPU Alibaba cluster of the GPU trace v2023 (Weng et al., ATC 2023). Users get it from
  ``alibaba/clusterdata``, folder ``cluster-trace-gpu-v2023/csv/openb_node_list_gpu_node.csv``
  (also shipped with ``hkust-adsl/kubernetes-scheduler-simulator``); HDeepRM does not ship it;
- an **HDeepRM platform JSON** whose node types list ``gpus`` (``platforms/dgx_a100.json``,
  ``platforms/mixed_cpu_gpu.json``): every node becomes a :class:`~hdeeprm.platform.openb.GpuCluster`
  node with its cores (x 1000 thousandths), its memory (GB x 1024 MiB) and its GPUs.

A node carries one GPU model (the openb layout, and every shipped node type); a node type
mixing models is rejected.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import numpy as np

from hdeeprm.errors import PlatformError
from hdeeprm.platform.gpu_types import load_gpu_library
from hdeeprm.platform.library import load_library
from hdeeprm.platform.loader import load_platform
from hdeeprm.platform.openb import MILLI, GpuCluster, read_openb_nodes
from hdeeprm.reading import MAX_MEMORY_MIB, MAX_NODE_CPU_MILLI
from hdeeprm.summation import left_sum

#: Columns of the GPU table: header, summary key, format.
GPU_COLUMNS = (("model", "model", "{}"), ("type", "type", "{}"), ("grouping", "grouping", "{}"),
               ("nodes", "nodes", "{:d}"), ("GPUs", "gpus", "{:d}"), ("GPU memory GB", "gpu_memory_gb", "{:.0f}"),
               ("FP32 TFLOP/s", "fp32_tflops", "{:.1f}"), ("FP16 TFLOP/s", "fp16_tflops", "{:.1f}"),
               ("TDP W", "tdp_w", "{:.0f}"))


def is_node_list(path: str | Path) -> bool:
    """Whether ``path`` is an openb node list (a ``.csv`` file) rather than a platform JSON."""
    return str(path).lower().endswith(".csv")


def load_gpu_cluster(path: str | Path, *, extra_libraries: Iterable[str | Path] = (),
                     gpu_libraries: Iterable[str | Path] = ()) -> GpuCluster:
    """The GPU cluster of an openb node list or of an HDeepRM platform JSON (see the module docstring).

    Args:
        path: The file.
        extra_libraries: Extra processor/node type libraries (platform JSON only).
        gpu_libraries: Extra GPU type libraries.

    Returns:
        The cluster, nodes in platform order (named ``<cluster>-<i>`` for a platform JSON).

    Raises:
        PlatformError: An invalid file, an unknown GPU type, a node type with two GPU models, a node with less
            than 1 MiB or more than :data:`~hdeeprm.reading.MAX_MEMORY_MIB` of memory or more than
            :data:`~hdeeprm.reading.MAX_NODE_CPU_MILLI` thousandths of a core.
    """
    gpu_library = load_gpu_library(gpu_libraries)
    if is_node_list(path):
        return read_openb_nodes(path, gpu_library)
    hierarchy = load_platform(path, extra_libraries=extra_libraries)
    library = load_library(extra_libraries)
    source = str(path)
    names, rows, models = [], [], {}
    groupings: dict[str, str] = {}
    per_cluster: dict[int, int] = {}
    node_cluster = np.repeat(np.arange(hierarchy.nb_clusters), hierarchy.cluster_n_nodes)
    for n in range(hierarchy.nb_nodes):
        ntype = library.node(hierarchy.node_type[n], "node type", source)
        if len({g[0] for g in ntype.gpus}) > 1:
            raise PlatformError(f"node type {ntype.name!r} mixes GPU models ({', '.join(g[0] for g in ntype.gpus)}): "
                                "a node carries one GPU model; split it into node types", ntype.source or source)
        count, index = sum(g[1] for g in ntype.gpus), -1
        if ntype.gpus:
            gpu_library.lookup(ntype.gpus[0][0], f"node type {ntype.name!r}: gpus[0].type", ntype.source)
            index = models.setdefault(ntype.gpus[0][0], len(models))
            groupings[ntype.gpus[0][0]] = ntype.gpus[0][2]
        cpu, memory = int(hierarchy.node_n_cores[n]) * MILLI, int(hierarchy.node_memory[n])
        if not 1 <= memory <= MAX_MEMORY_MIB or cpu > MAX_NODE_CPU_MILLI:
            raise PlatformError(f"node type {ntype.name!r}: memory.capacity must give 1..{MAX_MEMORY_MIB} MiB (MiB of "
                                f"one node) and its processors at most {MAX_NODE_CPU_MILLI // MILLI} cores, got "
                                f"{memory} MiB and {cpu // MILLI} cores", ntype.source or source)
        c = int(node_cluster[n])
        per_cluster[c] = per_cluster.get(c, 0) + 1
        names.append(f"{hierarchy.cluster_id[c]}-{per_cluster[c] - 1}")
        rows.append((cpu, memory, count, index))
    table = np.array(rows, dtype=np.int64).reshape(-1, 4)
    cluster = GpuCluster(names=tuple(names), cpu_milli=table[:, 0].copy(), memory_mib=table[:, 1].copy(),
                         gpu_count=table[:, 2].copy(), gpu_model=table[:, 3].copy(), models=tuple(models),
                         gpu_types=tuple(gpu_library[m] for m in models), source=source, groupings=groupings)
    return cluster


def gpu_summary_table(cluster: GpuCluster) -> str:
    """A text table with one row per GPU model (and one for nodes without GPUs) and a total row.

    Columns (:data:`GPU_COLUMNS`): model, library type, grouping, nodes, GPUs, total GPU memory (GB), total
    peak FP32 and FP16 (TFLOP/s, dense) and total TDP (W); ``-`` where the library has no figure.
    """
    rows = [{**row, "grouping": cluster.groupings.get(row["model"], "" if row["gpus"] == 0 else "-")}
            for row in cluster.summary()]
    total = {"model": "total", "type": "", "grouping": "", "nodes": cluster.nb_nodes, "gpus": cluster.nb_gpus}
    for key in ("gpu_memory_gb", "fp32_tflops", "fp16_tflops", "tdp_w"):
        values = [r[key] for r in rows]
        total[key] = None if any(v is None for v in values) else float(left_sum(values))
    cells = [[head for head, _k, _f in GPU_COLUMNS]]
    for row in (*rows, total):
        cells.append(["-" if row[key] is None else fmt.format(row[key]) for _h, key, fmt in GPU_COLUMNS])
    widths = [max(len(r[i]) for r in cells) for i in range(len(GPU_COLUMNS))]
    lines = ["  ".join(c.ljust(w) if i < 3 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))) for r in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    lines.insert(len(lines) - 1, lines[1])
    return "\n".join(lines)
