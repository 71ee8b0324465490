"""The current pstate of every host, with its speed and wattages: the engine's hot per-host state.

Plain Python lists, not arrays: jobs and pstate switches touch a few hosts each, where a NumPy
call costs more than a Python loop (large host sets go through C-speed gathers and slice copies
over runs of consecutive hosts). The numbers come from the engine's pstate table (Batsim host
properties, see :mod:`hdeeprm.simulation.checks`).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hdeeprm.simulation.energy import COMP, IDLE, SMALL, SPEED, EnergyAccount, gather, host_runs, total
from hdeeprm.simulation.runs import HostRuns, distinct_values, values

_sum = np.add.reduce

#: Pstate switches of more hosts than this are applied by slices over runs of consecutive hosts.
MANY = 64


class HostPstates:
    """Pstate, speed (FLOP/s), Idle and AllCores wattages (W) of every host, now.

    Args:
        table: float64 (nb_pstates, 3, nb_hosts): rows :data:`SPEED`, :data:`IDLE`, :data:`COMP`
            of every pstate of every host.
        initial: Initial pstate of each host (nb_hosts ints).

    Attributes:
        pstate: Current pstate of each host (list of ints).
        pstates: The same as an intp array (what the run path of large host sets reads).
        table: ``table`` (float64 (nb_pstates, 3, nb_hosts)).
        tab: ``tab[p][k][h] = table[p, k, h]`` (lists).
        cur: ``cur[k][h] = tab[pstate[h]][k][h]``, updated in place (never rebound: the energy
            account reads the same lists).
    """

    def __init__(self, table: np.ndarray, initial: Sequence[int]) -> None:
        self.pstate: list[int] = [int(p) for p in initial]
        self.pstates = np.array(self.pstate, dtype=np.intp)
        self.table = np.ascontiguousarray(table, dtype=np.float64)
        self.tab = [tuple(row.tolist() for row in table[p]) for p in range(table.shape[0])]
        self.cur = [[self.tab[p][k][h] for h, p in enumerate(self.pstate)] for k in (SPEED, IDLE, COMP)]

    def summarise(self, hosts: Sequence[int], idx: np.ndarray | slice | None = None) -> tuple[float, float, float]:
        """Lockstep speed (min FLOP/s), total Idle and AllCores wattages (W) of ``hosts``.

        Args:
            hosts: Host ids (the sums run in their order), or a :class:`~hdeeprm.simulation.runs.HostRuns`
                (its values are read from :attr:`table` by runs: same figures to the bit).
            idx: The slice of ``hosts`` when they are one ascending run (read by slices), else anything.
        """
        if type(hosts) is HostRuns:
            table, pstates = self.table, self.pstates
            speeds = values(table, pstates, SPEED, hosts)
            return (float(speeds.min()), float(_sum(values(table, pstates, IDLE, hosts))),
                    float(_sum(values(table, pstates, COMP, hosts))))
        speed, idle, comp = self.cur
        if isinstance(idx, slice):
            hosts_speed, hosts_idle, hosts_comp = speed[idx], idle[idx], comp[idx]
            if len(hosts_idle) <= SMALL:
                return min(hosts_speed), sum(hosts_idle), sum(hosts_comp)
            return min(hosts_speed), total(hosts_idle), total(hosts_comp)
        if len(hosts) <= SMALL:   # total's sum, inlined for the usual few hosts
            return min(gather(speed, hosts)), sum(gather(idle, hosts)), sum(gather(comp, hosts))
        return min(gather(speed, hosts)), total(gather(idle, hosts)), total(gather(comp, hosts))

    def switch_groups(self, groups: Sequence[tuple[Sequence[int], int]], host_job: list[int],
                      account: EnergyAccount | None, ascending: bool,
                      host_jobs: np.ndarray | None = None) -> tuple[set[int], list[float], int]:
        """Switch groups of hosts to new pstates, in order, keeping the energy account's Idle wattage.

        Args:
            groups: ``(host ids, pstate)`` of each group; the hosts of a group are distinct, valid, and in no
                other group.
            host_job: Job index on each host, -1 when free (the engine's).
            account: The energy account, or None (no energy): told each group's Idle change
                (:meth:`~hdeeprm.simulation.energy.EnergyAccount.switch_hosts` or
                :meth:`~hdeeprm.simulation.energy.EnergyAccount.idle_switched`).
            ascending: Every group's hosts are in ascending order (runs are then switched by slices).
            host_jobs: ``host_job`` as an int array (read for the groups held as
                :class:`~hdeeprm.simulation.runs.HostRuns`; made from ``host_job`` when None).

        Returns:
            The indexes of the jobs on the switched hosts (-1 may be among them), the account's ``wattmin``
            before the first group and after each (empty without an account), and the number of hosts switched.
        """
        jobs_here: set[int] = set()
        wattmins = [] if account is None else [account.wattmin]
        n_switched = 0
        for alloc, p in groups:
            n = len(alloc)
            n_switched += n
            if type(alloc) is HostRuns:   # a large ascending group: by runs
                if host_jobs is None:
                    host_jobs = np.array(host_job, dtype=np.int64)
                on = distinct_values(host_jobs, alloc)
                if max(on) >= 0:
                    jobs_here.update(on)
                d = self.switch(alloc, p)
                if account is not None:
                    account.idle_switched(d)
                    wattmins.append(account.wattmin)
                continue
            a = alloc[0]
            on = host_job[a:a + n] if ascending and alloc[-1] - a + 1 == n else gather(host_job, alloc)
            if max(on) >= 0:
                jobs_here.update(on)
            if not ascending:
                if account is not None:
                    account.switch_hosts(alloc, gather(self.tab[p][IDLE], alloc))
                self.apply(alloc, p)
            else:
                d = self.switch(alloc, p)
                if account is not None:
                    account.idle_switched(d)
            if account is not None:
                wattmins.append(account.wattmin)
        return jobs_here, wattmins, n_switched

    def switch(self, hosts: Sequence[int], p: int) -> float:
        """Switch ``hosts`` (ascending, distinct) to pstate ``p``; returns the change of their Idle wattage.

        The one-pass version of :meth:`apply` for host lists in ascending order (the workload manager's):
        a run of consecutive hosts, the usual case, is read and copied by slices.

        Args:
            hosts: Host ids, ascending and distinct (not checked), at least one; or a
                :class:`~hdeeprm.simulation.runs.HostRuns` of ascending runs (summed from :attr:`table`).
            p: Pstate valid for each of them.

        Returns:
            Sum of their new Idle wattages minus the sum of their old ones (W), summed as
            :meth:`~hdeeprm.simulation.energy.EnergyAccount.switch_hosts` sums them (same figure to the bit).
        """
        speed, idle, comp = self.tab[p]
        cur_speed, cur_idle, cur_comp = self.cur
        if type(hosts) is HostRuns:
            return self._switch_runs(hosts, p)
        n = len(hosts)
        a = hosts[0]
        if n == 1:   # sum() of one value is that value
            new, old = idle[a], cur_idle[a]
            cur_speed[a], cur_idle[a], cur_comp[a] = speed[a], new, comp[a]
            self.pstate[a] = p
            self.pstates[a] = p
            return new - old
        b = hosts[-1] + 1
        if b - a != n:   # not one run: gathers, then the per-host copies of apply()
            new, old = gather(idle, hosts), gather(cur_idle, hosts)
            d = sum(new) - sum(old) if n <= SMALL else total(new) - total(old)
            self.apply(hosts, p)
            return d
        new, old = idle[a:b], cur_idle[a:b]
        d = sum(new) - sum(old) if n <= SMALL else total(new) - total(old)
        cur_idle[a:b] = new
        cur_speed[a:b] = speed[a:b]
        cur_comp[a:b] = comp[a:b]
        self.pstate[a:b] = [p] * n
        self.pstates[a:b] = p
        return d

    def _switch_runs(self, hosts: HostRuns, p: int) -> float:
        """:meth:`switch` of a large host set held as runs: NumPy sums, slice copies."""
        table = self.table
        new = [table[p, IDLE, a:b] for a, b in zip(hosts.starts, hosts.stops)]
        new = new[0] if len(new) == 1 else np.concatenate(new)
        d = float(_sum(new)) - float(_sum(values(table, self.pstates, IDLE, hosts)))
        speed, idle, comp = self.tab[p]
        cur_speed, cur_idle, cur_comp = self.cur
        pstate, pstates = self.pstate, self.pstates
        for a, b in zip(hosts.starts, hosts.stops):
            cur_idle[a:b] = idle[a:b]
            cur_speed[a:b] = speed[a:b]
            cur_comp[a:b] = comp[a:b]
            pstate[a:b] = [p] * (b - a)
            pstates[a:b] = p
        return d

    def apply(self, hosts: Sequence[int], p: int) -> None:
        """Switch ``hosts`` to pstate ``p`` (valid for each of them)."""
        speed, idle, comp = self.tab[p]
        cur_speed, cur_idle, cur_comp = self.cur
        pstate = self.pstate
        pstates = self.pstates
        if len(hosts) <= MANY:
            for h in hosts:
                cur_speed[h] = speed[h]
                cur_idle[h] = idle[h]
                cur_comp[h] = comp[h]
                pstate[h] = p
                pstates[h] = p
            return
        for a, b in zip(*host_runs(hosts)):   # slice copies over runs of consecutive hosts
            b += 1
            cur_speed[a:b] = speed[a:b]
            cur_idle[a:b] = idle[a:b]
            cur_comp[a:b] = comp[a:b]
            pstate[a:b] = [p] * (b - a)
            pstates[a:b] = p


def occupy_hosts(hosts: Sequence[int], idx: np.ndarray | slice, host_job: list[int], host_jobs: np.ndarray,
                 job: int) -> None:
    """A job starts on ``hosts``: write its index on each of them, in the engine's list and array.

    Args:
        hosts: Its host ids, distinct: a sequence of ints or a :class:`~hdeeprm.simulation.runs.HostRuns`
            (written by slices over its runs).
        idx: The same as an intp array, or as a slice when they are one ascending run.
        host_job: Job index on each host (list).
        host_jobs: The same, int64 (nb_hosts,).
        job: The job's index.
    """
    host_jobs[idx] = job
    if type(hosts) is HostRuns:
        for a, b in zip(hosts.starts, hosts.stops):
            host_job[a:b] = [job] * (b - a)
        return
    for h in hosts:
        host_job[h] = job


def release_hosts(hosts: Sequence[int], idx: np.ndarray | slice, host_job: list[int], host_busy: np.ndarray,
                  host_last_end: np.ndarray, ran: float, now: float, host_jobs: np.ndarray | None = None) -> None:
    """A job that ran ``ran`` seconds on ``hosts`` ended at ``now``: the engine's per-host state, updated in place.

    Args:
        hosts: The job's host ids, distinct (any order; a :class:`~hdeeprm.simulation.runs.HostRuns` is
            written by slices over its runs).
        idx: The same as an intp array, or as a slice when they are one ascending run.
        host_job: Job index on each host: set to -1 (free).
        host_busy: Seconds of ended jobs on each host, float64 (nb_hosts,): ``ran`` added (one addition per host).
        host_last_end: End of the last ended job on each host (s), float64 (nb_hosts,): set to ``now`` (time never
            goes back).
        ran: The job's run time (s).
        now: Its end time (s).
        host_jobs: ``host_job`` as an int64 array (also set to -1), or None.
    """
    host_busy[idx] += ran
    host_last_end[idx] = now
    if host_jobs is not None:
        host_jobs[idx] = -1
    if isinstance(idx, slice):
        host_job[idx] = [-1] * len(hosts)
        return
    if type(hosts) is HostRuns:
        for a, b in zip(hosts.starts, hosts.stops):
            host_job[a:b] = [-1] * (b - a)
        return
    for h in hosts:
        host_job[h] = -1
