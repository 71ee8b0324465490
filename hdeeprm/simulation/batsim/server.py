"""The embedded engine as a Batsim-protocol server for PyBatsim schedulers.

:class:`BatsimSession` plays Batsim's side of the protocol over an
:class:`~hdeeprm.simulation.engine.Engine` without any socket: it turns
engine batches into Batsim messages (:mod:`hdeeprm.simulation.batsim.protocol`;
:func:`profile_to_json`, :func:`resources_from_hosts` and :func:`job_submitted`
build the events of HDeepRM objects) and applies the decision process's
replies to the engine. :func:`serve` moves those messages over ZeroMQ the way
Batsim does: Batsim owns a **REQ** socket and *connects* to the endpoint, the
decision process (PyBatsim's ``Batsim`` class) owns a **REP** socket bound
there; Batsim sends, the scheduler replies, strictly alternating
(https://batsim.readthedocs.io/en/latest/protocol.html).

Message order follows Batsim 4.2.1 on an ideal network, one message per
simulated instant (``docs/engine.rst``, "Same-instant event order"):

1. SIMULATION_BEGINS alone at t = 0.
2. One message per instant: every JOB_SUBMITTED (ordered by ``w0!<id>``,
   the engine's order), then every JOB_COMPLETED (start order), then
   REQUESTED_CALL if one was asked for that instant.
3. Every decision event takes effect at ``max(clock, its timestamp)``, in the
   reply's order, and nothing is sent before the clock reached the reply's
   ``now`` (Batsim's ``send_message_at_time``, src/protocol.cpp): a scheduler
   that stamps its decisions later (PyBatsim's ``consume_time``) has its jobs
   started then, and the events that happen meanwhile come in the next
   message, dated that ``now`` (``docs/engine.rst``, "Protocol clock").
   Acknowledgements (RESOURCE_STATE_CHANGED, JOB_KILLED, ANSWER) come in the
   next message at the same time.
4. NOTIFY ``no_more_static_job_to_submit`` in its own message right after the
   message holding the last submission; SIMULATION_ENDS alone after the
   last completion.

``tests/simulation/test_server.py`` replays recorded Batsim 4.2.1 exchanges
against this order. Output files are Batsim's (``docs/engine.rst``, "Output files").
"""
from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from procset import ProcSet

from hdeeprm.errors import HDeepRMError, OptionsError, ProtocolError, SimulationError
from hdeeprm.simulation.batsim import protocol as P
from hdeeprm.simulation.kernel import CLOCKS, DEFAULT_CLOCK, protocol_time
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.workload.model import DELAY, PARALLEL_HOMOGENEOUS, Job, JobState, Profile, Workload

#: Default endpoint, Batsim's own default port on the loopback interface
#: (never a wildcard address: the server connects, the scheduler binds).
DEFAULT_ENDPOINT = "tcp://127.0.0.1:28000"


# --------------------------------------------------------------------------- HDeepRM objects → events
def profile_to_json(profile: Profile) -> dict[str, Any]:
    """Batsim profile object of an HDeepRM :class:`~hdeeprm.workload.model.Profile`.

    Args:
        profile: A ``delay`` or ``parallel_homogeneous`` profile.

    Returns:
        ``{"type": "delay", "delay": s}`` or
        ``{"type": "parallel_homogeneous", "cpu": FLOP, "com": bytes}``
        (https://batsim.readthedocs.io/en/latest/input-workload.html).

    Raises:
        ProtocolError: For another profile type.
    """
    if profile.type == DELAY:
        return {"type": DELAY, "delay": profile.delay}
    if profile.type == PARALLEL_HOMOGENEOUS:
        return {"type": PARALLEL_HOMOGENEOUS, "cpu": profile.cpu, "com": profile.com}
    raise ProtocolError(f"profile type must be 'delay' or 'parallel_homogeneous', got "
                        f"{profile.type!r} (profile {profile.name!r})")


def resources_from_hosts(hosts: Sequence[HostSpec]) -> list[P.Resource]:
    """SIMULATION_BEGINS resources of hosts already in Batsim id order.

    Args:
        hosts: Compute hosts, index = Batsim id (sorted by name, see
            :func:`hdeeprm.platform.simgrid_reader.read_simgrid_platform`).

    Returns:
        One :class:`~hdeeprm.simulation.batsim.protocol.Resource` per host, state
        ``idle``, with the host's properties and Batsim's ``role`` property
        (``""`` for compute hosts).
    """
    return [P.Resource(i, h.name, "idle", {"role": "", **h.properties}) for i, h in enumerate(hosts)]


def job_submitted(job: Job, workload_name: str = "w0") -> P.JobSubmitted:
    """JOB_SUBMITTED event of a workload job.

    Args:
        job: The job (submission time and walltime in seconds; walltime < 0 = none).
        workload_name: Prefix of Batsim's job ids (``"w0"`` gives ``"w0!<job id>"``).

    Returns:
        The event, stamped with the message's ``now`` when encoded.
    """
    return P.JobSubmitted(f"{workload_name}!{job.id}", job.profile.name, job.res, job.subtime,
                          job.walltime)


class BatsimSession:
    """Batsim's half of a protocol exchange over an engine (no I/O).

    Call :meth:`start` for the first message, then feed every reply to
    :meth:`answer`, which returns the next message to send, or ``None`` once
    SIMULATION_ENDS has been acknowledged.

    Args:
        engine: A fresh :class:`~hdeeprm.simulation.engine.Engine` over ``hosts`` and ``workload``.
        workload: The workload the engine runs; its ``name`` prefixes job ids (``w0!42``).
        hosts: Compute hosts, index = Batsim id.
        workload_path: Path of the workload JSON, sent in SIMULATION_BEGINS.
        energy: Whether energy is simulated (Batsim ``-E``); QUERY
            ``consumed_energy`` is refused without it.
        clock: ``"exact"`` (default): message times are sent exactly; ``"batsim"``: printed with 6 decimals
            as Batsim does (:func:`~hdeeprm.simulation.kernel.protocol_time`), so a scheduler that stamps its
            decisions with the ``now`` it read has them applied up to 0.5 us late, as on real Batsim.
            Timestamps and ``now`` in replies are honoured with either.

    Raises:
        ProtocolError: (from :meth:`answer`) a reply Batsim would refuse.
        SimulationError: (from :meth:`answer`) a decision the engine refuses
            (busy host, unknown job…), or jobs left waiting with no event to come.
    """

    def __init__(self, engine: Any, workload: Workload, hosts: Sequence[HostSpec], *,
                 workload_path: str | Path = "", energy: bool = True, clock: str = DEFAULT_CLOCK) -> None:
        if clock not in CLOCKS:
            raise OptionsError(f"clock must be one of {', '.join(CLOCKS)}, got {clock!r}")
        self._stamp = protocol_time if clock == "batsim" else float
        self.engine = engine
        self.workload = workload
        self.hosts = hosts
        self.energy = energy
        self.workload_path = str(Path(workload_path).resolve()) if workload_path else ""
        prefix = f"{workload.name}!"
        self._jobs: dict[str, Job] = {prefix + j.id: j for j in workload.jobs}
        self._full_id = [prefix + j.id for j in workload.jobs]
        self._alloc: dict[int, ProcSet] = {}
        self._killed: set[int] = set()
        self._acks: list[P.BatsimEvent] = []
        self._nb_submitted = 0
        self._notified = not workload.jobs
        self._notify_due = not workload.jobs
        self._ended = False
        self._done = False
        #: Number of messages sent to the decision process.
        self.nb_messages = 0

    # ------------------------------------------------------------------ messages out
    def start(self) -> str:
        """The first message: SIMULATION_BEGINS alone at t = 0.

        Returns:
            The message's JSON text (resources, workload path, profiles).

        Raises:
            ProtocolError: A profile type Batsim's protocol cannot carry here.
        """
        wl = self.workload
        begins = P.SimulationBegins(
            resources_from_hosts(self.hosts), {wl.name: self.workload_path},
            {wl.name: {name: profile_to_json(p) for name, p in wl.profiles.items()}})
        return self._send(0.0, [begins])

    def _send(self, now: float, events: list) -> str:
        self.nb_messages += 1
        return P.dumps_message(self._stamp(now), events)

    def _next_message(self) -> str | None:
        engine = self.engine
        if self._notify_due:
            self._notify_due = False
            return self._send(engine.now, [P.Notify(P.NO_MORE_STATIC_JOB)])
        if self._acks:
            acks, self._acks = self._acks, []
            return self._send(engine.now, acks)
        if self._ended:
            self._done = True
            return None
        while True:
            batch = engine.next_batch()
            if batch is None:
                self._check_all_finished()
                self._ended = True
                return self._send(engine.now, [P.SimulationEnds()])
            events: list[P.BatsimEvent] = []
            name, t = self.workload.name, batch.time
            for job in batch.submitted:
                event = job_submitted(job, name)
                if job.subtime != t:   # held while the clock waited for a reply's now: its own time
                    event.timestamp = self._stamp(job.subtime)
                events.append(event)
            self._nb_submitted += len(batch.submitted)
            state = engine.state
            for job in batch.completed:
                if job.index in self._killed:
                    continue  # acknowledged by JOB_KILLED, as Batsim does
                st = state[job.index]
                end = float(engine.finish_time[job.index])
                events.append(P.JobCompleted(self._full_id[job.index], st.value,
                                             0 if st is JobState.COMPLETED_SUCCESSFULLY else -1,
                                             self._alloc[job.index],
                                             timestamp=None if end == t else self._stamp(end)))
            if len(events) > 1 and any(e.timestamp is not None for e in events):
                # held events in the order they reached Batsim's server (stable: same-time ones as above)
                events.sort(key=lambda e: t if e.timestamp is None else e.timestamp)
            if batch.requested_call:
                events.append(P.RequestedCall())
            if not self._notified and self._nb_submitted == len(self.workload.jobs):
                self._notified = self._notify_due = True
            if events:
                return self._send(batch.time, events)

    def _check_all_finished(self) -> None:
        waiting = [j for j, st in zip(self.workload.jobs, self.engine.state) if not st.is_final]
        if waiting:
            raise SimulationError(
                f"the simulation has no event left but {len(waiting)} job(s) never finished "
                f"(first: {self._full_id[waiting[0].index]!r}, {waiting[0].res} resources): the "
                f"decision process left them waiting")

    # ------------------------------------------------------------------ replies in
    def answer(self, reply: str | bytes | dict) -> str | None:
        """Apply one decision-process reply and return the next message.

        Args:
            reply: The reply to the last message (JSON text or parsed object).

        Returns:
            JSON text of the next message, or ``None`` when the reply
            acknowledged SIMULATION_ENDS.

        Raises:
            ProtocolError: Unsupported or malformed event (named).
            SimulationError: The engine refused a decision.
        """
        now, commands = P.decode_commands(reply)
        if not self._ended:
            hold = self.engine.hold_until
            for cmd in commands:   # each at max(clock, its timestamp) (send_message_at_time, src/protocol.cpp)
                hold(cmd.timestamp)
                self._apply(cmd)
            hold(now)              # SCHED_READY once the clock reached the reply's now
        elif commands:
            raise ProtocolError(f"the reply to SIMULATION_ENDS must have no event, got "
                                f"{len(commands)}")
        return self._next_message()

    def _job(self, job_id: str, what: str) -> Job:
        try:
            return self._jobs[job_id]
        except KeyError:
            raise ProtocolError(f"{what} names job {job_id!r}, which is not in workload "
                                f"{self.workload.name!r}") from None

    def _apply(self, cmd: P.Command) -> None:
        engine = self.engine
        if isinstance(cmd, P.ExecuteJob):
            job = self._job(cmd.job_id, "EXECUTE_JOB")
            engine.execute_job(job, list(cmd.alloc))
            self._alloc[job.index] = cmd.alloc
        elif isinstance(cmd, P.RejectJob):
            engine.reject_job(self._job(cmd.job_id, "REJECT_JOB"), "rejected by the scheduler")
        elif isinstance(cmd, P.SetResourceState):
            engine.set_pstate(list(cmd.resources), cmd.state)
            self._acks.append(P.ResourceStateChanged(cmd.resources, str(cmd.state)))
        elif isinstance(cmd, P.CallMeLater):
            engine.call_me_later(cmd.when)
        elif isinstance(cmd, P.KillJob):
            progress = {}
            for job_id in cmd.job_ids:
                job = self._job(job_id, "KILL_JOB")
                if engine.state[job.index] is JobState.RUNNING:
                    progress[job_id] = (job.profile.name, float(engine.progress(job)))
                    engine.kill_job(job)
                    self._killed.add(job.index)
            self._acks.append(P.JobKilled(list(cmd.job_ids), progress))
        elif isinstance(cmd, P.Query):
            if not self.energy:
                raise ProtocolError("QUERY consumed_energy needs energy simulation "
                                    "(start the server with -E)")
            self._acks.append(P.Answer(float(engine.consumed_energy())))
        # NOTIFY registration_finished / continue_registration: dynamic job
        # registration is disabled (as Batsim's default), nothing to do.


def serve(session: BatsimSession, endpoint: str = DEFAULT_ENDPOINT, *,
          timeout: float | None = None,
          log: Callable[[str], None] | None = None) -> int:
    """Run a session over ZeroMQ until SIMULATION_ENDS is acknowledged.

    Args:
        session: The session to drive.
        endpoint: ZeroMQ endpoint where the decision process listens
            (``pybatsim -s`` binds it), e.g. ``tcp://127.0.0.1:28000``.
        timeout: Seconds to wait for each reply; ``None`` waits forever (Batsim's behaviour).
        log: Called with ``"Sending '<json>'"`` / ``"Received '<json>'"`` for
            every message (Batsim's ``-v network-only``), or ``None``.

    Returns:
        Number of messages sent.

    Raises:
        HDeepRMError: pyzmq is not installed (the message gives the install line).
        ProtocolError: No reply within ``timeout`` seconds, or a bad reply.
        SimulationError: A decision the engine refuses.
        OptionsError: ``endpoint`` is not a ZeroMQ endpoint.
    """
    try:  # a dependency of the "batsim" extra, kept out of import time
        import zmq
    except ImportError as exc:
        raise HDeepRMError(f"pyzmq cannot be imported ({exc}); install it with: "
                           f"pip install \"pyzmq>=25\"") from exc

    context = zmq.Context()
    sock = context.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    if timeout is not None:
        sock.setsockopt(zmq.RCVTIMEO, max(1, int(timeout * 1000)))
    try:
        try:
            sock.connect(endpoint)
        except zmq.ZMQError as exc:
            raise OptionsError(f"socket endpoint must be a ZeroMQ endpoint such as "
                               f"{DEFAULT_ENDPOINT!r}, got {endpoint!r} ({os.strerror(exc.errno)})") from None
        message = session.start()
        while message is not None:
            if log is not None:
                log(f"Sending '{message}'")
            sock.send_string(message)
            try:
                reply = sock.recv_string()
            except zmq.Again:
                raise ProtocolError(f"no reply from the decision process at {endpoint} within "
                                    f"{timeout} s") from None
            if log is not None:
                log(f"Received '{reply}'")
            message = session.answer(reply)
    finally:
        sock.close(linger=0)
        context.term()
    return session.nb_messages


def split_export_prefix(export: str | Path) -> tuple[Path, str]:
    """Output folder and file prefix of a Batsim ``-e`` value.

    Args:
        export: Batsim's export prefix, e.g. ``"runs/a/out"`` → files
            ``runs/a/out_jobs.csv``…; a value ending in ``/`` means prefix ``"out"`` in that folder.

    Returns:
        ``(folder, prefix)``.
    """
    text = str(export)
    if text.endswith(("/", "\\")):
        return Path(text), "out"
    path = Path(text)
    return path.parent, path.name



__all__ = ["BatsimSession", "DEFAULT_ENDPOINT", "job_submitted", "profile_to_json",
           "resources_from_hosts", "serve", "split_export_prefix"]
