"""The defects a review of the layout found, each pinned by a test (one answer per question)."""
import csv
import json
import logging
import math
import re
import subprocess
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

from hdeeprm.errors import AgentError, OptionsError
from hdeeprm.run.launch import launch

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart.json"
LUBLIN = ROOT / "workloads" / "lublin_500_100.swf"


def _options(tmp_path: Path, **extra) -> Path:
    data = {"seed": 3, "platform_file_path": str(ROOT / "platforms" / "learning.json"),
            "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops"}}, **extra}
    path = tmp_path / "options.json"
    path.write_text(json.dumps(data))
    return path


def _batsim_workload(tmp_path: Path) -> Path:
    """Two 1-core jobs submitted at t = 10 s: one of 8.4 GFLOP, one with no work at all."""
    wl = {"nb_res": 4, "jobs": [{"id": "a", "subtime": 10, "res": 1, "profile": "work"},
                                {"id": "b", "subtime": 10, "res": 1, "profile": "nothing"}],
          "profiles": {"work": {"type": "parallel_homogeneous", "cpu": 8.4e9, "com": 0},
                       "nothing": {"type": "parallel_homogeneous", "cpu": 0, "com": 0}}}
    path = tmp_path / "workload.json"
    path.write_text(json.dumps(wl))
    return path


def test_one_run_gives_one_answer_per_metric(tmp_path):
    """Defect 1: out_metrics.json and out_schedule.csv agree on slowdown and energy."""
    out = tmp_path / "out"
    launch(_options(tmp_path), custom_workload=str(_batsim_workload(tmp_path)), outdir=out, quiet=True)
    metrics = json.loads((out / "out_metrics.json").read_text())
    schedule = next(csv.DictReader(open(out / "out_schedule.csv")))
    jobs = {r["job_id"]: r for r in csv.DictReader(open(out / "out_jobs.csv"))}
    assert jobs["b"]["execution_time"] == "0.000000" and jobs["b"]["stretch"] == "inf"
    assert float(schedule["max_slowdown"]) == math.inf   # the CSV keeps Batsim's inf; the JSON writes null and why
    assert metrics["max_slowdown"] is None and metrics["undefined"]["max_slowdown"].startswith("1 job ran 0 s")
    assert metrics["energy"] == pytest.approx(float(schedule["consumed_joules"]), abs=1e-6)  # CSV: %f
    # Job "a" runs 8.4 GFLOP on a 4.4 GFLOP/s core from t = 10 s; energy is counted from the first
    # submission (t = 10 s), so the 10 idle seconds before it are not in either file.
    assert float(jobs["a"]["starting_time"]) == 10.0
    assert metrics["makespan"] == pytest.approx(10 + 8.4 / 4.4, rel=1e-12)
    assert metrics["energy"] < metrics["makespan"] * 4 * 45   # far less than 4 cores at full power


def test_cli_and_launcher_convert_with_the_same_defaults(tmp_path):
    """Defect 2: job 0 of the shipped trace gets one walltime from both commands."""
    from hdeeprm.cli.workload import main as workload_main

    out = tmp_path / "run"
    launch(str(QUICKSTART), outdir=out, quiet=True)
    launched = next(csv.DictReader(open(out / "out_jobs.csv")))   # rows in completion order
    converted = tmp_path / "w.json"
    assert workload_main(["convert", str(LUBLIN), "-o", str(converted),
                          "--platform", str(ROOT / "platforms" / "gaia_mini.json")]) == 0
    jobs = {j["id"]: j for j in json.loads(converted.read_text())["jobs"]}
    assert float(launched["requested_time"]) == jobs[launched["job_id"]].get("walltime", -1) == -1


def test_swf_conversion_options_with_a_batsim_json_workload_are_rejected(tmp_path):
    """Defect 3: workload.mem_bw_choices cannot apply to a Batsim JSON workload: say so."""
    options = _options(tmp_path, workload={"mem_bw_choices": [8]})
    wl = _batsim_workload(tmp_path)
    with pytest.raises(OptionsError, match=re.escape(
            f"workload.mem_bw_choices only applies to SWF traces, but the workload {wl} is a Batsim JSON "
            f"workload whose jobs carry their own values: remove workload.mem_bw_choices from the options or "
            f"use an SWF trace ({options})")):
        launch(options, custom_workload=str(wl), outdir=tmp_path / "o", quiet=True)


@pytest.mark.slow
def test_import_hdeeprm_exports_and_registers_without_heavy_imports():
    """Defect 4: the public names; the env registered once Gymnasium loads; neither torch nor Gymnasium imported."""
    code = ("import sys, hdeeprm; assert 'gymnasium' not in sys.modules; import gymnasium; "
            "assert 'hdeeprm/HDeepRM-v0' in gymnasium.registry; "
            "assert 'torch' not in sys.modules and 'hdeeprm.run.launch' not in sys.modules; "
            "assert 'hdeeprm/HDeepRM-JobSlot-v0' in gymnasium.registry; "
            "names = [n for n in hdeeprm.__all__ if n not in ('ENV_ID', 'JOB_SLOT_ENV_ID', 'GPU_PLACEMENT_ENV_ID', "
            "'GPU_PROVISIONING_ENV_ID', 'GPU_PROVISIONING_V1_ENV_ID', 'GPU_JOB_SLOT_ENV_ID', 'RLSCHEDULER_ENV_ID', "
            "'BACKFILL_SLOT_ENV_ID', '__version__', "
            "'register_envs')]; "
            "assert all(getattr(hdeeprm, n) is not None for n in names); print(len(names))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert int(done.stdout) == 30   # 13 names, then the kernel, the GPU API and the run result (17)
    first = subprocess.run([sys.executable, "-c", "import gymnasium, hdeeprm; "
                            "print('hdeeprm/HDeepRM-v0' in gymnasium.registry)"], capture_output=True, text=True)
    assert first.stdout == "True\n"


def test_bare_make_runs_on_the_quickstart_inputs():
    """Defect 4: ``gymnasium.make("hdeeprm/HDeepRM-v0")`` needs no argument."""
    import hdeeprm  # noqa: F401

    env = gymnasium.make("hdeeprm/HDeepRM-v0")
    obs, info = env.reset(seed=0)
    inner = env.unwrapped
    assert inner.hierarchy.nb_cores == 104 and len(inner.workload.jobs) == 500
    assert obs.shape == (inner.hierarchy.nb_nodes + inner.hierarchy.nb_processors + 3 * 104 + 21,)
    assert env.action_space.n == 36 and info["queue"] >= 1


def test_launch_leaves_logging_and_torch_to_the_application(tmp_path, caplog):
    """Defect 8: no basicConfig from the library; records go to the package logger."""
    import torch

    root_handlers = list(logging.getLogger().handlers)
    state = torch.random.get_rng_state()
    with caplog.at_level(logging.INFO, logger="hdeeprm"):
        launch(str(ROOT / "examples" / "learning" / "learning.json"), agent_path=str(
            ROOT / "examples" / "agents" / "reinforce.py"), nb_runs=2, outdir=tmp_path, quiet=True)
    assert logging.getLogger().handlers == root_handlers
    assert torch.equal(torch.random.get_rng_state(), state)   # seeded inside fork_rng only
    assert [r.name for r in caplog.records] == ["hdeeprm.run.launch"] * 3
    assert caplog.records[1].getMessage().startswith("episode 0: makespan ")


def _pstates_used(outdir: Path) -> set[int]:
    rows = list(csv.DictReader(open(outdir / "out_pstate_changes.csv")))
    return {int(r["new_pstate"]) for r in rows}


def test_contention_model_is_selectable(tmp_path):
    """Defect 9: the options' ``contention`` reaches the run; ``none`` never slows a core to P1."""
    base = json.loads(QUICKSTART.read_text())
    outs = {}
    for model in ("hdeeprm", "none"):
        path = tmp_path / f"{model}.json"
        path.write_text(json.dumps({**base, "contention": model,
                                    "workload_file_path": str(LUBLIN),
                                    "platform_file_path": str(ROOT / "platforms" / "gaia_mini.json")}))
        outs[model] = launch(path, outdir=tmp_path / model, quiet=True).metrics[-1]
        assert json.loads((tmp_path / model / "run.json").read_text())["options"]["contention"] == model
    assert 1 in _pstates_used(tmp_path / "hdeeprm") and 1 not in _pstates_used(tmp_path / "none")
    assert outs["none"]["makespan"] <= outs["hdeeprm"]["makespan"]
    env = gymnasium.make("hdeeprm/HDeepRM-v0", contention="none")
    assert env.unwrapped.options.contention == "none"
    with pytest.raises(OptionsError, match=re.escape(
            "unknown contention model 'hdeprm' (valid: hdeeprm, none; did you mean 'hdeeprm'?)")):
        gymnasium.make("hdeeprm/HDeepRM-v0", contention="hdeprm").reset(seed=0)


@pytest.mark.parametrize("value", [1.9, True, "1", None])
def test_actions_must_be_integers(value):
    """An agent's non-integer action is an error, never truncated to an integer."""
    from hdeeprm.run.loop import as_action

    with pytest.raises(AgentError, match=re.escape(f"the action must be an integer in [0, 4], got {value!r}")):
        as_action(value, 5)
    assert as_action(np.int64(3), 5) == 3 and as_action(np.array([4]), 5) == 4


def test_a_numpy_action_out_of_range_is_shown_as_a_plain_number():
    """Vector envs hand NumPy scalars to step(): the error shows 7, not np.int64(7)."""
    from hdeeprm.run.loop import as_action

    with pytest.raises(AgentError, match=re.escape("the action must be an integer in [0, 4], got 7")):
        as_action(np.int64(7), 5)
