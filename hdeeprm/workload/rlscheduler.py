"""RLScheduler's reading of an SWF trace and its sampling of job windows.

RLScheduler (D. Zhang, D. Dai, Y. He, F. S. Bao, B. Xie, "RLScheduler: An
Automated HPC Batch Job Scheduler Using Reinforcement Learning", SC'20; code at
https://github.com/DIR-LAB/deep-batch-scheduler, commit cd433e3) reads SWF traces
and draws its test windows differently from HDeepRM's conversion
(:mod:`hdeeprm.workload.convert`) and windows (:func:`hdeeprm.run.evaluate.make_windows`).
This module follows its rules, each with the line of that repository it follows:

* **Processors** = max(allocated (field 5), requested (field 8)) (``job.py`` l. 43).
* **Requested time** (field 9) -1 -> the run time as read, *before* the next rule,
  so a cancelled job without a request keeps a requested time of -1 (``job.py``
  l. 50-52).
* **Run time** (field 4) < 0 (cancelled jobs) -> 10 s (``job.py`` l. 148-149).
* **Run time 0** -> the job is dropped (``job.py`` l. 150: only ``run_time > 0`` is kept).
* Jobs are kept in job-number order (``job.py`` l. 164); submit times stay absolute
  trace times (no shift to 0).
* **Machine**: ``MaxNodes`` nodes of ``MaxProcs / MaxNodes`` processors (``MaxProcs``
  absent: one processor per node, ``job.py`` l. 157-158; ``HPCSimPickJobs.py``
  l. 114); a job takes ``ceil(processors / processors per node)`` whole nodes
  (``cluster.py`` l. 134).
* **Windows** (``HPCSimPickJobs.py`` l. 352-362): a window is ``length``
  consecutive kept jobs from a start index drawn as
  ``np_random.randint(length, limit - length - 1)``, where ``limit`` is the
  ``batch_job_slice`` (the first N kept jobs; ``make_table_script.py`` l. 3 uses
  10,000 for SDSC-SP2) or, when 0, the number of kept jobs; ``np_random`` is
  ``gym.utils.seeding.np_random(seed)`` of the gym commit their
  ``requirements.txt`` pins (ff4664b): a legacy ``RandomState`` seeded with the
  SHA-512 hash of the seed (reproduced by :func:`gym_random_state`). One draw per
  window, so windows may overlap. The ``start`` argument of their
  ``reset_for_test`` is ignored (l. 356, commented out); explicit starts are an
  addition of HDeepRM's (:func:`explicit_starts`).

The reader takes HDeepRM's SWF parser (:func:`hdeeprm.workload.swf.iter_swf_chunks`),
so malformed lines get its one-line errors.
"""
from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from hdeeprm.errors import OptionsError, WorkloadError
from hdeeprm.workload.model import DELAY, Job, Profile, Workload
from hdeeprm.workload.swf import SWFHeader, iter_swf_chunks

#: Run time RLScheduler gives cancelled jobs (run time -1), seconds (``job.py`` l. 149).
CANCELLED_RUN_TIME = 10
#: Report keys of :attr:`RLSTrace.report`.
REPORT_CANCELLED = "kept: run time -1 (cancelled), run as 10 s"
REPORT_DROPPED = "dropped: run time 0"
REPORT_REQUEST_FROM_RUN = "requested time -1, the run time used"
REPORT_PROCS_FROM_REQUESTED = "processors: requested > allocated, requested used"
#: Fields their observation shows beyond processors and times: name -> 0-based SWF column (``job.py`` l. 62-66).
EXTRA_FIELDS = {"request_memory": 9, "user": 11, "group": 12, "executable": 13}
#: Jobs of one training sequence (their ``JOB_SEQUENCE_SIZE``, ``HPCSimPickJobs.py`` l. 31).
RLS_SEQUENCE_LENGTH = 256


@dataclass(frozen=True)
class RLSTrace:
    """An SWF trace as RLScheduler reads it (kept jobs in job-number order).

    Attributes:
        path: The trace file.
        job_id: SWF job numbers (field 1), int64 (n,).
        submit: Absolute submit times (field 2), seconds, float64 (n,).
        run: Run times after RLScheduler's rules, seconds (> 0), float64 (n,).
        procs: Processors, max(field 5, field 8), int64 (n,).
        request: Requested times (field 9, or the raw run time when -1), seconds,
            float64 (n,); -1 for a cancelled job without a request.
        lines: 1-based line numbers of the kept jobs in the file, int64 (n,).
        max_nodes: Nodes of the machine (header ``MaxNodes``).
        max_procs: Processors of the machine (``MaxProcs``, or ``MaxNodes`` when absent).
        report: Counts of the jobs each rule touched (keys ``REPORT_*``).
        extra: The fields their observation shows besides those above, float64 (n,) each, -1 when
            unknown: ``request_memory`` (field 10), ``user`` (12), ``group`` (13), ``executable`` (14).
        maxima: Their normalisers (``job.py`` l. 134-145), maxima over *every* job line, dropped
            ones included: ``run`` (field 4 as read), and one per name of ``extra``.
    """

    path: str
    job_id: np.ndarray
    submit: np.ndarray
    run: np.ndarray
    procs: np.ndarray
    request: np.ndarray
    lines: np.ndarray
    max_nodes: int
    max_procs: int
    report: dict[str, int] = field(default_factory=dict)
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    maxima: dict[str, float] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.job_id.size)

    @property
    def procs_per_node(self) -> float:
        """Processors per node, ``MaxProcs / MaxNodes`` (``HPCSimPickJobs.py`` l. 114)."""
        return self.max_procs / self.max_nodes

    @property
    def nodes(self) -> np.ndarray:
        """Nodes each job takes, ``ceil(procs / procs_per_node)``, int64 (n,) (``cluster.py`` l. 134)."""
        return np.ceil(self.procs / self.procs_per_node).astype(np.int64)


def read_rlscheduler_swf(path: str | os.PathLike) -> RLSTrace:
    """Read an SWF trace with RLScheduler's rules (see the module docstring).

    Args:
        path: The trace (.swf or .swf.gz).

    Returns:
        The kept jobs and the machine size.

    Raises:
        WorkloadError: a malformed line (the SWF parser's message), no ``MaxNodes``
            header, no job kept, a job wider than the machine, submit times going back
            in job-number order (RLScheduler's replay assumes they do not), or
            processors < 1; the message names the file and line.
    """
    name = os.fspath(path)
    header = SWFHeader()
    blocks = list(iter_swf_chunks(name, header))
    if not blocks:
        raise WorkloadError("the trace has no job line", name)
    values = np.concatenate([b[0] for b in blocks])
    lines = np.concatenate([b[1] for b in blocks])
    max_nodes = header.max_nodes
    if not max_nodes or max_nodes < 1:
        raise WorkloadError("RLScheduler's reading needs the header line '; MaxNodes: N' (the machine's nodes): "
                            "add it", name, line=1, field="MaxNodes")
    max_procs = header.max_procs or max_nodes
    order = np.argsort(values[:, 0], kind="stable")
    values, lines = values[order], lines[order]
    run = values[:, 3].copy()
    request = values[:, 8].copy()
    no_request = request == -1
    request[no_request] = run[no_request]          # job.py l. 51-52: before the -1 -> 10 rule
    cancelled = run < 0
    run[cancelled] = CANCELLED_RUN_TIME            # job.py l. 148-149
    keep = run > 0                                 # job.py l. 150
    allocated, requested = values[:, 4], values[:, 7]
    procs = np.maximum(allocated, requested)       # job.py l. 43
    report = {REPORT_CANCELLED: int(np.count_nonzero(cancelled & keep)),
              REPORT_DROPPED: int(np.count_nonzero(~keep)),
              REPORT_REQUEST_FROM_RUN: int(np.count_nonzero(no_request & keep)),
              REPORT_PROCS_FROM_REQUESTED: int(np.count_nonzero((requested > allocated) & keep))}
    extra = {name: values[keep, column] for name, column in EXTRA_FIELDS.items()}
    maxima = {"run": float(values[:, 3].max()), **{name: float(values[:, column].max())
                                                    for name, column in EXTRA_FIELDS.items()}}
    trace = RLSTrace(path=name, job_id=values[keep, 0].astype(np.int64), submit=values[keep, 1],
                     run=run[keep], procs=procs[keep].astype(np.int64), request=request[keep],
                     lines=lines[keep], max_nodes=int(max_nodes), max_procs=int(max_procs), report=report,
                     extra=extra, maxima=maxima)
    if len(trace) == 0:
        raise WorkloadError("no job kept by RLScheduler's reading (every run time is 0)", name)
    _check(trace)
    return trace


def _check(trace: RLSTrace) -> None:
    bad = np.flatnonzero(trace.procs < 1)
    if bad.size:
        raise WorkloadError(f"fields 5 and 8 (allocated, requested processors) must not both be < 1, got "
                            f"{trace.procs[bad[0]]}: RLScheduler's reading cannot place this job",
                            trace.path, line=int(trace.lines[bad[0]]), field="requested processors")
    wide = np.flatnonzero(trace.nodes > trace.max_nodes)
    if wide.size:
        raise WorkloadError(f"the job needs {trace.nodes[wide[0]]} nodes, the machine has {trace.max_nodes} "
                            f"(MaxNodes): RLScheduler's replay would never start it; fix the header or drop the job",
                            trace.path, line=int(trace.lines[wide[0]]), field="requested processors")
    back = np.flatnonzero(np.diff(trace.submit) < 0)
    if back.size:
        k = int(back[0]) + 1
        raise WorkloadError(f"field 2 (submit time) goes back in job-number order ({trace.submit[k]:g} after "
                            f"{trace.submit[k - 1]:g}): RLScheduler's replay needs submit times in job order",
                            trace.path, line=int(trace.lines[k]), field="submit time")


def gym_random_state(seed: int) -> np.random.RandomState:
    """The generator of ``gym.utils.seeding.np_random(seed)`` at the gym commit RLScheduler pins.

    That gym (openai/gym ff4664b, 2019, ``gym/utils/seeding.py``) hashed the seed with
    SHA-512, took its first 8 bytes as a little-endian integer (``hash_seed``), split it
    into 32-bit words (``_int_list_from_bigint``) and seeded a legacy
    :class:`numpy.random.RandomState` with them.

    Args:
        seed: A non-negative integer.

    Returns:
        The seeded legacy generator (its ``randint`` is stable across NumPy versions).

    Raises:
        OptionsError: a negative seed.
    """
    if seed < 0:
        raise OptionsError(f"the seed must be a non-negative integer, got {seed}")
    seed = seed % 2 ** 64                                          # create_seed
    digest = hashlib.sha512(str(seed).encode("utf8")).digest()[:8]
    words = struct.unpack("<3I", digest + b"\0" * 4)             # _bigint_from_bytes pads to 3 words
    big = sum(w << (32 * i) for i, w in enumerate(words))
    ints = []
    while big > 0:                                                 # _int_list_from_bigint
        big, mod = divmod(big, 2 ** 32)
        ints.append(mod)
    state = np.random.RandomState()
    state.seed(ints or [0])
    return state


def sample_starts(nb_jobs: int, length: int, nb_windows: int, seed: int, first_jobs: int = 0) -> list[int]:
    """Start indices (into the kept jobs) of RLScheduler's test windows.

    Args:
        nb_jobs: Kept jobs of the trace.
        length: Jobs per window (their ``--len``).
        nb_windows: Windows (their ``--iter``), one draw each, in draw order.
        seed: Their ``--seed``.
        first_jobs: Their ``--batch_job_slice``: draw from the first N kept jobs; 0 = all.

    Returns:
        ``nb_windows`` start indices, each in ``[length, limit - length - 2]``.

    Raises:
        OptionsError: counts out of range, or too few jobs for one window.
    """
    if length < 1 or nb_windows < 1 or first_jobs < 0:
        raise OptionsError(f"window length and count must be >= 1 and the first jobs >= 0, got {length}, "
                           f"{nb_windows} and {first_jobs}")
    limit = first_jobs or nb_jobs
    if first_jobs > nb_jobs:
        raise OptionsError(f"the first {first_jobs} jobs were asked for, the trace keeps {nb_jobs}")
    check_window_draw(limit, length)
    rng = gym_random_state(seed)
    return [draw_start(rng, limit, length) for _ in range(nb_windows)]


def draw_start(rng: np.random.RandomState, limit: int, length: int) -> int:
    """One window start drawn their way, ``rng.randint(length, limit - length - 1)`` (l. 298-301, 352-355).

    Args:
        rng: The generator (:func:`gym_random_state`).
        limit: Their ``batch_job_slice``, or the kept jobs when it is 0.
        length: Jobs per window.

    Returns:
        A start index in ``[length, limit - length - 2]``.

    Raises:
        OptionsError: ``limit`` too small for a window of ``length`` jobs.
    """
    check_window_draw(limit, length)
    return int(rng.randint(length, limit - length - 1))


def check_window_draw(limit: int, length: int) -> None:
    """Refuse a draw of windows of ``length`` jobs among ``limit`` (their range would be empty).

    Raises:
        OptionsError: ``limit - length - 1 <= length``.
    """
    if limit - length - 1 <= length:
        raise OptionsError(f"RLScheduler draws window starts in [{length}, {limit - length - 1}): "
                           f"{limit} jobs are too few for windows of {length} jobs")


def explicit_starts(starts: Sequence[int], nb_jobs: int, length: int) -> list[int]:
    """Window starts given by the user, checked against the trace.

    Args:
        starts: Start indices into the kept jobs (0-based).
        nb_jobs: Kept jobs of the trace.
        length: Jobs per window.

    Returns:
        The starts as ints, in the given order.

    Raises:
        OptionsError: no start, or a window running past the last kept job.
    """
    if not starts:
        raise OptionsError("give at least one window start")
    out = [int(s) for s in starts]
    for s in out:
        if s < 0 or s + length > nb_jobs:
            raise OptionsError(f"window start {s} must be in [0, {nb_jobs - length}] for windows of {length} jobs "
                               f"among {nb_jobs} kept jobs")
    return out


def window_workload(trace: RLSTrace, start: int, length: int, name: str = "w0") -> Workload:
    """A window of RLScheduler's reading as an HDeepRM workload, for HDeepRM's engine.

    Each job is a ``delay`` job of its run time (no walltime: RLScheduler never kills
    one), ``res`` = its processors (one core per processor), ``requested_time`` = its
    requested time (-1 kept), ``swf_id`` = its job number; submit times are shifted
    so that the window's first job is at 0 s (add ``trace.submit[start]`` for the
    trace's absolute times).

    Args:
        trace: The trace as RLScheduler reads it.
        start: Index of the window's first job among the kept jobs.
        length: Jobs in the window.
        name: Workload name.

    Returns:
        The workload (``nb_res`` = the machine's ``max_procs``).

    Raises:
        OptionsError: a window outside the trace.
    """
    explicit_starts([start], len(trace), length)
    window = slice(start, start + length)
    t0 = float(trace.submit[start])
    jobs = [Job(i, str(number), float(sub) - t0, int(n), -1.0, Profile(f"delay{i}", DELAY, delay=float(run)),
                swf_id=int(number), requested_time=float(r))
            for i, (number, sub, run, n, r) in enumerate(zip(trace.job_id[window].tolist(),
                                                             trace.submit[window].tolist(),
                                                             trace.run[window].tolist(),
                                                             trace.procs[window].tolist(),
                                                             trace.request[window].tolist(), strict=True))]
    return Workload(jobs, name=name, nb_res=trace.max_procs, report=dict(trace.report), source=trace.path)
