"""The embedded engine against real Batsim 4.2.1 runs (batsim-golden, ideal network).

In-process equivalents of the golden decision processes (golden_schedulers.py) drive the
engine; the outputs are compared by job_id within :data:`TOLERANCES` (per run: times in
seconds, per-job energy absolute J / relative, consumed_joules relative; ``docs/engine.rst``).
"""
from __future__ import annotations

import csv
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from golden_schedulers import run_fcfs, run_pstate_fcfs  # noqa: E402

from hdeeprm.simulation.engine import Engine  # noqa: E402
from hdeeprm.outputs.batsim_csv import write_outputs  # noqa: E402
from hdeeprm.platform.simgrid_reader import read_simgrid_platform  # noqa: E402
from hdeeprm.workload.batsim_json import read_batsim_workload  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from conftest import GOLDEN  # noqa: E402

pytestmark = pytest.mark.skipif(not GOLDEN.is_dir(), reason=f"golden data not found at {GOLDEN}")

TIME_COLUMNS = ("starting_time", "finish_time", "waiting_time", "turnaround_time", "execution_time")
EXACT_COLUMNS = ("workload_name", "profile", "submission_time", "requested_number_of_resources",
                 "requested_time", "success", "final_state", "allocated_resources", "metadata")
SCHEDULE_CHECKED = ("makespan", "max_slowdown", "max_turnaround_time", "max_waiting_time",
                    "mean_slowdown", "mean_turnaround_time", "mean_waiting_time",
                    "nb_computing_machines", "nb_grouped_switches", "nb_jobs", "nb_jobs_finished",
                    "nb_jobs_killed", "nb_jobs_rejected", "nb_jobs_success", "nb_machine_switches",
                    "success_rate", "time_computing", "time_idle", "consumed_joules")


def read_rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as stream:
        return list(csv.DictReader(stream))


def simulate(case: str, platform: str, scheduler, tmp_path: Path, clock: str = "exact", **kwargs) -> Path:
    hosts = read_simgrid_platform(GOLDEN / case / platform)
    engine = Engine(hosts, read_batsim_workload(GOLDEN / case / "workload.json"), clock=clock)
    scheduler(engine, **kwargs)
    write_outputs(tmp_path, engine.result())
    return tmp_path


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    """Outputs of the three reproducible golden runs (simulated once per module)."""
    fast = {4, 5, 6, 7}  # hetero-ptask host property group = 4.4Gf (ids 4-7)
    return {
        "kth2000-delay/fcfs-ideal": simulate("kth2000-delay", "platform_ideal.xml", run_fcfs,
                                             tmp_path_factory.mktemp("kth")),
        "energy-micro/fcfs": simulate("energy-micro", "platform.xml", run_fcfs,
                                      tmp_path_factory.mktemp("micro")),
        "hetero-ptask/pstate-fcfs": simulate("hetero-ptask", "platform.xml", run_pstate_fcfs,
                                             tmp_path_factory.mktemp("hetero"), fast_hosts=fast),
    }


#: run → (absolute time tolerance s, per-job energy tolerance (absolute J, relative), joules rel)
TOLERANCES = {
    "kth2000-delay/fcfs-ideal": (1e-6, (0.0, 1e-6), 1e-6),
    "energy-micro/fcfs": (0.0, (0.0, 0.0), 0.0),
    "hetero-ptask/pstate-fcfs": (1e-4, (1e-3, 0.0), 1e-6),
}


@pytest.mark.parametrize("run", sorted(TOLERANCES))
def test_jobs_match_batsim(runs, run):
    time_tol, (energy_abs, energy_rel), _ = TOLERANCES[run]
    gold = {row["job_id"]: row for row in read_rows(GOLDEN / run / "out_jobs.csv")}
    mine_rows = read_rows(runs[run] / "out_jobs.csv")
    mine = {row["job_id"]: row for row in mine_rows}
    assert len(mine_rows) == len(mine) == len(gold) and mine.keys() == gold.keys()
    for job_id, g in gold.items():
        m = mine[job_id]
        assert {c: m[c] for c in EXACT_COLUMNS} == {c: g[c] for c in EXACT_COLUMNS}, job_id
        for column in TIME_COLUMNS:
            assert float(m[column]) == pytest.approx(float(g[column]), abs=time_tol, rel=0), (job_id, column)
        assert float(m["consumed_energy"]) == pytest.approx(float(g["consumed_energy"]), abs=energy_abs,
                                                            rel=energy_rel), job_id


@pytest.mark.parametrize("run", sorted(TOLERANCES))
def test_schedule_totals_match_batsim(runs, run):
    time_tol, _, joules_rel = TOLERANCES[run]
    (gold,) = read_rows(GOLDEN / run / "out_schedule.csv")
    (mine,) = read_rows(runs[run] / "out_schedule.csv")
    assert list(mine) == list(gold)  # same columns in the same (alphabetical) order
    assert mine["batsim_version"] == "4.2.1"
    for column in SCHEDULE_CHECKED:
        if column == "consumed_joules":
            tol = dict(rel=joules_rel, abs=0)
        elif column.startswith("nb_"):
            tol = dict(rel=0, abs=0)
        else:  # sums over 150 jobs / 8 hosts of values within time_tol
            tol = dict(rel=1e-6, abs=max(time_tol, 1e-6))
        assert float(mine[column]) == pytest.approx(float(gold[column]), **tol), column


def test_energy_micro_files_are_byte_identical_where_batsim_is_exact(runs):
    out = runs["energy-micro/fcfs"]
    for name in ("out_jobs.csv", "out_pstate_changes.csv"):
        assert (out / name).read_text() == (GOLDEN / "energy-micro/fcfs" / name).read_text()
    # machine states: Batsim's %g times show its 1e-15 s protocol delays at t = 0 (4e-15 ...)
    gold = read_rows(GOLDEN / "energy-micro/fcfs/out_machine_states.csv")
    mine = read_rows(out / "out_machine_states.csv")
    assert [(round(float(r["time"]), 6), r["nb_idle"], r["nb_computing"]) for r in mine] == \
           [(round(float(r["time"]), 6), r["nb_idle"], r["nb_computing"]) for r in gold]
    # cumulated energy column, without the epower column (simplified)
    gold = read_rows(GOLDEN / "energy-micro/fcfs/out_consumed_energy.csv")
    mine = read_rows(out / "out_consumed_energy.csv")
    key = ("time", "energy", "event_type", "wattmin")
    assert [[r[k] for k in key] for r in mine] == [[r[k] for k in key] for r in gold]


def test_hetero_pstate_trace_matches_batsim(runs):
    gold = read_rows(GOLDEN / "hetero-ptask/pstate-fcfs/out_pstate_changes.csv")
    mine = read_rows(runs["hetero-ptask/pstate-fcfs"] / "out_pstate_changes.csv")
    assert len(mine) == len(gold) == 1 + 2 * 165
    assert [(r["machine_id"], r["new_pstate"]) for r in mine] == \
           [(r["machine_id"], r["new_pstate"]) for r in gold]
    for m, g in zip(mine, gold):
        assert float(m["time"]) == pytest.approx(float(g["time"]), rel=5e-6, abs=1e-4)
    states = read_rows(runs["hetero-ptask/pstate-fcfs"] / "out_machine_states.csv")
    gold_states = read_rows(GOLDEN / "hetero-ptask/pstate-fcfs/out_machine_states.csv")
    assert [(r["nb_idle"], r["nb_computing"]) for r in states] == \
           [(r["nb_idle"], r["nb_computing"]) for r in gold_states]


def test_kth_realistic_network_invariants(runs):
    """fcfs/ ran on a latency platform: same fates and run times, starts within 0.5 s."""
    gold = {r["job_id"]: r for r in read_rows(GOLDEN / "kth2000-delay/fcfs/out_jobs.csv")}
    mine = {r["job_id"]: r for r in read_rows(runs["kth2000-delay/fcfs-ideal"] / "out_jobs.csv")}
    assert mine.keys() == gold.keys()
    for job_id, g in gold.items():
        m = mine[job_id]
        assert (m["final_state"], m["execution_time"], m["requested_time"]) == \
               (g["final_state"], g["execution_time"], g["requested_time"])
        assert abs(float(m["starting_time"]) - float(g["starting_time"])) < 0.5
    killed = sorted(int(j) for j, r in mine.items() if r["final_state"] == "COMPLETED_WALLTIME_REACHED")
    assert killed == [127, 128, 129, 130, 301, 376, 406, 462, 597, 1213, 1214, 1252, 1253, 1254, 1255,
                      1256, 1257, 1483, 1518, 1803, 1804, 1805, 1833, 1837]


def test_reruns_are_byte_identical(runs, tmp_path):
    again = simulate("energy-micro", "platform.xml", run_fcfs, tmp_path)
    for name in ("out_jobs.csv", "out_machine_states.csv", "out_consumed_energy.csv",
                 "out_pstate_changes.csv"):
        assert (again / name).read_bytes() == (runs["energy-micro/fcfs"] / name).read_bytes()


def test_batsim_clock_keeps_the_golden_runs_and_tightens_hetero_ptask(tmp_path):
    """Batsim's 6-decimal clock (decisions at max(T, printed T)): delay runs unchanged, and every time of
    hetero-ptask as Batsim printed it (the exact clock is within 8e-6 s there)."""
    out = simulate("hetero-ptask", "platform.xml", run_pstate_fcfs, tmp_path / "hetero", clock="batsim",
                   fast_hosts={4, 5, 6, 7})
    gold = {row["job_id"]: row for row in read_rows(GOLDEN / "hetero-ptask/pstate-fcfs/out_jobs.csv")}
    mine = {row["job_id"]: row for row in read_rows(out / "out_jobs.csv")}
    assert mine.keys() == gold.keys()
    for job_id, g in gold.items():
        assert [mine[job_id][c] for c in TIME_COLUMNS + EXACT_COLUMNS] == [g[c] for c in TIME_COLUMNS + EXACT_COLUMNS]
    for case, run in (("kth2000-delay", "fcfs-ideal"), ("energy-micro", "fcfs")):
        platform = "platform_ideal.xml" if case == "kth2000-delay" else "platform.xml"
        out = simulate(case, platform, run_fcfs, tmp_path / case, clock="batsim")
        gold = read_rows(GOLDEN / case / run / "out_jobs.csv")
        mine = {row["job_id"]: row for row in read_rows(out / "out_jobs.csv")}
        assert all([mine[g["job_id"]][c] for c in TIME_COLUMNS + EXACT_COLUMNS] ==
                   [g[c] for c in TIME_COLUMNS + EXACT_COLUMNS] for g in gold)
