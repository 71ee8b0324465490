"""Stopping a command cleanly: Ctrl-C (SIGINT) and SIGTERM take one path.

A terminal's Ctrl-C raises :class:`KeyboardInterrupt`. Batch systems and ``kill`` or ``timeout``
send SIGTERM instead (Slurm sends it at a job's time limit, then SIGKILL after its ``KillWait``:
https://slurm.schedmd.com/scancel.html), which by default ends Python at once: a run's folder
stays marked running, an evaluation's or a sweep's lock stays behind. The command-line front
ends install :func:`on_sigterm`, so SIGTERM raises :class:`KeyboardInterrupt` too and takes the
interrupt's path (worker pools stop their workers, a run marks its folder interrupted); the
command then says ``prog: terminated`` and exits 143 (:data:`hdeeprm.cli.EXIT_TERMINATED`).
:func:`deferred` holds both signals back over a block that an interrupt must not split.
"""
from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator

_stopped_by: dict[str, bool] = {"sigterm": False}


def on_sigterm(signum: int, frame: object) -> None:
    """SIGTERM handler of the command-line front ends: remember it, then stop as Ctrl-C does.

    Raises:
        KeyboardInterrupt: always.
    """
    _stopped_by["sigterm"] = True
    raise KeyboardInterrupt


def terminated() -> bool:
    """Whether SIGTERM stopped this process's command (:func:`on_sigterm` was called)."""
    return _stopped_by["sigterm"]


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) and SIGTERM back until the end of the block, then raise the interrupt.

    Only the signals whose handler is the interrupt's own (Python's for SIGINT, :func:`on_sigterm`
    for SIGTERM) are held; outside the main thread nothing is.

    Raises:
        KeyboardInterrupt: after the block, when a held signal arrived during it.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = {}
    for signum, handler in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, on_sigterm)):
        if signal.getsignal(signum) is handler:
            previous[signum] = signal.signal(signum, lambda number, frame: caught.append(number))
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    if caught:
        if signal.SIGTERM in caught:
            _stopped_by["sigterm"] = True
        raise KeyboardInterrupt
