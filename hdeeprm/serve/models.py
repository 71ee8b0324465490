"""The typed OpenEnv models of a served environment: its actions, observations and states as pydantic models.

:func:`models` makes the action and observation models of one environment from its spaces (their JSON
schemas are ``/schema``'s, with the spaces described by :func:`hdeeprm.serve.spaces.describe`);
:class:`ServedState` and :class:`ServerState` are ``/state``'s answers; :func:`jsonable` writes ``info`` as JSON.
"""
from __future__ import annotations

import re
from typing import Any

import numpy as np
from gymnasium import spaces
from pydantic import ConfigDict, Field, StrictInt, create_model

from hdeeprm.serve import spaces as codec
from hdeeprm.serve.openenv_api import Action, Observation, State

__all__ = ["ServedState", "ServerState", "jsonable", "models"]


def jsonable(value: Any) -> Any:
    """``info`` values as JSON: arrays as lists, NumPy scalars as Python's, non-finite floats as strings."""
    if isinstance(value, dict):
        return {str(key): jsonable(v) for key, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return codec.array_to_json(value)
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float):
        return codec.array_to_json(np.asarray(value)) if not np.isfinite(value) else value
    if value is None or isinstance(value, (bool, int, str)):
        return value
    return str(value)


class ServedState(State):
    """``/state`` of a session (OpenEnv's ``State``: ``episode_id``, ``step_count``, and these)."""

    env_id: str = Field(description="Registered id of the served environment")
    session_id: str | None = Field(default=None, description="The session (HTTP sessions; None on a WebSocket)")
    task: Any = Field(default=None, description="Task of the episode (None: the server's default)")
    seed: int | None = Field(default=None, description="Seed given to the episode's reset")
    terminated: bool = Field(default=False, description="The episode reached its end")
    truncated: bool = Field(default=False, description="The episode was cut (max_steps)")
    score: float | None = Field(default=None, description="Grader score in [0, 1] at the end of a graded episode")
    episode_return: float = Field(default=0.0, description="Sum of the episode's rewards so far")


class ServerState(State):
    """``/state`` without a session: the server's environment, tasks and sessions."""

    env_id: str
    tasks: list[str]
    task_parameter: str | None
    sessions: int = Field(description="Sessions holding an environment now (HTTP and WebSocket)")
    max_sessions: int
    session_timeout: float


def models(env_id: str, observation_space: spaces.Space, action_space: spaces.Space
            ) -> tuple[type[Action], type[Observation]]:
    """Typed OpenEnv action and observation models of an environment (its spaces in their JSON schemas).

    Args:
        env_id: The registered id (names the models, e.g. ``GpuProvisioningV1Action``).
        observation_space, action_space: The environment's spaces.

    Returns:
        ``(action model, observation model)``: subclasses of OpenEnv's ``Action`` and ``Observation``.
    """
    name = "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", env_id.split("/")[-1]))
    extra = {"env_id": env_id, "observation_space": codec.describe(observation_space),
             "action_space": codec.describe(action_space)}
    if isinstance(action_space, spaces.Discrete):
        low = int(action_space.start)
        action_type: Any = StrictInt
        action_field = Field(description=f"An integer in [{low}, {low + int(action_space.n) - 1}]",
                             json_schema_extra={"minimum": low, "maximum": low + int(action_space.n) - 1})
    else:
        action_type = codec.json_type(action_space, f"{name}ActionValue")
        action_field = Field(description="A value of the action space (nested lists for arrays)")
    action_base = type(f"{name}ActionBase", (Action,), {"model_config": ConfigDict(json_schema_extra=extra),
                                                          "__module__": __name__})
    action_cls = create_model(f"{name}Action", __base__=action_base, __module__=__name__,
                              action=(action_type, action_field))
    obs_base = type(f"{name}ObservationBase", (Observation,), {"model_config": ConfigDict(json_schema_extra=extra),
                                                                "__module__": __name__})
    observation_cls = create_model(
        f"{name}Observation", __base__=obs_base, __module__=__name__,
        observation=(codec.json_type(observation_space, f"{name}ObservationValue"),
                     Field(description="The environment's observation (hdeeprm.serve.spaces)")),
        action_mask=(list[bool] | None, Field(default=None, description="Allowed actions now (None: no mask)")),
        terminated=(bool, Field(default=False, description="Gymnasium's terminated")),
        truncated=(bool, Field(default=False, description="Gymnasium's truncated")),
        score=(float | None, Field(default=None, description="Grader score in [0, 1] at a graded episode's end")),
        info=(dict[str, Any], Field(default_factory=dict, description="The rest of Gymnasium's info")),
        session_id=(str | None, Field(default=None, description="HTTP session to pass back to /step and /state")),
        episode_id=(str | None, Field(default=None, description="The episode")),
        step=(int, Field(default=0, description="Steps taken in the episode")))
    return action_cls, observation_cls
