"""SWF -> Workload conversion: exact counts on real traces, rules, selection, randomness, report."""
from __future__ import annotations

import functools
import json
import re

import numpy as np
import pytest

from hdeeprm.errors import OptionsError
from hdeeprm.workload.convert import (ALTERED_ALLOCATED_SIZE, ALTERED_NO_MEMORY,
                                      ALTERED_NO_REQUESTED_TIME, FLAGGED_OVER_REQUEST, FLAGGED_OVER_WALLTIME,
                                      FLAGGED_TOO_LARGE, KEPT, REPORT_KEYS, SKIPPED_NO_RUN_TIME,
                                      SKIPPED_NO_SIZE, SKIPPED_NO_SUBMIT_TIME, TSAFRIR_PROBABILITIES,
                                      TSAFRIR_RATIOS, format_report, records_to_workload,
                                      swf_to_workload, write_report)
from hdeeprm.workload.model import DELAY, PARALLEL_HOMOGENEOUS
from hdeeprm.workload.swf import SWFRecord
from tests.conftest import GOLDEN
from tests.workload.trace_paths import HPC2N, KTH, LUBLIN, NASA, SDSC, needs_traces


# These rules are checked under Batsim's convention, walltimes enforced (the library's default,
# DEFAULT_ENFORCE_WALLTIME, is the original HDeepRM's: not enforced).
swf_to_workload = functools.partial(swf_to_workload, enforce_walltime=True)


def rec(number, submit, run, alloc=4, req_procs=4, req_time=3600, req_mem=-1, used_mem=-1):
    """An SWF record with the fields the converter reads; the others unknown."""
    return SWFRecord(number, submit, -1, run, alloc, -1, used_mem, req_procs, req_time, req_mem,
                     1, -1, -1, -1, -1, -1, -1, -1)


def convert(records, **kwargs):
    kwargs.setdefault("nb_cores", 8)
    kwargs.setdefault("reference_speed", 1e9)
    kwargs.setdefault("enforce_walltime", True)
    return records_to_workload([records], **kwargs)


# --- exact counts on the real traces ------------------------------------------------------------
# Expected numbers computed independently of the package, once, with an awk transcription of
# the rules (zcat -f TRACE | awk -v P=NB_CORES -f rules.awk), where rules.awk is:
#   !/^;/ && NF>0 { n++; if ($2 < 0) { nosub++; next }
#     size = ($8 > 0) ? $8 : $5; if (size <= 0) { nosize++; next }
#     if ($4 < 0) { norun++; next }
#     kept++; if (!($8 > 0)) alloc++
#     if ($9 > 0) req = $9; else { noreq++; req = ($4 > 1) ? $4 : 1 }
#     if (!($10 >= 0) && !($7 >= 0)) nomem++; if (size > P) large++; if ($4 > req) over++ }
EXPECTED = {
    # trace, nb_cores: kept, no size, unknown run time, allocated used, no requested time,
    #                  no memory, larger than the platform, run time > requested time
    "KTH-100": (KTH, 100, (28475, 1, 0, 0, 0, 28475, 0, 475)),
    "SDSC-128": (SDSC, 128, (54044, 0, 5671, 0, 35, 54044, 0, 4134)),
    "SDSC-64": (SDSC, 64, (54044, 0, 5671, 0, 35, 54044, 493, 4134)),
    "HPC2N-240": (HPC2N, 240, (3145, 0, 25, 0, 0, 2106, 0, 320)),
    "HPC2N-100": (HPC2N, 100, (3145, 0, 25, 0, 0, 2106, 17, 320)),
    "NASA-128": (NASA, 128, (18239, 0, 0, 18239, 18239, 18239, 0, 0)),
    "Lublin-128": (LUBLIN, 128, (10000, 0, 0, 10000, 10000, 10000, 273, 0)),
}


@pytest.mark.slow
@needs_traces
@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_report_counts_on_real_traces(case):
    path, nb_cores, counts = EXPECTED[case]
    workload = swf_to_workload(path, nb_cores=nb_cores, reference_speed=1e9)
    keys = (KEPT, SKIPPED_NO_SIZE, SKIPPED_NO_RUN_TIME, ALTERED_ALLOCATED_SIZE,
            ALTERED_NO_REQUESTED_TIME, ALTERED_NO_MEMORY, FLAGGED_TOO_LARGE, FLAGGED_OVER_WALLTIME)
    assert tuple(workload.report[k] for k in keys) == counts
    assert workload.report[SKIPPED_NO_SUBMIT_TIME] == 0
    assert list(workload.report) == [k for k in REPORT_KEYS if k != FLAGGED_OVER_REQUEST]
    assert len(workload) == counts[0]
    assert sum(job.res > nb_cores for job in workload.jobs) == counts[6]  # kept, not dropped


@needs_traces
def test_selection_first_job_and_nb_jobs_on_sdsc():
    # awk: usable rows counted in order; a row is in the span when
    # 1000 <= (usable rows before it) < 6000 -> 5000 kept (SWF jobs 1080..6526), 447 with run time -1
    workload = swf_to_workload(SDSC, nb_cores=128, reference_speed=1e9, first_job=1000, nb_jobs=5000)
    assert workload.report[KEPT] == 5000
    assert workload.report[SKIPPED_NO_RUN_TIME] == 447
    assert (workload.jobs[0].id, workload.jobs[-1].id) == ("1080", "6526")
    assert workload.jobs[0].subtime == 0.0


@needs_traces
def test_time_window_on_sdsc():
    # awk: rows with 1e7 <= $2 < 2e7: 9843 usable (SWF jobs 10790..34865), 915 with run time -1
    workload = swf_to_workload(SDSC, nb_cores=128, reference_speed=1e9, time_window=(1e7, 2e7))
    assert (workload.report[KEPT], workload.report[SKIPPED_NO_RUN_TIME]) == (9843, 915)
    assert (workload.jobs[0].id, workload.jobs[-1].id) == ("10790", "34865")


@needs_traces
def test_kth_delay_conversion_reproduces_the_batsim_golden_workload():
    golden_path = GOLDEN / "kth2000-delay" / "workload.json"
    if not golden_path.is_file():
        pytest.skip("no batsim-golden data")
    golden = json.loads(golden_path.read_text())
    workload = swf_to_workload(KTH, nb_cores=100, reference_speed=0.0, profile_type=DELAY,
                               nb_jobs=2000)
    mine = [{"id": j.id, "subtime": j.subtime, "res": j.res, "profile": j.profile.name,
             "walltime": j.walltime} for j in workload.jobs]
    assert mine == golden["jobs"]
    assert {p.name: {"type": p.type, "delay": p.delay} for p in workload.profiles.values()} \
        == golden["profiles"]
    # README of the golden case: 23 jobs have delay > walltime
    assert workload.report[FLAGGED_OVER_WALLTIME] == 23


# --- rules on hand-made records ----------------------------------------------------------------

def test_job_fields_from_hand_made_records():
    records = [
        rec(7, 1000, 100, req_mem=2048),                                 # memory from field 10
        rec(8, 1010, 100, alloc=2, req_procs=-1, used_mem=512),          # size from 5, memory from 7
        rec(9, 1020, 50, alloc=16, req_procs=16, req_time=-1),           # no estimate, too large
        rec(10, 1030, 0, req_time=-1),                                   # 0 s run: walltime 1 s
        rec(11, 1040, -1),                                               # skipped: run time
        rec(12, 1050, 10, alloc=-1, req_procs=0),                        # skipped: size
        rec(13, -1, 10),                                                 # skipped: submit time
    ]
    workload = convert(records, default_mem=64.0, profile_type=DELAY, nb_cores=8)
    jobs = workload.jobs
    assert [j.id for j in jobs] == ["7", "8", "9", "10"]
    assert [j.index for j in jobs] == [0, 1, 2, 3]
    assert [j.swf_id for j in jobs] == [7, 8, 9, 10]
    assert [j.subtime for j in jobs] == [0.0, 10.0, 20.0, 30.0]
    assert [j.res for j in jobs] == [4, 2, 16, 4]
    assert [j.walltime for j in jobs] == [3600.0, 3600.0, 50.0, 1.0]
    assert [j.requested_time for j in jobs] == [3600.0, 3600.0, 50.0, 1.0]
    assert [j.mem for j in jobs] == [2.0, 0.5, 64.0, 64.0]
    assert [j.profile.name for j in jobs] == ["d100", "d100", "d50", "d0"]
    assert jobs[0].profile is jobs[1].profile
    assert workload.report == {
        KEPT: 4, SKIPPED_NO_SUBMIT_TIME: 1, SKIPPED_NO_SIZE: 1, SKIPPED_NO_RUN_TIME: 1,
        ALTERED_ALLOCATED_SIZE: 1, ALTERED_NO_REQUESTED_TIME: 2, ALTERED_NO_MEMORY: 2,
        FLAGGED_TOO_LARGE: 1, FLAGGED_OVER_WALLTIME: 0}
    assert (workload.nb_res, workload.name) == (8, "w0")


def test_parallel_homogeneous_profiles_flop_and_names():
    records = [rec(1, 0, 3600), rec(2, 5, 1.5, req_time=1), rec(3, 9, 3600)]
    workload = convert(records, reference_speed=2.5e9)
    profiles = [j.profile for j in workload.jobs]
    assert [(p.name, p.type, p.cpu, p.delay) for p in profiles] == [
        ("ph9000000000000", PARALLEL_HOMOGENEOUS, 9e12, 0.0),
        ("ph3750000000", PARALLEL_HOMOGENEOUS, 3.75e9, 0.0),
        ("ph9000000000000", PARALLEL_HOMOGENEOUS, 9e12, 0.0)]
    assert len(workload.profiles) == 2
    assert workload.reference_speed == 2.5e9
    assert workload.report[FLAGGED_OVER_WALLTIME] == 1  # 1.5 s > 1 s requested: killed


def test_unsorted_submit_times_are_sorted_stably_relative_to_the_earliest():
    workload = convert([rec(1, 500, 1), rec(2, 100, 1), rec(3, 500, 1), rec(4, 300, 1)])
    assert [(j.id, j.subtime, j.index) for j in workload.jobs] == [
        ("2", 0.0, 0), ("4", 200.0, 1), ("1", 400.0, 2), ("3", 400.0, 3)]


def test_first_job_does_not_report_records_before_the_span():
    records = [rec(1, 0, -1), rec(2, 1, 10), rec(3, 2, -1), rec(4, 3, 10), rec(5, 4, 10), rec(6, 5, -1)]
    workload = convert(records, first_job=1, nb_jobs=1)
    assert [j.id for j in workload.jobs] == ["4"]
    assert (workload.report[KEPT], workload.report[SKIPPED_NO_RUN_TIME]) == (1, 1)  # record 3 only
    assert convert(records, nb_jobs=0).report[KEPT] == 0


# --- randomness ------------------------------------------------------------------------------------

def _signature(workload):
    return [(j.id, j.subtime, j.res, j.walltime, j.profile.name, j.mem, j.mem_bw) for j in workload.jobs]


@needs_traces
def test_same_seed_same_workload_and_bandwidth_independent_of_actual_work():
    a = swf_to_workload(HPC2N, nb_cores=240, reference_speed=1e9, actual_work="tsafrir", seed=3)
    b = swf_to_workload(HPC2N, nb_cores=240, reference_speed=1e9, actual_work="tsafrir", seed=3)
    c = swf_to_workload(HPC2N, nb_cores=240, reference_speed=1e9, actual_work="tsafrir", seed=4)
    d = swf_to_workload(HPC2N, nb_cores=240, reference_speed=1e9, actual_work="runtime", seed=3)
    assert _signature(a) == _signature(b)
    assert _signature(a) != _signature(c)
    assert [j.mem_bw for j in a.jobs] == [j.mem_bw for j in d.jobs]


@pytest.mark.slow
@needs_traces
def test_bandwidth_drawn_uniformly_from_the_choices():
    workload = swf_to_workload(SDSC, nb_cores=128, reference_speed=1e9)
    values, counts = np.unique([j.mem_bw for j in workload.jobs], return_counts=True)
    assert values.tolist() == [4.0, 8.0, 12.0, 16.0, 20.0, 24.0]
    assert np.all(np.abs(counts / counts.sum() - 1 / 6) < 0.01)  # 54044 draws: sd 0.0016


def test_tsafrir_table_mean_and_tail():
    assert TSAFRIR_RATIOS[0] == 0.05 and TSAFRIR_RATIOS[-1] == 1.25 and len(TSAFRIR_RATIOS) == 25
    assert TSAFRIR_PROBABILITIES.sum() == pytest.approx(1.0)
    assert float(TSAFRIR_RATIOS @ TSAFRIR_PROBABILITIES) == pytest.approx(0.5265)
    assert TSAFRIR_PROBABILITIES[TSAFRIR_RATIOS > 1].sum() == pytest.approx(0.20)


@pytest.mark.slow
@needs_traces
def test_tsafrir_ratios_drawn_on_sdsc():
    workload = swf_to_workload(SDSC, nb_cores=128, reference_speed=1.0, actual_work="tsafrir")
    ratios = np.array([j.profile.cpu / j.walltime for j in workload.jobs])
    assert np.allclose(ratios * 20, np.round(ratios * 20))  # multiples of 0.05
    assert ratios.min() == pytest.approx(0.05) and ratios.max() == pytest.approx(1.25)
    assert ratios.mean() == pytest.approx(0.5265, abs=0.01)
    assert np.mean(ratios > 1.000001) == pytest.approx(0.20, abs=0.01)
    assert workload.report[FLAGGED_OVER_WALLTIME] == int(np.sum(ratios > 1.000001))


# --- options and report ----------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    ({"nb_cores": 0}, "nb_cores must be a positive integer, got 0"),
    ({"reference_speed": 0}, "reference_speed must be a finite number > 0 FLOP/s for parallel_homogeneous "
                             "profiles, got 0"),
    ({"reference_speed": float("inf")}, "reference_speed must be a finite number > 0 FLOP/s for "
                                        "parallel_homogeneous profiles, got inf"),
    ({"seed": -5}, "seed must be an integer >= 0, got -5"),
    ({"seed": 1.5}, "seed must be an integer >= 0, got 1.5"),
    ({"default_mem": float("inf")}, "default_mem must be a finite number >= 0 MB, got inf"),
    ({"time_window": (float("nan"), 5)}, "time_window must be (t0, t1) with t0 < t1, got (nan, 5)"),
    ({"actual_work": "magic"}, "actual_work must be one of runtime, tsafrir, got 'magic'"),
    ({"profile_type": "smpi"}, "profile_type must be one of parallel_homogeneous, delay, got 'smpi'"),
    ({"time_window": (5, 5)}, "time_window must be (t0, t1) with t0 < t1, got (5, 5)"),
    ({"first_job": -1}, "first_job must be >= 0, got -1"),
    ({"mem_bw_choices": ()}, "mem_bw_choices must be a non-empty list of finite values >= 0 GB/s, got []"),
    ({"mem_bw_choices": (4.0, float("nan"))}, "mem_bw_choices must be a non-empty list of finite values >= 0 "
                                              "GB/s, got [4.0, nan]"),
])
def test_bad_options(kwargs, message):
    with pytest.raises(OptionsError, match=f"^{re.escape(message)}$"):
        convert([rec(1, 0, 10)], **kwargs)


def test_report_console_and_files(tmp_path):
    report = {KEPT: 12, SKIPPED_NO_RUN_TIME: 3, SKIPPED_NO_SIZE: 0, FLAGGED_TOO_LARGE: 100}
    assert format_report(report) == (" 12  kept\n"
                                     "  3  skipped: unknown run time\n"
                                     "100  flagged: larger than the platform (rejected at submission)")
    write_report(report, tmp_path / "r.json")
    assert json.loads((tmp_path / "r.json").read_text()) == report
    write_report(report, tmp_path / "r.csv")
    assert (tmp_path / "r.csv").read_text() == (
        "reason,count\nkept,12\nskipped: unknown run time,3\nskipped: no processor count,0\n"
        "flagged: larger than the platform (rejected at submission),100\n")
