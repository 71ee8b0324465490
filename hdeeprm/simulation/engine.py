"""Embedded discrete-event engine that reproduces Batsim 4.2.1 on an ideal network.

The engine simulates computation-only jobs on a set of hosts and hands the decision
system one :class:`Batch` per simulated instant that has events, exactly as Batsim 4.2.1
does with an ideal network (0 latency, "infinite" bandwidth): every JOB_SUBMITTED of the
instant, then every JOB_COMPLETED in the order the jobs were started, in one message.
Decisions (:meth:`Engine.execute_job`, :meth:`Engine.set_pstate`, ...) take effect at
:attr:`Engine.now`, the instant of the batch just returned. The exact rules, checked
against real Batsim runs, are in ``batsim-golden/README.md`` ("When Batsim delivers
events") and in Batsim's protocol documentation
(https://batsim.readthedocs.io/en/latest/protocol.html).

Profiles (``hdeeprm.workload.model``):

* ``delay``: the job waits ``delay`` seconds and computes nothing, so its hosts draw their
  Idle wattage. It is killed (COMPLETED_WALLTIME_REACHED) when ``delay >= walltime``
  (equality kills, as in Batsim), after exactly ``walltime`` seconds.
* ``parallel_homogeneous`` (``com`` = 0): every host computes ``cpu`` FLOP in lockstep
  (SimGrid's ptask_L07 model): the job progresses at the minimum, over its hosts, of the
  current pstate speed, and a pstate change of any of its hosts re-times the whole job from
  that instant. It is killed only when it would run *longer* than its walltime (ending
  exactly at the walltime succeeds). Its hosts draw the computing (AllCores) wattage.

Energy (SimGrid host-energy plugin semantics): every host draws, at every instant, the Idle
wattage of its current pstate, or the AllCores wattage while a ``parallel_homogeneous`` job
computes on it. The bookkeeping is lazy: the platform energy is ``E(t) = offset + P * t``
with ``P`` the platform power, updated only when ``P`` changes (``offset -= dP * t``); each
running job keeps the energy of its own hosts (hosts are never shared) as joules up to its
last update plus the power its hosts draw, updated only when one of its hosts changes pstate.
A job start or end costs one or two vectorised sums over its hosts, nothing per idle host.
Unlike SimGrid 3.32, the initial pstate is charged from
t = 0 (SimGrid charges pstate-0 power until a host's first energy update, see the golden
README, "Initial-pstate energy quirk"); per-job energies and ``consumed_joules`` are the
same either way, only the absolute cumulated energy differs.

Determinism: pending events live in a heap of ``(time, priority, key, job_index, version)``
tuples where ``key`` is a start sequence number (completions) or a push counter (calls), so
equal-time events pop in a fixed order and reruns are identical. Submissions are a
pre-sorted stream merged with the heap (they always come first, see
:data:`PRIORITY_SUBMISSION`). Re-timed jobs are invalidated lazily: each job has a version
number and heap entries carrying an older version are skipped.

The engine prints and logs nothing; the output writers in :mod:`hdeeprm.outputs.batsim_csv`
read :meth:`Engine.result`.
"""
from __future__ import annotations

import heapq
import math
import operator
import time as _wallclock
from dataclasses import dataclass, field
from collections.abc import Mapping, Sequence

import numpy as np

from hdeeprm.errors import PlatformError, SimulationError
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.workload.model import DELAY, PARALLEL_HOMOGENEOUS, Job, JobState, Workload

#: Same-instant order of JOB_SUBMITTED events: first in a batch (Batsim 4.2.1 delivers every
#: submission of an instant before its completions, ordered by the string ``workload!id``;
#: batsim-golden/README.md rule 2). Submissions are a sorted stream, not heap entries.
PRIORITY_SUBMISSION = 0
#: Same-instant order of job ends (JOB_COMPLETED, including walltime kills): after the
#: submissions, among themselves in the order the jobs were started (batsim-golden rule 2).
PRIORITY_COMPLETION = 1
#: Same-instant order of REQUESTED_CALL (CALL_ME_LATER, Batsim protocol): after job ends.
PRIORITY_CALL = 2
#: Timing precision in seconds, SimGrid's default ``precision/timing`` (1e-9 s): a
#: ``parallel_homogeneous`` job whose computed end exceeds its walltime deadline by less than
#: this is considered to end exactly at the walltime (and succeeds).
TIME_EPSILON = 1e-9

_NOT_SUBMITTED = JobState.NOT_SUBMITTED
_SUBMITTED = JobState.SUBMITTED
_RUNNING = JobState.RUNNING
_SUCCESS = JobState.COMPLETED_SUCCESSFULLY
_WALLTIME = JobState.COMPLETED_WALLTIME_REACHED
_KILLED = JobState.COMPLETED_KILLED
_REJECTED = JobState.REJECTED
_INF = math.inf
_sum = np.add.reduce
_min = np.minimum.reduce
_SPEED, _IDLE, _COMP = 0, 1, 2  # rows of Engine._table / Engine._cur
#: Up to this many values, Python's sum/min over ``tolist()`` beat numpy's reductions, whose
#: fixed cost (~3 us) dominates on the small host sets of most jobs.
_SMALL = 32


def _total(values: np.ndarray) -> float:
    """Sum of a 1-D float array, fast for small arrays."""
    return sum(values.tolist()) if len(values) <= _SMALL else float(_sum(values))


@dataclass(slots=True)
class Batch:
    """All events of one simulated instant, delivered together (Batsim ideal-network order).

    Attributes:
        time: The instant, in seconds since the start of the simulation.
        submitted: Jobs submitted at this instant (JOB_SUBMITTED), ordered by the string
            ``f"{workload.name}!{job.id}"``.
        completed: Jobs that ended at this instant, in the order they were started: normal
            ends, walltime kills, and jobs killed by :meth:`Engine.kill_job` (JOB_COMPLETED,
            or JOB_KILLED for the latter).
        requested_call: True when a CALL_ME_LATER for this instant fired (REQUESTED_CALL).
        killed: The jobs of ``completed`` that were ended by :meth:`Engine.kill_job`
            (Batsim reports them with JOB_KILLED instead of JOB_COMPLETED).
        nb_requested_calls: How many CALL_ME_LATER fired at this instant (one REQUESTED_CALL
            each in Batsim).
        pstate_changes: ``(hosts, pstate)`` acknowledgements of the SET_RESOURCE_STATE
            requests of the previous batch (RESOURCE_STATE_CHANGED); filled only when the
            engine was built with ``ack_pstates=True``.
    """

    time: float
    submitted: list[Job]
    completed: list[Job]
    requested_call: bool
    killed: list[Job] = field(default_factory=list)
    nb_requested_calls: int = 0
    pstate_changes: list[tuple[tuple[int, ...], int]] = field(default_factory=list)


@dataclass(slots=True)
class SimulationResult:
    """Everything the Batsim-format output writers need, copied out of an :class:`Engine`.

    Attributes:
        workload: The simulated workload (jobs are indexed by ``job.index``).
        host_names: Host names by host id, length nb_hosts.
        energy: Whether energy was simulated (Batsim's ``-E``).
        state: Final (or current) :class:`JobState` of each job, by job index.
        start_time: Start time of each job in seconds, float64 (nb_jobs,), NaN if never started.
        finish_time: End time of each job in seconds (rejection time for rejected jobs),
            float64 (nb_jobs,), NaN if not finished.
        allocation: Host ids of each job, by job index (None if never started).
        consumed_energy: Energy of each job's hosts between its start and finish, in joules,
            float64 (nb_jobs,), NaN without energy or when not finished.
        reasons: Rejection reason by job index (REJECT_JOB).
        completion_order: Job indices in the order they reached a final state (rows of
            ``out_jobs.csv``).
        first_submission_energy: Cumulated platform energy (J) at the first submission.
        last_completion_energy: Cumulated platform energy (J) at the last job end.
        nb_grouped_switches: Number of :meth:`Engine.set_pstate` calls.
        nb_machine_switches: Number of host pstate switches (hosts summed over the calls).
        initial_pstates: Pstate of each host at t = 0, int (nb_hosts,).
        machine_states: ``(time s, nb_idle, nb_computing)`` after every job start, job end and
            pstate switch (empty with ``record=False``).
        pstate_changes: ``(time s, host ids, new pstate)`` rows of ``out_pstate_changes.csv``
            after the initial pstates (empty with ``record=False``).
        energy_log: ``(time s, cumulated energy J, event type 's'|'e'|'p', wattmin W)`` rows
            of ``out_consumed_energy.csv`` (empty with ``record=False`` or without energy).
        scheduling_time: Wall-clock seconds spent outside :meth:`Engine.next_batch` (in the
            decision system) between the first and the last call.
        simulation_time: Wall-clock seconds from the first :meth:`Engine.next_batch` call to
            the end of the simulation (or to :meth:`Engine.result`).
    """

    workload: Workload
    host_names: tuple[str, ...]
    energy: bool
    state: list[JobState]
    start_time: np.ndarray
    finish_time: np.ndarray
    allocation: list[tuple[int, ...] | None]
    consumed_energy: np.ndarray
    reasons: dict[int, str]
    completion_order: list[int]
    first_submission_energy: float
    last_completion_energy: float
    nb_grouped_switches: int
    nb_machine_switches: int
    initial_pstates: np.ndarray
    machine_states: list[tuple[float, int, int]]
    pstate_changes: list[tuple[float, tuple[int, ...], int]]
    energy_log: list[tuple[float, float, str, float]]
    scheduling_time: float
    simulation_time: float


def _command(job: Job | None) -> str:
    """Name of a command in error messages: ``execute job 'id'`` or ``set_pstate``."""
    return "set_pstate" if job is None else f"execute job {job.id!r}"


def _host_tables(hosts: Sequence[HostSpec]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pack host pstate tables into (nb_hosts, max_pstates) arrays padded with NaN.

    Returns:
        ``(speeds FLOP/s, idle W, computing W, nb_pstates)``; the first three float64
        (nb_hosts, max_pstates), the last int (nb_hosts,).

    Raises:
        PlatformError: A host has no pstate, inconsistent table lengths or a bad initial pstate.
    """
    if not hosts:
        raise PlatformError("the platform must have at least one compute host, got 0")
    width = max(len(h.speeds) for h in hosts)
    n = len(hosts)
    speeds = np.full((n, width), np.nan)
    idle = np.full((n, width), np.nan)
    comp = np.full((n, width), np.nan)
    nb_ps = np.empty(n, dtype=np.intp)
    for i, h in enumerate(hosts):
        k = len(h.speeds)
        if k == 0 or len(h.idle_watts) != k or len(h.computing_watts) != k:
            raise PlatformError(
                f"host {h.name!r} must have as many idle/computing wattages as speeds (>= 1), got "
                f"{k} speeds, {len(h.idle_watts)} idle and {len(h.computing_watts)} computing wattages")
        if not 0 <= h.initial_pstate < k:
            raise PlatformError(f"host {h.name!r}: initial pstate must be in [0, {k - 1}], "
                                f"got {h.initial_pstate}")
        speeds[i, :k] = h.speeds
        idle[i, :k] = h.idle_watts
        comp[i, :k] = h.computing_watts
        nb_ps[i] = k
    return speeds, idle, comp, nb_ps


class Engine:
    """Batsim-compatible discrete-event simulation of one workload on a set of hosts.

    Typical loop (what a decision system does)::

        engine = Engine(hosts, workload)
        while (batch := engine.next_batch()) is not None:
            ...  # react: engine.execute_job(job, [0, 1]), engine.set_pstate([2], 1), ...
        result = engine.result()

    Args:
        hosts: Compute hosts; host id ``i`` is ``hosts[i]`` (Batsim ids, i.e. hosts sorted
            byte-wise by name, as :func:`hdeeprm.platform.simgrid_reader.read_simgrid_platform`
            returns them).
        workload: The jobs (profiles ``delay`` / ``parallel_homogeneous`` only), with
            ``jobs[i].index == i``.
        energy: Simulate energy (Batsim ``-E``). Without it per-job energies are NaN and
            :meth:`consumed_energy` returns 0.0.
        record: Keep the machine-state, pstate and energy logs needed by
            ``out_machine_states.csv``, ``out_pstate_changes.csv`` and
            ``out_consumed_energy.csv``. Job results are always kept.
        ack_pstates: Acknowledge every :meth:`set_pstate` in a batch at the same instant
            (:attr:`Batch.pstate_changes`, Batsim's RESOURCE_STATE_CHANGED), as Batsim does;
            off by default because an in-process decision system does not need it.

    Attributes:
        now: Current simulated time in seconds.
        state: :class:`JobState` of each job, by job index.
        start_time: Start time (s) by job index, float64 (nb_jobs,), NaN when not started.
        finish_time: End time (s) by job index, float64 (nb_jobs,), NaN when not finished.
        allocation: Host ids of each job by job index, None when not started.
        pstate: Current pstate of each host, int (nb_hosts,).
        busy: Whether a job runs on each host, bool (nb_hosts,).

    Raises:
        PlatformError: Malformed host tables.
        SimulationError: A job with an unsupported profile type or a bad index.
    """

    def __init__(self, hosts: Sequence[HostSpec], workload: Workload, *, energy: bool = True,
                 record: bool = True, ack_pstates: bool = False) -> None:
        self._hosts = tuple(hosts)
        speeds, idle_w, comp_w, self._n_pstates = _host_tables(self._hosts)
        n = len(self._hosts)
        # _table[k, p, h]: speed (FLOP/s, k = 0), Idle (W, k = 1), AllCores (W, k = 2) of host h
        # in pstate p; _cur[k, h] the same in host h's current pstate. One gather of
        # _cur[:, hosts] gives everything a job start or a pstate switch needs.
        self._table = np.ascontiguousarray(np.stack([speeds, idle_w, comp_w]).transpose(0, 2, 1))
        self._n_hosts = n
        # Number of pstates when every host has the same (the usual case), else 0.
        counts = self._n_pstates
        self._uniform_pstates = int(counts[0]) if (counts == counts[0]).all() else 0
        self._workload = workload
        self._energy = bool(energy)
        self._record = bool(record)
        self._ack = bool(ack_pstates)

        self.now = 0.0
        self.pstate = np.array([h.initial_pstate for h in self._hosts], dtype=np.intp)
        self._initial_pstates = self.pstate.copy()
        self.busy = np.zeros(n, dtype=bool)
        self._n_busy = 0
        self._host_job = np.full(n, -1, dtype=np.intp)
        self._cur = self._table[:, self.pstate, np.arange(n)]
        self._cur_idle = self._cur[_IDLE]  # a view, for fast 1-D gathers
        self._computing = np.zeros(n, dtype=bool)  # a parallel_homogeneous job runs on the host
        # Platform energy E(t) = total_offset + total_power * t (J); total_offset changes by
        # -dP * t whenever the platform power changes by dP at time t.
        self._total_power = float(self._cur[_IDLE].sum())
        self._total_offset = 0.0
        self._wattmin = self._total_power

        jobs = workload.jobs
        nj = len(jobs)
        self._jobs = jobs
        self._is_ph = [False] * nj
        for i, job in enumerate(jobs):
            if job.index != i:
                raise SimulationError(f"job {job.id!r} is at position {i} of the workload but has "
                                      f"index {job.index}; indices must be positions")
            ptype = job.profile.type
            if ptype == PARALLEL_HOMOGENEOUS:
                if job.profile.com != 0:
                    raise SimulationError(f"job {job.id!r}: profile {job.profile.name!r} has com = "
                                          f"{job.profile.com}; only com = 0 is simulated")
                self._is_ph[i] = True
            elif ptype != DELAY:
                raise SimulationError(f"job {job.id!r}: profile {job.profile.name!r} has type "
                                      f"{ptype!r}; the embedded engine supports 'delay' and "
                                      f"'parallel_homogeneous' only")
        self.state: list[JobState] = [_NOT_SUBMITTED] * nj
        self.start_time = np.full(nj, np.nan)
        self.finish_time = np.full(nj, np.nan)
        self.allocation: list[tuple[int, ...] | None] = [None] * nj
        self._alloc_idx: list[np.ndarray | None] = [None] * nj
        self._job_energy = np.full(nj, np.nan)
        # Energy of a running job's hosts: _job_e (J) up to _job_t (s), drawing _job_power (W);
        # _job_idle = their Idle wattage (W), what they fall back to when the job ends.
        self._job_e = [0.0] * nj
        self._job_t = [0.0] * nj
        self._job_power = [0.0] * nj
        self._job_idle = [0.0] * nj
        self._remaining = [0.0] * nj   # FLOP left per host (parallel_homogeneous)
        self._rate = [0.0] * nj        # FLOP/s per host (lockstep rate)
        self._last = [0.0] * nj        # time of the last progress update (s)
        self._version = [0] * nj
        self._start_seq = [0] * nj
        self._by_walltime = [False] * nj
        self._reasons: dict[int, str] = {}
        self._completion_order: list[int] = []

        prefix = f"{workload.name}!"
        order = sorted(range(nj), key=lambda i: (jobs[i].subtime, prefix + jobs[i].id))
        self._sub_order = order
        self._sub_times = [jobs[i].subtime for i in order]
        self._sub_ptr = 0
        self._heap: list[tuple[float, int, int, int, int]] = []
        self._seq = 0
        self._n_started = 0
        self._pending_kills: list[int] = []
        self._pending_acks: list[tuple[tuple[int, ...], int]] = []

        self._first_sub_energy = math.nan
        self._last_end_energy = math.nan
        self._grouped_switches = 0
        self._machine_switches = 0
        self._machine_log: list[tuple[float, int, int]] = []
        self._pstate_log: list[tuple[float, tuple[int, ...], int]] = []
        self._energy_log: list[tuple[float, float, str, float]] = []
        self._wall_start: float | None = None
        self._wall_return = 0.0
        self._wall_sched = 0.0
        self._wall_end: float | None = None

    # ------------------------------------------------------------------ time advance
    def _drop_stale(self) -> None:
        """Pop invalidated completion entries from the top of the heap."""
        heap, version = self._heap, self._version
        while heap:
            top = heap[0]
            if top[1] != PRIORITY_COMPLETION or top[4] == version[top[3]]:
                return
            heapq.heappop(heap)

    def has_pending_events(self) -> bool:
        """Whether :meth:`next_batch` would return a batch (False: SIMULATION_ENDS is next).

        Returns:
            True when a submission, a job end, a call or an acknowledgement is still pending.
        """
        if self._sub_ptr < len(self._sub_order) or self._pending_kills or self._pending_acks:
            return True
        self._drop_stale()
        return bool(self._heap)

    def next_batch(self) -> Batch | None:
        """Advance to the next instant that has events and return them.

        Returns:
            The :class:`Batch` of that instant, or None when no event is left (everything
            submitted, nothing running that can end, no pending call): SIMULATION_ENDS.
        """
        wall = _wallclock.perf_counter()
        if self._wall_start is None:
            self._wall_start = wall
        else:
            self._wall_sched += wall - self._wall_return
        self._drop_stale()
        heap = self._heap
        t = heap[0][0] if heap else _INF
        ptr = self._sub_ptr
        nb_sub = len(self._sub_order)
        if ptr < nb_sub and self._sub_times[ptr] < t:
            t = self._sub_times[ptr]
        if self._pending_kills or self._pending_acks:
            t = self.now
        if t == _INF:
            if self._wall_end is None:
                self._wall_end = _wallclock.perf_counter()
            self._wall_return = _wallclock.perf_counter()
            return None
        self.now = t

        jobs = self._jobs
        submitted: list[Job] = []
        if ptr < nb_sub and self._sub_times[ptr] == t:
            order, times, state = self._sub_order, self._sub_times, self.state
            while ptr < nb_sub and times[ptr] == t:
                i = order[ptr]
                state[i] = _SUBMITTED
                submitted.append(jobs[i])
                ptr += 1
            self._sub_ptr = ptr
            if self._first_sub_energy != self._first_sub_energy:  # NaN: first submission
                self._first_sub_energy = self.consumed_energy()

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
        killed: list[Job] = []
        if self._pending_kills:
            killed = [jobs[j] for j in self._pending_kills]
            self._pending_kills = []
            start_seq = self._start_seq
            completed = sorted(completed + killed, key=lambda job: start_seq[job.index])
        acks: list[tuple[tuple[int, ...], int]] = []
        if self._pending_acks:
            acks, self._pending_acks = self._pending_acks, []
        self._wall_return = _wallclock.perf_counter()
        return Batch(t, submitted, completed, calls > 0, killed, calls, acks)

    # ------------------------------------------------------------------ energy helpers
    def _summarise(self, idx: np.ndarray) -> tuple[float, float, float]:
        """Lockstep speed (min FLOP/s), total Idle and total AllCores wattage (W) of hosts ``idx``."""
        block = self._cur[:, idx]
        if len(idx) <= _SMALL:  # Python's min/sum over lists beat numpy's fixed reduction cost
            speed, idle, comp = block.tolist()
            return min(speed), sum(idle), sum(comp)
        return float(_min(block[_SPEED])), float(_sum(block[_IDLE])), float(_sum(block[_COMP]))

    def _add_power(self, delta: float) -> None:
        """The platform power changes by ``delta`` W at :attr:`now` (energy stays continuous)."""
        self._total_offset -= delta * self.now
        self._total_power += delta

    def _job_energy_now(self, i: int) -> float:
        """Energy (J) of running job ``i``'s hosts since its start, brought up to :attr:`now`."""
        now = self.now
        e = self._job_e[i] + self._job_power[i] * (now - self._job_t[i])
        self._job_e[i] = e
        self._job_t[i] = now
        return e

    def consumed_energy(self) -> float:
        """Energy consumed by all compute hosts since t = 0, up to :attr:`now`.

        Returns:
            Joules (0.0 when the engine was built with ``energy=False``).
        """
        if not self._energy:
            return 0.0
        return self._total_offset + self._total_power * self.now

    def _log_energy(self, kind: str) -> None:
        self._energy_log.append((self.now, self.consumed_energy(), kind, self._wattmin))

    # ------------------------------------------------------------------ job life cycle
    def _check_hosts(self, hosts: Sequence[int], job: Job | None) -> tuple[tuple[int, ...], np.ndarray]:
        """Validate host ids for ``job`` (None: set_pstate).

        Returns:
            The ids as a tuple of ints and as an intp index array (a copy).
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
                raise SimulationError(f"{_command(job)}: host ids must be integers, "
                                      f"got {hosts!r}") from None
            idx = np.array(alloc, dtype=np.intp)
        if not alloc:
            raise SimulationError(f"{_command(job)}: the host list is empty")
        n = self._n_hosts
        if min(alloc) < 0 or max(alloc) >= n:
            bad = [h for h in alloc if not 0 <= h < n]
            raise SimulationError(f"{_command(job)}: host ids must be in [0, {n - 1}], got {bad}")
        if len(set(alloc)) != len(alloc):
            raise SimulationError(f"{_command(job)}: host ids must be distinct, got {list(alloc)}")
        return alloc, idx

    def _require_state(self, job: Job, wanted: JobState, action: str) -> int:
        i = job.index
        if not 0 <= i < len(self.state) or self._jobs[i] is not job:
            raise SimulationError(f"cannot {action} job {job.id!r}: it is not a job of this workload")
        current = self.state[i]
        if current is not wanted:
            detail = {_NOT_SUBMITTED: "it is not submitted yet", _SUBMITTED: "it is not running",
                      _RUNNING: "it is already running"}.get(current, f"it is already {current.value}")
            raise SimulationError(f"cannot {action} job {job.id!r} at t = {self.now:g} s: {detail}")
        return i

    def execute_job(self, job: Job, hosts: Sequence[int]) -> None:
        """Start a submitted job now on the given hosts (Batsim EXECUTE_JOB).

        Args:
            job: A job in state SUBMITTED.
            hosts: Exactly ``job.res`` distinct, free host ids in ``[0, nb_hosts)``.

        Raises:
            SimulationError: The job is not waiting, or a host is out of range, repeated, busy,
                or the number of hosts differs from ``job.res``.
        """
        i = self._require_state(job, _SUBMITTED, "execute")
        alloc, idx = self._check_hosts(hosts, job)
        if len(alloc) != job.res:
            raise SimulationError(f"execute job {job.id!r}: it requests {job.res} hosts, got "
                                  f"{len(alloc)} ({list(alloc)})")
        busy = self.busy
        if np.count_nonzero(busy[idx]):
            taken = [h for h in alloc if busy[h]]
            raise SimulationError(f"execute job {job.id!r} at t = {self.now:g} s: hosts {taken} "
                                  f"are busy")
        now = self.now
        busy[idx] = True
        self._host_job[idx] = i
        self._n_busy += len(alloc)
        self.state[i] = _RUNNING
        self.start_time[i] = now
        self.allocation[i] = alloc
        self._alloc_idx[i] = idx
        self._start_seq[i] = self._n_started
        self._n_started += 1
        ph = self._is_ph[i]
        if ph:
            speed, idle, comp = self._summarise(idx)
        elif self._energy:
            idle = _total(self._cur_idle[idx])
        if self._energy:
            self._job_idle[i] = idle
            self._job_e[i] = 0.0
            self._job_t[i] = now
            if ph:
                self._computing[idx] = True
                self._add_power(comp - idle)
                self._job_power[i] = comp
            else:
                self._job_power[i] = idle
        if ph:
            self._remaining[i] = job.profile.cpu
            self._rate[i] = speed
            self._last[i] = now
            self._schedule_end(i)
        else:
            delay, walltime = job.profile.delay, job.walltime
            killed = 0 <= walltime <= delay  # Batsim: a delay job succeeds only if delay < walltime
            self._by_walltime[i] = killed
            end = now + (walltime if killed else delay)
            heapq.heappush(self._heap, (end, PRIORITY_COMPLETION, self._start_seq[i], i, 0))
        if self._record:
            self._machine_log.append((now, self._n_hosts - self._n_busy, self._n_busy))
            if self._energy:
                self._log_energy("s")

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
        self.state[i] = final
        self.finish_time[i] = self.now
        self._version[i] += 1
        self.busy[idx] = False
        self._host_job[idx] = -1
        self._n_busy -= len(idx)
        if self._is_ph[i]:
            self._advance(i)
        if self._energy:
            self._job_energy[i] = self._job_energy_now(i)
            if self._is_ph[i]:
                self._computing[idx] = False
                self._add_power(self._job_idle[i] - self._job_power[i])
            self._last_end_energy = self.consumed_energy()
        self._completion_order.append(i)
        if self._record:
            self._machine_log.append((self.now, self._n_hosts - self._n_busy, self._n_busy))
            if self._energy:
                self._log_energy("e")

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
        i = self._require_state(job, _SUBMITTED, "reject")
        self.state[i] = _REJECTED
        self.finish_time[i] = self.now
        self._reasons[i] = str(reason)
        self._completion_order.append(i)

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
        i = self._require_state(job, _RUNNING, "kill")
        self._end_job(i, _KILLED)
        self._pending_kills.append(i)

    def set_pstate(self, hosts: Sequence[int], pstate: int) -> None:
        """Switch hosts to a computation pstate now (Batsim SET_RESOURCE_STATE, immediate).

        Running ``parallel_homogeneous`` jobs on these hosts are re-timed from now at their new
        lockstep rate; host power changes from now.

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
                platform itself (HDeepRM's workload manager) may pass False, to save the checks.

        Raises:
            SimulationError: A host id or a pstate is out of range.
        """
        groups = []
        for pstate, hosts in changes.items():
            if not validate:
                alloc = tuple(hosts)
                groups.append((alloc, np.array(alloc, dtype=np.intp), pstate))
                continue
            alloc, idx = self._check_hosts(hosts, None)
            p = int(pstate)
            limit = self._uniform_pstates or int(_min(self._n_pstates[idx]))
            if not 0 <= p < limit:
                raise SimulationError(f"set_pstate: pstate must be in [0, {limit - 1}] for hosts "
                                      f"{list(alloc)}, got {pstate}")
            groups.append((alloc, idx, p))
        if not groups:
            return
        all_idx = groups[0][1] if len(groups) == 1 else np.concatenate([g[1] for g in groups])
        jobs_here = set(self._host_job[all_idx].tolist())
        jobs_here.discard(-1)
        jobs_here = sorted(jobs_here)
        energy, is_ph, record = self._energy, self._is_ph, self._record
        for j in jobs_here:  # progress and energy up to now, at the old pstates
            if is_ph[j]:
                self._advance(j)
            if energy:
                self._job_energy_now(j)
        d_idle = 0.0
        now = self.now
        for alloc, idx, p in groups:
            if record and energy:
                self._log_energy("p")
            new = self._table[:, p, idx]
            if energy:
                # Platform power change = sum of the Idle changes of these hosts, corrected below
                # for the hosts that compute (they switch between AllCores wattages instead).
                d = _total(new[_IDLE]) - _total(self._cur_idle[idx])
                d_idle += d
                self._wattmin += d
            self._cur[:, idx] = new
            self.pstate[idx] = p
            self._grouped_switches += 1
            self._machine_switches += len(alloc)
            if self._ack:
                self._pending_acks.append((alloc, p))
            if record:
                self._pstate_log.append((now, alloc, -1))
                self._pstate_log.append((now, alloc, p))
                self._machine_log.append((now, self._n_hosts - self._n_busy, self._n_busy))
                if energy:
                    self._log_energy("p")
        d_power = 0.0
        for j in jobs_here:
            speed, idle, comp = self._summarise(self._alloc_idx[j])
            if is_ph[j]:
                if energy:
                    d_power += (comp - self._job_power[j]) - (idle - self._job_idle[j])
                    self._job_power[j], self._job_idle[j] = comp, idle
                self._rate[j] = speed
                self._schedule_end(j)
            elif energy:
                self._job_power[j] = self._job_idle[j] = idle
        if energy:
            self._add_power(d_idle + d_power)

    def call_me_later(self, when: float) -> None:
        """Ask for a REQUESTED_CALL at time ``when`` (Batsim CALL_ME_LATER).

        Args:
            when: Simulated time in seconds, >= :attr:`now` (equal: a batch at the same instant).

        Raises:
            SimulationError: ``when`` is in the past or not finite.
        """
        when = float(when)
        if not (when >= self.now and when != _INF):
            raise SimulationError(f"call_me_later: time must be finite and >= now "
                                  f"({self.now:g} s), got {when}")
        self._seq += 1
        heapq.heappush(self._heap, (when, PRIORITY_CALL, self._seq, -1, 0))

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
        start = self.start_time[i]
        if start != start:  # never started
            return 0.0
        if self._is_ph[i]:
            cpu = job.profile.cpu
            if cpu <= 0:
                return 1.0
            left = self._remaining[i]
            if state is _RUNNING:
                left -= self._rate[i] * (self.now - self._last[i])
            done = 1.0 - left / cpu
        else:
            delay = job.profile.delay
            if delay <= 0:
                return 1.0
            end = self.now if state is _RUNNING else self.finish_time[i]
            done = float(end - start) / delay
        return min(1.0, max(0.0, done))

    @property
    def nb_hosts(self) -> int:
        """Number of compute hosts."""
        return self._n_hosts

    @property
    def nb_busy(self) -> int:
        """Number of hosts a job runs on."""
        return self._n_busy

    def power(self) -> np.ndarray:
        """Current power of each host in watts, float64 (nb_hosts,) (a copy; zeros without energy)."""
        if not self._energy:
            return np.zeros(self._n_hosts)
        return np.where(self._computing, self._cur[_COMP], self._cur[_IDLE])

    def result(self) -> SimulationResult:
        """Snapshot of the simulation for the output writers (callable at any time).

        Returns:
            A :class:`SimulationResult` holding copies of the engine's job arrays and logs.
        """
        end = self._wall_end if self._wall_end is not None else _wallclock.perf_counter()
        sim_time = 0.0 if self._wall_start is None else end - self._wall_start
        return SimulationResult(
            workload=self._workload,
            host_names=tuple(h.name for h in self._hosts),
            energy=self._energy,
            state=list(self.state),
            start_time=self.start_time.copy(),
            finish_time=self.finish_time.copy(),
            allocation=list(self.allocation),
            consumed_energy=self._job_energy.copy(),
            reasons=dict(self._reasons),
            completion_order=list(self._completion_order),
            first_submission_energy=self._first_sub_energy,
            last_completion_energy=self._last_end_energy,
            nb_grouped_switches=self._grouped_switches,
            nb_machine_switches=self._machine_switches,
            initial_pstates=self._initial_pstates.copy(),
            machine_states=list(self._machine_log),
            pstate_changes=list(self._pstate_log),
            energy_log=list(self._energy_log),
            scheduling_time=self._wall_sched,
            simulation_time=sim_time,
        )
