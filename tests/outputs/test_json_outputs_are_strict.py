"""Every JSON output of every shipped example is strict JSON (RFC 8259): no ``Infinity``, no ``NaN``.

Each example runs through its command (``hdeeprm-launch``, ``hdeeprm-evaluate``, ``hdeeprm-sweep``) on a prefix
of its trace (``nb_jobs``; the quickstart and the toy learning example whole) in a temporary folder, and every
``*.json`` the run wrote is read with a parser that refuses non-finite constants, as JavaScript's ``JSON.parse``
does. The prefixes of the traces that have jobs of 0 s (KTH-SP2 from job 2466 on, SDSC-SP2 from 34051 on) reach
such a job: their slowdown is written ``null`` with the reason under ``"undefined"``, which the tests check too.
The examples on the public traces need the shared folder (``shared`` fixture).
"""
from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np
import pytest

from hdeeprm.cli import evaluate as evaluate_cli
from hdeeprm.cli import launch as launch_cli
from hdeeprm.cli import sweep as sweep_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
#: Keys of an options file that name a file, relative to the options file.
PATH_KEYS = ("workload_file_path", "platform_file_path")

pytestmark = pytest.mark.slow


def _refuse(name: str) -> float:
    raise ValueError(f"not JSON: {name}")


def strict_load(path: Path):
    """``path`` read as JSON that refuses ``NaN``, ``Infinity`` and ``-Infinity`` (as JSON.parse does)."""
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=_refuse)


def check_json_outputs(folder: Path) -> dict[str, object]:
    """Every ``*.json`` under ``folder`` read strictly; returns them by path relative to ``folder``."""
    found = {str(p.relative_to(folder)): strict_load(p) for p in sorted(folder.rglob("*.json"))}
    assert found, f"no JSON output in {folder}"
    return found


def _absolute(value: str, base: Path) -> str:
    """A path of an options file made absolute (registry names and ``$VARIABLE`` paths as they are)."""
    if ":" in value or value.startswith("$"):
        return value
    return str((base / value).resolve())


def prefix_options(example: Path, tmp: Path, **changes) -> Path:
    """A copy of the options file ``example`` in ``tmp`` with its paths made absolute and ``changes`` applied."""
    options = json.loads(example.read_text())
    for block in (options, options.get("gpu_jobs") or {}):
        for key in PATH_KEYS:
            if key in block:
                block[key] = _absolute(block[key], example.parent)
    for key, value in changes.items():
        if isinstance(value, dict):
            options[key] = {**options[key], **value}
        else:
            options[key] = value
    path = tmp / example.name
    path.write_text(json.dumps(options))
    return path


#: hdeeprm-launch examples: file, changes (the prefix), whether the prefix has a job of 0 s.
LAUNCHED = {
    "quickstart.json": ({}, False),
    "kth_sp2_first_high_gflops.json": ({"nb_jobs": 2500}, True),
    "sdsc_sp2_gaia_first_high_gflops.json": ({"nb_jobs": 21000}, True),
    "sdsc_sp2_gaia_shortest_low_power.json": ({"nb_jobs": 21000}, True),
    "philly_dgx_a100_best_fit.json": ({"nb_jobs": 300}, False),
    "philly_openb_fgd.json": ({"nb_jobs": 300}, False),
    "mixed_kth_philly_easy.json": ({"nb_jobs": 2500, "gpu_jobs": {"nb_jobs": 100}}, True),
}
#: Learning examples (with an agent of examples/agents): file, changes, whether they need the shared folder.
LEARNING = {"learning/learning.json": ({}, False), "learning/kth_window.json": ({"nb_jobs": 60}, True)}
#: The learning agents run on the toy example (gpu_attention.py trains a GPU environment, not a launch).
AGENTS = sorted(p.name for p in (EXAMPLES / "agents").glob("*.py") if p.name != "gpu_attention.py")
#: hdeeprm-evaluate examples: whether they need the shared folder.
EVALUATED = {"evaluation/kth_sp2_100.json": True, "evaluation/lublin_agent.json": False,
             "evaluation/sdsc_sp2_128.json": True, "evaluation/sdsc_sp2_gaia.json": True}
#: hdeeprm-sweep examples.
SWEPT = ("sweep/sdsc_sp2_128.json",)


def _shared_or_skip(needs: bool, request) -> None:
    if needs:
        request.getfixturevalue("shared")


def test_every_shipped_example_has_a_case():
    """A new example gets a case here, so that its outputs are checked too."""
    shipped = {str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*.json")}
    covered = {*LAUNCHED, *LEARNING, *EVALUATED, *SWEPT, "learning/workload.json"}   # workload.json: an input
    assert shipped == covered


@pytest.mark.parametrize("name", list(LAUNCHED))
def test_launch_examples_write_strict_json(name, tmp_path, request, capsys):
    changes, has_zero_runtime = LAUNCHED[name]
    _shared_or_skip(name != "quickstart.json", request)
    options = prefix_options(EXAMPLES / name, tmp_path, **changes)
    out = tmp_path / "out"
    assert launch_cli.main([str(options), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    found = check_json_outputs(out)
    assert {"out_metrics.json", "run.json"} <= set(found)
    metrics = found["out_metrics.json"]
    if has_zero_runtime:
        reason = metrics["undefined"]["mean_slowdown"]
        assert metrics["mean_slowdown"] is None and metrics["max_slowdown"] is None
        assert re.fullmatch(r"(1 job ran 0 s, so its|\d+ jobs ran 0 s, so their) slowdown \(turnaround / run time\) "
                            r"divides by 0; mean_bounded_slowdown \(tau = 10 s\) is defined", reason), reason
        line = next(text for text in printed.splitlines() if text.split()[0] == "mean_slowdown")
        assert line.split(None, 1)[1] == f"undefined: {reason}"
        assert isinstance(metrics["mean_bounded_slowdown"], float)
    else:
        assert "undefined" not in metrics and isinstance(metrics["mean_slowdown"], float)
    assert " inf " not in printed and " nan " not in printed


def test_the_mixed_run_splits_its_figures_by_kind_of_job(tmp_path, shared, capsys):
    """cpu_jobs_* and gpu_jobs_* in out_metrics.json and the summary; the figures out_jobs.csv gives per kind."""
    from hdeeprm.outputs.metrics import bounded_slowdown

    options = prefix_options(EXAMPLES / "mixed_kth_philly_easy.json", tmp_path, nb_jobs=400,
                             gpu_jobs={"nb_jobs": 60})
    out = tmp_path / "out"
    assert launch_cli.main([str(options), "-o", str(out)]) == 0
    printed = capsys.readouterr().out
    metrics = strict_load(out / "out_metrics.json")
    rows = list(csv.DictReader(open(out / "out_jobs.csv", encoding="utf-8")))
    for kind, gpu in (("cpu_jobs", False), ("gpu_jobs", True)):
        mine = [r for r in rows if r["job_id"].startswith("gpu-") == gpu]
        wait = np.array([float(r["waiting_time"]) for r in mine])
        turnaround = np.array([float(r["turnaround_time"]) for r in mine])
        run = np.array([float(r["execution_time"]) for r in mine])
        assert metrics[f"{kind}_nb_jobs"] == len(mine) == (60 if gpu else 400)
        assert metrics[f"{kind}_mean_waiting_time"] == pytest.approx(wait.mean(), abs=1e-6)
        assert metrics[f"{kind}_mean_turnaround_time"] == pytest.approx(turnaround.mean(), abs=1e-6)
        assert metrics[f"{kind}_mean_bounded_slowdown"] == pytest.approx(bounded_slowdown(turnaround, run).mean(),
                                                                         rel=1e-6)
        value = metrics[f"{kind}_mean_bounded_slowdown"]
        assert f"  {kind}_mean_bounded_slowdown  {value:.6g} (tau = 10 s)" in printed.splitlines()
    episodes = next(csv.DictReader(open(out / "episodes.csv", encoding="utf-8")))
    assert float(episodes["gpu_jobs_mean_waiting_time"]) == metrics["gpu_jobs_mean_waiting_time"]


@pytest.mark.parametrize("agent", AGENTS)
def test_the_toy_learning_example_writes_strict_json(agent, tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "out"
    assert launch_cli.main([str(EXAMPLES / "agents" / agent), str(EXAMPLES / "learning" / "learning.json"),
                            "-nr", "2", "-q", "-o", str(out)]) == 0
    check_json_outputs(out)


def test_the_real_trace_learning_example_writes_strict_json(tmp_path, shared):
    pytest.importorskip("torch")
    changes, _ = LEARNING["learning/kth_window.json"]
    options = prefix_options(EXAMPLES / "learning" / "kth_window.json", tmp_path, **changes)
    out = tmp_path / "out"
    assert launch_cli.main([str(EXAMPLES / "agents" / "reinforce.py"), str(options), "-nr", "2", "-q",
                            "-o", str(out)]) == 0
    assert "probs.json" in check_json_outputs(out)


@pytest.mark.parametrize("name", list(EVALUATED))
def test_evaluation_examples_write_strict_json(name, tmp_path, request):
    _shared_or_skip(EVALUATED[name], request)
    options = prefix_options(EXAMPLES / name, tmp_path)
    out = tmp_path / "out"
    assert evaluate_cli.main([str(options), "-n", "2", "-l", "64", "-p", "first-high_gflops",
                              "shortest-high_gflops", "-q", "-o", str(out)]) == 0
    assert "run.json" in check_json_outputs(out)


@pytest.mark.parametrize("name", SWEPT)
def test_sweep_examples_write_strict_json(name, tmp_path, shared):
    sweep = json.loads((EXAMPLES / name).read_text())
    options = prefix_options((EXAMPLES / name).parent / sweep["options"], tmp_path)
    small = {**{key: values[:1] for key, values in sweep["grid"].items()}, "nb_jobs": [200],
             "policy_pair": sweep["grid"]["policy_pair"][:2]}
    (tmp_path / "sweep.json").write_text(json.dumps({"options": str(options), "grid": small}))
    out = tmp_path / "out"
    assert sweep_cli.main([str(tmp_path / "sweep.json"), "-q", "-o", str(out)]) == 0
    found = check_json_outputs(out)
    assert sum(name.endswith("out_metrics.json") for name in found) == 2
