"""SWF trace -> :class:`~hdeeprm.workload.model.Workload`.

Sources: the SWF definition of the Parallel Workloads Archive, version 2.2
(https://www.cs.huji.ac.il/labs/parallel/workload/swf.html; S. J. Chapin et al.,
"Benchmarks and standards for the evaluation of parallel job schedulers", JSSPP 1999,
LNCS 1659), and, for what SWF does not give, the original HDeepRM (A. Herrera,
"HDeepRM: Deep Reinforcement Learning for Workload Management in Heterogeneous
Clusters", 2019, and its source code) and Batsim's workload format
(https://batsim.readthedocs.io/en/latest/input-workload.html). Every default is a
module constant (``DEFAULT_*``), written only here: the options of ``hdeeprm-launch``
and of ``hdeeprm-workload convert`` import them.

Rules, per SWF record (fields numbered as in the SWF v2.2 definition):

* **Size** (cores, Batsim ``res``) = requested processors (field 8), falling back to
  allocated processors (field 5); neither > 0 -> skipped ("no processor count").
* **Submit time** (field 2) unknown (-1) -> skipped. ``subtime`` is relative to the
  earliest kept job (the first one in a sorted trace), in seconds.
* **Run time** (field 4) unknown (-1; SDSC-SP2 has cancelled jobs like that) -> skipped.
  A run time of 0 s is kept.
* **Requested time** (field 9, the user estimate the scheduler sees) becomes
  ``requested_time``, in seconds. Missing (-1, or 0) -> the run time is used (a
  perfect estimate), at least 1 s; counted as altered. By default
  (:data:`DEFAULT_ENFORCE_WALLTIME`, False, as the original HDeepRM) a job has no
  Batsim walltime (``-1``): the requested time is only the estimate policies see, and
  a job slowed down by contention is not killed. With ``enforce_walltime=True``
  (Batsim's convention) the requested time is also the walltime. Beware: Batsim kills
  a ``delay`` job whose delay equals its walltime, so with ``delay`` profiles and
  enforced walltimes a perfect estimate ends every such job as
  COMPLETED_WALLTIME_REACHED (same timing, success 0).
* **Actual work**: the trace run time by default (``actual_work="runtime"``); with
  ``"tsafrir"`` it is requested time x r, r drawn from HDeepRM's discrete
  approximation of Tsafrir, Etsion & Feitelson 2007 (:data:`TSAFRIR_RATIOS`,
  :data:`TSAFRIR_PROBABILITIES`: 0.05 ... 1.25, mean 0.5265, 20 % above 1). A job
  whose actual time exceeds its requested time is counted in the report: killed at
  its walltime when walltimes are enforced, run to its end otherwise.
* **Profiles**: ``parallel_homogeneous`` with ``cpu`` = actual seconds x
  ``reference_speed`` FLOP on each core (named ``ph<FLOP>``), or ``delay`` with
  ``delay`` = actual seconds (named ``d<seconds>``, as Batsim's own converters).
  Profiles are shared only by jobs with the same work.
* **Memory per core** (MB) = requested memory (field 10, KB per processor) / 1024,
  falling back to used memory (field 7) / 1024; missing -> ``default_mem``
  (0 = unconstrained), counted as altered.
* **Memory bandwidth per core** (GB/s) is not in SWF: drawn uniformly from
  ``mem_bw_choices`` ({4, 8, ..., 24} GB/s as the original HDeepRM), seeded.
* Jobs larger than the platform are kept (the workload manager rejects them at
  submission with a reason) and counted.

Selection: ``time_window=(t0, t1)`` keeps records with ``t0 <= submit time < t1``
(trace seconds, field 2); among the usable records left (not skipped), the first
``first_job`` are passed over and the next ``nb_jobs`` kept. The report covers every
record of the selected span: from just after the ``first_job``-th usable record up to
the last kept one, or on to the end of the trace when fewer than ``nb_jobs`` usable
records were left (always with ``nb_jobs=None``). Each record of the span is either kept or skipped, and each skipped
record is counted once, under its first reason in the order above, so that ``kept`` +
the ``skipped`` counts = the records of the span. Altered and flagged counts are over
kept jobs and may overlap.

Randomness (bandwidth, Tsafrir ratios) comes from :class:`numpy.random.Generator`
objects spawned from ``seed``: the same seed and inputs give the same workload, and the
bandwidths do not depend on ``actual_work``.
"""
from __future__ import annotations

import csv
import io
import logging
import math
import os
from collections.abc import Iterable, Sequence

import numpy as np

from hdeeprm.errors import OptionsError
from hdeeprm.files import atomic_write
from hdeeprm.jsontext import encode_json
from hdeeprm.workload.model import DELAY, PARALLEL_HOMOGENEOUS, Job, Profile, Workload
from hdeeprm.workload.swf import NB_FIELDS, SWFRecord, check_unique_job_numbers, iter_swf_chunks

#: Report key: number of jobs kept in the workload.
KEPT = "kept"
#: Report key: record skipped because its submit time (field 2) is unknown.
SKIPPED_NO_SUBMIT_TIME = "skipped: unknown submit time"
#: Report key: record skipped because neither field 8 nor field 5 is > 0.
SKIPPED_NO_SIZE = "skipped: no processor count"
#: Report key: record skipped because its run time (field 4) is unknown.
SKIPPED_NO_RUN_TIME = "skipped: unknown run time"
#: Report key: requested processors (8) unknown, allocated processors (5) used.
ALTERED_ALLOCATED_SIZE = "altered: no requested processors (allocated processors used)"
#: Report key: requested time (9) unknown, the run time used as walltime.
ALTERED_NO_REQUESTED_TIME = "altered: no requested time (run time used)"
#: Report key: memory (fields 10 and 7) unknown, ``default_mem`` used.
ALTERED_NO_MEMORY = "altered: no memory (default used)"
#: Report key: more cores than the platform has; kept, rejected at submission.
FLAGGED_TOO_LARGE = "flagged: larger than the platform (rejected at submission)"
#: Report key: actual time > requested time; kept, killed at its walltime.
FLAGGED_OVER_WALLTIME = "flagged: actual time exceeds requested time (killed at walltime)"
#: Report key: actual time > requested time, with walltimes not enforced (the job runs to its end).
FLAGGED_OVER_REQUEST = "flagged: actual time exceeds requested time (walltime not enforced)"

#: Report keys of the records skipped, in the order the rules are applied (a record is
#: counted under the first that applies).
SKIPPED_KEYS: tuple[str, ...] = (SKIPPED_NO_SUBMIT_TIME, SKIPPED_NO_SIZE, SKIPPED_NO_RUN_TIME)
#: Every report key, in the order reports are printed. A report has every key but one of
#: :data:`FLAGGED_OVER_WALLTIME` (walltimes enforced) and :data:`FLAGGED_OVER_REQUEST` (not).
REPORT_KEYS: tuple[str, ...] = (
    KEPT, *SKIPPED_KEYS, ALTERED_ALLOCATED_SIZE, ALTERED_NO_REQUESTED_TIME, ALTERED_NO_MEMORY,
    FLAGGED_TOO_LARGE, FLAGGED_OVER_WALLTIME, FLAGGED_OVER_REQUEST)

#: actual / requested time ratios of HDeepRM's approximation of Tsafrir et al. 2007:
#: 0.05, 0.10, ..., 1.25 (25 values, exact multiples of 1/20).
TSAFRIR_RATIOS: np.ndarray = np.arange(1, 26) / 20.0
#: Probabilities of :data:`TSAFRIR_RATIOS` (sum 1; mean ratio 0.5265; P(r > 1) = 0.20).
#: Source: the original HDeepRM (``hdeeprm/util.py``, generate_workload), approximating
#: D. Tsafrir, Y. Etsion, D. G. Feitelson, "Backfilling using system-generated
#: predictions rather than user runtime estimates", IEEE TPDS 18(6), 2007.
TSAFRIR_PROBABILITIES: np.ndarray = np.array(
    [0.15, 0.09, 0.07] + [0.04] * 5 + [0.03] * 5 + [0.02] * 10 + [0.06, 0.08])

# --- Conversion defaults: written only here. hdeeprm.config.options (hdeeprm-launch) and
# hdeeprm.cli.workload (hdeeprm-workload convert) import these names, so that the same trace
# converts to the same workload through the library, the launcher and the command line.

#: Memory bandwidth values (GB/s per core) drawn uniformly per job by default. SWF has no
#: bandwidth field; these are the values of the original HDeepRM (A. Herrera, 2019), whose
#: job profiles carry a ``mem_bw`` in GB/s.
DEFAULT_MEM_BW_CHOICES: tuple[float, ...] = (4.0, 8.0, 12.0, 16.0, 20.0, 24.0)
#: Actual work of a job by default: its real run time (SWF v2.2 field 4, wall clock seconds),
#: the trace's record of what happened.
DEFAULT_ACTUAL_WORK = "runtime"
#: Batsim profile type of converted jobs by default: ``parallel_homogeneous``
#: (https://batsim.readthedocs.io/en/latest/input-workload.html), as the original HDeepRM's
#: profiles, so that jobs compute FLOP and pstates (contention) change their duration.
DEFAULT_PROFILE_TYPE = PARALLEL_HOMOGENEOUS
#: Memory per core (MB) of jobs whose SWF memory fields (10 and 7) are unknown (-1), by
#: default: 0, meaning no memory constraint (the SWF definition gives no value to assume).
DEFAULT_MEM = 0.0
#: Whether the requested time (SWF field 9) becomes a Batsim walltime that kills the job, by
#: default: no, as the original HDeepRM, whose profiles carry the requested time
#: (``req_time``) and whose jobs have no walltime. The requested time is the estimate
#: policies see; a job slowed down by contention runs to its end.
DEFAULT_ENFORCE_WALLTIME = False

#: Values of ``actual_work``: the trace run time, or requested time x a Tsafrir ratio.
ACTUAL_WORK_CHOICES = ("runtime", "tsafrir")
#: Values of ``profile_type`` (Batsim profile types the engine simulates).
PROFILE_TYPE_CHOICES = (PARALLEL_HOMOGENEOUS, DELAY)

log = logging.getLogger(__name__)

# Column indices of the SWF fields used here (0-based).
_SUBMIT, _RUN, _ALLOC, _USED_MEM, _REQ_PROCS, _REQ_TIME, _REQ_MEM = 1, 3, 4, 6, 7, 8, 9


def _check_options(nb_cores: int, reference_speed: float, nb_jobs: int | None, first_job: int,
                   time_window: tuple[float, float] | None, actual_work: str, profile_type: str,
                   default_mem: float, mem_bw_choices: Sequence[float], seed: int) -> None:
    if isinstance(nb_cores, bool) or not isinstance(nb_cores, (int, np.integer)) or nb_cores < 1:
        raise OptionsError(f"nb_cores must be a positive integer, got {nb_cores!r}")
    if profile_type == PARALLEL_HOMOGENEOUS and not 0 < reference_speed < math.inf:
        raise OptionsError(f"reference_speed must be a finite number > 0 FLOP/s for {PARALLEL_HOMOGENEOUS} "
                           f"profiles, got {reference_speed!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise OptionsError(f"seed must be an integer >= 0, got {seed!r}")
    if nb_jobs is not None and nb_jobs < 0:
        raise OptionsError(f"nb_jobs must be >= 0 or None, got {nb_jobs!r}")
    if first_job < 0:
        raise OptionsError(f"first_job must be >= 0, got {first_job!r}")
    if time_window is not None and not (len(time_window) == 2 and -math.inf < time_window[0] < time_window[1]):
        raise OptionsError(f"time_window must be (t0, t1) with t0 < t1, got {time_window!r}")
    if actual_work not in ACTUAL_WORK_CHOICES:
        raise OptionsError(f"actual_work must be one of {', '.join(ACTUAL_WORK_CHOICES)}, "
                           f"got {actual_work!r}")
    if profile_type not in PROFILE_TYPE_CHOICES:
        raise OptionsError(f"profile_type must be one of {', '.join(PROFILE_TYPE_CHOICES)}, "
                           f"got {profile_type!r}")
    if not 0 <= default_mem < math.inf:
        raise OptionsError(f"default_mem must be a finite number >= 0 MB, got {default_mem!r}")
    if len(mem_bw_choices) == 0 or not all(0 <= x < math.inf for x in mem_bw_choices):
        raise OptionsError(f"mem_bw_choices must be a non-empty list of finite values >= 0 GB/s, "
                           f"got {list(mem_bw_choices)!r}")


def skip_rules(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Which SWF records the module's rules skip, and why: the first rule that applies.

    Args:
        values: SWF records, float64 (k, 18).

    Returns:
        bool (k,) each: no submit time, no processor count, no run time, and usable (none of them).
    """
    no_submit = values[:, _SUBMIT] < 0
    no_size = ~no_submit & (values[:, _REQ_PROCS] <= 0) & (values[:, _ALLOC] <= 0)
    no_run = ~no_submit & ~no_size & (values[:, _RUN] < 0)
    return no_submit, no_size, no_run, ~(no_submit | no_size | no_run)


def _select(chunks: Iterable[np.ndarray], nb_jobs: int | None, first_job: int,
            time_window: tuple[float, float] | None) -> tuple[np.ndarray, dict[str, int], dict[str, int]]:
    """Apply the window, skip rules and selection; return kept rows, skip counts and what was seen.

    The last dict counts the ``records`` read, those ``in_window`` and the ``usable`` ones (read
    until the selection was complete): enough to say which filter removed every job.
    """
    limit = np.inf if nb_jobs is None else first_job + nb_jobs
    usable_seen = 0
    seen = {"records": 0, "in_window": 0}
    kept_parts: list[np.ndarray] = []
    skipped = dict.fromkeys(SKIPPED_KEYS, 0)
    for values in chunks:
        if usable_seen >= limit:
            break
        seen["records"] += len(values)
        if time_window is not None:
            submit = values[:, _SUBMIT]
            values = values[(submit >= time_window[0]) & (submit < time_window[1])]
        seen["in_window"] += len(values)
        no_submit, no_size, no_run, usable = skip_rules(values)
        usable_before = usable_seen + np.cumsum(usable) - usable  # usable rows before each row
        in_span = (usable_before >= first_job) & (usable_before < limit)
        usable_seen += int(usable.sum())
        skipped[SKIPPED_NO_SUBMIT_TIME] += int((no_submit & in_span).sum())
        skipped[SKIPPED_NO_SIZE] += int((no_size & in_span).sum())
        skipped[SKIPPED_NO_RUN_TIME] += int((no_run & in_span).sum())
        kept_parts.append(values[usable & in_span])
    kept = np.concatenate(kept_parts) if kept_parts else np.empty((0, NB_FIELDS))
    return kept, skipped, {**seen, "usable": usable_seen}


def _why_empty(seen: dict[str, int], skipped: dict[str, int], nb_jobs: int | None, first_job: int,
               time_window: tuple[float, float] | None) -> str:
    """Which filter removed every record: the trace, the time window, the skip rules, first_job or nb_jobs."""
    if nb_jobs == 0:
        return "nb_jobs is 0"
    if not seen["records"]:
        return "the trace has no job lines"
    if not seen["in_window"]:
        return (f"none of its {seen['records']} records has a submit time (SWF field 2) in the time window "
                f"[{time_window[0]:g}, {time_window[1]:g}) s")
    if not seen["usable"]:
        reasons = ", ".join(f"{count} {key.removeprefix('skipped: ')}" for key, count in skipped.items() if count)
        return f"every one of its {seen['in_window']} records is skipped ({reasons})"
    return f"first_job = {first_job} passes over all its {seen['usable']} usable jobs"


def _token(value: float) -> str:
    """Exact, short text of a number for profile names (3600.0 -> "3600")."""
    return str(int(value)) if value.is_integer() else repr(value)


def records_to_workload(chunks: Iterable[np.ndarray | Sequence[SWFRecord]], *, nb_cores: int,
                        reference_speed: float, nb_jobs: int | None = None, first_job: int = 0,
                        time_window: tuple[float, float] | None = None,
                        actual_work: str = DEFAULT_ACTUAL_WORK,
                        profile_type: str = DEFAULT_PROFILE_TYPE, default_mem: float = DEFAULT_MEM,
                        mem_bw_choices: Sequence[float] = DEFAULT_MEM_BW_CHOICES, seed: int = 0,
                        name: str = "w0", source: str = "",
                        enforce_walltime: bool = DEFAULT_ENFORCE_WALLTIME,
                        profiles: dict[str, dict[float, Profile]] | None = None) -> Workload:
    """Convert SWF records to a workload (the engine of :func:`swf_to_workload`).

    Args:
        chunks: Blocks of SWF records in trace order: arrays of shape ``(k, 18)`` (as
            yielded by :func:`~hdeeprm.workload.swf.iter_swf_chunks`) or sequences of
            :class:`~hdeeprm.workload.swf.SWFRecord`.
        source: Path recorded in :attr:`Workload.source`.
        profiles: Profiles already made, ``{profile_type: {amount: Profile}}``, shared by the calls that pass
            the same dict (profiles are immutable; the windows of one trace reuse theirs); the new ones are
            added. None: this call's own.
        nb_cores, reference_speed, nb_jobs, first_job, time_window, actual_work,
        profile_type, default_mem, mem_bw_choices, seed, name, enforce_walltime: As in
            :func:`swf_to_workload`.

    Returns:
        The workload; see :func:`swf_to_workload`.

    Raises:
        OptionsError: An argument is out of range.
        WorkloadError: Two kept records have the same job number (SWF field 1): job ids
            must be unique (named with both lines when ``source`` is the trace file).
    """
    _check_options(nb_cores, reference_speed, nb_jobs, first_job, time_window, actual_work,
                   profile_type, default_mem, mem_bw_choices, seed)
    arrays = (chunk if isinstance(chunk, np.ndarray)
              else np.array([tuple(r)[:NB_FIELDS] for r in chunk], dtype=np.float64
                            ).reshape(-1, NB_FIELDS) for chunk in chunks)
    kept, skipped, seen = _select(arrays, nb_jobs, first_job, time_window)
    count = len(kept)
    if not count:
        log.warning("no job kept from %s: %s", source or "the SWF records",
                    _why_empty(seen, skipped, nb_jobs, first_job, time_window))
    check_unique_job_numbers(kept[:, 0], source)
    bw_rng, ratio_rng = (np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(2))

    by_request = kept[:, _REQ_PROCS] > 0
    size = np.where(by_request, kept[:, _REQ_PROCS], kept[:, _ALLOC]).astype(np.int64)
    run = kept[:, _RUN]
    has_request = kept[:, _REQ_TIME] > 0
    requested = np.where(has_request, kept[:, _REQ_TIME], np.maximum(run, 1.0))
    if actual_work == "tsafrir":
        actual = requested * ratio_rng.choice(TSAFRIR_RATIOS, size=count, p=TSAFRIR_PROBABILITIES)
    else:
        actual = run
    mem_kb = np.where(kept[:, _REQ_MEM] >= 0, kept[:, _REQ_MEM], kept[:, _USED_MEM])
    has_mem = mem_kb >= 0
    mem = np.where(has_mem, mem_kb / 1024.0, float(default_mem))
    mem_bw = bw_rng.choice(np.asarray(mem_bw_choices, dtype=np.float64), size=count)
    submit = kept[:, _SUBMIT]
    subtime = submit - submit.min() if count else submit
    order = np.argsort(subtime, kind="stable")

    report = {KEPT: count, **skipped,
              ALTERED_ALLOCATED_SIZE: int(count - by_request.sum()),
              ALTERED_NO_REQUESTED_TIME: int(count - has_request.sum()),
              ALTERED_NO_MEMORY: int(count - has_mem.sum()),
              FLAGGED_TOO_LARGE: int((size > nb_cores).sum()),
              (FLAGGED_OVER_WALLTIME if enforce_walltime else FLAGGED_OVER_REQUEST):
                  int((actual > requested).sum())}

    if profile_type == DELAY:
        work, prefix = actual, "d"
    else:
        work, prefix = actual * float(reference_speed), "ph"
    made: dict[float, Profile] = {} if profiles is None else profiles.setdefault(profile_type, {})
    jobs: list[Job] = []
    columns = zip(kept[order, 0].astype(np.int64).tolist(), subtime[order].tolist(),
                  size[order].tolist(), requested[order].tolist(), work[order].tolist(),
                  mem[order].tolist(), mem_bw[order].tolist())
    for index, (number, sub, res, walltime, amount, job_mem, job_bw) in enumerate(columns):
        profile = made.get(amount)
        if profile is None:
            label = prefix + _token(amount)
            profile = (Profile(label, DELAY, delay=amount) if profile_type == DELAY
                       else Profile(label, PARALLEL_HOMOGENEOUS, cpu=amount))
            made[amount] = profile
        jobs.append(Job(index, str(number), sub, res, walltime if enforce_walltime else -1.0, profile,
                        job_mem, job_bw, number, walltime))
    return Workload(jobs, name=name, nb_res=int(nb_cores), reference_speed=float(reference_speed),
                    report=report, source=source)


def swf_to_workload(path: str | os.PathLike, *, nb_cores: int, reference_speed: float,
                    nb_jobs: int | None = None, first_job: int = 0,
                    time_window: tuple[float, float] | None = None, actual_work: str = DEFAULT_ACTUAL_WORK,
                    profile_type: str = DEFAULT_PROFILE_TYPE, default_mem: float = DEFAULT_MEM,
                    mem_bw_choices: Sequence[float] = DEFAULT_MEM_BW_CHOICES, seed: int = 0,
                    name: str = "w0", enforce_walltime: bool = DEFAULT_ENFORCE_WALLTIME) -> Workload:
    """Read an SWF trace and convert it to a workload, following the module's rules.

    Args:
        path: The SWF trace, plain or gzip-compressed.
        nb_cores: Cores of the target platform (>= 1): the workload's ``nb_res``, and
            the limit above which jobs are flagged as rejected at submission.
        reference_speed: FLOP/s of the reference core turning trace seconds into FLOP
            (``parallel_homogeneous`` only; the platform's mean core speed).
        nb_jobs: How many usable jobs to keep (None = all).
        first_job: How many usable jobs to pass over first.
        time_window: ``(t0, t1)``: only records with ``t0 <= submit time < t1``
            (seconds, SWF field 2 as written in the trace).
        actual_work: ``"runtime"`` (trace run time, the default) or ``"tsafrir"``
            (requested time x a ratio drawn from :data:`TSAFRIR_PROBABILITIES`).
        profile_type: ``"parallel_homogeneous"`` (default) or ``"delay"``.
        default_mem: Memory per core in MB for jobs without memory data (0, the default,
            = none).
        mem_bw_choices: Memory bandwidth values in GB/s per core, drawn uniformly
            (default :data:`DEFAULT_MEM_BW_CHOICES`).
        seed: Seed of the random draws (bandwidth, Tsafrir ratios).
        name: Workload name (Batsim's ``w0``).
        enforce_walltime: False (the default, :data:`DEFAULT_ENFORCE_WALLTIME`): the job
            has no walltime (``-1``) and the requested time is only the estimate policies
            see, as in the original HDeepRM (whose profiles carried ``req_time`` but no
            Batsim walltime), so jobs slowed down by contention are not killed. True
            (Batsim's convention): the requested time is also the job's walltime and a job
            running longer is killed.

    Returns:
        The workload: jobs sorted by ``subtime`` (seconds from the earliest kept job),
        ``id`` = SWF job number, ``res`` in cores, ``requested_time`` in seconds,
        ``walltime`` = ``requested_time`` when ``enforce_walltime`` else ``-1``, ``mem`` in
        MB and ``mem_bw`` in GB/s per core; ``report`` maps each key of
        :data:`REPORT_KEYS` but one (:data:`FLAGGED_OVER_REQUEST` when walltimes are
        enforced, :data:`FLAGGED_OVER_WALLTIME` otherwise) to a count (``"kept"`` +
        the skipped counts = records in the selected span).

    Raises:
        WorkloadError: The trace is missing or malformed (names file, line and field), or
            two kept records have the same job number.
        OptionsError: An argument is out of range.
    """
    source = os.fspath(path)
    chunks = (values for values, _ in iter_swf_chunks(source))
    return records_to_workload(chunks, nb_cores=nb_cores, reference_speed=reference_speed,
                               nb_jobs=nb_jobs, first_job=first_job, time_window=time_window,
                               actual_work=actual_work, profile_type=profile_type,
                               default_mem=default_mem, mem_bw_choices=mem_bw_choices,
                               seed=seed, name=name, source=source, enforce_walltime=enforce_walltime)


def format_report(report: dict[str, int]) -> str:
    """Format a conversion report for the console.

    Args:
        report: Reason -> count, as in :attr:`Workload.report`.

    Returns:
        One ``count  reason`` line per non-zero entry (``kept`` always shown), known
        reasons in :data:`REPORT_KEYS` order, no trailing line break.
    """
    keys = [k for k in REPORT_KEYS if k in report] + [k for k in report if k not in REPORT_KEYS]
    shown = [k for k in keys if report[k] or k == KEPT]
    width = max((len(str(report[k])) for k in shown), default=1)
    return "\n".join(f"{report[k]:>{width}}  {k}" for k in shown)


def write_report(report: dict[str, int], path: str | os.PathLike) -> None:
    """Write a conversion report: CSV (``reason,count``) for ``.csv`` paths, else JSON.

    Args:
        report: Reason -> count, as in :attr:`Workload.report`. Every key is written,
            zeros included, so that files of different runs line up.
        path: File to create or overwrite (atomically, see
            :func:`hdeeprm.files.atomic_write`).

    Raises:
        OSError: The file cannot be written.
    """
    name = os.fspath(path)
    if name.lower().endswith(".csv"):
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(("reason", "count"))
        writer.writerows(report.items())
        text = buffer.getvalue()
    else:
        text = encode_json(report) + "\n"
    with atomic_write(name) as out:
        out.write(text)
