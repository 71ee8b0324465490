"""Compatibility module: the original HDeepRM's ``hdeeprm.agent``.

User agent files written for the original HDeepRM import their base classes
from here (``from hdeeprm.agent import PolicyLearningAgent``); they keep
working unchanged. New code imports from :mod:`hdeeprm.agents`.
"""
from __future__ import annotations

from typing import Any

from hdeeprm import agents
from hdeeprm.agents import Agent, ClassicAgent

__all__ = ["Agent", "ClassicAgent", *agents.LEARNING_AGENTS]


def __getattr__(name: str) -> Any:
    """The learning agent classes, from :mod:`hdeeprm.agents` (imported on first access)."""
    return getattr(agents, name)
