"""Batsim's 6-decimal protocol clock, split submissions and PyBatsim's ``consume_time`` against real Batsim 4.2.1.

Three golden cases (``batsim-golden/README.md``), compared job for job (start and finish within 1e-6 s, the
CSV precision; same allocation and final state):

* ``hdeeprm-easy-clock``: HDeepRM's EASY on the quickstart inputs, ``hdeeprm-launch`` with ``"clock":
  "batsim"`` (decisions at ``max(T, printed T)``) gives Batsim's schedule; the exact clock parts from it at
  t = 138371.562592 s, as the case README says.
* ``split-submissions``: ``shortest-low_power`` on 3000 SDSC-SP2 jobs; real Batsim delivers two same-time
  pairs in two messages each, the engine in one batch: jobs 829 and 830 differ, and the run names both
  instants (at the info level: the exact clock faces no Batsim).
* ``pybatsim-filler``: PyBatsim's bundled ``fillerSched`` (``consume_time(0.005)`` per event) and
  ``easyBackfill`` through ``hdeeprm-batsim``.
"""
from __future__ import annotations

import csv
import json
import math
from pathlib import Path

import pytest

from hdeeprm.cli.launch import main as launch_main
from tests.conftest import GOLDEN
from tests.simulation.test_server_golden import run_pybatsim_case

CLOCK = GOLDEN / "hdeeprm-easy-clock"
SPLIT = GOLDEN / "split-submissions"
FILLER = GOLDEN / "pybatsim-filler"
JOB_COLUMNS = ("allocated_resources", "final_state")
SCHEDULE_TIMES = ("makespan", "mean_waiting_time", "max_waiting_time", "mean_slowdown", "max_slowdown",
                  "mean_turnaround_time", "time_computing", "time_idle")
SCHEDULE_COUNTS = ("nb_jobs", "nb_jobs_success", "nb_jobs_killed", "nb_grouped_switches", "nb_machine_switches")


def _need(case: Path) -> None:
    if not case.is_dir():
        pytest.skip(f"golden case not found at {case}")


def _rows(path: Path) -> dict[str, dict[str, str]]:
    with open(path, newline="") as f:
        return {r["job_id"]: r for r in csv.DictReader(f)}


def _schedule(path: Path) -> dict[str, str]:
    with open(path, newline="") as f:
        return next(csv.DictReader(f))


def differing(ours: dict, gold: dict, tol: float = 1e-6) -> list[str]:
    """Job ids whose allocation, final state, start or finish (beyond ``tol`` s) differ."""
    assert ours.keys() == gold.keys()
    out = []
    for jid, g in gold.items():
        o = ours[jid]
        if [o[c] for c in JOB_COLUMNS] != [g[c] for c in JOB_COLUMNS] or any(
                abs(float(o[c]) - float(g[c])) > tol + 1e-9 for c in ("starting_time", "finish_time")):
            out.append(jid)
    return out


def _launch(tmp_path: Path, options: Path, clock: str | None, name: str, *flags: str, **paths: Path) -> Path:
    """``hdeeprm-launch OPTIONS -o OUT --quiet [FLAGS]`` on a copy of the case's options with ``clock`` set."""
    data = json.loads(options.read_text())
    data.update({k: str(v) for k, v in paths.items()})
    if clock is not None:
        data["clock"] = clock
    copy = tmp_path / f"{name}.json"
    copy.write_text(json.dumps(data))
    out = tmp_path / name
    assert launch_main([str(copy), "-o", str(out), "--quiet", *flags]) == 0
    return out


# --------------------------------------------------------------------------- hdeeprm-easy-clock
@pytest.fixture(scope="module")
def easy_clock(tmp_path_factory) -> dict[str, Path]:
    _need(CLOCK)
    tmp = tmp_path_factory.mktemp("easy-clock")
    paths = {"workload_file_path": CLOCK / "lublin_500_100.swf", "platform_file_path": CLOCK / "gaia_mini.json"}
    return {clock: _launch(tmp, CLOCK / "options_easy.json", clock, clock, **paths) for clock in ("batsim", "exact")}


def test_easy_clock_batsim_clock_matches_real_batsim_job_for_job(easy_clock):
    ours, gold = _rows(easy_clock["batsim"] / "out_jobs.csv"), _rows(CLOCK / "easy" / "out_jobs.csv")
    assert len(gold) == 500 and differing(ours, gold) == []
    for jid, g in gold.items():
        assert math.isclose(float(ours[jid]["consumed_energy"]), float(g["consumed_energy"]), rel_tol=1e-6), jid
    mine, real = _schedule(easy_clock["batsim"] / "out_schedule.csv"), _schedule(CLOCK / "easy" / "out_schedule.csv")
    for key in SCHEDULE_TIMES:
        assert float(mine[key]) == pytest.approx(float(real[key]), rel=1e-7, abs=1e-6), key
    assert [mine[k] for k in SCHEDULE_COUNTS] == [real[k] for k in SCHEDULE_COUNTS]
    assert float(mine["consumed_joules"]) == pytest.approx(float(real["consumed_joules"]), rel=1e-9)


def test_easy_clock_other_files_match_real_batsim(easy_clock):
    out, gold = easy_clock["batsim"], CLOCK / "easy"

    def read(folder, name):
        with open(folder / name, newline="") as f:
            return list(csv.DictReader(f))
    mine, real = read(out, "out_pstate_changes.csv"), read(gold, "out_pstate_changes.csv")
    assert [(r["machine_id"], r["new_pstate"]) for r in mine] == [(r["machine_id"], r["new_pstate"]) for r in real]
    # %g times; Batsim's first switches carry its 1e-15 s protocol delays (4e-15 where the engine writes 0)
    assert all(math.isclose(float(m["time"]), float(r["time"]), rel_tol=5e-6, abs_tol=1e-14)
               for m, r in zip(mine, real))
    mine, real = read(out, "out_machine_states.csv"), read(gold, "out_machine_states.csv")
    assert [(r["nb_idle"], r["nb_computing"]) for r in mine] == [(r["nb_idle"], r["nb_computing"]) for r in real]
    mine, real = read(out, "out_consumed_energy.csv"), read(gold, "out_consumed_energy.csv")
    assert [(r["time"], r["event_type"], r["wattmin"]) for r in mine] == \
           [(r["time"], r["event_type"], r["wattmin"]) for r in real]
    assert all(math.isclose(float(m["energy"]), float(r["energy"]), rel_tol=1e-9, abs_tol=1e-6)
               for m, r in zip(mine, real))


def test_easy_clock_exact_clock_parts_where_the_case_readme_says(easy_clock):
    """The default exact clock: 223/500 at 1e-5 s, first difference at 138371.562592 s (job 228)."""
    ours, gold = _rows(easy_clock["exact"] / "out_jobs.csv"), _rows(CLOCK / "easy" / "out_jobs.csv")
    bad = differing(ours, gold, tol=1e-5)
    assert len(gold) - len(bad) == 223
    starts = sorted((float(gold[j]["starting_time"]), j) for j in bad
                    if ours[j]["allocated_resources"] != gold[j]["allocated_resources"])
    assert starts[0] == (138371.562592, "228")


# --------------------------------------------------------------------------- split-submissions
def test_split_submissions_differ_only_where_batsim_split_and_are_named(shared, tmp_path, capsys):
    _need(SPLIT)
    # the exact clock faces no Batsim: the instants are named at the info level (-v), not in a warning
    out = _launch(tmp_path, SPLIT / "options_slp.json", None, "slp", "-v", platform_file_path=SPLIT / "gaia.json")
    err = capsys.readouterr().err
    ours, gold = _rows(out / "out_jobs.csv"), _rows(SPLIT / "slp" / "out_jobs.csv")
    assert len(gold) == 3000 and sorted(differing(ours, gold)) == ["829", "830"]
    (line,) = [x for x in err.splitlines() if "deliver in two messages" in x]
    assert line.startswith("hdeeprm-launch: info: 5 instant(s) with 2+ jobs submitted together")
    assert "t = 532099.000000, 620202.000000, " in line
    assert "docs/engine.rst, \"Split submissions\"" in line


# --------------------------------------------------------------------------- pybatsim-filler
@pytest.mark.slow
@pytest.mark.parametrize("run, scheduler", [("filler", "fillerSched"), ("easy", "easyBackfill")])
def test_pybatsim_filler_matches_real_batsim_through_hdeeprm_batsim(tmp_path, run, scheduler):
    """fillerSched stamps decisions 5, 10, 15 ms late (consume_time): the server starts the jobs then."""
    _need(FILLER)
    out = run_pybatsim_case(tmp_path, FILLER / "platform.xml", FILLER / "workload.json", scheduler, energy=True)
    ours, gold = _rows(out / "out_jobs.csv"), _rows(FILLER / run / "out_jobs.csv")
    assert len(gold) == 1000 and differing(ours, gold) == []
    for jid, g in gold.items():
        assert ours[jid]["waiting_time"] == g["waiting_time"], jid
        assert math.isclose(float(ours[jid]["consumed_energy"]), float(g["consumed_energy"]), rel_tol=1e-9), jid
    if run == "filler":   # 965 jobs wait 5 ms, 33 wait 10 ms, 2 wait 15 ms, 4 more wait for hosts
        late = sorted(round(float(r["waiting_time"]), 6) for r in ours.values())
        assert (late.count(0.005), late.count(0.01), late.count(0.015)) == (965, 29, 2)
    mine, real = _schedule(out / "out_schedule.csv"), _schedule(FILLER / run / "out_schedule.csv")
    for key in SCHEDULE_TIMES:
        assert float(mine[key]) == pytest.approx(float(real[key]), rel=1e-9, abs=1e-6), key
    assert [mine[k] for k in SCHEDULE_COUNTS] == [real[k] for k in SCHEDULE_COUNTS]
    assert float(mine["consumed_joules"]) == pytest.approx(float(real["consumed_joules"]), rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("scheduler, message", [
    ("fcfsSchedSleep", r"set_pstate: pstate must be in \[0, 0\] for hosts \[\d+\], got 3"),
    ("randomSched", r"execute job '\d+' at t = [\d.]+ s: hosts \[[\d, ]+\] are busy")])
def test_bundled_schedulers_that_cannot_run_here_are_refused_in_one_line(tmp_path, capsys, scheduler, message):
    """hdeeprm-batsim's exit 1 and one line naming the refused decision (real Batsim aborts on both too)."""
    import re
    import threading

    from batsim.batsim import Batsim
    from batsim.tools.launcher import instanciate_scheduler

    from hdeeprm.cli.batsim import main as batsim_main
    from hdeeprm.simulation.batsim.pybatsim_adapter import free_loopback_port

    _need(FILLER)
    endpoint = f"tcp://127.0.0.1:{free_loopback_port()}"
    sched, made = instanciate_scheduler(scheduler, options={}), []

    def loop():
        try:
            made.append(Batsim(sched, endpoint, 1000))   # binds, then waits for SIMULATION_BEGINS
            made[0].start()
        except ValueError:   # PyBatsim's onDeadlock once the server has stopped
            pass
    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    code = batsim_main(["-p", str(FILLER / "platform.xml"), "-w", str(FILLER / "workload.json"), "-s", endpoint,
                        "-e", str(tmp_path / "out"), "-E", "-v", "quiet", "--timeout", "30"])
    thread.join(10)
    assert not thread.is_alive()
    made[0].network.connection.close(linger=0)   # a ZeroMQ context left to the garbage collector can block it
    made[0].network.context.term()
    err = capsys.readouterr().err.strip()
    assert code == 1 and "\n" not in err, err
    assert re.fullmatch(rf"hdeeprm-batsim: error: {message}", err), err
