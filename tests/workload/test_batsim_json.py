"""Batsim JSON workloads: golden and original-HDeepRM inputs, round trips, exact error messages."""
from __future__ import annotations

import dataclasses
import json
import re
import sys
from pathlib import Path

import pytest

from hdeeprm.errors import WorkloadError
from hdeeprm.workload.batsim_json import read_batsim_workload, write_batsim_workload
from hdeeprm.workload.model import DELAY, PARALLEL_HOMOGENEOUS, Job, Profile, Workload

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from conftest import GOLDEN, REFERENCE  # noqa: E402

needs_golden = pytest.mark.skipif(not GOLDEN.is_dir(), reason=f"golden data not found at {GOLDEN}")


def fields(workload: Workload) -> list[tuple]:
    return [dataclasses.astuple(job) for job in workload.jobs]


@needs_golden
def test_kth2000_workload_counts():
    wl = read_batsim_workload(GOLDEN / "kth2000-delay" / "workload.json")
    assert (len(wl), wl.nb_res, wl.name, len(wl.profiles)) == (2000, 100, "w0", 868)
    assert {j.profile.type for j in wl.jobs} == {DELAY}
    assert min(j.res for j in wl.jobs) == 1 and max(j.res for j in wl.jobs) == 84
    assert (wl.jobs[0].subtime, wl.jobs[-1].subtime) == (0.0, 1986658.0)
    assert all(j.walltime > 0 and j.requested_time == j.walltime for j in wl.jobs)
    assert [j.index for j in wl.jobs] == list(range(2000))


@needs_golden
def test_energy_micro_jobs_sorted_stably_by_subtime():
    wl = read_batsim_workload(GOLDEN / "energy-micro" / "workload.json")
    assert [j.id for j in wl.jobs] == ["ph10", "d10", "ph20_wall5", "d20_wall5", "d5_wall5", "ph5_wall5",
                                       "d4_late", "ph_big"]
    assert wl.jobs[0].walltime == -1.0 and wl.jobs[2].walltime == 5.0
    assert wl.jobs[0].profile == Profile("ph10", PARALLEL_HOMOGENEOUS, cpu=10e9)
    assert wl.jobs[7].profile is wl.jobs[0].profile


@needs_golden
def test_unsupported_profile_types_name_the_job():
    path = GOLDEN / "small-mixed" / "test_various_profile_types.json"
    message = (f"job 1 (id 'simple'): profile 'simple' has type 'parallel', which is unsupported: supported "
               f"types are 'delay' and 'parallel_homogeneous' (com = 0) ({path})")
    with pytest.raises(WorkloadError, match=f"^{re.escape(message)}$"):
        read_batsim_workload(path)
    assert len(read_batsim_workload(GOLDEN / "small-mixed" / "test_delays.json")) == 10


@pytest.mark.skipif(not REFERENCE.is_dir(), reason="original HDeepRM inputs not found")
def test_original_hdeeprm_workload_is_accepted():
    wl = read_batsim_workload(REFERENCE / "workload_examples" / "learning.json")
    assert [(j.id, j.res, j.walltime, j.requested_time, j.mem, j.mem_bw) for j in wl.jobs] == \
           [("0", 1, -1.0, 5.0, 8000.0, 24.0), ("1", 1, -1.0, 5.0, 8000.0, 24.0)]
    assert wl.jobs[0].profile == Profile("Test0", PARALLEL_HOMOGENEOUS, cpu=21e9)


def test_round_trip_is_exact(tmp_path):
    d = Profile("d2.5", DELAY, delay=2.5)
    p = Profile("p", PARALLEL_HOMOGENEOUS, cpu=3e9)
    jobs = [Job(0, "a", 0.0, 2, -1.0, d),
            Job(1, "7", 1.25, 4, 60.0, p, mem=512.0, mem_bw=12.0, swf_id=7, requested_time=60.0),
            Job(2, "b", 1.25, 1, -1.0, p, requested_time=30.0),
            Job(3, "c", 9.0, 1, 100.0, d, requested_time=50.0)]
    original = Workload(jobs, nb_res=8, reference_speed=2.5e9)
    first = tmp_path / "w1.json"
    write_batsim_workload(original, first)
    again = read_batsim_workload(first)
    assert fields(again) == fields(original)
    assert (again.nb_res, again.reference_speed) == (8, 2.5e9)
    second = tmp_path / "w2.json"
    write_batsim_workload(again, second, nb_res=16)
    assert json.loads(second.read_text())["nb_res"] == 16
    assert json.loads(first.read_text())["jobs"][1] == {
        "id": "7", "subtime": 1.25, "res": 4, "profile": "p", "walltime": 60, "mem": 512,
        "mem_bw": 12, "swf_id": 7}


@needs_golden
def test_golden_workload_round_trip(tmp_path):
    wl = read_batsim_workload(GOLDEN / "hetero-ptask" / "workload.json")
    write_batsim_workload(wl, tmp_path / "w.json")
    assert fields(read_batsim_workload(tmp_path / "w.json")) == fields(wl)


@pytest.mark.parametrize("text, message", [
    ('{"jobs": [], "profiles": {}', "invalid JSON: Expecting ',' delimiter (column 28) ({p}:1)"),
    ('{"jobs": [{"id": "a", "subtime": 0, "res": 0, "profile": "d"}], "profiles": {"d": '
     '{"type": "delay", "delay": 1}}}', "job 0 (id 'a'): field 'res' must be a positive integer, got 0 ({p})"),
    ('{"jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "x"}], "profiles": {}}',
     "job 0 (id 'a'): profile 'x' is not defined in 'profiles' ({p})"),
    ('{"jobs": [{"id": 1, "subtime": 0, "res": 1, "profile": "d"}, {"id": "1", "subtime": 0, "res": 1, '
     '"profile": "d"}], "profiles": {"d": {"type": "delay", "delay": 1}}}', "job 1 (id '1'): id is not unique ({p})"),
    ('{"jobs": [{"id": "a", "subtime": "x", "res": 1, "profile": "d"}], "profiles": {"d": '
     '{"type": "delay", "delay": 1}}}', "job 0 (id 'a'): field 'subtime' must be a finite number, got 'x' ({p})"),
    ('{"jobs": [{"id": "a", "subtime": 0, "res": 1, "profile": "h"}], "profiles": {"h": '
     '{"type": "parallel_homogeneous", "cpu": 1e9, "com": 1e6}}}',
     "job 0 (id 'a'): profile 'h' has type 'parallel_homogeneous' with com = 1e+06 > 0, which is "
     "unsupported: only computation-only profiles (com = 0) are simulated ({p})"),
    ('{"jobs": [{"id": "a", "subtime": 0, "res": 1, "walltime": 0, "profile": "d"}], "profiles": '
     '{"d": {"type": "delay", "delay": 1}}}', "job 0 (id 'a'): field 'walltime' must be > 0 or -1 (none), got 0 ({p})"),
    ('{"profiles": {}}', "the workload must have a 'jobs' field ({p})"),
])
def test_malformed_workloads(tmp_path, text, message):
    path = tmp_path / "w.json"
    path.write_text(text)
    with pytest.raises(WorkloadError, match=f"^{re.escape(message.format(p=path))}$"):
        read_batsim_workload(path)
