"""Pure codec of Batsim's 4.x JSON protocol: message dicts ⇄ typed events.

No socket and no state here, so the codec is tested without ZeroMQ:
:mod:`hdeeprm.simulation.batsim.server` moves the strings over ZeroMQ, this
module only turns them into dataclasses and back. Every message is
``{"now": float, "events": [{"timestamp", "type", "data"}]}``, times in
seconds, with the event layouts of Batsim 4.2.1's protocol documentation
(https://batsim.readthedocs.io/en/latest/protocol.html).

Two directions:

- Batsim → decision process (:data:`BatsimEvent`): SIMULATION_BEGINS,
  JOB_SUBMITTED, JOB_COMPLETED, JOB_KILLED, REQUESTED_CALL,
  RESOURCE_STATE_CHANGED, NOTIFY, ANSWER, SIMULATION_ENDS.
- decision process → Batsim (:data:`Command`): EXECUTE_JOB, REJECT_JOB,
  KILL_JOB, CALL_ME_LATER, SET_RESOURCE_STATE, NOTIFY, QUERY
  (``consumed_energy`` only).

Anything else raises :class:`~hdeeprm.errors.ProtocolError` naming it.
Resource sets travel as Batsim interval-set strings (``"0-3 5 7-9"``) of
resource ids (``docs/engine.rst``, "Host numbering"), held here as
:class:`procset.ProcSet`.
"""
from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Union

from procset import ProcSet

from hdeeprm.errors import ProtocolError

#: ``config`` object Batsim 4.2.1 sends in SIMULATION_BEGINS with its default
#: command line (no Redis, no dynamic jobs, profiles not forwarded on submission).
DEFAULT_CONFIG: dict[str, Any] = {
    "redis-enabled": False, "redis-hostname": "127.0.0.1", "redis-port": 6379,
    "redis-prefix": "default", "profiles-forwarded-on-submission": False,
    "dynamic-jobs-enabled": False, "dynamic-jobs-acknowledged": False,
    "profile-reuse-enabled": False, "sched-config": "", "forward-unknown-events": False,
}

#: NOTIFY type Batsim sends once every static job has been submitted.
NO_MORE_STATIC_JOB = "no_more_static_job_to_submit"
#: NOTIFY types a decision process may send (dynamic registration; accepted, no effect here).
SCHEDULER_NOTIFY_TYPES = frozenset({"registration_finished", "continue_registration"})


def _ts(kw_only: bool = True):
    return field(default=None, kw_only=kw_only)


# --------------------------------------------------------------------------- Batsim → scheduler
@dataclass(slots=True)
class Resource:
    """One compute resource as listed in SIMULATION_BEGINS.

    Attributes:
        id: Batsim resource id (0..N-1, hosts in byte-wise name order).
        name: SimGrid host name.
        state: ``"idle"``, ``"sleeping"``, ``"computing"``, ``"switching_on"`` or ``"switching_off"``.
        properties: SimGrid host properties (strings), e.g. ``{"role": "", "group": "4Gf"}``.
        zone_properties: Properties of the host's zone (cluster), ``{}`` if none.
    """

    id: int
    name: str
    state: str = "idle"
    properties: dict[str, str] = field(default_factory=dict)
    zone_properties: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class SimulationBegins:
    """SIMULATION_BEGINS: the platform, workloads and profiles (sent alone at t = 0).

    Attributes:
        resources: Compute resources, by id.
        workloads: Workload name → path of its JSON file (e.g. ``{"w0": "/x/workload.json"}``).
        profiles: Workload name → profile name → Batsim profile object.
        config: Batsim configuration object (:data:`DEFAULT_CONFIG` by default).
        nb_storage_resources: Number of storage resources (always 0 here).
        allow_compute_sharing: Whether several jobs may share a compute host.
        allow_storage_sharing: Whether several jobs may share a storage host.
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    resources: list[Resource]
    workloads: dict[str, str]
    profiles: dict[str, dict[str, Any]]
    config: dict[str, Any] = field(default_factory=lambda: dict(DEFAULT_CONFIG))
    nb_storage_resources: int = 0
    allow_compute_sharing: bool = False
    allow_storage_sharing: bool = True
    timestamp: float | None = _ts()


@dataclass(slots=True)
class JobSubmitted:
    """JOB_SUBMITTED: one job of a static workload arrived.

    Attributes:
        job_id: Full Batsim id ``"workload!id"``, e.g. ``"w0!42"``.
        profile: Profile name.
        res: Number of requested resources.
        subtime: Submission time in seconds.
        walltime: Requested time in seconds; ``-1.0`` = none (the field is then omitted).
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
        extra: The job's other fields, forwarded as the workload wrote them (Batsim copies every field of a
            job's JSON object into JOB_SUBMITTED, e.g. HDeepRM's ``req_time``, ``mem_bw``, ``swf_id``).
    """

    job_id: str
    profile: str
    res: int
    subtime: float
    walltime: float = -1.0
    timestamp: float | None = _ts()
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class JobCompleted:
    """JOB_COMPLETED: a job ended by itself (success or walltime reached).

    Attributes:
        job_id: Full Batsim id.
        job_state: Batsim final state, e.g. ``"COMPLETED_SUCCESSFULLY"``,
            ``"COMPLETED_WALLTIME_REACHED"``.
        return_code: 0 on success, -1 when the walltime was reached (Batsim's values).
        alloc: Resources the job ran on.
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    job_id: str
    job_state: str
    return_code: int
    alloc: ProcSet
    timestamp: float | None = _ts()


@dataclass(slots=True)
class JobKilled:
    """JOB_KILLED: acknowledges a KILL_JOB.

    Attributes:
        job_ids: The ids of the KILL_JOB being acknowledged.
        progress: For the jobs really killed (not those that had already
            ended): job id → (profile name, fraction of work done in [0, 1]).
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    job_ids: list[str]
    progress: dict[str, tuple[str, float]] = field(default_factory=dict)
    timestamp: float | None = _ts()


@dataclass(slots=True)
class ResourceStateChanged:
    """RESOURCE_STATE_CHANGED: acknowledges a SET_RESOURCE_STATE.

    Attributes:
        resources: Resources now in ``state``.
        state: The new pstate, as Batsim sends it (a string, e.g. ``"0"``).
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    resources: ProcSet
    state: str
    timestamp: float | None = _ts()


@dataclass(slots=True)
class RequestedCall:
    """REQUESTED_CALL: the time asked for by a CALL_ME_LATER has come.

    Attributes:
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    timestamp: float | None = _ts(False)


@dataclass(slots=True)
class SimulationEnds:
    """SIMULATION_ENDS: every job is finished; the decision process should reply and stop.

    Attributes:
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    timestamp: float | None = _ts(False)


@dataclass(slots=True)
class Notify:
    """NOTIFY (both directions).

    Attributes:
        type: :data:`NO_MORE_STATIC_JOB` from Batsim; one of
            :data:`SCHEDULER_NOTIFY_TYPES` from the decision process.
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    type: str
    timestamp: float | None = _ts()


@dataclass(slots=True)
class Answer:
    """ANSWER to a QUERY ``consumed_energy``.

    Attributes:
        consumed_energy: Energy of the compute hosts since t = 0, in joules
            (``docs/engine.rst``, "Energy accounting").
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    consumed_energy: float
    timestamp: float | None = _ts()


# --------------------------------------------------------------------------- scheduler → Batsim
@dataclass(slots=True)
class ExecuteJob:
    """EXECUTE_JOB: start a job now.

    Attributes:
        job_id: Full Batsim id, e.g. ``"w0!42"``.
        alloc: Resource ids to run it on (as many as it requested).
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    job_id: str
    alloc: ProcSet
    timestamp: float | None = _ts()


@dataclass(slots=True)
class RejectJob:
    """REJECT_JOB: drop a submitted job.

    Attributes:
        job_id: Full Batsim id.
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    job_id: str
    timestamp: float | None = _ts()


@dataclass(slots=True)
class KillJob:
    """KILL_JOB: kill running jobs (acknowledged by one JOB_KILLED).

    Attributes:
        job_ids: Full Batsim ids.
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    job_ids: list[str]
    timestamp: float | None = _ts()


@dataclass(slots=True)
class CallMeLater:
    """CALL_ME_LATER: ask for a REQUESTED_CALL later.

    Attributes:
        when: Simulated time of the call, in seconds (the ``data.timestamp`` field).
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    when: float
    timestamp: float | None = _ts()


@dataclass(slots=True)
class SetResourceState:
    """SET_RESOURCE_STATE: switch resources to another pstate.

    Attributes:
        resources: Resource ids to switch.
        state: The pstate number (sent as a string, as Batsim expects).
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    resources: ProcSet
    state: int
    timestamp: float | None = _ts()


@dataclass(slots=True)
class Query:
    """QUERY: only ``consumed_energy`` is answered (like Batsim 4.2.1).

    Attributes:
        requests: Names of the requested values (``["consumed_energy"]``).
        timestamp: Event time in seconds; ``None`` = the message's ``now``.
    """

    requests: list[str] = field(default_factory=lambda: ["consumed_energy"])
    timestamp: float | None = _ts()


BatsimEvent = Union[SimulationBegins, JobSubmitted, JobCompleted, JobKilled, ResourceStateChanged,
                    RequestedCall, SimulationEnds, Notify, Answer]
Command = Union[ExecuteJob, RejectJob, KillJob, CallMeLater, SetResourceState, Notify, Query]


# --------------------------------------------------------------------------- field checks
def _procset(text: Any, what: str) -> ProcSet:
    if not isinstance(text, str):
        raise ProtocolError(f"{what} must be an interval-set string like '0-3 5', got {text!r}")
    try:
        return ProcSet.from_str(text)
    except (ValueError, TypeError) as exc:
        raise ProtocolError(f"{what} must be an interval-set string like '0-3 5', got {text!r}") \
            from exc


def _get(data: Mapping[str, Any], key: str, etype: str) -> Any:
    try:
        return data[key]
    except (KeyError, TypeError):
        raise ProtocolError(f"{etype} event must have data field {key!r}, got {data!r}") from None


def _float(value: Any, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ProtocolError(f"{what} must be a number, got {value!r}")
    return float(value)


# --------------------------------------------------------------------------- encoding
def _event_data(event: BatsimEvent | Command) -> tuple[str, dict[str, Any]]:
    """Batsim ``type`` and ``data`` of one event."""
    if isinstance(event, JobSubmitted):
        job: dict[str, Any] = {"id": event.job_id, "subtime": event.subtime, "res": event.res,
                               "profile": event.profile}
        if event.walltime >= 0:
            job["walltime"] = event.walltime
        job.update(event.extra)
        return "JOB_SUBMITTED", {"job_id": event.job_id, "job": job}
    if isinstance(event, JobCompleted):
        return "JOB_COMPLETED", {"job_id": event.job_id, "job_state": event.job_state,
                                 "return_code": event.return_code, "alloc": str(event.alloc)}
    if isinstance(event, ExecuteJob):
        return "EXECUTE_JOB", {"job_id": event.job_id, "alloc": str(event.alloc)}
    if isinstance(event, SimulationBegins):
        return "SIMULATION_BEGINS", {
            "nb_resources": len(event.resources) + event.nb_storage_resources,
            "nb_compute_resources": len(event.resources),
            "nb_storage_resources": event.nb_storage_resources,
            "allow_compute_sharing": event.allow_compute_sharing,
            "allow_storage_sharing": event.allow_storage_sharing,
            "config": event.config,
            "compute_resources": [{"id": r.id, "name": r.name, "state": r.state,
                                   "properties": r.properties,
                                   "zone_properties": r.zone_properties}
                                  for r in event.resources],
            "storage_resources": [],
            "workloads": event.workloads,
            "profiles": event.profiles,
        }
    if isinstance(event, JobKilled):
        return "JOB_KILLED", {"job_ids": list(event.job_ids),
                              "job_progress": {j: {"profile": p, "progress": f}
                                               for j, (p, f) in event.progress.items()}}
    if isinstance(event, ResourceStateChanged):
        return "RESOURCE_STATE_CHANGED", {"resources": str(event.resources), "state": event.state}
    if isinstance(event, RequestedCall):
        return "REQUESTED_CALL", {}
    if isinstance(event, SimulationEnds):
        return "SIMULATION_ENDS", {}
    if isinstance(event, Notify):
        return "NOTIFY", {"type": event.type}
    if isinstance(event, Answer):
        return "ANSWER", {"consumed_energy": event.consumed_energy}
    if isinstance(event, RejectJob):
        return "REJECT_JOB", {"job_id": event.job_id}
    if isinstance(event, KillJob):
        return "KILL_JOB", {"job_ids": list(event.job_ids)}
    if isinstance(event, CallMeLater):
        return "CALL_ME_LATER", {"timestamp": event.when}
    if isinstance(event, SetResourceState):
        return "SET_RESOURCE_STATE", {"resources": str(event.resources), "state": str(event.state)}
    if isinstance(event, Query):
        return "QUERY", {"requests": {r: {} for r in event.requests}}
    raise ProtocolError(f"cannot encode {type(event).__name__!r} as a Batsim event")


def encode_message(now: float, events: Iterable[BatsimEvent | Command]) -> dict[str, Any]:
    """Batsim message object of typed events.

    Args:
        now: Message time in seconds.
        events: Events in sending order; an event whose ``timestamp`` is
            ``None`` is stamped ``now``.

    Returns:
        ``{"now": now, "events": [{"timestamp", "type", "data"}, ...]}``.

    Raises:
        ProtocolError: For an object that is not a protocol event.
    """
    out = []
    for event in events:
        etype, data = _event_data(event)
        ts = now if event.timestamp is None else event.timestamp
        out.append({"timestamp": ts, "type": etype, "data": data})
    return {"now": now, "events": out}


def dumps_message(now: float, events: Iterable[BatsimEvent | Command]) -> str:
    """Compact JSON text of a message (what goes on the socket).

    Args:
        now, events: As in :func:`encode_message`.

    Returns:
        JSON text without spaces.

    Raises:
        ProtocolError: For an object that is not a protocol event.
    """
    return json.dumps(encode_message(now, events), separators=(",", ":"))


# --------------------------------------------------------------------------- decoding
#: Fields of a JOB_SUBMITTED job object that :class:`JobSubmitted` holds as attributes (the rest go to ``extra``).
_JOB_FIELDS = frozenset({"id", "subtime", "res", "profile", "walltime"})


def _decode_batsim(etype: str, data: Mapping[str, Any], ts: float) -> BatsimEvent:
    if etype == "JOB_SUBMITTED":
        job = _get(data, "job", etype)
        return JobSubmitted(_get(data, "job_id", etype), _get(job, "profile", etype),
                            int(_get(job, "res", etype)), _float(_get(job, "subtime", etype),
                                                                 "JOB_SUBMITTED subtime"),
                            _float(job.get("walltime", -1.0), "JOB_SUBMITTED walltime"),
                            timestamp=ts, extra={k: v for k, v in job.items() if k not in _JOB_FIELDS})
    if etype == "JOB_COMPLETED":
        return JobCompleted(_get(data, "job_id", etype), _get(data, "job_state", etype),
                            int(_get(data, "return_code", etype)),
                            _procset(_get(data, "alloc", etype), "JOB_COMPLETED alloc"),
                            timestamp=ts)
    if etype == "SIMULATION_BEGINS":
        resources = [Resource(int(r["id"]), r["name"], r.get("state", "idle"),
                              dict(r.get("properties", {})), dict(r.get("zone_properties", {})))
                     for r in _get(data, "compute_resources", etype)]
        return SimulationBegins(resources, dict(_get(data, "workloads", etype)),
                                dict(_get(data, "profiles", etype)),
                                dict(data.get("config", DEFAULT_CONFIG)),
                                int(data.get("nb_storage_resources", 0)),
                                bool(data.get("allow_compute_sharing", False)),
                                bool(data.get("allow_storage_sharing", True)), timestamp=ts)
    if etype == "JOB_KILLED":
        progress = {j: (p.get("profile", ""), float(p.get("progress", 0.0)))
                    for j, p in data.get("job_progress", {}).items()}
        return JobKilled(list(_get(data, "job_ids", etype)), progress, timestamp=ts)
    if etype == "RESOURCE_STATE_CHANGED":
        return ResourceStateChanged(_procset(_get(data, "resources", etype),
                                             "RESOURCE_STATE_CHANGED resources"),
                                    str(_get(data, "state", etype)), timestamp=ts)
    if etype == "REQUESTED_CALL":
        return RequestedCall(ts)
    if etype == "SIMULATION_ENDS":
        return SimulationEnds(ts)
    if etype == "NOTIFY":
        return Notify(_get(data, "type", etype), timestamp=ts)
    if etype == "ANSWER":
        return Answer(_float(_get(data, "consumed_energy", etype), "ANSWER consumed_energy"),
                      timestamp=ts)
    raise ProtocolError(f"event type {etype!r} from Batsim is not supported (supported: "
                        f"{', '.join(sorted(BATSIM_EVENT_TYPES))})")


def _decode_command(etype: str, data: Mapping[str, Any], ts: float) -> Command:
    if etype == "EXECUTE_JOB":
        return ExecuteJob(_get(data, "job_id", etype),
                          _procset(_get(data, "alloc", etype), "EXECUTE_JOB alloc"), timestamp=ts)
    if etype == "REJECT_JOB":
        return RejectJob(_get(data, "job_id", etype), timestamp=ts)
    if etype == "KILL_JOB":
        ids = _get(data, "job_ids", etype)
        if not isinstance(ids, list):
            raise ProtocolError(f"KILL_JOB job_ids must be a list of job ids, got {ids!r}")
        return KillJob(list(ids), timestamp=ts)
    if etype == "CALL_ME_LATER":
        return CallMeLater(_float(_get(data, "timestamp", etype), "CALL_ME_LATER timestamp"),
                           timestamp=ts)
    if etype == "SET_RESOURCE_STATE":
        state = _get(data, "state", etype)
        try:
            pstate = int(state)
        except (TypeError, ValueError):
            raise ProtocolError(f"SET_RESOURCE_STATE state must be a pstate number, got "
                                f"{state!r}") from None
        return SetResourceState(_procset(_get(data, "resources", etype),
                                         "SET_RESOURCE_STATE resources"), pstate, timestamp=ts)
    if etype == "NOTIFY":
        ntype = _get(data, "type", etype)
        if ntype not in SCHEDULER_NOTIFY_TYPES:
            raise ProtocolError(f"NOTIFY type {ntype!r} is not supported (supported: "
                                f"{', '.join(sorted(SCHEDULER_NOTIFY_TYPES))})")
        return Notify(ntype, timestamp=ts)
    if etype == "QUERY":
        requests = list(_get(data, "requests", etype))
        unknown = [r for r in requests if r != "consumed_energy"]
        if unknown:
            raise ProtocolError(f"QUERY request {unknown[0]!r} is not supported "
                                f"(supported: consumed_energy)")
        return Query(requests, timestamp=ts)
    raise ProtocolError(f"event type {etype!r} is not supported by HDeepRM's Batsim server "
                        f"(supported: {', '.join(sorted(COMMAND_TYPES))})")


#: Event types Batsim sends, decoded by :func:`decode_events`.
BATSIM_EVENT_TYPES = frozenset({"SIMULATION_BEGINS", "JOB_SUBMITTED", "JOB_COMPLETED",
                                "JOB_KILLED", "RESOURCE_STATE_CHANGED", "REQUESTED_CALL",
                                "SIMULATION_ENDS", "NOTIFY", "ANSWER"})
#: Event types a decision process may send, decoded by :func:`decode_commands`.
COMMAND_TYPES = frozenset({"EXECUTE_JOB", "REJECT_JOB", "KILL_JOB", "CALL_ME_LATER",
                           "SET_RESOURCE_STATE", "NOTIFY", "QUERY"})


def _decode(message: str | bytes | Mapping[str, Any], decode_one) -> tuple[float, list]:
    if isinstance(message, (str, bytes)):
        try:
            message = json.loads(message)
        except ValueError as exc:
            raise ProtocolError(f"message must be JSON, got {message[:80]!r} ({exc})") from None
    if not isinstance(message, Mapping) or "now" not in message or "events" not in message:
        raise ProtocolError(f"message must be an object with 'now' and 'events', got "
                            f"{str(message)[:80]!r}")
    now = _float(message["now"], "message 'now'")
    out = []
    for event in message["events"]:
        if not isinstance(event, Mapping) or "type" not in event:
            raise ProtocolError(f"event must be an object with a 'type', got {event!r}")
        ts = _float(event.get("timestamp", now), f"{event['type']} timestamp")
        if ts > now + 1e-9:
            raise ProtocolError(f"event timestamp {ts} must not be after the message's now {now}")
        out.append(decode_one(event["type"], event.get("data") or {}, ts))
    return now, out


def decode_commands(message: str | bytes | Mapping[str, Any]) -> tuple[float, list[Command]]:
    """Decode a decision-process reply.

    Args:
        message: JSON text or the parsed object.

    Returns:
        ``(now, commands)``: the reply's time in seconds and its events in order.

    Raises:
        ProtocolError: Malformed message, or an event type outside
            :data:`COMMAND_TYPES` (e.g. ``REGISTER_JOB``), named in the message.
    """
    return _decode(message, _decode_command)


def decode_events(message: str | bytes | Mapping[str, Any]) -> tuple[float, list[BatsimEvent]]:
    """Decode a Batsim message (the counterpart of :func:`encode_message`).

    Args:
        message: JSON text or the parsed object.

    Returns:
        ``(now, events)``: the message's time in seconds and its events in order.

    Raises:
        ProtocolError: Malformed message, or an event type outside
            :data:`BATSIM_EVENT_TYPES`, named in the message.
    """
    return _decode(message, _decode_batsim)
