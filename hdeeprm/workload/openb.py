"""The openb pod lists of the Alibaba GPU cluster trace v2023, read into columnar :class:`OpenbPods`.

Source: ``alibaba/clusterdata``, folder ``cluster-trace-gpu-v2023`` (Weng et al., "Beware
of Fragmentation: Scheduling GPU-Sharing Workloads with Fragmentation Gradient
Descent", USENIX ATC 2023). Two layouts exist:

- ``openb_pod_list_default.csv`` and most variants: ``name, cpu_milli, memory_mib,
  num_gpu, gpu_milli, gpu_spec, qos, pod_phase, creation_time, deletion_time,
  scheduled_time``;
- ``openb_pod_list_multigpu*.csv``: the first five columns only (no type constraint, no times).

Semantics (the trace's README): ``cpu_milli`` is thousandths of a core,
``memory_mib`` MiB; ``num_gpu = 1`` with ``gpu_milli < 1000`` shares one GPU
(it needs a GPU with ``gpu_milli`` thousandths free); ``num_gpu = k >= 1`` with
``gpu_milli = 1000`` needs ``k`` whole free GPUs of one node; ``num_gpu = 0`` is a
CPU-only pod (``gpu_milli = 0``). ``gpu_spec`` lists the allowed GPU models
separated by ``|`` (empty: any). The time columns are in seconds and known to
be unreliable (``scheduled_time`` is empty for pending pods): they are kept,
empty ones as NaN, and the published experiments use the lists for placement only.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hdeeprm.errors import WorkloadError
from hdeeprm.platform.gpu_types import GpuTypeLibrary, load_gpu_library
from hdeeprm.platform.openb import MILLI
from hdeeprm.reading import (MAX_GPUS_PER_NODE, MAX_INTEGER, MAX_MEMORY_MIB, MAX_NODE_CPU_MILLI, check_name,
                             iter_csv_rows, parse_int, parse_number)

#: Columns of the full layout, in file order.
POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
               "creation_time", "deletion_time", "scheduled_time")
#: Columns of the short layout of the ``multigpu`` variants.
SHORT_POD_COLUMNS = POD_COLUMNS[:5]
_TIMES = POD_COLUMNS[8:]
#: Bounds of ``cpu_milli``, ``memory_mib``, ``num_gpu`` (a pod's whole GPUs are on one node) and ``gpu_milli``
#: (its range depends on ``num_gpu``: :func:`check_gpu_request`).
_POD_BOUNDS = ((MAX_NODE_CPU_MILLI, "thousandths of a core of one pod"), (MAX_MEMORY_MIB, "MiB of one pod"),
               (MAX_GPUS_PER_NODE, "GPUs of one pod, all on one node"), (MAX_INTEGER, ""))


@dataclass(frozen=True)
class OpenbPods:
    """The pods of one openb pod list, one array entry per pod (P pods).

    Attributes:
        names: Pod names.
        cpu_milli: CPU request in thousandths of a core, int64 (P,).
        memory_mib: Memory request in MiB, int64 (P,).
        num_gpu: GPUs requested, int64 (P,): 0 CPU-only, 1 one GPU (whole or shared), k whole GPUs.
        gpu_milli: Thousandths of each requested GPU, int64 (P,): 1..999 shared, 1000 whole, 0 CPU-only.
        gpu_spec: Allowed GPU models of each pod (empty tuple: any model).
        qos, pod_phase: As in the file ("" in the short layout).
        times: ``creation_time``, ``deletion_time``, ``scheduled_time`` in seconds, float64 (P, 3), NaN when
            empty or absent (short layout).
        source: The file read ("" when built in code).
        nb_rows: Data rows in the file (blank lines included).
        skipped: Rows not turned into pods, by reason.
    """

    names: tuple[str, ...]
    cpu_milli: np.ndarray
    memory_mib: np.ndarray
    num_gpu: np.ndarray
    gpu_milli: np.ndarray
    gpu_spec: tuple[tuple[str, ...], ...]
    qos: tuple[str, ...] = ()
    pod_phase: tuple[str, ...] = ()
    times: np.ndarray | None = None
    source: str = ""
    nb_rows: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        """Number of pods."""
        return len(self.names)

    @property
    def gpu_request(self) -> np.ndarray:
        """GPU request of each pod in thousandths of a GPU, int64 (P,): ``num_gpu x gpu_milli``."""
        return self.num_gpu * self.gpu_milli

    @property
    def shares_gpu(self) -> np.ndarray:
        """Whether each pod asks for a fraction of one GPU, bool (P,)."""
        return (self.num_gpu == 1) & (self.gpu_milli < MILLI)


def parse_gpu_spec(text: str, library: GpuTypeLibrary | None, path: str | None = None,
                   line: int | None = None) -> tuple[str, ...]:
    """The allowed GPU models of a ``gpu_spec`` cell: names separated by ``|``, each known to ``library``.

    Args:
        text: The cell ("" or blanks: any model).
        library: GPU types the names must be known to (library names or aliases); None: not checked.
        path, line: Where the cell was read, for messages.

    Returns:
        The model names as written, in order (empty: any model).

    Raises:
        WorkloadError: An empty name (``A||B``, a trailing ``|``) or a name unknown to the library, e.g.
            ``gpu_spec must be a known gpu type, got 'v100m16'; did you mean 'V100M16'? (...) (pods.csv:2)``.
    """
    cell = text.strip()
    if not cell:
        return ()
    models = tuple(m.strip() for m in cell.split("|"))
    if not all(models):
        raise WorkloadError(f"gpu_spec must be GPU model names separated by '|', got {text!r} (an empty name)",
                            path, line, "gpu_spec")
    for model in models:
        if library is not None and model not in library:
            raise WorkloadError(library.unknown(model, "gpu_spec"), path, line, "gpu_spec")
    return models


def check_gpu_request(num_gpu: int, gpu_milli: int, path: str | None = None, line: int | None = None) -> None:
    """Reject a GPU request outside openb's semantics.

    Raises:
        WorkloadError: ``gpu_milli`` is not 0 for a CPU-only pod, not 1..1000 for a one-GPU pod, or not 1000
            for a multi-GPU pod.
    """
    if num_gpu == 0 and gpu_milli != 0:
        raise WorkloadError(f"gpu_milli must be 0 when num_gpu is 0, got {gpu_milli}", path, line, "gpu_milli")
    if num_gpu == 1 and not 1 <= gpu_milli <= MILLI:
        raise WorkloadError(f"gpu_milli must be 1..1000 when num_gpu is 1, got {gpu_milli}", path, line, "gpu_milli")
    if num_gpu > 1 and gpu_milli != MILLI:
        raise WorkloadError(f"gpu_milli must be 1000 (whole GPUs) when num_gpu > 1, got {gpu_milli}", path, line,
                            "gpu_milli")


def read_openb_pods(path: str | Path, library: GpuTypeLibrary | None = None) -> OpenbPods:
    """Read an openb pod list in either layout (see the module docstring).

    The file follows the project's reading rules (:mod:`hdeeprm.reading`): UTF-8 (a byte-order mark is
    skipped), plain or gzip-compressed, integers in ASCII digits within plausible bounds, times finite and
    below :data:`~hdeeprm.reading.MAX_TIME`.

    Args:
        path: The CSV file.
        library: GPU types the ``gpu_spec`` models must be known to (default: the shipped library, where
            openb's names are aliases).

    Returns:
        The pods, in file order; blank lines are skipped and counted in ``skipped``.

    Raises:
        WorkloadError: Unknown header, a row with the wrong number of fields, an empty or duplicate pod name, a
            request that is not an integer within its bound (``cpu_milli`` 0..
            :data:`~hdeeprm.reading.MAX_NODE_CPU_MILLI`, ``memory_mib`` 0..:data:`~hdeeprm.reading.MAX_MEMORY_MIB`,
            ``num_gpu`` 0..:data:`~hdeeprm.reading.MAX_GPUS_PER_NODE`), a GPU request outside the trace's semantics,
            a ``gpu_spec`` naming an unknown model (with the closest known name), a time
            that is not empty or a number of seconds in [0, 2**42), bytes that are not UTF-8, corrupt gzip data
            (each message names the file, the line and the field).
    """
    spath = str(path)
    library = load_gpu_library() if library is None else library
    rows = iter_csv_rows(spath, "openb pod list", WorkloadError)
    header = tuple(c.strip() for c in next(rows, (1, []))[1])
    if header not in (POD_COLUMNS, SHORT_POD_COLUMNS):
        raise WorkloadError(f"header must be {','.join(POD_COLUMNS)} or {','.join(SHORT_POD_COLUMNS)}, "
                            f"got {','.join(header) or 'an empty file'}", spath, 1)
    full = header == POD_COLUMNS
    names, numbers, specs, qos, phases, times = [], [], [], [], [], []
    skipped: Counter[str] = Counter()
    seen: dict[str, int] = {}
    nb_rows = 0
    for line, row in rows:
        nb_rows += 1
        if not row or all(not cell.strip() for cell in row):
            skipped["blank line"] += 1
            continue
        if len(row) != len(header):
            raise WorkloadError(f"a pod row must have {len(header)} fields, got {len(row)}", spath, line)
        name = check_name(row[0], "name", seen, WorkloadError, spath, line)
        cpu, memory, num, milli = (parse_int(row[i], header[i], WorkloadError, spath, line, 0, high, unit)
                                   for i, (high, unit) in enumerate(_POD_BOUNDS, start=1))
        check_gpu_request(num, milli, spath, line)
        names.append(name)
        numbers.append((cpu, memory, num, milli))
        if full:
            specs.append(parse_gpu_spec(row[5], library, spath, line))
            qos.append(row[6].strip())
            phases.append(row[7].strip())
            times.append(tuple(parse_number(row[8 + i], _TIMES[i], WorkloadError, spath, line)
                               if row[8 + i].strip() else math.nan for i in range(3)))
        else:
            specs.append(())
    table = np.array(numbers, dtype=np.int64).reshape(-1, 4)
    return OpenbPods(names=tuple(names), cpu_milli=table[:, 0].copy(), memory_mib=table[:, 1].copy(),
                     num_gpu=table[:, 2].copy(), gpu_milli=table[:, 3].copy(), gpu_spec=tuple(specs),
                     qos=tuple(qos), pod_phase=tuple(phases),
                     times=np.array(times, dtype=np.float64).reshape(-1, 3) if full else None,
                     source=spath, nb_rows=nb_rows, skipped=dict(skipped))


def openb_pods(pods: list[tuple[str, int, int, int, int, str]]) -> OpenbPods:
    """Build pods in code, e.g. for tests: ``[(name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec), ...]``.

    Raises:
        WorkloadError: A GPU request outside the trace's semantics.
    """
    for _name, _cpu, _mem, num, milli, _spec in pods:
        check_gpu_request(num, milli)
    columns = np.array([p[1:5] for p in pods], dtype=np.int64).reshape(-1, 4)
    return OpenbPods(names=tuple(p[0] for p in pods), cpu_milli=columns[:, 0].copy(),
                     memory_mib=columns[:, 1].copy(), num_gpu=columns[:, 2].copy(), gpu_milli=columns[:, 3].copy(),
                     gpu_spec=tuple(tuple(m for m in p[5].split("|") if m) for p in pods), nb_rows=len(pods))
