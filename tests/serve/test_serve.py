"""hdeeprm-serve over real HTTP and WebSocket on localhost: graded episodes equal in-process ones, sessions, errors."""
from __future__ import annotations

import json
import threading
import time

import gymnasium
import httpx
import numpy as np
import pytest

import hdeeprm
from hdeeprm.env.gpu_provisioning import reactive_autoscaler
from hdeeprm.serve import Client, RemoteEnvError
from tests.serve.server import serving

PROVISIONING = hdeeprm.GPU_PROVISIONING_V1_ENV_ID


def in_process(task: str, seed: int, actions=None):
    """An in-process episode: (actions, [(obs, reward, terminated, truncated, info)]) with the reset first."""
    env = gymnasium.make(PROVISIONING, task=task)
    obs, info = env.reset(seed=seed)
    steps = [(obs, None, False, False, info)]
    chosen = []
    done = False
    while not done:
        action = reactive_autoscaler(env.unwrapped) if actions is None else actions[len(chosen)]
        chosen.append(action)
        obs, reward, terminated, truncated, info = env.step(action)
        steps.append((obs, reward, terminated, truncated, info))
        done = terminated or truncated
    env.close()
    return chosen, steps


def remote(client: Client, task: str, seed: int, actions):
    obs, info = client.reset(seed=seed, options={"task": task})
    steps = [(obs, None, False, False, info)]
    for action in actions:
        steps.append(client.step(action))
    return steps


def assert_same_episode(got, expected):
    assert len(got) == len(expected)
    for k, (g, e) in enumerate(zip(got, expected)):
        assert g[0].dtype == e[0].dtype == np.float32 and g[0].shape == e[0].shape, k
        assert np.array_equal(g[0], e[0]), f"observation {k} differs"
        assert g[1:4] == e[1:4] or k == 0, f"step {k}: {g[1:4]} != {e[1:4]}"
        assert g[4] == e[4], f"info {k} differs"
    assert expected[-1][4]["score"] == got[-1][4]["score"]


@pytest.fixture(scope="module")
def provisioning():
    with serving(PROVISIONING, max_sessions=8) as (url, app):
        yield url, app


@pytest.mark.slow
@pytest.mark.parametrize("task", ["easy", "medium", "hard", "test-easy-gen"])
def test_a_graded_episode_over_websocket_equals_the_in_process_one(provisioning, task):
    url, _ = provisioning
    actions, expected = in_process(task, seed=3)
    client = Client(url)
    try:
        got = remote(client, task, 3, actions)
    finally:
        client.close()
    assert_same_episode(got, expected)
    assert 0.0 <= got[-1][4]["score"] <= 1.0 and got[-1][2]


def test_a_graded_episode_over_http_equals_the_in_process_one(provisioning):
    url, _ = provisioning
    actions, expected = in_process("easy", seed=0)
    client = Client(url, transport="http")
    try:
        got = remote(client, "easy", 0, [np.int64(a) for a in actions])   # NumPy actions, as SB3 sends them
        state = client.state()
    finally:
        client.close()
    assert_same_episode(got, expected)
    assert state["score"] == expected[-1][4]["score"] and state["step_count"] == len(actions)
    assert state["task"] == "easy" and state["seed"] == 0 and state["terminated"]


def test_a_session_keeps_its_generator_across_resets_as_gymnasium_does(provisioning, shared):
    url, _ = provisioning
    env = gymnasium.make(PROVISIONING, task="train")
    first, _ = env.reset(seed=5)
    second, info = env.reset()
    client = Client(url, task="train")
    try:
        got_first, _ = client.reset(seed=5)
        got_second, got_info = client.reset()
    finally:
        client.close()
    assert np.array_equal(first, got_first) and np.array_equal(second, got_second)
    assert got_info["scenario"] == info["scenario"]


@pytest.mark.slow
def test_concurrent_sessions_do_not_interfere(provisioning):
    url, app = provisioning
    runs = [("easy", 0, "ws"), ("test-easy-gen", 1, "http"), ("easy", 7, "http"), ("hard", 2, "ws")]
    expected = {run: in_process(run[0], run[1]) for run in runs}
    clients = {run: Client(url, transport=run[2]) for run in runs}
    got = {run: [clients[run].reset(seed=run[1], options={"task": run[0]}) + (None,)] for run in runs}
    barrier = threading.Barrier(len(runs))
    errors = []

    def drive(run):
        try:
            barrier.wait(timeout=10)
            for action in expected[run][0]:
                got[run].append(clients[run].step(action))
        except Exception as exc:   # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=drive, args=(run,)) for run in runs]
    for thread in threads:
        thread.start()
    assert httpx.get(f"{url}/state").json()["sessions"] == len(runs)
    for thread in threads:
        thread.join(60)
    for client in clients.values():
        client.close()
    assert not errors
    for run in runs:
        steps = [(s[0], None, False, False, s[1]) if k == 0 else s for k, s in enumerate(got[run])]
        assert_same_episode(steps, expected[run][1])
    assert {got[run][-1][4]["score"] for run in runs} == {expected[run][1][-1][4]["score"] for run in runs}


# ------------------------------------------------------------------ errors: 4xx, one line, the server lives on
def post(url, path, body):
    response = httpx.post(url + path, content=body if isinstance(body, str) else json.dumps(body),
                          headers={"content-type": "application/json"}, timeout=10)
    detail = response.json()["detail"]
    assert "\n" not in detail and "Traceback" not in detail
    return response.status_code, detail


@pytest.mark.slow
def test_http_errors_are_4xx_with_a_one_line_reason(provisioning):
    url, _ = provisioning
    reset = httpx.post(f"{url}/reset", json={"seed": 0, "task": "test-easy-gen"}, timeout=10).json()
    sid = reset["observation"]["session_id"]
    assert post(url, "/step", {"action": {"action": 5}, "session_id": sid}) == (
        422, "the action must be an integer in [0, 2], got 5")
    code, detail = post(url, "/step", {"action": {"action": "up"}, "session_id": sid})
    assert code == 422 and detail == "invalid action: action: Input should be a valid integer (got 'up')"
    assert post(url, "/step", {"action": {"action": 1.0}, "session_id": sid})[0] == 422
    assert post(url, "/step", {"action": {"action": 1}})[0] == 422
    assert post(url, "/step", {"action": {"action": 1}, "session_id": "nope"})[0] == 404
    assert post(url, "/step", "{not json")[0] == 422
    assert post(url, "/step", {"action": {"action": 1}, "session_id": sid, "sesion": 1}) == (
        422, "unknown step field 'sesion' (valid: action, session_id; did you mean 'session_id'?)")
    assert post(url, "/reset", {"task": "eazy"}) == (400, f"unknown task 'eazy' of {PROVISIONING} (valid: easy, "
                                                          f"medium, hard, easy-gen, easy-gen-b, medium-gen, "
                                                          f"medium-gen-b, hard-gen, hard-philly, test-easy-gen, "
                                                          f"test-medium-gen, test-hard-gen, test-hard-philly, "
                                                          f"test-openb, train, test; did you mean 'easy'?)")
    assert post(url, "/reset", {"seed": -1})[0] == 422
    assert post(url, "/reset", {"tsk": "easy"})[1].startswith("unknown reset field 'tsk' (valid: seed, episode_id, "
                                                             "task, env_id, session_id; did you mean 'task'?)")
    code, detail = post(url, "/reset", {"env_id": "hdeeprm/GpuPlacment-v0"})
    assert code == 404 and "did you mean 'hdeeprm/GpuPlacement-v0'?" in detail
    for _ in range(1000):   # to the end of the episode: a step after it is refused
        if httpx.post(f"{url}/step", json={"action": {"action": 2}, "session_id": sid}, timeout=10).json()["done"]:
            break
    code, detail = post(url, "/step", {"action": {"action": 1}, "session_id": sid})
    assert code == 409 and detail.startswith("the episode terminated after ")
    assert httpx.get(f"{url}/state", params={"session_id": "nope"}, timeout=10).status_code == 404
    assert httpx.post(f"{url}/close", json={"session_id": sid}, timeout=10).json()["closed"]
    assert post(url, "/step", {"action": {"action": 1}, "session_id": sid})[0] == 404
    assert httpx.get(f"{url}/health", timeout=10).json() == {"status": "healthy"}


def test_websocket_errors_are_one_line_and_the_session_goes_on(provisioning):
    url, _ = provisioning
    client = Client(url, task="test-easy-gen")
    try:
        with pytest.raises(RemoteEnvError, match=r"^reset the session before stepping it$") as refused:
            client.step(1)
        assert (refused.value.status, refused.value.code) == (409, "EXECUTION_ERROR")   # as docs/serve.rst says
        client.reset(seed=0)
        with pytest.raises(RemoteEnvError, match=r"^the action must be an integer in \[0, 2\], got 3$") as refused:
            client.step(3)
        assert (refused.value.status, refused.value.code) == (422, "VALIDATION_ERROR")
        # the same line as over HTTP (test_http_errors_are_4xx_with_a_one_line_reason)
        invalid = r"^invalid action: action: Input should be a valid integer \(got True\)$"
        with pytest.raises(RemoteEnvError, match=invalid):
            client.step(True)
        with pytest.raises(RemoteEnvError, match=r"^unknown task 'hardd' .*did you mean 'hard'\?\)$") as refused:
            client.reset(options={"task": "hardd"})
        assert refused.value.status == 400
        obs, reward, terminated, truncated, info = client.step(1)   # the episode is still there
        assert obs.shape == (13,) and not terminated
    finally:
        client.close()


def test_unknown_env_ids_and_arguments_fail_before_serving():
    from hdeeprm.errors import OptionsError
    from hdeeprm.serve.app import build_app

    with pytest.raises(OptionsError, match=r"unknown environment id 'GpuProvisioning-v2' .*did you mean"):
        build_app("GpuProvisioning-v2")
    with pytest.raises(OptionsError, match=r"^unknown argument 'max_step' of hdeeprm/GpuProvisioning-v1 "
                                           r"\(valid: .*did you mean 'max_steps'\?\)$"):
        build_app("GpuProvisioning-v1", {"max_step": 3})
    with pytest.raises(OptionsError, match=f"^{PROVISIONING}: step_seconds must be a finite number > 0, got 0$"):
        build_app(PROVISIONING, {"step_seconds": 0})


# ------------------------------------------------------------------ sessions are freed
@pytest.mark.slow
def test_idle_http_sessions_expire_and_dropped_websockets_free_theirs():
    from websockets.sync.client import connect

    with serving(PROVISIONING, session_timeout=0.2, max_sessions=1) as (url, _):
        sid = httpx.post(f"{url}/reset", json={"task": "test-easy-gen"}, timeout=10).json()["observation"]["session_id"]
        code, detail = post(url, "/reset", {})
        assert code == 503 and detail.startswith("the server holds its 1 sessions")
        time.sleep(0.5)
        assert httpx.get(f"{url}/state", timeout=10).json()["sessions"] == 0
        assert post(url, "/step", {"action": {"action": 1}, "session_id": sid})[0] == 404
        with connect(url.replace("http", "ws") + "/ws", open_timeout=10) as ws:
            ws.send(json.dumps({"type": "reset", "data": {"seed": 0}}))
            assert json.loads(ws.recv(timeout=10))["type"] == "observation"
            assert httpx.get(f"{url}/state", timeout=10).json()["sessions"] == 1
            ws.socket.close()   # the client disappears without a close message
        deadline = time.monotonic() + 10
        while httpx.get(f"{url}/state", timeout=10).json()["sessions"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert httpx.get(f"{url}/state", timeout=10).json()["sessions"] == 0


# ------------------------------------------------------------------ every registered environment
@pytest.mark.slow
@pytest.mark.parametrize("env_id, kwargs", [
    (hdeeprm.ENV_ID, {"nb_jobs": 60}),
    (hdeeprm.JOB_SLOT_ENV_ID, {"nb_jobs": 60}),
    (hdeeprm.GPU_PLACEMENT_ENV_ID, {"scenario": "easy-gen"}),
    (hdeeprm.GPU_PROVISIONING_ENV_ID, {"task": "test-easy-gen"}),
])
def test_every_environment_round_trips_observations_and_masks_exactly(env_id, kwargs):
    env = gymnasium.make(env_id, **kwargs)
    rng = np.random.default_rng(0)
    with serving(env_id, kwargs) as (url, _):
        client = Client(url)
        try:
            assert client.observation_space == env.observation_space and client.action_space == env.action_space
            expected, got = env.reset(seed=4), client.reset(seed=4)
            for k in range(40):
                for e, g in zip(jsonable_tree(expected), jsonable_tree(got)):
                    assert type(e) is type(g) and getattr(e, "dtype", None) == getattr(g, "dtype", None), (k, e, g)
                    assert np.array_equal(e, g), k
                if k and (expected[2] or expected[3]):
                    break
                mask = expected[-1].get("action_mask")
                allowed = np.flatnonzero(mask) if mask is not None and mask.any() else np.arange(env.action_space.n)
                action = int(rng.choice(allowed))
                expected, got = env.step(action), client.step(action)
        finally:
            client.close()


def jsonable_tree(value):
    """Leaves of nested tuples and dicts (observation arrays, rewards, flags, info values), in order."""
    if isinstance(value, (tuple, list)) and not isinstance(value, np.ndarray):
        return [leaf for v in value for leaf in jsonable_tree(v)]
    if isinstance(value, dict):
        return [leaf for key in sorted(value) for leaf in jsonable_tree(value[key])]
    if isinstance(value, (np.generic, int, float)) and not isinstance(value, (bool, np.bool_)):
        return [float(value)]
    return [value]


def test_a_placement_task_chosen_at_reset_keeps_the_servers_spaces(shared):
    with serving(hdeeprm.GPU_PLACEMENT_ENV_ID) as (url, app):
        nodes = app.state.hub.observation_space["nodes"].shape[0]
        env = gymnasium.make(hdeeprm.GPU_PLACEMENT_ENV_ID, scenario="test-easy-gen", max_nodes=nodes)
        client = Client(url, task="test-easy-gen")
        try:
            expected, got = env.reset(seed=2), client.reset(seed=2)
            for _ in range(20):
                assert all(np.array_equal(expected[0][key], got[0][key]) for key in ("nodes", "job"))
                assert np.array_equal(expected[-1]["action_mask"], got[-1]["action_mask"])
                assert np.array_equal(expected[-1]["action_mask"], client.action_masks())
                action = int(np.flatnonzero(expected[-1]["action_mask"])[0])
                expected, got = env.step(action), client.step(action)
                assert expected[1:4] == got[1:4]
            refused = r"max_nodes \d+ is below the largest scenario's 1213 nodes|openb node list not found"
            with pytest.raises(RemoteEnvError, match=refused):   # the second without the shared traces
                client.reset(options={"task": "test-openb"})
        finally:
            client.close()
