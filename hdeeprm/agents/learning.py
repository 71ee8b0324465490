"""Learning agents (PyTorch), with the original HDeepRM's API.

* :class:`LearningAgent` — rewards of an episode, discounted and standardised
  returns, :meth:`~LearningAgent.loss`, one update per episode in
  :meth:`~LearningAgent.end_episode`, ``train``/``test`` run modes, action
  preferences recorded for ``probs.json``, checkpoints.
* :class:`PolicyLearningAgent` — a stochastic policy π(a|s) (REINFORCE loss by
  default); samples in ``train``, takes the most probable action in ``test``.
* :class:`ValueLearningAgent` — action values Q(s, a) fitted to the
  Monte-Carlo returns; ε-greedy in ``train``, greedy in ``test``.

A user's ``agent.py`` subclasses one of them; the constructor receives
``(gamma, hidden, action_size, observation_size)`` as in the original, and
may also declare ``lr``, ``seed`` and ``options`` (or take ``**kwargs`` and
pass them on), see :func:`hdeeprm.agents.base.instantiate_agent`. Example files:
``examples/agents/``.

Agents are :class:`torch.nn.Module`: networks assigned as attributes are
registered, so :meth:`~LearningAgent.save_checkpoint` saves them and the
optimizer (Adam with ``lr`` by default, created on first use) trains them.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from hdeeprm.agents.base import Agent
from hdeeprm.agents.checkpoint import check_compatible, load_checkpoint, save_checkpoint
from hdeeprm.errors import OptionsError

#: Added to standard deviations before dividing.
EPS = 1e-8


def mlp(inputs: int, hidden: int, outputs: int) -> nn.Sequential:
    """The default network: inputs → hidden (ReLU) → hidden (ReLU) → outputs."""
    return nn.Sequential(nn.Linear(inputs, hidden), nn.ReLU(), nn.Linear(hidden, hidden), nn.ReLU(),
                         nn.Linear(hidden, outputs))


def discounted_returns(rewards: list[float] | np.ndarray, gamma: float) -> np.ndarray:
    """G_t = r_t + γ G_{t+1}, float64, shape (len(rewards),)."""
    r = np.asarray(rewards, dtype=np.float64)
    out = np.empty_like(r)
    acc = 0.0
    for t in range(r.size - 1, -1, -1):
        acc = r[t] + gamma * acc
        out[t] = acc
    return out


def _action_names(names: Sequence[str] | None, options: Any, action_size: int) -> tuple[str, ...] | None:
    """The action table of a learning agent (see ``action_names`` of :class:`LearningAgent`).

    Raises:
        OptionsError: ``names`` does not hold ``action_size`` names.
    """
    if names is not None:
        names = tuple(str(n) for n in names)
        if len(names) != action_size:
            raise OptionsError(f"action_names must hold action_size = {action_size} names, got {len(names)}")
        return names
    chosen = getattr(options, "action_names", None)   # the options' action set by name
    if chosen is None or len(chosen) != action_size:
        return None
    return tuple(chosen)


class LearningAgent(Agent, nn.Module):
    """Base of learning agents: returns, one update per episode, run modes, checkpoints.

    Args:
        gamma: Discount factor in [0, 1].
        hidden: Hidden units of the default networks.
        action_size: Number of actions (size of the action set).
        observation_size: Length of the observation vector.
        lr: Learning rate of the default Adam optimizer.
        run: ``"train"`` (explore and update) or ``"test"`` (greedy, deterministic, no
            update); taken from ``options.run`` when not given.
        seed: Seeds torch's global generator before the networks are built (so the
            initial weights and the sampled actions are reproducible).
        options: The run's :class:`~hdeeprm.config.options.Options` (for ``run``, and for
            the action table when ``action_names`` is not given).
        action_names: The agent's action table by name (``action_size`` names, e.g.
            ``"first-high_gflops"``, ``"void"``, in the order of the model's outputs), stored
            in checkpoints and checked when one is loaded (:mod:`hdeeprm.agents.checkpoint`).
            Default: the names of ``options.actions`` when it has ``action_size`` actions,
            else None (unknown: checkpoints are then checked by action count only).

    Attributes:
        rewards: Rewards of the current episode, one per decision.
        probs: Action preferences at each decision of the current episode
            (probabilities, length action_size each), written to ``probs.json``.
        episodes: Episodes trained so far (kept in checkpoints).
        action_names: The action table by name (tuple), or None when unknown.

    Raises:
        OptionsError: ``run`` is neither "train" nor "test", gamma is out of [0, 1], or
            ``action_names`` does not hold ``action_size`` names.
    """

    def __init__(self, gamma: float = 0.99, hidden: int = 128, action_size: int = 1, observation_size: int = 1,
                 *, lr: float = 1e-3, run: str | None = None, seed: int | None = None, options: Any = None,
                 action_names: Sequence[str] | None = None, **_unused: Any) -> None:
        nn.Module.__init__(self)
        if run is None:
            run = getattr(options, "run", "train")
        if run not in ("train", "test"):
            raise OptionsError(f"run must be 'train' or 'test', got {run!r}")
        if not 0.0 <= gamma <= 1.0:
            raise OptionsError(f"gamma must be in [0, 1], got {gamma}")
        if seed is not None:
            torch.manual_seed(seed)
        self.gamma = float(gamma)
        self.hidden = int(hidden)
        self.action_size = int(action_size)
        self.observation_size = int(observation_size)
        self.action_names = _action_names(action_names, options, self.action_size)
        self.lr = float(lr)
        self.run = run
        self.rewards: list[float] = []
        self.probs: list[list[float]] = []
        self._optimizer: torch.optim.Optimizer | None = None
        # Running statistics of the returns (for one-decision episodes, see standardised_returns).
        self.register_buffer("return_count", torch.zeros((), dtype=torch.float64))
        self.register_buffer("return_mean", torch.zeros((), dtype=torch.float64))
        self.register_buffer("return_m2", torch.zeros((), dtype=torch.float64))
        self.register_buffer("episodes", torch.zeros((), dtype=torch.int64))

    # ------------------------------------------------------------ run modes
    @property
    def training_run(self) -> bool:
        """True in ``train`` mode."""
        return self.run == "train"

    @property
    def optimizer(self) -> torch.optim.Optimizer:
        """The optimizer, built on first use by :meth:`make_optimizer`."""
        if self._optimizer is None:
            self._optimizer = self.make_optimizer()
        return self._optimizer

    def make_optimizer(self) -> torch.optim.Optimizer:
        """Adam over all parameters with ``lr``; override for another optimizer."""
        return torch.optim.Adam(self.parameters(), lr=self.lr)

    @staticmethod
    def as_tensor(observation: np.ndarray) -> torch.Tensor:
        """An observation as a float32 tensor, shape (observation_size,)."""
        return torch.as_tensor(np.asarray(observation, dtype=np.float32))

    # ------------------------------------------------------------ returns
    def rewarded(self, reward: float) -> None:
        """Keep the reward of the last action."""
        self.rewards.append(float(reward))

    def discounted_returns(self) -> np.ndarray:
        """Discounted returns of the current episode, float64, shape (nb_decisions,)."""
        return discounted_returns(self.rewards, self.gamma)

    def standardised_returns(self) -> torch.Tensor:
        """Discounted returns scaled to mean 0 and standard deviation 1, float32, shape (nb_decisions,).

        With two or more decisions the episode's own mean and standard deviation
        are used (the original HDeepRM's choice). With one decision that would
        always give 0 (nothing learnt), so the running mean and standard
        deviation of the returns of all previous episodes serve instead (a
        baseline); the very first such episode gives 0. Running statistics are
        updated with every episode and saved in checkpoints.
        """
        g = self.discounted_returns()
        count = float(self.return_count)
        if g.size >= 2:
            std = g.std()
            z = (g - g.mean()) / (std + EPS) if std > EPS else g - g.mean()
        elif count > 0:
            std = np.sqrt(float(self.return_m2) / count)
            z = (g - float(self.return_mean)) / (std if std > EPS else 1.0)
        else:
            z = np.zeros_like(g)
        self._update_running(g)
        return torch.as_tensor(z, dtype=torch.float32)

    def _update_running(self, g: np.ndarray) -> None:
        """Merge the returns ``g`` into the running statistics (Chan et al. parallel update)."""
        if g.size == 0:
            return
        nb_a, mean_a, m2_a = float(self.return_count), float(self.return_mean), float(self.return_m2)
        nb_b, mean_b = float(g.size), float(g.mean())
        m2_b = float(((g - mean_b) ** 2).sum())
        n = nb_a + nb_b
        delta = mean_b - mean_a
        self.return_count.fill_(n)
        self.return_mean.fill_(mean_a + delta * nb_b / n)
        self.return_m2.fill_(m2_a + m2_b + delta * delta * nb_a * nb_b / n)

    # ------------------------------------------------------------ learning
    def loss(self) -> torch.Tensor:
        """The loss of the finished episode (a scalar tensor with gradients)."""
        raise NotImplementedError

    def clear(self) -> None:
        """Forget the current episode (rewards, preferences and what subclasses recorded)."""
        self.rewards = []
        self.probs = []

    def end_episode(self) -> float | None:
        """Update the networks once from the finished episode (``train`` mode).

        Returns:
            The loss before the update, or None in ``test`` mode or when the
            episode had no decision.
        """
        try:
            if not self.training_run or not self.rewards:
                return None
            loss = self.loss()
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.episodes += 1
            return float(loss.detach())
        finally:
            self.clear()

    # ------------------------------------------------------------ checkpoints
    def save_checkpoint(self, path: str | Path) -> None:
        """Save the networks, the optimizer and the action table (see :mod:`hdeeprm.agents.checkpoint`), atomically.

        Args:
            path: Destination file (its folder is created if needed).
        """
        save_checkpoint(path, self.state_dict(), self.optimizer.state_dict(), agent_class=type(self).__name__,
                        observation_size=self.observation_size, action_size=self.action_size,
                        actions=getattr(self, "action_names", None),
                        extra={"gamma": self.gamma, "hidden": self.hidden, "lr": self.lr,
                               "episodes": int(self.episodes)})

    def load_checkpoint(self, path: str | Path) -> None:
        """Load networks and optimizer saved by :meth:`save_checkpoint`.

        Args:
            path: The checkpoint file.

        Raises:
            AgentError: not a checkpoint; made for another action table (one line naming
                the first differing action), other sizes or another network (the message
                names both shapes).
        """
        data = load_checkpoint(path)
        check_compatible(data, self.state_dict(), observation_size=self.observation_size,
                         action_size=self.action_size, path=path, actions=getattr(self, "action_names", None))
        self.load_state_dict(data["model_state_dict"])
        if data.get("optimizer_state_dict") is not None:
            self.optimizer.load_state_dict(data["optimizer_state_dict"])


class PolicyLearningAgent(LearningAgent):
    """A stochastic policy π(a|s) trained by REINFORCE (override :meth:`loss` for others).

    The default network (:meth:`build_policy`) is :func:`mlp`; override
    :meth:`build_policy` or :meth:`forward_policy` for another.

    Attributes:
        log_probs: log π(a_t|s_t) of the sampled actions (with gradients), ``train`` mode.
    """

    def __init__(self, gamma: float = 0.99, hidden: int = 128, action_size: int = 1, observation_size: int = 1,
                 **kwargs: Any) -> None:
        super().__init__(gamma, hidden, action_size, observation_size, **kwargs)
        self.log_probs: list[torch.Tensor] = []
        self.policy_net = self.build_policy()

    def build_policy(self) -> nn.Module:
        """The policy network: observation (observation_size,) → logits (action_size,)."""
        return mlp(self.observation_size, self.hidden, self.action_size)

    def forward_policy(self, observation: torch.Tensor) -> torch.Tensor:
        """Action logits, float32, shape (action_size,)."""
        return self.policy_net(observation)

    def decide(self, observation: np.ndarray) -> int:
        """Sample an action from π (``train``) or take the most probable one (``test``)."""
        x = self.as_tensor(observation)
        if not self.training_run:
            with torch.no_grad():
                probs = torch.softmax(self.forward_policy(x), dim=-1)
            self.probs.append(probs.tolist())
            return int(torch.argmax(probs))
        # Categorical sampling written out: torch.distributions costs more than the network here.
        log_p = torch.log_softmax(self.forward_policy(x), dim=-1)
        probs = log_p.detach().exp()
        action = int(torch.multinomial(probs, 1))
        self.log_probs.append(log_p[action])
        self.probs.append(probs.tolist())
        return action

    def loss(self) -> torch.Tensor:
        """REINFORCE: −Σ_t log π(a_t|s_t) · Ĝ_t with standardised returns Ĝ."""
        returns = self.standardised_returns()
        return -(torch.stack(self.log_probs) * returns).sum()

    def clear(self) -> None:
        """Forget the episode, including the log-probabilities."""
        super().clear()
        self.log_probs = []


class ValueLearningAgent(LearningAgent):
    """Action values Q(s, a) fitted to the standardised Monte-Carlo returns.

    Args:
        epsilon: Probability of a uniformly random action in ``train`` mode.
        (others): See :class:`LearningAgent`.

    Attributes:
        values: Q(s_t, a_t) of the chosen actions (with gradients), ``train`` mode.
        probs: Here the softmax of Q at each decision (a preference, not a policy).
    """

    def __init__(self, gamma: float = 0.99, hidden: int = 128, action_size: int = 1, observation_size: int = 1,
                 *, epsilon: float = 0.1, **kwargs: Any) -> None:
        super().__init__(gamma, hidden, action_size, observation_size, **kwargs)
        self.epsilon = float(epsilon)
        self.values: list[torch.Tensor] = []
        self.value_net = self.build_value()
        self._rng = np.random.default_rng(kwargs.get("seed"))

    def build_value(self) -> nn.Module:
        """The value network: observation (observation_size,) → Q (action_size,)."""
        return mlp(self.observation_size, self.hidden, self.action_size)

    def forward_value(self, observation: torch.Tensor) -> torch.Tensor:
        """Action values, float32, shape (action_size,)."""
        return self.value_net(observation)

    def decide(self, observation: np.ndarray) -> int:
        """ε-greedy on Q (``train``), greedy (``test``)."""
        x = self.as_tensor(observation)
        if not self.training_run:
            with torch.no_grad():
                q = self.forward_value(x)
            self.probs.append(torch.softmax(q, dim=-1).tolist())
            return int(torch.argmax(q))
        q = self.forward_value(x)
        if self._rng.random() < self.epsilon:
            action = int(self._rng.integers(self.action_size))
        else:
            action = int(torch.argmax(q.detach()))
        self.values.append(q[action])
        self.probs.append(torch.softmax(q.detach(), dim=-1).tolist())
        return action

    def loss(self) -> torch.Tensor:
        """Mean squared error between Q(s_t, a_t) and the standardised returns."""
        return nn.functional.mse_loss(torch.stack(self.values), self.standardised_returns())

    def clear(self) -> None:
        """Forget the episode, including the values."""
        super().clear()
        self.values = []
