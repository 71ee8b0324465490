"""Energy accounting of the embedded engine (SimGrid host-energy plugin semantics).

Every compute host draws, at every instant, the Idle wattage of its current pstate, or the
AllCores wattage while a ``parallel_homogeneous`` job computes on it; a ``delay`` job computes
nothing, so its hosts stay at Idle. The rules, and where they come from, are in
``docs/engine.rst``, "Energy accounting"; SimGrid's plugin is documented at
https://simgrid.org/doc/latest/Plugins.html (section "Host Energy Plugin").

The bookkeeping is lazy, so that nothing is done per idle host:

* platform energy ``E(t) = offset + power * t`` (joules), with ``power`` the platform power
  (watts), updated only when ``power`` changes: a change ``dP`` at time ``t`` does
  ``offset -= dP * t``, which keeps ``E`` continuous;
* each running job keeps the energy of its own hosts (hosts are never shared between jobs):
  joules up to its last update plus the power they draw, brought up to date only when one of
  its hosts changes pstate or when it ends.

The :class:`~hdeeprm.simulation.engine.Engine` calls an :class:`EnergyAccount` directly from its
job life cycle (it holds None when built with ``energy=False``); the account never calls back.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence
from itertools import chain

import numpy as np

from hdeeprm.simulation.kernel import EnergyWindow
from hdeeprm.simulation.runs import HostRuns
from hdeeprm.summation import left_sum

#: Rows of the engine's current-pstate table ``cur`` (shape (3, nb_hosts)): speed in FLOP/s,
#: Idle wattage in W, AllCores (computing) wattage in W of each host's current pstate.
SPEED, IDLE, COMP = 0, 1, 2
#: Up to this many values, Python's sum/min over ``tolist()`` beat numpy's reductions, whose
#: fixed cost (~3 us) dominates on the small host sets of most jobs.
SMALL = 32
_sum = np.add.reduce


def gather(values: Sequence, hosts: Sequence[int]) -> Sequence:
    """``[values[h] for h in hosts]`` at C speed (``operator.itemgetter``), for large host sets.

    Args:
        values: Per-host values (a list).
        hosts: Host ids, at least one.

    Returns:
        The values of ``hosts``, in their order (a tuple, or a list for one host).
    """
    if len(hosts) == 1:
        return [values[hosts[0]]]
    return operator.itemgetter(*hosts)(values)


def host_runs(hosts) -> tuple[list[int], list[int]]:
    """Maximal runs of consecutive ids among ``hosts`` (any order, duplicates allowed), with NumPy.

    Returns:
        First and last id of each run, ascending.
    """
    ids = np.fromiter(hosts, dtype=np.int64, count=len(hosts))
    if ids.size == 0:
        return [], []
    ids.sort(kind="stable")   # timsort: linear on the (usual) already sorted ids
    breaks = np.flatnonzero(np.diff(ids) > 1)   # a repeated id (difference 0) stays in its run
    return ids[np.r_[0, breaks + 1]].tolist(), ids[np.r_[breaks, ids.size - 1]].tolist()


def total(values: Sequence[float] | np.ndarray) -> float:
    """Sum of float values, fast for a few of them.

    Args:
        values: float64 (k,), as a list, a tuple, a ``memoryview`` or a 1-D array.

    Returns:
        The sum (Python's left-to-right sum up to :data:`SMALL` values, numpy's pairwise sum
        above: the same figure whichever container holds the values).
    """
    if len(values) <= SMALL:
        return sum(values.tolist() if isinstance(values, np.ndarray) else values)
    if isinstance(values, memoryview):   # a slice of the engine's per-host values: no copy
        values = np.asarray(values)
    elif not isinstance(values, np.ndarray):
        values = np.fromiter(values, dtype=np.float64, count=len(values))
    return float(_sum(values))


class EnergyAccount:
    """Cumulated energy of the platform and of each running job.

    The engine calls :meth:`delay_started` or :meth:`computation_started` when a job starts,
    :meth:`job_ended` when it ends, and for a pstate switch: :meth:`switch_hosts` for every
    group of hosts (before it updates ``cur``), then :meth:`rewatt` for every running job on
    the switched hosts, then :meth:`end_switch`. All times are in seconds and never go
    backwards.

    Args:
        cur: The engine's current-pstate table: rows :data:`SPEED`, :data:`IDLE`, :data:`COMP`
            of nb_hosts floats each (lists, or a float64 array (3, nb_hosts)). The account keeps
            a reference: the engine updates it in place on every pstate switch, after calling
            :meth:`switch_hosts`.
        nb_jobs: Number of jobs of the workload (jobs are indexed 0..nb_jobs-1).

    Attributes:
        power: Current platform power in watts (sum over hosts of what each draws).
        offset: Joules such that the platform energy at time ``t`` is ``offset + power * t``.
        wattmin: Sum of the Idle wattages (W) of the hosts' current pstates (the ``wattmin``
            column of ``out_consumed_energy.csv``).
        computing: Whether a ``parallel_homogeneous`` job computes on each host, bool (nb_hosts,).
        job_energy: Energy (J) of each job's hosts from its start to its end, float64 (nb_jobs,),
            NaN until the job ends.
        window: The energy window (:class:`~hdeeprm.simulation.kernel.EnergyWindow`): platform energy (J) at
            the first submission and at the last job end (NaN before them), read as
            :attr:`first_submission_energy` and :attr:`last_completion_energy`.
    """

    def __init__(self, cur: np.ndarray, nb_jobs: int) -> None:
        self._cur = cur
        self._cur_idle = cur[IDLE]
        self.power = float(_sum(np.asarray(cur[IDLE], dtype=np.float64)))
        self.offset = 0.0
        self.wattmin = self.power
        self.computing = np.zeros(len(cur[IDLE]), dtype=bool)
        self.job_energy = np.full(nb_jobs, np.nan)
        self.window = EnergyWindow()
        # A running job's hosts: _job_e (J) up to _job_t (s), drawing _job_power (W); _job_idle
        # = their Idle wattage (W), what they fall back to when the job ends.
        self._job_e = [0.0] * nb_jobs
        self._job_t = [0.0] * nb_jobs
        self._job_power = [0.0] * nb_jobs
        self._job_idle = [0.0] * nb_jobs
        self._d_idle = 0.0   # platform Idle change of the pstate switch under way (W)
        self._d_power = 0.0  # computing-host correction of that switch (W)

    @property
    def first_submission_energy(self) -> float:
        """Platform energy (J) at the first submission, NaN before it."""
        return self.window.first

    @property
    def last_completion_energy(self) -> float:
        """Platform energy (J) at the last job end so far, NaN before the first."""
        return self.window.last

    def energy(self, now: float) -> float:
        """Energy consumed by all compute hosts from t = 0 to ``now``.

        Args:
            now: Simulated time in seconds, not before the last power change.

        Returns:
            Joules.
        """
        return self.offset + self.power * now

    def host_power(self) -> np.ndarray:
        """What each host draws now, in watts, float64 (nb_hosts,) (a new array).

        Returns:
            The AllCores wattage of a host's current pstate while it computes, else its Idle one.
        """
        cur = self._cur
        return np.where(self.computing, np.asarray(cur[COMP], dtype=np.float64),
                        np.asarray(cur[IDLE], dtype=np.float64))

    def first_submission(self, now: float) -> None:
        """The first jobs are submitted: keep the platform energy then.

        Args:
            now: Time of the first submission in seconds.
        """
        self.window.open(self.offset + self.power * now)

    def delay_started(self, i: int, idx: Sequence[int], now: float) -> None:
        """A ``delay`` job starts: its hosts keep drawing their Idle wattage.

        Args:
            i: Job index.
            idx: Host ids of the job (k ints, or a :class:`~hdeeprm.simulation.runs.HostRuns`: read by slices).
            now: Start time in seconds.
        """
        if type(idx) is HostRuns:   # total()'s NumPy sum of the same values, in the same order
            row = self._cur_idle
            parts = [row[a:b] for a, b in zip(idx.starts, idx.stops)]
            idle = float(_sum(np.concatenate(parts) if isinstance(row, memoryview) else
                              np.fromiter(chain.from_iterable(parts), dtype=np.float64, count=len(idx))))
        else:
            idle = gather(self._cur_idle, idx)
            idle = left_sum(idle) if len(idle) <= SMALL else total(idle)   # total's sum, inlined for a few hosts
        self._job_idle[i] = idle
        self._job_e[i] = 0.0
        self._job_t[i] = now
        self._job_power[i] = idle

    def computation_started(self, i: int, idx: np.ndarray | slice, now: float, idle: float,
                            comp: float) -> None:
        """A ``parallel_homogeneous`` job starts: its hosts switch from Idle to AllCores.

        Args:
            i: Job index.
            idx: Host ids of the job, intp (k,), or the slice of them when they are one run.
            now: Start time in seconds.
            idle: Sum of the Idle wattages of the hosts' current pstates (W).
            comp: Sum of their AllCores wattages (W).
        """
        self._job_idle[i] = idle
        self._job_e[i] = 0.0
        self._job_t[i] = now
        self.computing[idx] = True
        delta = comp - idle
        self.offset -= delta * now
        self.power += delta
        self._job_power[i] = comp

    def catch_up(self, i: int, now: float) -> float:
        """Bring running job ``i``'s energy up to ``now`` at the power its hosts draw.

        Args:
            i: Job index (a running job).
            now: Time in seconds, not before the job's last update.

        Returns:
            Joules drawn by the job's hosts since its start.
        """
        e = self._job_e[i] + self._job_power[i] * (now - self._job_t[i])
        self._job_e[i] = e
        self._job_t[i] = now
        return e

    def job_ended(self, i: int, idx: np.ndarray | slice, now: float, computed: bool) -> None:
        """Job ``i`` ends: record its energy; its hosts fall back to their Idle wattage.

        Args:
            i: Job index.
            idx: Host ids of the job, intp (k,), or the slice of them when they are one run.
            now: End time in seconds.
            computed: The job is a ``parallel_homogeneous`` one (its hosts drew AllCores).
        """
        self.job_energy[i] = self.catch_up(i, now)
        if computed:
            self.computing[idx] = False
            delta = self._job_idle[i] - self._job_power[i]
            self.offset -= delta * now
            self.power += delta
        self.window.close(self.offset + self.power * now)

    def switch_hosts(self, idx: Sequence[int], new_idle: Sequence[float]) -> None:
        """Hosts ``idx`` are about to switch pstate (call before the engine updates ``cur``).

        Changes :attr:`wattmin` at once; the platform power changes in :meth:`end_switch`.

        Args:
            idx: Host ids (k ints).
            new_idle: Idle wattages of their new pstates (W), k floats.
        """
        if len(idx) <= SMALL:   # total's sum, inlined for the usual few hosts
            d = left_sum(new_idle) - left_sum(gather(self._cur_idle, idx))
        else:
            d = total(new_idle) - total(gather(self._cur_idle, idx))
        self._d_idle += d
        self.wattmin += d

    def idle_switched(self, d: float) -> None:
        """Hosts switched pstate, their Idle wattage changing by ``d`` W (what :meth:`switch_hosts` adds).

        Args:
            d: Sum of their new Idle wattages minus the sum of their old ones (W).
        """
        self._d_idle += d
        self.wattmin += d

    def rewatt(self, i: int, now: float, idle: float, power: float) -> None:
        """Running job ``i``'s hosts switched pstate: its energy so far, then its new wattages.

        Args:
            i: Job index.
            now: Time of the switch in seconds.
            idle: Sum of the Idle wattages of its hosts' new pstates (W).
            power: What its hosts draw now (W): the AllCores sum for a ``parallel_homogeneous``
                job, ``idle`` for a ``delay`` job.
        """
        # Energy so far at the old wattages (catch_up, inlined: this runs for every switch).
        self._job_e[i] += self._job_power[i] * (now - self._job_t[i])
        self._job_t[i] = now
        # The Idle part of the change is already in _d_idle (switch_hosts); a computing job's
        # hosts draw AllCores instead, hence the correction (exactly 0 for a delay job).
        self._d_power += (power - self._job_power[i]) - (idle - self._job_idle[i])
        self._job_power[i] = power
        self._job_idle[i] = idle

    def end_switch(self, now: float) -> None:
        """Apply the platform power change of the pstate switch under way.

        Args:
            now: Time of the switch in seconds.
        """
        delta = self._d_idle + self._d_power
        self._d_idle = self._d_power = 0.0
        self.offset -= delta * now
        self.power += delta
