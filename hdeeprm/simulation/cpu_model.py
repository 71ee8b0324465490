"""The CPU resource model of the event kernel: hosts, pstates, lockstep progress and Batsim 4.2.1's energy.

Every Batsim job runs on hosts (cores); this model keeps what the hosts are doing, as Batsim 4.2.1 on SimGrid
does with an ideal network:

- **which job runs where**: a job takes ``res`` distinct free hosts from its start to its end; the model keeps
  the job index on every host, which hosts are busy and, for ``out_schedule.csv``, the seconds of ended jobs and
  the last end per host;
- **pstates** (:class:`~hdeeprm.simulation.pstates.HostPstates`): every host has its table of (speed FLOP/s,
  idle W, computing W) per pstate and its current pstate; a switch applies at once (Batsim's
  SET_RESOURCE_STATE);
- **lockstep progress** of ``parallel_homogeneous`` jobs (SimGrid's ptask_L07 model with ``com`` = 0): such a
  job computes ``cpu`` FLOP on each of its hosts at the minimum, over them, of their current speed; a pstate
  switch of one of them changes the rate from that instant (the kernel then re-times the job's end);
- **energy** (:class:`~hdeeprm.simulation.energy.EnergyAccount`, docs/engine.rst, "Energy accounting"): host
  power is the pstate's idle or computing wattage, integrated as Batsim's energy plugin does.

The rules are in ``docs/engine.rst``. The event kernel (:class:`~hdeeprm.simulation.engine.Engine`) owns the
jobs' states, times and the heap; it asks this model to take and free hosts, to switch pstates and for a
computing job's end, and knows nothing else of hosts. The model records its rows (machine states, pstate
changes, energy) in the run's :class:`~hdeeprm.simulation.recording.Recorder` when one is given.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from hdeeprm.errors import SimulationError
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.simulation import checks
from hdeeprm.simulation.energy import EnergyAccount, gather
from hdeeprm.simulation.pstates import HostPstates, occupy_hosts, release_hosts
from hdeeprm.simulation.recording import Recorder
from hdeeprm.workload.model import Job

__all__ = ["CpuModel"]

_INF = math.inf


class CpuModel:
    """The hosts of one run: allocation, pstates, lockstep rates and energy (see the module docstring).

    Args:
        hosts: Compute hosts; host id ``i`` is ``hosts[i]`` (Batsim ids; docs/engine.rst, "Host numbering").
            May be empty only with ``hostless`` (a GPU cluster whose CPUs are not simulated).
        nb_jobs: Number of jobs of the workload (per-job arrays are sized by it).
        energy: Keep Batsim's energy (``-E``); without it :attr:`account` is None.
        hostless: Accept no host at all.

    Attributes:
        nb_hosts: Number of hosts.
        busy: Whether a job runs on each host, bool (nb_hosts,).
        nb_busy: Number of busy hosts.
        host_busy: Seconds of ended jobs on each host, float64 (nb_hosts,).
        host_last_end: End of the last ended job on each host (s), float64 (nb_hosts,); -inf before any.
        initial_pstates: Pstate of each host at t = 0, intp (nb_hosts,).
        account: The energy account, or None without energy.
        recorder: Where machine-state, pstate and energy rows go, or None.
        grouped_switches, machine_switches: Switch counts of ``out_schedule.csv`` (entries, host switches).

    Raises:
        PlatformError: Malformed host tables.
    """

    name = "cpu"

    def __init__(self, hosts: Sequence[HostSpec], nb_jobs: int, *, energy: bool = True,
                 hostless: bool = False) -> None:
        self.hosts = tuple(hosts)
        if self.hosts or not hostless:
            self._table, self.nb_pstates = checks.host_tables(self.hosts)
        else:   # GPUs only: no CPU host to simulate
            self._table, self.nb_pstates = np.zeros((1, 3, 0)), np.zeros(0, dtype=np.intp)
        n = self.nb_hosts = len(self.hosts)
        counts = self.nb_pstates  # their common number when all hosts have the same, else 0:
        self.uniform_pstates = int(counts[0]) if n and (counts == counts[0]).all() else 0
        self.initial_pstates = np.array([h.initial_pstate for h in self.hosts], dtype=np.intp)
        self.busy = np.zeros(n, dtype=bool)
        self.nb_busy = 0
        self.host_busy = np.zeros(n)
        self.host_last_end = np.full(n, -_INF)
        self.now_pstates = HostPstates(self._table, self.initial_pstates.tolist())
        self._host_jobs = None if self.now_pstates.curs is None else np.full(n, -1, dtype=np.int64)   # -1: free
        self._host_job = [-1] * n if self._host_jobs is None else memoryview(self._host_jobs)   # as HostPstates
        self.account = EnergyAccount(self.now_pstates.cur, nb_jobs) if energy else None
        self.recorder: Recorder | None = None
        self._idx: list[np.ndarray | slice | None] = [None] * nb_jobs   # while running (a slice: a run)
        self._remaining = [0.0] * nb_jobs   # FLOP left per host (parallel_homogeneous)
        self._rate = [0.0] * nb_jobs        # FLOP/s per host (lockstep rate)
        self._last = [0.0] * nb_jobs        # time of the last progress update (s)
        self.grouped_switches = 0
        self.machine_switches = 0

    # ------------------------------------------------------------------ hosts of a job
    def hosts_for(self, job: Job, hosts: Sequence[int], validate: bool, now: float):
        """The allocation of ``job`` on ``hosts``, checked unless the caller vouches for them.

        Args:
            job: The job to start.
            hosts: Its host ids (see ``Engine.execute_job``).
            validate: Check the ids and that the hosts are free.
            now: The decision's time (s), for the error message.

        Returns:
            ``(allocation, index)``: the ids (a tuple or a :class:`~hdeeprm.simulation.runs.HostRuns`) and their
            index into the per-host arrays (an intp array or a slice).

        Raises:
            SimulationError: A host out of range, repeated or busy, or not ``job.res`` hosts.
        """
        if not validate:
            alloc, idx = checks.trusted_hosts(hosts)
        elif job.res or len(hosts):
            alloc, idx = checks.host_ids(hosts, self.nb_hosts, job)
        else:
            alloc, idx = (), np.zeros(0, dtype=np.intp)
        if len(alloc) != job.res:
            raise SimulationError(f"execute job {job.id!r}: it requests {job.res} hosts, got "
                                  f"{len(alloc)} ({list(alloc)})")
        host_job = self._host_job
        if validate and alloc and max(gather(host_job, alloc)) >= 0:   # a job index: the host runs a job
            taken = [h for h in alloc if host_job[h] >= 0]
            raise SimulationError(f"execute job {job.id!r} at t = {now:g} s: hosts {taken} are busy")
        return alloc, idx

    def _occupy(self, i: int, alloc, idx) -> None:
        self.busy[idx] = True
        occupy_hosts(alloc, idx, self._host_job, self._host_jobs, i)
        self.nb_busy += len(alloc)
        self._idx[i] = idx

    def start_delay(self, i: int, alloc, idx, now: float) -> None:
        """Job ``i`` (a ``delay`` profile) starts now on ``alloc`` (:meth:`hosts_for`): its hosts draw idle power."""
        self._occupy(i, alloc, idx)
        if self.account is not None:
            self.account.delay_started(i, alloc, now)

    def start_computation(self, i: int, alloc, idx, now: float, flop: float) -> None:
        """Job ``i`` (``parallel_homogeneous``, ``flop`` FLOP per host) starts now on ``alloc`` at its lockstep rate."""
        self._occupy(i, alloc, idx)
        speed, idle, comp = self.now_pstates.summarise(alloc, idx)
        if self.account is not None:
            self.account.computation_started(i, idx, now, idle, comp)
        self._remaining[i] = flop
        self._rate[i] = speed
        self._last[i] = now

    def natural_end(self, i: int) -> float:
        """When computing job ``i`` ends at its current rate, seconds (inf at rate 0), walltime aside."""
        rate = self._rate[i]
        return self._last[i] + self._remaining[i] / rate if rate > 0 else _INF

    def _advance(self, i: int, now: float) -> None:
        """Bring the remaining work of computing job ``i`` up to ``now``."""
        left = self._remaining[i] - self._rate[i] * (now - self._last[i])
        self._remaining[i] = left if left > 0.0 else 0.0
        self._last[i] = now

    def flop_left(self, i: int, now: float, running: bool) -> float:
        """FLOP per host computing job ``i`` has left at ``now`` (or had at its end when not ``running``)."""
        left = self._remaining[i]
        if running:
            left -= self._rate[i] * (now - self._last[i])
        return left

    def end(self, i: int, alloc, now: float, ran: float, computed: bool) -> None:
        """Job ``i`` ended at ``now`` after ``ran`` seconds on ``alloc``: its hosts are free.

        Args:
            i: Job index.
            alloc: Its hosts (as :meth:`hosts_for` gave them).
            now: Seconds.
            ran: Its run time, seconds.
            computed: Whether it is a ``parallel_homogeneous`` job (its progress is brought up to ``now``).
        """
        idx = self._idx[i]
        self._idx[i] = None
        self.busy[idx] = False
        release_hosts(alloc, idx, self._host_job, self.host_busy, self.host_last_end, ran, now, self._host_jobs)
        self.nb_busy -= len(alloc)
        if computed:
            self._advance(i, now)
        if self.account is not None:
            self.account.job_ended(i, idx, now, computed)

    # ------------------------------------------------------------------ pstates
    def switch(self, changes: Mapping[int, Sequence[int]], validate: bool, now: float, allocation: Sequence,
               computes: Sequence[bool]) -> tuple[list, list[int]]:
        """Switch hosts to pstates now (``{pstate: hosts}``, in the mapping's order; see ``Engine.set_pstates``).

        Args:
            changes: Pstate -> distinct host ids.
            validate: Check the ids and pstates (else the caller's ascending lists are trusted).
            now: Seconds.
            allocation: Host ids of each job by job index (the kernel's).
            computes: Whether each job is ``parallel_homogeneous``, by job index.

        Returns:
            ``(groups, retimed)``: the ``(hosts, pstate)`` groups switched, and the computing jobs whose lockstep
            rate was brought up to ``now`` and changed, ascending (the kernel re-times their ends).

        Raises:
            SimulationError: A host id or a pstate is out of range.
        """
        if validate:
            groups = [(alloc, p) for alloc, _, p in checks.pstate_groups(changes, self.nb_pstates,
                                                                          self.uniform_pstates)]
        else:   # the manager's lists: ascending, distinct
            groups = [(hosts, p) for p, hosts in changes.items()]
        if not groups:
            return groups, []
        account, recorder = self.account, self.recorder
        jobs_here, wattmins, n_switched = self.now_pstates.switch_groups(groups, self._host_job, account,
                                                                         not validate, self._host_jobs)
        self.grouped_switches += len(groups)
        self.machine_switches += n_switched
        if recorder is not None:
            recorder.switched_groups(now, groups, wattmins, self.nb_busy, not validate)
        jobs_here.discard(-1)
        retimed = []
        for j in sorted(jobs_here):
            speed, idle, comp = self.now_pstates.summarise(allocation[j], self._idx[j])
            if computes[j]:
                if account is not None:
                    account.rewatt(j, now, idle, comp)
                self._advance(j, now)  # progress up to now at the old speed, then the new one
                self._rate[j] = speed
                retimed.append(j)
            elif account is not None:
                account.rewatt(j, now, idle, idle)
        if account is not None:
            account.end_switch(now)
        return groups, retimed

    @property
    def pstate(self) -> np.ndarray:
        """Current pstate of each host, intp (nb_hosts,) (a new array)."""
        return np.array(self.now_pstates.pstate, dtype=np.intp)

    # ------------------------------------------------------------------ energy
    def power(self) -> np.ndarray:
        """Current power of each host, watts, float64 (nb_hosts,), a new array (zeros without energy)."""
        if self.account is None:
            return np.zeros(self.nb_hosts)
        return self.account.host_power()

    def consumed_energy(self, now: float) -> float:
        """Joules consumed by all hosts from t = 0 up to ``now`` (0.0 without energy)."""
        return 0.0 if self.account is None else self.account.energy(now)
