"""Issue 37, item 6: a full disk never leaves an empty or cut-short run.json or summary, and the error names the file.

``run.json``, ``hdeeprm-evaluate``'s ``windows.csv`` and ``summary.csv`` and the sweep's ``summary.csv`` are written
to a temporary file and renamed (:func:`hdeeprm.files.atomic_write`). Each case runs the command in a subprocess
where every write to the file's temporary copy fails with ENOSPC (``tests/test_faults_runs.py``'s simulation):
the command exits 2 with ``No space left on device: PATH``, and the file is the previous one, byte for byte, or
absent. ``hdeeprm-check`` given an empty or cut-short ``run.json`` says so in one line naming it.
"""
from __future__ import annotations

import json
import os

import pytest

from hdeeprm.cli import check as check_cli
from hdeeprm.cli import evaluate as evaluate_cli
from hdeeprm.cli import launch as launch_cli
from hdeeprm.cli import sweep as sweep_cli
from tests.test_faults_runs import QUICKSTART, _full

pytestmark = pytest.mark.slow

EVALUATE = [str(QUICKSTART), "-n", "2", "-l", "100", "-p", "first-high_gflops", "shortest-high_gflops", "-q"]
SWEEP = [str(QUICKSTART), "-g", "policy_pair=first-high_gflops,shortest-high_gflops", "-g", "nb_jobs=100", "-q"]


def _no_temporary_files(folder) -> bool:
    return not [p for p in folder.rglob("*.tmp")]


def test_a_full_disk_leaves_no_run_json_rather_than_an_empty_one(tmp_path):
    out = tmp_path / "out"
    done = _full("*/out/.run.json.*", "hdeeprm.cli.launch", str(QUICKSTART), "-q", "-o", str(out))
    assert (done.returncode, done.stderr) == (2, f"hdeeprm-launch: error: No space left on device: "
                                                 f"{out / 'run.json'}\n")
    assert not (out / "run.json").exists() and _no_temporary_files(out)


@pytest.mark.parametrize("name", ["windows.csv", "summary.csv"])
def test_a_full_disk_keeps_the_previous_evaluation_summary(tmp_path, name):
    out = tmp_path / "out"
    assert evaluate_cli.main([*EVALUATE, "-o", str(out)]) == 0
    before = (out / name).read_bytes()
    assert before.count(b"\n") >= 3
    done = _full(f"*/out/.{name}.*", "hdeeprm.cli.evaluate", *EVALUATE, "-o", str(out))
    assert (done.returncode, done.stderr) == (2, f"hdeeprm-evaluate: error: No space left on device: {out / name}\n")
    assert (out / name).read_bytes() == before
    assert _no_temporary_files(out)


def test_a_full_disk_on_a_first_evaluation_leaves_no_summary(tmp_path):
    out = tmp_path / "out"
    done = _full("*/out/.windows.csv.*", "hdeeprm.cli.evaluate", *EVALUATE, "-o", str(out))
    assert done.returncode == 2 and done.stderr.endswith(f"No space left on device: {out / 'windows.csv'}\n")
    assert not (out / "windows.csv").exists() and _no_temporary_files(out)


def test_a_full_disk_keeps_the_previous_sweep_summary(tmp_path):
    out = tmp_path / "out"
    assert sweep_cli.main([*SWEEP, "-o", str(out)]) == 0
    before = (out / "summary.csv").read_bytes()
    assert before.count(b"\n") == 3   # the header and two cells
    done = _full("*/out/.summary.csv.*", "hdeeprm.cli.sweep", *SWEEP, "-o", str(out))
    assert (done.returncode, done.stderr) == (2, f"hdeeprm-sweep: error: No space left on device: "
                                                 f"{out / 'summary.csv'}\n")
    assert (out / "summary.csv").read_bytes() == before
    assert _no_temporary_files(out)


@pytest.mark.parametrize("cut, how", [(0, "is empty (0 bytes)"),
                                      (100, "is cut short (100 bytes, not valid JSON from line 6)")])
def test_check_names_an_empty_or_cut_short_run_json(tmp_path, capsys, cut, how):
    out = tmp_path / "out"
    assert launch_cli.main([str(QUICKSTART), "-q", "-o", str(out)]) == 0
    text = (out / "run.json").read_bytes()
    json.loads(text)
    (out / "run.json").write_bytes(text[:cut])
    assert check_cli.main([str(out)]) == 1
    printed = capsys.readouterr()
    assert printed.err == ""
    assert printed.out.splitlines() == [f"FAIL {out}: {out / 'run.json'} {how}: the write was stopped (a full disk "
                                        "or a crash of the machine); what the run did is unknown"]


def test_a_failed_run_on_a_full_disk_rewrites_run_json_in_place_whole(tmp_path, monkeypatch):
    """No room for run.json's temporary copy when the run fails: the short record goes over the old one, whole."""
    from hdeeprm import files
    from hdeeprm.config.options import load_options
    from hdeeprm.run import lifecycle

    out = tmp_path / "out"
    assert launch_cli.main([str(QUICKSTART), "-q", "-o", str(out)]) == 0
    options = load_options(str(QUICKSTART))
    workload = type("W", (), {"source": "w", "jobs": [], "report": {}})()
    real = files.tempfile.mkstemp

    def full(*args, **kwargs):
        raise OSError(28, os.strerror(28))

    monkeypatch.setattr(files.tempfile, "mkstemp", full)
    with pytest.raises(OSError, match="No space left on device"):
        lifecycle.write_run_info(out, options, workload, {"episodes_completed": 0}, status=lifecycle.RUNNING)
    assert json.loads((out / "run.json").read_text())["status"] == "finished"   # the previous one, whole
    lifecycle.write_run_info(out, options, workload, {"episodes_completed": 0, "error": "OSError: full"},
                             status=lifecycle.FAILED)
    assert json.loads((out / "run.json").read_text()) == {"status": "failed", "pid": os.getpid(),
                                                          "episodes_completed": 0, "error": "OSError: full"}
    monkeypatch.setattr(files.tempfile, "mkstemp", real)
