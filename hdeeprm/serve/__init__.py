"""HDeepRM's environments over the network, the OpenEnv way (``pip install -e ".[serve]"``).

* :func:`~hdeeprm.serve.app.build_app`: the OpenEnv application serving one registered environment
  (what ``hdeeprm-serve ENV_ID`` runs on uvicorn);
* :class:`~hdeeprm.serve.client.Client`: a served environment back as a Gymnasium environment;
* :mod:`~hdeeprm.serve.spaces`: spaces and their values as exact JSON.

See ``docs/serve.rst``. The names load on first use (PEP 562), so importing this package needs neither
``openenv-core`` nor uvicorn.

The other modules:

* :mod:`~hdeeprm.serve.sessions`: Sessions of ``hdeeprm-serve``: one Gymnasium environment and episode per
  client, behind OpenEnv's interfaces.
* :mod:`~hdeeprm.serve.websocket`: the WebSocket session path ``/ws``: OpenEnv's message protocol over one
  session, with the HTTP routes' one-line errors and statuses.
* :mod:`~hdeeprm.serve.models`: the typed OpenEnv models of a served environment (actions, observations,
  states).
* :mod:`~hdeeprm.serve.defaults`: what ``hdeeprm-serve`` knows before it imports its server: the defaults and
  the environment id check (imports nothing heavy).
* :mod:`~hdeeprm.serve.openenv_api`: the names of ``openenv-core`` the server and client use, imported without
  OpenEnv's Gradio web interface (start-up time).
"""
from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {"build_app": "hdeeprm.serve.app", "Hub": "hdeeprm.serve.app", "ServeError": "hdeeprm.serve.app",
            "Client": "hdeeprm.serve.client", "RemoteEnvError": "hdeeprm.serve.client"}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """The public names, imported from their modules on first access."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hdeeprm.serve' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    """The public names."""
    return __all__
