"""A served HDeepRM environment back as a Gymnasium environment: :class:`Client`.

::

    from hdeeprm.serve import Client
    env = Client("http://127.0.0.1:8000", task="easy")     # a server started by hdeeprm-serve
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(1)
    info["score"]                                          # the grader's, at the end of a graded episode

The spaces come from the server's ``/schema``; observations are decoded with their dtypes and shapes
(:mod:`hdeeprm.serve.spaces`); ``info`` is the environment's, with ``action_mask`` as a bool array and
``score`` at the end of a graded episode. The WebSocket transport (default) is OpenEnv's own client
(``openenv.core.EnvClient`` over ``/ws``, one connection per :class:`Client`); ``transport="http"`` uses
the HTTP session routes instead (``/reset``, ``/step``, ``/state``, ``/close``).
"""
from __future__ import annotations

import asyncio
import time
from typing import Any

import gymnasium
import httpx
import numpy as np
from gymnasium import spaces

from hdeeprm.errors import HDeepRMError, OptionsError
from hdeeprm.serve import spaces as codec
from hdeeprm.serve.defaults import DEFAULT_HOST, DEFAULT_PORT
from hdeeprm.serve.openenv_api import EnvClient, StepResult
from hdeeprm.serve.sessions import validation_message

#: Transports of :class:`Client`.
TRANSPORTS = ("ws", "http")
#: Seconds a :class:`Client` waits for a reply by default.
DEFAULT_TIMEOUT = 60.0


class RemoteEnvError(HDeepRMError):
    """The server refused a request (its one-line reason), or could not be reached.

    Args:
        message: The server's reason.
        status: HTTP status of the refusal (over WebSocket: the one the server sends beside its code), or
            None (the server could not be reached).
        code: OpenEnv's WebSocket error code (``VALIDATION_ERROR``, ``EXECUTION_ERROR``, ...), or None.
    """

    def __init__(self, message: str, status: int | None = None, code: str | None = None) -> None:
        self.status, self.code = status, code
        super().__init__(message)


class _OpenEnvClient(EnvClient):
    """OpenEnv's WebSocket client for HDeepRM's served environments (payloads kept as dicts)."""

    def _step_payload(self, action: Any) -> dict[str, Any]:
        return {"action": action}

    def _parse_result(self, payload: dict[str, Any]) -> StepResult:
        return StepResult(observation=payload.get("observation", {}), reward=payload.get("reward"),
                          done=bool(payload.get("done", False)))

    def _parse_state(self, payload: dict[str, Any]) -> dict[str, Any]:
        return payload

    async def _send_and_receive(self, message: dict[str, Any]) -> dict[str, Any]:
        """As OpenEnv's, with the server's one-line reason in a :class:`RemoteEnvError`."""
        await self._send(message)
        response = await self._receive()
        if response.get("type") == "error":
            data = response.get("data", {})
            reason = data.get("message", "error")
            if data.get("errors"):   # pydantic's errors, as OpenEnv's own servers send them
                reason = f"invalid {message.get('type', 'message')}: {validation_message(data['errors'])}"
            raise RemoteEnvError(reason, status=data.get("status"), code=data.get("code"))
        return response


    async def disconnect(self) -> None:
        """Ask the server to end the session and wait (5 s at most) until it closes the connection."""
        if self._ws is not None:
            try:
                await self._send({"type": "close"})
                await asyncio.wait_for(self._ws.wait_closed(), timeout=5.0)
            except Exception:   # noqa: BLE001  (best effort, as OpenEnv's: the connection goes anyway)
                pass
            await super().disconnect()


class _WebSocket:
    """WebSocket transport: one OpenEnv session per connection."""

    def __init__(self, base_url: str, timeout: float) -> None:
        self.client = _OpenEnvClient(base_url, connect_timeout_s=min(timeout, 10.0), message_timeout_s=timeout).sync()
        try:
            self.client.connect()
        except ConnectionError as exc:
            raise RemoteEnvError(str(exc)) from None

    def reset(self, fields: dict[str, Any]) -> dict[str, Any]:
        result = self.client.reset(**fields)
        return {"observation": result.observation, "reward": result.reward, "done": result.done}

    def step(self, action: Any) -> dict[str, Any]:
        result = self.client.step(action)
        return {"observation": result.observation, "reward": result.reward, "done": result.done}

    def state(self) -> dict[str, Any]:
        return self.client.state()

    def close(self) -> None:
        self.client.close()


class _Http:
    """HTTP transport: the session routes of :func:`hdeeprm.serve.app.build_app`."""

    def __init__(self, base_url: str, timeout: float) -> None:
        self.http = httpx.Client(base_url=base_url, timeout=timeout)
        self.session_id: str | None = None

    def request(self, method: str, path: str, **kwargs: Any) -> Any:
        try:
            response = self.http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise RemoteEnvError(f"cannot reach {self.http.base_url}{path}: {exc}") from None
        if response.status_code >= 400:
            try:
                reason = response.json().get("detail", response.text)
            except ValueError:
                reason = response.text
            raise RemoteEnvError(f"{reason} (HTTP {response.status_code})", status=response.status_code)
        return response.json()

    def reset(self, fields: dict[str, Any]) -> dict[str, Any]:
        if self.session_id is not None:
            fields = {**fields, "session_id": self.session_id}
        payload = self.request("POST", "/reset", json=fields)
        self.session_id = payload["observation"]["session_id"]
        return payload

    def step(self, action: Any) -> dict[str, Any]:
        if self.session_id is None:
            raise RemoteEnvError("reset the environment before stepping it")
        return self.request("POST", "/step", json={"action": {"action": action}, "session_id": self.session_id})

    def state(self) -> dict[str, Any]:
        params = {} if self.session_id is None else {"session_id": self.session_id}
        return self.request("GET", "/state", params=params)

    def close(self) -> None:
        try:
            if self.session_id is not None:
                self.request("POST", "/close", json={"session_id": self.session_id})
        except RemoteEnvError:
            pass   # already expired: nothing to free
        finally:
            self.session_id = None
            self.http.close()


def wait_until_healthy(base_url: str, max_seconds: float = 60.0, process: Any = None, poll: float = 0.05) -> float:
    """Poll ``base_url``'s ``/health`` until it answers 200 (a server just started, e.g. by a test or a benchmark).

    Args:
        base_url: The server's address, e.g. ``http://127.0.0.1:8000``.
        max_seconds: Seconds to wait at most.
        process: The server's :class:`subprocess.Popen`, if this program started it: its exit ends the wait.
        poll: Seconds between two requests.

    Returns:
        The seconds waited until the first 200.

    Raises:
        RemoteEnvError: ``process`` exited (its exit code and standard error, when piped, in the message), or
            no 200 came within ``max_seconds``.
    """
    start = time.perf_counter()
    url = f"{base_url.rstrip('/')}/health"
    while True:
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return time.perf_counter() - start
        except httpx.HTTPError:
            pass
        if process is not None and process.poll() is not None:
            err = process.stderr.read().strip() if process.stderr is not None else ""
            raise RemoteEnvError(f"hdeeprm-serve exited with {process.returncode} before {url} answered: {err}")
        if time.perf_counter() - start > max_seconds:
            raise RemoteEnvError(f"hdeeprm-serve did not answer {url} within {max_seconds:g} s")
        time.sleep(poll)


def server_spaces(base_url: str, timeout: float = DEFAULT_TIMEOUT) -> tuple[str, spaces.Space, spaces.Space]:
    """The served environment's id, observation space and action space (from ``/schema``).

    Raises:
        RemoteEnvError: The server cannot be reached or is not an ``hdeeprm-serve`` server.
    """
    try:
        response = httpx.get(f"{base_url.rstrip('/')}/schema", timeout=timeout)
        schema = response.json()["observation"]
        return (schema["env_id"], codec.from_description(schema["observation_space"]),
                codec.from_description(schema["action_space"]))
    except httpx.HTTPError as exc:
        raise RemoteEnvError(f"cannot reach {base_url}/schema: {exc}") from None
    except (ValueError, KeyError, TypeError, OptionsError):
        raise RemoteEnvError(f"{base_url} is not an hdeeprm-serve server (its /schema has no HDeepRM spaces)") \
            from None


class Client(gymnasium.Env):
    """A Gymnasium environment whose episodes run on an ``hdeeprm-serve`` server (one session per client).

    Args:
        base_url: The server, e.g. ``"http://127.0.0.1:8000"``.
        task: Task of every episode (``reset(options={"task": ...})`` overrides it; None: the server's).
        transport: ``"ws"`` (OpenEnv's WebSocket session, default) or ``"http"``.
        timeout: Seconds to wait for each reply.

    Raises:
        OptionsError: An unknown transport.
        RemoteEnvError: The server cannot be reached, or refuses a request (its one-line reason); a
            bad action is the server's 422, as :class:`~hdeeprm.errors.AgentError` is in process.
    """

    metadata = {"render_modes": []}

    def __init__(self, base_url: str = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}", *, task: Any = None,
                 transport: str = "ws", timeout: float = DEFAULT_TIMEOUT) -> None:
        if transport not in TRANSPORTS:
            raise OptionsError(f"transport must be one of {', '.join(TRANSPORTS)}, got {transport!r}")
        self.base_url = base_url.rstrip("/")
        self.env_id, self.observation_space, self.action_space = server_spaces(self.base_url, timeout)
        self.task = task
        self.transport = _WebSocket(self.base_url, timeout) if transport == "ws" else _Http(self.base_url, timeout)
        self._mask: np.ndarray | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Start an episode on the server (``options``: ``{"task": name}`` picks the task).

        Returns:
            ``(observation, info)``, as the served environment's ``reset``.
        """
        super().reset(seed=seed)
        fields: dict[str, Any] = {"env_id": self.env_id}
        if seed is not None:
            fields["seed"] = int(seed)
        task = (options or {}).get("task", self.task)
        if task is not None:
            fields["task"] = task
        observation, _, _, _, info = self._result(self.transport.reset(fields))
        return observation, info

    def step(self, action: Any):
        """One step on the server.

        Returns:
            ``(observation, reward, terminated, truncated, info)``, as the served environment's ``step``.
        """
        if isinstance(self.action_space, spaces.Discrete):
            value = action.reshape(()).item() if isinstance(action, np.ndarray) and action.size == 1 else action
            value = value.item() if isinstance(value, np.generic) else value
        else:
            value = codec.encode(self.action_space, action)
        return self._result(self.transport.step(value))

    def _result(self, payload: dict[str, Any]):
        fields = payload["observation"]
        observation = codec.decode(self.observation_space, fields["observation"])
        info = dict(fields.get("info") or {})
        mask = fields.get("action_mask")
        self._mask = None if mask is None else np.asarray(mask, dtype=bool)
        if self._mask is not None:
            info["action_mask"] = self._mask
        if fields.get("score") is not None:
            info["score"] = fields["score"]
        reward = payload.get("reward")
        return (observation, 0.0 if reward is None else float(reward), bool(fields.get("terminated")),
                bool(fields.get("truncated")), info)

    def action_masks(self) -> np.ndarray:
        """The last observation's action mask, bool (n,) (sb3-contrib's MaskablePPO).

        Raises:
            RemoteEnvError: The served environment has no action mask.
        """
        if self._mask is None:
            raise RemoteEnvError(f"{self.env_id} sends no action mask")
        return self._mask.copy()

    def state(self) -> dict[str, Any]:
        """The session's state on the server (``episode_id``, ``step_count``, ``task``, ``seed``, ``score``, ...)."""
        return self.transport.state()

    def close(self) -> None:
        """End the session (the server frees its environment)."""
        transport, self.transport = getattr(self, "transport", None), None
        if transport is not None:
            transport.close()
