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

import csv
import gzip
import io
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np

from hdeeprm.errors import WorkloadError

#: Header of the per-job Philly table.
PHILLY_COLUMNS = ("timestamp", "duration", "num_gpus", "gpu_time", "cluster")
_TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


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


def _open_text(path: str | Path) -> io.TextIOBase:
    with open(path, "rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(path), encoding="utf-8", newline="")
    return open(path, newline="", encoding="utf-8")


def _number(value: str, name: str, path: str, line: int) -> float:
    try:
        number = float(value)
    except ValueError:
        raise WorkloadError(f"{name} must be a number, got {value!r}", path, line, name) from None
    if not number >= 0:
        raise WorkloadError(f"{name} must be a non-negative number, got {value!r}", path, line, name)
    return number


def read_philly(path: str | Path) -> PhillyJobs:
    """Read the per-job Philly table (``philly-derived.csv.gz``).

    Jobs with a zero duration or zero GPUs cannot run on a GPU and are skipped, counted by reason, as are blank
    lines.

    Args:
        path: The CSV file, plain or gzip-compressed.

    Returns:
        The jobs.

    Raises:
        WorkloadError: Wrong header, a row with the wrong number of fields, a malformed time or number, or a
            fractional GPU count (each message names the file, the line and the field).
    """
    spath = str(path)
    try:
        with _open_text(path) as f:
            rows = list(csv.reader(f))
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise WorkloadError(f"cannot read Philly trace: {getattr(exc, 'strerror', None) or exc}", spath) from None
    header = tuple(c.strip() for c in rows[0]) if rows else ()
    if header != PHILLY_COLUMNS:
        raise WorkloadError(f"header must be {','.join(PHILLY_COLUMNS)}, got {','.join(header) or 'an empty file'}",
                            spath, 1)
    stamps, numbers, clusters = [], [], []
    skipped: Counter[str] = Counter()
    for line, row in enumerate(rows[1:], start=2):
        if not row or all(not cell.strip() for cell in row):
            skipped["blank line"] += 1
            continue
        if len(row) != len(PHILLY_COLUMNS):
            raise WorkloadError(f"a job row must have {len(PHILLY_COLUMNS)} fields, got {len(row)}", spath, line)
        try:
            stamp = datetime.strptime(row[0].strip(), _TIME_FORMAT)
        except ValueError:
            raise WorkloadError(f"timestamp must be YYYY-MM-DD HH:MM:SS, got {row[0]!r}", spath, line,
                                "timestamp") from None
        duration, gpus, gpu_time = (_number(row[i], PHILLY_COLUMNS[i], spath, line) for i in (1, 2, 3))
        if gpus != int(gpus):
            raise WorkloadError(f"num_gpus must be a whole number, got {row[2]!r}", spath, line, "num_gpus")
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
                      nb_rows=len(rows) - 1, skipped=dict(skipped))
