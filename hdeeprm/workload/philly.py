"""The Microsoft Philly GPU trace, one row per job, read into columnar :class:`PhillyJobs`.

The per-job table is the one derived by the Pollux artifact (``petuum/adaptdl``,
branch ``osdi21-artifact``, ``simulator/traces/philly.csv``) from Microsoft's
Philly cluster trace (Jeon et al., "Analysis of Large-Scale Multi-Tenant GPU
Clusters for DNN Training Workloads", USENIX ATC 2019): a CSV file, plain or
gzip-compressed, with the header ``timestamp,duration,num_gpus,gpu_time,cluster``:
submission time (``YYYY-MM-DD HH:MM:SS``), run time in seconds, GPUs, GPU-seconds
and virtual cluster id.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from hdeeprm.errors import WorkloadError
from hdeeprm.reading import MAX_GPUS_PER_JOB, MAX_TIME, iter_csv_rows, parse_int, parse_number

#: Header of the per-job Philly table.
PHILLY_COLUMNS = ("timestamp", "duration", "num_gpus", "gpu_time", "cluster")
_TIMESTAMP = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}")
#: Largest ``gpu_time`` (GPU-seconds): a job of the most GPUs running the longest time.
_MAX_GPU_TIME = MAX_TIME * MAX_GPUS_PER_JOB
_MAX_GPU_TIME_TEXT = "< 2**62 GPU-seconds (2**42 s x 2**20 GPUs)"


@dataclass(frozen=True)
class PhillyJobs:
    """The jobs of the Philly table, in file order (J jobs).

    Attributes:
        submit: Submission time in seconds since ``start``, float64 (J,).
        duration: Run time in seconds, float64 (J,).
        num_gpus: GPUs of each job, int64 (J,).
        gpu_time: GPU-seconds of each job, float64 (J,).
        cluster: Virtual cluster id of each job.
        start: The earliest submission time (the origin of ``submit``).
        source: The file read.
        nb_rows: Data rows in the file (blank lines included).
        skipped: Rows not turned into jobs, by reason.
    """

    submit: np.ndarray
    duration: np.ndarray
    num_gpus: np.ndarray
    gpu_time: np.ndarray
    cluster: tuple[str, ...]
    start: datetime
    source: str = ""
    nb_rows: int = 0
    skipped: dict[str, int] = field(default_factory=dict)

    def __len__(self) -> int:
        """Number of jobs."""
        return len(self.cluster)


def read_philly(path: str | Path) -> PhillyJobs:
    """Read the per-job Philly table (``philly-derived.csv.gz``).

    Jobs with a zero duration or zero GPUs cannot run on a GPU and are skipped, counted by reason, as are blank
    lines. The file follows the project's reading rules (:mod:`hdeeprm.reading`): UTF-8 (a byte-order mark is
    skipped), plain or gzip-compressed, integers in ASCII digits, times finite and below
    :data:`~hdeeprm.reading.MAX_TIME`.

    Args:
        path: The CSV file, plain or gzip-compressed.

    Returns:
        The jobs.

    Raises:
        WorkloadError: Wrong header, a row with the wrong number of fields, a malformed timestamp, a
            ``duration`` or ``gpu_time`` that is not a number of seconds in [0, 2**42), a ``num_gpus`` that is not
            an integer in 0..:data:`~hdeeprm.reading.MAX_GPUS_PER_JOB`, bytes that are not UTF-8, corrupt gzip
            data (each message names the file, the line and the field).
    """
    spath = str(path)
    rows = iter_csv_rows(spath, "Philly trace", WorkloadError)
    header = tuple(c.strip() for c in next(rows, (1, []))[1])
    if header != PHILLY_COLUMNS:
        raise WorkloadError(f"header must be {','.join(PHILLY_COLUMNS)}, got {','.join(header) or 'an empty file'}",
                            spath, 1)
    stamps, numbers, clusters = [], [], []
    skipped: Counter[str] = Counter()
    nb_rows = 0
    for line, row in rows:
        nb_rows += 1
        if not row or all(not cell.strip() for cell in row):
            skipped["blank line"] += 1
            continue
        if len(row) != len(PHILLY_COLUMNS):
            raise WorkloadError(f"a job row must have {len(PHILLY_COLUMNS)} fields, got {len(row)}", spath, line)
        stamp = _timestamp(row[0], spath, line)
        duration = parse_number(row[1], "duration", WorkloadError, spath, line)
        gpus = parse_int(row[2], "num_gpus", WorkloadError, spath, line, 0, MAX_GPUS_PER_JOB, "GPUs of one job")
        gpu_time = parse_number(row[3], "gpu_time", WorkloadError, spath, line, _MAX_GPU_TIME, _MAX_GPU_TIME_TEXT)
        if gpus == 0:
            skipped["num_gpus is 0"] += 1
            continue
        if duration == 0:
            skipped["duration is 0"] += 1
            continue
        stamps.append(stamp)
        numbers.append((duration, gpus, gpu_time))
        clusters.append(row[4].strip())
    start = min(stamps) if stamps else datetime(1970, 1, 1)
    table = np.array(numbers, dtype=np.float64).reshape(-1, 3)
    return PhillyJobs(submit=np.array([(s - start).total_seconds() for s in stamps], dtype=np.float64),
                      duration=table[:, 0].copy(), num_gpus=table[:, 1].astype(np.int64),
                      gpu_time=table[:, 2].copy(), cluster=tuple(clusters), start=start, source=spath,
                      nb_rows=nb_rows, skipped=dict(skipped))


def _timestamp(text: str, path: str, line: int) -> datetime:
    """A ``YYYY-MM-DD HH:MM:SS`` submission time, in ASCII digits (``strptime`` alone takes other digits)."""
    cell = text.strip()
    try:
        if not _TIMESTAMP.fullmatch(cell):
            raise ValueError(cell)
        return datetime.fromisoformat(cell)   # the format checked above; 4x faster than strptime
    except ValueError:
        raise WorkloadError(f"timestamp must be YYYY-MM-DD HH:MM:SS, got {text!r}", path, line,
                            "timestamp") from None
