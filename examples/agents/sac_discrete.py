"""Soft actor-critic for discrete actions (Christodoulou, arXiv:1910.07207, 2019).

Run on the learning toy, save, then reload::

    hdeeprm-launch examples/agents/sac_discrete.py examples/learning/learning.json -nr 150 -om out/sac.pt -o out/sac
    hdeeprm-launch examples/agents/sac_discrete.py examples/learning/learning.json -nr 1 -im out/sac.pt -o out/sac2

With a policy π(·|s) over the actions (softmax), twin critics Q1, Q2 with Polyak-averaged targets
(Fujimoto et al., ICML 2018; Haarnoja et al., arXiv:1812.05905, 2018) and a temperature α:

* critics: y = r + γ (1 − done) Σ_a' π(a'|s') [min_i Q_i,target(s', a') − α log π(a'|s')],
  loss Σ_i MSE(Q_i(s, a), y);
* policy: Σ_a π(a|s) [α log π(a|s) − min_i Q_i(s, a)] (the expectation over the discrete actions
  is computed exactly, no reparameterisation);
* temperature (automatic entropy tuning): loss −log α · (H̄ − H(π(·|s))), with the target entropy
  H̄ = TARGET_ENTROPY_SCALE · log |A| (Christodoulou uses 0.98).

The three losses touch disjoint parameters (the critics' values are detached in the policy loss, π in
the temperature loss), so their sum is minimised by the one Adam optimizer of
:class:`hdeeprm.agents.off_policy.OffPolicyAgent`, which is equivalent to three Adams and keeps the
checkpoint format. Samples from π in ``train`` mode, takes argmax π in ``test`` mode. The agents
of ``hdeeprm-launch`` are given no action mask, so no action is masked.
"""
import math

import torch
from torch import nn

from hdeeprm.agents.learning import mlp
from hdeeprm.agents.off_policy import OffPolicyAgent

#: Target entropy as a fraction of the maximum entropy log |A|.
TARGET_ENTROPY_SCALE = 0.98
#: Initial temperature α.
INITIAL_ALPHA = 1.0


class DiscreteSACAgent(OffPolicyAgent):
    """Discrete SAC: a policy network, twin Q networks with targets, a learnt temperature.

    Args:
        gamma, hidden, action_size, observation_size: As in the original HDeepRM.
        **kwargs: ``lr``, ``seed``, ``options`` offered by ``hdeeprm-launch``.
    """

    def __init__(self, gamma, hidden, action_size, observation_size, **kwargs):
        super().__init__(gamma, hidden, action_size, observation_size, **kwargs)
        self.policy_net = mlp(observation_size, hidden, action_size)
        self.q1, self.q2 = mlp(observation_size, hidden, action_size), mlp(observation_size, hidden, action_size)
        self.q1_target, self.q2_target = self.frozen_copy(self.q1), self.frozen_copy(self.q2)
        self.log_alpha = nn.Parameter(torch.tensor(math.log(INITIAL_ALPHA)))
        self.target_entropy = TARGET_ENTROPY_SCALE * math.log(max(action_size, 1))

    def act(self, x, explore):
        """Sample from π (``explore``), else argmax π; records π as the preference."""
        probs = torch.softmax(self.policy_net(x), dim=-1)
        self.probs.append(probs.tolist())
        if explore:
            p = probs.double().numpy()
            return int(self.rng.choice(self.action_size, p=p / p.sum()))
        return int(torch.argmax(probs))

    def batch_loss(self, batch):
        """Critic, policy and temperature losses of the module docstring, summed."""
        alpha = self.log_alpha.exp()
        with torch.no_grad():
            next_logp = torch.log_softmax(self.policy_net(batch["next_obs"]), dim=-1)
            next_q = torch.min(self.q1_target(batch["next_obs"]), self.q2_target(batch["next_obs"]))
            soft_v = (next_logp.exp() * (next_q - alpha * next_logp)).sum(dim=1)
            y = batch["rewards"] + self.gamma * (1.0 - batch["dones"]) * soft_v
        a = batch["actions"][:, None]
        q1, q2 = self.q1(batch["obs"]), self.q2(batch["obs"])
        critic = nn.functional.mse_loss(q1.gather(1, a)[:, 0], y) + nn.functional.mse_loss(q2.gather(1, a)[:, 0], y)
        logp = torch.log_softmax(self.policy_net(batch["obs"]), dim=-1)
        p = logp.exp()
        policy = (p * (alpha.detach() * logp - torch.min(q1, q2).detach())).sum(dim=1).mean()
        entropy = -(p * logp).sum(dim=1).detach()
        temperature = -(self.log_alpha * (self.target_entropy - entropy)).mean()
        return critic + policy + temperature

    def targets(self):
        """Both critics and their targets."""
        return [(self.q1, self.q1_target), (self.q2, self.q2_target)]
