"""A server of hdeeprm.serve on a free loopback port, in a thread of the test process (bounded start and stop)."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

from hdeeprm.serve.app import build_app
from hdeeprm.simulation.batsim.pybatsim_adapter import free_loopback_port

#: Seconds a test server may take to start or stop.
START_STOP_SECONDS = 20.0


@contextmanager
def serving(env_id: str, env_kwargs: dict[str, Any] | None = None, **options: Any) -> Iterator[tuple[str, Any]]:
    """Serve ``env_id`` on 127.0.0.1 while the block runs; yields ``(base_url, app)``."""
    app = build_app(env_id, env_kwargs, **options)
    port = free_loopback_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="error"))
    thread = threading.Thread(target=server.run, name=f"hdeeprm-serve-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_STOP_SECONDS
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError(f"the test server on port {port} did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(START_STOP_SECONDS)
