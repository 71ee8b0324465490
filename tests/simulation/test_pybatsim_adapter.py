"""HDeepRM decision code driving a Batsim binary through the PyBatsim adapter.

``hdeeprm-batsim`` stands in for the binary; the same test runs against a real
``batsim`` when one is on PATH. The adapter's own logic is also tested with a
stand-in for PyBatsim's ``Batsim`` object (no socket, no PyBatsim).
"""
from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
from collections import deque
from types import SimpleNamespace

import pytest
from procset import ProcSet

from hdeeprm.errors import HDeepRMError, ProtocolError, SimulationError, WorkloadError
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.platform.simgrid_reader import read_simgrid_platform
from hdeeprm.simulation.batsim.pybatsim_adapter import (PYBATSIM_INSTALL, PyBatsimAdapter,
                                                        find_batsim, load_pybatsim,
                                                        run_with_batsim)
from hdeeprm.workload.batsim_json import read_batsim_workload
from hdeeprm.workload.model import Job, Profile, Workload
from tests.conftest import GOLDEN, ROOT

CASE = GOLDEN / "energy-micro"
BINARIES = [
    "hdeeprm-batsim",
    pytest.param("batsim", marks=pytest.mark.skipif(shutil.which("batsim") is None,
                                                    reason="no real batsim on PATH")),
]


def fcfs_factory(nb_hosts, calls):
    """A strict FCFS on the SimulatorPort: lowest free ids, the head job blocks the queue."""
    def factory(port):
        free = list(range(nb_hosts))
        queue = deque()
        alloc = {}

        def on_batch(now, submitted, completed):
            calls.append((now, [j.id for j in submitted], [j.id for j in completed],
                          {j.id: round(port.progress(j), 6) for j in port.running}))
            for job in completed:
                free.extend(alloc.pop(job.index))
                port.running.remove(job)
            free.sort()
            queue.extend(submitted)
            while queue and queue[0].res <= len(free):
                job = queue.popleft()
                alloc[job.index], free[:job.res] = free[:job.res], []
                port.execute_job(job, alloc[job.index])
                port.running.append(job)
        port.running = []
        return on_batch
    return factory


def exact(message):
    """A pytest.raises ``match`` pattern that accepts ``message`` and nothing else."""
    return f"^{re.escape(message)}$"


def _need_pybatsim_and_golden(monkeypatch):
    pytest.importorskip("batsim.batsim", reason="pybatsim is not installed")
    if not GOLDEN.is_dir():
        pytest.skip(f"golden data not found at {GOLDEN}")
    # hdeeprm-batsim runs as a subprocess: make it import this checkout, whichever is installed.
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT),
                                                                  os.environ.get("PYTHONPATH")])))


@pytest.mark.parametrize("binary", BINARIES)
def test_fcfs_on_the_port_reproduces_batsims_fcfs_run(tmp_path, monkeypatch, binary):
    _need_pybatsim_and_golden(monkeypatch)
    hosts = read_simgrid_platform(CASE / "platform.xml")
    workload = read_batsim_workload(CASE / "workload.json")
    calls = []
    run = run_with_batsim(workload, CASE / "platform.xml", CASE / "workload.json",
                          fcfs_factory(len(hosts), calls), batsim=binary, outdir=tmp_path,
                          energy=True, hosts=hosts, timeout=60)
    # one on_batch per Batsim message with submissions or completions, in Batsim's order
    assert [(t, s, c) for t, s, c, _ in calls] == [
        (0.0, ["d10", "d20_wall5", "d5_wall5", "ph10", "ph20_wall5", "ph5_wall5"], []),
        (3.0, ["d4_late"], []),
        (5.0, [], ["d20_wall5", "d5_wall5", "ph20_wall5", "ph5_wall5"]),
        (7.0, [], ["d4_late"]),
        (10.0, [], ["d10", "ph10"]),
        (12.0, ["ph_big"], []),
        (22.0, [], ["ph_big"])]
    # progress estimates at t = 3 s: delay 3/10, 3/20, 3/5; parallel_homogeneous FLOP at 1 Gflop/s
    assert calls[1][3] == {"d10": 0.3, "d20_wall5": 0.15, "d5_wall5": 0.6, "ph10": 0.3,
                           "ph20_wall5": 0.15, "ph5_wall5": 0.6}
    sched = run.scheduler
    assert sched.final_state[workload.jobs[-1].index] == "COMPLETED_SUCCESSFULLY"
    assert sched.nb_batches == 7 and sched.ended
    with open(run.outdir / "out_jobs.csv", newline="") as f:
        ours = {r["job_id"]: r for r in csv.DictReader(f)}
    with open(CASE / "fcfs" / "out_jobs.csv", newline="") as f:
        gold = {r["job_id"]: r for r in csv.DictReader(f)}
    cols = ("allocated_resources", "final_state", "starting_time", "finish_time", "consumed_energy")
    assert {j: [r[c] for c in cols] for j, r in ours.items()} == \
        {j: [r[c] for c in cols] for j, r in gold.items()}


def test_missing_batsim_binary_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(HDeepRMError, match=exact("no `batsim` binary found on PATH; install "
                                                 "Batsim 4.2.1 or pass --batsim PATH")):
        find_batsim("batsim")
    with pytest.raises(HDeepRMError, match=exact("batsim binary '/nowhere/batsim' not found or "
                                                 "not executable; install Batsim 4.2.1 or pass "
                                                 "--batsim PATH")):
        find_batsim("/nowhere/batsim")


def test_a_failing_batsim_is_reported_with_its_log(tmp_path, monkeypatch):
    """hdeeprm-batsim refuses a profile with communication: the run fails fast, not hangs."""
    _need_pybatsim_and_golden(monkeypatch)
    sm = GOLDEN / "small-mixed"
    workload = read_batsim_workload(sm / "test_delays.json")
    refused = sm / "test_various_profile_types.json"
    try:  # the reader's own message, which hdeeprm-batsim prints and the adapter quotes
        read_batsim_workload(refused)
    except WorkloadError as exc:
        reason = str(exc)
    else:
        pytest.fail(f"{refused} was read without error")
    binary = shutil.which("hdeeprm-batsim")
    message = (f"Batsim failed (exit code 2): hdeeprm-batsim: error: {reason} (command: {binary} "
               f"-p {sm / 'small_platform.xml'} -w {refused} -s tcp://127.0.0.1:PORT "
               f"-e {tmp_path / 'out'})")
    with pytest.raises(HDeepRMError, match=exact(message).replace("PORT", r"\d+")):
        run_with_batsim(workload, sm / "small_platform.xml", refused, fcfs_factory(4, []),
                        batsim="hdeeprm-batsim", outdir=tmp_path, energy=False, timeout=30)


# ---------------------------------------------------------------- without PyBatsim or sockets
def test_importing_hdeeprm_and_the_adapter_does_not_need_pybatsim():
    code = ("import sys; sys.modules['batsim'] = None; import hdeeprm, "
            "hdeeprm.simulation.batsim.pybatsim_adapter, hdeeprm.simulation.batsim.server, "
            "hdeeprm.cli.batsim; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)
    assert (done.returncode, done.stdout, done.stderr) == (0, "ok\n", "")


def test_missing_pybatsim_gives_the_install_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "batsim.batsim", None)
    with pytest.raises(HDeepRMError, match=exact(
            f"pybatsim cannot be imported (import of batsim.batsim halted; None in sys.modules); "
            f"install it with: {PYBATSIM_INSTALL}")):
        load_pybatsim()
    assert PYBATSIM_INSTALL.endswith("pip install --no-deps pybatsim==3.2.1")


class FakeBatsim:
    """Stands in for PyBatsim's ``Batsim`` object: the attributes and commands the adapter uses."""

    def __init__(self, nb_hosts):
        self.nb_compute_resources = nb_hosts
        self.no_more_static_jobs = False
        self.jobs = {}
        self.now = 0.0
        self.sent = []

    def time(self):
        return self.now

    def execute_job(self, pyjob):
        self.sent.append(("EXECUTE_JOB", pyjob.id, str(pyjob.allocation)))

    def reject_jobs(self, pyjobs):
        self.sent.append(("REJECT_JOB", [j.id for j in pyjobs]))

    def kill_jobs(self, pyjobs):
        self.sent.append(("KILL_JOB", [j.id for j in pyjobs]))

    def set_resource_state(self, resources, state):
        self.sent.append(("SET_RESOURCE_STATE", str(resources), state))

    def wake_me_up_at(self, when):
        self.sent.append(("CALL_ME_LATER", when))

    def submit(self, adapter, job_id):
        self.jobs[job_id] = pyjob = SimpleNamespace(id=job_id, allocation=None)
        adapter.onJobSubmission(pyjob)
        return pyjob


HOSTS2 = [HostSpec("h0", (2e9, 1e9), (10.0, 5.0), (20.0, 10.0)),
          HostSpec("h1", (2e9, 1e9), (10.0, 5.0), (20.0, 10.0))]


def _adapter(jobs, hosts=HOSTS2, is_alive=None):
    calls = []

    def factory(port):
        return lambda now, submitted, completed: calls.append(
            (now, [j.id for j in submitted], [j.id for j in completed]))
    adapter = PyBatsimAdapter(Workload(jobs, nb_res=2), factory, hosts=hosts, is_alive=is_alive)
    adapter.bs = FakeBatsim(2)
    adapter.onSimulationBegins()
    return adapter, calls


def test_the_adapter_batches_a_message_and_commands_through_bs():
    ph = Profile("ph", "parallel_homogeneous", cpu=8e9)
    jobs = [Job(0, "a", 0.0, 2, -1.0, ph), Job(1, "b", 0.0, 1, -1.0, Profile("d", "delay", delay=4.0)),
            Job(2, "c", 0.0, 1, -1.0, ph)]
    adapter, calls = _adapter(jobs)
    bs = adapter.bs
    adapter.onBeforeEvents()
    a, b, c = (bs.submit(adapter, f"w0!{x}") for x in "abc")
    adapter.onNoMoreEvents()
    assert calls == [(0.0, ["a", "b", "c"], [])]
    adapter.execute_job(jobs[0], [0, 1])
    adapter.reject_job(jobs[2], "too big")
    adapter.call_me_later(2.0)
    assert bs.sent == [("EXECUTE_JOB", "w0!a", "0-1"), ("REJECT_JOB", ["w0!c"]), ("CALL_ME_LATER", 2.0)]
    assert adapter.rejected == {2: "too big"} and adapter.start_time == {0: 0.0}
    bs.now = 2.0
    adapter.onRequestedCall()
    adapter.onNoMoreEvents()                   # a call alone makes a batch
    assert calls[-1] == (2.0, [], [])
    assert adapter.progress(jobs[0]) == 0.5    # 8 GFLOP at 2 GFLOP/s: 2 s of 4
    adapter.set_pstate([0], 1)                 # host 0 now 1 GFLOP/s: estimated 8 s in all
    assert bs.sent[-1] == ("SET_RESOURCE_STATE", "0", 1)
    assert adapter.progress(jobs[0]) == 0.25 and adapter.progress(jobs[1]) == 0.0
    assert adapter.has_pending_events()        # a runs, static jobs may still come
    adapter.onMachinePStateChanged((0, 0), "1")
    adapter.onNoMoreEvents()                   # an acknowledgement alone makes no batch
    assert len(calls) == 2
    bs.now = 9.0
    a.finish_time, a.job_state = 9.0, SimpleNamespace(name="COMPLETED_SUCCESSFULLY")
    adapter.onJobCompletion(a)
    adapter.onNoMoreJobsInWorkloads()
    bs.no_more_static_jobs = True
    adapter.onNoMoreEvents()
    assert calls[-1] == (9.0, [], ["a"])
    assert (adapter.final_state, adapter.finish_time, adapter.progress(jobs[0])) == (
        {0: "COMPLETED_SUCCESSFULLY"}, {0: 9.0}, 1.0)
    assert not adapter.has_pending_events() and adapter.nb_batches == 3
    adapter.onReportEnergyConsumed(123.5)
    adapter.onSimulationEnds()
    assert adapter.consumed_energy == 123.5 and adapter.ended


def test_a_killed_job_ends_now_with_completed_killed():
    jobs = [Job(0, "a", 0.0, 1, -1.0, Profile("d", "delay", delay=10.0))]
    adapter, calls = _adapter(jobs)
    a = adapter.bs.submit(adapter, "w0!a")
    adapter.onNoMoreEvents()
    adapter.execute_job(jobs[0], [1])
    adapter.kill_job(jobs[0])
    assert adapter.bs.sent[-1] == ("KILL_JOB", ["w0!a"])
    adapter.bs.now = 3.0
    adapter.onJobsKilled([a])
    adapter.onNoMoreEvents()
    assert calls[-1] == (3.0, [], ["a"])
    assert adapter.final_state == {0: "COMPLETED_KILLED"} and adapter.finish_time == {0: 3.0}


def test_the_adapter_names_what_it_cannot_handle():
    jobs = [Job(0, "a", 0.0, 1, -1.0, Profile("d", "delay", delay=1.0))]
    adapter, _ = _adapter(jobs, is_alive=lambda: False)
    with pytest.raises(ProtocolError, match=exact(
            "Batsim submitted job 'w1!a', which is not in workload 'w0' ()")):
        adapter.onJobSubmission(SimpleNamespace(id="w1!a"))
    with pytest.raises(SimulationError, match=exact("job 'w0!a' was not submitted by Batsim")):
        adapter.execute_job(jobs[0], [0])
    with pytest.raises(SimulationError, match=exact("Batsim stopped before the end of the "
                                                    "simulation")):
        adapter.onDeadlock()
    with pytest.raises(ProtocolError, match=exact(
            "Batsim sent ADD_RESOURCES, which HDeepRM's decision system does not handle (no "
            "dynamic resources, job messages or external events)")):
        adapter.onAddResources(ProcSet(3))
    with pytest.raises(AttributeError, match=exact(
            "'PyBatsimAdapter' object has no attribute 'onSomethingElse'")):
        adapter.onSomethingElse()
    adapter.bs.nb_compute_resources = 3
    with pytest.raises(ProtocolError, match=exact("Batsim has 3 compute resources, the HDeepRM "
                                                  "platform 2")):
        adapter.onSimulationBegins()


@pytest.mark.parametrize("messages, core_of_e", [
    ([["a", "c"]], "2"),      # one message, as the embedded engine batches: e takes the fastest free core
    ([["c"], ["a"]], "0"),    # Batsim split them (docs/engine.rst): e starts at the first, on the slow core
    ([["a"], ["c"]], "2"),
])
def test_same_time_completions_split_in_two_messages_give_two_decisions(toy_hierarchy, messages, core_of_e):
    # The toy platform: cores 0-1 at 4 GFLOP/s, 2-3 at 4.4. Policy first-high_gflops. a, b, c, d fill the
    # cores at t = 0 (a -> 2, b -> 3, c -> 0, d -> 1), e waits from t = 1; a and c both end at t = 10.
    from hdeeprm.agents.base import ClassicAgent
    from hdeeprm.decision.actions import action_index
    from hdeeprm.decision.manager import WorkloadManager
    from hdeeprm.decision.view import StateView
    from hdeeprm.run.loop import decide

    delay = Profile("d", "delay", delay=100.0)
    jobs = [Job(i, name, 0.0 if name != "e" else 1.0, 1, -1.0, delay) for i, name in enumerate("abcde")]
    workload = Workload(jobs, nb_res=4)

    def factory(port):
        manager = WorkloadManager(port, toy_hierarchy, actions=[action_index("first", "high_gflops")],
                                  has_future_events=port.has_pending_events, jobs=jobs)
        view = StateView(manager, workload, port.progress)

        def on_batch(now, submitted, completed):
            if manager.on_batch(now, submitted, completed):
                decide(manager, view, ClassicAgent(), None, None)
        return on_batch

    adapter = PyBatsimAdapter(workload, factory, hosts=toy_hierarchy.host_specs())
    adapter.bs = bs = FakeBatsim(4)
    adapter.onSimulationBegins()
    pyjobs = {name: bs.submit(adapter, f"w0!{name}") for name in "abcd"}
    adapter.onNoMoreEvents()

    def starts():   # the EXECUTE_JOB commands sent so far (pstate changes left out)
        return [s for s in bs.sent if s[0] == "EXECUTE_JOB"]
    assert starts() == [("EXECUTE_JOB", "w0!a", "2"), ("EXECUTE_JOB", "w0!b", "3"),
                        ("EXECUTE_JOB", "w0!c", "0"), ("EXECUTE_JOB", "w0!d", "1")]
    bs.now = 1.0
    bs.submit(adapter, "w0!e")
    adapter.onNoMoreEvents()                  # nothing free: e waits
    assert len(starts()) == 4
    bs.now = 10.0
    for message in messages:
        for name in message:
            pyjobs[name].finish_time, pyjobs[name].job_state = 10.0, SimpleNamespace(name="COMPLETED_SUCCESSFULLY")
            adapter.onJobCompletion(pyjobs[name])
        adapter.onNoMoreEvents()
    assert starts()[4:] == [("EXECUTE_JOB", "w0!e", core_of_e)]


def test_the_embedded_engine_gives_same_time_completions_in_one_batch(toy_hierarchy, toy_options):
    # The scenario above on the embedded engine: a and c end together at t = 10, one decision, e on core 2.
    from hdeeprm.agents.base import ClassicAgent
    from hdeeprm.decision.actions import action_index
    from hdeeprm.run.episode import run_episode

    jobs = [Job(i, name, 0.0 if name != "e" else 1.0, 1, -1.0,
                Profile("d", "delay", delay=10.0 if name in "ac" else 100.0)) for i, name in enumerate("abcde")]
    options = toy_options.replace(actions=[action_index("first", "high_gflops")], seed=0)
    episode, _ = run_episode(toy_hierarchy, Workload(jobs, nb_res=4), options, ClassicAgent())
    result = episode.engine.result()
    assert (result.start_time[4], tuple(result.allocation[4])) == (10.0, (2,))
