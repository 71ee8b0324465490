"""The event kernel: the clock, the submission stream, the heap of timed events and the jobs' life cycle.

Its jobs' life cycle is Batsim's: batches of same-instant events, rejections and kills.

One kernel times every run, whatever its resources: :class:`~hdeeprm.simulation.engine.Engine` subclasses
:class:`EventKernel` with the CPU model (:class:`~hdeeprm.simulation.cpu_model.CpuModel`: hosts, pstates,
Batsim 4.2.1's energy) and takes any further resource model behind one interface
(:class:`~hdeeprm.simulation.resource_model.ResourceModel`: the GPU model, a user's own), none of them known by
name here, as SimGrid's kernel is shared by its CPU, network and disk models and SimPy's ``Environment`` by its
processes. What is here is the part they share:

- **the clock** :attr:`EventKernel.now`, seconds since the start of the simulation, which only moves forward, to
  the next instant that has an event;
- **the submission stream**: jobs sorted once by ``(subtime, "workload!id")``, Batsim's order of same-instant
  JOB_SUBMITTED (docs/engine.rst, "Same-instant event order"), merged with the heap and always first;
- **the heap** of ``(time, priority, key, job, version)`` tuples: job ends keyed by start sequence number (so
  same-instant ends come in start order) and calls keyed by a push counter (:data:`PRIORITY_COMPLETION`,
  :data:`PRIORITY_CALL`). A re-timed job's older entries are invalidated lazily by its version number.

Equal-time events thus pop in a fixed order and reruns are identical.

**The clock models** (:data:`CLOCKS`, docs/engine.rst, "Protocol clock"): ``"exact"`` (the default) hands a
batch at its exact instant ``T`` and applies the decisions that answer it at ``T``. ``"batsim"`` follows real
Batsim 4.2.1, whose protocol carries times as ``%6f`` text (src/protocol.hpp, ``Writer::Double``): the batch is
dated :func:`protocol_time` ``(T)``, the time the decision process reads, and its decisions take effect at
:func:`decision_time` ``(T) = max(T, protocol_time(T))`` (``send_message_at_time``, src/protocol.cpp), so a
decision can be up to 0.5 us late. :meth:`EventKernel.hold_until` is the one place the clock moves to such a later
date: the events due up to it happen at their own times and are held for the next batch, delivered at that date,
as Batsim's server sends what it gathered once the decision process is ready again (src/server.cpp).
"""
from __future__ import annotations

import heapq
import logging
import math
import time as _wallclock
from collections.abc import Sequence

import numpy as np

from hdeeprm.errors import SimulationError
from hdeeprm.simulation.results import Batch
from hdeeprm.workload.model import Job, JobState, Workload

__all__ = ["EventKernel", "EnergyWindow", "consumed_joules", "PRIORITY_SUBMISSION", "PRIORITY_COMPLETION",
           "PRIORITY_CALL", "CLOCKS",
           "DEFAULT_CLOCK", "protocol_time", "decision_time", "warn_split_risks", "job_in_state"]

#: The clock models (module docstring): ``"exact"`` decides at the exact instant of a batch; ``"batsim"`` at
#: the instant Batsim 4.2.1's 6-decimal protocol gives.
CLOCKS = ("exact", "batsim")
#: The default clock model: exact, so that runs without the option keep their outputs to the last bit.
DEFAULT_CLOCK = "exact"


def protocol_time(t: float) -> float:
    """A time as Batsim's protocol carries it: printed ``%6f`` (src/protocol.hpp, ``Writer::Double``), read back.

    Args:
        t: Seconds.

    Returns:
        ``t`` rounded to the microsecond, as the decision process parses it (``float("%f" % t)``).
    """
    return float(f"{t:f}")


def decision_time(t: float) -> float:
    """When Batsim applies a decision stamped with the protocol time of a message sent at ``t``.

    ``JsonProtocolReader::send_message_at_time`` (src/protocol.cpp) sleeps until the event's timestamp when it
    is later than the clock, else applies it at once: ``max(t, protocol_time(t))``.

    Args:
        t: The exact instant of the message, seconds.

    Returns:
        Seconds, ``>= t``.
    """
    stamp = protocol_time(t)
    return stamp if stamp > t else t

def consumed_joules(first_submission_energy: float, last_completion_energy: float) -> float:
    """Energy of a run: cumulated energy at the last job end minus at the first submission.

    Batsim 4.2.1's ``consumed_joules`` of ``out_schedule.csv`` (src/export.cpp), for the hosts' energy
    and, with the same window, for the GPUs'.

    Args:
        first_submission_energy: Joules consumed since t = 0 when the first job was submitted.
        last_completion_energy: Joules consumed since t = 0 when the last job ended (NaN when
            no job ran).

    Returns:
        Joules; 0.0 when no job ran.
    """
    value = last_completion_energy - first_submission_energy
    return float(value) if value == value else 0.0


class EnergyWindow:
    """The window every energy meter of a run is read over: from the first submission to the last job end.

    A resource model that meters energy (the CPU model's ``EnergyAccount``, the GPU model) keeps one and
    the kernel's life cycle feeds it: :meth:`open` with the meter's cumulated joules when the first jobs are
    submitted, :meth:`close` with them at every job end.

    Attributes:
        first: Cumulated joules at the first submission (NaN before it).
        last: Cumulated joules at the last job end so far (NaN before the first end).
    """

    __slots__ = ("first", "last")

    def __init__(self) -> None:
        self.first = math.nan
        self.last = math.nan

    def open(self, joules: float) -> None:
        """The first jobs are submitted: the meter had consumed ``joules`` then."""
        self.first = joules

    def close(self, joules: float) -> None:
        """A job ends: the meter has consumed ``joules`` so far."""
        self.last = joules

    @property
    def joules(self) -> float:
        """Joules consumed in the window (:func:`consumed_joules`; 0.0 before any job ended)."""
        return consumed_joules(self.first, self.last)


#: Same-instant order of JOB_SUBMITTED events: first in a batch, ordered by the string
#: ``workload!id`` (docs/engine.rst, "Same-instant event order"). Submissions are a sorted
#: stream, not heap entries.
PRIORITY_SUBMISSION = 0
#: Same-instant order of job ends (JOB_COMPLETED, including walltime kills): after the
#: submissions, among themselves in the order the jobs were started (docs/engine.rst,
#: "Same-instant event order").
PRIORITY_COMPLETION = 1
#: Same-instant order of REQUESTED_CALL (CALL_ME_LATER, Batsim protocol): after job ends.
PRIORITY_CALL = 2

_INF = math.inf
_SUBMITTED = JobState.SUBMITTED
_RUNNING = JobState.RUNNING
_SUCCESS = JobState.COMPLETED_SUCCESSFULLY
_WALLTIME = JobState.COMPLETED_WALLTIME_REACHED
_KILLED = JobState.COMPLETED_KILLED
_REJECTED = JobState.REJECTED
log = logging.getLogger(__name__)


def warn_split_risks(instants: Sequence[float], *, facing_batsim: bool = True) -> None:
    """Say, in one line on the ``hdeeprm`` logger, which same-time submissions real Batsim may deliver in two messages.

    A warning for a run that faces Batsim (``hdeeprm-batsim``, or ``"clock": "batsim"``, the run that reproduces
    Batsim's); for an embedded run on the exact clock, which nothing compares with Batsim, an info line
    (shown with ``-v``).

    Args:
        instants: :attr:`EventKernel.split_risks` of a finished run (seconds); nothing is said when empty.
        facing_batsim: Whether the run faces Batsim (a warning) or not (an info line).
    """
    if instants:
        shown = ", ".join(f"{t:f}" for t in instants[:5]) + (", ..." if len(instants) > 5 else "")
        log.log(logging.WARNING if facing_batsim else logging.INFO,
                "%d instant(s) with 2+ jobs submitted together that real Batsim may deliver in two messages "
                "(its clock can land 1 ulp below the submission time; docs/engine.rst, \"Split submissions\"): "
                "t = %s s", len(instants), shown)


_STATE_DETAIL = {JobState.NOT_SUBMITTED: "it is not submitted yet",
                 JobState.SUBMITTED: "it is not running",
                 JobState.RUNNING: "it is already running"}


def job_in_state(jobs: Sequence[Job], state: Sequence[JobState], job: Job, wanted: JobState,
                 action: str, now: float) -> int:
    """Index of ``job``, checked to be a job of ``jobs`` in state ``wanted``.

    Args:
        jobs: The workload's jobs, by index.
        state: Their current states, by index.
        job: The job a decision is about.
        wanted: The state the decision needs.
        action: The decision, for the message (``"execute"``, ``"reject"``, ``"kill"``).
        now: Current simulated time in seconds, for the message.

    Raises:
        SimulationError: ``job`` is not one of ``jobs``, or is in another state.
    """
    i = job.index
    if not 0 <= i < len(state) or jobs[i] is not job:
        raise SimulationError(f"cannot {action} job {job.id!r}: it is not a job of this workload")
    current = state[i]
    if current is not wanted:
        detail = _STATE_DETAIL.get(current, f"it is already {current.value}")
        raise SimulationError(f"cannot {action} job {job.id!r} at t = {now:g} s: {detail}")
    return i



class EventKernel:
    """The clock, the submission stream and the heap of one run (see the module docstring).

    Args:
        workload: The jobs, with ``jobs[i].index == i``.
        clock: A name of :data:`CLOCKS` (module docstring).

    Attributes:
        now: Current simulated time in seconds.
        clock: The clock model.

    Raises:
        SimulationError: An unknown clock name.
    """

    #: The resource models that meter energy, set by the subclass: the CPU model's ``EnergyAccount`` and the
    #: plugged models (:class:`~hdeeprm.simulation.resource_model.ResourceModel`). Each keeps an
    #: :class:`EnergyWindow` the kernel opens; the kernel knows none of them by name.
    _meters: Sequence = ()
    #: The recorder of the output rows (:class:`~hdeeprm.simulation.recording.Recorder`), set by the subclass;
    #: None: nothing is recorded.
    _recorder = None

    def _open_energy_windows(self, t: float) -> None:
        """The first jobs are submitted at ``t``: every energy meter's window opens (:class:`EnergyWindow`)."""
        for meter in self._meters:
            meter.first_submission(t)

    def __init__(self, workload: Workload, clock: str = DEFAULT_CLOCK) -> None:
        if clock not in CLOCKS:
            raise SimulationError(f"clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
        self.clock = clock
        self._batsim_clock = clock == "batsim"
        #: Events that happened after the last batch, before the date the clock was held to: lists of
        #: (submitted job indices, ended job indices, number of calls), delivered by the next batch.
        self._held: tuple[list, list, int] | None = None
        #: Instants (s) whose 2+ submissions real Batsim may deliver in two messages (docs/engine.rst, "Split
        #: submissions"): :meth:`_submissions` records them.
        self.split_risks: list[float] = []
        self._last_sub = -_INF     # the last submission instant
        self._stepped = False      # whether SimGrid's clock made a step strictly after it
        self.now = 0.0
        jobs = workload.jobs
        prefix = f"{workload.name}!"
        order = sorted(range(len(jobs)), key=lambda i: (jobs[i].subtime, prefix + jobs[i].id))
        self._sub_order = order
        self._sub_times = [jobs[i].subtime for i in order]
        self._sub_ptr = 0
        self._heap: list[tuple[float, int, int, int, int]] = []
        self._seq = 0
        self._version = [0] * len(jobs)
        self._jobs = jobs
        nj = len(jobs)
        #: The jobs' life cycle, by job index: state, start and end times (s, NaN until then), hosts, whether
        #: the scheduled end is a walltime kill, rejection reasons, the order they reached a final state.
        self.state: list[JobState] = [JobState.NOT_SUBMITTED] * nj
        self.start_time = np.full(nj, np.nan)
        self.finish_time = np.full(nj, np.nan)
        self.allocation: list = [None] * nj
        self._by_walltime = [False] * nj
        self._reasons: dict[int, str] = {}
        self._completion_order: list[int] = []
        self._n_started = 0
        #: Jobs killed since the last batch (reported, in start order, by the next one) and pstate switches
        #: to acknowledge (Batsim's RESOURCE_STATE_CHANGED), filled by the subclass's decisions.
        self._pending_kills: list[int] = []
        self._pending_acks: list[tuple[tuple[int, ...], int]] = []
        self._start_seq = [0] * len(jobs)
        # wall-clock seconds: first batch asked, last batch returned, decision time, end (SimulationResult)
        self._wall_start: float | None = None
        self._wall_return = 0.0
        self._wall_sched = 0.0
        self._wall_end: float | None = None

    def _drop_stale(self) -> None:
        """Pop invalidated completion entries from the top of the heap."""
        heap, version = self._heap, self._version
        while heap:
            top = heap[0]
            if top[1] != PRIORITY_COMPLETION or top[4] == version[top[3]]:
                return
            heapq.heappop(heap)

    def next_event_time(self) -> float:
        """Time of the next submission, job end or call in seconds (inf when none is left)."""
        self._drop_stale()
        t = self._heap[0][0] if self._heap else _INF
        ptr = self._sub_ptr
        if ptr < len(self._sub_order) and self._sub_times[ptr] < t:
            t = self._sub_times[ptr]
        return t

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

    def _step(self, t: float) -> None:
        """Note that something happened at ``t`` besides submissions (a job end, a call, a held decision).

        Only a step at a time that is not a whole second counts: sums and differences of integers below 2**53
        are exact, so whole-second steps cannot make SimGrid's clock miss a whole-second subtime.
        """
        if t > self._last_sub and not float(t).is_integer():
            self._stepped = True

    def _submissions(self, t: float, n: int) -> None:
        """Note ``n`` submissions at instant ``t``; record ``t`` in :attr:`split_risks` when Batsim may split them.

        Batsim's job submitter (src/job_submitter.cpp, ``job_submitter``) sleeps ``subtime - clock`` and reads
        the clock back; a job whose ``submission_time`` is greater than that clock opens a new message. When
        SimGrid's clock reached ``subtime`` in one step, the clock is ``subtime`` exactly and the jobs of one
        subtime go together. When other events happened during the sleep, SimGrid reaches it by a sum of steps
        whose float rounding can land one ulp *below* ``subtime``: then the second job of the instant goes in a
        second message. That rounding is SimGrid's and cannot be derived here, so such instants with 2+ jobs
        are recorded (the engine delivers them in one batch), and so are those whose previous submission
        instant is below ``t / 2`` (then ``t - previous`` itself may round, Sterbenz's lemma no longer holding),
        unless every time involved is a whole second (integer sums are exact).
        """
        last = self._last_sub
        if n >= 2 and (self._stepped or (0.0 < last < t / 2 and not (float(t).is_integer()
                                                                         and float(last).is_integer()))):
            self.split_risks.append(t)
        self._last_sub, self._stepped = t, False

    def batch_time(self, t: float) -> float:
        """The date a batch of instant ``t`` carries: ``t``, or :func:`protocol_time` ``(t)`` on Batsim's clock."""
        return protocol_time(t) if self._batsim_clock else t

    def after_batch(self, t: float) -> None:
        """Move the clock to where the decisions answering the batch of instant ``t`` take effect.

        Exact clock: nothing (they take effect at ``t``). Batsim's clock: :meth:`hold_until`
        :func:`decision_time` ``(t)``.

        Args:
            t: The exact instant of the batch just handed out, seconds.
        """
        if self._batsim_clock:
            self.hold_until(decision_time(t))

    def hold_until(self, when: float) -> None:
        """Move the clock forward to ``when``; the events due up to it happen now and wait for the next batch.

        Batsim applies a decision event at ``max(clock, its timestamp)`` and sends its next message only once
        the clock reached the reply's ``now`` (``send_message_at_time``, src/protocol.cpp; src/server.cpp):
        whatever happens meanwhile (job ends, submissions, calls) is gathered and delivered, each event at its own
        time, in the next message, dated ``when``. A ``when`` not after :attr:`now` does nothing.

        Args:
            when: Seconds.
        """
        if not when > self.now:
            return
        self._step(when)
        while True:
            t = self.next_event_time()
            if t > when:
                break
            self.now = t
            submitted, completed, calls = self._instant(t)
            held = self._held
            self._held = (submitted, completed, calls) if held is None else \
                (held[0] + submitted, held[1] + completed, held[2] + calls)
        self.now = when

    def _pop_submissions(self, t: float) -> list[int]:
        """Take the jobs submitted at instant ``t`` off the stream (Batsim order) and note them (:meth:`_submissions`).

        Returns:
            Their job indices.
        """
        ptr, times, order = self._sub_ptr, self._sub_times, self._sub_order
        nb = len(order)
        due = []
        while ptr < nb and times[ptr] == t:
            due.append(order[ptr])
            ptr += 1
        self._sub_ptr = ptr
        if due:
            self._submissions(t, len(due))
        return due

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
            The :class:`Batch` of that instant (events in the order of docs/engine.rst, "Same-instant event
            order"), or None when no event is left (everything submitted, nothing running that can end, no
            pending call): SIMULATION_ENDS.
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
        for advance in self._movers:
            advance(t)
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

    def reject_job(self, job: Job, reason: str) -> None:
        """Reject a submitted job (Batsim REJECT_JOB): final state REJECTED.

        Args:
            job: A job in state SUBMITTED.
            reason: Why, written in the ``metadata`` column of ``out_jobs.csv``.

        Raises:
            SimulationError: The job is not waiting (not submitted, running or finished).
        """
        i = job_in_state(self._jobs, self.state, job, _SUBMITTED, "reject", self.now)
        self.state[i] = _REJECTED
        self.finish_time[i] = self.now
        self._reasons[i] = str(reason)
        self._completion_order.append(i)
        if self._recorder is not None:
            self._recorder.job_finished(job, _REJECTED, math.nan, self.now, None, math.nan, self._reasons[i])

    def kill_job(self, job: Job) -> None:
        """Kill a running job now (Batsim KILL_JOB): final state COMPLETED_KILLED.

        Its hosts are free at once; the job is reported in the ``completed`` (and ``killed``) list of the next
        batch, at the same instant. Killing a job that already reached a final state does nothing (it may have
        ended in the batch the decision answers).

        Raises:
            SimulationError: The job has not started yet.
        """
        if job.index < len(self.state) and self.state[job.index].is_final:
            return
        i = job_in_state(self._jobs, self.state, job, _RUNNING, "kill", self.now)
        self._end_job(i, _KILLED)
        self._pending_kills.append(i)

    def _end_job(self, i: int, final: JobState) -> None:
        """Finish running job ``i`` at :attr:`now` with state ``final`` (the subclass frees its resources)."""
        raise NotImplementedError
