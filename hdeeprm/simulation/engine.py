"""Embedded discrete-event engine that reproduces Batsim 4.2.1 on an ideal network.

The engine simulates computation-only jobs on a set of hosts and hands the decision system one
:class:`Batch` per simulated instant that has events, as Batsim 4.2.1 does with an ideal network
(0 latency, "infinite" bandwidth): every JOB_SUBMITTED of the instant, then every JOB_COMPLETED
in the order the jobs were started, in one message. Decisions (:meth:`Engine.execute_job`,
:meth:`Engine.set_pstate`, ...) take effect at :attr:`Engine.now`, the instant of the batch just
returned. The rules are in ``docs/engine.rst`` ("Same-instant event order", "Walltime", "Host
numbering") and in Batsim's protocol documentation
(https://batsim.readthedocs.io/en/latest/protocol.html).

Profiles (``hdeeprm.workload.model``): ``delay`` waits ``delay`` seconds and computes nothing;
``parallel_homogeneous`` (``com`` = 0) computes ``cpu`` FLOP on every host in lockstep
(SimGrid's ptask_L07 model): it progresses at the minimum, over its hosts, of their current
pstate speed, and a pstate change of any of them re-times the whole job from that instant.

Energy is kept by an :class:`~hdeeprm.simulation.energy.EnergyAccount` and the time-series logs
of the outputs by a :class:`~hdeeprm.simulation.recording.Recorder`; the engine calls both
directly (each is None when switched off) and prints and logs nothing.

The clock, the submission stream, the heap and the same-instant order are the event kernel's
(:class:`~hdeeprm.simulation.kernel.EventKernel`, subclassed here); the engine adds the CPU model (hosts,
pstates, lockstep ``parallel_homogeneous`` progress, Batsim's energy) and takes a GPU model plugged in
(``gpu=``, :class:`~hdeeprm.simulation.gpu_model.GpuModel`): a job may run on cores, GPUs, or both.
"""
from __future__ import annotations

import heapq
import math
import time as _wallclock
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np

from hdeeprm.errors import SimulationError
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.simulation import checks
from hdeeprm.simulation.energy import EnergyAccount, gather
from hdeeprm.simulation.kernel import (DEFAULT_CLOCK, PRIORITY_CALL, PRIORITY_COMPLETION, PRIORITY_SUBMISSION,
                                       EventKernel)
from hdeeprm.simulation.pstates import HostPstates, occupy_hosts, release_hosts
from hdeeprm.simulation.recording import Recorder
from hdeeprm.simulation.results import Batch, SimulationResult
from hdeeprm.workload.model import Job, JobState, Workload

if TYPE_CHECKING:
    from hdeeprm.simulation.gpu_model import GpuModel, GpuShare

__all__ = ["Engine", "Batch", "SimulationResult", "PRIORITY_SUBMISSION", "PRIORITY_COMPLETION",
           "PRIORITY_CALL", "TIME_EPSILON"]

#: Timing precision in seconds, SimGrid's default ``precision/timing`` (1e-9 s): a
#: ``parallel_homogeneous`` job whose computed end exceeds its walltime deadline by less than
#: this ends exactly at the walltime and succeeds (docs/engine.rst, "Walltime").
TIME_EPSILON = 1e-9

_NOT_SUBMITTED = JobState.NOT_SUBMITTED
_SUBMITTED = JobState.SUBMITTED
_RUNNING = JobState.RUNNING
_SUCCESS = JobState.COMPLETED_SUCCESSFULLY
_WALLTIME = JobState.COMPLETED_WALLTIME_REACHED
_KILLED = JobState.COMPLETED_KILLED
_REJECTED = JobState.REJECTED
_INF = math.inf


class Engine(EventKernel):
    """Batsim-compatible discrete-event simulation of one workload on a set of hosts.

    Typical loop (what a decision system does)::

        engine = Engine(hosts, workload)
        while (batch := engine.next_batch()) is not None:
            ...  # react: engine.execute_job(job, [0, 1]), engine.set_pstate([2], 1), ...
        result = engine.result()

    Args:
        hosts: Compute hosts; host id ``i`` is ``hosts[i]`` (Batsim ids, i.e. hosts sorted
            byte-wise by name, as :func:`hdeeprm.platform.simgrid_reader.read_simgrid_platform`
            returns them; docs/engine.rst, "Host numbering").
        workload: The jobs (profiles ``delay`` / ``parallel_homogeneous`` only), with
            ``jobs[i].index == i``.
        energy: Simulate energy (Batsim ``-E``; docs/engine.rst, "Energy accounting"). Without
            it per-job energies are NaN and :meth:`consumed_energy` returns 0.0.
        record: Keep the machine-state, pstate and energy logs needed by
            ``out_machine_states.csv``, ``out_pstate_changes.csv`` and
            ``out_consumed_energy.csv`` (docs/engine.rst, "Output files"). Job results are
            always kept.
        ack_pstates: Acknowledge every :meth:`set_pstate` in a batch at the same instant
            (:attr:`Batch.pstate_changes`, Batsim's RESOURCE_STATE_CHANGED), as Batsim does;
            off by default because an in-process decision system does not need it.
        gpu: The GPU resource model (:class:`~hdeeprm.simulation.gpu_model.GpuModel`) of a platform whose
            nodes carry GPUs, or None. With one, ``hosts`` may be empty (a GPU cluster whose CPUs are not
            simulated), a job may request 0 hosts, and :meth:`execute_job` takes the GPUs a job gets; the model
            times such a job and integrates the GPUs' power at every instant.
        recorder: Builds the recorder from ``(nb_hosts, energy account or None)`` when
            ``record`` is on: :class:`~hdeeprm.simulation.recording.Recorder` keeps the rows;
            a streaming one (``streams`` True, e.g. :class:`hdeeprm.outputs.stream.CsvStream`)
            writes them as they come, and :attr:`allocation` then forgets each job's hosts
            when it ends.
        clock: ``"exact"`` (default) or ``"batsim"``: Batsim's 6-decimal protocol clock, batches dated as the
            protocol prints them and decisions taking effect up to 0.5 us late
            (:mod:`hdeeprm.simulation.kernel`; docs/engine.rst, "Protocol clock").

    Attributes:
        now: Current simulated time in seconds.
        state: :class:`JobState` of each job, by job index.
        start_time: Start time (s) by job index, float64 (nb_jobs,), NaN when not started.
        finish_time: End time (s) by job index, float64 (nb_jobs,), NaN when not finished.
        allocation: Host ids of each job by job index (a tuple, or a :class:`~hdeeprm.simulation.runs.HostRuns`),
            None when not started (and, with a streaming recorder, once ended).
        pstate: Current pstate of each host, int (nb_hosts,).
        busy: Whether a job runs on each host, bool (nb_hosts,).

    Raises:
        PlatformError: Malformed host tables.
        SimulationError: A job with an unsupported profile type or a bad index.
    """

    def __init__(self, hosts: Sequence[HostSpec], workload: Workload, *, energy: bool = True,
                 record: bool = True, ack_pstates: bool = False,
                 recorder: Callable[[int, EnergyAccount | None], Recorder] = Recorder,
                 gpu: GpuModel | None = None, clock: str = DEFAULT_CLOCK) -> None:
        self._hosts = tuple(hosts)
        self._gpu = gpu
        if self._hosts or gpu is None:
            self._table, self._n_pstates = checks.host_tables(self._hosts)
        else:   # GPUs only: no CPU host to simulate
            self._table, self._n_pstates = np.zeros((1, 3, 0)), np.zeros(0, dtype=np.intp)
        n = self._n_hosts = len(self._hosts)
        counts = self._n_pstates  # their common number when all hosts have the same, else 0:
        self._uniform_pstates = int(counts[0]) if n and (counts == counts[0]).all() else 0
        self._workload = workload
        self._ack = bool(ack_pstates)
        EventKernel.__init__(self, workload, clock)

        self._initial_pstates = np.array([h.initial_pstate for h in self._hosts], dtype=np.intp)
        self.busy = np.zeros(n, dtype=bool)
        self._n_busy = 0
        self._host_busy = np.zeros(n)              # s of ended jobs per host (out_schedule.csv)
        self._host_last_end = np.full(n, -_INF)   # end of the last ended job per host (s)
        self._hosts_now = HostPstates(self._table, self._initial_pstates.tolist())
        self._host_jobs = None if self._hosts_now.curs is None else np.full(n, -1, dtype=np.int64)   # -1: free
        self._host_job = [-1] * n if self._host_jobs is None else memoryview(self._host_jobs)   # as HostPstates

        jobs = self._jobs = workload.jobs
        nj = len(jobs)
        self._is_ph = checks.computes(jobs)
        self._account = EnergyAccount(self._hosts_now.cur, nj) if energy else None
        self._recorder = recorder(n, self._account) if record else None
        self._forget = self._recorder is not None and self._recorder.streams
        self.state: list[JobState] = [_NOT_SUBMITTED] * nj
        self.start_time = np.full(nj, np.nan)
        self.finish_time = np.full(nj, np.nan)
        self.allocation: list[tuple[int, ...] | None] = [None] * nj
        self._alloc_idx: list[np.ndarray | slice | None] = [None] * nj  # while running (a slice: a run)
        self._remaining = [0.0] * nj   # FLOP left per host (parallel_homogeneous)
        self._rate = [0.0] * nj        # FLOP/s per host (lockstep rate)
        self._last = [0.0] * nj        # time of the last progress update (s)
        self._start_seq = [0] * nj
        self._by_walltime = [False] * nj
        self._reasons: dict[int, str] = {}
        self._completion_order: list[int] = []
        self._grouped_switches = 0
        self._machine_switches = 0

        self._n_started = 0
        self._pending_kills: list[int] = []
        self._pending_acks: list[tuple[tuple[int, ...], int]] = []
        self._wall_start: float | None = None
        self._wall_return = 0.0
        self._wall_sched = 0.0
        self._wall_end: float | None = None

    # ------------------------------------------------------------------ time advance
    def has_pending_events(self) -> bool:
        """Whether :meth:`next_batch` would return a batch (False: SIMULATION_ENDS is next).

        Returns:
            True when a submission, a job end, a call or an acknowledgement is still pending.
        """
        if self._sub_ptr < len(self._sub_order) or self._pending_kills or self._pending_acks or self._held:
            return True
        self._drop_stale()
        return bool(self._heap)

    def next_batch(self) -> Batch | None:
        """Advance to the next instant that has events and return them.

        Returns:
            The :class:`Batch` of that instant (events in the order of docs/engine.rst,
            "Same-instant event order"), or None when no event is left (everything submitted,
            nothing running that can end, no pending call): SIMULATION_ENDS.
        """
        wall = _wallclock.perf_counter()
        if self._wall_start is None:
            self._wall_start = wall
        else:
            self._wall_sched += wall - self._wall_return
        heap, version = self._heap, self._version   # next_event_time(), inlined (the hot path)
        while heap and heap[0][1] == PRIORITY_COMPLETION and heap[0][4] != version[heap[0][3]]:
            heapq.heappop(heap)
        t, ptr = heap[0][0] if heap else _INF, self._sub_ptr
        if ptr < len(self._sub_order) and self._sub_times[ptr] < t:
            t = self._sub_times[ptr]
        held = self._held
        if self._pending_kills or self._pending_acks or held is not None:
            t = self.now
        if t == _INF:
            if self._wall_end is None:
                self._wall_end = _wallclock.perf_counter()
            self._wall_return = _wallclock.perf_counter()
            return None
        self.now = t
        submitted, completed, calls = self._instant(t)
        if held is not None:   # what happened since the last batch, before the date the clock was held to
            self._held = None
            submitted, completed, calls = held[0] + submitted, held[1] + completed, held[2] + calls
        killed: list[Job] = []
        if self._pending_kills:
            killed = [self._jobs[j] for j in self._pending_kills]
            self._pending_kills = []
            completed = sorted(completed + killed, key=lambda job, start_seq=self._start_seq: start_seq[job.index])
        acks: list[tuple[tuple[int, ...], int]] = []
        if self._pending_acks:
            acks, self._pending_acks = self._pending_acks, []
        batch = Batch(self.batch_time(t) if self._batsim_clock else t, submitted, completed, calls > 0, killed, calls,
                      acks)
        if self._batsim_clock:   # the exact clock: decisions at t
            self.after_batch(t)
        self._wall_return = _wallclock.perf_counter()
        return batch

    def _instant(self, t: float) -> tuple[list[Job], list[Job], int]:
        """Make the events of instant ``t`` (= :attr:`now`) happen: submissions, job ends, calls.

        Returns:
            The jobs submitted (Batsim order), the jobs ended (start order) and the number of calls.
        """
        if self._gpu is not None:
            self._gpu.advance(t)
        jobs, heap, state = self._jobs, self._heap, self.state
        submitted: list[Job] = []
        ptr, times = self._sub_ptr, self._sub_times
        if ptr < len(times) and times[ptr] == t:
            due = self._pop_submissions(t)
            if self._sub_ptr == len(due):   # the first submissions: the energy windows open
                self._open_energy_windows(t)
            for i in due:
                state[i] = _SUBMITTED
            submitted = [jobs[i] for i in due]
        completed: list[Job] = []
        calls = 0
        version = self._version
        while heap and heap[0][0] == t:
            _, prio, _, j, ver = heapq.heappop(heap)
            if prio == PRIORITY_COMPLETION:
                if ver == version[j]:
                    self._end_job(j, _WALLTIME if self._by_walltime[j] else _SUCCESS)
                    completed.append(jobs[j])
            else:
                calls += 1
        if completed or calls:
            self._step(t)
        return submitted, completed, calls

    # ------------------------------------------------------------------ job life cycle
    @property
    def pstate(self) -> np.ndarray:
        """Current pstate of each host, intp (nb_hosts,) (a new array)."""
        return np.array(self._hosts_now.pstate, dtype=np.intp)

    def execute_job(self, job: Job, hosts: Sequence[int], gpus: Sequence[GpuShare] | None = None, *,
                    validate: bool = True) -> None:
        """Start a submitted job now on the given hosts and GPUs (Batsim EXECUTE_JOB).

        Its end is scheduled at once (docs/engine.rst, "Walltime", for the walltime kills). A job given GPUs
        runs its ``delay`` times the GPU model's run-time factor
        (:meth:`~hdeeprm.simulation.gpu_model.GpuModel.start`).

        Args:
            job: A job in state SUBMITTED.
            hosts: Exactly ``job.res`` distinct, free host ids in ``[0, nb_hosts)`` (none for a job that asks
                for no core).
            gpus: The job's placements on the GPU model's nodes, or None (no GPU).
            validate: Check the host ids. Only a caller that picks free hosts of the platform itself (HDeepRM's
                workload manager) may pass False with ``hosts`` an integer array of ``job.res`` ids (kept, not copied)
                or a :class:`~hdeeprm.simulation.runs.HostRuns` of them.

        Raises:
            SimulationError: The job is not waiting, or a host is out of range, repeated, busy,
                or the number of hosts differs from ``job.res``; GPUs without a GPU model, or GPUs for a
                ``parallel_homogeneous`` job.
        """
        i = checks.job_in_state(self._jobs, self.state, job, _SUBMITTED, "execute", self.now)
        if not validate:
            alloc, idx = checks.trusted_hosts(hosts)
        elif job.res or len(hosts):
            alloc, idx = checks.host_ids(hosts, self._n_hosts, job)
        else:
            alloc, idx = (), np.zeros(0, dtype=np.intp)
        if len(alloc) != job.res:
            raise SimulationError(f"execute job {job.id!r}: it requests {job.res} hosts, got "
                                  f"{len(alloc)} ({list(alloc)})")
        host_job = self._host_job
        if validate and alloc and max(gather(host_job, alloc)) >= 0:   # a job index: the host runs a job
            taken = [h for h in alloc if host_job[h] >= 0]
            raise SimulationError(f"execute job {job.id!r} at t = {self.now:g} s: hosts {taken} "
                                  f"are busy")
        speed = 1.0
        if gpus is not None:
            if self._gpu is None or self._is_ph[i]:
                raise SimulationError(f"execute job {job.id!r}: GPUs need a GPU model and a delay profile")
            speed = self._gpu.start(i, gpus, job.profile.delay)
        now = self.now
        self.busy[idx] = True
        occupy_hosts(alloc, idx, host_job, self._host_jobs, i)
        self._n_busy += len(alloc)
        self.state[i] = _RUNNING
        self.start_time[i] = now
        self.allocation[i] = alloc
        self._alloc_idx[i] = idx
        self._start_seq[i] = self._n_started
        self._n_started += 1
        account = self._account
        if self._is_ph[i]:
            speed, idle, comp = self._hosts_now.summarise(alloc, idx)
            if account is not None:
                account.computation_started(i, idx, now, idle, comp)
            self._remaining[i] = job.profile.cpu
            self._rate[i] = speed
            self._last[i] = now
            self._schedule_end(i)
        else:
            if account is not None:
                account.delay_started(i, alloc, now)
            delay, walltime = job.profile.delay, job.walltime
            if gpus is not None:
                delay *= speed
            killed = 0 <= walltime <= delay  # Batsim: a delay job succeeds only if delay < walltime
            self._by_walltime[i] = killed
            end = now + (walltime if killed else delay)
            heapq.heappush(self._heap, (end, PRIORITY_COMPLETION, self._start_seq[i], i, 0))
        if self._recorder is not None:
            self._recorder.job_started(now, self._n_busy)

    def _schedule_end(self, i: int) -> None:
        """(Re-)schedule the end of running parallel_homogeneous job ``i`` from its progress."""
        rate = self._rate[i]
        end = self._last[i] + self._remaining[i] / rate if rate > 0 else _INF
        walltime = self._jobs[i].walltime
        killed = False
        if walltime >= 0:
            deadline = self.start_time[i] + walltime
            if end > deadline + TIME_EPSILON:
                end, killed = float(deadline), True
        self._by_walltime[i] = killed
        self._version[i] += 1
        if end != _INF:
            heapq.heappush(self._heap, (end, PRIORITY_COMPLETION, self._start_seq[i], i,
                                        self._version[i]))

    def _end_job(self, i: int, final: JobState) -> None:
        """Finish running job ``i`` at :attr:`now` with state ``final`` and free its hosts."""
        idx = self._alloc_idx[i]
        self._alloc_idx[i] = None
        self.state[i] = final
        self.finish_time[i] = self.now
        self._version[i] += 1
        self.busy[idx] = False
        host_job, host_busy, host_last_end = self._host_job, self._host_busy, self._host_last_end
        now = self.now
        ran = now - float(self.start_time[i])
        release_hosts(self.allocation[i], idx, host_job, host_busy, host_last_end, ran, now, self._host_jobs)
        self._n_busy -= len(self.allocation[i])
        if self._gpu is not None:   # frees its GPUs, if any; the GPUs' energy window runs to the last job end
            self._gpu.end(i)
        computed = self._is_ph[i]
        if computed:
            self._advance(i)
        if self._account is not None:
            self._account.job_ended(i, idx, self.now, computed)
        self._completion_order.append(i)
        recorder = self._recorder
        if recorder is not None:
            recorder.job_ended(self.now, self._n_busy)
            account = self._account
            recorder.job_finished(self._jobs[i], final, float(self.start_time[i]), self.now, self.allocation[i],
                                  math.nan if account is None else float(account.job_energy[i]), "")
            if self._forget:
                self.allocation[i] = None

    def _advance(self, i: int) -> None:
        """Bring the remaining work of parallel_homogeneous job ``i`` up to :attr:`now`."""
        now = self.now
        left = self._remaining[i] - self._rate[i] * (now - self._last[i])
        self._remaining[i] = left if left > 0.0 else 0.0
        self._last[i] = now

    def reject_job(self, job: Job, reason: str) -> None:
        """Reject a submitted job (Batsim REJECT_JOB): final state REJECTED.

        Args:
            job: A job in state SUBMITTED.
            reason: Why, written in the ``metadata`` column of ``out_jobs.csv``.

        Raises:
            SimulationError: The job is not waiting (not submitted, running or finished).
        """
        i = checks.job_in_state(self._jobs, self.state, job, _SUBMITTED, "reject", self.now)
        self.state[i] = _REJECTED
        self.finish_time[i] = self.now
        self._reasons[i] = str(reason)
        self._completion_order.append(i)
        if self._recorder is not None:
            self._recorder.job_finished(job, _REJECTED, math.nan, self.now, None, math.nan, self._reasons[i])

    def kill_job(self, job: Job) -> None:
        """Kill a running job now (Batsim KILL_JOB): final state COMPLETED_KILLED.

        Its hosts are free at once; the job is reported in the ``completed`` (and ``killed``)
        list of the next batch, at the same instant. Killing a job that already reached a
        final state does nothing (it may have ended in the batch the decision answers).

        Args:
            job: A running job.

        Raises:
            SimulationError: The job has not started yet.
        """
        if job.index < len(self.state) and self.state[job.index].is_final:
            return
        i = checks.job_in_state(self._jobs, self.state, job, _RUNNING, "kill", self.now)
        self._end_job(i, _KILLED)
        self._pending_kills.append(i)

    def set_pstate(self, hosts: Sequence[int], pstate: int) -> None:
        """Switch hosts to a computation pstate now (Batsim SET_RESOURCE_STATE, immediate).

        Running ``parallel_homogeneous`` jobs on these hosts are re-timed from now at their new
        lockstep rate; host power changes from now (docs/engine.rst, "Energy accounting").

        Args:
            hosts: Distinct host ids in ``[0, nb_hosts)``.
            pstate: Pstate index, valid for every host of ``hosts``.

        Raises:
            SimulationError: A host id or the pstate is out of range.
        """
        self.set_pstates({pstate: hosts})

    def set_pstates(self, changes: Mapping[int, Sequence[int]], *, validate: bool = True) -> None:
        """Several SET_RESOURCE_STATE at once: ``{pstate: hosts}``, applied in the mapping's order.

        Same outcome (times, energy, logs, switch counts) as one :meth:`set_pstate` call per
        entry, with the affected jobs re-timed once instead of once per entry.

        Args:
            changes: Pstate -> distinct host ids; a host appears in one entry at most.
            validate: Check host ids and pstates. Only a caller that derives them from the
                platform itself (HDeepRM's workload manager) may pass False, to save the checks; each
                entry's hosts must then be ascending (runs of consecutive hosts are switched by slices), a list
                or a :class:`~hdeeprm.simulation.runs.HostRuns` of ascending runs.

        Raises:
            SimulationError: A host id or a pstate is out of range.
        """
        if validate:
            groups = [(alloc, p) for alloc, _, p in
                      checks.pstate_groups(changes, self._n_pstates, self._uniform_pstates)]
        else:   # the manager's lists: ascending, distinct
            groups = [(hosts, p) for p, hosts in changes.items()]
        if not groups:
            return
        account, recorder = self._account, self._recorder
        jobs_here, wattmins, n_switched = self._hosts_now.switch_groups(groups, self._host_job, account, not validate,
                                                                        self._host_jobs)
        if self._ack:
            self._pending_acks.extend((tuple(alloc), p) for alloc, p in groups)
        self._grouped_switches += len(groups)
        self._machine_switches += n_switched
        if recorder is not None:
            recorder.switched_groups(self.now, groups, wattmins, self._n_busy, not validate)
        jobs_here.discard(-1)
        is_ph, now = self._is_ph, self.now
        for j in sorted(jobs_here):
            speed, idle, comp = self._hosts_now.summarise(self.allocation[j], self._alloc_idx[j])
            if is_ph[j]:
                if account is not None:
                    account.rewatt(j, now, idle, comp)
                self._advance(j)  # progress up to now at the old speed, then the new one
                self._rate[j] = speed
                self._schedule_end(j)
            elif account is not None:
                account.rewatt(j, now, idle, idle)
        if account is not None:
            account.end_switch(now)

    # ------------------------------------------------------------------ observation
    def progress(self, job: Job) -> float:
        """Fraction of a job's work done at :attr:`now` (or at its end when it has ended).

        Args:
            job: Any job of the workload.

        Returns:
            In [0, 1]: 0 before the start, 1 after a successful end; for a running or killed
            ``delay`` job elapsed / delay, for ``parallel_homogeneous`` FLOP done / ``cpu``.
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
            left = self._remaining[i]
            if running:
                left -= self._rate[i] * (self.now - self._last[i])
            done = 1.0 - left / cpu
        else:
            delay = job.profile.delay
            if delay <= 0:
                return 1.0
            end = self.now if running else self.finish_time[i]
            done = float(end - self.start_time[i]) / delay
        return 1.0 if done > 1.0 else done if done > 0.0 else 0.0   # min(1, max(0, done)), NaN as 0

    @property
    def nb_hosts(self) -> int:
        """Number of compute hosts."""
        return self._n_hosts

    @property
    def nb_busy(self) -> int:
        """Number of hosts a job runs on."""
        return self._n_busy

    def power(self) -> np.ndarray:
        """Current power of each host.

        Returns:
            Watts, float64 (nb_hosts,), a new array (zeros without energy); see docs/engine.rst,
            "Energy accounting".
        """
        if self._account is None:
            return np.zeros(self._n_hosts)
        return self._account.host_power()

    def consumed_energy(self) -> float:
        """Energy consumed by all compute hosts since t = 0, up to :attr:`now`.

        Returns:
            Joules (0.0 when the engine was built with ``energy=False``).
        """
        return 0.0 if self._account is None else self._account.energy(self.now)

    def result(self) -> SimulationResult:
        """Snapshot of the simulation for the output writers (callable at any time).

        Returns:
            A :class:`SimulationResult` holding copies of the engine's job arrays and logs.
        """
        end = self._wall_end if self._wall_end is not None else _wallclock.perf_counter()
        sim_time = 0.0 if self._wall_start is None else end - self._wall_start
        account, recorder = self._account, self._recorder
        no_energy = account is None
        return SimulationResult(
            workload=self._workload,
            host_names=tuple(h.name for h in self._hosts),
            energy=not no_energy,
            state=list(self.state),
            start_time=self.start_time.copy(),
            finish_time=self.finish_time.copy(),
            allocation=list(self.allocation),
            consumed_energy=(np.full(len(self._jobs), np.nan) if no_energy
                             else account.job_energy.copy()),
            reasons=dict(self._reasons),
            completion_order=list(self._completion_order),
            first_submission_energy=math.nan if no_energy else account.first_submission_energy,
            last_completion_energy=math.nan if no_energy else account.last_completion_energy,
            nb_grouped_switches=self._grouped_switches,
            nb_machine_switches=self._machine_switches,
            initial_pstates=self._initial_pstates.copy(),
            machine_states=[] if recorder is None else list(recorder.machine_states),
            pstate_changes=[] if recorder is None else list(recorder.pstate_changes),
            energy_log=[] if recorder is None else list(recorder.energy_log),
            host_busy=self._host_busy.copy(),
            host_last_end=self._host_last_end.copy(),
            scheduling_time=self._wall_sched,
            simulation_time=sim_time,
        )
