"""Timed GPU jobs: the columnar :class:`GpuJobs` a timed GPU replay runs, built from the GPU traces.

A GPU job arrives at ``submit`` (s), asks for ``num_gpu`` GPUs of ``gpu_milli``
thousandths each (openb semantics: ``num_gpu = 1`` with ``gpu_milli < 1000``
shares one GPU, else ``num_gpu`` whole GPUs), CPU in thousandths of a core, host
memory in MiB, GPU memory per GPU in MiB (0: any) and a set of allowed GPU models
(empty: any), and runs for ``duration`` seconds on the reference GPU type of the
run (see :mod:`hdeeprm.run.gpu_replay` for the speed model).

Sources:

- the Microsoft Philly per-job table (:func:`from_philly`; Jeon et al., USENIX ATC 2019,
  as derived by the Pollux artifact): whole GPUs, no CPU, memory or type constraint
  recorded, so the jobs ask for none;
- the openb pod lists of the Alibaba GPU trace v2023 (:func:`from_openb`; Weng et al.,
  USENIX ATC 2023): arrival ``creation_time``, duration ``deletion_time - scheduled_time``.
  The trace's README warns that these times are unreliable (``alibaba/clusterdata`` issue
  218): pods without a ``scheduled_time`` or a ``deletion_time``, or whose deletion does not
  come after their scheduling, cannot be timed and are skipped, counted by reason.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hdeeprm.errors import WorkloadError
from hdeeprm.platform.gpu_types import GpuTypeLibrary
from hdeeprm.platform.openb import MILLI
from hdeeprm.reading import MAX_TIME, MAX_TIME_TEXT, iter_text_lines
from hdeeprm.workload.openb import OpenbPods, check_gpu_request, read_openb_pods
from hdeeprm.workload.philly import PhillyJobs, read_philly

#: Batsim's default workload name (job ids are ``w0!<id>``).
GPU_WORKLOAD_NAME = "w0"


@dataclass(frozen=True)
class GpuJobs:
    """Timed GPU jobs sorted by submission time (stable), J jobs.

    Attributes:
        ids: Job ids (Philly: row number in the file; openb: pod name).
        submit: Submission time in seconds since the first submission of the trace, float64 (J,).
        duration: Run time in seconds on the reference GPU type, float64 (J,).
        num_gpu: GPUs per job, int64 (J,) (0: CPU-only).
        gpu_milli: Thousandths of each GPU, int64 (J,) (1000: whole GPUs).
        cpu_milli: CPU in thousandths of a core, int64 (J,).
        memory_mib: Host memory in MiB, int64 (J,).
        gpu_memory_mib: GPU memory needed on each GPU in MiB, int64 (J,) (0: any).
        gpu_spec: Allowed GPU model names of each job (empty: any).
        name: Workload name.
        clock: Seconds since a Monday 00:00 at submission time 0 (hour-of-day and weekday statistics): from the
            timestamp for Philly; the raw ``creation_time`` of the first pod for openb lists (their clock's origin is
            not published; the synthetic generator's is a Monday 00:00).
        source: The file read ("" when built in code).
        report: Counts: ``rows`` read, ``jobs`` kept and ``skipped`` rows by reason.
    """

    ids: tuple[str, ...]
    submit: np.ndarray
    duration: np.ndarray
    num_gpu: np.ndarray
    gpu_milli: np.ndarray
    cpu_milli: np.ndarray
    memory_mib: np.ndarray
    gpu_memory_mib: np.ndarray
    gpu_spec: tuple[tuple[str, ...], ...]
    name: str = GPU_WORKLOAD_NAME
    clock: float = 0.0
    source: str = ""
    report: dict = field(default_factory=dict)

    def __len__(self) -> int:
        """Number of jobs."""
        return len(self.ids)

    @property
    def gpu_request(self) -> np.ndarray:
        """GPU share of each job in thousandths of a GPU, int64 (J,)."""
        return self.num_gpu * self.gpu_milli

    def as_pods(self) -> OpenbPods:
        """The jobs' shapes as openb pods (for the typical pods of the ATC'23 fragmentation measure)."""
        return OpenbPods(names=self.ids, cpu_milli=self.cpu_milli, memory_mib=self.memory_mib, num_gpu=self.num_gpu,
                         gpu_milli=self.gpu_milli, gpu_spec=self.gpu_spec, nb_rows=len(self))

    def window(self, first: int = 0, count: int | None = None) -> GpuJobs:
        """Jobs ``first .. first + count - 1`` in submission order, times shifted so the first submits at 0.

        Raises:
            WorkloadError: ``first`` is past the last job.
        """
        if first and first >= len(self):
            raise WorkloadError(f"first_job must be below the workload's {len(self)} jobs, got {first}", self.source)
        stop = len(self) if count is None else min(len(self), first + count)
        part = slice(first, stop)
        origin = float(self.submit[first]) if stop > first else 0.0
        report = {**self.report, "window": [first, stop], "jobs": stop - first}
        return GpuJobs(ids=self.ids[part], submit=self.submit[part] - origin, duration=self.duration[part],
                       num_gpu=self.num_gpu[part], gpu_milli=self.gpu_milli[part], cpu_milli=self.cpu_milli[part],
                       memory_mib=self.memory_mib[part], gpu_memory_mib=self.gpu_memory_mib[part],
                       gpu_spec=self.gpu_spec[part], name=self.name, clock=self.clock + origin, source=self.source,
                       report=report)


def gpu_jobs(rows: list[tuple], *, source: str = "") -> GpuJobs:
    """Build jobs in code, e.g. for tests.

    Args:
        rows: ``(id, submit s, duration s, num_gpu, gpu_milli, cpu_milli, memory_mib, gpu_memory_mib, spec)`` with
            ``spec`` the allowed models separated by ``|`` ("" for any).
        source: Name used in messages.

    Returns:
        The jobs, sorted by submission time (stable).

    Raises:
        WorkloadError: A GPU request outside openb's semantics, a negative time, a non-positive duration or a time
            not below :data:`~hdeeprm.reading.MAX_TIME`.
    """
    for line, row in enumerate(rows, start=1):
        check_gpu_request(int(row[3]), int(row[4]), source or None, line)
        if not 0 <= row[1] < MAX_TIME or not 0 < row[2] < MAX_TIME:
            raise WorkloadError(f"submit must be >= 0 and duration > 0 s, both {MAX_TIME_TEXT}, got {row[1]!r} and "
                                f"{row[2]!r}", source or None, line)
    order = sorted(range(len(rows)), key=lambda i: rows[i][1])
    rows = [rows[i] for i in order]
    numbers = np.array([r[3:8] for r in rows], dtype=np.int64).reshape(-1, 5)
    return GpuJobs(ids=tuple(str(r[0]) for r in rows), submit=np.array([r[1] for r in rows], dtype=np.float64),
                   duration=np.array([r[2] for r in rows], dtype=np.float64), num_gpu=numbers[:, 0].copy(),
                   gpu_milli=numbers[:, 1].copy(), cpu_milli=numbers[:, 2].copy(), memory_mib=numbers[:, 3].copy(),
                   gpu_memory_mib=numbers[:, 4].copy(),
                   gpu_spec=tuple(tuple(m for m in r[8].split("|") if m) for r in rows), source=source,
                   report={"rows": len(rows), "jobs": len(rows), "skipped": {}})


def _sorted(ids, submit, duration, num_gpu, gpu_milli, cpu, memory, spec, source, report, clock=None) -> GpuJobs:
    order = np.argsort(submit, kind="stable")
    origin = float(submit[order[0]]) if len(order) else 0.0
    return GpuJobs(ids=tuple(ids[i] for i in order), submit=submit[order] - origin, duration=duration[order],
                   num_gpu=num_gpu[order], gpu_milli=gpu_milli[order], cpu_milli=cpu[order], memory_mib=memory[order],
                   gpu_memory_mib=np.zeros(len(order), dtype=np.int64), gpu_spec=tuple(spec[i] for i in order),
                   clock=origin if clock is None else clock, source=source, report=report)


def from_philly(jobs: PhillyJobs) -> GpuJobs:
    """Philly jobs as GPU jobs: whole GPUs, no CPU, memory or GPU type demand (the table records none).

    Ids are the jobs' positions among the kept rows of the file (0-based), so a window names the same jobs in
    every run.
    """
    n = len(jobs)
    zeros = np.zeros(n, dtype=np.int64)
    report = {"rows": jobs.nb_rows, "jobs": n, "skipped": dict(jobs.skipped)}
    start = jobs.start
    clock = start.weekday() * 86400.0 + start.hour * 3600.0 + start.minute * 60.0 + start.second
    return _sorted(tuple(str(i) for i in range(n)), jobs.submit, jobs.duration, jobs.num_gpus.copy(),
                   np.full(n, MILLI, dtype=np.int64), zeros, zeros.copy(), ((),) * n, jobs.source, report,
                   clock + float(jobs.submit.min(initial=0.0)))


def from_openb(pods: OpenbPods) -> GpuJobs:
    """Timed openb pods: arrival ``creation_time``, duration ``deletion_time - scheduled_time``.

    Pods whose times cannot give a positive duration are skipped and counted by reason (``no scheduled_time``,
    ``no deletion_time``, ``deletion_time not after scheduled_time``); so are files without time columns.

    Raises:
        WorkloadError: The pod list has no time columns (the ``multigpu`` variants).
    """
    if pods.times is None:
        raise WorkloadError("this openb pod list has no time columns (the multigpu variants have five columns): "
                            "use it for placement only (hdeeprm-gpu atc23) or pick a list with creation_time",
                            pods.source or None)
    created, deleted, scheduled = pods.times.T
    skipped: Counter[str] = Counter(pods.skipped)
    keep = np.ones(len(pods), dtype=bool)
    for mask, reason in ((np.isnan(scheduled), "no scheduled_time"), (np.isnan(deleted), "no deletion_time"),
                         (deleted <= scheduled, "deletion_time not after scheduled_time"),
                         (np.isnan(created), "no creation_time")):
        hit = mask & keep
        if hit.any():
            skipped[reason] += int(hit.sum())
        keep &= ~mask
    idx = np.flatnonzero(keep)
    report = {"rows": pods.nb_rows, "jobs": len(idx), "skipped": dict(skipped)}
    return _sorted(tuple(pods.names[i] for i in idx), created[idx], (deleted - scheduled)[idx], pods.num_gpu[idx],
                   pods.gpu_milli[idx], pods.cpu_milli[idx], pods.memory_mib[idx], tuple(pods.gpu_spec[i] for i in idx),
                   pods.source, report)


def read_gpu_workload(path: str | Path, library: GpuTypeLibrary | None = None) -> GpuJobs:
    """Read a timed GPU workload: the Philly per-job table (``.csv``/``.csv.gz``) or an openb pod list.

    The format is told by the header line; both follow the project's reading rules (:mod:`hdeeprm.reading`).

    Args:
        path: The file, plain or gzip-compressed.
        library: GPU types an openb pod's ``gpu_spec`` must name (default: the shipped library).

    Returns:
        The jobs, sorted by submission time.

    Raises:
        WorkloadError: An unknown header or a bad row (see :func:`~hdeeprm.workload.philly.read_philly` and
            :func:`~hdeeprm.workload.openb.read_openb_pods`).
    """
    header = ""
    for _, text in iter_text_lines(path, "GPU workload", WorkloadError):
        header = text.strip()
        break
    if header.startswith("timestamp,"):
        return from_philly(read_philly(path))
    if header.startswith("name,"):
        return from_openb(read_openb_pods(path, library))
    raise WorkloadError(f"a GPU workload must be the Philly per-job table (header timestamp,duration,...) or an "
                        f"openb pod list (header name,cpu_milli,...), got {header[:60]!r}", str(path), 1)


#: Cores a GPU job gets per GPU in a mixed CPU + GPU run when its trace gives no CPU request (Philly's table has
#: none): 4, a DGX-1's 40 cores over its 8 GPUs rounded down (NVIDIA DGX-1 datasheet).
DEFAULT_CORES_PER_GPU = 4


def as_core_jobs(jobs: GpuJobs, first_index: int, cores_per_gpu: int = DEFAULT_CORES_PER_GPU) -> list:
    """GPU trace jobs as kernel jobs that ask for cores and GPUs on one node (a mixed CPU + GPU run).

    Each becomes a ``delay`` job of its trace duration (on the reference GPU type) with ``num_gpu`` GPUs of
    ``gpu_milli`` thousandths; its cores are its CPU request rounded up to whole cores, or ``cores_per_gpu`` per
    GPU (at least 1) when the trace gives none. GPU traces carry no user estimate: the requested time (what EASY
    backfilling reserves with) is the duration, and there is no walltime. Ids are ``gpu-<trace id>``.

    Args:
        jobs: The GPU workload (a window of it).
        first_index: Index of the first job in the merged workload.
        cores_per_gpu: Cores per GPU of jobs without a CPU request, >= 1.

    Returns:
        :class:`~hdeeprm.workload.model.Job` objects, in the order of ``jobs``.
    """
    from hdeeprm.workload.model import DELAY, Job, Profile

    out = []
    for k in range(len(jobs)):
        num, cpu = int(jobs.num_gpu[k]), int(jobs.cpu_milli[k])
        cores = -(-cpu // 1000) if cpu > 0 else max(1, cores_per_gpu * num)
        run = float(jobs.duration[k])
        out.append(Job(first_index + k, f"gpu-{jobs.ids[k]}", float(jobs.submit[k]), cores, -1.0,
                       Profile(f"gpu-{jobs.ids[k]}", DELAY, run), requested_time=run, num_gpu=num,
                       gpu_milli=int(jobs.gpu_milli[k]) if num else 0))
    return out

