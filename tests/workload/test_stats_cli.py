"""Workload statistics and the ``hdeeprm-workload`` command line."""
from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys

import pytest

from hdeeprm.cli.workload import build_parser, main
from hdeeprm.workload import convert
from hdeeprm.workload.batsim_json import read_batsim_workload
from hdeeprm.workload.convert import format_report, swf_to_workload
from hdeeprm.workload.stats import distribution, format_stats, swf_stats, trace_stats
from tests.conftest import ROOT
from tests.workload.trace_paths import KTH, LUBLIN, SHIPPED, needs_traces


def test_distribution_by_hand():
    assert distribution([4, 1, 3, 2, 10]) == {"count": 5, "min": 1.0, "mean": 4.0, "median": 3.0,
                                           "p90": pytest.approx(7.6), "max": 10.0}
    # p90 by linear interpolation: rank 0.9 * 4 = 3.6 -> 4 + 0.6 * (10 - 4)
    assert distribution([]) == {"count": 0}


@needs_traces
def test_kth_statistics():
    stats = swf_stats(KTH)
    assert (stats["jobs"], stats["max_procs"]) == (28476, 100)
    run = stats["distributions"]["run time (s)"]
    # zcat KTH | awk '!/^;/{n++; s+=$4; ...}': mean 8871.852613, min 0, max 226709;
    # zcat KTH | awk '!/^;/{print $4}' | sort -n -> median 847
    assert run["count"] == 28476
    assert (run["min"], run["median"], run["max"]) == (0.0, 847.0, 226709.0)
    assert run["mean"] == pytest.approx(8871.852613, abs=1e-6)
    size = stats["distributions"]["size (processors)"]
    assert (size["count"], size["max"]) == (28475, 100.0)  # one record has no size
    assert size["mean"] == pytest.approx(7.649868, abs=1e-6)
    assert stats["distributions"]["memory (MB per processor)"] == {"count": 0}
    assert stats["distributions"]["inter-arrival time (s)"]["count"] == 28475
    table = format_stats(stats)
    assert table.splitlines()[0] == f"{KTH} (swf): 28476 jobs, machine 100 processors"
    # zcat KTH | awk '!/^;/{print $9}' | sort -n: mean 13662.922461, median 4200, p90 48000
    # (value at rank 0.9 * (n - 1), interpolated), min 60, max 216000
    assert table.splitlines()[4].split() == ["requested", "time", "(s)", "28476", "60", "13662.9",
                                             "4200", "48000", "216000"]


def test_stats_of_a_batsim_json_workload(tmp_path):
    from hdeeprm.workload.batsim_json import write_batsim_workload
    workload = swf_to_workload(SHIPPED, nb_cores=100, reference_speed=1e10, enforce_walltime=True)
    path = tmp_path / "w.json"
    write_batsim_workload(workload, path)
    stats = trace_stats(path)
    assert (stats["format"], stats["jobs"], stats["nb_res"]) == ("batsim-json", 500, 100)
    swf = trace_stats(SHIPPED)["distributions"]
    dists = stats["distributions"]
    assert dists["size (cores)"] == swf["size (processors)"]
    assert dists["walltime (s)"] == swf["run time (s)"]            # perfect estimates
    assert dists["inter-arrival time (s)"] == swf["inter-arrival time (s)"]
    assert set(dists["memory bandwidth (GB/s per core)"]) == {"count", "min", "mean", "median", "p90", "max"}


# --- command line ----------------------------------------------------------------------------

def test_cli_generate_rebuilds_the_shipped_trace(tmp_path, capsys):
    out = tmp_path / "g.swf"
    assert main(["generate", "-o", str(out), "--nb-jobs", "500", "--nb-cores", "100",
                 "--seed", "20260101"]) == 0
    assert out.read_bytes() == SHIPPED.read_bytes()
    assert capsys.readouterr().out == f"500 jobs written to {out}\n"


def test_cli_convert_writes_workload_and_report(tmp_path, capsys):
    from hdeeprm.workload.batsim_json import read_batsim_workload
    out = tmp_path / "w.json"
    assert main(["convert", str(SHIPPED), "-o", str(out), "--nb-cores", "64",
                 "--reference-speed", "1e10", "--seed", "3"]) == 0
    expected = swf_to_workload(SHIPPED, nb_cores=64, reference_speed=1e10, seed=3)
    written = read_batsim_workload(out)
    assert [(j.id, j.subtime, j.res, j.walltime, j.profile.cpu, j.mem_bw) for j in written.jobs] == \
        [(j.id, j.subtime, j.res, j.walltime, j.profile.cpu, j.mem_bw) for j in expected.jobs]
    assert written.nb_res == 64
    report_path = tmp_path / "w.report.json"
    assert json.loads(report_path.read_text()) == expected.report
    console = capsys.readouterr().out
    assert format_report(expected.report) in console
    assert "flagged: larger than the platform (rejected at submission)" in console  # 100 > 64


def test_cli_convert_with_platform_and_csv_report(tmp_path, capsys):
    platform_file = ROOT / "platforms" / "kth_sp2.json"
    if not platform_file.is_file():
        pytest.skip("no platforms/kth_sp2.json")
    from hdeeprm.platform import load_platform
    platform = load_platform(platform_file)
    out, report = tmp_path / "w.json", tmp_path / "r.csv"
    assert main(["convert", str(SHIPPED), "-o", str(out), "--platform", str(platform_file),
                 "--nb-jobs", "10", "--report", str(report)]) == 0
    from hdeeprm.workload.batsim_json import read_batsim_workload
    written = read_batsim_workload(out)
    assert written.nb_res == platform.nb_cores and len(written) == 10
    assert report.read_text().splitlines()[:2] == ["reason,count", "kept,10"]


@pytest.mark.parametrize("argv, message", [
    (["stats", "{tmp}/missing.swf"], "SWF trace not found ({tmp}/missing.swf)"),
    (["stats", "{tmp}/bad.swf"],
     "field 5 (allocated processors) must be an integer, got 'four' ({tmp}/bad.swf:2)"),
    (["convert", "{tmp}/bad.swf", "-o", "{tmp}/o.json"],
     "the trace header has no MaxProcs: pass --nb-cores N or --platform platform.json ({tmp}/bad.swf)"),
    (["convert", "{tmp}/bad.swf", "-o", "{tmp}/o.json", "--nb-cores", "4"],
     "--reference-speed (or --platform) is required for parallel_homogeneous profiles"),
])
def test_cli_errors_exit_2_with_message(tmp_path, capsys, argv, message):
    (tmp_path / "bad.swf").write_text("; x\n1 0 5 100 four -1 -1 4 3600 -1 1 3 1 -1 -1 -1 -1 -1\n")
    code = main([a.format(tmp=tmp_path) for a in argv])
    captured = capsys.readouterr()
    assert code == 2
    assert captured.err == f"hdeeprm-workload: error: {message.format(tmp=tmp_path)}\n"


def test_cli_usage_error_exit_2(capsys):
    assert main(["generate", "-o", "x.swf", "--nb-jobs", "5", "--nb-cores", "0"]) == 2
    assert "--nb-cores: must be a positive integer, got '0'" in capsys.readouterr().err


@pytest.mark.slow
def test_cli_as_a_process(tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    ok = subprocess.run([sys.executable, "-m", "hdeeprm.cli.workload", "stats", str(SHIPPED)],
                        capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert ok.returncode == 0, ok.stderr
    assert ok.stdout.startswith(f"{SHIPPED} (swf): 500 jobs, machine 100 processors\n")
    bad = subprocess.run([sys.executable, "-m", "hdeeprm.cli.workload", "stats", "nope.swf"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert (bad.returncode, bad.stderr) == (2, "hdeeprm-workload: error: SWF trace not found (nope.swf)\n")


# --- defaults written once; the machine size from the header ----------------------------------

def test_library_and_cli_defaults_are_the_module_constants():
    defaults = {"actual_work": convert.DEFAULT_ACTUAL_WORK, "profile_type": convert.DEFAULT_PROFILE_TYPE,
                "default_mem": convert.DEFAULT_MEM, "enforce_walltime": convert.DEFAULT_ENFORCE_WALLTIME,
                "mem_bw_choices": convert.DEFAULT_MEM_BW_CHOICES}
    assert convert.DEFAULT_ENFORCE_WALLTIME is False   # the original HDeepRM: no walltime kills
    assert convert.DEFAULT_MEM_BW_CHOICES == (4.0, 8.0, 12.0, 16.0, 20.0, 24.0)
    for function in (convert.swf_to_workload, convert.records_to_workload):
        parameters = inspect.signature(function).parameters
        assert {name: parameters[name].default for name in defaults} == defaults
    args = build_parser().parse_args(["convert", "t.swf", "-o", "w.json"])
    assert {name: getattr(args, name) for name in defaults} == {**defaults, "mem_bw_choices": [4.0, 8.0, 12.0, 16.0,
                                                                                               20.0, 24.0]}


def test_job_0_of_the_shipped_trace_gets_the_same_walltime_from_the_library_and_the_cli(tmp_path, capsys):
    # Job 1 of workloads/lublin_500_100.swf: run time 61 s, requested time -1 (so 61 s when enforced).
    library = swf_to_workload(SHIPPED, nb_cores=100, reference_speed=1e10).jobs[0]
    assert (library.id, library.walltime, library.requested_time) == ("1", -1.0, 61.0)
    out = tmp_path / "w.json"

    def cli_walltime(*flags):
        assert main(["convert", str(SHIPPED), "-o", str(out), "--reference-speed", "1e10", *flags]) == 0
        return read_batsim_workload(out).jobs[0].walltime

    assert cli_walltime() == library.walltime == -1.0
    assert "walltime" not in json.loads(out.read_text())["jobs"][0]
    assert cli_walltime("--no-enforce-walltime") == -1.0
    assert cli_walltime("--enforce-walltime") == 61.0
    assert json.loads(out.read_text())["jobs"][0]["walltime"] == 61
    assert swf_to_workload(SHIPPED, nb_cores=100, reference_speed=1e10, enforce_walltime=True).jobs[0].walltime == 61.0


def test_convert_takes_the_cores_from_the_shipped_header(tmp_path, capsys):
    out = tmp_path / "w.json"
    assert main(["convert", str(SHIPPED), "-o", str(out), "--reference-speed", "1e10"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "100 cores, from the trace header's MaxProcs"
    assert json.loads(out.read_text())["nb_res"] == 100
    assert main(["convert", str(SHIPPED), "-o", str(out), "--reference-speed", "1e10", "--nb-cores", "64"]) == 0
    assert "MaxProcs" not in capsys.readouterr().out   # an explicit size wins, nothing said about the header
    assert json.loads(out.read_text())["nb_res"] == 64


@needs_traces
def test_convert_takes_the_cores_from_a_real_header(tmp_path, capsys):
    out = tmp_path / "w.json"
    assert main(["convert", str(KTH), "-o", str(out), "--reference-speed", "1e9", "--nb-jobs", "10"]) == 0
    assert capsys.readouterr().out.splitlines()[0] == "100 cores, from the trace header's MaxProcs"  # KTH SP2
    assert json.loads(out.read_text())["nb_res"] == 100


@needs_traces
def test_convert_refuses_a_header_with_max_nodes_only(tmp_path, capsys):
    assert main(["convert", str(LUBLIN), "-o", str(tmp_path / "w.json"), "--reference-speed", "1e9"]) == 2
    assert capsys.readouterr().err == (
        "hdeeprm-workload: error: the trace header has no MaxProcs (its MaxNodes: 256 counts nodes, not the "
        f"processors the jobs ask for): pass --nb-cores N or --platform platform.json ({LUBLIN})\n")
    assert not (tmp_path / "w.json").exists()
    assert format_stats(swf_stats(LUBLIN)).splitlines()[0] == f"{LUBLIN} (swf): 10000 jobs, machine 256 nodes"


def test_convert_refuses_a_header_with_max_procs_0(tmp_path, capsys):
    trace = tmp_path / "zero.swf"
    trace.write_text("; MaxProcs: 0\n1 0 5 100 4 -1 -1 4 3600 -1 1 3 1 -1 -1 -1 -1 -1\n")
    assert main(["convert", str(trace), "-o", str(tmp_path / "w.json"), "--reference-speed", "1e9"]) == 2
    assert capsys.readouterr().err == ("hdeeprm-workload: error: the trace header's MaxProcs is 0: pass "
                                       f"--nb-cores N or --platform platform.json ({trace})\n")
