"""The synthetic GPU workload generator and the GPU workload statistics."""
from __future__ import annotations

import numpy as np
import pytest

from hdeeprm.cli.workload import main
from hdeeprm.workload.generators.gpu import GpuWorkloadModel, generate_gpu_jobs, write_gpu_pod_list
from hdeeprm.workload.gpu_jobs import read_gpu_workload
from hdeeprm.workload.gpu_stats import gpu_workload_stats


def test_generation_is_seeded_and_readable(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    assert main(["generate", "--model", "gpu", "-o", str(a), "--nb-jobs", "300", "--seed", "5"]) == 0
    assert main(["generate", "--model", "gpu", "-o", str(b), "--nb-jobs", "300", "--seed", "5"]) == 0
    assert a.read_bytes() == b.read_bytes()
    jobs = read_gpu_workload(a)
    assert len(jobs) == 300 and jobs.report["skipped"] == {}
    assert np.all(np.diff(jobs.submit) >= 0) and np.all(jobs.duration >= 1)
    write_gpu_pod_list(b, generate_gpu_jobs(300, seed=6))
    assert a.read_bytes() != b.read_bytes()


@pytest.mark.slow
def test_sizes_match_philly_and_durations_grow_with_size():
    rows = generate_gpu_jobs(20000, GpuWorkloadModel(burst_probability=0.0), seed=1)
    gpus = np.array([r[3] for r in rows])
    duration = np.array([r[7] for r in rows])
    assert (gpus == 1).mean() == pytest.approx(0.9317, abs=0.01)
    assert np.median(duration[gpus == 8]) > 4 * np.median(duration[gpus == 1])


@pytest.mark.slow
def test_arrivals_follow_the_hour_of_day_and_weekday_factors():
    model = GpuWorkloadModel(burst_probability=0.0, rate=200.0)
    when = np.array([r[6] for r in generate_gpu_jobs(40000, model, seed=2)])
    per_hour = np.bincount((when // 3600 % 24).astype(int), minlength=24)
    assert per_hour[7] > 2.5 * per_hour[14]          # Philly: 2.09 against 0.64 of the mean
    per_day = np.bincount((when // 86400 % 7).astype(int), minlength=7)
    assert per_day[4] > 2 * per_day[6]               # Friday 1.44 against Sunday 0.59


def test_memory_and_type_constraints_become_allowed_models(tmp_path):
    model = GpuWorkloadModel(memory_share=1.0, memory_gb=40.0, type_share=0.5, types=("A100 SXM4 80GB", "T4"))
    rows = generate_gpu_jobs(200, model, seed=3)
    specs = {r[5] for r in rows}
    assert "A100 SXM4 80GB" in specs                      # pinned and large enough
    assert all("T4" not in s.split("|") for s in specs)   # 16 GB: never allowed for a 40 GB need
    assert all(s for s in specs)
    assert any("H100 SXM5 80GB" in s.split("|") for s in specs)


@pytest.mark.slow
def test_gpu_stats_beside_philly(shared, tmp_path, capsys):
    out = tmp_path / "gen.csv"
    assert main(["generate", "--model", "gpu", "-o", str(out), "--nb-jobs", "5000", "--seed", "1"]) == 0
    philly = read_gpu_workload(shared / "traces/gpu/philly-derived.csv.gz")
    stats = gpu_workload_stats(philly)
    assert stats["jobs"] == 82247 and stats["share_1_gpu"] == pytest.approx(0.9317, abs=1e-4)
    assert main(["gpu-stats", str(shared / "traces/gpu/philly-derived.csv.gz"), str(out)]) == 0
    table = capsys.readouterr().out
    assert "philly-derived.csv.gz" in table and "gen.csv" in table and "share_1_gpu" in table


def test_lublin_generation_still_needs_the_machine_size(tmp_path, capsys):
    assert main(["generate", "-o", str(tmp_path / "x.swf"), "--nb-jobs", "5"]) == 2
    assert "--nb-cores" in capsys.readouterr().err
