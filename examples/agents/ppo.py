"""PPO (Schulman et al. 2017) adapted to HDeepRM's one-update-per-episode loop.

Run on the learning toy::

    hdeeprm-launch examples/agents/ppo.py examples/learning/learning.json -nr 200 -o out/ppo

At the end of each episode the recorded (observation, action, log π_old)
triples are replayed for ``EPOCHS`` passes of the clipped surrogate objective
with advantages Ĝ − V(s) (standardised discounted returns Ĝ), plus a value loss
and an entropy bonus.
"""
import torch
from torch import nn

from hdeeprm.agents.learning import PolicyLearningAgent

#: Passes over an episode's decisions per update.
EPOCHS = 4
#: PPO clipping range ε.
CLIP = 0.2
#: Weight of the value loss.
VALUE_COEF = 0.5
#: Weight of the entropy bonus.
ENTROPY_COEF = 0.01


class PPOAgent(PolicyLearningAgent):
    """PPO with separate policy and value networks.

    Args:
        gamma, hidden, action_size, observation_size: As in the original HDeepRM.
        **kwargs: ``lr``, ``seed``, ``options`` offered by ``hdeeprm-launch``.
    """

    def __init__(self, gamma, hidden, action_size, observation_size, **kwargs):
        super().__init__(gamma, hidden, action_size, observation_size, **kwargs)
        self.value_net = nn.Sequential(nn.Linear(observation_size, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.observations, self.actions = [], []

    def decide(self, observation):
        """Sample (train) or take the mode (test); keeps what the update replays."""
        action = super().decide(observation)
        if self.training_run:
            self.observations.append(torch.as_tensor(observation, dtype=torch.float32))
            self.actions.append(action)
        return action

    def _surrogate(self, obs, actions, old_logp, returns):
        dist = torch.distributions.Categorical(logits=self.forward_policy(obs))
        logp = dist.log_prob(actions)
        values = self.value_net(obs).squeeze(-1)
        adv = returns - values.detach()
        ratio = torch.exp(logp - old_logp)
        policy = -torch.min(ratio * adv, ratio.clamp(1 - CLIP, 1 + CLIP) * adv).mean()
        value = nn.functional.mse_loss(values, returns)
        return policy + VALUE_COEF * value - ENTROPY_COEF * dist.entropy().mean()

    def end_episode(self):
        """``EPOCHS`` clipped-surrogate updates on the episode; returns the first pass's loss."""
        try:
            if not self.training_run or not self.rewards:
                return None
            returns = self.standardised_returns()
            obs = torch.stack(self.observations)
            actions = torch.as_tensor(self.actions)
            old_logp = torch.stack(self.log_probs).detach()
            first = None
            for _ in range(EPOCHS):
                loss = self._surrogate(obs, actions, old_logp, returns)
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                first = float(loss.detach()) if first is None else first
            self.episodes += 1
            return first
        finally:
            self.clear()

    def clear(self):
        """Forget the episode, including the replay data."""
        super().clear()
        self.observations, self.actions = [], []
