"""Test-only in-process equivalents of the decision processes of the Batsim golden runs.

They drive :class:`hdeeprm.simulation.engine.Engine` directly, taking their decisions once
per batch, like the pybatsim schedulers did once per Batsim message (``onNoMoreEvents``):

* :func:`run_fcfs` = the kth2000-delay run's ``fcfsRef.py`` (also used by energy-micro);
* :func:`run_pstate_fcfs` = the hetero-ptask run's ``pstateFcfs.py``.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from hdeeprm.simulation.engine import Engine


def _start_fcfs(engine: Engine, queue: deque, free: np.ndarray) -> list:
    """Pop the queue head while it fits; allocate the lowest-id free hosts. Returns (job, hosts)."""
    started = []
    nb_free = int(free.sum())
    while queue and queue[0].res <= nb_free:
        job = queue.popleft()
        hosts = np.flatnonzero(free)[:job.res]
        free[hosts] = False
        nb_free -= job.res
        started.append((job, hosts))
    return started


def _handle_events(engine: Engine, batch, queue: deque, free: np.ndarray) -> None:
    nb_hosts = len(free)
    for job in batch.submitted:
        if job.res > nb_hosts:
            engine.reject_job(job, f"requests {job.res} hosts, the platform has {nb_hosts}")
        else:
            queue.append(job)
    for job in batch.completed:
        free[list(engine.allocation[job.index])] = True


def run_fcfs(engine: Engine) -> None:
    """Strict FCFS (fcfsRef.py): FIFO in submission order, the head blocks, lowest-id free hosts,
    jobs larger than the platform rejected."""
    free = np.ones(engine.nb_hosts, dtype=bool)
    queue: deque = deque()
    while (batch := engine.next_batch()) is not None:
        _handle_events(engine, batch, queue, free)
        for job, hosts in _start_fcfs(engine, queue, free):
            engine.execute_job(job, hosts)


def run_pstate_fcfs(engine: Engine, fast_hosts: set[int], initial_pstate: int = 3) -> None:
    """Strict FCFS with pstate control (pstateFcfs.py).

    After starting what fits: wanted pstate = 3 for free hosts, 0 for busy hosts, except 1 for
    busy hosts of ``fast_hosts`` while >= 3 jobs run; only differing hosts are switched, one
    set_pstate per target pstate (ascending), before the executions of the same batch.
    """
    n = engine.nb_hosts
    free = np.ones(n, dtype=bool)
    queue: deque = deque()
    running: set[str] = set()
    pstate = np.full(n, initial_pstate)
    fast = np.zeros(n, dtype=bool)
    fast[sorted(fast_hosts)] = True
    while (batch := engine.next_batch()) is not None:
        _handle_events(engine, batch, queue, free)
        for job in batch.completed:
            running.discard(job.id)
        started = _start_fcfs(engine, queue, free)
        running.update(job.id for job, _ in started)
        wanted = np.where(free, 3, np.where((len(running) >= 3) & fast, 1, 0))
        for ps in np.unique(wanted[wanted != pstate]):
            hosts = np.flatnonzero((wanted == ps) & (wanted != pstate))
            engine.set_pstate(hosts, int(ps))
        pstate = wanted
        for job, hosts in started:
            engine.execute_job(job, hosts)
