"""Agents: what decides which policy pair to apply at each decision.

* :class:`Agent` — the base class a user's ``agent.py`` subclasses.
* :class:`ClassicAgent` — always the same policy pair (a classic heuristic
  such as ``first-high_gflops``).

The original HDeepRM's learning agents (``LearningAgent``,
``PolicyLearningAgent``, ``ValueLearningAgent``, PyTorch) live in
:mod:`hdeeprm.agents.learning`; :mod:`hdeeprm.agents` exports them lazily so
that classic runs do not pay for importing torch.

:func:`load_agent_class` loads a user file and returns the first class
*defined in it* that subclasses :class:`Agent`.
"""
from __future__ import annotations

import importlib.util
import inspect
import sys
from pathlib import Path
from typing import Any

import numpy as np

from hdeeprm.errors import AgentError


class Agent:
    """Base class of every agent.

    An agent is asked for an action at every decision of the workload manager
    and told the reward that followed it.

    Attributes:
        needs_observation: False when :meth:`decide` ignores its observation,
            so the manager can skip building it (classic agents).
    """

    needs_observation: bool = True

    def decide(self, observation: np.ndarray) -> int:
        """Choose an action.

        Args:
            observation: The environment's observation, float32, shape (observation_size,).

        Returns:
            Position of the chosen action in the action set (0 … action_size − 1).
        """
        raise NotImplementedError

    def rewarded(self, reward: float) -> None:
        """Receive the reward of the last action (see :mod:`hdeeprm.decision.reward`)."""

    def end_episode(self) -> float | None:
        """Called when a simulation ends; learning agents update here.

        Returns:
            The training loss of the episode, or None when nothing was learnt.
        """
        return None


class ClassicAgent(Agent):
    """A fixed policy pair: always the same action.

    Args:
        action: Position of the pair in the action set (0 for a one-pair set).
    """

    needs_observation = False

    def __init__(self, action: int = 0) -> None:
        self.action = int(action)

    def decide(self, observation: np.ndarray) -> int:
        """Return the fixed action, whatever the observation."""
        return self.action


def load_agent_class(path: str | Path) -> type[Agent]:
    """Load a user's agent file and return its agent class.

    The class is the first one, in definition order, that is defined in the
    file itself and subclasses :class:`Agent` (base classes imported from
    HDeepRM do not count).

    Raises:
        AgentError: missing file, a Python error while importing it, or no such class.
    """
    path = Path(path)
    if not path.is_file():
        raise AgentError(f"agent file not found ({path})")
    name = f"hdeeprm_user_agent_{abs(hash(str(path.resolve())))}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise AgentError(f"cannot import agent file, is it a .py file? ({path})")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's code: report it with its location
        tb = exc.__traceback__
        line = None
        while tb is not None:
            if tb.tb_frame.f_code.co_filename == str(path):
                line = tb.tb_lineno
            tb = tb.tb_next
        where = f"{path}:{line}" if line else str(path)
        raise AgentError(f"error while importing the agent file: {type(exc).__name__}: {exc} ({where})") from exc
    classes = [obj for obj in vars(module).values()
               if inspect.isclass(obj) and issubclass(obj, Agent) and obj.__module__ == name]
    if not classes:
        raise AgentError(f"no class subclassing hdeeprm.agents.base.Agent is defined in the agent file ({path})")
    classes.sort(key=lambda c: inspect.getsourcelines(c)[1])
    return classes[0]


def instantiate_agent(cls: type[Agent], **available: Any) -> Agent:
    """Build an agent, passing the constructor only the arguments it declares.

    Learning agents take ``(gamma, hidden, action_size, observation_size)``
    as in the original HDeepRM; other names offered are ``lr``, ``seed`` and
    ``options``.

    Raises:
        AgentError: the constructor needs an argument that is not offered, or fails.
    """
    params = inspect.signature(cls).parameters
    kwargs = {}
    accepts_any = any(p.kind is p.VAR_KEYWORD for p in params.values())
    for pname, p in params.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if pname in available:
            kwargs[pname] = available[pname]
        elif p.default is p.empty:
            raise AgentError(f"{cls.__name__}.__init__ needs '{pname}', which HDeepRM does not provide; "
                             f"it offers: {', '.join(sorted(available))}")
    if accepts_any:
        kwargs.update({k: v for k, v in available.items() if k not in kwargs})
    try:
        return cls(**kwargs)
    except Exception as exc:
        raise AgentError(f"{cls.__name__}(...) failed: {type(exc).__name__}: {exc}") from exc
