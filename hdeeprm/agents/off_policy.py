"""Off-policy learning agents: a replay buffer of transitions and several updates per episode.

* :class:`ReplayBuffer`: a fixed-size ring of transitions (s, a, r, s', done), NumPy arrays,
  sampled uniformly (experience replay, Lin 1992; Mnih et al., Nature 518, 2015).
* :class:`OffPolicyAgent`: a :class:`~hdeeprm.agents.learning.LearningAgent` that turns the
  decisions of an episode into transitions (the observation of decision t + 1 is the next state of
  decision t; the last decision of an episode is terminal), stores them in its buffer and, at the
  end of each episode in ``train`` mode, makes ``max(min_updates, decisions × replay_ratio)``
  gradient steps on sampled mini-batches, each followed by a Polyak update of the target networks
  (θ' ← τ θ + (1 − τ) θ', Lillicrap et al., ICLR 2016). Subclasses give :meth:`act` and
  :meth:`batch_loss`; the example agents ``examples/agents/d3qn.py`` and
  ``examples/agents/sac_discrete.py`` are built on it.

The buffer is not saved in checkpoints (as in Stable-Baselines3 by default); the networks, their
targets, the optimizer and the count of decisions are.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from hdeeprm.agents.learning import LearningAgent


class ReplayBuffer:
    """Transitions in a ring of ``capacity`` rows; the oldest are overwritten.

    Args:
        capacity: Maximum number of transitions kept.
        observation_size: Length of an observation.
        rng: Generator of the sampled indices.
    """

    def __init__(self, capacity: int, observation_size: int, rng: np.random.Generator) -> None:
        self.capacity = int(capacity)
        self.obs = np.zeros((self.capacity, observation_size), dtype=np.float32)
        self.next_obs = np.zeros_like(self.obs)
        self.actions = np.zeros(self.capacity, dtype=np.int64)
        self.rewards = np.zeros(self.capacity, dtype=np.float32)
        self.dones = np.zeros(self.capacity, dtype=np.float32)
        self.size = 0
        self._next = 0
        self._rng = rng

    def __len__(self) -> int:
        return self.size

    def add(self, obs: np.ndarray, action: int, reward: float, next_obs: np.ndarray | None) -> None:
        """Store one transition; ``next_obs`` None marks the end of the episode (terminal)."""
        i = self._next
        self.obs[i] = obs
        self.actions[i] = action
        self.rewards[i] = reward
        self.dones[i] = next_obs is None
        self.next_obs[i] = 0.0 if next_obs is None else next_obs
        self._next = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, batch_size: int) -> dict[str, torch.Tensor]:
        """A uniform mini-batch (with replacement) of ``batch_size`` transitions.

        Returns:
            ``obs`` and ``next_obs`` float32 (B, observation_size), ``actions`` int64 (B,),
            ``rewards`` and ``dones`` float32 (B,).
        """
        idx = self._rng.integers(self.size, size=batch_size)
        return {"obs": torch.from_numpy(self.obs[idx]), "actions": torch.from_numpy(self.actions[idx]),
                "rewards": torch.from_numpy(self.rewards[idx]), "next_obs": torch.from_numpy(self.next_obs[idx]),
                "dones": torch.from_numpy(self.dones[idx])}


class OffPolicyAgent(LearningAgent):
    """Replay, mini-batch updates at the end of each episode and Polyak-averaged target networks.

    Args:
        gamma, hidden, action_size, observation_size: As in the original HDeepRM.
        buffer_size: Transitions kept in the replay buffer.
        batch_size: Transitions per gradient step.
        replay_ratio: Gradient steps per decision of the episode.
        min_updates: Fewest gradient steps per training episode (episodes of one decision, as the
            learning toy's, still learn).
        tau: Polyak coefficient τ of the target networks (1: copy after every step).
        **kwargs: ``lr``, ``run``, ``seed``, ``options`` (see :class:`LearningAgent`).

    Attributes:
        decisions: Decisions taken in ``train`` mode so far (a buffer: kept in checkpoints, it
            drives exploration schedules).
    """

    def __init__(self, gamma: float = 0.99, hidden: int = 128, action_size: int = 1, observation_size: int = 1,
                 *, buffer_size: int = 100_000, batch_size: int = 64, replay_ratio: float = 1.0,
                 min_updates: int = 8, tau: float = 0.01, **kwargs: Any) -> None:
        super().__init__(gamma, hidden, action_size, observation_size, **kwargs)
        self.batch_size = int(batch_size)
        self.replay_ratio = float(replay_ratio)
        self.min_updates = int(min_updates)
        self.tau = float(tau)
        self.rng = np.random.default_rng(kwargs.get("seed"))
        self.buffer = ReplayBuffer(buffer_size, self.observation_size, self.rng)
        self.register_buffer("decisions", torch.zeros((), dtype=torch.int64))
        self._pending: tuple[np.ndarray, int] | None = None   # last decision, waiting for its next state
        self._episode_decisions = 0

    # ------------------------------------------------------------ to give in subclasses
    def act(self, x: torch.Tensor, explore: bool) -> int:
        """The action for observation ``x`` (float32 (observation_size,)); appends to ``probs``."""
        raise NotImplementedError

    def batch_loss(self, batch: dict[str, torch.Tensor]) -> torch.Tensor:
        """The loss of a mini-batch (see :meth:`ReplayBuffer.sample`), a scalar with gradients."""
        raise NotImplementedError

    def targets(self) -> list[tuple[nn.Module, nn.Module]]:
        """``(online, target)`` network pairs the Polyak update follows."""
        return []

    # ------------------------------------------------------------ shared machinery
    @staticmethod
    def frozen_copy(net: nn.Module) -> nn.Module:
        """A copy of ``net`` whose parameters take no gradient (a target network)."""
        import copy

        target = copy.deepcopy(net)
        target.requires_grad_(False)
        return target

    def make_optimizer(self) -> torch.optim.Optimizer:
        """Adam with ``lr`` over the trainable parameters (target networks excluded)."""
        return torch.optim.Adam([p for p in self.parameters() if p.requires_grad], lr=self.lr)

    def decide(self, observation: np.ndarray) -> int:
        """Act (exploring in ``train`` mode) and, in ``train`` mode, complete the previous transition."""
        obs = np.asarray(observation, dtype=np.float32)
        x = torch.from_numpy(obs)
        if not self.training_run:
            with torch.no_grad():
                return self.act(x, explore=False)
        if self._pending is not None:
            self._store(obs)
        with torch.no_grad():
            action = self.act(x, explore=True)
        self._pending = (obs, action)
        self.decisions += 1
        self._episode_decisions += 1
        return action

    def _store(self, next_obs: np.ndarray | None) -> None:
        prev_obs, prev_action = self._pending
        if len(self.rewards) >= self._episode_decisions:   # no reward (no objective): nothing to learn
            self.buffer.add(prev_obs, prev_action, self.rewards[self._episode_decisions - 1], next_obs)
        self._pending = None

    def end_episode(self) -> float | None:
        """Store the terminal transition, then make the episode's gradient steps.

        Returns:
            The mean mini-batch loss, or None in ``test`` mode or when nothing was stored.
        """
        try:
            if not self.training_run or not self.rewards:
                return None
            if self._pending is not None:
                self._store(None)
            if len(self.buffer) == 0:
                return None
            steps = max(self.min_updates, int(round(self._episode_decisions * self.replay_ratio)))
            total = 0.0
            for _ in range(steps):
                loss = self.batch_loss(self.buffer.sample(self.batch_size))
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
                total += float(loss.detach())
                with torch.no_grad():
                    for online, target in self.targets():
                        for p, q in zip(online.parameters(), target.parameters()):
                            q.mul_(1.0 - self.tau).add_(p, alpha=self.tau)
            self.episodes += 1
            return total / steps
        finally:
            self.clear()

    def clear(self) -> None:
        """Forget the episode (the buffer keeps its transitions)."""
        super().clear()
        self._pending = None
        self._episode_decisions = 0
