"""Vectorised environments: Gymnasium's AsyncVectorEnv and SB3's SubprocVecEnv over HDeepRM-v0 on a real trace.

Two sub-environments replay windows of different sizes of the KTH-SP2 trace (20 and 30 jobs: one
decision per job with the single pair first-high_gflops), so their episodes end at different steps and
each autoreset can be checked on its own. Results in worker processes must equal the same envs stepped
in this process (SyncVectorEnv, DummyVecEnv).
"""
from __future__ import annotations

from functools import partial

import gymnasium
import numpy as np
import pytest

from hdeeprm import ENV_ID, JOB_SLOT_ENV_ID
from hdeeprm.env.environment import HDeepRMEnv

from tests.toy import ROOT

WINDOWS = (20, 30)   # jobs of each sub-env's window; with first-high_gflops every job is one decision here
STEPS = 65           # long enough for the 20-job env to end three times and the 30-job env twice


def _makers(shared, **changes):
    """Picklable constructors of the two sub-envs (the trace is read in each worker)."""
    kwargs = dict(platform=str(ROOT / "platforms" / "kth_sp2.json"),
                  workload=str(shared / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"), observation="small",
                  actions=["first-high_gflops", "random-random", "void"], **changes)
    return [partial(HDeepRMEnv, nb_jobs=n, **kwargs) for n in WINDOWS]


def _gym_run(envs, seed, random_pairs=False):
    """Step ``envs`` with a fixed action sequence; returns the stacked observations, rewards, flags, infos.

    The actions are first-high_gflops (episode lengths are known), or with ``random_pairs`` first-high_gflops
    and random-random drawn from a fixed generator (the episode seeds then change the schedules).
    """
    obs, info = envs.reset(seed=seed)
    actions = np.zeros((STEPS, envs.num_envs), dtype=np.int64)
    if random_pairs:
        actions = np.random.default_rng(0).integers(2, size=actions.shape)
    out = {"obs": [obs], "reward": [], "terminated": [], "truncated": [], "infos": [info]}
    for action in actions:
        obs, reward, terminated, truncated, info = envs.step(action)
        for key, value in zip(("obs", "reward", "terminated", "truncated", "infos"),
                              (obs, reward, terminated, truncated, info)):
            out[key].append(value)
    envs.close()
    return out


@pytest.mark.slow
def test_async_vector_env_equals_sync_and_autoresets_each_sub_env(shared):
    makers = _makers(shared)
    envs = gymnasium.vector.AsyncVectorEnv(makers, context="spawn")   # spawn: every constructor is pickled
    assert envs.single_observation_space == HDeepRMEnv(**makers[0].keywords).observation_space
    run = _gym_run(envs, seed=7)
    obs = np.stack(run["obs"])
    hierarchy = HDeepRMEnv(**makers[0].keywords).hierarchy   # small: per node, per processor, 21 queue values
    assert obs.shape == (STEPS + 1, 2, hierarchy.nb_nodes + hierarchy.nb_processors + 21)
    assert obs.dtype == np.float32 and ((obs >= 0) & (obs <= 1)).all()
    mask = run["infos"][0]["action_mask"]
    assert mask.shape == (2, 3) and mask.dtype == bool
    terminated = np.array(run["terminated"])
    # each sub-env's episode ends after its window's decisions, then the next step resets it (NEXT_STEP
    # autoreset: reward 0, not terminated, the observation of a fresh start) and it runs again
    ends = [np.flatnonzero(terminated[:, i]).tolist() for i in range(2)]
    assert ends == [[19, 40, 61], [29, 60]]
    for i, env_ends in enumerate(ends):
        for step in env_ends:
            info = run["infos"][step + 1]
            assert info["_metrics"][i] and info["metrics"]["nb_jobs"][i] == WINDOWS[i]
            assert info["metrics"]["nb_completed"][i] == WINDOWS[i]
            if step + 1 < STEPS:
                assert run["reward"][step + 1][i] == 0.0 and not terminated[step + 1, i]
                np.testing.assert_array_equal(obs[step + 2, i], obs[0, i])
    assert not np.array(run["truncated"]).any()
    # with random policies: a seeded rerun, and the same envs in this process, give the very same arrays;
    # another seed gives other schedules
    runs = [_gym_run(gymnasium.vector.AsyncVectorEnv(makers, shared_memory=False), seed=7, random_pairs=True),
            _gym_run(gymnasium.vector.AsyncVectorEnv(makers), seed=7, random_pairs=True),
            _gym_run(gymnasium.vector.SyncVectorEnv(makers), seed=7, random_pairs=True)]
    for other in runs[1:]:
        for key in ("obs", "reward", "terminated", "truncated"):
            np.testing.assert_array_equal(np.array(runs[0][key]), np.array(other[key]), err_msg=key)
    reseeded = _gym_run(gymnasium.vector.SyncVectorEnv(makers), seed=8, random_pairs=True)
    assert not np.array_equal(np.array(runs[0]["obs"]), np.array(reseeded["obs"]))


@pytest.mark.parametrize(("env_id", "extra", "shape"), [
    (ENV_ID, {"observation": "minimal", "actions": ["first-high_gflops", "smallest-low_power", "void"]}, (21,)),
    (JOB_SLOT_ENV_ID, {"nb_slots": 8}, (8, 5)),
])
def test_make_vec_by_id(shared, env_id, extra, shape):
    envs = gymnasium.make_vec(env_id, num_envs=2, vectorization_mode="async", nb_jobs=20,
                              platform=str(ROOT / "platforms" / "kth_sp2.json"),
                              workload=str(shared / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"), **extra)
    obs, info = envs.reset(seed=0)
    n = envs.single_action_space.n
    assert obs.shape == (2, *shape) and info["action_mask"].shape == (2, n)
    obs, reward, terminated, truncated, info = envs.step(np.array([0, 1]))
    assert obs.shape == (2, *shape) and reward.shape == (2,) and reward.dtype == np.float64
    assert not terminated.any() and info["jobs_ended"].shape == (2,)
    envs.close()


def _sb3_run(venv, seed):
    venv.seed(seed)
    obs = [venv.reset()]
    rewards, dones, infos = [], [], []
    for _ in range(STEPS):
        o, r, d, i = venv.step(np.zeros(venv.num_envs, dtype=np.int64))
        obs.append(o), rewards.append(r), dones.append(d), infos.append(i)
    masks = venv.env_method("action_masks")
    venv.close()
    return np.array(obs), np.array(rewards), np.array(dones), infos, masks


def test_sb3_subproc_vec_env_equals_dummy_vec_env(shared):
    vec_env = pytest.importorskip("stable_baselines3.common.vec_env")
    makers = _makers(shared)
    obs, rewards, dones, infos, masks = _sb3_run(vec_env.SubprocVecEnv(makers, start_method="fork"), seed=3)
    assert obs.shape[:2] == (STEPS + 1, 2) and rewards.shape == dones.shape == (STEPS, 2)
    # SB3 resets at once: the step that ends an episode returns the next episode's first observation and
    # puts the last one (and the metrics) in info
    ends = [np.flatnonzero(dones[:, i]).tolist() for i in range(2)]
    assert ends == [[19, 39, 59], [29, 59]]
    for i, env_ends in enumerate(ends):
        for step in env_ends:
            info = infos[step][i]
            assert info["metrics"]["nb_completed"] == WINDOWS[i] and not info["TimeLimit.truncated"]
            assert info["terminal_observation"].shape == obs.shape[2:]
            np.testing.assert_array_equal(obs[step + 1, i], obs[0, i])
    assert [m.tolist() for m in masks] == [[True] * 3] * 2   # env_method reaches the envs in the workers
    local = _sb3_run(vec_env.DummyVecEnv(makers), seed=3)
    for got, want in zip((obs, rewards, dones), local[:3]):   # DummyVecEnv keeps rewards in float32
        np.testing.assert_array_equal(got.astype(want.dtype), want)
