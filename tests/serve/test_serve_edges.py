"""hdeeprm-serve's edges through the server: malformed WebSocket messages, clients that leave, task lists."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import gymnasium
import httpx
import numpy as np
import pytest
from websockets.sync.client import connect

import hdeeprm
from hdeeprm.serve.sessions import task_argument
from hdeeprm.serve.client import wait_until_healthy
from hdeeprm.simulation.batsim.pybatsim_adapter import free_loopback_port
from tests.serve.server import serving
from tests.toy import ROOT

PROVISIONING = hdeeprm.GPU_PROVISIONING_V1_ENV_ID


@pytest.fixture(scope="module")
def provisioning():
    with serving(PROVISIONING) as (url, app):
        yield url, app


def ws_url(url: str) -> str:
    return url.replace("http", "ws") + "/ws"


def ask(ws, message) -> dict:
    """Send one frame (a str or bytes as is, anything else as JSON) and read the reply."""
    ws.send(message if isinstance(message, (str, bytes)) else json.dumps(message))
    return json.loads(ws.recv(timeout=30))


def http_detail(url: str, path: str, body: str) -> tuple[int, str]:
    response = httpx.post(url + path, content=body, headers={"content-type": "application/json"}, timeout=30)
    return response.status_code, response.json()["detail"]


# ------------------------------------------------------------------ malformed messages: HTTP's one-line errors
@pytest.mark.parametrize("frame, path, body, code", [
    ("{not json", "/step", "{not json", "INVALID_JSON"),
    ("[1, 2]", "/step", "[1, 2]", "VALIDATION_ERROR"),           # JSON, not an object (was Python's AttributeError)
    ('"reset"', "/reset", '"reset"', "VALIDATION_ERROR"),
    ('{"type": "reset", "data": {"seed": "a"}}', "/reset", '{"seed": "a"}', "VALIDATION_ERROR"),
    ('{"type": "reset", "data": {"seed": -1}}', "/reset", '{"seed": -1}', "VALIDATION_ERROR"),
    ('{"type": "reset", "data": {"tsk": "easy"}}', "/reset", '{"tsk": "easy"}', "VALIDATION_ERROR"),
    ('{"type": "reset", "data": {"task": "eazy"}}', "/reset", '{"task": "eazy"}', "EXECUTION_ERROR"),
])
def test_malformed_websocket_messages_get_the_http_line_and_status(provisioning, frame, path, body, code):
    url, _ = provisioning
    status, detail = http_detail(url, path, body)
    with connect(ws_url(url), open_timeout=10) as ws:
        reply = ask(ws, frame)
        assert reply == {"type": "error", "data": {"message": detail, "code": code, "status": status}}
        assert ask(ws, {"type": "reset", "data": {"seed": 0}})["type"] == "observation"   # the session goes on


def test_the_websocket_answers_every_malformed_message_in_one_line_and_keeps_the_session(provisioning):
    url, _ = provisioning
    expected = [
        (b"\xff\xfe", 422, "INVALID_JSON", "malformed request: not JSON (not UTF-8 text at character 0)"),
        ("3", 422, "VALIDATION_ERROR", "malformed request: Input should be a JSON object (got 3)"),
        ('{"data": {}}', 422, "VALIDATION_ERROR", "malformed request: type: Field required"),
        ('{"type": "stpe"}', 422, "UNKNOWN_TYPE",
         "unknown message type 'stpe' (valid: reset, step, state, close; did you mean 'step'?)"),
        ('{"type": 5}', 422, "UNKNOWN_TYPE", "unknown message type 5 (valid: reset, step, state, close)"),
        ('{"type": "step"}', 422, "VALIDATION_ERROR", "malformed request: data: Field required"),
        ('{"type": "step", "data": 1}', 422, "VALIDATION_ERROR",
         "malformed request: data: Input should be a JSON object (got 1)"),
        ('{"type": "state", "data": {}}', 422, "VALIDATION_ERROR",
         "malformed request: data: Extra inputs are not permitted (got {})"),
        ('{"type": "step", "data": {"action": 1}}', 409, "EXECUTION_ERROR", "reset the session before stepping it"),
    ]
    with connect(ws_url(url), open_timeout=10) as ws:
        for frame, status, code, message in expected:
            assert ask(ws, frame) == {"type": "error", "data": {"message": message, "code": code, "status": status}}
        assert ask(ws, b'{"type": "reset", "data": {"seed": 0}}')["type"] == "observation"   # JSON in a binary frame
        reply = ask(ws, {"type": "step", "data": {"action": "up"}})
        assert reply["data"] == {"message": "invalid action: action: Input should be a valid integer (got 'up')",
                                 "code": "VALIDATION_ERROR", "status": 422}
        assert ask(ws, {"type": "step", "data": {"action": 1}})["data"]["observation"]["step"] == 1
        assert ask(ws, {"type": "state"})["data"]["step_count"] == 1


# ------------------------------------------------------------------ clients that leave, sessions that idle
@pytest.mark.slow
def test_a_client_that_leaves_mid_step_leaves_no_traceback_in_the_log():
    port = free_loopback_port()
    environ = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    server = subprocess.Popen([sys.executable, "-m", "hdeeprm.cli.serve", PROVISIONING, "--port", str(port)],
                              cwd=ROOT, env=environ, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(url, 60, server)
        for _ in range(3):   # reset, queue many steps, vanish without a close frame while they run
            with connect(ws_url(url), open_timeout=10) as ws:
                ask(ws, {"type": "reset", "data": {"seed": 0, "task": "hard"}})
                for _ in range(50):
                    ws.send(json.dumps({"type": "step", "data": {"action": 2}}))
                ws.socket.close()
        with connect(ws_url(url), open_timeout=10) as ws:   # malformed messages on a live server, then a clean close
            for frame in ("[1]", b"\xff", "{", '{"type": "mcp"}'):
                assert ask(ws, frame)["type"] == "error"
        deadline = time.monotonic() + 10
        while httpx.get(f"{url}/state", timeout=10).json()["sessions"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert httpx.get(f"{url}/state", timeout=10).json()["sessions"] == 0   # every dropped session was freed
    finally:
        server.terminate()
        _, err = server.communicate(timeout=30)
    lines = err.strip().splitlines()
    assert lines[0].startswith(f"hdeeprm-serve: serving {PROVISIONING} on ")
    assert "Traceback" not in err and "Exception" not in err and "ERROR" not in err, err
    assert len(lines) <= 1 + 3, err   # the serving line, one line per dropped client at most


def test_an_idle_websocket_session_is_freed_and_says_so():
    with serving(PROVISIONING, session_timeout=0.2) as (url, _):
        with connect(ws_url(url), open_timeout=10) as ws:
            assert ask(ws, {"type": "reset", "data": {"seed": 0}})["type"] == "observation"
            deadline = time.monotonic() + 10
            while httpx.get(f"{url}/state", timeout=10).json()["sessions"] and time.monotonic() < deadline:
                time.sleep(0.05)
            reply = ask(ws, {"type": "step", "data": {"action": 1}})
        assert reply["data"]["status"] == 404 and "was closed (idle for more than 0.2 s" in reply["data"]["message"]


# ------------------------------------------------------------------ task lists
def test_a_task_list_is_written_with_scenario_names():
    from hdeeprm.env.gpu_scenarios import scenarios

    assert task_argument(PROVISIONING, "easy") == "easy"
    assert task_argument(PROVISIONING, ["easy", "easy-gen", "medium"]) == ["easy-gen", "medium-gen"]
    train = [s.name for s in scenarios("train")]
    assert task_argument(hdeeprm.GPU_PLACEMENT_ENV_ID, ["train", "test-easy-gen"]) == [*train, "test-easy-gen"]


@pytest.mark.parametrize("transport", ["http", "ws"])
def test_a_valid_task_list_is_served_as_in_process(provisioning, transport):
    from hdeeprm.serve import Client

    url, _ = provisioning
    expected, _ = gymnasium.make(PROVISIONING, task=["easy-gen", "test-medium-gen"]).reset(seed=4)
    client = Client(url, task=["easy", "test-medium-gen"], transport=transport)   # 'easy' is the easy-gen task
    try:
        got, info = client.reset(seed=4)
        assert np.array_equal(got, expected) and info["scenario"] in ("easy-gen", "test-medium-gen")
        assert client.state()["task"] == ["easy", "test-medium-gen"]
    finally:
        client.close()


# ------------------------------------------------------------------ start-up: nothing heavy before the server runs
@pytest.mark.slow
def test_a_mistyped_id_is_refused_before_the_server_or_the_environments_load():
    code = ("import sys\nfrom hdeeprm.cli import serve\nassert serve.main(['GpuProvisioning-v9']) == 2\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('openenv', 'fastapi', 'gymnasium', "
            "'uvicorn', 'torch', 'stable_baselines3') or m.startswith('hdeeprm.env'))\nprint(heavy)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr
    assert "unknown environment id 'GpuProvisioning-v9'" in done.stderr


@pytest.mark.slow
def test_the_server_loads_without_openenvs_web_interface_which_stays_importable():
    code = ("import sys\nimport hdeeprm.serve.app\nprint('gradio' in sys.modules)\n"
            "import openenv.core.env_server.web_interface as w\nprint(callable(w.create_web_interface_app))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.split() == ["False", "True"], done.stdout + done.stderr
