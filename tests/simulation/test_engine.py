"""Exact event traces of the embedded engine on small hand-made cases (worked out by hand),
and its energy account and recorder as units."""
from __future__ import annotations

import re

import numpy as np
import pytest

from hdeeprm.errors import PlatformError, SimulationError
from hdeeprm.simulation.energy import EnergyAccount
from hdeeprm.simulation.engine import Engine
from hdeeprm.simulation.recording import Recorder
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.workload.model import DELAY, PARALLEL_HOMOGENEOUS, Job, JobState, Profile, Workload


def host(name: str, pstate: int = 0) -> HostSpec:
    """2 pstates: 2 GFLOP/s (10 W idle, 30 W computing) and 1 GFLOP/s (5 W, 20 W)."""
    return HostSpec(name, (2e9, 1e9), (10.0, 5.0), (30.0, 20.0), pstate)


def delay(seconds: float) -> Profile:
    return Profile(f"d{seconds:g}", DELAY, delay=seconds)


def ph(cpu: float) -> Profile:
    return Profile(f"p{cpu:g}", PARALLEL_HOMOGENEOUS, cpu=cpu)


def workload(*specs: tuple) -> Workload:
    """specs: (id, subtime, res, profile[, walltime])."""
    jobs = [Job(i, s[0], s[1], s[2], s[4] if len(s) > 4 else -1.0, s[3]) for i, s in enumerate(specs)]
    return Workload(jobs)


def ids(jobs) -> list[str]:
    return [job.id for job in jobs]


def exactly(message: str) -> str:
    """A ``match=`` pattern for exactly ``message``."""
    return f"^{re.escape(message)}$"


def test_lockstep_retiming_and_energy_by_hand():
    # j: 4e9 FLOP per host on 2 hosts at 2 GFLOP/s -> would end at 2 s; at t = 1 host 1 goes to
    # 1 GFLOP/s, the job's 2e9 remaining FLOP then take 2 s: end at 3 s.
    # Energy of j: [0,1] 2 x 30 W + [1,3] (30 + 20) W = 60 + 100 = 160 J.
    # d: delay 2 s on host 1 (pstate 1, idle 5 W) from 3 to 5: 10 J; platform at 5 s:
    # 160 + 2 s x (10 + 5) W = 190 J.
    wl = workload(("j", 0.0, 2, ph(4e9)), ("d", 3.0, 1, delay(2.0)))
    engine = Engine([host("a"), host("b")], wl)
    batch = engine.next_batch()
    assert (batch.time, ids(batch.submitted), batch.completed) == (0.0, ["j"], [])
    engine.execute_job(wl.jobs[0], [0, 1])
    engine.call_me_later(1.0)
    assert engine.busy.tolist() == [True, True]
    batch = engine.next_batch()
    assert (batch.time, batch.requested_call, batch.nb_requested_calls) == (1.0, True, 1)
    assert engine.progress(wl.jobs[0]) == 0.5
    assert engine.consumed_energy() == 60.0
    engine.set_pstate([1], 1)
    assert engine.power().tolist() == [30.0, 20.0]
    batch = engine.next_batch()
    assert (batch.time, ids(batch.submitted), ids(batch.completed)) == (3.0, ["d"], ["j"])
    assert engine.state[0] is JobState.COMPLETED_SUCCESSFULLY
    assert engine.consumed_energy() == 160.0
    engine.execute_job(wl.jobs[1], [1])
    assert engine.progress(wl.jobs[1]) == 0.0
    batch = engine.next_batch()
    assert (batch.time, ids(batch.completed)) == (5.0, ["d"])
    assert engine.next_batch() is None
    assert not engine.has_pending_events()
    result = engine.result()
    assert result.consumed_energy.tolist() == [160.0, 10.0]
    assert result.last_completion_energy - result.first_submission_energy == 190.0
    assert result.start_time.tolist() == [0.0, 3.0]
    assert result.finish_time.tolist() == [3.0, 5.0]
    assert result.pstate_changes == [(1.0, (1,), -1), (1.0, (1,), 1)]
    assert result.machine_states == [(0.0, 0, 2), (1.0, 0, 2), (3.0, 2, 0), (3.0, 1, 1), (5.0, 2, 0)]
    assert [row[2] for row in result.energy_log] == ["s", "p", "p", "e", "s", "e"]
    assert (result.nb_grouped_switches, result.nb_machine_switches) == (1, 1)


def test_same_instant_order_submissions_by_string_then_completions_by_start():
    # ids compare as strings "w0!10" < "w0!9" < "w0!a"; all three end at 4 s and are reported
    # in start order (the scheduler starts them in the reverse order).
    wl = workload(("a", 0.0, 1, delay(4.0)), ("9", 0.0, 1, delay(4.0)), ("10", 0.0, 1, ph(8e9)))
    engine = Engine([host("a"), host("b"), host("c")], wl)
    batch = engine.next_batch()
    assert ids(batch.submitted) == ["10", "9", "a"]
    for h, job in enumerate(reversed(batch.submitted)):
        engine.execute_job(job, [h])
    batch = engine.next_batch()
    assert (batch.time, ids(batch.completed)) == (4.0, ["a", "9", "10"])


def test_walltime_rules_delay_equality_kills_computation_equality_succeeds():
    wl = workload(("d_eq", 0.0, 1, delay(5.0), 5.0), ("d_lt", 0.0, 1, delay(4.0), 5.0),
                  ("p_eq", 0.0, 1, ph(10e9), 5.0), ("p_gt", 0.0, 1, ph(12e9), 5.0))
    engine = Engine([host(f"h{i}") for i in range(4)], wl)
    batch = engine.next_batch()
    for h, job in enumerate(batch.submitted):
        engine.execute_job(job, [h])
    assert (engine.next_batch().time, ids(engine.next_batch().completed)) == (4.0, ["d_eq", "p_eq", "p_gt"])
    by_id = {job.id: engine.state[job.index] for job in wl.jobs}
    assert by_id == {"d_eq": JobState.COMPLETED_WALLTIME_REACHED, "d_lt": JobState.COMPLETED_SUCCESSFULLY,
                     "p_eq": JobState.COMPLETED_SUCCESSFULLY, "p_gt": JobState.COMPLETED_WALLTIME_REACHED}
    assert engine.finish_time.tolist() == [5.0, 4.0, 5.0, 5.0]
    # delay jobs draw idle (10 W), computing ones 30 W
    assert engine.result().consumed_energy.tolist() == [50.0, 40.0, 150.0, 150.0]


def test_kill_reject_and_acknowledgements_come_at_the_same_instant():
    wl = workload(("long", 0.0, 1, delay(100.0)), ("big", 0.0, 3, delay(1.0)))
    engine = Engine([host("a"), host("b")], wl, ack_pstates=True)
    batch = engine.next_batch()
    engine.execute_job(wl.jobs[0], [1])
    engine.reject_job(wl.jobs[1], "needs 3 hosts, the platform has 2")
    engine.set_pstate([0, 1], 1)
    batch = engine.next_batch()
    assert (batch.time, batch.pstate_changes, batch.completed) == (0.0, [((0, 1), 1)], [])
    engine.call_me_later(7.0)
    batch = engine.next_batch()
    assert batch.time == 7.0 and batch.requested_call
    engine.kill_job(wl.jobs[0])
    assert not engine.busy[1]
    batch = engine.next_batch()
    assert (batch.time, ids(batch.completed), ids(batch.killed)) == (7.0, ["long"], ["long"])
    engine.kill_job(wl.jobs[0])  # already over: nothing happens
    assert engine.next_batch() is None
    result = engine.result()
    assert [result.state[i] for i in result.completion_order] == [JobState.REJECTED,
                                                                  JobState.COMPLETED_KILLED]
    assert result.reasons == {1: "needs 3 hosts, the platform has 2"}
    assert result.consumed_energy[0] == 35.0  # 7 s at 5 W (idle, pstate 1)


def test_record_false_keeps_job_results_and_drops_logs():
    wl = workload(("x", 0.0, 2, ph(2e9)), ("y", 1.0, 1, delay(1.0)))
    results = []
    for record in (True, False):
        engine = Engine([host("a"), host("b")], wl, record=record)
        batch = engine.next_batch()
        engine.execute_job(batch.submitted[0], np.array([0, 1]))
        while (batch := engine.next_batch()) is not None:
            for job in batch.submitted:
                engine.execute_job(job, [0])
        results.append(engine.result())
    full, lean = results
    assert full.finish_time.tolist() == lean.finish_time.tolist() == [1.0, 2.0]
    assert full.consumed_energy.tolist() == lean.consumed_energy.tolist()
    assert lean.machine_states == lean.energy_log == lean.pstate_changes == []
    assert len(full.machine_states) == 4


def test_energy_off():
    wl = workload(("x", 0.0, 1, delay(1.0)))
    engine = Engine([host("a")], wl, energy=False)
    engine.next_batch()
    engine.execute_job(wl.jobs[0], [0])
    engine.next_batch()
    result = engine.result()
    assert engine.consumed_energy() == 0.0
    assert np.isnan(result.consumed_energy[0]) and result.energy_log == []
    assert np.isnan(result.first_submission_energy) and np.isnan(result.last_completion_energy)
    assert engine.power().tolist() == [0.0]


@pytest.mark.parametrize("action, message", [
    (lambda e, w: e.execute_job(w.jobs[1], [0]),
     "cannot execute job 'later' at t = 0 s: it is not submitted yet"),
    (lambda e, w: e.execute_job(w.jobs[0], [2]),
     "execute job 'now': host ids must be in [0, 1], got [2]"),
    (lambda e, w: e.execute_job(w.jobs[0], [0, 1]),
     "execute job 'now': it requests 1 hosts, got 2 ([0, 1])"),
    (lambda e, w: (e.execute_job(w.jobs[0], [0]), e.execute_job(w.jobs[0], [1])),
     "cannot execute job 'now' at t = 0 s: it is already running"),
    (lambda e, w: (e.execute_job(w.jobs[0], [0]), e.execute_job(w.jobs[2], [0])),
     "execute job 'other' at t = 0 s: hosts [0] are busy"),
    (lambda e, w: e.set_pstate([0], 2), "set_pstate: pstate must be in [0, 1] for hosts [0], got 2"),
    (lambda e, w: e.set_pstate([1, 1], 0), "set_pstate: host ids must be distinct, got [1, 1]"),
    (lambda e, w: e.kill_job(w.jobs[0]), "cannot kill job 'now' at t = 0 s: it is not running"),
    (lambda e, w: e.call_me_later(-1.0), "call_me_later: time must be finite and >= now (0 s), got -1.0"),
])
def test_impossible_commands_raise_simulation_error(action, message):
    wl = workload(("now", 0.0, 1, delay(1.0)), ("other", 0.0, 1, delay(1.0)), ("later", 5.0, 1, delay(1.0)))
    wl.jobs[1], wl.jobs[2] = wl.jobs[2], wl.jobs[1]
    for i, job in enumerate(wl.jobs):
        job.index = i
    engine = Engine([host("a"), host("b")], wl)
    engine.next_batch()
    with pytest.raises(SimulationError, match=exactly(message)):
        action(engine, wl)


def test_unsupported_profile_is_refused():
    wl = workload(("x", 0.0, 1, Profile("comm", PARALLEL_HOMOGENEOUS, cpu=1.0, com=5.0)))
    with pytest.raises(SimulationError, match=exactly(
            "job 'x': profile 'comm' has com = 5.0; only com = 0 is simulated")):
        Engine([host("a")], wl)


@pytest.mark.parametrize("hosts, message", [
    ([], "the platform must have at least one compute host, got 0"),
    ([host("a", pstate=2)], "host 'a': initial pstate must be in [0, 1], got 2"),
    ([HostSpec("b", (1e9, 2e9), (1.0,), (2.0, 3.0))],
     "host 'b' must have as many idle/computing wattages as speeds (>= 1), got 2 speeds, "
     "1 idle and 2 computing wattages"),
])
def test_malformed_hosts_are_refused(hosts, message):
    with pytest.raises(PlatformError, match=exactly(message)):
        Engine(hosts, workload(("x", 0.0, 1, delay(1.0))))


def test_a_job_of_another_workload_is_refused():
    engine = Engine([host("a")], workload(("x", 0.0, 1, delay(1.0))))
    engine.next_batch()
    stranger = workload(("x", 0.0, 1, delay(1.0))).jobs[0]
    with pytest.raises(SimulationError, match=exactly(
            "cannot execute job 'x': it is not a job of this workload")):
        engine.execute_job(stranger, [0])


def current_table(*hosts: tuple[float, float, float]) -> np.ndarray:
    """The engine's current-pstate table (3, nb_hosts) from (speed, idle W, computing W) per host."""
    return np.array(hosts, dtype=float).T.copy()


def test_energy_account_by_hand():
    # Two hosts at 10 W idle / 30 W computing. Job 0 computes on host 0 from t = 1; job 1 is a
    # delay job on host 1 from t = 2; at t = 3 host 0 switches to 5 W idle / 20 W computing;
    # job 0 ends at 5, job 1 at 6.
    cur = current_table((2e9, 10.0, 30.0), (2e9, 10.0, 30.0))
    account = EnergyAccount(cur, nb_jobs=2)
    assert (account.power, account.wattmin, account.energy(1.0)) == (20.0, 20.0, 20.0)
    account.first_submission(1.0)
    account.computation_started(0, np.array([0]), 1.0, idle=10.0, comp=30.0)
    account.delay_started(1, np.array([1]), 2.0)
    assert account.host_power().tolist() == [30.0, 10.0]
    assert account.energy(3.0) == 100.0  # [0, 1] 20 W + [1, 3] 40 W
    assert account.catch_up(0, 2.5) == 45.0  # 1.5 s at 30 W
    account.switch_hosts(np.array([0]), np.array([5.0]))
    cur[:, [0]] = [[1e9], [5.0], [20.0]]  # what the engine does between the two calls
    assert account.wattmin == 15.0
    account.rewatt(0, 3.0, idle=5.0, power=20.0)  # job 0: 60 J at 3 s, 20 W from then
    account.end_switch(3.0)
    assert (account.power, account.energy(5.0)) == (30.0, 160.0)  # + [3, 5] (20 + 10) W
    assert account.host_power().tolist() == [20.0, 10.0]
    account.job_ended(0, np.array([0]), 5.0, computed=True)
    assert account.host_power().tolist() == [5.0, 10.0]
    account.job_ended(1, np.array([1]), 6.0, computed=False)
    assert account.job_energy.tolist() == [100.0, 40.0]  # 60 + 2 s x 20 W; 4 s x 10 W
    assert (account.first_submission_energy, account.last_completion_energy) == (20.0, 175.0)
    assert account.energy(6.0) == 175.0  # + [5, 6] (5 + 10) W


def test_recorder_rows_by_hand():
    cur = current_table((1e9, 10.0, 10.0))
    account = EnergyAccount(cur, nb_jobs=1)
    recorder = Recorder(1, account)
    recorder.job_started(2.0, 1)
    recorder.switching(3.0)
    account.switch_hosts(np.array([0]), np.array([4.0]))
    cur[:, [0]] = [[1e8], [4.0], [4.0]]
    recorder.switched(3.0, (0,), 1, 1)
    account.end_switch(3.0)
    recorder.job_ended(5.0, 0)
    assert recorder.machine_states == [(2.0, 0, 1), (3.0, 0, 1), (5.0, 1, 0)]
    assert recorder.pstate_changes == [(3.0, (0,), -1), (3.0, (0,), 1)]
    # energy 10 W up to 3 s, 4 W after; wattmin changes between the two 'p' rows
    assert recorder.energy_log == [(2.0, 20.0, "s", 10.0), (3.0, 30.0, "p", 10.0),
                                   (3.0, 30.0, "p", 4.0), (5.0, 38.0, "e", 4.0)]


def test_recorder_without_energy_keeps_no_energy_rows():
    recorder = Recorder(3, None)
    recorder.job_started(0.0, 2)
    recorder.switching(1.0)
    recorder.switched(1.0, (2,), 0, 2)
    recorder.job_ended(4.0, 0)
    assert recorder.machine_states == [(0.0, 1, 2), (1.0, 1, 2), (4.0, 3, 0)]
    assert recorder.pstate_changes == [(1.0, (2,), -1), (1.0, (2,), 0)]
    assert recorder.energy_log == []


def test_batsim_clock_decides_at_the_printed_time_and_holds_what_happens_meanwhile():
    """Batsim prints T = 2/3 s as 0.666667 and applies the decisions then (max(T, printed T)); c, ending at
    0.6666668 s in between, ends at its time but is reported in the next batch, at 0.666667."""
    fast = HostSpec("f", (3e9,), (10.0,), (30.0,))
    wl = workload(("a", 0.0, 1, ph(2e9)), ("c", 0.0, 1, ph(2000000400.0)), ("b", 0.0, 1, delay(1.0)))
    runs = {}
    for clock in ("batsim", "exact"):
        engine = Engine([fast, fast], wl, clock=clock)
        engine.next_batch()
        engine.execute_job(wl.jobs[0], [0])
        engine.execute_job(wl.jobs[1], [1])
        batch = engine.next_batch()
        assert ids(batch.completed) == ["a"]
        engine.execute_job(wl.jobs[2], [0])
        rest = []
        while (batch := engine.next_batch()) is not None:
            rest.append((batch.time, ids(batch.completed)))
        runs[clock] = (rest, engine.start_time[2], engine.finish_time.tolist())
    assert runs["batsim"] == ([(0.666667, ["c"]), (1.666667, ["b"])], 0.666667, [2 / 3, 0.6666668, 1.666667])
    assert runs["exact"] == ([(0.6666668, ["c"]), (2 / 3 + 1.0, ["b"])], 2 / 3, [2 / 3, 0.6666668, 2 / 3 + 1.0])
    with pytest.raises(SimulationError, match=exactly("clock must be one of exact, batsim, got 'Batsim'")):
        Engine([fast], wl, clock="Batsim")
