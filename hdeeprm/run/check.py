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
from hdeeprm.platform.hierarchy import PSTATE_POWER_FACTORS, PSTATE_SPEED_FACTORS, ResourceHierarchy
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
    """Every core has the four pstates with positive speeds and non-negative powers."""
    out = []
    if len(PSTATE_SPEED_FACTORS) != len(PSTATE_POWER_FACTORS):
        out.append("pstate speed and power tables differ in length")
    if (hierarchy.core_speed <= 0).any():
        out.append(f"{int((hierarchy.core_speed <= 0).sum())} cores have a non-positive peak speed: fix "
                   "clock_rate or dpflops_per_cycle of their processor type")
    if (hierarchy.core_power < 0).any():
        out.append("some cores have a negative power: fix the processor type's power")
    return out


def check_report(hierarchy: ResourceHierarchy, workload: Workload) -> list[str]:
    """Every SWF job was kept or reported with a reason (no silent drop)."""
    report = dict(workload.report)
    if not report:
        return []
    kept = report.get("kept")
    if kept is not None and kept != len(workload.jobs):
        return [f"the conversion report says {kept} jobs were kept but the workload has {len(workload.jobs)}"]
    return []


#: The checks ``hdeeprm-check`` runs, in order.
CHECKS: tuple[Callable[[ResourceHierarchy, Workload], list[str]], ...] = (
    check_submit_times_sorted, check_jobs_fit, check_pstates, check_report)


def run_checks(hierarchy: ResourceHierarchy, workload: Workload) -> dict[str, list[str]]:
    """Run every check; returns ``{check name: [problems]}`` (empty lists when fine)."""
    return {check.__name__: check(hierarchy, workload) for check in CHECKS}
