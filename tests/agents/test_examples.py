"""The learning examples run and print what their docstrings promise."""
from __future__ import annotations

import importlib.util

import pytest

from tests.toy import ROOT


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_sb3_ppo_example(capsys):
    pytest.importorskip("stable_baselines3")
    module = _load(ROOT / "examples" / "sb3_ppo.py")
    assert module.main(["--steps", "512", "--jobs", "20"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "PPO on 20 Lublin jobs, 100 cores, objective avg_job_slowdown, 512 steps"
    assert [line.split()[0] for line in lines[1:]] == ["untrained", "trained", "classic", "classic", "classic"]


@pytest.mark.slow
def test_real_trace_example_runs(capsys):
    from tests.conftest import TRACES

    if not (TRACES / "KTH-SP2-1996-2.1-cln.swf.gz").is_file():
        pytest.skip("KTH-SP2 trace not available")
    module = _load(ROOT / "examples" / "learning" / "train_real_trace.py")
    module.main(["--episodes", "1", "--eval", "1"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "300 jobs, 100 cores, objective avg_job_slowdown, 1 training episodes"
    assert [line.split("(")[1].split(")")[0] for line in lines[1:]] == ["sampled", "sampled", "greedy"]


@pytest.mark.slow
def test_sb3_gpu_provisioning_example(capsys):
    pytest.importorskip("stable_baselines3")
    module = _load(ROOT / "examples" / "sb3_gpu.py")
    assert module.main(["provisioning", "--steps", "256"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "PPO on GpuProvisioning-v0 task easy, 256 steps"
    assert [line.split()[0] for line in lines[1:]] == ["agent", "hold"]
    assert 0.0 <= float(lines[2].split()[2]) <= 1.0
