"""Unmodified PyBatsim schedulers against ``hdeeprm-batsim``, compared with real Batsim 4.2.1 runs.

The decision processes are the golden runs' own ``fcfsRef.py`` / ``pstateFcfs.py`` and
pybatsim's bundled ``easyBackfill``, run in a thread of this process exactly as
``pybatsim`` runs them; the server runs in the test's thread over ZeroMQ on a free
loopback port. On an ideal network times must agree to 1e-6 s and energies to a relative
1e-6; with pstate switches (floating-point re-timing) to 1e-4 s and 1e-3. With a realistic
network only what the network cannot shift is compared (``docs/engine.rst``,
"Same-instant event order").
"""
from __future__ import annotations

import csv
import math
import re
import threading

import pytest

from hdeeprm.errors import WorkloadError
from hdeeprm.simulation.batsim.pybatsim_adapter import free_loopback_port
from hdeeprm.run.batsim_server import run_server
from hdeeprm.workload.batsim_json import read_batsim_workload
from tests.conftest import GOLDEN

pytest.importorskip("batsim.batsim", reason="pybatsim is not installed")
from batsim.batsim import Batsim  # noqa: E402
from batsim.tools.launcher import instanciate_scheduler  # noqa: E402

KTH = GOLDEN / "kth2000-delay"


def _need_golden():
    if not GOLDEN.is_dir():
        pytest.skip(f"golden data not found at {GOLDEN}")


def _rows(path):
    with open(path, newline="") as f:
        return {r["job_id"]: r for r in csv.DictReader(f)}


def _schedule(path):
    with open(path, newline="") as f:
        return next(csv.DictReader(f))


def run_pybatsim_case(tmp_path, platform, workload, scheduler, *, energy):
    """Serve ``workload`` to the pybatsim ``scheduler`` (name or file); returns the output folder."""
    endpoint = f"tcp://127.0.0.1:{free_loopback_port()}"
    sched = instanciate_scheduler(str(scheduler), options={})
    errors = []

    def loop():
        try:
            Batsim(sched, endpoint, 30000).start()
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    run_server(platform, workload, endpoint=endpoint, export=tmp_path / "out", energy=energy,
               timeout=30)
    thread.join(30)
    assert not thread.is_alive() and not errors, errors
    return tmp_path


def _compare_exact(ours, gold, *, time_tol, energy_rel):
    assert ours.keys() == gold.keys()
    for jid, g in gold.items():
        o = ours[jid]
        assert o["allocated_resources"] == g["allocated_resources"], jid
        assert o["final_state"] == g["final_state"], jid
        for col in ("starting_time", "finish_time", "waiting_time", "turnaround_time"):
            assert abs(float(o[col]) - float(g[col])) <= time_tol, (jid, col, o[col], g[col])
        assert math.isclose(float(o["consumed_energy"]), float(g["consumed_energy"]),
                            rel_tol=energy_rel, abs_tol=1e-6), jid


@pytest.mark.slow
@pytest.mark.parametrize("run, scheduler", [("easy-ideal", "easyBackfill"),
                                            ("fcfs-ideal", KTH / "fcfsRef.py")])
def test_kth2000_ideal_matches_batsim_job_for_job(tmp_path, run, scheduler):
    _need_golden()
    out = run_pybatsim_case(tmp_path, KTH / "platform_ideal.xml", KTH / "workload.json",
                            scheduler, energy=True)
    _compare_exact(_rows(out / "out_jobs.csv"), _rows(KTH / run / "out_jobs.csv"),
                   time_tol=1e-6, energy_rel=1e-6)
    ours, gold = _schedule(out / "out_schedule.csv"), _schedule(KTH / run / "out_schedule.csv")
    for key in ("makespan", "consumed_joules", "mean_waiting_time", "time_computing",
                "time_idle", "nb_jobs_killed", "nb_jobs_success"):
        assert math.isclose(float(ours[key]), float(gold[key]), rel_tol=1e-9), key


def test_energy_micro_fcfs_matches_batsim(tmp_path):
    _need_golden()
    case = GOLDEN / "energy-micro"
    out = run_pybatsim_case(tmp_path, case / "platform.xml", case / "workload.json",
                            case / "fcfsRef.py", energy=True)
    _compare_exact(_rows(out / "out_jobs.csv"), _rows(case / "fcfs" / "out_jobs.csv"),
                   time_tol=1e-6, energy_rel=1e-6)
    assert float(_schedule(out / "out_schedule.csv")["consumed_joules"]) == 306850.0


def test_hetero_ptask_pstate_fcfs_matches_batsim(tmp_path):
    """pstateFcfs switches pstates while jobs run: needs RESOURCE_STATE_CHANGED acknowledgements."""
    _need_golden()
    case = GOLDEN / "hetero-ptask"
    out = run_pybatsim_case(tmp_path, case / "platform.xml", case / "workload.json",
                            case / "pstateFcfs.py", energy=True)
    _compare_exact(_rows(out / "out_jobs.csv"), _rows(case / "pstate-fcfs" / "out_jobs.csv"),
                   time_tol=1e-4, energy_rel=1e-3)
    ours = _schedule(out / "out_schedule.csv")
    gold = _schedule(case / "pstate-fcfs" / "out_schedule.csv")
    assert math.isclose(float(ours["consumed_joules"]), float(gold["consumed_joules"]),
                        rel_tol=1e-6)
    assert (ours["nb_grouped_switches"], ours["nb_machine_switches"]) == ("165", "303")


def _check_invariants(ours, gold):
    """What an ideal-network engine shares with a realistic-network Batsim run."""
    assert ours.keys() == gold.keys()
    for jid, g in gold.items():
        o = ours[jid]
        for col in ("final_state", "success", "execution_time", "requested_time",
                    "requested_number_of_resources", "submission_time", "profile"):
            assert o[col] == g[col], (jid, col)


@pytest.mark.slow
@pytest.mark.parametrize("run, scheduler", [("easy", "easyBackfill"), ("fcfs", KTH / "fcfsRef.py")])
def test_kth2000_realistic_network_invariants(tmp_path, run, scheduler):
    _need_golden()
    out = run_pybatsim_case(tmp_path, KTH / "platform.xml", KTH / "workload.json", scheduler,
                            energy=True)
    ours, gold = _rows(out / "out_jobs.csv"), _rows(KTH / run / "out_jobs.csv")
    _check_invariants(ours, gold)
    if run == "fcfs":  # network offsets accumulate along chains of waiting jobs: < 0.24 s
        assert max(abs(float(ours[j]["starting_time"]) - float(g["starting_time"]))
                   for j, g in gold.items()) < 0.5
    o, g = _schedule(out / "out_schedule.csv"), _schedule(KTH / run / "out_schedule.csv")
    for key in ("nb_jobs", "nb_jobs_finished", "nb_jobs_success", "nb_jobs_killed",
                "nb_jobs_rejected"):
        assert o[key] == g[key], key
    assert math.isclose(float(o["time_computing"]), float(g["time_computing"]), rel_tol=1e-9)


def test_small_mixed_delays_invariants(tmp_path):
    _need_golden()
    case = GOLDEN / "small-mixed"
    out = run_pybatsim_case(tmp_path, case / "small_platform.xml", case / "test_delays.json",
                            "easyBackfill", energy=False)
    ours, gold = _rows(out / "out_jobs.csv"), _rows(case / "delays-easy" / "out_jobs.csv")
    _check_invariants(ours, gold)
    assert {r["consumed_energy"] for r in ours.values()} == {"-1.000000"}
    sched = _schedule(out / "out_schedule.csv")
    assert (sched["nb_jobs_success"], sched["consumed_joules"]) == ("10", "0.000000")


def test_small_mixed_various_profiles_are_refused_by_name(tmp_path):
    """Profiles with communication or sequences need SimGrid's network model: a clear error."""
    _need_golden()
    case = GOLDEN / "small-mixed"
    workload = case / "test_various_profile_types.json"
    try:  # the reader's own message: run_server must pass it on unchanged
        read_batsim_workload(workload)
    except WorkloadError as exc:
        text = str(exc)
    else:
        pytest.fail(f"{workload} was read without error")
    assert str(workload) in text
    assert any(t in text for t in ("'parallel'", "'composed'", "'parallel_homogeneous_total'")), \
        text
    with pytest.raises(WorkloadError, match=f"^{re.escape(text)}$"):
        run_server(case / "small_platform.xml", workload,
                   endpoint=f"tcp://127.0.0.1:{free_loopback_port()}", export=tmp_path / "out",
                   timeout=1)
    assert not (tmp_path / "out_jobs.csv").exists()
