"""Pre-flight checks of a run's inputs (``hdeeprm-check``).

Cheap checks run anyway while loading (the parsers raise on malformed input); these are
the explicit, slower ones worth running before a long training run. Each check is a
small named function ``check(hierarchy, workload) -> [problems]``; every problem is one
line saying what is wrong and what to change, and every check can fail on a real defect:

* :func:`check_submit_times_sorted`: submission times never decrease along the jobs;
* :func:`check_jobs_fit`: no job asks for more cores (or memory) than the platform has;
* :func:`check_pstates`: every host's pstate table (speeds in FLOP/s, idle and computing
  power in W, as given to the simulators) is usable;
* :func:`check_report`: the SWF conversion report accounts for every job line of the
  trace (SWF v2.2, https://www.cs.huji.ac.il/labs/parallel/workload/swf.html): each is
  kept or counted under one skip reason, recounted from the trace itself.

A run with ``gpu_jobs`` (CPU and GPU jobs on a platform whose nodes carry GPUs) is checked as
it runs: :func:`check_jobs_fit` asks the GPU side whether a GPU job's cores and GPUs fit a node
(:meth:`~hdeeprm.decision.gpu_binding.GpuBinder.never_fits`), :func:`check_report` checks the
CPU trace's report against the CPU trace's jobs (the GPU jobs are counted apart,
:data:`~hdeeprm.config.build.GPU_JOBS_REPORT`). :func:`check_inputs` is what ``hdeeprm-check``
runs on an options file.

A check lists at most :data:`MAX_PROBLEMS` problems, then how many more there are.
"""
from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from hdeeprm.config.build import GPU_JOBS_REPORT
from hdeeprm.decision.gpu_binding import DEFAULT_BINDING_PLACEMENT, GpuBinder
from hdeeprm.decision.manager import WorkloadManager
from hdeeprm.errors import WorkloadError
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.platform.openb import GpuCluster
from hdeeprm.workload.convert import (ALTERED_ALLOCATED_SIZE, ALTERED_NO_MEMORY, ALTERED_NO_REQUESTED_TIME,
                                      FLAGGED_TOO_LARGE, KEPT, SKIPPED_KEYS, SKIPPED_NO_RUN_TIME, SKIPPED_NO_SIZE,
                                      SKIPPED_NO_SUBMIT_TIME)
from hdeeprm.workload.model import Workload

#: Most problems a check lists one by one; the rest are summed up in a last line.
MAX_PROBLEMS = 10


class _NullSimulator:
    """A simulator that accepts every command and does nothing (for dry checks)."""

    now = 0.0

    def execute_job(self, job, hosts):
        pass

    def reject_job(self, job, reason):
        pass

    def kill_job(self, job):
        pass

    def set_pstate(self, hosts, pstate):
        pass

    def call_me_later(self, when):
        pass

    def progress(self, job):
        return 0.0


def _capped(problems: list[str], total: int, what: str) -> list[str]:
    """The first :data:`MAX_PROBLEMS` problems, plus ``"... and N more <what>"`` when cut."""
    if total <= MAX_PROBLEMS:
        return problems[:MAX_PROBLEMS]
    return problems[:MAX_PROBLEMS] + [f"... and {total - MAX_PROBLEMS} more {what}"]


def check_jobs_fit(hierarchy: ResourceHierarchy, workload: Workload, gpus: GpuCluster | None = None) -> list[str]:
    """Find the jobs that can never fit the platform (they would be rejected at submission).

    Args:
        hierarchy: The platform.
        workload: The jobs (``res`` in cores, ``mem`` in MB per core, ``num_gpu`` GPUs of ``gpu_milli``).
        gpus: The GPUs of the platform's nodes (a run with ``gpu_jobs``, :func:`~hdeeprm.config.build.build_gpu_side`),
            or None: a job asking for GPUs then never fits.

    Returns:
        One problem per such job (the manager's reason: cores, memory per core, or GPUs).
    """
    binder = None if gpus is None else GpuBinder(gpus, hierarchy.core_node, DEFAULT_BINDING_PLACEMENT)
    manager = WorkloadManager(_NullSimulator(), hierarchy, gpus=binder)
    out = []
    for job in workload.jobs:
        reason = manager.never_fits(job)
        if reason is not None:
            out.append(f"job {job.id} {reason}: it will be rejected; use a larger platform or drop it")
    return _capped(out, len(out), "jobs that can never fit")


def check_submit_times_sorted(hierarchy: ResourceHierarchy, workload: Workload) -> list[str]:
    """Check that submission times (s) never decrease along the job list.

    Args:
        hierarchy: The platform (unused; every check takes it).
        workload: The jobs, in list order.

    Returns:
        One problem per job submitted before the job listed just before it.
    """
    sub = np.fromiter((j.subtime for j in workload.jobs), dtype=np.float64, count=len(workload.jobs))
    bad = np.flatnonzero(np.diff(sub) < 0)
    out = [f"job {workload.jobs[i + 1].id} is submitted before job {workload.jobs[i].id}: sort the workload "
           f"by submission time" for i in bad[:MAX_PROBLEMS].tolist()]
    return _capped(out, int(bad.size), "jobs out of order")


def _pstate_problem(speeds: np.ndarray, idle: np.ndarray, comp: np.ndarray, initial: int) -> str | None:
    """What is wrong with one host's pstate table, and what to change; None when usable."""
    if not (speeds.size == idle.size == comp.size > 0):
        return (f"has {speeds.size} speeds but {idle.size} idle and {comp.size} computing wattages: "
                "give every pstate a speed and both wattages")
    if not (np.isfinite(speeds).all() and np.isfinite(idle).all() and np.isfinite(comp).all()):
        return ("has a non-finite speed or wattage: fix its processor type's clock_rate, dpflops_per_cycle "
                "or power (or the SimGrid host's speed and wattage_per_state)")
    if (speeds <= 0).any():
        return (f"has a speed <= 0 FLOP/s ({speeds.tolist()}): every pstate must compute; fix its processor "
                "type's clock_rate or dpflops_per_cycle (or the SimGrid host's speed)")
    if (np.diff(speeds) > 0).any():
        return f"has speeds that rise after P0 ({speeds.tolist()}): order pstates fastest first"
    if (idle < 0).any() or (comp < 0).any():
        return "has a negative wattage: fix its processor type's power (or the SimGrid host's wattage_per_state)"
    if not 0 <= initial < speeds.size:
        return f"starts in pstate {initial} but has {speeds.size} pstates: give an initial pstate that exists"
    return None


def check_pstates(hierarchy: ResourceHierarchy, workload: Workload) -> list[str]:
    """Check that every host's pstate table is usable.

    Reads the host specs the simulators receive (:meth:`ResourceHierarchy.host_specs`):
    per host, speeds (FLOP/s) and idle/computing wattages (W) of the same length, all
    finite, every speed > 0, speeds non-increasing from P0, no negative wattage, and an
    initial pstate that exists.

    Args:
        hierarchy: The platform.
        workload: The jobs (unused; every check takes it).

    Returns:
        One problem per bad host, the first rule it breaks, in host order.
    """
    out = []
    for h in hierarchy.host_specs():
        problem = _pstate_problem(np.asarray(h.speeds, dtype=np.float64), np.asarray(h.idle_watts, dtype=np.float64),
                                  np.asarray(h.computing_watts, dtype=np.float64), h.initial_pstate)
        if problem is not None:
            out.append(f"host {h.name} {problem}")
    return _capped(out, len(out), "hosts with a bad pstate table")


# --- check_report: the conversion report against the trace ------------------------------------------------

_USABLE, _NO_SUBMIT, _NO_SIZE, _NO_RUN = 0, 1, 2, 3
_REASON_KEYS = {_NO_SUBMIT: SKIPPED_NO_SUBMIT_TIME, _NO_SIZE: SKIPPED_NO_SIZE, _NO_RUN: SKIPPED_NO_RUN_TIME}
_ALTERED_KEYS = (ALTERED_ALLOCATED_SIZE, ALTERED_NO_REQUESTED_TIME, ALTERED_NO_MEMORY)


def _classify(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per SWF record (rows of 18 fields): skip reason code, and the three altered flags of usable ones.

    Written from the SWF definition independently of the converter: no submit time (field 2 = -1),
    else no processor count (fields 8 and 5 not > 0), else no run time (field 4 = -1).
    """
    submit, run, alloc, used_mem = values[:, 1], values[:, 3], values[:, 4], values[:, 6]
    req_procs, req_time, req_mem = values[:, 7], values[:, 8], values[:, 9]
    reason = np.where(submit < 0, _NO_SUBMIT,
                      np.where((req_procs <= 0) & (alloc <= 0), _NO_SIZE,
                               np.where(run < 0, _NO_RUN, _USABLE))).astype(np.int8)
    altered = np.stack([req_procs <= 0, req_time <= 0, (req_mem < 0) & (used_mem < 0)], axis=1)
    return reason, altered


def _read_trace(path: str, kept_ids: np.ndarray) -> tuple[np.ndarray, ...]:
    """Job numbers, reasons, altered flags and line numbers of the trace, read until past the kept jobs."""
    from hdeeprm.workload.swf import iter_swf_chunks

    numbers, reasons, altered, lines = [], [], [], []
    usable_after_first = -1   # usable records from the first kept one on (-1: not found yet)
    for values, line_numbers in iter_swf_chunks(path):
        reason, flags = _classify(values)
        numbers.append(values[:, 0].astype(np.int64))
        reasons.append(reason)
        altered.append(flags)
        lines.append(line_numbers)
        usable = reason == _USABLE
        if usable_after_first < 0:
            hits = np.flatnonzero(usable & np.isin(numbers[-1], kept_ids))
            if hits.size:
                usable_after_first = int(usable[hits[0]:].sum())
        else:
            usable_after_first += int(usable.sum())
        if usable_after_first > kept_ids.size:   # the usable record after the kept ones is read
            break
    if not numbers:
        return (np.empty(0, np.int64), np.empty(0, np.int8), np.empty((0, 3), bool), np.empty(0, np.int64))
    return np.concatenate(numbers), np.concatenate(reasons), np.concatenate(altered), np.concatenate(lines)


def _span_counts(reason: np.ndarray, altered: np.ndarray, start: int, stop: int,
                 kept_rows: np.ndarray) -> dict[str, int]:
    """Report counts of the records ``start:stop`` (kept rows given) as the conversion should have made them."""
    counts = {KEPT: int(kept_rows.size)}
    span = reason[start:stop]
    counts.update({key: int((span == code).sum()) for code, key in _REASON_KEYS.items()})
    counts.update({key: int(altered[kept_rows, i].sum()) for i, key in enumerate(_ALTERED_KEYS)})
    return counts


def _recount(workload: Workload, report: dict[str, int]) -> list[str]:
    """Recount the report's kept, skipped and altered records from the SWF trace the workload came from."""
    from hdeeprm.workload.stats import is_json_workload

    path = workload.source
    ids = np.array(sorted(job.swf_id for job in workload.jobs), dtype=np.int64)
    if not path or not os.path.isfile(path) or ids.size == 0 or ids[0] < 0:
        return []   # not converted from a trace on disk, or nothing kept: nothing to recount
    try:
        if is_json_workload(path):
            return []
        numbers, reason, altered, lines = _read_trace(path, ids)
    except WorkloadError as exc:
        return [f"the trace the workload was converted from cannot be re-read ({exc}): fix or re-convert it"]
    usable_rows = np.flatnonzero(reason == _USABLE)
    first = usable_rows[np.isin(numbers[usable_rows], ids)]
    if first.size == 0:
        return [f"no kept job of the workload is a usable record of the trace {path}: re-convert the trace"]
    first_ordinal = int(np.searchsorted(usable_rows, first[0]))
    kept_rows = usable_rows[first_ordinal:first_ordinal + ids.size]
    if kept_rows.size != ids.size or not np.array_equal(np.sort(numbers[kept_rows]), ids):
        return [f"the workload's {ids.size} jobs are not the {ids.size} consecutive usable records of the trace "
                f"{path} from line {int(lines[first[0]])} on: re-convert the trace"]
    start = int(usable_rows[first_ordinal - 1]) + 1 if first_ordinal > 0 else 0
    stop = int(kept_rows[-1]) + 1
    spans = [(stop, _span_counts(reason, altered, start, stop, kept_rows))]
    if first_ordinal + ids.size == usable_rows.size:   # no usable record after: the span may reach the end
        spans.insert(0, (reason.size, _span_counts(reason, altered, start, reason.size, kept_rows)))
    keys = [KEPT, *SKIPPED_KEYS, *_ALTERED_KEYS]
    if any(all(report.get(k, 0) == counts[k] for k in keys) for _, counts in spans):
        return []
    end, counts = spans[0]
    where = f"the trace {path} (lines {int(lines[start])}-{int(lines[end - 1])})"
    out = []
    total = sum(report.get(k, 0) for k in (KEPT, *SKIPPED_KEYS))
    if total != end - start:
        out.append(f"the conversion report counts {total} records kept or skipped but {where} has {end - start} "
                   "job lines: every job line must be kept or counted under one reason; re-convert the trace")
    for key in keys:
        if report.get(key, 0) != counts[key]:
            out.append(f"the conversion report counts {report.get(key, 0)} records as '{key}' but {where} has "
                       f"{counts[key]}: re-convert the trace")
    return out


def check_report(hierarchy: ResourceHierarchy, workload: Workload) -> list[str]:
    """Check that the SWF conversion report accounts for every job line and matches the workload.

    The report (:attr:`Workload.report`, keys of :data:`hdeeprm.workload.convert.REPORT_KEYS`)
    must hold non-negative integers; ``kept`` must be the number of jobs; altered and
    flagged counts cannot exceed ``kept``; the jobs flagged as larger than the platform
    must be exactly those asking for more cores than it has. When the workload came
    from an SWF trace on disk, the trace is read again and its records of the converted
    span (from just after the last usable record before the first kept job, to the last
    kept job or on to the end of the trace) recounted with the SWF skip rules: ``kept``
    + the skipped counts must equal its job lines, each skip reason and each altered
    count must match. The recount assumes no ``time_window`` (``hdeeprm-launch``
    converts without one). Workloads without a report (Batsim JSON) pass.

    A workload with GPU jobs beside the trace's (:data:`~hdeeprm.config.build.GPU_JOBS_REPORT` in its report: a run
    with ``gpu_jobs``) is checked on the trace's jobs (those with an SWF job number); the GPU jobs must be the
    count the report gives.

    Args:
        hierarchy: The platform the workload was converted for.
        workload: The converted workload.

    Returns:
        The problems, each saying what to change.
    """
    report = dict(workload.report)
    if not report:
        return []
    if GPU_JOBS_REPORT in report:
        gpu_jobs = report.pop(GPU_JOBS_REPORT)
        trace = [job for job in workload.jobs if job.swf_id >= 0]
        if gpu_jobs != len(workload.jobs) - len(trace):
            return [f"the report counts {gpu_jobs!r} GPU jobs but the workload has {len(workload.jobs) - len(trace)} "
                    "jobs without an SWF job number: re-convert the trace"]
        workload = dataclasses.replace(workload, jobs=trace)
    out = [f"the conversion report's '{key}' must be a non-negative integer, got {value!r}: re-convert the trace"
           for key, value in report.items() if isinstance(value, bool) or not isinstance(value, int) or value < 0]
    if out or KEPT not in report:
        return out
    kept = report[KEPT]
    if kept != len(workload.jobs):
        out.append(f"the conversion report says {kept} jobs were kept but the workload has {len(workload.jobs)}: "
                   "re-convert the trace")
    for key, value in report.items():
        if key.startswith(("altered", "flagged")) and value > kept:
            out.append(f"the conversion report counts {value} jobs as '{key}' but only {kept} were kept: "
                       "re-convert the trace")
    if FLAGGED_TOO_LARGE in report:
        too_large = sum(job.res > hierarchy.nb_cores for job in workload.jobs)
        if report[FLAGGED_TOO_LARGE] != too_large:
            out.append(f"the conversion report flags {report[FLAGGED_TOO_LARGE]} jobs as larger than the platform "
                       f"but {too_large} ask for more than its {hierarchy.nb_cores} cores: convert the trace for "
                       "this platform")
    if not out:
        out.extend(_recount(workload, report))
    return out


#: The checks ``hdeeprm-check`` runs, in order.
CHECKS: tuple[Callable[[ResourceHierarchy, Workload], list[str]], ...] = (
    check_submit_times_sorted, check_jobs_fit, check_pstates, check_report)


def run_checks(hierarchy: ResourceHierarchy, workload: Workload,
               checks: Sequence[Callable[[ResourceHierarchy, Workload], list[str]]] = CHECKS,
               gpus: GpuCluster | None = None) -> dict[str, list[str]]:
    """Run checks on a run's inputs.

    Args:
        hierarchy: The platform.
        workload: The workload.
        checks: The checks to run (default :data:`CHECKS`, all of them).
        gpus: The GPUs of the platform's nodes in a run with ``gpu_jobs``, or None; given to the checks that take
            a ``gpus`` argument (:func:`check_jobs_fit`).

    Returns:
        ``{check name: [problems]}`` in check order; an empty list when the check passes.
    """
    return {check.__name__: (check(hierarchy, workload, gpus=gpus) if gpus is not None and
                             "gpus" in inspect.signature(check).parameters else check(hierarchy, workload))
            for check in checks}


def check_inputs(options, custom_workload: str | None = None, libraries: Sequence[str | Path] = (),
                 gpu_libraries: Sequence[str | Path] = ()) -> tuple[dict[str, list[str]], str]:
    """Load a run's inputs as ``hdeeprm-launch`` would and check them (what ``hdeeprm-check options.json`` runs).

    Options with a ``gpu`` block get :func:`run_gpu_checks`; the others :func:`run_checks` (with the GPUs of the
    platform's nodes for ``gpu_jobs``).

    Args:
        options: The run's :class:`~hdeeprm.config.options.Options`.
        custom_workload: A Batsim JSON workload replacing the options' (``-cw``; not for a GPU run).
        libraries: Extra processor/node type libraries (``--library``).
        gpu_libraries: Extra GPU type libraries (``--gpu-library``; GPU runs only).

    Returns:
        ``({check name: [problems]}, report)``: the report is the workload's conversion report as text ("" when
        there is none).

    Raises:
        OptionsError: Invalid options, or ``-cw`` / ``--gpu-library`` where they do not apply.
        PlatformError, WorkloadError: Invalid input files.
    """
    from hdeeprm.config.build import build_gpu_side, build_platform, build_workload
    from hdeeprm.errors import OptionsError
    from hdeeprm.jsontext import encode_json
    from hdeeprm.workload.convert import format_report

    if options.gpu is not None:   # a timed GPU run: its own inputs and checks
        from hdeeprm.run.gpu_launch import load_gpu_inputs

        if custom_workload:
            raise OptionsError("a GPU run (options with a 'gpu' block) takes its workload from the options: drop -cw",
                               path=options.source)
        cluster, jobs, config = load_gpu_inputs(options, libraries, gpu_libraries)
        return run_gpu_checks(cluster, jobs, config), (encode_json(jobs.report, indent=None) if jobs.report else "")
    if gpu_libraries:
        raise OptionsError("--gpu-library applies to GPU runs (options with a 'gpu' block)", path=options.source)
    hierarchy = build_platform(options, libraries)
    workload = build_workload(options, hierarchy, custom_workload)
    results = run_checks(hierarchy, workload, gpus=build_gpu_side(options))
    return results, (format_report(workload.report) if workload.report else "")


def run_gpu_checks(cluster, jobs, config) -> dict[str, list[str]]:
    """The checks of a timed GPU run's inputs (options with a ``gpu`` block).

    * ``check_gpu_platform``: the platform has GPUs;
    * ``check_gpu_workload``: the job window is not empty and its submission times never decrease;
    * ``check_gpu_jobs_fit``: every job fits some node of the empty cluster (its GPUs, GPU model,
      GPU memory, CPU and memory), as the placement decides it (jobs that never fit are rejected).

    Args:
        cluster: The :class:`~hdeeprm.platform.openb.GpuCluster`.
        jobs: The :class:`~hdeeprm.workload.gpu_jobs.GpuJobs` window of the run.
        config: The run's :class:`~hdeeprm.run.gpu_replay.GpuRunConfig`.

    Returns:
        ``{check name: [problems]}`` in check order (empty lists when they pass).
    """
    from hdeeprm.decision.gpu_manager import GpuManager

    platform = [] if cluster.nb_gpus else [f"the platform {cluster.source} has no GPU: every job asking for one "
                                           "would be rejected; give a GPU platform"]
    workload: list[str] = []
    if len(jobs) == 0:
        workload.append(f"the job window of {jobs.source} is empty: lower gpu.first_job or raise nb_jobs")
    else:
        back = np.flatnonzero(np.diff(jobs.submit) < 0)
        workload += [f"job {jobs.ids[i + 1]} is submitted at {jobs.submit[i + 1]:g} s, before the previous "
                     f"job ({jobs.submit[i]:g} s): sort the workload by submission time" for i in back[:MAX_PROBLEMS]]
        if len(back) > MAX_PROBLEMS:
            workload.append(f"... and {len(back) - MAX_PROBLEMS} more")
    manager = GpuManager(cluster, jobs, config.placement, config.ordering, config.start_strategy,
                         np.random.default_rng(config.seed))
    unfit = [(jobs.ids[i], reason) for i, reason in enumerate(manager.reasons) if reason is not None]
    fit = [f"job {job} never fits: {reason}" for job, reason in unfit[:MAX_PROBLEMS]]
    if len(unfit) > MAX_PROBLEMS:
        fit.append(f"... and {len(unfit) - MAX_PROBLEMS} more ({len(unfit)} of {len(jobs)} jobs would be rejected)")
    return {"check_gpu_platform": platform, "check_gpu_workload": workload, "check_gpu_jobs_fit": fit}
