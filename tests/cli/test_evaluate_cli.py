"""hdeeprm-evaluate's command line: the table, the files, the errors."""
import csv
from pathlib import Path

import pytest

from hdeeprm.cli.evaluate import main

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.json"
REINFORCE = ROOT / "examples" / "agents" / "reinforce.py"


def test_prints_one_row_per_policy_and_writes_the_files(tmp_path, capsys):
    assert main([str(QUICKSTART), "-p", "first,smallest-high_gflops", "-n", "4", "-l", "100", "-o", str(tmp_path),
                 "-q"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("2 test windows of 100 jobs (first jobs ")
    assert out[1].split()[:3] == ["policy", "bounded", "slowdown"]
    assert out[3].startswith("first-high_gflops ") and out[4].startswith("smallest-high_gflops ")
    assert out[5].startswith("lowest mean bounded slowdown: ")
    summary = list(csv.DictReader(open(tmp_path / "summary.csv")))
    assert [r["policy"] for r in summary] == ["first-high_gflops", "smallest-high_gflops"]
    assert all(r["windows"] == "2" for r in summary)
    # The printed means are the CSV's.
    bsld = float(summary[0]["mean_bounded_slowdown_mean"])
    assert out[3].split()[1] == (f"{bsld:.0f}" if bsld >= 100 else f"{bsld:.3g}")
    assert len(list(csv.DictReader(open(tmp_path / "windows.csv")))) == 4
    assert (tmp_path / "bounded_slowdown.png").is_file() and (tmp_path / "run.json").is_file()


def test_trace_and_platform_without_an_options_file(tmp_path, capsys):
    assert main(["-w", str(ROOT / "workloads" / "lublin_500_100.swf"), "-P", str(ROOT / "platforms" / "gaia_mini.json"),
                 "-p", "shortest-low_power", "-n", "2", "-l", "200", "--on", "all", "--seed", "3",
                 "-o", str(tmp_path), "-q"]) == 0
    assert "2 windows of 200 jobs (first jobs " in capsys.readouterr().out


def test_train_then_compare(tmp_path, capsys):
    options = ROOT / "examples" / "evaluation" / "lublin_agent.json"
    assert main([str(options), "-p", "first-high_gflops", "-n", "4", "-l", "60", "--train", str(REINFORCE),
                 "--train-episodes", "2", "-o", str(tmp_path), "-q"]) == 0
    out = capsys.readouterr().out
    assert f"{REINFORCE}:{tmp_path / 'model.pt'}" in out
    assert (tmp_path / "model.pt").is_file()
    training = list(csv.DictReader(open(tmp_path / "training.csv")))
    assert len(training) == 2
    # the learning curves: decisions (agent steps) accumulate, and the plot of return and score against them
    assert 0 < int(training[0]["decisions"]) < int(training[1]["decisions"])
    assert (tmp_path / "training.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("argv, message", [
    (["-p", "frist-high_gflops"], "hdeeprm-evaluate: error: policy 'frist-high_gflops': unknown job-selection "
                                  "policy 'frist' (valid: "),
    (["-p", "first-high_gflops", "-n", "9", "-l", "100"],
     "hdeeprm-evaluate: error: 9 windows of 100 jobs need 900 usable jobs, the trace has 500"),
    (["-p", "first-high_gflops", "-s", "head_of_lin"],
     "hdeeprm-evaluate: error: unknown start strategy 'head_of_lin' (valid: "),
    (["-p", "first-high_gflops", "-n", "2", "-l", "100", "--test-fraction", "0"],
     "hdeeprm-evaluate: error: no test window among the 2 drawn: raise the test fraction"),
])
def test_bad_input_is_one_clear_line_and_exit_code_2(argv, message, tmp_path, capsys):
    assert main([str(QUICKSTART), *argv, "-o", str(tmp_path), "-q"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


@pytest.mark.parametrize("argv, message", [
    ([str(QUICKSTART)], "give the policies to compare with -p"),
    (["-p", "first-high_gflops"], "give an options file, or both -w TRACE and -P PLATFORM"),
    ([str(QUICKSTART), "--train", str(REINFORCE)], "--train needs --train-episodes >= 1"),
    ([str(QUICKSTART), "-p", "first-high_gflops", "-j", "0"], "-j must be >= 1, got 0"),
])
def test_usage_errors(argv, message, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2 and message in capsys.readouterr().err


@pytest.mark.slow
def test_the_console_script_runs_from_a_fresh_process(tmp_path):
    import os
    import shutil
    import subprocess
    import sys

    assert '"hdeeprm-evaluate=hdeeprm.cli.evaluate:main"' in (ROOT / "setup.py").read_text()
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    script = shutil.which("hdeeprm-evaluate")
    command = [script] if script else [sys.executable, "-m", "hdeeprm.cli.evaluate"]
    done = subprocess.run([*command, str(QUICKSTART), "-p", "first-high_gflops+head_of_line", "-n", "2", "-l", "50",
                           "-q"], capture_output=True, text=True, env=env, cwd=tmp_path, check=False)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.splitlines()[3].startswith("first-high_gflops ")
    assert (tmp_path / "hdeeprm-evaluation" / "summary.csv").is_file()   # the default OUTDIR, under the cwd
