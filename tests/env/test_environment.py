"""The Gymnasium environment: API contract, the toy's known outcomes, determinism, errors."""
from __future__ import annotations

import re
import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from hdeeprm import register_envs
from hdeeprm.env.environment import ENV_ID, HDeepRMEnv
from hdeeprm.errors import AgentError, OptionsError

from tests.toy import ROOT, TOY_OPTIONS

LUBLIN = ROOT / "workloads" / "lublin_500_100.swf"
KTH_PLATFORM = ROOT / "platforms" / "kth_sp2.json"


@pytest.mark.parametrize("observation", ["normal", "small", "minimal", "generations"])
def test_check_env_passes(observation):
    check_env(HDeepRMEnv(TOY_OPTIONS, observation=observation), skip_render_check=True)


def test_check_env_on_a_trace_with_the_void_action():
    env = HDeepRMEnv(platform=KTH_PLATFORM, workload=LUBLIN, nb_jobs=30, observation="small", void=True)
    assert env.action_space.n == 37
    check_env(env, skip_render_check=True)


def test_make_by_id():
    register_envs()  # idempotent
    env = gymnasium.make(ENV_ID, options=str(TOY_OPTIONS))
    obs, info = env.reset(seed=3)
    assert env.observation_space.shape == (21,) and env.action_space.n == 5
    assert obs.shape == (21,) and info["action_mask"].tolist() == [True] * 5


@pytest.mark.parametrize(("action", "reward", "makespan"), [
    (0, 6.6, 21 / 3.3),   # both jobs on the 4.4 GFLOP/s processor, contended: 3.3 GFLOP/s each
    (1, 8.4, 21 / 4.0),   # spread: 4 and 4.4 GFLOP/s; the slower job ends at 5.25 s
    (2, 6.0, 21 / 3.0),   # both on the 4 GFLOP/s processor, contended
])
def test_toy_one_step_episode(action, reward, makespan):
    env = HDeepRMEnv(TOY_OPTIONS)
    env.reset(seed=0)
    obs, r, terminated, truncated, info = env.step(action)
    assert r == pytest.approx(reward)
    assert (terminated, truncated) == (True, False)
    assert info["metrics"]["makespan"] == pytest.approx(makespan)
    assert info["action_mask"].tolist() == [False] * 5
    np.testing.assert_array_equal(obs, 0.0)  # empty queue, which emptied


def _trajectory(env, seed, n=200):
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(0)
    out = [obs]
    for _ in range(n):
        obs, r, term, trunc, _ = env.step(int(rng.integers(env.action_space.n)))
        out.append(np.r_[obs, r])
        if term or trunc:
            break
    return np.concatenate(out)


def test_same_seed_same_trajectory_and_truncation():
    env = HDeepRMEnv(platform=KTH_PLATFORM, workload=LUBLIN, nb_jobs=60, observation="normal", max_steps=25)
    a = _trajectory(env, 5)
    b = _trajectory(env, 5)
    np.testing.assert_array_equal(a, b)
    env.reset(seed=1)
    for step in range(25):
        _, _, term, trunc, _ = env.step(0)
    assert (term, trunc, env.steps) == (False, True, 25)


def test_whole_trace_terminates_with_every_job_ended():
    env = HDeepRMEnv(platform=KTH_PLATFORM, workload=LUBLIN, nb_jobs=40, action_mask=False)
    _, info = env.reset(seed=0)
    assert "action_mask" not in info
    term = False
    while not term:
        _, _, term, _, info = env.step(1)
    m = info["metrics"]
    assert m["nb_completed"] + m["nb_killed"] + m["nb_rejected"] == 40 == info["jobs_ended"]


def test_actions_by_name_and_errors():
    env = HDeepRMEnv(TOY_OPTIONS, actions=["first-high_gflops", "void"])
    assert env.options.actions == [6 + 1, 36]
    env = HDeepRMEnv(TOY_OPTIONS, actions=["wfp3-high_gflops", "first-contiguous"])   # beyond the original 37
    assert env.options.actions == [93, 38]
    with pytest.raises(OptionsError, match=re.escape(
            "unknown core-selection policy 'fast' (valid: random, high_gflops, high_cores, high_mem, high_mem_bw, "
            "low_power, contiguous)")):
        HDeepRMEnv(TOY_OPTIONS, actions=["first-fast"])
    with pytest.raises(OptionsError, match="^hdeeprm/HDeepRM-v0: max_steps must be an integer >= 1 or None, got 0$"):
        HDeepRMEnv(TOY_OPTIONS, max_steps=0)
    with pytest.raises(gymnasium.error.ResetNeeded, match=re.escape("call reset() before step()")):
        HDeepRMEnv(TOY_OPTIONS).step(0)
    env = HDeepRMEnv(TOY_OPTIONS)
    env.reset(seed=0)
    with pytest.raises(AgentError, match=r"^the action must be an integer in \[0, 4\], got 5$"):
        env.step(5)
