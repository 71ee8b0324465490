"""``hdeeprm-serve``: serve a registered HDeepRM environment over HTTP and WebSocket (OpenEnv, uvicorn).

Usage::

    hdeeprm-serve ENV_ID [--host 127.0.0.1] [--port 8000] [--max-sessions 16] [--session-timeout 600]
                  [KEY=VALUE ...]
    hdeeprm-serve hdeeprm/GpuProvisioning-v1                  # tasks easy, medium, hard, ... chosen at reset
    hdeeprm-serve GpuPlacement-v0 max_steps=500 scenario='["easy-gen","medium-gen"]'

``ENV_ID`` is an id of :data:`hdeeprm.ENV_ENTRY_POINTS`, with or without its ``hdeeprm/`` namespace.
``KEY=VALUE`` are the environment's constructor arguments; a VALUE is read as JSON when it is JSON
(``50``, ``0.5``, ``true``, ``null``, ``["a","b"]``) and as a string otherwise. The id, the arguments'
syntax and the address are checked before the server's modules load (a mistyped id is refused in well
under a second), then the environment is built once before the server starts, so a bad argument fails
before serving too, as ``hdeeprm-serve: error: <message>`` with exit status 2. See :mod:`hdeeprm.serve.app`
and ``docs/serve.rst``.
"""
from __future__ import annotations

import argparse
import json
import logging
import socket
import sys
from collections.abc import Sequence
from typing import Any

from hdeeprm.cli import command, guarded
from hdeeprm.cli.verbosity import add_verbosity_arguments, log_level
from hdeeprm.errors import OptionsError
from hdeeprm.jsontext import decode_json

PROG = "hdeeprm-serve"


def parse_assignments(items: Sequence[str]) -> dict[str, Any]:
    """``KEY=VALUE`` arguments as keyword arguments (VALUE as JSON when it is JSON, else as a string).

    Raises:
        OptionsError: An item without ``=``, a KEY that is not an identifier or given twice, a VALUE with
            a non-finite number or a repeated key (:func:`hdeeprm.jsontext.decode_json`).
    """
    kwargs: dict[str, Any] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.isidentifier():
            raise OptionsError(f"environment arguments must be KEY=VALUE with KEY a Python name, got {item!r}")
        if key in kwargs:
            raise OptionsError(f"environment argument '{key}' must be given once, got it twice")
        try:
            kwargs[key] = decode_json(text, f"argument {key}", OptionsError)
        except json.JSONDecodeError:
            kwargs[key] = text
    return kwargs


def check_address(host: str, port: int) -> None:
    """Refuse an address the server could not listen on, before building anything.

    Raises:
        OptionsError: ``cannot listen on HOST:PORT: <reason>``.
    """
    try:
        with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, port))
    except OSError as exc:
        raise OptionsError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``hdeeprm-serve``."""
    from hdeeprm.serve.defaults import DEFAULT_HOST, DEFAULT_MAX_SESSIONS, DEFAULT_PORT, DEFAULT_SESSION_TIMEOUT

    p = argparse.ArgumentParser(prog=PROG, description=__doc__.splitlines()[0].split(": ", 1)[1])
    p.add_argument("env_id", metavar="ENV_ID", help="registered id, e.g. hdeeprm/GpuProvisioning-v1")
    p.add_argument("kwargs", metavar="KEY=VALUE", nargs="*", help="environment constructor arguments")
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on [{DEFAULT_HOST}]")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port [{DEFAULT_PORT}]")
    p.add_argument("--max-sessions", type=int, default=DEFAULT_MAX_SESSIONS,
                   help=f"sessions held at once, HTTP and WebSocket together [{DEFAULT_MAX_SESSIONS}]")
    p.add_argument("--session-timeout", type=float, default=DEFAULT_SESSION_TIMEOUT,
                   help=f"seconds of inactivity after which a session is freed [{DEFAULT_SESSION_TIMEOUT:g}]")
    add_verbosity_arguments(p)   # HDeepRM's and uvicorn's log level
    return p


@command("hdeeprm-serve")
def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``hdeeprm-serve``; returns the exit status (0 after a Ctrl-C or SIGTERM shutdown)."""
    args = build_parser().parse_args(argv)

    def run() -> int:
        from hdeeprm.serve.defaults import resolve_env_id

        env_id = resolve_env_id(args.env_id)   # before the server's imports: a mistyped id is refused at once
        env_kwargs = parse_assignments(args.kwargs)
        if not 0 < args.port < 65536:
            raise OptionsError(f"--port must be in [1, 65535], got {args.port}")
        check_address(args.host, args.port)
        import uvicorn

        from hdeeprm.serve.app import build_app

        app = build_app(env_id, env_kwargs, max_sessions=args.max_sessions, session_timeout=args.session_timeout)
        hub = app.state.hub
        tasks = f"; tasks: {', '.join(hub.tasks)}" if hub.tasks else ""
        print(f"{PROG}: serving {hub.env_id} on http://{args.host}:{args.port} (WebSocket /ws, HTTP /reset "
              f"/step /state, /schema /metadata /health){tasks}", file=sys.stderr, flush=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level=logging.getLevelName(log_level(args)).lower())
        return 0

    return guarded(PROG, run, level=log_level(args))


if __name__ == "__main__":
    sys.exit(main())
