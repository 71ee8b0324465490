"""Batsim-format output files of a small run worked out by hand, and their parsing back."""
from __future__ import annotations

import csv

import pytest

from hdeeprm.simulation.engine import Engine
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.outputs.batsim_csv import SCHEDULE_COLUMNS, schedule_totals, write_outputs
from hdeeprm.workload.model import DELAY, PARALLEL_HOMOGENEOUS, Job, Profile, Workload


@pytest.fixture
def result():
    """Hosts: 2 GFLOP/s, 10 W idle / 30 W computing.

    x (4e9 FLOP x 2 hosts) 0 -> 2 s on 0-1 (120 J); big (3 hosts) rejected at 0;
    z (delay 10, walltime 2) 2 -> 4 on host 0, killed (20 J); y (delay 3) 3 -> 6 on host 1 (30 J).
    Platform: 60 W on [0, 2], 20 W on [2, 6] -> 200 J.
    """
    hosts = [HostSpec(n, (2e9,), (10.0,), (30.0,)) for n in ("a", "b")]
    jobs = [Job(0, "x", 0.0, 2, -1.0, Profile("px", PARALLEL_HOMOGENEOUS, cpu=4e9)),
            Job(1, "big", 0.0, 3, -1.0, Profile("d1", DELAY, delay=1.0)),
            Job(2, "z", 1.0, 1, 2.0, Profile("d10", DELAY, delay=10.0)),
            Job(3, "y", 3.0, 1, -1.0, Profile("d3", DELAY, delay=3.0))]
    engine = Engine(hosts, Workload(jobs))
    plan = {"x": [0, 1], "z": [0], "y": [1]}
    while (batch := engine.next_batch()) is not None:
        for job in batch.submitted:
            if job.id == "big":
                engine.reject_job(job, 'needs 3 hosts, has 2, "sorry"')
            elif job.id != "z":
                engine.execute_job(job, plan[job.id])
        if batch.time == 2.0:
            engine.execute_job(jobs[2], plan["z"])
    return engine.result()


def test_jobs_csv_rows_in_completion_order(result, tmp_path):
    write_outputs(tmp_path, result)
    assert (tmp_path / "out_jobs.csv").read_text().splitlines()[1:] == [
        'big,w0,d1,0.000000,3,-1.000000,0,REJECTED,-1.000000,0.000000,0.000000,0.000000,0.000000,'
        '-1.000000,,-1.000000,"needs 3 hosts, has 2, ""sorry"""',
        'x,w0,px,0.000000,2,-1.000000,1,COMPLETED_SUCCESSFULLY,0.000000,2.000000,2.000000,0.000000,'
        '2.000000,1.000000,0-1,120.000000,""',
        'z,w0,d10,1.000000,1,2.000000,0,COMPLETED_WALLTIME_REACHED,2.000000,2.000000,4.000000,'
        '1.000000,3.000000,1.500000,0,20.000000,""',
        'y,w0,d3,3.000000,1,-1.000000,1,COMPLETED_SUCCESSFULLY,3.000000,3.000000,6.000000,0.000000,'
        '3.000000,1.000000,1,30.000000,""',
    ]
    with open(tmp_path / "out_jobs.csv", newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert rows[0]["metadata"] == 'needs 3 hosts, has 2, "sorry"'
    assert [r["allocated_resources"] for r in rows] == ["", "0-1", "0", "1"]


def test_schedule_totals_by_hand(result, tmp_path):
    totals = schedule_totals(result)
    assert list(totals) == sorted(SCHEDULE_COLUMNS) == list(SCHEDULE_COLUMNS)
    expected = dict(consumed_joules=200.0, makespan=6.0, max_slowdown=1.5, max_turnaround_time=3.0,
                    max_waiting_time=1.0, mean_slowdown=3.5 / 3, mean_turnaround_time=8 / 3,
                    mean_waiting_time=1 / 3, nb_computing_machines=2, nb_grouped_switches=0,
                    nb_jobs=4, nb_jobs_finished=3, nb_jobs_killed=1, nb_jobs_rejected=1,
                    nb_jobs_success=2, nb_machine_switches=0, success_rate=0.5, time_computing=9.0,
                    time_idle=1.0, time_sleeping=0.0)
    assert {k: totals[k] for k in expected} == pytest.approx(expected, rel=1e-12)
    write_outputs(tmp_path, result)
    header, row = (tmp_path / "out_schedule.csv").read_text().splitlines()
    assert header == ",".join(SCHEDULE_COLUMNS)
    assert row.startswith("4.2.1,200.000000,6.000000,1.500000,3.000000,1.000000,1.166667,"
                          "2.666667,0.333333,2,0,4,3,1,1,2,0,")
    assert row.endswith(",0.500000,9.000000,1.000000,0.000000,0.000000,0.000000,0.000000")


def test_machine_pstate_and_energy_files(result, tmp_path):
    paths = write_outputs(tmp_path, result, prefix="run")
    assert [p.name for p in paths] == ["run_jobs.csv", "run_schedule.csv", "run_machine_states.csv",
                                       "run_pstate_changes.csv", "run_consumed_energy.csv"]
    assert (tmp_path / "run_machine_states.csv").read_text() == (
        "time,nb_sleeping,nb_switching_on,nb_switching_off,nb_idle,nb_computing\n"
        "0,0,0,0,0,2\n2,0,0,0,2,0\n2,0,0,0,1,1\n3,0,0,0,0,2\n4,0,0,0,1,1\n6,0,0,0,2,0\n")
    assert (tmp_path / "run_pstate_changes.csv").read_text() == "time,machine_id,new_pstate\n0,0-1,0\n"
    assert (tmp_path / "run_consumed_energy.csv").read_text() == (
        "time,energy,event_type,wattmin,epower\n"
        "0.000000,0.000000,s,20.000000,NA\n"
        "2.000000,120.000000,e,20.000000,60.000000\n"
        "2.000000,120.000000,s,20.000000,NA\n"
        "3.000000,140.000000,s,20.000000,20.000000\n"
        "4.000000,160.000000,e,20.000000,20.000000\n"
        "6.000000,200.000000,e,20.000000,20.000000\n")


def test_without_energy_like_batsim_without_E(tmp_path):
    hosts = [HostSpec("a", (1e9,), (95.0,), (190.0,))]
    job = Job(0, "1", 0.0, 1, 100.0, Profile("d", DELAY, delay=10.0))
    engine = Engine(hosts, Workload([job]), energy=False)
    engine.next_batch()
    engine.execute_job(job, [0])
    engine.next_batch()
    paths = write_outputs(tmp_path, engine.result())
    assert [p.name for p in paths] == ["out_jobs.csv", "out_schedule.csv", "out_machine_states.csv"]
    row = (tmp_path / "out_jobs.csv").read_text().splitlines()[1]
    assert row == ('1,w0,d,0.000000,1,100.000000,1,COMPLETED_SUCCESSFULLY,0.000000,10.000000,'
                   '10.000000,0.000000,10.000000,1.000000,0,-1.000000,""')
    assert schedule_totals(engine.result())["consumed_joules"] == 0.0


def test_interval_set_text_is_procsets():
    from procset import ProcSet

    from hdeeprm.outputs.batsim_csv import interval_set

    rng = __import__("random").Random(4)
    for _ in range(200):
        hosts = rng.sample(range(40), rng.randint(1, 40))
        assert interval_set(hosts) == str(ProcSet(*hosts))
    assert interval_set([7, 0, 1, 2, 3]) == "0-3 7"
