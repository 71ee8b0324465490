"""Advantage actor-critic: a shared trunk with a policy head π(a|s) and a value head V(s).

Run on the learning toy::

    hdeeprm-launch examples/agents/actor_critic.py examples/learning/learning.json -nr 300 -o out/a2c

Loss of an episode (standardised discounted returns Ĝ, advantage A = Ĝ − V):
−Σ_t log π(a_t|s_t) · A_t + Σ_t smooth_L1(V(s_t), Ĝ_t). (The original
HDeepRM's actor-critic example crashed at its first decision.)
"""
import torch
from torch import nn

from hdeeprm.agents.learning import PolicyLearningAgent


class ActorCriticAgent(PolicyLearningAgent):
    """Actor-critic with a shared trunk.

    Args:
        gamma, hidden, action_size, observation_size: As in the original HDeepRM.
        **kwargs: ``lr``, ``seed``, ``options`` offered by ``hdeeprm-launch``.
    """

    def __init__(self, gamma, hidden, action_size, observation_size, **kwargs):
        super().__init__(gamma, hidden, action_size, observation_size, **kwargs)
        self.values = []

    def build_policy(self) -> nn.Module:
        """Shared trunk and both heads (kept in one module)."""
        net = nn.Module()
        net.trunk = nn.Sequential(nn.Linear(self.observation_size, self.hidden), nn.ReLU())
        net.actor = nn.Linear(self.hidden, self.action_size)
        net.critic = nn.Linear(self.hidden, 1)
        return net

    def forward_policy(self, observation: torch.Tensor) -> torch.Tensor:
        """Action logits; the state value V(s) is kept for the loss in ``train`` mode."""
        h = self.policy_net.trunk(observation)
        if self.training_run:
            self.values.append(self.policy_net.critic(h).squeeze(-1))
        return self.policy_net.actor(h)

    def loss(self) -> torch.Tensor:
        """Policy loss with the advantage plus the critic's smooth L1 loss."""
        returns = self.standardised_returns()
        values = torch.stack(self.values)
        advantage = returns - values.detach()
        policy = -(torch.stack(self.log_probs) * advantage).sum()
        return policy + nn.functional.smooth_l1_loss(values, returns, reduction="sum")

    def clear(self) -> None:
        """Forget the episode, including the values."""
        super().clear()
        self.values = []
