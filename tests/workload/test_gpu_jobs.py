"""Timed GPU jobs from the real Philly table and openb pod list, windows and bad input."""
from __future__ import annotations

import numpy as np
import pytest

from hdeeprm.errors import WorkloadError
from hdeeprm.workload.gpu_jobs import read_gpu_workload


@pytest.mark.slow
def test_philly_as_timed_gpu_jobs(shared):
    jobs = read_gpu_workload(shared / "traces/gpu/philly-derived.csv.gz")
    assert len(jobs) == 82247 and jobs.report["skipped"] == {"blank line": 1}
    assert jobs.submit[0] == 0.0 and np.all(np.diff(jobs.submit) >= 0)
    assert np.all(jobs.gpu_milli == 1000) and not jobs.cpu_milli.any()
    assert jobs.clock == 0 * 86400 + 10 * 3600 + 30 * 60 + 41   # 2017-09-04 10:30:41 was a Monday
    window = jobs.window(1000, 50)
    assert len(window) == 50 and window.submit[0] == 0.0 and window.report["window"] == [1000, 1050]
    assert window.ids == jobs.ids[1000:1050]
    with pytest.raises(WorkloadError, match="first_job must be below the workload's 82247 jobs"):
        jobs.window(82247)


def test_openb_pods_as_timed_gpu_jobs(shared):
    jobs = read_gpu_workload(shared / "traces/gpu/openb_pod_list_default.csv")
    assert jobs.report == {"rows": 8152, "jobs": 7255, "skipped": {"no scheduled_time": 897}}
    assert np.all(jobs.duration > 0) and ((jobs.num_gpu == 1) & (jobs.gpu_milli < 1000)).any()


def test_unknown_gpu_workload_is_a_clear_error(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("a,b,c\n1,2,3\n")
    with pytest.raises(WorkloadError, match="must be the Philly per-job table .* or an openb pod list"):
        read_gpu_workload(path)
    short = tmp_path / "multigpu.csv"
    short.write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\np,1000,100,1,1000\n")
    with pytest.raises(WorkloadError, match="no time columns"):
        read_gpu_workload(short)
