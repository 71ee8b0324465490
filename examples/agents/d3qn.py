"""Dueling double DQN (D3QN): experience replay, a target network, ε-greedy exploration.

Run on the learning toy, save, then reload greedily::

    hdeeprm-launch examples/agents/d3qn.py examples/learning/learning.json -nr 150 -om out/d3qn.pt -o out/d3qn
    hdeeprm-launch examples/agents/d3qn.py examples/learning/learning.json -nr 1 -im out/d3qn.pt -o out/d3qn-more

* Dueling network (Wang et al., ICML 2016): a shared trunk, a state value V(s) and advantages
  A(s, a); Q(s, a) = V(s) + A(s, a) − mean_a' A(s, a').
* Double DQN target (van Hasselt et al., AAAI 2016): the online network picks
  a* = argmax_a' Q(s', a'), the target network values it:
  y = r + γ (1 − done) Q_target(s', a*).
* Huber loss between Q(s, a) and y (smooth L1, as in Mnih et al., Nature 2015), replay buffer and
  Polyak-averaged target network from :class:`hdeeprm.agents.off_policy.OffPolicyAgent`.
* ε-greedy in ``train`` mode with a linear schedule over training decisions (Mnih et al. 2015):
  ε = EPSILON_END + (EPSILON_START − EPSILON_END) · max(0, 1 − decisions / EPSILON_DECAY);
  the count of decisions is kept in checkpoints, so a reloaded model continues its schedule.
  Greedy (argmax Q) in ``test`` mode.

The agents of ``hdeeprm-launch`` are given no action mask (every policy pair can be applied at
every decision), so neither this agent nor the other examples mask actions.
"""
import torch
from torch import nn

from hdeeprm.agents.off_policy import OffPolicyAgent

#: ε at the first training decision.
EPSILON_START = 1.0
#: ε after EPSILON_DECAY training decisions, and from then on.
EPSILON_END = 0.05
#: Training decisions over which ε falls linearly.
EPSILON_DECAY = 100


class DuelingQNetwork(nn.Module):
    """Q(s, ·) = V(s) + A(s, ·) − mean A(s, ·) on a shared ReLU trunk.

    Args:
        observation_size: Length of the observation.
        hidden: Hidden units.
        action_size: Number of actions.
    """

    def __init__(self, observation_size: int, hidden: int, action_size: int):
        super().__init__()
        self.trunk = nn.Sequential(nn.Linear(observation_size, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                   nn.ReLU())
        self.value = nn.Linear(hidden, 1)
        self.advantage = nn.Linear(hidden, action_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Action values, float32 (..., action_size), from observations (..., observation_size)."""
        h = self.trunk(x)
        a = self.advantage(h)
        return self.value(h) + a - a.mean(dim=-1, keepdim=True)


class D3QNAgent(OffPolicyAgent):
    """Dueling double DQN with a replay buffer and a Polyak-averaged target network.

    Args:
        gamma, hidden, action_size, observation_size: As in the original HDeepRM.
        **kwargs: ``lr``, ``seed``, ``options`` offered by ``hdeeprm-launch``.
    """

    def __init__(self, gamma, hidden, action_size, observation_size, **kwargs):
        super().__init__(gamma, hidden, action_size, observation_size, **kwargs)
        self.q_net = DuelingQNetwork(observation_size, hidden, action_size)
        self.q_target = self.frozen_copy(self.q_net)

    @property
    def epsilon(self) -> float:
        """ε of the next training decision (the linear schedule of the module docstring)."""
        return EPSILON_END + (EPSILON_START - EPSILON_END) * max(0.0, 1.0 - float(self.decisions) / EPSILON_DECAY)

    def act(self, x, explore):
        """ε-greedy on Q (``explore``), else argmax Q; records softmax(Q) as the preference."""
        q = self.q_net(x)
        self.probs.append(torch.softmax(q, dim=-1).tolist())
        if explore and self.rng.random() < self.epsilon:
            return int(self.rng.integers(self.action_size))
        return int(torch.argmax(q))

    def batch_loss(self, batch):
        """Huber loss between Q(s, a) and the double-DQN target."""
        q = self.q_net(batch["obs"]).gather(1, batch["actions"][:, None])[:, 0]
        with torch.no_grad():
            best = self.q_net(batch["next_obs"]).argmax(dim=1, keepdim=True)
            next_q = self.q_target(batch["next_obs"]).gather(1, best)[:, 0]
            y = batch["rewards"] + self.gamma * (1.0 - batch["dones"]) * next_q
        return nn.functional.smooth_l1_loss(q, y)

    def targets(self):
        """The Q network and its target."""
        return [(self.q_net, self.q_target)]
