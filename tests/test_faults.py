"""Issue 13, faults: interrupted and reused runs leave consistent files.

A run owns its folder (the previous run's outputs are removed, ``run.json`` says whether the
run finished), training survives Ctrl-C, checkpoints and converted workloads are written
atomically with the umask's mode, and every command exits 130 with one line when interrupted.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from hdeeprm.cli import launch as launch_cli
from hdeeprm.cli import visual as visual_cli
from hdeeprm.cli import workload as workload_cli
from tests.toy import AGENTS, ROOT, TOY_OPTIONS, TOY_WORKLOAD

QUICKSTART = ROOT / "examples" / "quickstart.json"


def _status(outdir) -> dict:
    return json.loads((outdir / "run.json").read_text())


@pytest.mark.slow
def test_a_reused_folder_holds_only_the_new_runs_files(tmp_path):
    """A classic run after a learning run (and its plots) leaves no stale probs.json or PNG."""
    pytest.importorskip("torch")
    out = tmp_path / "out"
    assert launch_cli.main([str(AGENTS / "reinforce.py"), str(TOY_OPTIONS), "-nr", "2", "-q", "-o", str(out)]) == 0
    assert visual_cli.main([str(out)]) == 0
    assert (out / "probs.json").is_file() and (out / "action_preferences.png").is_file()
    (out / "notes.txt").write_text("mine")
    assert launch_cli.main([str(QUICKSTART), "-q", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == [
        "episodes.csv", "losses.log", "makespans.log", "notes.txt", "out_consumed_energy.csv", "out_jobs.csv",
        "out_machine_states.csv", "out_metrics.json", "out_pstate_changes.csv", "out_schedule.csv",
        "overutilizations.json", "rewards.log", "run.json"]
    assert _status(out)["status"] == "finished"


def test_a_failed_run_says_so_in_run_json(tmp_path, capsys):
    agent = tmp_path / "agent.py"
    agent.write_text("from hdeeprm.agents import Agent\n\n\nclass A(Agent):\n"
                     "    def __init__(self, gamma, hidden, action_size, observation_size):\n        pass\n\n"
                     "    def decide(self, observation):\n        return 99\n")
    out = tmp_path / "out"
    (out).mkdir()
    (out / "out_metrics.json").write_text("{}")   # a previous run's
    assert launch_cli.main([str(agent), str(TOY_OPTIONS), "-q", "-o", str(out)]) == 3
    info = _status(out)
    assert (info["status"], info["episodes_completed"], info["error"]) == (
        "failed", 0, "AgentError: A.decide() must be an integer in [0, 4], got 99")
    assert not (out / "out_metrics.json").exists()
    assert capsys.readouterr().err == "hdeeprm-launch: error: A.decide() must be an integer in [0, 4], got 99\n"


@pytest.mark.slow
def test_ctrl_c_saves_the_model_and_marks_the_run_interrupted(tmp_path, sigint_reaches_children):
    """Interrupt a long training in a subprocess: exit 130, one line, model and episodes kept."""
    pytest.importorskip("torch")
    out = tmp_path / "out"
    out.mkdir()
    (out / "out_metrics.json").write_text('{"stale": true}')   # an earlier run's, on another platform
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "hdeeprm.cli.launch", str(AGENTS / "reinforce.py"),
                             str(TOY_OPTIONS), "-nr", "1000000", "-om", str(out / "model.pt"), "-q", "-o", str(out)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        while not (out / "run.json").exists() and proc.poll() is None:
            time.sleep(0.05)
        assert _status(out)["status"] == "running" and not (out / "out_metrics.json").exists()
        deadline = time.monotonic() + 300
        log = out / "makespans.log"
        while not (log.is_file() and log.stat().st_size) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)   # until the first lines of the (buffered) logs reach the disk: episodes done
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and "Traceback" not in err
    lines = err.splitlines()
    info = _status(out)
    done = info["episodes_completed"]
    assert info["status"] == "interrupted" and done >= 1
    assert lines == [f"hdeeprm-launch: warning: interrupted after {done} episode(s): model saved to {out / 'model.pt'}",
                     "hdeeprm-launch: interrupted"]
    from hdeeprm.agents.checkpoint import load_checkpoint

    assert load_checkpoint(out / "model.pt")["manifest"]["extra"]["episodes"] == done
    assert len((out / "episodes.csv").read_text().splitlines()) == done + 1
    assert len(json.loads((out / "probs.json").read_text())["mean_per_episode"]) == done
    assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []


def test_checkpoint_every_n_episodes(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    from hdeeprm.agents.learning import LearningAgent

    saved = []
    original = LearningAgent.save_checkpoint
    monkeypatch.setattr(LearningAgent, "save_checkpoint",
                        lambda self, path: (saved.append(int(self.episodes)), original(self, path)))
    out = tmp_path / "out"
    assert launch_cli.main([str(AGENTS / "reinforce.py"), str(TOY_OPTIONS), "-nr", "5", "--checkpoint-every", "2",
                            "-om", str(out / "m.pt"), "-q", "-o", str(out)]) == 0
    assert saved == [2, 4, 5]


def test_checkpoint_every_needs_an_outmodel(capsys):
    with pytest.raises(SystemExit) as exc:
        launch_cli.main([str(TOY_OPTIONS), "--checkpoint-every", "2"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == "hdeeprm-launch: error: --checkpoint-every needs -om out.pt"


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("umask", [0o022, 0o077, 0o002])
def test_checkpoints_follow_the_umask_and_remove_orphans(tmp_path, umask):
    pytest.importorskip("torch")
    from hdeeprm.agents.learning import PolicyLearningAgent

    orphans = [tmp_path / f".m.pt.{_dead_pid()}.x1y2z3.tmp", tmp_path / ".m.pt.abc_123.tmp"]
    live = tmp_path / f".m.pt.{os.getppid()}.x.tmp"   # a live process may still be writing it
    for path in (*orphans, live):
        path.write_bytes(b"partial")
    old = os.umask(umask)
    try:
        PolicyLearningAgent(0.9, 8, 5, 21).save_checkpoint(tmp_path / "m.pt")
    finally:
        os.umask(old)
    assert (tmp_path / "m.pt").stat().st_mode & 0o777 == 0o666 & ~umask
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["m.pt", live.name])


def test_an_interrupted_convert_keeps_the_previous_workload(tmp_path, monkeypatch, capsys):
    from hdeeprm.workload import batsim_json

    swf = tmp_path / "t.swf"
    swf.write_text("".join(f"{i} {i} -1 50 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1\n" for i in range(1, 101)))
    out = tmp_path / "w.json"
    out.write_text("previous")
    calls = []

    def dumps(obj, *args, **kwargs):
        calls.append(1)
        if len(calls) == 50:
            raise KeyboardInterrupt
        return json.dumps(obj, *args, **kwargs)

    monkeypatch.setattr(batsim_json.json, "dumps", dumps)
    rc = workload_cli.main(["convert", str(swf), "-o", str(out), "--nb-cores", "4", "--reference-speed", "1e9"])
    assert (rc, capsys.readouterr().err) == (130, "hdeeprm-workload: interrupted\n")
    assert out.read_text() == "previous"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.swf", "w.json"]


def test_ctrl_c_in_visual_is_one_line(tmp_path, monkeypatch, capsys):
    from hdeeprm.outputs import visual

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(visual, "make_plots", interrupted)
    assert visual_cli.main([str(tmp_path)]) == 130
    assert capsys.readouterr().err == "hdeeprm-visual: interrupted\n"


def test_launch_takes_user_type_libraries(tmp_path, capsys):
    library = tmp_path / "mine.json"
    library.write_text(json.dumps({"My Node": {"processors": [{"type": "Test0_0", "number": 2}],
                                               "memory": {"type": "toy", "capacity": 32}}}))
    platform = tmp_path / "p.json"
    platform.write_text(json.dumps({"clusters": [{"id": "c", "nodes": [{"type": "My Node", "number": 1}],
                                                  "local_links": {"type": "InfiniBand QDR", "latency": "0us"}}],
                                    "global_links": {"type": "InfiniBand QDR", "latency": "0us"}}))
    options = tmp_path / "o.json"
    options.write_text(json.dumps({"seed": 1, "workload_file_path": str(TOY_WORKLOAD),
                                   "platform_file_path": str(platform),
                                   "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops"}}}))
    assert launch_cli.main([str(options), "-q", "-o", str(tmp_path / "out"), "--library", str(library)]) == 0
    assert json.loads((tmp_path / "out" / "out_metrics.json").read_text())["nb_completed"] == 2
    assert launch_cli.main([str(options), "-q", "-o", str(tmp_path / "out")]) == 2
    assert "must be a known node type, got 'My Node'" in capsys.readouterr().err


def test_kill_9_during_a_write_keeps_the_old_file_and_the_next_write_cleans_up(tmp_path):
    """A process killed while writing leaves the previous file intact and an orphan the next write removes."""
    from hdeeprm.files import atomic_write

    target = tmp_path / "w.json"
    target.write_text("previous")
    script = ("import os, signal, sys\nfrom hdeeprm.files import atomic_write\n"
              "with atomic_write(sys.argv[1]) as f:\n    f.write('half a wor')\n    f.flush()\n"
              "    os.kill(os.getpid(), signal.SIGKILL)\n")
    proc = subprocess.run([sys.executable, "-c", script, str(target)], env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == -signal.SIGKILL
    orphans = [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
    assert target.read_text() == "previous" and len(orphans) == 1 and orphans[0].startswith(".w.json.")
    with atomic_write(target) as f:
        f.write("new")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["w.json"] and target.read_text() == "new"


def test_a_run_refused_before_its_first_episode_keeps_the_previous_outputs(tmp_path):
    """A bad -im (found once the agent is built) does not wipe the last good run's folder."""
    pytest.importorskip("torch")
    out = tmp_path / "out"
    assert launch_cli.main([str(QUICKSTART), "-q", "-o", str(out)]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    rc = launch_cli.main([str(AGENTS / "reinforce.py"), str(TOY_OPTIONS), "-q", "-o", str(out),
                          "-im", str(tmp_path / "missing.pt")])
    assert rc == 3 and {p.name: p.read_bytes() for p in out.iterdir()} == before
