"""Sessions of ``hdeeprm-serve``: one Gymnasium environment and episode per client, behind OpenEnv's interfaces.

:class:`Hub` holds what every session of a server shares (the environment id and arguments, the typed
OpenEnv models made from its spaces, the session count and the open HTTP sessions); a :class:`Session`
holds one client's environment, task, seed and episode (an HTTP ``session_id`` or a WebSocket connection);
:class:`ServedEnvironment` is the OpenEnv ``Environment`` that OpenEnv's ``create_app`` is given (its
``/metadata``). Client mistakes raise :class:`ServeError`, an HTTP error with a one-line reason (see
:mod:`hdeeprm.serve.app` for the status codes), sent over HTTP and WebSocket alike.
"""
from __future__ import annotations

import importlib
import inspect
import threading
import time
import uuid
from typing import Any

import gymnasium
import numpy as np
from fastapi import HTTPException
from gymnasium import spaces
from pydantic import BaseModel, ValidationError

import hdeeprm
from hdeeprm import (ENV_ENTRY_POINTS, GPU_JOB_SLOT_ENV_ID, GPU_PLACEMENT_ENV_ID, GPU_PROVISIONING_ENV_ID,
                     GPU_PROVISIONING_V1_ENV_ID)
from hdeeprm.errors import AgentError, HDeepRMError, OptionsError
from hdeeprm.registry import suggest
from hdeeprm.serve import spaces as codec
from hdeeprm.serve.defaults import DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_TIMEOUT, NAMESPACE, resolve_env_id
from hdeeprm.serve.models import ServedState, ServerState, jsonable, models
from hdeeprm.serve.openenv_api import Action, Environment, EnvironmentMetadata, Observation, deserialize_action

__all__ = ["DEFAULT_MAX_SESSIONS", "DEFAULT_SESSION_TIMEOUT", "NAMESPACE", "RESET_FIELDS", "Hub", "ServeError",
           "ServedEnvironment", "Session", "env_tasks", "one_line", "resolve_env_id", "task_argument",
           "validation_message"]

#: Fields ``reset`` accepts (HTTP body or WebSocket ``data``).
RESET_FIELDS = ("seed", "episode_id", "task", "env_id", "session_id")
#: pydantic error types of a value that should have been a JSON object.
_NOT_AN_OBJECT = ("model_type", "model_attributes_type", "dict_type")


class ServeError(HTTPException):
    """An error a client caused, sent back as HTTP ``status`` with a one-line ``{"detail": message}``.

    Over the WebSocket path the same line travels as OpenEnv's error message, with ``status`` beside
    OpenEnv's error ``code`` (:mod:`hdeeprm.serve.websocket`).

    Args:
        status: HTTP status code (4xx; 503 for a full server).
        message: What is wrong and what to change (newlines are joined: the reply is one line).
        code: OpenEnv's WebSocket error code (``INVALID_JSON``, ``UNKNOWN_TYPE``, ...), or None for the one
            that goes with ``status``.
    """

    def __init__(self, status: int, message: str, code: str | None = None) -> None:
        super().__init__(status_code=status, detail=one_line(message))
        self.code = code

    def __str__(self) -> str:
        """The message alone (OpenEnv's WebSocket path sends ``str(error)``)."""
        return str(self.detail)


def one_line(message: Any) -> str:
    """``message`` on one line (its lines joined by ``"; "``)."""
    return "; ".join(line.strip() for line in str(message).splitlines() if line.strip())


def validation_message(errors: list[dict[str, Any]]) -> str:
    """One line from pydantic's errors: ``"action: Input should be a valid integer (got 'x')"``, joined by ``"; "``.

    The same text for HTTP bodies (FastAPI's errors) and WebSocket messages: a body or message that is not
    JSON reads ``not JSON (<reason> at character N)``, a value that should be an object ``Input should be a
    JSON object (got ...)``; a missing field shows no input.

    Args:
        errors: pydantic's (or FastAPI's) error dicts, with ``loc``, ``msg``, ``type`` and ``input``.

    Returns:
        The line (``"invalid request"`` for no errors).
    """
    parts = []
    for error in errors:
        loc = [part for part in error.get("loc", ()) if part != "body"]
        kind, message = error.get("type"), error.get("msg", "invalid")
        if kind == "json_invalid":
            reason = (error.get("ctx") or {}).get("error", "JSON decode error")
            at = f" at character {loc[-1]}" if loc and isinstance(loc[-1], int) else ""
            parts.append(f"not JSON ({reason}{at})")
            continue
        if kind in _NOT_AN_OBJECT:
            message = "Input should be a JSON object"
        where = ".".join(str(part) for part in loc)
        shown = "input" in error and kind != "missing" and len(repr(error["input"])) <= 60
        got = f" (got {error['input']!r})" if shown else ""
        parts.append(f"{where + ': ' if where else ''}{message}{got}")
    return "; ".join(parts) or "invalid request"


def malformed(errors: list[dict[str, Any]]) -> ServeError:
    """The 422 of a malformed request or message: ``malformed request: <validation_message(errors)>``."""
    return ServeError(422, f"malformed request: {validation_message(errors)}")


# ------------------------------------------------------------------ environments and tasks


def env_class(env_id: str) -> type[gymnasium.Env]:
    """The class registered as ``env_id`` (imports its module)."""
    module, name = ENV_ENTRY_POINTS[env_id].split(":")
    return getattr(importlib.import_module(module), name)


def env_parameters(env_id: str) -> dict[str, inspect.Parameter]:
    """The keyword arguments of ``env_id``'s constructor (the first class in its MRO that lists them)."""
    for cls in env_class(env_id).__mro__:
        params = inspect.signature(cls.__init__).parameters
        if not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params.values()):
            return {name: p for name, p in params.items() if name != "self"}
    return {}


def env_tasks(env_id: str) -> tuple[str | None, tuple[str, ...]]:
    """The constructor argument that names a task of ``env_id`` and the names it takes.

    Returns:
        ``("task", easy, medium, hard, every scenario, train, test)`` for the provisioning environments
        (:data:`~hdeeprm.env.gpu_provisioning.PROVISIONING_TASKS`, then
        :data:`~hdeeprm.env.gpu_scenarios.GPU_SCENARIOS`, held-out ``test-*`` ones included, then the
        splits), ``("scenario", every scenario, train, test)`` for GPU placement and GPU job slots,
        ``(None, ())`` for the
        CPU environments (no named tasks).
    """
    from hdeeprm.env.gpu_scenarios import GPU_SCENARIOS, SPLITS

    if env_id in (GPU_PROVISIONING_ENV_ID, GPU_PROVISIONING_V1_ENV_ID):
        from hdeeprm.env.gpu_provisioning import PROVISIONING_TASKS

        return "task", (*PROVISIONING_TASKS, *GPU_SCENARIOS.names(), *SPLITS)
    if env_id in (GPU_PLACEMENT_ENV_ID, GPU_JOB_SLOT_ENV_ID):
        return "scenario", (*GPU_SCENARIOS.names(), *SPLITS)
    return None, ()


def task_argument(env_id: str, task: str | list[str]) -> str | list[str]:
    """The constructor value of a task of :func:`env_tasks`: a name as it is; a list of names as scenario names.

    The environments take one name (a task, a scenario or a split) or a list of scenario names, so a list
    that names a provisioning task (``easy`` is ``easy-gen``, see
    :data:`~hdeeprm.env.gpu_provisioning.PROVISIONING_TASKS`) or a split (``train``: its scenarios) is
    written with their scenarios, each once, in the order given.

    Args:
        env_id: A registered id with named tasks.
        task: A name, or a list of names of :func:`env_tasks`.

    Returns:
        ``task`` when it is a name, else the list of scenario names.
    """
    if isinstance(task, str):
        return task
    from hdeeprm.env.gpu_scenarios import SPLITS, scenarios

    aliases: dict[str, str] = {}
    if env_id in (GPU_PROVISIONING_ENV_ID, GPU_PROVISIONING_V1_ENV_ID):
        from hdeeprm.env.gpu_provisioning import PROVISIONING_TASKS

        aliases = PROVISIONING_TASKS
    names: list[str] = []
    for name in task:
        expanded = [s.name for s in scenarios(name)] if name in SPLITS else [aliases.get(name, name)]
        names += [n for n in expanded if n not in names]
    return names


# ------------------------------------------------------------------ sessions
class Hub:
    """What every session of a server shares: the environment id and arguments, the models, the session count.

    Args:
        env_id: A registered id (:data:`hdeeprm.ENV_ENTRY_POINTS`, with or without ``hdeeprm/``).
        env_kwargs: Constructor arguments of every session's environment (``reset``'s task overrides the
            task argument).
        max_sessions: Sessions that may hold an environment at once (>= 1).
        session_timeout: Seconds of inactivity after which a session is freed (> 0).

    Raises:
        OptionsError: An unknown id or argument, bounds out of range; the environment's own errors for
            bad argument values (one is built here, so a bad server command fails at once).
    """

    def __init__(self, env_id: str, env_kwargs: dict[str, Any] | None = None, *,
                 max_sessions: int = DEFAULT_MAX_SESSIONS, session_timeout: float = DEFAULT_SESSION_TIMEOUT) -> None:
        self.env_id = resolve_env_id(env_id)
        self.env_kwargs = dict(env_kwargs or {})
        params = env_parameters(self.env_id)
        for key in self.env_kwargs:
            if key not in params:
                raise OptionsError(f"unknown argument '{key}' of {self.env_id} ({suggest(key, list(params))})")
        if isinstance(max_sessions, bool) or not isinstance(max_sessions, int) or max_sessions < 1:
            raise OptionsError(f"max_sessions must be an integer >= 1, got {max_sessions!r}")
        if not session_timeout > 0:
            raise OptionsError(f"session_timeout must be > 0 seconds, got {session_timeout!r}")
        self.max_sessions, self.session_timeout = max_sessions, float(session_timeout)
        self.task_parameter, self.tasks = env_tasks(self.env_id)
        self.default_task = None
        if self.task_parameter is not None:
            default = params[self.task_parameter].default
            self.default_task = self.env_kwargs.get(self.task_parameter, None if default is inspect._empty else default)
        probe = gymnasium.make(self.env_id, **self.env_kwargs)
        self.observation_space, self.action_space = probe.observation_space, probe.action_space
        probe.close()
        self.action_cls, self.observation_cls = models(self.env_id, self.observation_space, self.action_space)
        self.http: dict[str, Session] = {}
        self.sockets: set[Session] = set()
        self.live = 0
        self.lock = threading.Lock()

    # -- environments
    def check_task(self, task: Any) -> None:
        """Refuse a task this environment does not have (:class:`ServeError` 400, with the valid names)."""
        if self.task_parameter is None:
            raise ServeError(400, f"{self.env_id} has no named tasks: reset without 'task'")
        names = [task] if isinstance(task, str) else task
        if not isinstance(names, list) or not names or not all(isinstance(n, str) for n in names):
            raise ServeError(400, f"task must be a task name or a list of them, got {task!r}")
        for name in names:
            if name not in self.tasks:
                raise ServeError(400, f"unknown task '{name}' of {self.env_id} ({suggest(name, self.tasks)})")

    def make(self, task: Any = None) -> gymnasium.Env:
        """A new environment for a session, with ``task`` (None: the server's arguments alone).

        ``GpuPlacement-v0`` sessions with a task get the server's node count as ``max_nodes`` (unless the
        server sets it), so any scenario whose cluster is not larger keeps the server's spaces.

        Raises:
            ServeError: 400 for an environment error, or when the task's spaces differ from the server's.
        """
        kwargs = dict(self.env_kwargs)
        if task is not None:
            kwargs[self.task_parameter] = task_argument(self.env_id, task)
            if self.env_id == GPU_PLACEMENT_ENV_ID:   # pad to the server's node axis: the spaces stay the same
                kwargs.setdefault("max_nodes", self.observation_space["nodes"].shape[0])
        try:
            env = gymnasium.make(self.env_id, **kwargs)
        except HDeepRMError as exc:
            raise ServeError(400, str(exc)) from None
        if env.observation_space != self.observation_space or env.action_space != self.action_space:
            env.close()
            raise ServeError(400, f"task {task!r} has other spaces than the server's: serve it on its own "
                                  f"(hdeeprm-serve {self.env_id} {self.task_parameter}={task})")
        return env

    def parse_action(self, data: Any) -> Action:
        """The typed action model of a request's action object (HTTP ``action``, WebSocket ``data``).

        Raises:
            ServeError: 422 ``invalid action: <what is wrong>`` (the same text over HTTP and WebSocket).
        """
        if not isinstance(data, dict):
            raise ServeError(422, f"invalid action: {validation_message([{'type': 'dict_type', 'input': data}])}")
        try:
            return deserialize_action(data, self.action_cls)
        except ValidationError as exc:
            raise ServeError(422, f"invalid action: {validation_message(exc.errors())}") from None

    def decode_action(self, action: Action) -> Any:
        """The environment's action from a validated action model (:class:`ServeError` 422 when out of range)."""
        from hdeeprm.run.loop import as_action   # the run loop's check, loaded with the first action

        raw = action.action
        space = self.action_space
        try:
            if isinstance(space, spaces.Discrete):
                return as_action(raw - int(space.start), int(space.n)) + int(space.start)
            value = codec.decode(space, raw.model_dump() if isinstance(raw, BaseModel) else raw, "action")
        except HDeepRMError as exc:
            raise ServeError(422, str(exc)) from None
        if not space.contains(value):
            raise ServeError(422, f"action must lie in {space}, got {str(raw)[:80]}")
        return value

    # -- sessions
    def admit(self) -> None:
        """Count one more session holding an environment (:class:`ServeError` 503 when the server is full)."""
        with self.lock:
            if self.live >= self.max_sessions:
                raise ServeError(503, f"the server holds its {self.max_sessions} sessions: close one (or wait "
                                      f"{self.session_timeout:g} s for idle ones to expire) and retry")
            self.live += 1

    def release(self) -> None:
        """Count one session fewer."""
        with self.lock:
            self.live -= 1

    def http_session(self, session_id: str) -> Session:
        """The open HTTP session ``session_id`` (:class:`ServeError` 404 when unknown, closed or expired)."""
        self.reap()
        with self.lock:
            session = self.http.get(session_id)
        if session is None:
            raise ServeError(404, f"unknown session '{session_id}' (closed, expired after {self.session_timeout:g} "
                                  "s idle, or never opened): reset without session_id to open one")
        return session

    def keep(self, session: Session) -> None:
        """Register a new session: an HTTP one after its first reset, a WebSocket one when it connects."""
        with self.lock:
            if session.http:
                self.http[session.id] = session
            else:
                self.sockets.add(session)

    def forget(self, session: Session) -> None:
        """Close a WebSocket session whose connection ended, and stop tracking it."""
        with self.lock:
            self.sockets.discard(session)
        session.close()

    def close_session(self, session_id: str) -> None:
        """Free HTTP session ``session_id`` (:class:`ServeError` 404 when unknown)."""
        session = self.http_session(session_id)
        with self.lock:
            self.http.pop(session_id, None)
        session.close()

    def reap(self) -> int:
        """Free the sessions idle for more than ``session_timeout`` seconds; returns how many.

        An expired HTTP session is forgotten (its id then gets 404); an expired WebSocket session keeps its
        connection, and its next call gets the 404 of a closed session.
        """
        now = time.monotonic()
        with self.lock:
            expired = [s for s in (*self.http.values(), *self.sockets)
                       if not s.closed and now - s.last_used > self.session_timeout]
            for session in expired:
                self.http.pop(session.id, None)
                self.sockets.discard(session)
        for session in expired:
            session.close()
        return len(expired)

    def close_all(self) -> None:
        """Free every session (server shutdown)."""
        with self.lock:
            sessions, self.http = [*self.http.values(), *self.sockets], {}
            self.sockets = set()
        for session in sessions:
            session.close()

    def metadata(self) -> EnvironmentMetadata:
        """OpenEnv's ``/metadata``: the id, the first line of the environment's docstring, the tasks."""
        doc = (inspect.getdoc(env_class(self.env_id)) or "").splitlines()
        tasks = f" Tasks (reset's 'task'): {', '.join(self.tasks)}." if self.tasks else ""
        return EnvironmentMetadata(name=self.env_id, description=(doc[0] if doc else self.env_id) + tasks,
                                   version=hdeeprm.__version__, author="HDeepRM",
                                   documentation_url="https://github.com/hdeeprm/hdeeprm/blob/master/docs/serve.rst")

    def server_state(self) -> ServerState:
        """``/state`` without a session."""
        return ServerState(env_id=self.env_id, tasks=list(self.tasks), task_parameter=self.task_parameter,
                           sessions=self.live, max_sessions=self.max_sessions, session_timeout=self.session_timeout)


class Session:
    """One client's environment and episode (a WebSocket connection or an HTTP ``session_id``).

    Thread-safe: one call at a time (OpenEnv runs each call in a worker thread).

    Args:
        hub: The server's :class:`Hub`.
        http: An HTTP session (its id travels in the observations).
    """

    def __init__(self, hub: Hub, http: bool = False) -> None:
        self.hub = hub
        self.id = uuid.uuid4().hex
        self.http = http
        self.env: gymnasium.Env | None = None
        self.task: Any = None
        self.seed: int | None = None
        self.episode_id: str | None = None
        self.steps = 0
        self.terminated = self.truncated = False
        self.score: float | None = None
        self.episode_return = 0.0
        self.closed = False
        self.lock = threading.Lock()
        self.last_used = time.monotonic()

    def _check_open(self) -> None:
        if self.closed:
            raise ServeError(404, f"session '{self.id}' was closed (idle for more than {self.hub.session_timeout:g} "
                                  "s, or closed by its client): open another")

    def reset(self, seed: Any = None, episode_id: Any = None, **fields: Any) -> Observation:
        """Start an episode: Gymnasium's ``reset(seed=seed)``, on a new environment when the task changes.

        Args:
            seed: Integer >= 0 or None (None continues the session's generator, as Gymnasium does).
            episode_id: Name of the episode (None: a new UUID).
            fields: ``task`` (a name of :attr:`Hub.tasks`, or a list of them), ``env_id`` (must name the
                served environment).

        Returns:
            The first observation.

        Raises:
            ServeError: 422 for an unknown field or a bad seed, 400 for an unknown task, 404 for another
                environment id, 503 when the server is full.
        """
        with self.lock:
            self._check_open()
            self.last_used = time.monotonic()
            fields.pop("session_id", None)
            for key in fields:
                if key not in RESET_FIELDS:
                    raise ServeError(422, f"unknown reset field '{key}' ({suggest(key, RESET_FIELDS)})")
            if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
                raise ServeError(422, f"seed must be an integer >= 0 or null, got {seed!r}")
            if episode_id is not None and not isinstance(episode_id, str):
                raise ServeError(422, f"episode_id must be a string or null, got {episode_id!r}")
            env_id = fields.get("env_id")
            if env_id is not None:
                try:
                    if not isinstance(env_id, str) or resolve_env_id(env_id) != self.hub.env_id:
                        raise OptionsError(f"this server serves {self.hub.env_id}, not '{env_id}'")
                except OptionsError as exc:
                    raise ServeError(404, f"{exc}; this server serves {self.hub.env_id}") from None
            task = fields.get("task")
            if task is not None:
                self.hub.check_task(task)
            if self.env is None or (task is not None and task != self.task):
                if self.env is None:
                    self.hub.admit()
                else:
                    self.env.close()
                    self.env = None
                try:
                    self.env = self.hub.make(task)
                except BaseException:
                    self.hub.release()
                    raise
                self.task = task if task is not None else self.hub.default_task
            try:
                observation, info = self.env.reset(seed=seed)
            except HDeepRMError as exc:
                raise ServeError(400, str(exc)) from None
            self.seed, self.episode_id = seed, episode_id or uuid.uuid4().hex
            self.steps, self.terminated, self.truncated, self.score, self.episode_return = 0, False, False, None, 0.0
            return self._observation(observation, None, info)

    def step(self, action: Action) -> Observation:
        """One Gymnasium step.

        Raises:
            ServeError: 409 before the first reset or after the episode ended, 422 for a bad action,
                404 when the session was closed.
        """
        with self.lock:
            self._check_open()
            self.last_used = time.monotonic()
            if self.env is None:
                raise ServeError(409, "reset the session before stepping it")
            if self.terminated or self.truncated:
                how = "terminated" if self.terminated else "was truncated"
                raise ServeError(409, f"the episode {how} after {self.steps} steps: reset to start another")
            value = self.hub.decode_action(action)
            try:
                observation, reward, self.terminated, self.truncated, info = self.env.step(value)
            except AgentError as exc:
                raise ServeError(422, str(exc)) from None
            except HDeepRMError as exc:
                raise ServeError(400, str(exc)) from None
            self.steps += 1
            self.episode_return += float(reward)
            return self._observation(observation, float(reward), info)

    def _observation(self, observation: Any, reward: float | None, info: dict[str, Any]) -> Observation:
        info = dict(info)
        mask = info.pop("action_mask", None)
        if mask is None and hasattr(self.env.unwrapped, "action_masks"):
            mask = self.env.unwrapped.action_masks()
        score = info.pop("score", None)
        if score is not None:
            self.score = float(score)
        return self.hub.observation_cls(
            observation=codec.encode(self.hub.observation_space, observation),
            action_mask=None if mask is None else np.asarray(mask, dtype=bool).tolist(),
            terminated=bool(self.terminated), truncated=bool(self.truncated),
            score=None if score is None else float(score), info=jsonable(info),
            session_id=self.id if self.http else None, episode_id=self.episode_id, step=self.steps,
            done=bool(self.terminated or self.truncated), reward=reward)

    def state(self) -> ServedState:
        """The session's :class:`ServedState`."""
        return ServedState(env_id=self.hub.env_id, session_id=self.id if self.http else None,
                           episode_id=self.episode_id, step_count=self.steps, task=self.task, seed=self.seed,
                           terminated=bool(self.terminated), truncated=bool(self.truncated), score=self.score,
                           episode_return=self.episode_return)

    def close(self) -> None:
        """Free the environment (idempotent)."""
        with self.lock:
            if self.closed:
                return
            self.closed = True
            if self.env is not None:
                self.env.close()
                self.env = None
                self.hub.release()


class ServedEnvironment(Environment):
    """OpenEnv ``Environment`` over a :class:`Session` of the server's :class:`Hub`.

    OpenEnv's ``create_app`` takes a factory of these (its ``/metadata`` asks one); the session routes
    (:mod:`hdeeprm.serve.app`) and the WebSocket path (:mod:`hdeeprm.serve.websocket`) drive
    :class:`Session` objects directly.

    Args:
        hub: The server's :class:`Hub`.
    """

    SUPPORTS_CONCURRENT_SESSIONS = True

    def __init__(self, hub: Hub) -> None:
        super().__init__()
        self.hub = hub
        self.session = Session(hub)

    def reset(self, seed: Any = None, episode_id: Any = None, **fields: Any) -> Observation:
        """:meth:`Session.reset`."""
        return self.session.reset(seed, episode_id, **fields)

    def step(self, action: Action, timeout_s: float | None = None, **kwargs: Any) -> Observation:
        """:meth:`Session.step` (``timeout_s`` is not used: a step of HDeepRM's environments is short)."""
        return self.session.step(action)

    @property
    def state(self) -> ServedState:
        """:meth:`Session.state`."""
        return self.session.state()

    def get_metadata(self) -> EnvironmentMetadata:
        """:meth:`Hub.metadata`."""
        return self.hub.metadata()

    def close(self) -> None:
        """:meth:`Session.close`."""
        self.session.close()
