"""Learning agents: returns, run modes, checkpoints."""
from __future__ import annotations

import re
import numpy as np
import pytest
import torch

from hdeeprm.agents.base import instantiate_agent, load_agent_class
from hdeeprm.agents.checkpoint import FORMAT_VERSION, load_checkpoint
from hdeeprm.errors import AgentError, OptionsError
from hdeeprm.agents.learning import LearningAgent, PolicyLearningAgent, ValueLearningAgent, discounted_returns

from tests.toy import AGENTS


def test_lazy_reexport_and_the_original_module_name():
    """``hdeeprm.agents`` exports the learning agents; the original's ``hdeeprm.agent`` still works."""
    import hdeeprm.agent
    import hdeeprm.agents

    assert hdeeprm.agents.LearningAgent is LearningAgent
    assert hdeeprm.agent.PolicyLearningAgent is PolicyLearningAgent
    assert hdeeprm.agent.Agent is hdeeprm.agents.Agent


def test_discounted_returns_by_hand():
    np.testing.assert_allclose(discounted_returns([1.0, 2.0, 3.0], 0.5), [1 + 0.5 * 2 + 0.25 * 3, 2 + 1.5, 3.0])


def test_standardised_returns():
    agent = PolicyLearningAgent(1.0, 8, 3, 4)
    agent.rewards = [1.0, 1.0, 1.0, 1.0]  # returns 4, 3, 2, 1
    z = agent.standardised_returns().numpy()
    g = np.array([4.0, 3.0, 2.0, 1.0])
    np.testing.assert_allclose(z, (g - 2.5) / g.std(), rtol=1e-6)
    # One decision: scaled with the running statistics of the returns seen so far (mean 2.5).
    agent.rewards = [4.0]
    assert agent.standardised_returns().item() == pytest.approx((4.0 - 2.5) / np.sqrt(1.25), rel=1e-6)


def test_first_one_decision_episode_gives_zero():
    agent = PolicyLearningAgent(0.99, 8, 3, 4)
    agent.rewards = [7.0]
    assert agent.standardised_returns().tolist() == [0.0]


@pytest.mark.parametrize("cls", [PolicyLearningAgent, ValueLearningAgent])
def test_train_updates_and_test_is_greedy_and_deterministic(cls):
    agent = cls(0.9, 16, 5, 21, lr=0.01, seed=1)
    obs = np.linspace(0, 1, 21, dtype=np.float32)
    for _ in range(3):
        agent.decide(obs)
        agent.rewarded(1.0)
    before = [p.detach().clone() for p in agent.parameters()]
    loss = agent.end_episode()
    assert isinstance(loss, float)
    assert any(not torch.equal(a, b) for a, b in zip(before, agent.parameters()))
    assert agent.rewards == [] and agent.probs == []
    agent.run = "test"
    actions = {agent.decide(obs) for _ in range(20)}
    assert len(actions) == 1 and len(agent.probs) == 20 and len(agent.probs[0]) == 5
    assert agent.end_episode() is None


def test_bad_run_mode():
    with pytest.raises(OptionsError, match="^run must be 'train' or 'test', got 'eval'$"):
        PolicyLearningAgent(0.9, 8, 2, 3, run="eval")


def test_checkpoint_round_trip(tmp_path):
    a = PolicyLearningAgent(0.9, 16, 5, 21, seed=1)
    obs = np.full(21, 0.5, dtype=np.float32)
    a.decide(obs)
    a.rewarded(1.0)
    a.end_episode()
    path = tmp_path / "sub" / "model.pt"
    a.save_checkpoint(path)
    assert [p.name for p in path.parent.iterdir()] == ["model.pt"]  # no temporary file left
    data = load_checkpoint(path)
    m = data["manifest"]
    assert (m["format_version"], m["agent_class"], m["observation_size"], m["action_size"]) == \
        (FORMAT_VERSION, "PolicyLearningAgent", 21, 5)
    assert m["extra"]["episodes"] == 1
    b = PolicyLearningAgent(0.9, 16, 5, 21, seed=2)
    b.load_checkpoint(path)
    x = torch.as_tensor(obs)
    assert torch.equal(a.forward_policy(x), b.forward_policy(x))
    assert b.optimizer.state_dict()["state"].keys() == a.optimizer.state_dict()["state"].keys()


def test_mismatched_checkpoints_name_both_shapes(tmp_path):
    path = tmp_path / "m.pt"
    PolicyLearningAgent(0.9, 16, 5, 21).save_checkpoint(path)
    with pytest.raises(AgentError, match=re.escape(
            f"checkpoint is for observation size 21 and 5 actions, the agent has observation size 36 and 5 actions "
            f"({path})")):
        PolicyLearningAgent(0.9, 16, 5, 36).load_checkpoint(path)
    with pytest.raises(AgentError, match=re.escape(
            f"checkpoint parameter 'policy_net.0.weight' has shape (16, 21), the agent's has shape (32, 21) ({path})")):
        PolicyLearningAgent(0.9, 32, 5, 21).load_checkpoint(path)
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(AgentError, match=re.escape(
            f"not an HDeepRM checkpoint ({tmp_path / 'junk.pt'}): not an archive written by torch.save "
            "(truncated, or another kind of file)")):
        PolicyLearningAgent(0.9, 16, 5, 21).load_checkpoint(tmp_path / "junk.pt")
    torch.save({"weights": torch.zeros(2)}, tmp_path / "plain.pt")
    with pytest.raises(AgentError, match=re.escape(
            f"not an HDeepRM checkpoint ({tmp_path / 'plain.pt'}): no 'hdeeprm-checkpoint' manifest "
            "(a torch.save file of something else)")):
        PolicyLearningAgent(0.9, 16, 5, 21).load_checkpoint(tmp_path / "plain.pt")


@pytest.mark.parametrize("name", ["reinforce", "actor_critic", "ppo", "d3qn", "sac_discrete"])
def test_example_agents_load_and_decide(name):
    cls = load_agent_class(AGENTS / f"{name}.py")
    agent = instantiate_agent(cls, gamma=0.99, hidden=8, action_size=4, observation_size=21, lr=0.01, seed=0,
                              options=None)
    obs = np.zeros(21, dtype=np.float32)
    for _ in range(4):
        assert 0 <= agent.decide(obs) < 4
        agent.rewarded(-1.0)
    assert isinstance(agent.end_episode(), float)
