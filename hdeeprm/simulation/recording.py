"""Logs behind the Batsim-format time-series outputs of the embedded engine.

A :class:`Recorder` keeps the rows of ``out_machine_states.csv``, ``out_pstate_changes.csv``
and ``out_consumed_energy.csv`` (written by :mod:`hdeeprm.outputs.batsim_csv`; which row goes
where is described in ``docs/engine.rst``, "Output files", after Batsim's
https://batsim.readthedocs.io/en/latest/output-jobs.html). The
:class:`~hdeeprm.simulation.engine.Engine` calls it directly at every job start, job end and
pstate switch; it holds None instead when built with ``record=False`` (as in training), so
that nothing is kept.
"""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from hdeeprm.simulation.energy import EnergyAccount
from hdeeprm.simulation.runs import HostRuns

if TYPE_CHECKING:
    from hdeeprm.workload.model import Job, JobState


class Recorder:
    """Rows of the machine-state, pstate-change and consumed-energy logs.

    Args:
        nb_hosts: Number of compute hosts.
        energy: The engine's energy account, or None without energy (then nothing goes into
            :attr:`energy_log`).

    Attributes:
        machine_states: ``(time s, nb_idle, nb_computing)`` after every job start, job end and
            pstate switch.
        pstate_changes: ``(time s, host ids, pstate)``: two rows per switch, ``-1`` (switching)
            then the new pstate.
        energy_log: ``(time s, platform energy J, kind, wattmin W)``, ``kind`` being ``'s'``
            (job start), ``'e'`` (job end) or ``'p'`` (pstate switch: one row before, one after).
        streams: False: the rows are kept in the lists above. A subclass that writes them out
            as they come (:class:`hdeeprm.outputs.stream.CsvStream`) sets it True; the engine then
            drops each job's host list when the job ends.
    """

    streams = False

    def __init__(self, nb_hosts: int, energy: EnergyAccount | None) -> None:
        self._nb_hosts = nb_hosts
        self._energy = energy
        self.machine_states: list[tuple[float, int, int]] = []
        self.pstate_changes: list[tuple[float, tuple[int, ...], int]] = []
        self.energy_log: list[tuple[float, float, str, float]] = []

    def job_started(self, now: float, nb_busy: int) -> None:
        """A job started: a machine-state row, and an ``'s'`` energy row.

        Args:
            now: Start time in seconds.
            nb_busy: Number of hosts that run a job, this one included.
        """
        self.machine_states.append((now, self._nb_hosts - nb_busy, nb_busy))
        account = self._energy
        if account is not None:
            self.energy_log.append((now, account.energy(now), "s", account.wattmin))

    def job_ended(self, now: float, nb_busy: int) -> None:
        """A job ended: a machine-state row, and an ``'e'`` energy row.

        Args:
            now: End time in seconds.
            nb_busy: Number of hosts that still run a job.
        """
        self.machine_states.append((now, self._nb_hosts - nb_busy, nb_busy))
        account = self._energy
        if account is not None:
            self.energy_log.append((now, account.energy(now), "e", account.wattmin))

    def switching(self, now: float) -> None:
        """A group of hosts is about to switch pstate: the ``'p'`` energy row before it.

        Args:
            now: Time of the switch in seconds.
        """
        account = self._energy
        if account is not None:
            self.energy_log.append((now, account.energy(now), "p", account.wattmin))

    def switched(self, now: float, hosts: tuple[int, ...], pstate: int, nb_busy: int) -> None:
        """A group of hosts switched pstate: two pstate rows, a machine-state row, a ``'p'`` row.

        Args:
            now: Time of the switch in seconds.
            hosts: The host ids switched.
            pstate: Their new pstate.
            nb_busy: Number of hosts that run a job.
        """
        self.pstate_changes.append((now, hosts, -1))
        self.pstate_changes.append((now, hosts, pstate))
        self.machine_states.append((now, self._nb_hosts - nb_busy, nb_busy))
        account = self._energy
        if account is not None:
            self.energy_log.append((now, account.energy(now), "p", account.wattmin))

    def switched_groups(self, now: float, groups: Sequence[tuple[Sequence[int], int]], wattmins: Sequence[float],
                        nb_busy: int, ascending: bool = False) -> None:
        """Several groups of hosts switched pstate at ``now``: for each, :meth:`switching` then :meth:`switched`.

        The platform energy does not change during a switch (its power changes after the last group).

        Args:
            now: Time of the switch in seconds.
            groups: ``(host ids, new pstate)`` of each group, in the order they switched.
            wattmins: :attr:`EnergyAccount.wattmin` before the first group, then after each (len(groups) + 1
                values; empty without energy).
            nb_busy: Number of hosts that run a job.
            ascending: The hosts of every group are in ascending order (a writer may use it).
        """
        machine_state = (now, self._nb_hosts - nb_busy, nb_busy)
        for hosts, pstate in groups:
            hosts = hosts if type(hosts) is HostRuns else tuple(hosts)   # a HostRuns is read-only already
            self.pstate_changes.append((now, hosts, -1))
            self.pstate_changes.append((now, hosts, pstate))
            self.machine_states.append(machine_state)
        if self._energy is not None:
            energy = self._energy.energy(now)
            for before, after in zip(wattmins, wattmins[1:]):
                self.energy_log.append((now, energy, "p", before))
                self.energy_log.append((now, energy, "p", after))

    def job_finished(self, job: Job, state: JobState, start: float, finish: float,
                     allocation: tuple[int, ...] | None, energy: float, reason: str) -> None:
        """A job reached its final state (its ``out_jobs.csv`` row); nothing is kept here.

        Args:
            job: The job.
            state: Its final state.
            start: Its starting time (s), NaN when rejected.
            finish: Its finish (or rejection) time (s).
            allocation: Its host ids, None when rejected.
            energy: Energy of its hosts (J), NaN without energy or when rejected.
            reason: Rejection reason ("" otherwise).
        """
