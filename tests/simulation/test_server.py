"""BatsimSession without sockets: Batsim's message order, replayed against real transcripts."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from procset import ProcSet

from hdeeprm.cli.batsim import main as batsim_main
from hdeeprm.errors import OptionsError, ProtocolError, SimulationError, WorkloadError
from hdeeprm.simulation.batsim import protocol as P
from hdeeprm.simulation.engine import Engine
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.simulation.batsim.server import (BatsimSession, job_submitted, profile_to_json,
                                              resources_from_hosts, serve, split_export_prefix)
from hdeeprm.platform.simgrid_reader import read_simgrid_platform
from hdeeprm.workload.batsim_json import read_batsim_workload
from hdeeprm.workload.model import Job, Profile, Workload
from tests.conftest import GOLDEN

LINE = re.compile(r"\] (Sending|Received) '(.*)'$")


def exact(message):
    """A pytest.raises ``match`` pattern that accepts ``message`` and nothing else."""
    return f"^{re.escape(message)}$"


def _session(case, platform, workload, energy=True):
    if not GOLDEN.is_dir():
        pytest.skip(f"golden data not found at {GOLDEN}")
    hosts = read_simgrid_platform(GOLDEN / case / platform)
    wl = read_batsim_workload(GOLDEN / case / workload)
    return BatsimSession(Engine(hosts, wl, energy=energy), wl, hosts,
                         workload_path=GOLDEN / case / workload, energy=energy)


def _replay(session, transcript, time_tol):
    """Feed Batsim's recorded replies to the session; every message must match Batsim's."""
    lines = [LINE.search(x).groups() for x in transcript.read_text().splitlines()]
    message = session.start()
    for i in range(0, len(lines), 2):
        (sent_kind, sent), (recv_kind, received) = lines[i], lines[i + 1]
        assert (sent_kind, recv_kind) == ("Sending", "Received")
        now, ours = P.decode_events(message)
        g_now, gold = P.decode_events(sent)
        assert abs(now - g_now) <= time_tol, (i, message[:200], sent[:200])
        assert [type(e) for e in ours] == [type(e) for e in gold], (i, message[:300], sent[:300])
        for o, g in zip(ours, gold):
            if isinstance(g, P.SimulationBegins):
                assert [(r.id, r.name) for r in o.resources] == [(r.id, r.name) for r in g.resources]
                assert o.profiles["w0"].keys() <= g.profiles["w0"].keys()
            elif isinstance(g, P.JobSubmitted):
                assert (o.job_id, o.res, o.profile, o.walltime) == (g.job_id, g.res, g.profile,
                                                                     g.walltime)
            elif isinstance(g, P.JobCompleted):
                assert (o.job_id, o.job_state, o.return_code, o.alloc) == (
                    g.job_id, g.job_state, g.return_code, g.alloc)
            else:
                o.timestamp = g.timestamp = None
                assert o == g
        message = session.answer(received)
    return message


def test_energy_micro_whole_exchange_is_batsims():
    """All 10 messages of the real run: BEGINS alone, NOTIFY alone after the last submission…"""
    session = _session("energy-micro", "platform.xml", "workload.json")
    last = _replay(session, GOLDEN / "energy-micro" / "fcfs" / "transcript_head.log", 0.0)
    assert last is None and session.nb_messages == 10


def test_kth2000_fcfs_ideal_first_100_messages_are_batsims():
    session = _session("kth2000-delay", "platform_ideal.xml", "workload.json")
    _replay(session, GOLDEN / "kth2000-delay" / "fcfs-ideal" / "transcript_head.log", 0.0)
    assert session.nb_messages == 101  # 100 replayed + the one that follows


def test_hetero_resource_state_changed_comes_in_the_next_message_at_the_same_time():
    session = _session("hetero-ptask", "platform.xml", "workload.json")
    _replay(session, GOLDEN / "hetero-ptask" / "pstate-fcfs" / "transcript_head.log", 1e-5)


# ---------------------------------------------------------------- hand-made 2-host cases
HOSTS = [HostSpec("h0", (1e9,), (95.0,), (190.0,)), HostSpec("h1", (1e9,), (95.0,), (190.0,))]


def _small(jobs, energy=True):
    wl = Workload(jobs, nb_res=2)
    return BatsimSession(Engine(HOSTS, wl, energy=energy), wl, HOSTS, energy=energy)


def _reply(now, *events):
    return P.dumps_message(now, events)


def _decode(message):
    return P.decode_events(message)


def test_kill_job_is_acknowledged_by_job_killed_with_progress_and_no_job_completed():
    d10 = Profile("d10", "delay", delay=10.0)
    s = _small([Job(0, "a", 0.0, 1, -1.0, d10), Job(1, "b", 4.0, 1, -1.0, d10)])
    s.start()
    m = s.answer(_reply(0.0))
    assert [e.job_id for e in _decode(m)[1]] == ["w0!a"]
    m = s.answer(_reply(0.0, P.ExecuteJob("w0!a", ProcSet(0))))
    assert _decode(m)[0] == 4.0  # b's submission (not the last submission yet before it)
    # message at t=4: submission of b; kill a (40 % done), start b
    m = s.answer(_reply(4.0, P.KillJob(["w0!a"]), P.ExecuteJob("w0!b", ProcSet(1))))
    assert _decode(m) == (4.0, [P.Notify(P.NO_MORE_STATIC_JOB, timestamp=4.0)])
    m = s.answer(_reply(4.0))
    assert _decode(m) == (4.0, [P.JobKilled(["w0!a"], {"w0!a": ("d10", 0.4)}, timestamp=4.0)])
    m = s.answer(_reply(4.0))
    now, events = _decode(m)
    assert now == 14.0 and [e.job_id for e in events] == ["w0!b"]  # a never JOB_COMPLETED
    assert _decode(s.answer(_reply(14.0)))[1] == [P.SimulationEnds(14.0)]
    assert s.answer(_reply(14.0)) is None
    assert s.engine.state[0].value == "COMPLETED_KILLED"


def test_call_me_later_gives_a_requested_call_message_and_query_an_answer():
    s = _small([Job(0, "a", 0.0, 2, -1.0, Profile("p", "parallel_homogeneous", cpu=2e9))])
    s.start()
    s.answer(_reply(0.0))
    m = s.answer(_reply(0.0, P.ExecuteJob("w0!a", ProcSet((0, 1))), P.CallMeLater(0.5)))
    assert _decode(m)[1] == [P.Notify(P.NO_MORE_STATIC_JOB, timestamp=0.0)]
    m = s.answer(_reply(0.0))
    assert _decode(m) == (0.5, [P.RequestedCall(0.5)])
    m = s.answer(_reply(0.5, P.Query()))
    assert _decode(m) == (0.5, [P.Answer(190.0, timestamp=0.5)])  # 2 hosts x 190 W x 0.5 s
    m = s.answer(_reply(0.5))
    assert [(e.job_id, e.job_state) for e in _decode(m)[1]] == [("w0!a", "COMPLETED_SUCCESSFULLY")]
    assert _decode(m)[0] == 2.0


def test_bad_replies_are_named():
    d1 = Profile("d1", "delay", delay=1.0)
    s = _small([Job(0, "a", 0.0, 1, -1.0, d1)], energy=False)
    s.start()
    s.answer(_reply(0.0))
    with pytest.raises(ProtocolError, match=exact("EXECUTE_JOB names job 'w0!zz', which is not "
                                                  "in workload 'w0'")):
        s.answer(_reply(0.0, P.ExecuteJob("w0!zz", ProcSet(0))))
    with pytest.raises(ProtocolError, match=exact("QUERY consumed_energy needs energy simulation "
                                                  "(start the server with -E)")):
        s.answer(_reply(0.0, P.Query()))
    with pytest.raises(ProtocolError, match=exact(
            "event type 'REGISTER_JOB' is not supported by HDeepRM's Batsim server (supported: "
            "CALL_ME_LATER, EXECUTE_JOB, KILL_JOB, NOTIFY, QUERY, REJECT_JOB, SET_RESOURCE_STATE)")):
        s.answer(json.dumps({"now": 0.0, "events": [
            {"timestamp": 0.0, "type": "REGISTER_JOB", "data": {"job_id": "w0!x"}}]}))


def test_the_reply_to_simulation_ends_must_be_empty():
    s = _small([Job(0, "a", 0.0, 1, -1.0, Profile("d1", "delay", delay=1.0))])
    s.start()
    s.answer(_reply(0.0))
    s.answer(_reply(0.0, P.ExecuteJob("w0!a", ProcSet(0))))  # -> NOTIFY
    s.answer(_reply(0.0))                                     # -> JOB_COMPLETED at 1 s
    assert _decode(s.answer(_reply(1.0)))[1] == [P.SimulationEnds(1.0)]
    with pytest.raises(ProtocolError, match=exact("the reply to SIMULATION_ENDS must have no "
                                                  "event, got 1")):
        s.answer(_reply(1.0, P.CallMeLater(5.0)))


def test_jobs_left_waiting_forever_are_reported():
    s = _small([Job(0, "a", 0.0, 1, -1.0, Profile("d1", "delay", delay=1.0))])
    s.start()
    s.answer(_reply(0.0))                  # JOB_SUBMITTED, scheduler does nothing
    s.answer(_reply(0.0))                  # NOTIFY
    with pytest.raises(SimulationError, match=exact(
            "the simulation has no event left but 1 job(s) never finished (first: 'w0!a', 1 "
            "resources): the decision process left them waiting")):
        s.answer(_reply(0.0))


def test_helpers_build_begins_and_submissions_from_hdeeprm_objects():
    hosts = [HostSpec("h00", (4e9,), (20.0,), (20.0,), 0, {"group": "4Gf"}),
             HostSpec("h01", (4e9,), (20.0,), (20.0,))]
    res = resources_from_hosts(hosts)
    assert res == [P.Resource(0, "h00", "idle", {"role": "", "group": "4Gf"}),
                   P.Resource(1, "h01", "idle", {"role": ""})]
    job = Job(0, "d5_wall5", 0.0, 1, 5.0, Profile("d5", "delay", delay=5.0))
    assert P.encode_message(0.0, [job_submitted(job)])["events"][0]["data"] == {
        "job_id": "w0!d5_wall5",
        "job": {"id": "w0!d5_wall5", "subtime": 0.0, "res": 1, "profile": "d5", "walltime": 5.0}}
    nowall = Job(1, "7", 3.0, 2, -1.0, Profile("p", "parallel_homogeneous", cpu=1e9))
    assert "walltime" not in P.encode_message(3.0, [job_submitted(nowall)])["events"][0]["data"]["job"]
    assert profile_to_json(nowall.profile) == {"type": "parallel_homogeneous", "cpu": 1e9,
                                                 "com": 0.0}
    with pytest.raises(ProtocolError, match=exact("profile type must be 'delay' or "
                                                  "'parallel_homogeneous', got 'composed' "
                                                  "(profile 'seq')")):
        profile_to_json(Profile("seq", "composed"))


def test_a_malformed_endpoint_is_named():
    pytest.importorskip("zmq")
    s = _small([Job(0, "a", 0.0, 1, -1.0, Profile("d1", "delay", delay=1.0))])
    with pytest.raises(OptionsError, match=exact(
            "socket endpoint must be a ZeroMQ endpoint such as 'tcp://127.0.0.1:28000', got "
            "'nonsense' (Invalid argument)")):
        serve(s, "nonsense", timeout=1)
    assert s.nb_messages == 0


def test_export_prefix_is_split_like_batsims():
    assert split_export_prefix("runs/a/out") == (Path("runs/a"), "out")
    assert split_export_prefix("out") == (Path("."), "out")
    assert split_export_prefix("runs/b/") == (Path("runs/b"), "out")


def test_cli_rejects_unsupported_profiles(tmp_path, capsys):
    if not GOLDEN.is_dir():
        pytest.skip(f"golden data not found at {GOLDEN}")
    case = GOLDEN / "small-mixed"
    workload = case / "test_various_profile_types.json"
    try:  # the reader's own message, quoted by the command line
        read_batsim_workload(workload)
    except WorkloadError as exc:
        reason = str(exc)
    else:
        pytest.fail(f"{workload} was read without error")
    code = batsim_main(["-p", str(case / "small_platform.xml"), "-w", str(workload),
                        "-e", str(tmp_path / "out")])
    assert code == 2
    assert capsys.readouterr().err == f"hdeeprm-batsim: error: {reason}\n"
    assert "'parallel'" in reason and str(workload) in reason


@pytest.mark.parametrize("argv, message", [
    (["-w", "b.json"], "exactly one -w workload is supported, got 2"),
    (["--timeout", "0"], "--timeout must be > 0 seconds, got 0.0"),
])
def test_cli_rejects_bad_options(capsys, argv, message):
    with pytest.raises(SystemExit, match=exact("2")):
        batsim_main(["-p", "x.xml", "-w", "a.json", *argv])
    assert capsys.readouterr().err.splitlines()[-1] == f"hdeeprm-batsim: error: {message}"


def test_cli_rejects_the_master_role_real_batsim_aborts_on_and_honours_master_host(tmp_path, capsys):
    # Batsim 4.2.1 appends 'master' (its -m host, default master_host) to a role property the host
    # already has and aborts on "master,master"; HDeepRM's XML export used to write exactly that.
    platform = tmp_path / "p.xml"
    platform.write_text('<?xml version="1.0"?>\n<platform version="4.1"><zone id="z" routing="Full">\n'
                        '<host id="master_host" speed="1Gf"><prop id="role" value="master"/></host>\n'
                        '<host id="h0" speed="1Gf"/></zone></platform>\n')
    workload = tmp_path / "w.json"
    workload.write_text('{"nb_res": 1, "jobs": [], "profiles": {}}')
    code = batsim_main(["-p", str(platform), "-w", str(workload), "-e", str(tmp_path / "out")])
    assert code == 2
    assert capsys.readouterr().err == (
        "hdeeprm-batsim: error: host 'master_host' has role 'master,master' (its role property plus the 'master' "
        "role Batsim gives the --master-host): remove the property; Batsim 4.2.1 accepts one of master, "
        f"compute_node, storage ({platform})\n")
    # With -m naming another host, master_host is the only master (by its property), h0 a compute node.
    assert [h.name for h in read_simgrid_platform(platform, master_host="nobody")] == ["h0"]


def test_reply_timestamps_and_now_are_honoured_as_batsim_does():
    """A decision stamped later (PyBatsim's consume_time) takes effect then; what happens before the reply's
    now comes in the next message, dated that now, each event with its own time, in time order."""
    a = Job(0, "a", 0.0, 1, -1.0, Profile("d0.002", "delay", delay=0.002))
    b = Job(1, "b", 0.008, 1, -1.0, Profile("d1", "delay", delay=1.0))
    s = _small([a, b])
    s.start()
    assert [e.job_id for e in _decode(s.answer(_reply(0.0)))[1]] == ["w0!a"]
    m = s.answer(P.dumps_message(0.01, [P.ExecuteJob("w0!a", ProcSet(0), timestamp=0.005)]))
    now, events = _decode(m)
    assert now == 0.01
    assert [(type(e).__name__, e.timestamp) for e in events] == [("JobCompleted", 0.007), ("JobSubmitted", 0.008)]
    assert (s.engine.start_time[0], s.engine.finish_time[0]) == (0.005, 0.007)
    with pytest.raises(ProtocolError, match="must not be after the message's now"):
        s.answer(P.dumps_message(0.01, [P.ExecuteJob("w0!b", ProcSet(1), timestamp=0.02)]))


def test_clock_batsim_prints_message_times_with_6_decimals():
    h = [HostSpec("h0", (3e9,), (95.0,), (190.0,))]
    wl = Workload([Job(0, "a", 0.0, 1, -1.0, Profile("p", "parallel_homogeneous", cpu=2e9))], nb_res=1)
    s = BatsimSession(Engine(h, wl), wl, h, clock="batsim")
    s.start()
    s.answer(_reply(0.0))
    s.answer(_reply(0.0, P.ExecuteJob("w0!a", ProcSet(0))))   # -> NOTIFY
    m = s.answer(_reply(0.0))
    assert json.loads(m)["now"] == 0.666667 and _decode(m)[1][0].job_id == "w0!a"   # ends at 2/3 s
    with pytest.raises(OptionsError, match="clock must be one of exact, batsim, got 'exactly'"):
        BatsimSession(Engine(h, wl), wl, h, clock="exactly")
