"""Issue 22, item 6: faults that used to lose work, each run in a subprocess.

(a) a second run into a folder another run holds is refused with the holder's pid; (b) after
``kill -9`` the folder tells what happened (run.json: pid, episodes done; episodes.csv and the logs
flushed; hdeeprm-check and the next run report the dead run; orphaned temporary files removed);
(c) a full disk is ``No space left on device: <file>``, exit 2, run.json failed, no partial output
(on a real 32 KiB tmpfs in a private mount namespace where ``unshare`` allows it, else skipped; and
with a simulated ENOSPC everywhere); (d) Ctrl-C at any moment of any command is ``interrupted``, 130;
(e) SIGTERM takes Ctrl-C's clean stop and is ``terminated``, 143.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from hdeeprm.cli import batsim as batsim_cli
from hdeeprm.cli import check as check_cli
from hdeeprm.cli import evaluate as evaluate_cli
from hdeeprm.cli import gpu as gpu_cli
from hdeeprm.cli import launch as launch_cli
from hdeeprm.cli import platform as platform_cli
from hdeeprm.cli import serve as serve_cli
from hdeeprm.cli import sweep as sweep_cli
from hdeeprm.cli import visual as visual_cli
from hdeeprm.cli import workload as workload_cli
from tests.toy import AGENTS, ROOT, TOY_OPTIONS, quickstart_sweep

QUICKSTART = ROOT / "examples" / "quickstart.json"
GAIA = ROOT / "platforms" / "gaia_mini.json"
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
DIED = "without finishing (killed: kill -9, out of memory, or the machine stopped)"


def _status(out) -> dict:
    return json.loads((out / "run.json").read_text())


def _wait(condition, proc, timeout=120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


# ------------------------------------------------------------------ (a) lock, (b) kill -9
@pytest.mark.slow
def test_a_held_folder_is_refused_and_a_killed_run_is_reported(tmp_path, capsys):
    pytest.importorskip("torch")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "hdeeprm.cli.launch", str(AGENTS / "reinforce.py"),
                             str(TOY_OPTIONS), "-nr", "1000000", "--checkpoint-every", "2", "-om",
                             str(out / "model.pt"), "-q", "-o", str(out)],
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def checkpointed() -> bool:
            return (out / "run.json").is_file() and _status(out).get("episodes_completed", 0) >= 2
        _wait(checkpointed, proc)
        # (a) a second run, an evaluation and a sweep into the held folder: refused, nothing written
        refused = f"-o {out}: in use by another run (pid {proc.pid}): wait for it to end or choose another folder"
        for main, prog, argv in [
            (launch_cli.main, "hdeeprm-launch", [str(QUICKSTART), "-q"]),
            (evaluate_cli.main, "hdeeprm-evaluate", [str(QUICKSTART), "-p", "first-random", "-q"]),
            (sweep_cli.main, "hdeeprm-sweep", [str(quickstart_sweep(tmp_path)), "-q"]),
        ]:
            assert main([*argv, "-o", str(out)]) == 2
            assert capsys.readouterr().err == f"{prog}: error: {refused}\n"
        assert not (out / "out_metrics.json").exists()   # the quickstart run wrote nothing
        assert check_cli.main([str(out)]) == 0
        assert capsys.readouterr().out.startswith(f"ok   {out}: a run (pid {proc.pid}) is running, ")
    finally:
        proc.kill()   # (b) SIGKILL: no handler runs
        proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGKILL
    info = _status(out)
    assert (info["status"], info["pid"]) == ("running", proc.pid) and info["episodes_completed"] >= 2
    rows = len((out / "episodes.csv").read_text().splitlines()) - 1
    assert rows >= info["episodes_completed"]
    assert len((out / "makespans.log").read_text().splitlines()) in (rows, rows + 1)   # flushed every episode
    from hdeeprm.agents.checkpoint import load_checkpoint

    saved = load_checkpoint(out / "model.pt")["manifest"]["extra"]["episodes"]
    assert saved >= 2 and saved % 2 == 0
    # hdeeprm-check tells the dead run from a live one
    assert check_cli.main([str(out)]) == 1
    assert capsys.readouterr().out == f"FAIL {out}: the run (pid {proc.pid}) died after {rows} episode(s) {DIED}\n"
    # the next run says so, replaces the outputs, removes orphaned temporary files and its lock
    orphan = out / f".episodes.csv.{_dead_pid()}.abcd1234.tmp"
    orphan.write_text("half")
    assert launch_cli.main([str(QUICKSTART), "-q", "-o", str(out)]) == 0
    assert capsys.readouterr().err == (f"hdeeprm-launch: warning: {out}: the previous run (pid {proc.pid}) died "
                                       f"after {rows} episode(s) {DIED}; its outputs are replaced\n")
    assert _status(out)["status"] == "finished"
    assert not orphan.exists() and not (out / ".hdeeprm.lock").exists()
    assert [p.name for p in out.iterdir() if p.name.endswith(".tmp")] == []


def test_check_reports_finished_failed_and_non_run_folders(tmp_path, capsys):
    out = tmp_path / "out"
    assert launch_cli.main([str(QUICKSTART), "-q", "-o", str(out)]) == 0
    assert check_cli.main([str(out)]) == 0
    assert capsys.readouterr().out == f"ok   {out}: the run (pid {os.getpid()}) finished\n"
    assert check_cli.main([str(tmp_path)]) == 2
    assert capsys.readouterr().err == (f"hdeeprm-check: error: not a run folder (no readable run.json): give an "
                                       f"options file or a run's output folder ({tmp_path})\n")


# ------------------------------------------------------------------ (c) a full disk
def _tmpfs_available(tmp_path) -> bool:
    if shutil.which("unshare") is None or shutil.which("mount") is None:
        return False
    probe = tmp_path / "probe"
    probe.mkdir()
    done = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=32k tmpfs {probe}"],
                          capture_output=True)
    probe.rmdir()
    return done.returncode == 0


#: Runs inside a private mount namespace: each case gets a fresh 32 KiB tmpfs at sys.argv[1]; prints the results.
FULL_DISK = textwrap.dedent("""
    import contextlib, io, json, subprocess, sys
    from pathlib import Path
    fs, cases = Path(sys.argv[1]), json.loads(sys.argv[2])
    results = []
    for module, argv in cases:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=32k", "tmpfs", str(fs)], check=True)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            rc = __import__(module, fromlist=["main"]).main(argv)
        files = sorted(str(p.relative_to(fs)) for p in fs.rglob("*"))
        run = fs / "out" / "run.json"
        status = json.loads(run.read_text()).get("status") if run.is_file() else None
        results.append({"rc": rc, "err": err.getvalue(), "files": files, "status": status})
        subprocess.run(["umount", str(fs)], check=True)
    print(json.dumps(results))
""")


@pytest.mark.slow
def test_a_full_disk_is_one_line_exit_2_and_no_partial_output(tmp_path):
    if not _tmpfs_available(tmp_path):
        pytest.skip("cannot mount a small tmpfs here (unshare -rm / mount not permitted)")
    fs = tmp_path / "fs"
    fs.mkdir()
    cases = [
        ("hdeeprm.cli.launch", [str(QUICKSTART), "-q", "-o", str(fs / "out")]),
        ("hdeeprm.cli.platform", ["xml", str(ROOT / "platforms" / "gaia.json"), "-o", str(fs / "p.xml")]),
        ("hdeeprm.cli.workload", ["generate", "-o", str(fs / "t.swf"), "--nb-jobs", "3000", "--nb-cores", "64"]),
        ("hdeeprm.cli.workload", ["generate", "--model", "gpu", "-o", str(fs / "p.csv"), "--nb-jobs", "3000"]),
    ]
    done = subprocess.run(["unshare", "-rm", sys.executable, "-c", FULL_DISK, str(fs), json.dumps(cases)],
                          env=ENV, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    launch, xml, swf, pods = json.loads(done.stdout)
    # the run: a streamed Batsim output fails and is named, run.json says failed, no out_* left
    assert launch["rc"] == 2
    assert re.fullmatch(f"hdeeprm-launch: error: No space left on device: {re.escape(str(fs / 'out'))}/out_[a-z_]+"
                        r"\.csv\n", launch["err"]), launch["err"]
    assert launch["status"] == "failed"
    assert not [f for f in launch["files"] if f.startswith("out/out_") or f.endswith(".tmp")]
    # atomic writes: the file is named, nothing is left behind
    for result, prog, name in ((xml, "hdeeprm-platform", "p.xml"), (swf, "hdeeprm-workload", "t.swf"),
                               (pods, "hdeeprm-workload", "p.csv")):
        assert (result["rc"], result["err"]) == (2, f"{prog}: error: No space left on device: {fs / name}\n")
        assert result["files"] == []


#: Makes every write to a file whose path matches $HDEEPRM_FULL fail with ENOSPC, then runs a command's main.
SIMULATED = textwrap.dedent("""
    import builtins, errno, fnmatch, io, os, sys
    PATTERN = os.environ["HDEEPRM_FULL"]

    class Full:
        def __init__(self, f):
            self._f = f
        def write(self, data):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        def __getattr__(self, name):
            return getattr(self._f, name)
        def __enter__(self):
            return self
        def __exit__(self, *exc):
            self._f.close()

    def wrap(opener):
        def opened(file, mode="r", *args, **kwargs):
            f = opener(file, mode, *args, **kwargs)
            name = os.readlink(f"/proc/self/fd/{file}") if isinstance(file, int) else os.fspath(file)
            if isinstance(name, str) and ("w" in mode or "a" in mode) and fnmatch.fnmatch(name, PATTERN):
                return Full(f)
            return f
        return opened

    builtins.open = io.open = wrap(builtins.open)
    os.fdopen = wrap(os.fdopen)

    class FullRaw(io.FileIO):   # files opened by hdeeprm.files.open_for_writing (raw writes)
        def write(self, data):
            if fnmatch.fnmatch(str(self.name), PATTERN):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            return super().write(data)

    from hdeeprm import files
    files._NamedFileIO.__bases__ = (FullRaw,)
    module = __import__(sys.argv[1], fromlist=["main"])
    sys.exit(module.main(sys.argv[2:]))
""")


def _full(pattern: str, module: str, *argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", SIMULATED, module, *argv], env={**ENV, "HDEEPRM_FULL": pattern},
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_a_simulated_full_disk_when_saving_the_model(tmp_path):
    """The checkpoint (torch serialises to memory first) names the file; run.json says failed."""
    pytest.importorskip("torch")
    out, model = tmp_path / "out", tmp_path / "m" / "model.pt"
    done = _full("*/m/.model.pt.*", "hdeeprm.cli.launch", str(AGENTS / "reinforce.py"), str(TOY_OPTIONS), "-q",
                 "-o", str(out), "-om", str(model))
    assert (done.returncode, done.stderr) == (2, f"hdeeprm-launch: error: No space left on device: {model}\n")
    info = _status(out)
    assert (info["status"], info["error"]) == ("failed", f"OSError: No space left on device: {model}")
    assert list(model.parent.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("name, module, argv", [
    ("p.xml", "hdeeprm.cli.platform", ["xml", str(GAIA), "-o"]),
    ("t.swf.gz", "hdeeprm.cli.workload", ["generate", "--nb-jobs", "50", "--nb-cores", "64", "-o"]),
    ("p.csv", "hdeeprm.cli.workload", ["generate", "--model", "gpu", "--nb-jobs", "50", "-o"]),
    ("episodes.csv", "hdeeprm.cli.launch", [str(QUICKSTART), "-q", "-o"]),
    ("makespans.log", "hdeeprm.cli.launch", [str(QUICKSTART), "-q", "-o"]),
])
def test_a_simulated_full_disk_names_the_file(tmp_path, name, module, argv):
    out = tmp_path / "out"
    out.mkdir()
    run = module.endswith("launch")
    target = out / name
    done = _full(f"*/out/*{name}*", module, *argv, str(out if run else target))
    prog = module.replace(".cli.", "-")
    assert (done.returncode, done.stderr) == (2, f"{prog}: error: No space left on device: {target}\n")
    if run:
        assert _status(out)["status"] == "failed"
        assert not [p for p in out.iterdir() if p.name.startswith("out_") or p.name.endswith(".tmp")]
    else:
        assert list(out.iterdir()) == []


# ------------------------------------------------------------------ (d) Ctrl-C
COMMANDS = [(launch_cli.main, "hdeeprm-launch"), (workload_cli.main, "hdeeprm-workload"),
            (platform_cli.main, "hdeeprm-platform"), (batsim_cli.main, "hdeeprm-batsim"),
            (visual_cli.main, "hdeeprm-visual"), (check_cli.main, "hdeeprm-check"), (gpu_cli.main, "hdeeprm-gpu"),
            (evaluate_cli.main, "hdeeprm-evaluate"), (sweep_cli.main, "hdeeprm-sweep"),
            (serve_cli.main, "hdeeprm-serve")]


@pytest.mark.parametrize("main, prog", COMMANDS)
def test_ctrl_c_while_parsing_the_arguments_is_one_line(monkeypatch, capsys, main, prog):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(argparse.ArgumentParser, "parse_args", interrupted)
    assert main(["x"]) == 130
    assert capsys.readouterr().err == f"{prog}: interrupted\n"


def test_every_console_script_is_wrapped():
    """setup.py's console scripts all point at a main wrapped by hdeeprm.cli.command."""
    import re

    scripts = re.findall(r'"(hdeeprm-[a-z]+)=(hdeeprm\.cli\.[a-z]+):main"', (ROOT / "setup.py").read_text())
    assert len(scripts) == len(COMMANDS)
    for prog, module in scripts:
        main = __import__(module, fromlist=["main"]).main
        assert main.__wrapped__ and main.__module__ == module, prog


def _children(pid: int) -> list[int]:
    done = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in done.stdout.split()]


def _gone(pids: list[int], timeout: float = 20.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        alive = []
        for pid in pids:
            try:
                os.kill(pid, 0)
                alive.append(pid)
            except ProcessLookupError:
                pass
        if not alive:
            return True
        time.sleep(0.1)
    return False


def _stopped_parallel_evaluation(out, stop) -> tuple[int, str, list[int]]:
    """A 2-worker evaluation (180 runs: tens of seconds) stopped by ``stop(proc)`` while its workers run windows.

    Returns its exit code, its standard error and its child processes just before the stop.
    """
    proc = subprocess.Popen([sys.executable, "-m", "hdeeprm.cli.evaluate", str(QUICKSTART), "-p",
                             "random,first,shortest,smallest,low_mem,low_mem_bw-random,high_gflops,high_cores,high_mem,"
                             "high_mem_bw,low_power",
                             "-n", "5", "-l", "100", "--on", "all", "-j", "2", "-q", "-o", str(out)],
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _wait(lambda: (out / ".hdeeprm.lock").exists(), proc)
        time.sleep(1.0)
        children = _children(proc.pid)
        stop(proc)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    return proc.returncode, err, children


@pytest.mark.slow
def test_ctrl_c_to_the_process_group_of_a_parallel_evaluation(tmp_path, sigint_reaches_children):
    """A terminal's Ctrl-C reaches the workers too: still one line, exit 130, no worker traceback."""
    out = tmp_path / "ev"
    code, err, _ = _stopped_parallel_evaluation(out, lambda proc: os.killpg(proc.pid, signal.SIGINT))
    assert (code, err) == (130, "hdeeprm-evaluate: interrupted\n")
    assert not (out / ".hdeeprm.lock").exists()


@pytest.mark.slow
def test_sigterm_to_a_parallel_evaluation_stops_it_and_its_workers(tmp_path):
    """SIGTERM (kill, timeout, a batch system at the time limit) to the parent alone: the interrupt's clean
    stop, said as ``terminated`` with exit 143; the folder unlocked and no worker left running."""
    out = tmp_path / "ev"
    code, err, workers = _stopped_parallel_evaluation(out, lambda proc: proc.send_signal(signal.SIGTERM))
    assert workers
    assert (code, err) == (143, "hdeeprm-evaluate: terminated\n")
    assert not (out / ".hdeeprm.lock").exists()
    assert _gone(workers)


@pytest.mark.slow
def test_sigterm_to_a_training_run_marks_it_interrupted(tmp_path):
    pytest.importorskip("torch")
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-m", "hdeeprm.cli.launch", str(AGENTS / "reinforce.py"),
                             str(TOY_OPTIONS), "-nr", "1000000", "-om", str(out / "model.pt"), "-q", "-o", str(out)],
                            env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        _wait(lambda: (out / "run.json").is_file() and _status(out).get("episodes_completed", 0) >= 2, proc)
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143
    assert err.splitlines()[-1] == "hdeeprm-launch: terminated"
    assert _status(out)["status"] == "interrupted"
    assert (out / "model.pt").is_file()   # saved on the way out, as on Ctrl-C


@pytest.mark.slow
def test_ctrl_c_at_any_moment_of_a_run_is_one_line_or_nothing(tmp_path, sigint_reaches_children):
    """SIGINT at moments from the interpreter's start to the end of a quickstart run.

    Once ``hdeeprm.cli`` is imported (timed first), every moment ends with ``interrupted`` and 130, or
    with the run done (exit 0, no message); never a traceback, never a silent death by the signal.
    """
    start = time.monotonic()
    subprocess.run([sys.executable, "-c", "import hdeeprm.cli"], env=ENV, check=True)
    ready = time.monotonic() - start + 0.02
    outcomes = set()
    for delay in (0.0, 0.05, 0.1, 0.2, 0.4):
        proc = subprocess.Popen([sys.executable, "-m", "hdeeprm.cli.launch", str(QUICKSTART), "-q", "-o",
                                 str(tmp_path / "out")], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        time.sleep(ready + delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        assert "Traceback" not in err, (delay, err)
        expected = {(130, "hdeeprm-launch: interrupted\n"), (0, ""), (-signal.SIGINT, "hdeeprm-launch: interrupted\n")}
        assert (proc.returncode, err) in expected, (delay, proc.returncode, err)
        outcomes.add(proc.returncode)
    assert 130 in outcomes


def test_an_interrupt_no_main_can_catch_is_one_line(tmp_path):
    """While ``python -m hdeeprm.cli.X`` imports its module (hdeeprm.cli loaded): the hook prints the line."""
    script = tmp_path / "slow.py"
    script.write_text("import hdeeprm.cli\nraise KeyboardInterrupt\n")   # as an interrupt during the import
    done = subprocess.run([sys.executable, "-c", "import runpy, sys; sys.path.insert(0, sys.argv[1]); "
                           "runpy.run_module('slow', run_name='__main__', alter_sys=True)", str(tmp_path)],
                          env=ENV, capture_output=True, text=True)
    assert (done.returncode, done.stderr) == (-signal.SIGINT, "hdeeprm: interrupted\n")
