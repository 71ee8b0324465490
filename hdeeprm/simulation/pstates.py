"""The current pstate of every host, with its speed and wattages: the engine's hot per-host state.

Most jobs and pstate switches touch a few hosts each, where a NumPy call costs more than a Python
loop: they go host by host. On a platform of up to :data:`~hdeeprm.simulation.runs.ARRAYS_ABOVE`
hosts the values are plain Python lists (the fastest reads one by one; a large host set is copied by
list slices). On a larger platform, whose jobs span thousands of hosts, they are NumPy arrays, read
and written host by host through ``memoryview`` s and, for a large host set (a
:class:`~hdeeprm.simulation.runs.HostRuns`), by array slices over its runs. The numbers come from the
engine's pstate table (Batsim host properties, see :mod:`hdeeprm.simulation.checks`).

In the list mode, the usual cases (the workload manager's ascending groups of up to
:data:`~hdeeprm.simulation.energy.SMALL` hosts, and the speed and wattages of a job of up to ``SMALL``
hosts) run compiled (``pstates_kernel.pyx``, :class:`ListPstates`) when the install built it, on the same
lists and with the same sums; everything else, and an install without it, runs the Python code here.
"""
from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np

from hdeeprm.compiled import RemadeOnCopy
from hdeeprm.simulation.energy import COMP, IDLE, SMALL, SPEED, EnergyAccount, gather, host_runs, total
from hdeeprm.simulation.runs import ARRAYS_ABOVE, MANY, RUNS, HostRuns, distinct_values
from hdeeprm.summation import left_sum

_sum = np.add.reduce

try:   # the compiled path of the list mode (pstates_kernel.pyx), built by the install when a C compiler is there
    from hdeeprm.simulation.pstates_kernel import ListPstates
except ImportError:   # not built: the pure-Python path (same figures)
    ListPstates = None


class HostPstates(RemadeOnCopy):
    """Pstate, speed (FLOP/s), Idle and AllCores wattages (W) of every host, now.

    Args:
        table: float64 (nb_pstates, 3, nb_hosts): rows :data:`SPEED`, :data:`IDLE`, :data:`COMP`
            of every pstate of every host.
        initial: Initial pstate of each host (nb_hosts ints).
        arrays: Keep the values in NumPy arrays (see the module docstring); by default on a platform of more
            than :data:`~hdeeprm.simulation.runs.ARRAYS_ABOVE` hosts.

    Attributes:
        pstate: Current pstate of each host (a list of ints, or a ``memoryview`` of an int64 array).
        table: ``table``, float64 (nb_pstates, 3, nb_hosts).
        tab: ``tab[p][k][h] = table[p, k, h]`` (lists: the cheapest reads one by one).
        curs: ``curs[k, h] = table[pstate[h], k, h]``, float64 (3, nb_hosts), updated in place; None with lists.
        cur: ``cur[k][h] = curs[k, h]``: the rows of :attr:`curs` as ``memoryview`` s, or lists (never rebound:
            the energy account reads them).
    """

    def __init__(self, table: np.ndarray, initial: Sequence[int], arrays: bool | None = None) -> None:
        self.table = np.ascontiguousarray(table, dtype=np.float64)
        self.tab = [tuple(self.table[p, k].tolist() for k in (SPEED, IDLE, COMP)) for p in range(table.shape[0])]
        pstate = [int(p) for p in initial]
        if arrays is None:
            arrays = len(pstate) > ARRAYS_ABOVE
        if arrays:
            hosts = np.arange(len(pstate))
            self.curs = np.stack([self.table[pstate, k, hosts] for k in (SPEED, IDLE, COMP)]) if pstate \
                else np.zeros((3, 0))
            self.cur = [memoryview(row) for row in self.curs]
            self.pstate = memoryview(np.array(pstate, dtype=np.int64))
            # Sources of slice copies: memoryviews of the table's rows and of each pstate repeated.
            self._rows = [tuple(memoryview(self.table[p, k]) for k in (SPEED, IDLE, COMP))
                          for p in range(table.shape[0])]
            self._fill = [memoryview(np.full(len(pstate), p, dtype=np.int64)) for p in range(table.shape[0])]
        else:
            self.curs = None
            self.cur = [[self.tab[p][k][h] for h, p in enumerate(pstate)] for k in (SPEED, IDLE, COMP)]
            self.pstate = pstate
            self._rows = self.tab
            self._fill = [[p] * len(pstate) for p in range(table.shape[0])]
        self._kernel = self._compile()

    def _compile(self):
        """The compiled path of the list mode (None in the array mode, or when it is not built)."""
        if self.curs is not None or ListPstates is None:
            return None
        return ListPstates(self.cur, self.pstate, self.tab, SMALL)

    def _runs_of(self, k: int, hosts: HostRuns) -> np.ndarray:
        """Row ``k`` of the current values over the hosts of ``hosts``, in their order (contiguous float64)."""
        if self.curs is None:
            row = self.cur[k]
            return np.fromiter(chain.from_iterable(row[a:b] for a, b in zip(hosts.starts, hosts.stops)),
                               dtype=np.float64, count=len(hosts))
        row = self.curs[k]
        parts = [row[a:b] for a, b in zip(hosts.starts, hosts.stops)]
        return parts[0] if len(parts) == 1 else np.concatenate(parts)

    def summarise(self, hosts: Sequence[int], idx: np.ndarray | slice | None = None) -> tuple[float, float, float]:
        """Lockstep speed (min FLOP/s), total Idle and AllCores wattages (W) of ``hosts``.

        Args:
            hosts: Host ids (the sums run in their order), or a :class:`~hdeeprm.simulation.runs.HostRuns`
                (read by slices of :attr:`curs` over its runs: same figures to the bit).
            idx: The slice of ``hosts`` when they are one ascending run (read by slices), else anything.
        """
        if self._kernel is not None:
            out = self._kernel.summarise(hosts, idx)
            if out is not None:
                return out
        speed, idle, comp = self.cur
        curs = self.curs
        if isinstance(idx, slice):
            hosts_speed, hosts_idle, hosts_comp = speed[idx], idle[idx], comp[idx]
            if len(hosts_idle) <= SMALL:
                return min(hosts_speed), left_sum(hosts_idle), left_sum(hosts_comp)
            if curs is not None:   # total()'s NumPy sums, of the same values
                return float(curs[SPEED, idx].min()), float(_sum(curs[IDLE, idx])), float(_sum(curs[COMP, idx]))
            return min(hosts_speed), total(hosts_idle), total(hosts_comp)
        if type(hosts) is HostRuns:
            runs = zip(hosts.starts, hosts.stops)
            low = min(min(speed[a:b]) for a, b in runs) if curs is None else \
                min(curs[SPEED, a:b].min() for a, b in runs)
            return float(low), float(_sum(self._runs_of(IDLE, hosts))), float(_sum(self._runs_of(COMP, hosts)))
        if len(hosts) <= SMALL:   # total's sum, inlined for the usual few hosts
            return min(gather(speed, hosts)), left_sum(gather(idle, hosts)), left_sum(gather(comp, hosts))
        return min(gather(speed, hosts)), total(gather(idle, hosts)), total(gather(comp, hosts))

    def switch_groups(self, groups: Sequence[tuple[Sequence[int], int]], host_job: list[int],
                      account: EnergyAccount | None, ascending: bool,
                      host_jobs: np.ndarray | None = None) -> tuple[set[int], list[float], int]:
        """Switch groups of hosts to new pstates, in order, keeping the energy account's Idle wattage.

        Args:
            groups: ``(host ids, pstate)`` of each group; the hosts of a group are distinct, valid, and in no
                other group.
            host_job: Job index on each host, -1 when free (the engine's; a list or a ``memoryview``).
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
        if ascending and self._kernel is not None:
            done = self._kernel.switch_groups(groups, host_job, account)
            if done is not None:
                return done
        jobs_here: set[int] = set()
        wattmins = [] if account is None else [account.wattmin]
        n_switched = 0
        for alloc, p in groups:
            n = len(alloc)
            n_switched += n
            if n > RUNS and type(alloc) is HostRuns:   # a large ascending group: by runs
                on = distinct_values(host_job if host_jobs is None else host_jobs, alloc)
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
                :class:`~hdeeprm.simulation.runs.HostRuns` of ascending runs (by NumPy slices).
            p: Pstate valid for each of them.

        Returns:
            Sum of their new Idle wattages minus the sum of their old ones (W), summed as
            :meth:`~hdeeprm.simulation.energy.EnergyAccount.switch_hosts` sums them (same figure to the bit).
        """
        n = len(hosts)
        if n == 1:   # the sum of one value is that value
            a = hosts[0]
            speed, idle, comp = self.tab[p]
            cur_speed, cur_idle, cur_comp = self.cur
            new, old = idle[a], cur_idle[a]
            cur_speed[a], cur_idle[a], cur_comp[a] = speed[a], new, comp[a]
            self.pstate[a] = p
            return new - old
        if n > RUNS and type(hosts) is HostRuns:
            return self._switch_runs(hosts, p)
        speed, idle, comp = self.tab[p]
        cur_speed, cur_idle, cur_comp = self.cur
        a = hosts[0]
        b = hosts[-1] + 1
        if b - a != n:   # not one run: gathers, then the per-host copies of apply()
            new, old = gather(idle, hosts), gather(cur_idle, hosts)
            d = left_sum(new) - left_sum(old) if n <= SMALL else total(new) - total(old)
            self.apply(hosts, p)
            return d
        new, old = idle[a:b], cur_idle[a:b]
        d = left_sum(new) - left_sum(old) if n <= SMALL else total(new) - total(old)
        speed, idle, comp = self._rows[p]   # slice copies (between memoryviews with arrays)
        cur_idle[a:b] = idle[a:b]
        cur_speed[a:b] = speed[a:b]
        cur_comp[a:b] = comp[a:b]
        self.pstate[a:b] = self._fill[p][:n]
        return d

    def _switch_runs(self, hosts: HostRuns, p: int) -> float:
        """:meth:`switch` of a large host set held as runs: NumPy sums and slice copies."""
        table = self.table
        new = [table[p, IDLE, a:b] for a, b in zip(hosts.starts, hosts.stops)]
        new = new[0] if len(new) == 1 else np.concatenate(new)
        d = float(_sum(new)) - float(_sum(self._runs_of(IDLE, hosts)))
        self._copy_runs(hosts.starts, hosts.stops, p)
        return d

    def _copy_runs(self, starts: Sequence[int], stops: Sequence[int], p: int) -> None:
        """Set the hosts of the runs ``[starts[r], stops[r])`` to pstate ``p``, by slices."""
        curs, table, fill = self.curs, self.table, self._fill[p]
        if curs is None:
            cur_speed, cur_idle, cur_comp = self.cur
            speed, idle, comp = self.tab[p]
            for a, b in zip(starts, stops):
                cur_speed[a:b], cur_idle[a:b], cur_comp[a:b] = speed[a:b], idle[a:b], comp[a:b]
                self.pstate[a:b] = fill[:b - a]
            return
        for a, b in zip(starts, stops):
            curs[:, a:b] = table[p, :, a:b]
            self.pstate[a:b] = fill[:b - a]

    def apply(self, hosts: Sequence[int], p: int) -> None:
        """Switch ``hosts`` to pstate ``p`` (valid for each of them)."""
        speed, idle, comp = self.tab[p]
        cur_speed, cur_idle, cur_comp = self.cur
        pstate = self.pstate
        if len(hosts) <= MANY:
            for h in hosts:
                cur_speed[h] = speed[h]
                cur_idle[h] = idle[h]
                cur_comp[h] = comp[h]
                pstate[h] = p
            return
        starts, lasts = host_runs(hosts)   # slice copies over runs of consecutive hosts
        self._copy_runs(starts, [b + 1 for b in lasts], p)


def occupy_hosts(hosts: Sequence[int], idx: np.ndarray | slice, host_job: Sequence[int], host_jobs: np.ndarray,
                 job: int) -> None:
    """A job starts on ``hosts``: write its index on each of them.

    Args:
        hosts: Its host ids, distinct: a sequence of ints, or a :class:`~hdeeprm.simulation.runs.HostRuns`
            (written by slices of ``host_jobs`` over its runs).
        idx: The same as an intp array, or as a slice when they are one ascending run.
        host_job: Job index on each host, a ``memoryview`` of ``host_jobs`` (written host by host).
        host_jobs: Job index on each host, int64 (nb_hosts,).
        job: The job's index.
    """
    if type(hosts) is HostRuns:
        for a, b in zip(hosts.starts, hosts.stops):
            if host_jobs is None:
                host_job[a:b] = [job] * (b - a)
            else:
                host_jobs[a:b] = job
        return
    for h in hosts:
        host_job[h] = job


def release_hosts(hosts: Sequence[int], idx: np.ndarray | slice, host_job: Sequence[int], host_busy: np.ndarray,
                  host_last_end: np.ndarray, ran: float, now: float, host_jobs: np.ndarray | None = None) -> None:
    """A job that ran ``ran`` seconds on ``hosts`` ended at ``now``: the engine's per-host state, updated in place.

    Args:
        hosts: The job's host ids, distinct (any order, or a :class:`~hdeeprm.simulation.runs.HostRuns`).
        idx: The same as an intp array, or as a slice when they are one ascending run.
        host_job: Job index on each host (a list, or a ``memoryview`` of ``host_jobs``): set to -1 (free).
        host_busy: Seconds of ended jobs on each host, float64 (nb_hosts,): ``ran`` added (one addition per host).
        host_last_end: End of the last ended job on each host (s), float64 (nb_hosts,): set to ``now`` (time never
            goes back).
        ran: The job's run time (s).
        now: Its end time (s).
        host_jobs: The array ``host_job`` views (written by NumPy for a run or a large set), or None.
    """
    host_busy[idx] += ran
    host_last_end[idx] = now
    if host_jobs is not None and (isinstance(idx, slice) or type(hosts) is HostRuns):
        host_jobs[idx] = -1
        return
    if isinstance(idx, slice):
        host_job[idx] = [-1] * len(hosts)
        return
    if type(hosts) is HostRuns:
        for a, b in zip(hosts.starts, hosts.stops):
            host_job[a:b] = [-1] * (b - a)
        return
    for h in hosts:
        host_job[h] = -1
