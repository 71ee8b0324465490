"""Agents: what decides which policy pair to apply at each decision.

* :class:`~hdeeprm.agents.base.Agent`: the base class a user's ``agent.py`` subclasses;
* :class:`~hdeeprm.agents.base.ClassicAgent`: always the same policy pair;
* ``LearningAgent``, ``PolicyLearningAgent``, ``ValueLearningAgent``
  (:mod:`hdeeprm.agents.learning`, the original HDeepRM's, with PyTorch):
  imported on first use so that classic runs never import torch;
* :mod:`hdeeprm.agents.checkpoint`: the model file format of ``-im`` / ``-om``.

The other modules:

* :mod:`~hdeeprm.agents.evolution`: The cross-entropy method and the linear policy it trains (a policy pair
  per decision from a compact observation).
* :mod:`~hdeeprm.agents.kernel_ppo`: RLScheduler's kernel network and PPO update, shared by the kernel-PPO
  benchmarks.
* :mod:`~hdeeprm.agents.off_policy`: Off-policy learning agents: a replay buffer of transitions and several
  updates per episode.
"""
from __future__ import annotations

from typing import Any

from hdeeprm.agents.base import Agent, ClassicAgent, instantiate_agent, load_agent_class

#: Learning agents, exported lazily (importing them imports torch).
LEARNING_AGENTS = ("LearningAgent", "PolicyLearningAgent", "ValueLearningAgent")

__all__ = ["Agent", "ClassicAgent", "instantiate_agent", "load_agent_class", *LEARNING_AGENTS]


def __getattr__(name: str) -> Any:
    """The learning agent classes, imported on first access (PEP 562)."""
    if name in LEARNING_AGENTS:
        from hdeeprm.agents import learning

        return getattr(learning, name)
    raise AttributeError(f"module 'hdeeprm.agents' has no attribute '{name}'")
