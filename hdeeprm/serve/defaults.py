"""What ``hdeeprm-serve`` knows before it imports its server: the defaults and the environment id check.

This module imports nothing but :mod:`hdeeprm` (whose :data:`~hdeeprm.ENV_ENTRY_POINTS` is the one list of
registered ids), so the command refuses a mistyped id, a bad port or a busy address without importing
OpenEnv, FastAPI, Gymnasium or the environments' modules (``benchmarks/bench_serve_start.py`` times it).
"""
from __future__ import annotations

from hdeeprm import ENV_ENTRY_POINTS
from hdeeprm.errors import OptionsError
from hdeeprm.registry import suggest

#: Default address and port of ``hdeeprm-serve`` (loopback only: the server runs whatever its clients ask).
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
#: Sessions (WebSocket and HTTP together) a server holds at once.
DEFAULT_MAX_SESSIONS = 16
#: Seconds of inactivity after which a session is freed.
DEFAULT_SESSION_TIMEOUT = 600.0
#: Namespace of HDeepRM's environment ids (``GpuProvisioning-v1`` is accepted for ``hdeeprm/GpuProvisioning-v1``).
NAMESPACE = "hdeeprm/"


def resolve_env_id(name: str) -> str:
    """The registered id ``name`` names (``hdeeprm/X`` or ``X``), checked against :data:`hdeeprm.ENV_ENTRY_POINTS`.

    Args:
        name: An id, with or without the ``hdeeprm/`` namespace.

    Returns:
        The registered id, e.g. ``"hdeeprm/GpuProvisioning-v1"``.

    Raises:
        OptionsError: ``unknown environment id 'X' (valid: ...; did you mean '...'?)``.
    """
    for candidate in (name, NAMESPACE + name):
        if candidate in ENV_ENTRY_POINTS:
            return candidate
    raise OptionsError(f"unknown environment id '{name}' ({suggest(name, list(ENV_ENTRY_POINTS))})")
