"""HDeepRM's Gymnasium environments served over HTTP and WebSocket, the OpenEnv way (``hdeeprm-serve``).

:func:`build_app` wraps one registered environment (:data:`hdeeprm.ENV_ENTRY_POINTS`) in an OpenEnv
``Environment`` and builds the FastAPI application of ``openenv-core``'s ``create_app``: ``/health``,
``/schema`` and ``/metadata`` are OpenEnv's, with typed :class:`~openenv.core.Action` /
:class:`~openenv.core.Observation` models made from the environment's spaces. OpenEnv's HTTP ``/reset`` and
``/step`` build a fresh environment for every request (no episode lasts beyond one call), so they are
replaced by stateful ones with OpenEnv's request and response models: ``/reset`` opens an HTTP session and
returns its ``session_id`` in the observation, ``/step`` and ``/state`` take it back, ``/close`` frees it.
The WebSocket session path ``/ws`` speaks OpenEnv's protocol through :mod:`hdeeprm.serve.websocket`.

Every session (one WebSocket connection, or one HTTP ``session_id``) holds its own environment and
episode: its own seed (``reset``'s ``seed``, as Gymnasium's ``reset(seed=...)``), its own task
(``reset``'s ``task``: ``easy``, ``medium``, ``hard`` or a scenario of
:data:`~hdeeprm.env.gpu_scenarios.GPU_SCENARIOS`, held-out ones included, for the GPU environments; see
:func:`~hdeeprm.serve.sessions.env_tasks`). An observation carries the environment's observation (exact, see
:mod:`hdeeprm.serve.spaces`), the action mask, ``terminated``, ``truncated``, the grader's ``score`` at
the end of a graded episode, and the rest of ``info``.

Errors are one line, never a traceback, with the same text and status over HTTP and WebSocket: a
malformed request or a bad action gets 422, an unknown task or a bad environment argument 400, an unknown
or expired session 404, a step before ``reset`` or after the episode ended 409, a full server 503
(WebSocket: an ``error`` message with the line, OpenEnv's ``code`` and the ``status``). A session idle for
``session_timeout`` seconds is freed by the server's reaper task (a WebSocket session also at once when its
connection drops).
"""
from __future__ import annotations

import asyncio
import functools
import logging
from typing import Any

from fastapi import Body, FastAPI, WebSocket
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from hdeeprm.registry import suggest
from hdeeprm.serve.defaults import DEFAULT_HOST, DEFAULT_MAX_SESSIONS, DEFAULT_PORT, DEFAULT_SESSION_TIMEOUT
from hdeeprm.serve.openenv_api import (ConcurrencyConfig, ResetRequest, ResetResponse, StepRequest, StepResponse,
                                       create_app, serialize_observation)
from hdeeprm.serve.sessions import (Hub, ServedEnvironment, ServeError, Session, malformed, one_line,
                                    validation_message)
from hdeeprm.serve.websocket import serve_websocket

logger = logging.getLogger(__name__)

__all__ = ["DEFAULT_HOST", "DEFAULT_MAX_SESSIONS", "DEFAULT_PORT", "DEFAULT_SESSION_TIMEOUT", "Hub", "ServeError",
           "build_app", "validation_message"]


class CloseRequest(BaseModel):
    """``/close`` body: the HTTP session to free."""

    model_config = ConfigDict(extra="forbid")
    session_id: str


# ------------------------------------------------------------------ application
def build_app(env_id: str, env_kwargs: dict[str, Any] | None = None, *, max_sessions: int = DEFAULT_MAX_SESSIONS,
              session_timeout: float = DEFAULT_SESSION_TIMEOUT) -> FastAPI:
    """The FastAPI application serving ``env_id`` (see the module docstring); run it with uvicorn.

    Args:
        env_id, env_kwargs, max_sessions, session_timeout: As :class:`Hub`.

    Returns:
        The application; ``app.state.hub`` is its :class:`Hub`.

    Raises:
        OptionsError: As :class:`Hub` (and the environment's own errors for bad arguments).
    """
    hub = Hub(env_id, env_kwargs, max_sessions=max_sessions, session_timeout=session_timeout)
    app = create_app(functools.partial(ServedEnvironment, hub), hub.action_cls, hub.observation_cls,
                     env_name=hub.env_id,
                     concurrency_config=ConcurrencyConfig(max_concurrent_envs=max_sessions,
                                                          session_timeout=session_timeout))
    app.title = f"HDeepRM {hub.env_id}"
    app.state.hub = hub
    # OpenEnv's HTTP /reset, /step and /state use a new environment per request: replace them by sessions;
    # its /ws by hdeeprm.serve.websocket's (one-line errors with HTTP statuses, quiet disconnects).
    app.router.routes[:] = [route for route in app.router.routes
                            if getattr(route, "path", None) not in ("/reset", "/step", "/state", "/ws")]

    @app.websocket("/ws")
    async def websocket_session(websocket: WebSocket) -> None:
        await serve_websocket(hub, websocket)

    @app.post("/reset", response_model=ResetResponse, tags=["Environment Control"],
              summary="Open an HTTP session (or reset the one named by session_id) and start an episode")
    async def reset(request: ResetRequest = Body(default_factory=ResetRequest)) -> ResetResponse:
        fields = request.model_dump(exclude_unset=True)
        session_id = fields.pop("session_id", None)
        session = hub.http_session(str(session_id)) if session_id is not None else Session(hub, http=True)
        try:
            observation = await run_in_threadpool(session.reset, **fields)
        except BaseException:
            if session_id is None:
                session.close()
            raise
        if session_id is None:
            hub.keep(session)
        return ResetResponse(**serialize_observation(observation))

    @app.post("/step", response_model=StepResponse, tags=["Environment Control"],
              summary="One step of the HTTP session session_id")
    async def step(request: StepRequest) -> StepResponse:
        extra = dict(request.model_extra or {})
        session_id = extra.pop("session_id", None)
        if extra:
            name = next(iter(extra))
            raise ServeError(422, f"unknown step field '{name}' ({suggest(name, ['action', 'session_id'])})")
        if session_id is None:
            raise ServeError(422, "step needs the session_id that /reset returned (or use the WebSocket path /ws)")
        action = hub.parse_action(request.action)
        session = hub.http_session(str(session_id))
        observation = await run_in_threadpool(session.step, action)
        return StepResponse(**serialize_observation(observation))

    @app.get("/state", tags=["State Management"],
             summary="State of the HTTP session session_id, or of the server without it")
    async def state(session_id: str | None = None) -> dict[str, Any]:
        if session_id is None:
            return hub.server_state().model_dump()
        return hub.http_session(session_id).state().model_dump()

    @app.post("/close", tags=["Environment Control"], summary="Free the HTTP session session_id")
    async def close(request: CloseRequest) -> dict[str, Any]:
        await run_in_threadpool(hub.close_session, request.session_id)
        return {"session_id": request.session_id, "closed": True}

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request, exc: StarletteHTTPException) -> JSONResponse:
        detail = validation_message(exc.detail) if isinstance(exc.detail, list) else one_line(exc.detail)
        return JSONResponse({"detail": detail}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(RequestValidationError)
    async def malformed_request(request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse({"detail": str(malformed(list(exc.errors())).detail)}, status_code=422)

    @app.exception_handler(Exception)
    async def internal(request, exc: Exception) -> JSONResponse:
        logger.error("%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
        return JSONResponse({"detail": one_line(f"internal error: {type(exc).__name__}: {exc}")}, status_code=500)

    reaper: list[asyncio.Task] = []

    async def reap_forever() -> None:
        while True:
            await asyncio.sleep(min(hub.session_timeout / 4, 30.0))
            await run_in_threadpool(hub.reap)

    async def start_reaper() -> None:
        reaper.append(asyncio.create_task(reap_forever()))

    async def stop_reaper() -> None:
        for task in reaper:
            task.cancel()
        hub.close_all()

    app.router.on_startup.append(start_reaper)
    app.router.on_shutdown.append(stop_reaper)
    return app
