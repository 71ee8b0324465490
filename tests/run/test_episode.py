"""End-to-end schedules on the embedded engine, worked out by hand (engine + manager + contention)."""
import csv

import pytest

from hdeeprm.run.episode import Episode
from hdeeprm.decision.actions import action_index
from hdeeprm.workload.model import JobState, Workload

from tests.decision.helpers import job, small_hierarchy


def run(jobs, pair):
    ep = Episode(small_hierarchy(), Workload(jobs), actions=[action_index(*pair)])
    while ep.advance():
        ep.apply(0)
    return ep


def test_bandwidth_contention_runs_two_jobs_at_three_quarters_speed():
    # Two 1-core jobs of 24 GB/s land on processor 1 (4.4 GFLOP/s, 32 GB/s): 48 > 32 GB/s,
    # both cores in P1 = 0.75 x 4.4e9 = 3.3e9 FLOP/s, so 3.3e9 FLOP take exactly 1 s.
    ep = run([job(0, 1, mem_bw=24.0, cpu=3.3e9), job(1, 1, mem_bw=24.0, cpu=3.3e9)], ("first", "high_gflops"))
    e = ep.engine
    assert e.allocation[0] == (2,) and e.allocation[1] == (3,)
    assert e.finish_time.tolist() == pytest.approx([1.0, 1.0], abs=1e-9)
    # Power on [0, 1]: cores 2-3 in P1 (25 W each), cores 0-1 in P3 (0.05 x 20 W),
    # cores 4-7 in P3 (0.05 x 5 W) = 50 + 2 + 1 = 53 W.
    assert e.consumed_energy() == pytest.approx(53.0)
    assert e.result().consumed_energy.tolist() == pytest.approx([25.0, 25.0])


def test_a_parallel_job_goes_at_the_pace_of_its_slowest_core():
    # Job 0 takes core 2 (4.4 GFLOP/s) for 10 s; job 1 (2 cores) then gets core 3 (4.4)
    # and core 0 (4.0): it runs at 4.0e9 FLOP/s, so 8e9 FLOP take 8e9 / 4.0e9 = 2 s.
    ep = run([job(0, 1, cpu=44e9), job(1, 2, cpu=8e9)], ("first", "high_gflops"))
    e = ep.engine
    assert e.allocation[1] == (3, 0)
    assert e.finish_time[1] == pytest.approx(2.0, abs=1e-9)
    assert e.finish_time[0] == pytest.approx(10.0, abs=1e-9)


def test_energy_of_p0_p2_p3():
    # One job on core 0 (P0, 20 W) for 4e9 / 4.0e9 = 1 s; core 1 idle in a busy processor (P2,
    # 0.25 x 20 W); cores 2-3 P3 (2 x 0.05 x 25 W); cores 4-7 P3 (4 x 0.05 x 5 W): 28.5 W.
    ep = run([job(0, 1, cpu=4e9)], ("first", "high_cores"))
    assert ep.engine.allocation[0] == (0,)
    assert ep.engine.consumed_energy() == pytest.approx(28.5)
    assert ep.engine.pstate.tolist() == [3] * 8     # all back to P3 once the job is gone


def test_job_larger_than_the_platform_is_rejected_and_recorded(tmp_path):
    ep = run([job(0, 9), job(1, 1, cpu=4e9)], ("first", "high_gflops"))
    assert ep.engine.state[0] is JobState.REJECTED
    assert ep.engine.state[1] is JobState.COMPLETED_SUCCESSFULLY
    ep.write_outputs(tmp_path)
    rows = {r["job_id"]: r for r in csv.DictReader(open(tmp_path / "out_jobs.csv"))}
    assert rows["0"]["final_state"] == "REJECTED"
    assert "requests 9 cores, the platform has 8" in rows["0"]["metadata"]
    metrics = ep.metrics()
    assert (metrics["nb_rejected"], metrics["nb_completed"]) == (1, 1)
