"""Input checks of the embedded engine: host tables, job profiles and decision arguments.

The :class:`~hdeeprm.simulation.engine.Engine` runs these before it changes anything, so that a
refused decision leaves the simulation as it was. Messages follow the project's form "``X``
must be Y, got Z".
"""
from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence

import numpy as np

from hdeeprm.errors import PlatformError, SimulationError
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.simulation.energy import COMP, IDLE, SPEED
from hdeeprm.simulation.runs import RUNS, HostRuns
from hdeeprm.workload.model import DELAY, PARALLEL_HOMOGENEOUS, Job

_min = np.minimum.reduce
def host_tables(hosts: Sequence[HostSpec]) -> tuple[np.ndarray, np.ndarray]:
    """Pack the pstate tables of the hosts into one array padded with NaN.

    Args:
        hosts: Compute hosts, by host id.

    Returns:
        ``(table, nb_pstates)``: ``table[p, k, h]`` is the speed (FLOP/s, k = SPEED), Idle
        wattage (W, k = IDLE) or AllCores wattage (W, k = COMP) of host h in pstate p, float64
        (max_pstates, 3, nb_hosts), so that ``table[p]`` is one contiguous block; ``nb_pstates``
        the number of pstates of each host, intp (nb_hosts,).

    Raises:
        PlatformError: No host, a host without pstate or with inconsistent table lengths, or a
            bad initial pstate.
    """
    if not hosts:
        raise PlatformError("the platform must have at least one compute host, got 0")
    counts = [len(h.speeds) for h in hosts]
    for h, k in zip(hosts, counts):
        if k == 0 or len(h.idle_watts) != k or len(h.computing_watts) != k:
            raise PlatformError(
                f"host {h.name!r} must have as many idle/computing wattages as speeds (>= 1), got "
                f"{k} speeds, {len(h.idle_watts)} idle and {len(h.computing_watts)} computing wattages")
        if not 0 <= h.initial_pstate < k:
            raise PlatformError(f"host {h.name!r}: initial pstate must be in [0, {k - 1}], "
                                f"got {h.initial_pstate}")
    nb_ps = np.array(counts, dtype=np.intp)
    table = np.full((max(counts), 3, len(hosts)), np.nan)
    if min(counts) == max(counts):   # the usual platform: one array per row, not three copies per host
        table[:, SPEED] = np.array([h.speeds for h in hosts], dtype=np.float64).T
        table[:, IDLE] = np.array([h.idle_watts for h in hosts], dtype=np.float64).T
        table[:, COMP] = np.array([h.computing_watts for h in hosts], dtype=np.float64).T
        return table, nb_ps
    for i, (h, k) in enumerate(zip(hosts, counts)):
        table[:k, SPEED, i] = h.speeds
        table[:k, IDLE, i] = h.idle_watts
        table[:k, COMP, i] = h.computing_watts
    return table, nb_ps


def computes(jobs: Sequence[Job]) -> list[bool]:
    """Whether each job is ``parallel_homogeneous`` (True) or ``delay`` (False), by job index.

    Args:
        jobs: The jobs of the workload, in index order.

    Raises:
        SimulationError: A job's index is not its position, a ``parallel_homogeneous`` profile
            has ``com`` != 0, or a profile has another type.
    """
    flags = [False] * len(jobs)
    for i, job in enumerate(jobs):
        if job.index != i:
            raise SimulationError(f"job {job.id!r} is at position {i} of the workload but has "
                                  f"index {job.index}; indices must be positions")
        ptype = job.profile.type
        if ptype == PARALLEL_HOMOGENEOUS:
            if job.profile.com != 0:
                raise SimulationError(f"job {job.id!r}: profile {job.profile.name!r} has com = "
                                      f"{job.profile.com}; only com = 0 is simulated")
            flags[i] = True
        elif ptype != DELAY:
            raise SimulationError(f"job {job.id!r}: profile {job.profile.name!r} has type "
                                  f"{ptype!r}; the embedded engine supports 'delay' and "
                                  f"'parallel_homogeneous' only")
    return flags


def _command(job: Job | None) -> str:
    """Name of a decision in error messages: ``execute job 'id'`` or ``set_pstate``."""
    return "set_pstate" if job is None else f"execute job {job.id!r}"


def host_ids(hosts: Sequence[int], nb_hosts: int,
             job: Job | None) -> tuple[tuple[int, ...], np.ndarray]:
    """Validate the host ids of a decision about ``job`` (None: a pstate switch).

    Args:
        hosts: Host ids (a sequence of ints or a 1-D integer array).
        nb_hosts: Number of compute hosts.
        job: The job to execute, or None for a pstate switch.

    Returns:
        The ids as a tuple of ints and as an intp index array (a copy).

    Raises:
        SimulationError: Not integers, empty, out of ``[0, nb_hosts)`` or repeated.
    """
    if isinstance(hosts, np.ndarray):
        if hosts.dtype.kind not in "iu" or hosts.ndim != 1:
            raise SimulationError(f"{_command(job)}: host ids must be a 1-D integer array, got "
                                  f"dtype {hosts.dtype} and shape {hosts.shape}")
        idx = hosts.astype(np.intp)  # a copy: the caller may reuse its array
        alloc = tuple(idx.tolist())
    else:
        try:
            alloc = tuple(map(operator.index, hosts))
        except TypeError:
            raise SimulationError(f"{_command(job)}: host ids must be integers, got {hosts!r}") from None
        idx = np.array(alloc, dtype=np.intp)
    if not alloc:
        raise SimulationError(f"{_command(job)}: the host list is empty")
    if min(alloc) < 0 or max(alloc) >= nb_hosts:
        bad = [h for h in alloc if not 0 <= h < nb_hosts]
        raise SimulationError(f"{_command(job)}: host ids must be in [0, {nb_hosts - 1}], got {bad}")
    if len(set(alloc)) != len(alloc):
        raise SimulationError(f"{_command(job)}: host ids must be distinct, got {list(alloc)}")
    return alloc, idx


def trusted_hosts(hosts: np.ndarray | HostRuns) -> tuple[tuple[int, ...] | HostRuns, np.ndarray | slice]:
    """The allocation and the index of the hosts of a job whose caller vouches for them (not checked).

    Args:
        hosts: Distinct free host ids, an integer array (kept, not copied) or a
            :class:`~hdeeprm.simulation.runs.HostRuns`.

    Returns:
        ``(allocation, index)``: the ids as a tuple, or as a :class:`~hdeeprm.simulation.runs.HostRuns` above
        :data:`~hdeeprm.simulation.runs.RUNS` hosts; and their slice when they are one ascending run, else
        their array (to index the per-host arrays).
    """
    if type(hosts) is not HostRuns:
        if len(hosts) <= RUNS:
            alloc = tuple(hosts.tolist())
            n, lo = len(alloc), alloc[0] if alloc else 0   # one ascending run: a slice (fast writes and sums)
            if n > 2 and alloc[-1] - lo + 1 == n and alloc == tuple(range(lo, lo + n)):
                return alloc, slice(lo, lo + n)
            return alloc, hosts
        hosts = HostRuns.of(hosts)
    return hosts, hosts.idx


def pstate_groups(changes: Mapping[int, Sequence[int]], nb_pstates: np.ndarray,
                  uniform: int) -> list[tuple[tuple[int, ...], np.ndarray, int]]:
    """Validate a ``{pstate: hosts}`` mapping of pstate switches, entry by entry.

    Args:
        changes: Pstate -> distinct host ids.
        nb_pstates: Number of pstates of each host, intp (nb_hosts,).
        uniform: That number when every host has the same, else 0.

    Returns:
        ``(host ids, intp index array, pstate)`` per entry, in the mapping's order.

    Raises:
        SimulationError: A host id is invalid (see :func:`host_ids`) or a pstate is out of
            range for one of its hosts.
    """
    groups = []
    for pstate, hosts in changes.items():
        alloc, idx = host_ids(hosts, len(nb_pstates), None)
        p = int(pstate)
        limit = uniform or int(_min(nb_pstates[idx]))
        if not 0 <= p < limit:
            raise SimulationError(f"set_pstate: pstate must be in [0, {limit - 1}] for hosts "
                                  f"{list(alloc)}, got {pstate}")
        groups.append((alloc, idx, p))
    return groups
