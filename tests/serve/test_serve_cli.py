"""hdeeprm-serve from the command line: it starts, a remote client completes the easy task with the in-process score."""
from __future__ import annotations

import os
import subprocess
import sys

import gymnasium
import pytest

import hdeeprm
from hdeeprm.cli import serve as serve_cli
from hdeeprm.env.gpu_provisioning import reactive_autoscaler
from hdeeprm.serve import Client
from hdeeprm.serve.client import wait_until_healthy
from hdeeprm.simulation.batsim.pybatsim_adapter import free_loopback_port
from tests.toy import ROOT

#: Seconds the command may take to answer /health (imports included).
START_SECONDS = 60.0


@pytest.mark.slow
def test_the_command_serves_the_easy_task_with_the_in_process_score():
    env = gymnasium.make(hdeeprm.GPU_PROVISIONING_V1_ENV_ID, task="easy")
    env.reset(seed=11)
    actions, done = [], False
    while not done:
        actions.append(reactive_autoscaler(env.unwrapped))
        *_, terminated, truncated, info = env.step(actions[-1])
        done = terminated or truncated
    port = free_loopback_port()
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    server = subprocess.Popen([sys.executable, "-m", "hdeeprm.cli.serve", "hdeeprm/GpuProvisioning-v1",
                               "--port", str(port)], cwd=ROOT, env=environ, stderr=subprocess.PIPE, text=True)
    try:
        wait_until_healthy(f"http://127.0.0.1:{port}", START_SECONDS, server)
        client = Client(f"http://127.0.0.1:{port}", task="easy")
        try:
            client.reset(seed=11)
            for action in actions:
                *_, remote_info = client.step(action)
        finally:
            client.close()
        assert remote_info["score"] == info["score"]
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    assert err.splitlines()[0].startswith(f"hdeeprm-serve: serving hdeeprm/GpuProvisioning-v1 on "
                                          f"http://127.0.0.1:{port} ")


@pytest.mark.parametrize("argv, message", [
    (["GpuProvisioning-v9"], "unknown environment id 'GpuProvisioning-v9' (valid: hdeeprm/HDeepRM-v0, "),
    (["GpuProvisioning-v1", "tsk=easy"], "unknown argument 'tsk' of hdeeprm/GpuProvisioning-v1 (valid: "),
    (["GpuProvisioning-v1", "task"], "environment arguments must be KEY=VALUE with KEY a Python name, got 'task'"),
    (["GpuProvisioning-v1", "task=eazy"], "hdeeprm/GpuProvisioning-v1: unknown GPU scenario 'eazy' (valid: "),
    (["GpuProvisioning-v1", "max_steps=NaN"], "numbers must be finite JSON numbers (RFC 8259), got NaN"),
    (["GpuProvisioning-v1", "--port", "0"], "--port must be in [1, 65535], got 0"),
])
def test_bad_commands_fail_in_one_line_with_status_2(capsys, argv, message):
    assert serve_cli.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and err.startswith(f"hdeeprm-serve: error: {message}")


def test_values_are_json_when_they_are_json_and_strings_otherwise():
    assert serve_cli.parse_assignments(["max_steps=50", "task=medium", "curriculum=true", "scenario=[\"a\",\"b\"]",
                                        "placement=null"]) == {
        "max_steps": 50, "task": "medium", "curriculum": True, "scenario": ["a", "b"], "placement": None}


def test_a_busy_port_is_refused_before_building_anything(capsys):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        assert serve_cli.main(["GpuProvisioning-v1", "--port", str(port)]) == 2
    assert capsys.readouterr().err.startswith(f"hdeeprm-serve: error: cannot listen on 127.0.0.1:{port}: ")
