"""The one decide -> apply -> reward step, shared by every way of running HDeepRM.

The launcher on the embedded engine (:func:`run_episode`), the launcher on a
real Batsim (:mod:`hdeeprm.run.batsim`) and the Gymnasium environment
(:mod:`hdeeprm.env.environment`) all take a decision the same way:

1. the agent (or the environment's caller) chooses an action from the
   observation of the :class:`~hdeeprm.decision.view.StateView`;
2. :func:`as_action` checks that it is an integer position in the action set;
3. the workload manager applies it (starts jobs, switches pstates);
4. the reward of the state it led to is computed and handed back.

Nothing here knows which simulator runs underneath.
"""
from __future__ import annotations

import inspect
import numbers
import sys
import traceback
from collections.abc import Callable

import numpy as np

from hdeeprm.agents.base import Agent
from hdeeprm.decision.manager import WorkloadManager
from hdeeprm.decision.view import StateView
from hdeeprm.errors import AgentError, HDeepRMError

#: ``observer(view) -> np.ndarray`` (float32, (observation_size,)).
Observer = Callable[[StateView], np.ndarray]
#: ``reward(view) -> float``.
RewardFn = Callable[[StateView], float]


def as_action(value: object, nb_actions: int, who: str = "the action") -> int:
    """Check that ``value`` is a position in an action set of ``nb_actions`` and return it as an int.

    Python and NumPy integers (and 0-d or one-element NumPy integer arrays, as
    vectorised RL libraries pass them) are accepted; booleans, floats and
    strings are not, so a wrong return value is never silently truncated.

    Raises:
        AgentError: ``"<who> must be an integer in [0, n - 1], got <value>"``.
    """
    if type(value) is int and 0 <= value < nb_actions:   # the common case, checked first
        return value
    if isinstance(value, np.ndarray) and value.size == 1 and value.dtype.kind in "iu":
        value = value.reshape(()).item()
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        index = int(value)
        if 0 <= index < nb_actions:
            return index
    shown = value.item() if isinstance(value, np.generic) else value   # 7, not np.int64(7) (vector envs)
    raise AgentError(f"{who} must be an integer in [0, {nb_actions - 1}], got {shown!r}")


def agent_failed(agent: Agent, method: str, exc: BaseException) -> AgentError:
    """The error to raise when the user's ``agent.<method>()`` raised ``exc``.

    Args:
        agent: The agent whose method raised.
        method: ``"decide"``, ``"rewarded"`` or ``"end_episode"``.
        exc: What it raised (its traceback starts at the frame that called the agent).

    Returns:
        An :class:`AgentError` whose message names the agent's file and the line that raised
        (``"agent.py:12: MyAgent.decide() raised ValueError: boom"``) and whose
        ``user_traceback`` holds the agent's frames (from the method down), as Python prints them.
    """
    frames = traceback.extract_tb(exc.__traceback__)[1:]   # drop HDeepRM's calling frame
    module = sys.modules.get(type(agent).__module__)
    path = getattr(module, "__file__", None) or type(agent).__module__
    line = next((f.lineno for f in reversed(frames) if f.filename == path), None)
    where = f"{path}:{line}" if line else path
    text = "".join(traceback.format_list(frames))
    return AgentError(f"{where}: {type(agent).__name__}.{method}() raised {type(exc).__name__}: {exc}",
                      user_traceback=f"Traceback of the agent (most recent call last):\n{text}" if text else "")


def method_location(agent: Agent, method: str) -> str:
    """``file:line`` where the agent's class defines ``method`` (its module's file when unknown).

    Args:
        agent: A user agent.
        method: A method name, e.g. ``"end_episode"``.

    Returns:
        E.g. ``"/home/me/agent.py:31"``: what an error about the method's return value names.
    """
    func = inspect.unwrap(getattr(type(agent), method, None) or (lambda: None))
    code = getattr(func, "__code__", None)
    if code is not None:
        return f"{code.co_filename}:{code.co_firstlineno}"
    module = sys.modules.get(type(agent).__module__)
    return getattr(module, "__file__", None) or type(agent).__module__


def apply_action(manager: WorkloadManager, view: StateView, action: object, reward: RewardFn | None,
                 who: str = "the action") -> float | None:
    """Apply ``action`` and return the reward of the state it leads to (None without ``reward``).

    Raises:
        AgentError: ``action`` is not an integer position in the action set.
    """
    manager.apply(as_action(action, manager.nb_actions, who))
    return None if reward is None else float(reward(view))


def decide(manager: WorkloadManager, view: StateView, agent: Agent, observer: Observer | None,
           reward: RewardFn | None) -> float | None:
    """One decision of ``agent``: observe, decide, apply, reward (the agent is told the reward).

    Args:
        manager: The workload manager, with a decision due.
        view: Its state view.
        agent: Decides; receives :meth:`~hdeeprm.agents.base.Agent.rewarded`.
        observer: Builds the observation, or None (the agent then gets None).
        reward: The objective, or None (no reward is computed or given).

    Returns:
        The reward, or None.

    Raises:
        AgentError: the agent returned something that is not an action, or its ``decide`` or
            ``rewarded`` raised (see :func:`agent_failed`).
    """
    obs = observer(view) if observer is not None and agent.needs_observation else None
    try:
        action = agent.decide(obs)
    except HDeepRMError:
        raise
    except Exception as exc:   # the user's code: say which file and method, keep its frames
        raise agent_failed(agent, "decide", exc) from exc
    value = apply_action(manager, view, action, reward, f"{type(agent).__name__}.decide()")
    if value is not None:
        try:
            agent.rewarded(value)
        except HDeepRMError:
            raise
        except Exception as exc:
            raise agent_failed(agent, "rewarded", exc) from exc
    return value
