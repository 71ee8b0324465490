"""Embedded discrete-event engine that reproduces Batsim 4.2.1 on an ideal network.

The engine simulates jobs on a set of hosts and hands the decision system one :class:`Batch` per simulated
instant that has events, as Batsim 4.2.1 does with an ideal network (0 latency, "infinite" bandwidth): every
JOB_SUBMITTED of the instant, then every JOB_COMPLETED in the order the jobs were started, in one message.
Decisions (:meth:`Engine.execute_job`, :meth:`Engine.set_pstate`, ...) take effect at :attr:`Engine.now`, the
instant of the batch just returned. The rules are in ``docs/engine.rst`` ("Same-instant event order",
"Walltime", "Host numbering") and in Batsim's protocol documentation
(https://batsim.readthedocs.io/en/latest/protocol.html).

Profiles (``hdeeprm.workload.model``): ``delay`` waits ``delay`` seconds (times the run-time factors of the
resource models whose shares it holds) and computes nothing; ``parallel_homogeneous`` (``com`` = 0) computes
``cpu`` FLOP on every host in lockstep (SimGrid's ptask_L07 model): it progresses at the minimum, over its
hosts, of their current pstate speed, and a pstate change of any of them re-times the whole job from that
instant.

What is here is the jobs' life cycle: their states, start and end times, walltime kills, rejections and the
Batsim batches. The clock, the submission stream, the heap and the same-instant order are the event kernel's
(:class:`~hdeeprm.simulation.kernel.EventKernel`, subclassed here); the hosts (allocation, pstates, lockstep
progress, Batsim's energy) are the CPU model's (:class:`~hdeeprm.simulation.cpu_model.CpuModel`); every other
resource (GPUs, a user's own) is a :class:`~hdeeprm.simulation.resource_model.ResourceModel` plugged in by
``models=``, which the engine knows by no name. The time-series logs of the outputs go to a
:class:`~hdeeprm.simulation.recording.Recorder` (None when switched off); the engine prints and logs nothing.
"""
from __future__ import annotations

import heapq
import math
import time as _wallclock
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from hdeeprm.errors import SimulationError
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.simulation import checks
from hdeeprm.simulation.cpu_model import CpuModel
from hdeeprm.simulation.energy import EnergyAccount
from hdeeprm.simulation.kernel import (DEFAULT_CLOCK, PRIORITY_CALL, PRIORITY_COMPLETION, PRIORITY_SUBMISSION,
                                       EventKernel, job_in_state)
from hdeeprm.simulation.recording import Recorder
from hdeeprm.simulation.results import Batch, SimulationResult
from hdeeprm.workload.model import Job, JobState, Workload

if TYPE_CHECKING:
    from hdeeprm.simulation.resource_model import ResourceModel

__all__ = ["Engine", "Batch", "SimulationResult", "PRIORITY_SUBMISSION", "PRIORITY_COMPLETION",
           "PRIORITY_CALL", "TIME_EPSILON"]

#: Timing precision in seconds, SimGrid's default ``precision/timing`` (1e-9 s): a
#: ``parallel_homogeneous`` job whose computed end exceeds its walltime deadline by less than
#: this ends exactly at the walltime and succeeds (docs/engine.rst, "Walltime").
TIME_EPSILON = 1e-9

_SUBMITTED = JobState.SUBMITTED
_RUNNING = JobState.RUNNING
_SUCCESS = JobState.COMPLETED_SUCCESSFULLY
_INF = math.inf


class Engine(EventKernel):
    """Batsim-compatible discrete-event simulation of one workload on a set of hosts.

    Typical loop (what a decision system does)::

        engine = Engine(hosts, workload)
        while (batch := engine.next_batch()) is not None:
            ...  # react: engine.execute_job(job, [0, 1]), engine.set_pstate([2], 1), ...
        result = engine.result()

    Args:
        hosts: Compute hosts; host id ``i`` is ``hosts[i]`` (Batsim ids, i.e. hosts sorted byte-wise by name, as
            :func:`hdeeprm.platform.simgrid_reader.read_simgrid_platform` returns them; docs/engine.rst, "Host
            numbering"). May be empty when ``models`` is not (a GPU cluster whose CPUs are not simulated).
        workload: The jobs (profiles ``delay`` / ``parallel_homogeneous`` only), with ``jobs[i].index == i``.
        energy: Simulate the hosts' energy (Batsim ``-E``; docs/engine.rst, "Energy accounting"). Without it
            per-job energies are NaN and :meth:`consumed_energy` returns 0.0.
        record: Keep the machine-state, pstate and energy logs needed by ``out_machine_states.csv``,
            ``out_pstate_changes.csv`` and ``out_consumed_energy.csv`` (docs/engine.rst, "Output files"). Job
            results are always kept.
        ack_pstates: Acknowledge every :meth:`set_pstate` in a batch at the same instant
            (:attr:`Batch.pstate_changes`, Batsim's RESOURCE_STATE_CHANGED), as Batsim does; off by default
            because an in-process decision system does not need it.
        recorder: Builds the recorder from ``(nb_hosts, energy account or None)`` when ``record`` is on:
            :class:`~hdeeprm.simulation.recording.Recorder` keeps the rows; a streaming one (``streams`` True,
            e.g. :class:`hdeeprm.outputs.stream.CsvStream`) writes them as they come, and :attr:`allocation`
            then forgets each job's hosts when it ends.
        gpu: The GPU resource model (:class:`~hdeeprm.simulation.gpu_model.GpuModel`), or None: shorthand for
            one more entry of ``models`` (its name is ``"gpu"``).
        clock: ``"exact"`` (default) or ``"batsim"``: Batsim's 6-decimal protocol clock, batches dated as the
            protocol prints them and decisions taking effect up to 0.5 us late (:mod:`hdeeprm.simulation.kernel`;
            docs/engine.rst, "Protocol clock").
        models: Further resource models (:class:`~hdeeprm.simulation.resource_model.ResourceModel`), distinct
            names; a job takes shares of them through :meth:`execute_job`'s ``shares``.

    Attributes:
        now: Current simulated time in seconds.
        state: :class:`JobState` of each job, by job index.
        start_time: Start time (s) by job index, float64 (nb_jobs,), NaN when not started.
        finish_time: End time (s) by job index, float64 (nb_jobs,), NaN when not finished.
        allocation: Host ids of each job by job index (a tuple, or a :class:`~hdeeprm.simulation.runs.HostRuns`),
            None when not started (and, with a streaming recorder, once ended).
        busy: Whether a job runs on each host, bool (nb_hosts,).
        models: The plugged resource models, by name.

    Raises:
        PlatformError: Malformed host tables.
        SimulationError: A job with an unsupported profile type or a bad index; two models of one name.
    """

    def __init__(self, hosts: Sequence[HostSpec], workload: Workload, *, energy: bool = True,
                 record: bool = True, ack_pstates: bool = False,
                 recorder: Callable[[int, EnergyAccount | None], Recorder] = Recorder,
                 gpu: ResourceModel | None = None, clock: str = DEFAULT_CLOCK,
                 models: Sequence[ResourceModel] = ()) -> None:
        plugged = [gpu, *models] if gpu is not None else list(models)
        self.models: dict[str, ResourceModel] = {}
        for model in plugged:
            if model.name in self.models:
                raise SimulationError(f"two resource models are named {model.name!r}")
            self.models[model.name] = model
        jobs = self._jobs = workload.jobs
        nj = len(jobs)
        self._cpu = cpu = CpuModel(hosts, nj, energy=energy, hostless=bool(plugged))
        self._hosts = cpu.hosts
        self._workload = workload
        self._ack = bool(ack_pstates)
        EventKernel.__init__(self, workload, clock)
        self._account = cpu.account
        self._meters = [m for m in (cpu.account, *plugged) if m is not None]   # energy windows (the kernel's)
        self._plugged = plugged
        self._movers = [m.advance for m in plugged]
        self._enders = [m.end for m in plugged]
        self.busy = cpu.busy
        self._is_ph = checks.computes(jobs)
        self._recorder = cpu.recorder = recorder(cpu.nb_hosts, cpu.account) if record else None
        self._forget = self._recorder is not None and self._recorder.streams

    # ------------------------------------------------------------------ job life cycle
    def execute_job(self, job: Job, hosts: Sequence[int], gpus: Any = None, *, validate: bool = True,
                    shares: Mapping[str, Any] | None = None) -> None:
        """Start a submitted job now on the given hosts and shares of the plugged models (Batsim EXECUTE_JOB).

        Its end is scheduled at once (docs/engine.rst, "Walltime", for the walltime kills). A job given shares
        runs its ``delay`` times the run-time factors the models return (:meth:`ResourceModel.start
        <hdeeprm.simulation.resource_model.ResourceModel.start>`; the GPU model's: its GPUs' speed).

        Args:
            job: A job in state SUBMITTED.
            hosts: Exactly ``job.res`` distinct, free host ids in ``[0, nb_hosts)`` (none for a job that asks
                for no core).
            gpus: The job's share of the ``"gpu"`` model (its placements), or None: shorthand for
                ``shares={"gpu": gpus}``.
            validate: Check the host ids. Only a caller that picks free hosts of the platform itself (HDeepRM's
                workload manager) may pass False with ``hosts`` an integer array of ``job.res`` ids (kept, not
                copied) or a :class:`~hdeeprm.simulation.runs.HostRuns` of them.
            shares: Model name -> the job's share of that model, or None.

        Raises:
            SimulationError: The job is not waiting, or a host is out of range, repeated, busy, or the number of
                hosts differs from ``job.res``; a share of a model the engine does not have, or a share that
                changes the speed of a ``parallel_homogeneous`` job.
        """
        i = job_in_state(self._jobs, self.state, job, _SUBMITTED, "execute", self.now)
        cpu, now = self._cpu, self.now
        alloc, idx = cpu.hosts_for(job, hosts, validate, now)
        factor = 1.0
        if gpus is not None or shares:
            factor = self._start_shares(job, {**(shares or {}), **({"gpu": gpus} if gpus is not None else {})})
        self.state[i] = _RUNNING
        self.start_time[i] = now
        self.allocation[i] = alloc
        self._start_seq[i] = self._n_started
        self._n_started += 1
        if self._is_ph[i]:
            cpu.start_computation(i, alloc, idx, now, job.profile.cpu)
            self._schedule_end(i)
        else:
            cpu.start_delay(i, alloc, idx, now)
            delay, walltime = job.profile.delay * factor, job.walltime
            killed = 0 <= walltime <= delay  # Batsim: a delay job succeeds only if delay < walltime
            self._by_walltime[i] = killed
            end = now + (walltime if killed else delay)
            heapq.heappush(self._heap, (end, PRIORITY_COMPLETION, self._start_seq[i], i, 0))
        if self._recorder is not None:
            self._recorder.job_started(now, cpu.nb_busy)

    def _start_shares(self, job: Job, shares: Mapping[str, Any]) -> float:
        """Give ``job`` its shares of the plugged models; returns the product of their run-time factors."""
        i, factor = job.index, 1.0
        computes = self._is_ph[i]   # its time is its FLOP at the hosts' speed: no run time to scale
        for name, share in shares.items():
            model = self.models.get(name)
            if model is None:
                raise SimulationError(f"execute job {job.id!r}: the engine has no resource model {name!r} "
                                      f"(it has: {', '.join(self.models) or 'none'})")
            factor *= model.start(i, share, math.nan if computes else job.profile.delay)
            if computes and factor != 1.0:
                raise SimulationError(f"execute job {job.id!r}: its share of {name!r} changes its speed, which "
                                      "needs a delay profile (a parallel_homogeneous job runs at its hosts' speed)")
        return factor

    def _schedule_end(self, i: int) -> None:
        """(Re-)schedule the end of running parallel_homogeneous job ``i`` from its progress."""
        end = self._cpu.natural_end(i)
        walltime = self._jobs[i].walltime
        killed = False
        if walltime >= 0:
            deadline = self.start_time[i] + walltime
            if end > deadline + TIME_EPSILON:
                end, killed = float(deadline), True
        self._by_walltime[i] = killed
        self._version[i] += 1
        if end != _INF:
            heapq.heappush(self._heap, (end, PRIORITY_COMPLETION, self._start_seq[i], i, self._version[i]))

    def _end_job(self, i: int, final: JobState) -> None:
        """Finish running job ``i`` at :attr:`now` with state ``final``: free its hosts and shares."""
        self.state[i] = final
        now = self.finish_time[i] = self.now
        self._version[i] += 1
        cpu = self._cpu
        cpu.end(i, self.allocation[i], now, now - float(self.start_time[i]), self._is_ph[i])
        for end in self._enders:   # every model: a metered one's energy window runs to the last job end
            end(i)
        self._completion_order.append(i)
        recorder = self._recorder
        if recorder is not None:
            recorder.job_ended(now, cpu.nb_busy)
            account = cpu.account
            recorder.job_finished(self._jobs[i], final, float(self.start_time[i]), now, self.allocation[i],
                                  math.nan if account is None else float(account.job_energy[i]), "")
            if self._forget:
                self.allocation[i] = None

    def set_pstate(self, hosts: Sequence[int], pstate: int) -> None:
        """Switch hosts to a computation pstate now (Batsim SET_RESOURCE_STATE, immediate): :meth:`set_pstates`."""
        self.set_pstates({pstate: hosts})

    def set_pstates(self, changes: Mapping[int, Sequence[int]], *, validate: bool = True) -> None:
        """Several SET_RESOURCE_STATE at once: ``{pstate: hosts}``, applied in the mapping's order.

        Running ``parallel_homogeneous`` jobs on these hosts are re-timed from now at their new lockstep rate;
        host power changes from now (docs/engine.rst, "Energy accounting"). Same outcome (times, energy, logs,
        switch counts) as one :meth:`set_pstate` call per entry, with the affected jobs re-timed once.

        Args:
            changes: Pstate -> distinct host ids; a host appears in one entry at most.
            validate: Check host ids and pstates. Only a caller that derives them from the platform itself
                (HDeepRM's workload manager) may pass False; each entry's hosts must then be ascending (a list or
                a :class:`~hdeeprm.simulation.runs.HostRuns` of ascending runs).

        Raises:
            SimulationError: A host id or a pstate is out of range.
        """
        groups, retimed = self._cpu.switch(changes, validate, self.now, self.allocation, self._is_ph)
        if self._ack and groups:
            self._pending_acks.extend((tuple(alloc), p) for alloc, p in groups)
        for j in retimed:
            self._schedule_end(j)

    # ------------------------------------------------------------------ observation
    def progress(self, job: Job) -> float:
        """Fraction of a job's work done at :attr:`now` (or at its end when it has ended).

        Returns:
            In [0, 1]: 0 before the start, 1 after a successful end; for a running or killed ``delay`` job
            elapsed / delay, for ``parallel_homogeneous`` FLOP done / ``cpu``.
        """
        i = job.index
        state = self.state[i]
        if state is _SUCCESS:
            return 1.0
        running = state is _RUNNING   # a running job has started: its start time is not read
        if not running and self.start_time[i] != self.start_time[i]:  # never started
            return 0.0
        if self._is_ph[i]:
            cpu = job.profile.cpu
            if cpu <= 0:
                return 1.0
            done = 1.0 - self._cpu.flop_left(i, self.now, running) / cpu
        else:
            delay = job.profile.delay
            if delay <= 0:
                return 1.0
            end = self.now if running else self.finish_time[i]
            done = float(end - self.start_time[i]) / delay
        return 1.0 if done > 1.0 else done if done > 0.0 else 0.0   # min(1, max(0, done)), NaN as 0

    @property
    def pstate(self) -> np.ndarray:
        """Current pstate of each host, intp (nb_hosts,) (a new array)."""
        return self._cpu.pstate

    @property
    def nb_hosts(self) -> int:
        """Number of compute hosts."""
        return self._cpu.nb_hosts

    @property
    def nb_busy(self) -> int:
        """Number of hosts a job runs on."""
        return self._cpu.nb_busy

    def power(self) -> np.ndarray:
        """Current power of each host, watts, float64 (nb_hosts,), a new array (zeros without energy)."""
        return self._cpu.power()

    def consumed_energy(self) -> float:
        """Joules consumed by all compute hosts since t = 0 up to :attr:`now` (0.0 without energy)."""
        return self._cpu.consumed_energy(self.now)

    def result(self) -> SimulationResult:
        """Snapshot of the simulation for the output writers (callable at any time).

        Returns:
            A :class:`SimulationResult` holding copies of the engine's job arrays and logs.
        """
        end = self._wall_end if self._wall_end is not None else _wallclock.perf_counter()
        sim_time = 0.0 if self._wall_start is None else end - self._wall_start
        cpu, recorder = self._cpu, self._recorder
        account = cpu.account
        no_energy = account is None
        return SimulationResult(
            workload=self._workload, host_names=tuple(h.name for h in self._hosts), energy=not no_energy,
            state=list(self.state), start_time=self.start_time.copy(), finish_time=self.finish_time.copy(),
            allocation=list(self.allocation),
            consumed_energy=np.full(len(self._jobs), np.nan) if no_energy else account.job_energy.copy(),
            reasons=dict(self._reasons), completion_order=list(self._completion_order),
            first_submission_energy=math.nan if no_energy else account.first_submission_energy,
            last_completion_energy=math.nan if no_energy else account.last_completion_energy,
            nb_grouped_switches=cpu.grouped_switches, nb_machine_switches=cpu.machine_switches,
            initial_pstates=cpu.initial_pstates.copy(),
            machine_states=[] if recorder is None else list(recorder.machine_states),
            pstate_changes=[] if recorder is None else list(recorder.pstate_changes),
            energy_log=[] if recorder is None else list(recorder.energy_log),
            host_busy=cpu.host_busy.copy(), host_last_end=cpu.host_last_end.copy(),
            scheduling_time=self._wall_sched, simulation_time=sim_time)
