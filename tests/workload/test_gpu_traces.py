import gzip

import numpy as np
import pytest

from hdeeprm.errors import WorkloadError
from hdeeprm.workload.openb import read_openb_pods
from hdeeprm.workload.philly import read_philly

VARIANTS = {"default": 8152, "cpu050": 7439, "gpushare40": 8152, "gpuspec10": 8152, "multigpu20": 8324}


@pytest.mark.parametrize("variant, rows", VARIANTS.items())
def test_real_pod_lists_every_row_kept(shared, variant, rows):
    pods = read_openb_pods(shared / f"traces/gpu/openb_pod_list_{variant}.csv")
    assert (len(pods), pods.nb_rows, pods.skipped) == (rows, rows, {})
    assert (pods.times is None) == (variant == "multigpu20")


def test_default_pod_list_semantics(shared):
    pods = read_openb_pods(shared / "traces/gpu/openb_pod_list_default.csv")
    gpu = pods.num_gpu > 0
    assert int(gpu.sum()) == 7064 and round(100 * pods.shares_gpu.sum() / gpu.sum(), 1) == 43.6
    assert int(pods.gpu_request.sum()) == 6086800
    assert int(np.isnan(pods.times[:, 2]).sum()) == pods.pod_phase.count("Pending") == 897


def test_gpu_spec_variant_lists_allowed_models(shared):
    pods = read_openb_pods(shared / "traces/gpu/openb_pod_list_gpuspec10.csv")
    assert pods.gpu_spec.count(("V100M16", "V100M32")) == 55 and pods.gpu_spec.count(()) == 7420


@pytest.mark.parametrize("row, message", [
    ("p1,1000,10,0,300", "gpu_milli must be 0 when num_gpu is 0, got 300"),
    ("p1,1000,10,2,500", "gpu_milli must be 1000 (whole GPUs) when num_gpu > 1, got 500"),
    ("p1,1000,10,1,1200", "gpu_milli must be 1..1000 when num_gpu is 1, got 1200"),
    ("p1,x,10,1,1000", "cpu_milli must be an integer in 0..10000000 (thousandths of a core of one pod), got 'x'"),
])
def test_bad_pod_rows(tmp_path, row, message):
    path = tmp_path / "pods.csv"
    path.write_text(f"name,cpu_milli,memory_mib,num_gpu,gpu_milli\n{row}\n")
    with pytest.raises(WorkloadError) as err:
        read_openb_pods(path)
    assert str(err.value) == f"{message} ({path}:2)"


@pytest.mark.slow
def test_real_philly_trace(shared):
    jobs = read_philly(shared / "traces/gpu/philly-derived.csv.gz")
    assert (len(jobs), jobs.nb_rows, jobs.skipped) == (82247, 82248, {"blank line": 1})
    assert round(100 * float((jobs.num_gpus == 1).mean())) == 93
    assert jobs.submit.min() == 0 and str(jobs.start) == "2017-09-04 10:30:41"


def test_philly_skips_are_counted_and_errors_located(tmp_path):
    path = tmp_path / "philly.csv.gz"
    rows = ["timestamp,duration,num_gpus,gpu_time,cluster", "2017-10-09 07:01:55,66.0,1,66.0,a",
            "2017-10-09 07:01:56,0,1,0,a", "2017-10-09 07:01:57,10,0,0,a", ""]
    with gzip.open(path, "wt") as f:
        f.write("\n".join(rows) + "\n")
    jobs = read_philly(path)
    assert (len(jobs), jobs.skipped) == (1, {"duration is 0": 1, "num_gpus is 0": 1, "blank line": 1})
    path.write_bytes(b"timestamp,duration,num_gpus,gpu_time,cluster\n2017-13-09,1,1,1,a\n")
    with pytest.raises(WorkloadError) as err:
        read_philly(path)
    assert str(err.value) == f"timestamp must be YYYY-MM-DD HH:MM:SS, got '2017-13-09' ({path}:2)"
