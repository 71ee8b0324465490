"""Issue 37, item 6: a trace given where ``hdeeprm-evaluate``'s options file goes; a weighted placement naming a
policy twice. Each through the command: exit code 2 and the exact one-line message, nothing run."""
from __future__ import annotations

import json

import pytest

from hdeeprm.cli import check as check_cli
from hdeeprm.cli import evaluate as evaluate_cli
from hdeeprm.cli import launch as launch_cli
from tests.cli.test_commands_agree import NODES, PODS
from tests.toy import ROOT

TRACE = str(ROOT / "workloads" / "lublin_500_100.swf")


def _refused(capsys, main, argv):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    captured = capsys.readouterr()
    assert exc.value.code == 2 and captured.out == ""
    return captured.err


@pytest.mark.parametrize("trace", [TRACE, "KTH-SP2-1996-2.1-cln.swf.gz", "philly-derived.csv.gz", "pods.CSV"])
def test_evaluate_says_a_trace_goes_with_w_and_shows_the_command(trace, capsys):
    err = _refused(capsys, evaluate_cli.main, [trace, "-p", "first-high_gflops", "-n", "3"])
    assert err == f"hdeeprm-evaluate: error: {trace} is a trace, not an options file (JSON): pass it with -w: " \
                  f"hdeeprm-evaluate -w {trace} -p first-high_gflops -n 3 -P PLATFORM.json\n"


def test_the_command_shown_runs_once_the_platform_is_named(capsys, tmp_path):
    platform = str(ROOT / "platforms" / "gaia_mini.json")
    err = _refused(capsys, evaluate_cli.main, [TRACE, "-P", platform, "-p", "first-high_gflops", "-n", "2",
                                                "-l", "20", "-q", "-o", str(tmp_path / "e")])
    command = err.split("pass it with -w: ", 1)[1].split()
    assert command[:3] == ["hdeeprm-evaluate", "-w", TRACE]
    assert evaluate_cli.main(command[1:]) == 0 and (tmp_path / "e" / "summary.csv").is_file()


def test_evaluate_with_a_trace_in_both_places_and_rlscheduler(capsys):
    err = _refused(capsys, evaluate_cli.main, [TRACE, "-w", TRACE, "-p", "first-high_gflops"])
    assert err == f"hdeeprm-evaluate: error: {TRACE} is a trace, not an options file (JSON), and -w {TRACE} " \
                  "gives the trace already: give an options file in its place or drop it\n"
    err = _refused(capsys, evaluate_cli.main, ["my trace.swf", "--protocol", "rlscheduler", "-p", "all"])
    assert err == "hdeeprm-evaluate: error: my trace.swf is a trace, not an options file (JSON): pass it with -w: " \
                  "hdeeprm-evaluate -w 'my trace.swf' --protocol rlscheduler -p all\n"   # its machine: the trace's


@pytest.mark.slow
@pytest.mark.parametrize("placement, twice", [("best_fit:1+best_fit:0.5", "best_fit"),
                                              ("fgd:1+best_fit+fgd:2", "fgd")])
def test_a_weighted_placement_naming_a_policy_twice_is_refused(placement, twice, tmp_path, capsys):
    (tmp_path / "nodes.csv").write_text(NODES)
    (tmp_path / "pods.csv").write_text(PODS)
    options = tmp_path / "gpu.json"
    options.write_text(json.dumps({"seed": 1, "platform_file_path": "nodes.csv", "workload_file_path": "pods.csv",
                                   "gpu": {"placement": placement}}))
    message = f"gpu.placement: placement '{placement}' names policy '{twice}' twice: give each policy once, " \
              f"with one weight (e.g. 'fgd:1+best_fit:0.5') ({options})"
    assert launch_cli.main([str(options), "-o", str(tmp_path / "out"), "-q"]) == 2
    assert capsys.readouterr().err == f"hdeeprm-launch: error: {message}\n" and not (tmp_path / "out").exists()
    assert check_cli.main([str(options)]) == 2
    assert capsys.readouterr().err == f"hdeeprm-check: error: {message}\n"
    options.write_text(options.read_text().replace(placement, "fgd:1+best_fit:0.5"))
    assert launch_cli.main([str(options), "-o", str(tmp_path / "out"), "-q"]) == 0
    assert json.loads((tmp_path / "out" / "run.json").read_text())["options"]["gpu"]["placement"] == \
        "fgd:1+best_fit:0.5"


@pytest.mark.parametrize("main, prog", [(launch_cli.main, "hdeeprm-launch"), (check_cli.main, "hdeeprm-check")])
def test_launch_and_check_name_a_trace_given_as_the_options_file(main, prog, capsys):
    trace = ROOT / "workloads" / "lublin_500_100.swf"
    assert main([str(trace)]) == 2
    assert capsys.readouterr().err == (
        f'{prog}: error: this is a trace, not an options file (JSON): name it as "workload_file_path" in an options '
        f"file (examples/quickstart.json is one) ({trace})\n")


@pytest.mark.slow
def test_hdeeprm_gpu_takes_registry_names_for_its_node_and_pod_lists(shared, tmp_path, monkeypatch, capsys):
    from hdeeprm.cli import gpu as gpu_cli

    monkeypatch.setenv("HDEEPRM_DATA", str(tmp_path / "empty-cache"))   # the name resolves to ../shared's copy
    assert gpu_cli.main(["nodes", "openb:node_list_gpu_node"]) == 0
    table = capsys.readouterr().out
    assert gpu_cli.main(["nodes", str(shared / "traces" / "gpu" / "openb_node_list_gpu_node.csv")]) == 0
    assert capsys.readouterr().out == table and "V100M32" in table
    assert gpu_cli.main(["atc23", str(tmp_path), "--nodes", "openb:node_list_gpu_node", "--workload",
                         "openb:pod_list_default", "--seeds", "1", "--policies", "best_fit"]) == 0
    assert "best_fit" in capsys.readouterr().out
    assert gpu_cli.main(["nodes", "openb:node_list"]) == 2
    assert capsys.readouterr().err.startswith("hdeeprm-gpu: error: unknown dataset 'openb:node_list' (")
