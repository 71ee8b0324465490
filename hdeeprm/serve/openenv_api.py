"""The names of ``openenv-core`` that :mod:`hdeeprm.serve` uses, imported without OpenEnv's Gradio web interface.

``openenv.core`` imports its optional web interface (``openenv.core.env_server.web_interface``, which
imports Gradio, pandas and IPython: about 2.7 s of a 2-core machine's start-up) whenever it is imported, and
falls back to ``None`` when that module cannot be found (its ``ModuleNotFoundError`` branch, as without
Gradio installed). ``hdeeprm-serve`` never uses that interface, so the first import of ``openenv.core``
goes through :func:`import_openenv_core`, which marks the module as absent while OpenEnv's package loads
(a ``None`` entry in :data:`sys.modules`, Python's documented way to make an import raise
``ModuleNotFoundError``) and lifts the mark right after: OpenEnv's own lazy import of the interface
(``create_app`` with ``ENABLE_WEB_INTERFACE=true``) still finds it. When ``openenv.core`` is already
loaded, nothing changes.
"""
from __future__ import annotations

import importlib
import sys
from types import ModuleType

#: OpenEnv's optional Gradio web interface, kept out of ``openenv.core``'s first import.
WEB_INTERFACE = "openenv.core.env_server.web_interface"


def import_openenv_core() -> ModuleType:
    """``openenv.core``, imported (the first time) without its Gradio web interface (see the module docstring).

    Returns:
        The ``openenv.core`` module.
    """
    if "openenv.core" in sys.modules:
        return sys.modules["openenv.core"]
    marked = WEB_INTERFACE not in sys.modules
    if marked:
        sys.modules[WEB_INTERFACE] = None
    try:
        return importlib.import_module("openenv.core")
    finally:
        if marked and WEB_INTERFACE in sys.modules and sys.modules[WEB_INTERFACE] is None:
            del sys.modules[WEB_INTERFACE]


import_openenv_core()

from openenv.core import (Action, ConcurrencyConfig, EnvClient, Environment, Observation, State,  # noqa: E402
                          create_app)
from openenv.core.client_types import StepResult  # noqa: E402
from openenv.core.env_server.serialization import deserialize_action, serialize_observation  # noqa: E402
from openenv.core.env_server.types import (EnvironmentMetadata, ResetRequest, ResetResponse, StepRequest,  # noqa: E402
                                           StepResponse, WSCloseMessage, WSErrorCode, WSErrorResponse,
                                           WSObservationResponse, WSResetMessage, WSStateMessage, WSStateResponse,
                                           WSStepMessage)

__all__ = ["Action", "ConcurrencyConfig", "EnvClient", "Environment", "EnvironmentMetadata", "Observation",
           "ResetRequest", "ResetResponse", "State", "StepRequest", "StepResponse", "StepResult", "WSCloseMessage",
           "WSErrorCode", "WSErrorResponse", "WSObservationResponse", "WSResetMessage", "WSStateMessage",
           "WSStateResponse", "WSStepMessage", "create_app", "deserialize_action",
           "import_openenv_core", "serialize_observation"]
