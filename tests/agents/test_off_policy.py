"""Off-policy agents: the replay machinery, D3QN and discrete SAC (examples/agents), saved and reloaded."""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
import torch

from hdeeprm.agents.base import instantiate_agent, load_agent_class
from hdeeprm.agents.off_policy import ReplayBuffer
from hdeeprm.config.options import load_options
from hdeeprm.run.launch import launch

from tests.agents.test_training import BEST
from tests.toy import AGENTS, TOY_OPTIONS

EXAMPLES = ["d3qn", "sac_discrete"]


def _agent(name, seed=0, **kwargs):
    cls = load_agent_class(AGENTS / f"{name}.py")
    return instantiate_agent(cls, gamma=0.9, hidden=16, action_size=4, observation_size=6, lr=0.01, seed=seed,
                             options=None, **kwargs)


def _train(agent, episodes, decisions=5, seed=0):
    rng = np.random.default_rng(seed)
    losses = []
    for _ in range(episodes):
        for _ in range(decisions):
            agent.decide(rng.random(6, dtype=np.float32))
            agent.rewarded(float(rng.normal()))
        losses.append(agent.end_episode())
    return losses


def test_replay_buffer_ring_and_terminal_flags():
    buf = ReplayBuffer(3, 2, np.random.default_rng(0))
    for i in range(4):
        buf.add(np.full(2, i), i, float(i), None if i == 3 else np.full(2, i + 1))
    assert len(buf) == 3 and buf.actions.tolist() == [3, 1, 2]   # the oldest (0) overwritten
    assert buf.dones.tolist() == [1.0, 0.0, 0.0] and buf.next_obs[0].tolist() == [0.0, 0.0]
    batch = buf.sample(7)
    assert batch["obs"].shape == (7, 2) and set(batch["actions"].tolist()) <= {1, 2, 3}


def test_transitions_chain_decisions_and_end_terminal():
    agent = _agent("d3qn")
    obs = [np.full(6, i, dtype=np.float32) for i in range(3)]
    for i, o in enumerate(obs):
        agent.decide(o)
        agent.rewarded(float(i))
    agent.end_episode()
    buf = agent.buffer
    assert len(buf) == 3 and buf.rewards[:3].tolist() == [0.0, 1.0, 2.0]
    assert buf.next_obs[0].tolist() == obs[1].tolist() and buf.next_obs[1].tolist() == obs[2].tolist()
    assert buf.dones[:3].tolist() == [0.0, 0.0, 1.0]
    assert int(agent.decisions) == 3 and int(agent.episodes) == 1


def test_d3qn_dueling_and_double_target():
    agent = _agent("d3qn")
    x = torch.rand(5, 6)
    h = agent.q_net.trunk(x)
    # Dueling: the mean of Q over the actions is V(s).
    torch.testing.assert_close(agent.q_net(x).mean(dim=1), agent.q_net.value(h)[:, 0])
    # Double DQN: the online network picks a', the target network values it.
    with torch.no_grad():
        agent.q_target.advantage.bias.add_(torch.tensor([0.0, 5.0, 0.0, 0.0]))
    batch = {"obs": x, "actions": torch.zeros(5, dtype=torch.int64), "rewards": torch.ones(5),
             "next_obs": x, "dones": torch.zeros(5)}
    best = agent.q_net(x).argmax(dim=1, keepdim=True)
    y = 1.0 + 0.9 * agent.q_target(x).gather(1, best)[:, 0]
    q = agent.q_net(x)[:, 0]
    assert agent.batch_loss(batch).item() == pytest.approx(torch.nn.functional.smooth_l1_loss(q, y).item())


def test_d3qn_epsilon_schedule():
    import importlib.util

    spec = importlib.util.spec_from_file_location("d3qn_module", AGENTS / "d3qn.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    agent = _agent("d3qn")
    assert agent.epsilon == module.EPSILON_START
    agent.decisions.fill_(module.EPSILON_DECAY // 2)
    assert agent.epsilon == pytest.approx((module.EPSILON_START + module.EPSILON_END) / 2)
    agent.decisions.fill_(10 * module.EPSILON_DECAY)
    assert agent.epsilon == module.EPSILON_END


def test_sac_temperature_falls_while_the_policy_is_above_the_target_entropy():
    agent = _agent("sac_discrete")
    assert agent.target_entropy == pytest.approx(0.98 * math.log(4))
    _train(agent, 3)
    assert float(agent.log_alpha.detach()) < 0.0   # started at α = 1 with a near-uniform policy (entropy ≈ log 4)


@pytest.mark.parametrize("name", EXAMPLES)
def test_checkpoint_round_trip_gives_the_same_greedy_actions(tmp_path, name):
    agent = _agent(name, seed=1)
    losses = _train(agent, 4)
    assert all(isinstance(v, float) and math.isfinite(v) for v in losses)
    path = tmp_path / f"{name}.pt"
    agent.save_checkpoint(path)
    again = _agent(name, seed=2, run="test")
    again.load_checkpoint(path)
    agent.run = "test"
    observations = np.random.default_rng(3).random((50, 6), dtype=np.float32)
    assert [agent.decide(o) for o in observations] == [again.decide(o) for o in observations]
    assert agent.probs == again.probs
    assert int(again.decisions) == 20 and int(again.episodes) == 4   # the exploration schedule goes on
    for key, value in agent.state_dict().items():
        assert torch.equal(value, again.state_dict()[key]), key   # target networks included


@pytest.mark.slow
@pytest.mark.parametrize("name", EXAMPLES)
def test_learns_the_toys_best_pair_and_reloads_with_im(tmp_path, name):
    """40 seeded training episodes (-om), then a greedy test run of the reloaded model (-im): makespan 5.25 s."""
    model = tmp_path / "m.pt"
    result = launch(str(TOY_OPTIONS), agent_path=str(AGENTS / f"{name}.py"), nb_runs=40, outdir=tmp_path / "train",
                    quiet=True, outmodel=str(model))
    assert all(math.isfinite(m["loss"]) for m in result.metrics)
    test = dataclasses.replace(load_options(TOY_OPTIONS), run="test")
    result = launch(test, agent_path=str(AGENTS / f"{name}.py"), nb_runs=1, outdir=tmp_path / "test", quiet=True,
                    inmodel=str(model))
    assert result.metrics[0]["makespan"] == 5.25
    greedy = json.loads((tmp_path / "test" / "probs.json").read_text())["probs"][0]
    assert int(np.argmax(greedy)) in BEST
