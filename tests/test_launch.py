"""hdeeprm-launch end to end: outputs, determinism, invariants on real traces, the Batsim path."""
import csv
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from procset import ProcSet

from hdeeprm.cli.launch import main
from hdeeprm.run.launch import launch

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART = ROOT / "examples" / "quickstart.json"


def jobs_csv(path):
    return list(csv.DictReader(open(path)))


def test_quickstart_runs_and_writes_the_documented_outputs(tmp_path, capsys):
    assert main([str(QUICKSTART), "-o", str(tmp_path), "--quiet"]) == 0
    for name in ("out_jobs.csv", "out_schedule.csv", "out_machine_states.csv", "out_pstate_changes.csv",
                 "out_consumed_energy.csv", "out_metrics.json", "overutilizations.json", "episodes.csv",
                 "run.json"):
        assert (tmp_path / name).is_file(), name
    metrics = json.loads((tmp_path / "out_metrics.json").read_text())
    assert metrics["nb_jobs"] == 500 and metrics["nb_completed"] == 500
    rows = jobs_csv(tmp_path / "out_jobs.csv")
    assert len(rows) == 500 and {r["final_state"] for r in rows} == {"COMPLETED_SUCCESSFULLY"}
    run_info = json.loads((tmp_path / "run.json").read_text())
    assert run_info["workload"]["report"]["kept"] == 500


def test_two_runs_with_one_seed_give_byte_identical_outputs(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    launch(str(QUICKSTART), outdir=a, quiet=True)
    launch(str(QUICKSTART), outdir=b, quiet=True)
    for name in ("out_jobs.csv", "out_machine_states.csv", "out_pstate_changes.csv", "out_consumed_energy.csv",
                 "out_metrics.json", "overutilizations.json"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    sa, sb = (next(csv.DictReader(open(d / "out_schedule.csv"))) for d in (a, b))
    for wallclock in ("scheduling_time", "simulation_time"):
        sa.pop(wallclock), sb.pop(wallclock)
    assert sa == sb


def check_invariants(outdir, nb_jobs):
    """Every job ends exactly once; no core serves two jobs at once; start >= submit."""
    rows = jobs_csv(outdir / "out_jobs.csv")
    assert len(rows) == nb_jobs
    assert len({r["job_id"] for r in rows}) == nb_jobs
    intervals = {}
    for r in rows:
        assert r["final_state"] in ("COMPLETED_SUCCESSFULLY", "COMPLETED_WALLTIME_REACHED", "REJECTED")
        if r["final_state"] == "REJECTED":
            continue
        start, finish = float(r["starting_time"]), float(r["finish_time"])
        assert start >= float(r["submission_time"])
        assert finish >= start
        for core in ProcSet.from_str(r["allocated_resources"]):
            intervals.setdefault(core, []).append((start, finish))
    for core, spans in intervals.items():
        spans.sort()
        ends = np.array([s[1] for s in spans[:-1]])
        starts = np.array([s[0] for s in spans[1:]])
        assert (starts >= ends - 1e-9).all(), f"core {core} serves two jobs at once"


@pytest.mark.slow
def test_invariants_on_a_real_trace_window_on_gaia(tmp_path, shared):
    options = tmp_path / "sdsc.json"
    options.write_text(json.dumps({
        "seed": 3, "nb_jobs": 3000, "workload_file_path": str(shared / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz"),
        "platform_file_path": str(ROOT / "platforms" / "gaia_mini.json"),
        "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "smallest-high_mem_bw"}}}))
    result = launch(str(options), outdir=tmp_path / "out", quiet=True)
    check_invariants(tmp_path / "out", 3000)
    assert result.metrics[-1]["nb_jobs"] == 3000


@pytest.mark.slow
def test_invariants_on_kth_with_walltime_kills(tmp_path, shared):
    options = tmp_path / "kth.json"
    options.write_text(json.dumps({
        "seed": 1, "nb_jobs": 2000, "workload_file_path": str(shared / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"),
        "platform_file_path": str(ROOT / "platforms" / "kth_sp2.json"),
        "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "first-random"}},
        "workload": {"enforce_walltime": True, "mem_bw_choices": [0], "profile_type": "delay"}}))
    launch(str(options), outdir=tmp_path / "out", quiet=True)
    check_invariants(tmp_path / "out", 2000)
    killed = [r["job_id"] for r in jobs_csv(tmp_path / "out" / "out_jobs.csv")
              if r["final_state"] == "COMPLETED_WALLTIME_REACHED"]
    # The 24 jobs Batsim kills in the golden kth2000-delay runs (delay >= walltime).
    assert sorted(map(int, killed)) == [127, 128, 129, 130, 301, 376, 406, 462, 597, 1213, 1214, 1252, 1253,
                                        1254, 1255, 1256, 1257, 1483, 1518, 1803, 1804, 1805, 1833, 1837]


@pytest.mark.slow
def test_batsim_path_gives_the_embedded_schedule(tmp_path):
    """--simulator batsim with hdeeprm-batsim standing in for the binary: same schedule as in-process."""
    pytest.importorskip("batsim.batsim")
    if shutil.which("hdeeprm-batsim") is None:
        pytest.skip("hdeeprm-batsim is not on PATH")
    embedded = launch(str(QUICKSTART), outdir=tmp_path / "embedded", quiet=True).metrics[-1]
    batsim = launch(str(QUICKSTART), outdir=tmp_path / "batsim", quiet=True, simulator="batsim",
                    batsim="hdeeprm-batsim").metrics[-1]
    for key in ("nb_completed", "makespan", "mean_waiting_time", "mean_bounded_slowdown", "utilization"):
        assert batsim[key] == pytest.approx(embedded[key], rel=1e-9), key
    assert batsim["energy"] == pytest.approx(embedded["energy"], rel=1e-6)


def test_missing_batsim_binary_is_a_clear_error(tmp_path, capsys):
    pytest.importorskip("batsim.batsim")
    code = main([str(QUICKSTART), "-o", str(tmp_path), "--quiet", "--simulator", "batsim",
                 "--batsim", str(tmp_path / "no-batsim-here")])
    assert code == 2
    assert "batsim" in capsys.readouterr().err


def test_bad_options_exit_2_with_the_file_named(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "first-fastest"}}}')
    assert main([str(bad), "-o", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "unknown core-selection policy 'fastest'" in err and "bad.json" in err


def test_batsim_path_refuses_training_options(tmp_path, capsys):
    # One Batsim process runs one episode: -nr and -om are refused, never silently ignored.
    code = main([str(QUICKSTART), "-o", str(tmp_path), "--quiet", "--simulator", "batsim", "--batsim", "batsim",
                 "-nr", "2", "-om", str(tmp_path / "m.pt")])
    assert code == 2
    assert capsys.readouterr().err.splitlines()[-1].endswith(
        "--simulator batsim runs one episode and trains nothing: drop -nr and -om, or use the embedded simulator")
    assert not (tmp_path / "m.pt").exists()


def test_batsim_path_seeds_a_learning_agent_like_the_embedded_path(tmp_path):
    # The same seed gives the same sampled actions on both paths, hence the same schedule and energy.
    pytest.importorskip("batsim.batsim")
    pytest.importorskip("torch")
    if shutil.which("hdeeprm-batsim") is None:
        pytest.skip("hdeeprm-batsim is not on PATH")
    options = ROOT / "examples" / "learning" / "learning.json"
    agent = str(ROOT / "examples" / "agents" / "reinforce.py")
    embedded = launch(str(options), agent_path=agent, outdir=tmp_path / "embedded", quiet=True)
    batsim = launch(str(options), agent_path=agent, outdir=tmp_path / "batsim", quiet=True, simulator="batsim",
                    batsim="hdeeprm-batsim")
    emb = json.loads((tmp_path / "embedded" / "out_metrics.json").read_text())
    bat = json.loads((tmp_path / "batsim" / "out_metrics.json").read_text())
    assert emb.keys() == bat.keys()   # one metrics code for both paths (void_overridden included)
    for key in ("makespan", "energy", "decisions", "void_overridden", "max_slowdown", "mean_waiting_time"):
        assert bat[key] == pytest.approx(emb[key], rel=1e-9), key
    assert batsim.metrics[-1]["makespan"] == embedded.metrics[-1]["makespan"]
