"""Issue 22, item 4: an agent's end_episode() fails as its decide() does, in hdeeprm-launch and evaluate --train.

The message is one line naming the agent file and line, the exit code 3; ``hdeeprm-evaluate --train``
checks its ``-om`` and that the agent learns before drawing a window.
"""
from __future__ import annotations

import json

import pytest

from hdeeprm.cli import evaluate as evaluate_cli
from hdeeprm.cli import launch as launch_cli
from tests.toy import AGENTS, ROOT, TOY_OPTIONS

LUBLIN_AGENT = ROOT / "examples" / "evaluation" / "lublin_agent.json"
TRAIN = ["-p", "first-high_gflops", "-n", "4", "-l", "60", "--train-episodes", "2", "-q"]

#: A REINFORCE agent whose end_episode misbehaves: ``{body}`` is its body (line 9 of the file).
AGENT = """import sys
sys.path.insert(0, {agents!r})
from reinforce import REINFORCEAgent


class Bad(REINFORCEAgent):

    def end_episode(self):
        {body}
"""


def _agent(tmp_path, body: str):
    path = tmp_path / "agent.py"
    path.write_text(AGENT.format(agents=str(AGENTS), body=body))
    return path


CASES = [
    ("raise ValueError('boom')", 9, "raised ValueError: boom"),
    ("return 'x'", 8, "must return the loss (a number) or None, got 'x'"),
    ("return [1.0]", 8, "must return the loss (a number) or None, got [1.0]"),
]


@pytest.mark.parametrize("body, line, what", CASES)
def test_launch_names_the_agent_line_and_exits_3(tmp_path, capsys, body, line, what):
    pytest.importorskip("torch")
    agent = _agent(tmp_path, body)
    out = tmp_path / "out"
    assert launch_cli.main([str(agent), str(TOY_OPTIONS), "-q", "-o", str(out)]) == 3
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"hdeeprm-launch: error: {agent}:{line}: Bad.end_episode() {what}"
    assert not any(text.startswith("Traceback (most recent call last)") for text in err)
    info = json.loads((out / "run.json").read_text())
    assert info["status"] == "failed" and info["episodes_completed"] == 0


@pytest.mark.parametrize("body, line, what", CASES)
def test_evaluate_train_names_the_agent_line_and_exits_3(tmp_path, capsys, body, line, what):
    pytest.importorskip("torch")
    agent = _agent(tmp_path, body)
    out = tmp_path / "out"
    assert evaluate_cli.main([str(LUBLIN_AGENT), *TRAIN, "--train", str(agent), "-o", str(out)]) == 3
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"hdeeprm-evaluate: error: {agent}:{line}: Bad.end_episode() {what}"
    assert not (out / "model.pt").exists() and not (out / "summary.csv").exists()


def test_a_tensor_loss_is_a_number(tmp_path):
    """A one-element loss (NumPy or torch) is accepted as the number it holds."""
    pytest.importorskip("torch")
    agent = _agent(tmp_path, "import torch; return torch.tensor(0.25)")
    out = tmp_path / "out"
    assert launch_cli.main([str(agent), str(TOY_OPTIONS), "-q", "-o", str(out)]) == 0
    assert (out / "losses.log").read_text() == "0.25\n"


def test_evaluate_train_checks_outmodel_before_any_work(tmp_path, capsys):
    pytest.importorskip("torch")
    folder = tmp_path / "a_folder"
    folder.mkdir()
    out = tmp_path / "out"
    rc = evaluate_cli.main([str(LUBLIN_AGENT), *TRAIN, "--train", str(AGENTS / "reinforce.py"), "-om", str(folder),
                            "-o", str(out)])
    assert (rc, capsys.readouterr().err) == (
        2, f"hdeeprm-evaluate: error: -om {folder}: cannot write the checkpoint there (it is a directory)\n")
    assert not out.exists()


def test_evaluate_train_names_a_non_learning_agent(tmp_path, capsys):
    agent = tmp_path / "classic.py"
    agent.write_text("from hdeeprm.agents.base import Agent\n\n\nclass Fixed(Agent):\n"
                     "    def __init__(self, *args, **kwargs):\n        pass\n\n"
                     "    def decide(self, observation):\n        return 0\n")
    out = tmp_path / "out"
    rc = evaluate_cli.main([str(LUBLIN_AGENT), *TRAIN, "--train", str(agent), "-o", str(out)])
    assert (rc, capsys.readouterr().err) == (
        2, f"hdeeprm-evaluate: error: --train {agent}: Fixed is not a learning agent (it has no save_checkpoint(), "
           f"nothing to train): give an agent file whose class learns, or compare it with -p {agent}\n")
    assert not out.exists()
