"""hdeeprm-check: every check passes on real inputs and fails, with its message, on a real defect."""
import dataclasses
import json
from pathlib import Path
from types import SimpleNamespace

from hdeeprm.cli.check import main
from hdeeprm.config.build import build_platform, build_workload
from hdeeprm.config.options import load_options
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.run.check import (CHECKS, check_jobs_fit, check_pstates, check_report, check_submit_times_sorted,
                               run_checks)
from hdeeprm.workload.convert import FLAGGED_TOO_LARGE, KEPT

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.json"


def _inputs():
    options = load_options(QUICKSTART)
    hierarchy = build_platform(options)
    return hierarchy, build_workload(options, hierarchy)


def test_every_check_passes_on_the_quickstart_inputs():
    hierarchy, workload = _inputs()
    assert run_checks(hierarchy, workload) == {check.__name__: [] for check in CHECKS}


def test_the_cli_reports_success_and_failure_by_exit_code(tmp_path, capsys):
    assert main([str(QUICKSTART)]) == 0
    options = json.loads(QUICKSTART.read_text())
    options["platform_file_path"] = str(ROOT / "platforms" / "learning.json")   # 4 cores: most jobs too large
    options["workload_file_path"] = str(ROOT / "workloads" / "lublin_500_100.swf")
    del options["nb_resources"]
    path = tmp_path / "small.json"
    path.write_text(json.dumps(options))
    assert main([str(path)]) == 1
    assert "it will be rejected; use a larger platform or drop it" in capsys.readouterr().out


def test_check_pstates_fails_on_a_bad_table():
    good = HostSpec("h0", (1e9, 7.5e8, 1e-3, 1e-3), (10.0, 10.0, 2.5, 0.5), (10.0, 10.0, 2.5, 0.5), 3)
    rising = dataclasses.replace(good, name="h1", speeds=(1e9, 2e9, 1e-3, 1e-3))
    negative = dataclasses.replace(good, name="h2", idle_watts=(10.0, 10.0, -2.5, 0.5))
    platform = SimpleNamespace(host_specs=lambda: [good, rising, negative])
    assert check_pstates(platform, None) == [
        "host h1 has speeds that rise after P0 ([1000000000.0, 2000000000.0, 0.001, 0.001]): order pstates "
        "fastest first",
        "host h2 has a negative wattage: fix its processor type's power"]


def test_check_report_fails_when_the_counts_do_not_add_up():
    hierarchy, workload = _inputs()
    bad = dataclasses.replace(workload, report={**workload.report, KEPT: 501, FLAGGED_TOO_LARGE: 3})
    assert check_report(hierarchy, bad) == [
        "the conversion report says 501 jobs were kept but the workload has 500: re-convert the trace",
        "the conversion report flags 3 jobs as larger than the platform but 0 ask for more than its 104 cores: "
        "convert the trace for this platform"]


def test_check_submit_times_sorted_and_jobs_fit_fail_on_real_defects():
    hierarchy, workload = _inputs()
    jobs = list(workload.jobs)
    jobs[1], jobs[2] = jobs[2], jobs[1]
    unsorted = dataclasses.replace(workload, jobs=jobs)
    assert check_submit_times_sorted(hierarchy, unsorted) == [
        f"job {jobs[2].id} is submitted before job {jobs[1].id}: sort the workload by submission time"]
    big = dataclasses.replace(jobs[0], res=105)
    assert check_jobs_fit(hierarchy, dataclasses.replace(workload, jobs=[big])) == [
        f"job {big.id} requests 105 cores, the platform has 104: it will be rejected; use a larger platform "
        "or drop it"]
