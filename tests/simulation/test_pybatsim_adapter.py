"""HDeepRM decision code driving a Batsim binary through the PyBatsim adapter.

``hdeeprm-batsim`` stands in for the binary; the same test runs against a real
``batsim`` when one is on PATH.
"""
from __future__ import annotations

import csv
import shutil
from collections import deque

import pytest

from hdeeprm.errors import HDeepRMError
from hdeeprm.simulation.batsim.pybatsim_adapter import find_batsim, run_with_batsim
from hdeeprm.platform.simgrid_reader import read_simgrid_platform
from hdeeprm.workload.batsim_json import read_batsim_workload
from tests.conftest import GOLDEN

pytest.importorskip("batsim.batsim", reason="pybatsim is not installed")

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


@pytest.mark.parametrize("binary", BINARIES)
def test_fcfs_on_the_port_reproduces_batsims_fcfs_run(tmp_path, binary):
    if not GOLDEN.is_dir():
        pytest.skip(f"golden data not found at {GOLDEN}")
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
    with pytest.raises(HDeepRMError) as err:
        find_batsim("batsim")
    assert str(err.value) == ("no `batsim` binary found on PATH; install Batsim 4.2.1 or pass "
                              "--batsim PATH")
    with pytest.raises(HDeepRMError, match="batsim binary '/nowhere/batsim' not found"):
        find_batsim("/nowhere/batsim")


def test_a_failing_batsim_is_reported_with_its_log(tmp_path):
    """hdeeprm-batsim refuses a profile with communication: the run fails fast, not hangs."""
    if not GOLDEN.is_dir():
        pytest.skip(f"golden data not found at {GOLDEN}")
    sm = GOLDEN / "small-mixed"
    workload = read_batsim_workload(sm / "test_delays.json")
    with pytest.raises(HDeepRMError) as err:
        run_with_batsim(workload, sm / "small_platform.xml", sm / "test_various_profile_types.json",
                        fcfs_factory(4, []), batsim="hdeeprm-batsim", outdir=tmp_path,
                        energy=False, timeout=30)
    assert str(err.value).startswith("Batsim failed (exit code 2): hdeeprm-batsim: error:")
