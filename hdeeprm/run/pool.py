"""Worker processes for ``hdeeprm-evaluate -j`` and ``hdeeprm-sweep -j``, stopped cleanly by Ctrl-C.

A terminal's Ctrl-C sends SIGINT to the whole process group: without care every worker would
print its own ``KeyboardInterrupt`` traceback. Here the workers ignore SIGINT and the parent,
which receives it as :class:`KeyboardInterrupt`, cancels the tasks not started and sends the
workers SIGTERM: a task that is running raises :class:`KeyboardInterrupt` inside the task (a run
then marks its folder interrupted, as in the parent), an idle worker exits at once, and no worker
starts a task queued to it after that. A SIGTERM to the parent takes the same path
(:mod:`hdeeprm.run.stop`). :func:`worker_pool` starts every worker at once, so their start-up runs
while the parent prepares the tasks; :func:`worker_map` maps one function over a task list.
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence, Sized
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Any

#: Seconds the parent waits for interrupted workers to end before killing them.
STOP_TIMEOUT = 10.0
_in_task = False
_stopping = False


def _on_sigterm(signum: int, frame: object) -> None:
    """A worker's SIGTERM: interrupt the running task, or end an idle worker quietly.

    The worker then starts no other task (the pool may have queued some to it already).
    """
    global _stopping
    _stopping = True
    if _in_task:
        raise KeyboardInterrupt
    os._exit(130)


def _init(initializer: Callable[..., None] | None, initargs: tuple) -> None:
    """Worker start: leave SIGINT to the parent, turn SIGTERM into an interrupt, run ``initializer``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _on_sigterm)
    if initializer is not None:
        initializer(*initargs)


def _call(fn: Callable[[Any], Any], task: Any) -> Any:
    """Run one task, SIGTERM interrupting it."""
    global _in_task
    if _stopping:   # told to stop while a task ran: the tasks queued after it are not started
        os._exit(130)
    _in_task = True
    try:
        return fn(task)
    finally:
        _in_task = False


def _import_all(names: tuple[str, ...]) -> None:
    """Import ``names``, ignoring those that are not installed."""
    for name in names:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _started() -> None:
    """A no-op task: submitting one per worker starts them all at once."""


class WorkerPool:
    """Worker processes that are up (see :func:`worker_pool`); :meth:`map` gives them tasks.

    Args:
        executor: The started process pool.
    """

    def __init__(self, executor: ProcessPoolExecutor) -> None:
        self._executor = executor

    def map(self, fn: Callable[[Any], Any], tasks: Iterable[Any], chunksize: int = 1) -> Iterator[Any]:
        """Map ``fn`` over ``tasks`` on the workers; results in task order, as they come.

        Args:
            fn: A module-level function of one task (pickled to the workers).
            tasks: The tasks (picklable).
            chunksize: Consecutive tasks sent to one worker together (>= 1): tasks that share what a worker
                caches then share it.
        """
        return self._executor.map(functools.partial(_call, fn), tasks, chunksize=chunksize)


@contextlib.contextmanager
def worker_pool(jobs: int, initializer: Callable[..., None] | None = None, initargs: tuple = (),
                preload: Sequence[str] = ()) -> Iterator[WorkerPool]:
    """``jobs`` spawned worker processes, all started at once, for the block.

    The workers start when the pool is made, not at the first task: their start (an interpreter, the
    imports, ``initializer``) runs while the caller prepares the tasks (e.g. an evaluation's plan).

    Args:
        jobs: Worker processes (>= 1).
        initializer, initargs: Run once in each worker at its start (the workers stay up for every task:
            what it builds, and the imports, are paid once per worker).
        preload: Modules the parent imports in a background thread while it waits on the workers: what it
            needs after them (the summary's ``matplotlib.pyplot``) is then ready, not imported on the critical
            path after the last task (one missing is left to the code that needs it to report).

    Yields:
        The :class:`WorkerPool`.

    When the block raises (Ctrl-C in the parent included), the tasks not started are cancelled, the
    workers are stopped (SIGTERM, then SIGKILL after :data:`STOP_TIMEOUT` s) and the ``preload``
    imports are let finish (at most :data:`STOP_TIMEOUT` s more: an import cut short by the
    interpreter's exit prints errors from its half-made objects) before the exception goes on.
    """
    executor = ProcessPoolExecutor(max_workers=jobs, mp_context=get_context("spawn"), initializer=_init,
                                   initargs=(initializer, initargs))
    preloader = None
    try:
        for _ in range(jobs):   # each submit starts one worker while none is idle
            executor.submit(_started)
        if preload:
            preloader = threading.Thread(target=_import_all, args=(tuple(preload),), name="worker_pool-preload",
                                         daemon=True)
            preloader.start()
        yield WorkerPool(executor)
    except BaseException:
        processes = list((getattr(executor, "_processes", None) or {}).values())
        executor.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            with contextlib.suppress(Exception):
                process.terminate()
        for process in processes:
            with contextlib.suppress(Exception):
                process.join(STOP_TIMEOUT)
                if process.is_alive():
                    process.kill()
        if preloader is not None:   # an import cut short by the exit leaves half-made objects ("Exception ignored")
            preloader.join(STOP_TIMEOUT)
        raise
    executor.shutdown()


@contextlib.contextmanager
def worker_map(fn: Callable[[Any], Any], tasks: Iterable[Any], jobs: int,
               initializer: Callable[..., None] | None = None, initargs: tuple = (),
               chunksize: int = 1, preload: Sequence[str] = ()) -> Iterator[Iterator[Any]]:
    """Map ``fn`` over ``tasks`` on ``jobs`` spawned worker processes; results in task order.

    :func:`worker_pool` and :meth:`WorkerPool.map` in one step (same arguments, same stop on an interrupt);
    no more workers than tasks are started when ``tasks`` has a length.

    Yields:
        The results, in the order of ``tasks``, as they come.
    """
    if isinstance(tasks, Sized) and len(tasks):
        jobs = min(jobs, len(tasks))
    with worker_pool(jobs, initializer, initargs, preload) as pool:
        yield pool.map(fn, tasks, chunksize)
