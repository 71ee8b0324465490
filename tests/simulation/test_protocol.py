"""The Batsim protocol codec against real Batsim 4.2.1 exchanges (no sockets)."""
from __future__ import annotations

import json
import re

import pytest
from procset import ProcSet

from hdeeprm.errors import ProtocolError
from hdeeprm.simulation.batsim import protocol as P
from tests.conftest import GOLDEN

LINE = re.compile(r"\] (Sending|Received) '(.*)'$")


def exact(message):
    """A pytest.raises ``match`` pattern that accepts ``message`` and nothing else."""
    return f"^{re.escape(message)}$"


def _transcript(path):
    """(direction, JSON text) of each line of a golden transcript_head.log (skips without the data)."""
    if not path.is_file():
        pytest.skip(f"golden transcript not found at {path}")
    out = []
    for line in path.read_text().splitlines():
        kind, text = LINE.search(line).groups()
        out.append((kind, text))
    return out


def _transcripts():
    if not GOLDEN.is_dir():
        pytest.skip(f"golden data not found at {GOLDEN}")
    return sorted(GOLDEN.glob("*/*/transcript_head.log"))


def test_every_golden_message_round_trips():
    """Each Batsim message decodes to typed events and re-encodes to the same JSON object."""
    counts = {}
    for path in _transcripts():
        for kind, text in _transcript(path):
            decode = P.decode_events if kind == "Sending" else P.decode_commands
            now, events = decode(text)
            assert P.encode_message(now, events) == json.loads(text), (path, text[:200])
            assert json.loads(P.dumps_message(now, events)) == json.loads(text)
            counts[path.parent.parent.name] = counts.get(path.parent.parent.name, 0) + 1
    # 8 transcripts: 200 + 200 lines (kth fcfs, fcfs-ideal), 200 (hetero), 20 (energy-micro),
    # 46 + 38 (small-mixed), 200 (hdeeprm-easy-clock, whose jobs carry HDeepRM's extra fields
    # req_time / mem_bw / swf_id), 200 (pybatsim-filler): every line was checked.
    assert counts == {"energy-micro": 20, "hetero-ptask": 200, "kth2000-delay": 400,
                      "small-mixed": 84, "hdeeprm-easy-clock": 200, "pybatsim-filler": 200}


def test_energy_micro_submissions_and_decisions_decode_to_typed_values():
    lines = _transcript(GOLDEN / "energy-micro" / "fcfs" / "transcript_head.log")
    now, begins = P.decode_events(lines[0][1])
    assert now == 0.0 and len(begins) == 1
    b = begins[0]
    assert isinstance(b, P.SimulationBegins)
    assert len(b.resources) == 100 and b.resources[2].name == "host10"
    assert b.resources[0].properties["wattage_per_state"] == "95.0:190.0"
    assert b.profiles["w0"]["ph5"] == {"type": "parallel_homogeneous", "cpu": 5e9, "com": 0}

    now, subs = P.decode_events(lines[2][1])
    assert [e.job_id for e in subs] == ["w0!d10", "w0!d20_wall5", "w0!d5_wall5", "w0!ph10",
                                        "w0!ph20_wall5", "w0!ph5_wall5"]
    assert subs[0] == P.JobSubmitted("w0!d10", "d10", 2, 0.0, -1.0, timestamp=0.0)
    assert subs[1].walltime == 5.0 and subs[1].profile == "d20"

    now, cmds = P.decode_commands(lines[3][1])
    assert cmds[0] == P.ExecuteJob("w0!d10", ProcSet((0, 1)), timestamp=0.0)
    assert [str(c.alloc) for c in cmds] == ["0-1", "2", "3", "4-5", "6", "7"]

    now, done = P.decode_events(lines[6][1])
    assert now == 5.0
    assert [(e.job_id, e.job_state, e.return_code) for e in done] == [
        ("w0!d20_wall5", "COMPLETED_WALLTIME_REACHED", -1),
        ("w0!d5_wall5", "COMPLETED_WALLTIME_REACHED", -1),
        ("w0!ph20_wall5", "COMPLETED_WALLTIME_REACHED", -1),
        ("w0!ph5_wall5", "COMPLETED_SUCCESSFULLY", 0)]
    assert P.decode_events(lines[14][1])[1] == [P.Notify(P.NO_MORE_STATIC_JOB, timestamp=12.0)]
    assert P.decode_events(lines[18][1])[1] == [P.SimulationEnds(22.0)]


def test_hetero_pstate_switch_and_its_acknowledgement():
    lines = _transcript(GOLDEN / "hetero-ptask" / "pstate-fcfs" / "transcript_head.log")
    now, cmds = P.decode_commands(lines[7][1])
    assert now == 2.224
    assert cmds == [P.SetResourceState(ProcSet((1, 4)), 0, timestamp=2.224),
                    P.ExecuteJob("w0!1", ProcSet((1, 4)), timestamp=2.224)]
    now, acks = P.decode_events(lines[8][1])
    assert acks == [P.ResourceStateChanged(ProcSet((1, 4)), "0", timestamp=2.224)]
    begins = P.decode_events(lines[0][1])[1][0]
    assert begins.resources[4].properties["group"] == "4.4Gf"


def test_outgoing_events_pybatsim_reads():
    """JOB_KILLED, REQUESTED_CALL, ANSWER in the layout of Batsim's protocol doc."""
    msg = P.encode_message(7.5, [
        P.JobKilled(["w0!1", "w0!2"], {"w0!1": ("d10", 0.25)}),
        P.RequestedCall(), P.Answer(1900.0),
        P.ResourceStateChanged(ProcSet((0, 3), 7), "2")])
    assert msg == {"now": 7.5, "events": [
        {"timestamp": 7.5, "type": "JOB_KILLED",
         "data": {"job_ids": ["w0!1", "w0!2"],
                  "job_progress": {"w0!1": {"profile": "d10", "progress": 0.25}}}},
        {"timestamp": 7.5, "type": "REQUESTED_CALL", "data": {}},
        {"timestamp": 7.5, "type": "ANSWER", "data": {"consumed_energy": 1900.0}},
        {"timestamp": 7.5, "type": "RESOURCE_STATE_CHANGED",
         "data": {"resources": "0-3 7", "state": "2"}}]}
    # a kill of jobs that had already ended still carries an (empty) job_progress:
    # pybatsim 3.2.1 reads data["job_progress"] unconditionally.
    assert P.encode_message(1, [P.JobKilled(["w0!3"])])["events"][0]["data"] == {
        "job_ids": ["w0!3"], "job_progress": {}}


def test_commands_pybatsim_sends_decode():
    text = json.dumps({"now": 10.0, "events": [
        {"timestamp": 10.0, "type": "REJECT_JOB", "data": {"job_id": "w0!4"}},
        {"timestamp": 10.0, "type": "KILL_JOB", "data": {"job_ids": ["w0!1", "w0!2"]}},
        {"timestamp": 10.0, "type": "CALL_ME_LATER", "data": {"timestamp": 25.5}},
        {"timestamp": 10.0, "type": "QUERY", "data": {"requests": {"consumed_energy": {}}}},
        {"timestamp": 10.0, "type": "NOTIFY", "data": {"type": "registration_finished"}}]})
    now, cmds = P.decode_commands(text)
    assert cmds == [P.RejectJob("w0!4", timestamp=10.0), P.KillJob(["w0!1", "w0!2"], timestamp=10.0),
                    P.CallMeLater(25.5, timestamp=10.0),
                    P.Query(["consumed_energy"], timestamp=10.0),
                    P.Notify("registration_finished", timestamp=10.0)]
    assert P.encode_message(now, cmds) == json.loads(text)


@pytest.mark.parametrize("event, message", [
    ({"type": "REGISTER_JOB", "data": {"job_id": "w0!9"}},
     "event type 'REGISTER_JOB' is not supported by HDeepRM's Batsim server (supported: "
     "CALL_ME_LATER, EXECUTE_JOB, KILL_JOB, NOTIFY, QUERY, REJECT_JOB, SET_RESOURCE_STATE)"),
    ({"type": "SET_JOB_METADATA", "data": {}},
     "event type 'SET_JOB_METADATA' is not supported by HDeepRM's Batsim server (supported: "
     "CALL_ME_LATER, EXECUTE_JOB, KILL_JOB, NOTIFY, QUERY, REJECT_JOB, SET_RESOURCE_STATE)"),
    ({"type": "QUERY", "data": {"requests": {"air_temperature_all": {}}}},
     "QUERY request 'air_temperature_all' is not supported (supported: consumed_energy)"),
    ({"type": "NOTIFY", "data": {"type": "hello"}},
     "NOTIFY type 'hello' is not supported (supported: continue_registration, "
     "registration_finished)"),
    ({"type": "EXECUTE_JOB", "data": {"job_id": "w0!1", "alloc": "3-x"}},
     "EXECUTE_JOB alloc must be an interval-set string like '0-3 5', got '3-x'"),
    ({"type": "EXECUTE_JOB", "data": {"job_id": "w0!1"}},
     "EXECUTE_JOB event must have data field 'alloc', got {'job_id': 'w0!1'}"),
    ({"type": "SET_RESOURCE_STATE", "data": {"resources": "0", "state": "on"}},
     "SET_RESOURCE_STATE state must be a pstate number, got 'on'"),
])
def test_unsupported_or_malformed_commands_are_named(event, message):
    event = {"timestamp": 1.0, **event}
    with pytest.raises(ProtocolError, match=exact(message)):
        P.decode_commands({"now": 1.0, "events": [event]})


def test_malformed_messages():
    with pytest.raises(ProtocolError, match=exact(
            "message must be JSON, got '{not json' (Expecting property name enclosed in double "
            "quotes: line 1 column 2 (char 1))")):
        P.decode_commands("{not json")
    with pytest.raises(ProtocolError, match=exact(
            "message must be an object with 'now' and 'events', got \"{'events': []}\"")):
        P.decode_commands({"events": []})
    with pytest.raises(ProtocolError, match=exact(
            "event timestamp 2.0 must not be after the message's now 1.0")):
        P.decode_commands({"now": 1.0, "events": [
            {"timestamp": 2.0, "type": "REJECT_JOB", "data": {"job_id": "w0!1"}}]})
    with pytest.raises(ProtocolError, match=exact(
            "event type 'JOB_STARTED' from Batsim is not supported (supported: ANSWER, "
            "JOB_COMPLETED, JOB_KILLED, JOB_SUBMITTED, NOTIFY, REQUESTED_CALL, "
            "RESOURCE_STATE_CHANGED, SIMULATION_BEGINS, SIMULATION_ENDS)")):
        P.decode_events({"now": 1.0, "events": [{"timestamp": 1.0, "type": "JOB_STARTED"}]})


def test_job_submitted_keeps_the_workload_extra_fields():
    """Batsim forwards every field of a job's JSON object; HDeepRM's req_time / mem_bw / swf_id survive a round trip."""
    text = ('{"now":0.000000,"events":[{"timestamp":0.000000,"type":"JOB_SUBMITTED","data":{"job_id":"w0!1",'
            '"job":{"id":"w0!1","subtime":0,"res":1,"profile":"p","req_time":61,"mem_bw":8,"swf_id":1}}}]}')
    now, (event,) = P.decode_events(text)
    assert event.extra == {"req_time": 61, "mem_bw": 8, "swf_id": 1}
    assert P.encode_message(now, [event]) == json.loads(text)
