"""Pre-flight checks of a run's inputs (``hdeeprm-check``).

Cheap checks run anyway while loading (the parsers raise on malformed
input); these are the explicit, slower ones worth running before a long
training run. Each check is a small named function returning a list of
problems, each saying what to change.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hdeeprm.decision.manager import WorkloadManager
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.workload.convert import FLAGGED_TOO_LARGE, KEPT
from hdeeprm.workload.model import Workload


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


def check_jobs_fit(hierarchy: ResourceHierarchy, workload: Workload) -> list[str]:
    """Jobs that can never fit the platform (they would be rejected at submission)."""
    manager = WorkloadManager(_NullSimulator(), hierarchy)
    out = []
    for job in workload.jobs:
        reason = manager.never_fits(job)
        if reason is not None:
            out.append(f"job {job.id} {reason}: it will be rejected; use a larger platform or drop it")
    return out


def check_submit_times_sorted(hierarchy: ResourceHierarchy, workload: Workload) -> list[str]:
    """Submission times must not decrease along the job list."""
    sub = np.fromiter((j.subtime for j in workload.jobs), dtype=np.float64, count=len(workload.jobs))
    bad = np.flatnonzero(np.diff(sub) < 0)
    return [f"job {workload.jobs[i + 1].id} is submitted before job {workload.jobs[i].id}: sort the workload "
            f"by submission time" for i in bad[:10].tolist()]


def check_pstates(hierarchy: ResourceHierarchy, workload: Workload) -> list[str]:
    """Every host's pstate table is usable: finite, P0 computes, speeds never rise, powers >= 0.

    Reads the host specs the simulators receive (:meth:`ResourceHierarchy.host_specs`):
    per host, speeds (FLOP/s) and idle/computing wattages (W) of equal length, all finite,
    a positive P0 speed, speeds non-increasing from P0, no negative wattage.
    """
    out = []
    for h in hierarchy.host_specs():
        speeds = np.asarray(h.speeds, dtype=np.float64)
        idle = np.asarray(h.idle_watts, dtype=np.float64)
        comp = np.asarray(h.computing_watts, dtype=np.float64)
        if not (speeds.size == idle.size == comp.size > 0):
            problem = (f"has {speeds.size} speeds but {idle.size} idle and {comp.size} computing wattages: "
                       "give every pstate a speed and both wattages")
        elif not (np.isfinite(speeds).all() and np.isfinite(idle).all() and np.isfinite(comp).all()):
            problem = "has a non-finite speed or wattage: fix its processor type's clock_rate, " \
                      "dpflops_per_cycle or power"
        elif speeds[0] <= 0:
            problem = (f"computes at {speeds[0]:g} FLOP/s in P0: fix its processor type's clock_rate or "
                       "dpflops_per_cycle")
        elif (np.diff(speeds) > 0).any():
            problem = f"has speeds that rise after P0 ({speeds.tolist()}): order pstates fastest first"
        elif (idle < 0).any() or (comp < 0).any():
            problem = "has a negative wattage: fix its processor type's power"
        else:
            continue
        out.append(f"host {h.name} {problem}")
        if len(out) == 10:
            break
    return out


def check_report(hierarchy: ResourceHierarchy, workload: Workload) -> list[str]:
    """The conversion report accounts for every job: counts add up and match the workload.

    ``kept`` must equal the workload's jobs; every count must be a non-negative integer;
    altered and flagged counts cannot exceed ``kept``; the jobs flagged as larger than
    the platform must be exactly the workload's jobs that ask for more cores than it has.
    """
    report = dict(workload.report)
    if not report:
        return []
    out = [f"the conversion report's '{key}' must be a non-negative integer, got {value!r}: re-convert the trace"
           for key, value in report.items() if isinstance(value, bool) or not isinstance(value, int) or value < 0]
    kept = report.get(KEPT)
    if kept is not None and kept != len(workload.jobs):
        out.append(f"the conversion report says {kept} jobs were kept but the workload has {len(workload.jobs)}: "
                   "re-convert the trace")
    for key, value in report.items():
        if kept is not None and key.startswith(("altered", "flagged")) and isinstance(value, int) and value > kept:
            out.append(f"the conversion report counts {value} jobs as '{key}' but only {kept} were kept: "
                       "re-convert the trace")
    if FLAGGED_TOO_LARGE in report:
        too_large = sum(job.res > hierarchy.nb_cores for job in workload.jobs)
        if report[FLAGGED_TOO_LARGE] != too_large:
            out.append(f"the conversion report flags {report[FLAGGED_TOO_LARGE]} jobs as larger than the platform "
                       f"but {too_large} ask for more than its {hierarchy.nb_cores} cores: convert the trace for "
                       "this platform")
    return out


#: The checks ``hdeeprm-check`` runs, in order.
CHECKS: tuple[Callable[[ResourceHierarchy, Workload], list[str]], ...] = (
    check_submit_times_sorted, check_jobs_fit, check_pstates, check_report)


def run_checks(hierarchy: ResourceHierarchy, workload: Workload) -> dict[str, list[str]]:
    """Run every check; returns ``{check name: [problems]}`` (empty lists when fine)."""
    return {check.__name__: check(hierarchy, workload) for check in CHECKS}
