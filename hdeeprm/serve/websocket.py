"""The WebSocket session path ``/ws`` of ``hdeeprm-serve``: OpenEnv's message protocol over one :class:`Session`.

A connection is one session. Messages are OpenEnv's (its ``WSResetMessage``, ``WSStepMessage``,
``WSStateMessage`` and ``WSCloseMessage`` models), one JSON object per text frame (a binary frame is read as
UTF-8 text):

* ``{"type": "reset", "data": {...}}``: the fields of HTTP ``/reset`` (``seed``, ``task``, ...), validated
  by the same model (OpenEnv's ``ResetRequest``);
* ``{"type": "step", "data": {"action": 1}}``: the action object (HTTP ``/step``'s ``action``);
* ``{"type": "state"}`` and ``{"type": "close"}``.

Replies are OpenEnv's ``{"type": "observation", "data": ...}`` and ``{"type": "state", "data": ...}``; a
refusal is ``{"type": "error", "data": {"message": ..., "code": ..., "status": ...}}`` with the one-line
message and the HTTP ``status`` that the same mistake gets over HTTP (:class:`ServeError`), and OpenEnv's
error ``code`` (``INVALID_JSON``, ``UNKNOWN_TYPE``, ``VALIDATION_ERROR`` for the other 422s,
``CAPACITY_REACHED`` for 503, ``EXECUTION_ERROR`` otherwise). The session goes on after a refusal.

This endpoint replaces OpenEnv 0.3.0's, which answers a JSON message that is not an object, or a binary
frame, with Python's error text (``'list' object has no attribute 'get'``, ``'text'``) and ends the session,
and which fails with a traceback in the server's log when a client leaves while its step runs. Here a
client that leaves is one ``info`` line of the ``hdeeprm.serve.websocket`` logger, and its session is
freed at once; an idle session is freed by the server's reaper (:meth:`Hub.reap`), after which its
calls get 404.
"""
from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import WebSocket, WebSocketDisconnect
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.websockets import WebSocketState

from hdeeprm.registry import suggest
from hdeeprm.serve.openenv_api import (ResetRequest, WSCloseMessage, WSErrorCode, WSErrorResponse,
                                       WSObservationResponse, WSResetMessage, WSStateMessage, WSStateResponse,
                                       WSStepMessage, serialize_observation)
from hdeeprm.serve.sessions import Hub, ServeError, Session, malformed, validation_message

logger = logging.getLogger(__name__)

#: Message type -> OpenEnv's model of that message.
MESSAGES = {"reset": WSResetMessage, "step": WSStepMessage, "state": WSStateMessage, "close": WSCloseMessage}


def error_reply(error: ServeError) -> str:
    """The ``error`` message of a refusal: its one-line message, OpenEnv's code and the HTTP status."""
    code = error.code or {422: WSErrorCode.VALIDATION_ERROR, 503: WSErrorCode.CAPACITY_REACHED}.get(
        error.status_code, WSErrorCode.EXECUTION_ERROR)
    return WSErrorResponse(data={"message": str(error.detail), "code": str(getattr(code, "value", code)),
                                 "status": error.status_code}).model_dump_json()


def parse(frame: dict[str, Any]) -> Any:
    """The validated OpenEnv message of a received frame.

    Raises:
        ServeError: 422 ``malformed request: not JSON (...)`` (code ``INVALID_JSON``), ``malformed request:
            Input should be a JSON object (got ...)``, ``malformed request: <field>: ...``, or ``unknown
            message type 'x' (valid: ...)`` (code ``UNKNOWN_TYPE``): the texts of HTTP's malformed bodies.
    """
    text = frame.get("text")
    if text is None:
        try:
            text = (frame.get("bytes") or b"").decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ServeError(422, "malformed request: " + validation_message([{
                "type": "json_invalid", "loc": (exc.start,), "ctx": {"error": "not UTF-8 text"}}]),
                code=WSErrorCode.INVALID_JSON) from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ServeError(422, "malformed request: " + validation_message([{
            "type": "json_invalid", "loc": (exc.pos,), "ctx": {"error": exc.msg}}]),
            code=WSErrorCode.INVALID_JSON) from None
    if not isinstance(value, dict):
        raise malformed([{"type": "dict_type", "loc": (), "input": value}])
    if "type" not in value:
        raise malformed([{"type": "missing", "loc": ("type",), "msg": "Field required"}])
    kind = value["type"]
    if kind not in MESSAGES:
        raise ServeError(422, f"unknown message type {kind!r} ({suggest(str(kind), list(MESSAGES))})",
                         code=WSErrorCode.UNKNOWN_TYPE)
    try:
        return MESSAGES[kind].model_validate(value)
    except ValidationError as exc:
        raise malformed(exc.errors()) from None


async def answer(hub: Hub, session: Session, message: Any) -> str | None:
    """The reply to one message (None for ``close``).

    Raises:
        ServeError: The session's refusals (:meth:`Session.reset`, :meth:`Session.step`), a malformed
            ``reset`` (``ResetRequest``'s errors) or action (:meth:`Hub.parse_action`).
    """
    if message.type == "reset":
        try:
            fields = ResetRequest.model_validate(message.data).model_dump(exclude_unset=True)
        except ValidationError as exc:
            raise malformed(exc.errors()) from None
        observation = await run_in_threadpool(session.reset, **fields)
        return WSObservationResponse(data=serialize_observation(observation)).model_dump_json()
    if message.type == "step":
        action = hub.parse_action(message.data)
        observation = await run_in_threadpool(session.step, action)
        return WSObservationResponse(data=serialize_observation(observation)).model_dump_json()
    if message.type == "state":
        return WSStateResponse(data=session.state().model_dump()).model_dump_json()
    return None


async def serve_websocket(hub: Hub, websocket: WebSocket) -> None:
    """Hold one WebSocket session until the client closes it, sends ``close`` or leaves (see the module docstring).

    Args:
        hub: The server's :class:`Hub`.
        websocket: The accepted-to-be connection (Starlette's).
    """
    await websocket.accept()
    session = Session(hub)
    hub.keep(session)
    try:
        while True:
            frame = await websocket.receive()
            if frame["type"] == "websocket.disconnect":
                break
            try:
                reply = await answer(hub, session, parse(frame))
            except ServeError as exc:
                reply = error_reply(exc)
            except Exception as exc:   # noqa: BLE001  (one line in the log and to the client, never a traceback)
                logger.error("WebSocket session %s failed: %s: %s", session.id, type(exc).__name__, exc)
                reply = error_reply(ServeError(500, f"internal error: {type(exc).__name__}: {exc}"))
            if reply is None:
                break
            await websocket.send_text(reply)
    except WebSocketDisconnect:
        logger.info("WebSocket session %s: the client left before its reply was sent", session.id)
    finally:
        await run_in_threadpool(hub.forget, session)
        if websocket.application_state == WebSocketState.CONNECTED and \
                websocket.client_state == WebSocketState.CONNECTED:
            try:
                await websocket.close()
            except (RuntimeError, WebSocketDisconnect):
                pass   # the client went meanwhile: nothing left to close
