"""hdeeprm-check: every check passes on real inputs and fails, with its exact message, on a real defect."""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from hdeeprm.cli.check import main
from hdeeprm.config.build import build_platform, build_workload
from hdeeprm.config.options import load_options
from hdeeprm.platform import load_platform
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.run.check import (CHECKS, MAX_PROBLEMS, check_jobs_fit, check_pstates, check_report,
                               check_submit_times_sorted, run_checks)
from hdeeprm.workload.convert import (ALTERED_NO_MEMORY, FLAGGED_TOO_LARGE, KEPT, SKIPPED_NO_RUN_TIME,
                                      SKIPPED_NO_SIZE, swf_to_workload)
from tests.conftest import ROOT, SHARED
from tests.workload.trace_paths import HPC2N, KTH, SDSC, SHIPPED, needs_traces

QUICKSTART = ROOT / "examples" / "quickstart.json"
GAIA_MINI = ROOT / "platforms" / "gaia_mini.json"
ALL_PASS = {check.__name__: [] for check in CHECKS}


def _convert(trace, platform, **kwargs):
    hierarchy = load_platform(platform)
    workload = swf_to_workload(trace, nb_cores=hierarchy.nb_cores, reference_speed=hierarchy.reference_speed,
                               **kwargs)
    return hierarchy, workload


def _shipped():
    return _convert(SHIPPED, GAIA_MINI)


# --- every check passes on real inputs ------------------------------------------------------------------

def test_every_check_passes_on_the_shipped_platform_and_trace():
    assert run_checks(*_shipped()) == ALL_PASS
    options = load_options(QUICKSTART)   # the same inputs, through hdeeprm-launch's options
    hierarchy = build_platform(options)
    assert run_checks(hierarchy, build_workload(options, hierarchy)) == ALL_PASS


@needs_traces
@pytest.mark.parametrize("trace, platform, kwargs", [
    (KTH, "kth_sp2", {}),                                  # 1 record without a processor count
    (SDSC, "das2", {"first_job": 1000, "nb_jobs": 5000}),  # a span inside the trace: 447 run times unknown
    (HPC2N, "gaia", {}),                                   # memory data, 25 run times unknown
], ids=["KTH", "SDSC-span", "HPC2N"])
def test_every_check_passes_on_real_traces(trace, platform, kwargs):
    assert run_checks(*_convert(trace, ROOT / "platforms" / f"{platform}.json", **kwargs)) == ALL_PASS


def test_run_checks_runs_the_given_checks_in_order():
    assert list(run_checks(*_shipped(), checks=(check_report, check_pstates))) == ["check_report", "check_pstates"]


# --- check_submit_times_sorted and check_jobs_fit -------------------------------------------------------

def test_check_submit_times_sorted_fails_on_swapped_jobs():
    hierarchy, workload = _shipped()
    jobs = list(workload.jobs)
    jobs[1], jobs[2] = jobs[2], jobs[1]
    assert check_submit_times_sorted(hierarchy, dataclasses.replace(workload, jobs=jobs)) == [
        f"job {jobs[2].id} is submitted before job {jobs[1].id}: sort the workload by submission time"]
    reversed_jobs = dataclasses.replace(workload, jobs=workload.jobs[::-1])
    problems = check_submit_times_sorted(hierarchy, reversed_jobs)
    assert len(problems) == MAX_PROBLEMS + 1
    assert problems[-1] == f"... and {499 - MAX_PROBLEMS} more jobs out of order"   # 500 distinct submit times


def test_check_jobs_fit_fails_on_too_many_cores_and_too_much_memory():
    hierarchy, workload = _shipped()
    big = dataclasses.replace(workload.jobs[0], res=105)
    hungry = dataclasses.replace(workload.jobs[1], res=104, mem=1e9)
    assert check_jobs_fit(hierarchy, dataclasses.replace(workload, jobs=[big, hungry])) == [
        f"job {big.id} requests 105 cores, the platform has 104: it will be rejected; use a larger platform "
        "or drop it",
        f"job {hungry.id} requests 104 cores with 1e+09 MB each, the platform's node memory allows at most 0 "
        "such cores: it will be rejected; use a larger platform or drop it"]


def test_check_jobs_fit_lists_ten_then_counts_the_rest():
    hierarchy, workload = _convert(SHIPPED, ROOT / "platforms" / "learning.json")   # 4 cores
    too_large = sum(job.res > 4 for job in workload.jobs)
    problems = check_jobs_fit(hierarchy, workload)
    assert too_large > MAX_PROBLEMS and len(problems) == MAX_PROBLEMS + 1
    assert problems[-1] == f"... and {too_large - MAX_PROBLEMS} more jobs that can never fit"


# --- check_pstates -------------------------------------------------------------------------------------

GOOD = HostSpec("h0", (1e9, 7.5e8, 1e-3, 1e-3), (10.0, 10.0, 2.5, 0.5), (10.0, 10.0, 2.5, 0.5), 3)


@pytest.mark.slow
def test_check_pstates_passes_on_every_shipped_platform():
    for path in sorted((ROOT / "platforms").glob("*.json")):
        assert check_pstates(load_platform(path), None) == [], path.name
    assert check_pstates(ResourceHierarchy.from_hosts([GOOD]), None) == []


@pytest.mark.parametrize("changes, problem", [
    ({"idle_watts": (10.0, 10.0, 2.5)},
     "has 4 speeds but 3 idle and 4 computing wattages: give every pstate a speed and both wattages"),
    ({"speeds": (1e9, 7.5e8, 1e-3, 1e-3, 1e-3)},
     "has 5 speeds but 4 idle and 4 computing wattages: give every pstate a speed and both wattages"),
    ({"computing_watts": (10.0, float("nan"), 2.5, 0.5)},
     "has a non-finite speed or wattage: fix its processor type's clock_rate, dpflops_per_cycle or power "
     "(or the SimGrid host's speed and wattage_per_state)"),
    ({"speeds": (1e9, 7.5e8, 0.0, 0.0)},
     "has a speed <= 0 FLOP/s ([1000000000.0, 750000000.0, 0.0, 0.0]): every pstate must compute; fix its "
     "processor type's clock_rate or dpflops_per_cycle (or the SimGrid host's speed)"),
    ({"speeds": (1e9, 2e9, 1e-3, 1e-3)},
     "has speeds that rise after P0 ([1000000000.0, 2000000000.0, 0.001, 0.001]): order pstates fastest first"),
    ({"idle_watts": (10.0, 10.0, -2.5, 0.5)},
     "has a negative wattage: fix its processor type's power (or the SimGrid host's wattage_per_state)"),
    ({"initial_pstate": 4}, "starts in pstate 4 but has 4 pstates: give an initial pstate that exists"),
])
def test_check_pstates_fails_on_a_bad_table(changes, problem):
    bad = dataclasses.replace(GOOD, name="h1", **changes)
    hierarchy = ResourceHierarchy.from_hosts([GOOD, bad])
    assert check_pstates(hierarchy, None) == [f"host h1 {problem}"]


def test_check_pstates_lists_ten_hosts_then_counts_the_rest():
    hosts = [dataclasses.replace(GOOD, name=f"h{i:02d}", idle_watts=(-1.0,) * 4) for i in range(12)]
    problems = check_pstates(ResourceHierarchy.from_hosts(hosts), None)
    assert problems[0] == ("host h00 has a negative wattage: fix its processor type's power (or the SimGrid "
                           "host's wattage_per_state)")
    assert problems[MAX_PROBLEMS:] == ["... and 2 more hosts with a bad pstate table"]


# --- check_report --------------------------------------------------------------------------------------

def _with_report(workload, **changes):
    return dataclasses.replace(workload, report={**workload.report, **changes})


def test_check_report_fails_when_kept_or_flagged_counts_disagree_with_the_workload():
    hierarchy, workload = _shipped()
    bad = _with_report(workload, **{KEPT: 501, FLAGGED_TOO_LARGE: 3})
    assert check_report(hierarchy, bad) == [
        "the conversion report says 501 jobs were kept but the workload has 500: re-convert the trace",
        "the conversion report flags 3 jobs as larger than the platform but 0 ask for more than its 104 cores: "
        "convert the trace for this platform"]
    assert check_report(hierarchy, _with_report(workload, **{ALTERED_NO_MEMORY: 600})) == [
        f"the conversion report counts 600 jobs as '{ALTERED_NO_MEMORY}' but only 500 were kept: "
        "re-convert the trace"]
    assert check_report(hierarchy, _with_report(workload, **{SKIPPED_NO_SIZE: -1})) == [
        f"the conversion report's '{SKIPPED_NO_SIZE}' must be a non-negative integer, got -1: re-convert the trace"]


def test_check_report_fails_when_a_trace_line_is_neither_kept_nor_counted():
    hierarchy, workload = _shipped()
    lost = _with_report(workload, **{ALTERED_NO_MEMORY: 499})
    # the shipped trace: 14 header lines, then jobs on lines 15-514, none with memory data
    assert check_report(hierarchy, lost) == [
        f"the conversion report counts 499 records as '{ALTERED_NO_MEMORY}' but the trace {SHIPPED} "
        "(lines 15-514) has 500: re-convert the trace"]
    extra = _with_report(workload, **{SKIPPED_NO_RUN_TIME: 2})
    assert check_report(hierarchy, extra) == [
        f"the conversion report counts 502 records kept or skipped but the trace {SHIPPED} (lines 15-514) has 500 "
        "job lines: every job line must be kept or counted under one reason; re-convert the trace",
        f"the conversion report counts 2 records as '{SKIPPED_NO_RUN_TIME}' but the trace {SHIPPED} (lines 15-514) "
        "has 0: re-convert the trace"]


@needs_traces
def test_check_report_recounts_a_span_of_a_real_trace():
    hierarchy, workload = _convert(SDSC, ROOT / "platforms" / "das2.json", first_job=1000, nb_jobs=5000)
    # zcat SDSC | awk '!/^;/ && NF>0 { if (!($2<0) && ($8>0 || $5>0) && !($4<0)) { u++;
    #   if (u==1000) a=NR+1; if (u==6000) b=NR } } END {print a, b}'  -> 1118 6564 (5447 lines)
    lost = _with_report(workload, **{SKIPPED_NO_RUN_TIME: 446})
    assert check_report(hierarchy, lost) == [
        f"the conversion report counts 5446 records kept or skipped but the trace {SDSC} (lines 1118-6564) has "
        "5447 job lines: every job line must be kept or counted under one reason; re-convert the trace",
        f"the conversion report counts 446 records as '{SKIPPED_NO_RUN_TIME}' but the trace {SDSC} "
        "(lines 1118-6564) has 447: re-convert the trace"]


JOB = "{n} {s} -1 {run} 4 -1 -1 4 3600 -1 1 -1 -1 -1 -1 -1 -1 -1\n"


def _trace(path, *runs):
    path.write_text("; MaxProcs: 8\n" + "".join(JOB.format(n=i + 1, s=10 * i, run=r) for i, r in enumerate(runs)))
    return path


def test_check_report_accepts_both_ends_of_the_span(tmp_path):
    # jobs 1-3 usable, job 4 without run time: counted with nb_jobs=None, left out with nb_jobs=3
    path = _trace(tmp_path / "t.swf", 60, 60, 60, -1)
    hierarchy = ResourceHierarchy.from_hosts([dataclasses.replace(GOOD, name=f"h{i}") for i in range(8)])
    for nb_jobs, skipped in ((None, 1), (3, 0), (2, 0)):
        workload = swf_to_workload(path, nb_cores=8, reference_speed=1e9, nb_jobs=nb_jobs)
        assert workload.report[SKIPPED_NO_RUN_TIME] == skipped
        assert check_report(hierarchy, workload) == []
    workload = swf_to_workload(path, nb_cores=8, reference_speed=1e9, nb_jobs=2)
    assert check_report(hierarchy, _with_report(workload, **{SKIPPED_NO_RUN_TIME: 1})) == [
        f"the conversion report counts 3 records kept or skipped but the trace {path} (lines 2-3) has 2 job lines: "
        "every job line must be kept or counted under one reason; re-convert the trace",
        f"the conversion report counts 1 records as '{SKIPPED_NO_RUN_TIME}' but the trace {path} (lines 2-3) has "
        "0: re-convert the trace"]


def test_check_report_fails_when_the_trace_is_not_the_one_converted(tmp_path):
    path = _trace(tmp_path / "t.swf", 60, 60, 60)
    hierarchy = ResourceHierarchy.from_hosts([dataclasses.replace(GOOD, name=f"h{i}") for i in range(8)])
    workload = swf_to_workload(path, nb_cores=8, reference_speed=1e9)
    _trace(path, 60, -1, 60)   # job 2 lost its run time since the conversion
    assert check_report(hierarchy, workload) == [
        f"the workload's 3 jobs are not the 3 consecutive usable records of the trace {path} from line 2 on: "
        "re-convert the trace"]
    path.write_text("; MaxProcs: 8\n" + JOB.format(n=7, s=0, run=60))
    assert check_report(hierarchy, workload) == [
        f"no kept job of the workload is a usable record of the trace {path}: re-convert the trace"]
    path.write_text("; MaxProcs: 8\n1 0 -1 60 4\n")
    assert check_report(hierarchy, workload) == [
        "the trace the workload was converted from cannot be re-read (expected 18 fields, got 5: field 6 "
        f"(average CPU time used) is missing ({path}:2)): fix or re-convert it"]


def test_check_report_passes_without_a_report():
    hierarchy, workload = _shipped()
    assert check_report(hierarchy, dataclasses.replace(workload, report={})) == []


# --- the command line ----------------------------------------------------------------------------------

def test_cli_exit_codes(tmp_path, capsys):
    assert main([str(QUICKSTART)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:5] == ["ok   check_submit_times_sorted", "ok   check_jobs_fit", "ok   check_pstates",
                                    "ok   check_report", "workload report:"]
    options = json.loads(QUICKSTART.read_text())
    options["platform_file_path"] = str(ROOT / "platforms" / "learning.json")   # 4 cores: most jobs too large
    options["workload_file_path"] = str(SHIPPED)
    del options["nb_resources"]
    small = tmp_path / "small.json"
    small.write_text(json.dumps(options))
    assert main([str(small)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["ok   check_submit_times_sorted", "FAIL check_jobs_fit"]
    assert out[2].endswith(", the platform has 4: it will be rejected; use a larger platform or drop it")
    missing = tmp_path / "missing.json"
    assert main([str(missing)]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("hdeeprm-check: error: ")
    assert main([]) == 2
    assert "the following arguments are required: options" in capsys.readouterr().err


@pytest.mark.slow
def test_hdeeprm_check_quickstart_from_the_command_line(tmp_path):
    # This checkout first on the path: the installed console script may point at another copy.
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = shutil.which("hdeeprm-check")
    command = [script] if script else [sys.executable, "-m", "hdeeprm.cli.check"]
    done = subprocess.run([*command, str(QUICKSTART)], capture_output=True, text=True, env=env, cwd=tmp_path,
                          check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[:4] == ["ok   check_submit_times_sorted", "ok   check_jobs_fit",
                                            "ok   check_pstates", "ok   check_report"]
    failed = subprocess.run([*command, str(tmp_path / "nope.json")], capture_output=True, text=True, env=env,
                            cwd=tmp_path, check=False)
    assert failed.returncode == 2 and failed.stderr.startswith("hdeeprm-check: error: ")


# --- every shipped example: its options pass, and so do the outputs of a run of it (issue 35, defect 3) ---------

EXAMPLES = sorted((ROOT / "examples").glob("*.json"))
MIXED = ROOT / "examples" / "mixed_kth_philly_easy.json"


def _small(path):
    """The example's options with small job windows (200 trace jobs, 50 GPU jobs): a fast run, the same checks."""
    from hdeeprm.config.options import load_options

    if re.search(r'"(\$HDEEPRM_SHARED|pwa:|philly:|openb:)', path.read_text()) and not SHARED.is_dir():
        pytest.skip(f"{path.name} needs the shared traces ({SHARED} is absent)")
    options = load_options(path).replace(nb_jobs=200)
    if options.gpu_jobs is not None:
        options = options.replace(gpu_jobs={**options.gpu_jobs, "nb_jobs": 50})
    return options


@pytest.mark.slow
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_every_shipped_example_and_its_outputs_pass_hdeeprm_check(path, tmp_path, capsys):
    from hdeeprm.run.check import check_inputs
    from hdeeprm.run.launch import launch

    options = _small(path)
    results, _ = check_inputs(options)
    assert results and all(problems == [] for problems in results.values()), results
    launch(options, outdir=tmp_path / "run", quiet=True)
    capsys.readouterr()
    assert main([str(tmp_path / "run")]) == 0
    assert capsys.readouterr().out.startswith(f"ok   {tmp_path / 'run'}: the run (pid ")


@pytest.mark.slow
def test_the_mixed_example_passes_hdeeprm_check_as_shipped(shared, capsys):
    # It failed twice before: its GPU jobs "need GPUs the platform has none", its report "kept 3000 of 4000 jobs".
    assert main([str(MIXED)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ok   check_submit_times_sorted\nok   check_jobs_fit\nok   check_pstates\nok   check_report\n"
                          "workload report:\n3000  kept\n"), out
    assert out.endswith("1000  gpu jobs\n"), out


@pytest.mark.slow
def test_gpu_jobs_that_fit_no_node_and_a_wrong_gpu_job_count_fail(shared):
    from hdeeprm.config.build import GPU_JOBS_REPORT, build_gpu_side

    options = _small(MIXED)
    hierarchy = build_platform(options)
    workload = build_workload(options, hierarchy)
    gpus = build_gpu_side(options)
    assert run_checks(hierarchy, workload, gpus=gpus) == ALL_PASS
    # 1 GPU with 200 cores on one node: no node has 200 cores (a DGX A100 has 128)
    k, job = next((k, j) for k, j in enumerate(workload.jobs) if j.num_gpu)
    jobs = list(workload.jobs)
    jobs[k] = dataclasses.replace(job, num_gpu=1, res=200)
    assert check_jobs_fit(hierarchy, dataclasses.replace(workload, jobs=jobs), gpus=gpus) == [
        f"job {job.id} requests 200 cores and 1 x 1000 milli-GPU on one node, no node has them: it will be rejected; "
        "use a larger platform or drop it"]
    # without the platform's GPUs, a GPU job never fits (a CPU platform)
    assert check_jobs_fit(hierarchy, workload)[0] == (
        f"job {job.id} requests {job.num_gpu} GPUs, the platform has none: it will be rejected; use a larger "
        "platform or drop it")
    report = {**workload.report, GPU_JOBS_REPORT: 49}
    assert check_report(hierarchy, dataclasses.replace(workload, report=report)) == [
        "the report counts 49 GPU jobs but the workload has 50 jobs without an SWF job number: re-convert the trace"]
    report = {**workload.report, KEPT: 201}
    assert check_report(hierarchy, dataclasses.replace(workload, report=report)) == [
        "the conversion report says 201 jobs were kept but the workload has 200: re-convert the trace"]
