"""Issue 35, part 4: a checkpoint stores its agent's action table by name; a different table is refused."""
from __future__ import annotations

import logging

import pytest

from hdeeprm.agents.checkpoint import load_checkpoint, save_checkpoint
from hdeeprm.agents.learning import PolicyLearningAgent
from hdeeprm.config.options import Options
from hdeeprm.decision.actions import VOID, action_index, action_name
from hdeeprm.errors import AgentError, OptionsError

TRAINED = ("random-random", "first-contiguous", "void")


def test_the_table_comes_from_the_options_actions():
    """The agent's own actions by name: the options' full action indices, in the agent's order."""
    chosen = [0, action_index("first", "contiguous"), VOID]
    agent = PolicyLearningAgent(0.9, 8, 3, 4, options=Options().replace(actions=chosen))
    assert agent.action_names == TRAINED
    default = Options()
    agent = PolicyLearningAgent(0.9, 8, len(default.actions), 4, options=default)
    assert agent.action_names == tuple(action_name(a) for a in default.actions)
    assert agent.action_names[:2] == ("random-random", "random-high_gflops")
    # No options, or options for another number of actions (a custom head): the table is unknown.
    assert PolicyLearningAgent(0.9, 8, 3, 4).action_names is None
    assert PolicyLearningAgent(0.9, 8, 5, 4, options=Options().replace(actions=chosen)).action_names is None
    with pytest.raises(OptionsError, match=r"^action_names must hold action_size = 3 names, got 2$"):
        PolicyLearningAgent(0.9, 8, 3, 4, action_names=TRAINED[:2])


@pytest.mark.slow
def test_a_checkpoint_round_trip_stores_the_table(tmp_path):
    path = tmp_path / "model.pt"
    chosen = [0, action_index("first", "contiguous"), VOID]
    PolicyLearningAgent(0.9, 8, 3, 4, seed=1, options=Options().replace(actions=chosen)).save_checkpoint(path)
    manifest = load_checkpoint(path)["manifest"]
    assert manifest["actions"] == list(TRAINED) and manifest["action_size"] == 3
    again = PolicyLearningAgent(0.9, 8, 3, 4, seed=2, action_names=TRAINED)
    again.load_checkpoint(path)
    other = PolicyLearningAgent(0.9, 8, 3, 4, seed=3, options=Options().replace(actions=chosen))
    other.load_checkpoint(path)
    assert all(a.equal(b) for a, b in zip(again.state_dict().values(), other.state_dict().values()))


@pytest.mark.slow
def test_a_different_table_is_refused_in_one_line(tmp_path):
    path = tmp_path / "model.pt"
    PolicyLearningAgent(0.9, 8, 3, 4, action_names=TRAINED).save_checkpoint(path)
    here = ("random-random", "first-high_gflops", "void")
    with pytest.raises(AgentError) as caught:
        PolicyLearningAgent(0.9, 8, 3, 4, action_names=here).load_checkpoint(path)
    assert str(caught.value) == (
        f"checkpoint {path}: action 1 is 'first-contiguous' there, 'first-high_gflops' here (the agent's action set "
        "differs from the one the model was trained with: give the run the training's pybatsim.env.actions)")
    assert "\n" not in str(caught.value)
    # One more action here: the first difference is where the checkpoint's table ends.
    with pytest.raises(AgentError, match=r": action 3 is no action there, 'first-random' here \(the agent's"):
        PolicyLearningAgent(0.9, 8, 4, 4, action_names=(*TRAINED, "first-random")).load_checkpoint(path)


def test_an_older_checkpoint_without_a_table_loads_as_before(tmp_path, caplog):
    """Written before the table was stored (no 'actions' in the manifest): checked by action count only."""
    path = tmp_path / "old.pt"
    old = PolicyLearningAgent(0.9, 8, 3, 4, seed=1)
    save_checkpoint(path, old.state_dict(), None, agent_class="PolicyLearningAgent", observation_size=4,
                    action_size=3, extra={"episodes": 0})
    assert "actions" not in load_checkpoint(path)["manifest"]
    with caplog.at_level(logging.WARNING, logger="hdeeprm.agents.checkpoint"):
        PolicyLearningAgent(0.9, 8, 3, 4, action_names=TRAINED).load_checkpoint(path)
    assert f"checkpoint {path} has no action table" in caplog.text
    PolicyLearningAgent(0.9, 8, 3, 4).load_checkpoint(path)     # neither knows its table: as before
    # A checkpoint with a table into an agent that does not know its own: checked by count, as before.
    PolicyLearningAgent(0.9, 8, 3, 4, action_names=TRAINED).save_checkpoint(tmp_path / "new.pt")
    PolicyLearningAgent(0.9, 8, 3, 4).load_checkpoint(tmp_path / "new.pt")
    with pytest.raises(AgentError, match=r"^checkpoint is for observation size 4 and 3 actions, the agent has "):
        PolicyLearningAgent(0.9, 8, 2, 4).load_checkpoint(path)


def test_save_checkpoint_refuses_a_table_of_another_size(tmp_path):
    with pytest.raises(AgentError, match=r"^checkpoint .*m\.pt: 2 action names given for 3 actions$"):
        save_checkpoint(tmp_path / "m.pt", {}, None, agent_class="X", observation_size=1, action_size=3,
                        actions=["void", "random-random"])
