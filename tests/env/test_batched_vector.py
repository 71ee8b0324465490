"""BatchedVectorEnv: several sub-environments per worker process, the same results as SyncVectorEnv."""
from __future__ import annotations

from functools import partial

import gymnasium
import numpy as np
import pytest

from hdeeprm.env.environment import HDeepRMEnv
from hdeeprm.env.job_slot import JobSlotEnv
from hdeeprm.env.vector import BatchedVectorEnv, merge_infos, split
from hdeeprm.errors import OptionsError

# Quickstart inputs (gaia_mini, Lublin 500), windows of different lengths: episodes end at different steps.
MAKERS = [partial(HDeepRMEnv, nb_jobs=n, observation="small", actions=["first-high_gflops", "random-random", "void"])
          for n in (12, 20, 16, 25, 9)]


def _run(envs, nb_actions=3, steps=60):
    """Reset, step with fixed random actions (a partial reset half-way), close; every result in order."""
    out = [envs.reset(seed=7)]
    actions = np.random.default_rng(0).integers(nb_actions, size=(steps, envs.num_envs))
    for k, action in enumerate(actions):
        out.append(envs.step(action))
        if k == steps // 2:
            mask = np.zeros(envs.num_envs, dtype=bool)
            mask[[0, 3]] = True
            out.append(envs.reset(seed=list(range(envs.num_envs)), options={"reset_mask": mask}))
    envs.close()
    return out


def _assert_same(a, b, where="result"):
    if isinstance(a, dict):
        assert list(a) == list(b), where
        for key in a:
            _assert_same(a[key], b[key], f"{where}[{key!r}]")
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _assert_same(x, y, f"{where}[{i}]")
    elif isinstance(a, np.ndarray):
        assert (a.dtype, a.shape) == (b.dtype, b.shape), where
        if a.dtype == object:
            _assert_same(list(a), list(b), where)
        else:
            np.testing.assert_array_equal(a, b, err_msg=where)
    else:
        assert a == b, where


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2, 3])
def test_batched_workers_return_what_sync_vector_env_returns(workers):
    reference = _run(gymnasium.vector.SyncVectorEnv(MAKERS))
    assert any(step[2].any() for step in reference[1:] if len(step) == 5)   # episodes ended: autoreset ran
    assert any("metrics" in step[-1] for step in reference[1:])
    _assert_same(reference, _run(BatchedVectorEnv(MAKERS, workers=workers)))


@pytest.mark.slow
def test_job_slot_env_with_a_spawned_worker():
    makers = [partial(JobSlotEnv, nb_slots=8, nb_jobs=n, seed=3) for n in (30, 20, 25, 15)]
    _assert_same(_run(gymnasium.vector.SyncVectorEnv(makers), 8, 80),
                 _run(BatchedVectorEnv(makers, workers=2, context="spawn"), 8, 80))


def test_spaces_call_and_a_sub_environment_error():
    envs = BatchedVectorEnv(MAKERS[:4], workers=2)
    assert envs.num_envs == 4 and envs.observation_space.shape == (4, *envs.single_observation_space.shape)
    assert envs.call("max_steps") == (None,) * 4
    with pytest.raises(AttributeError, match="manager"):   # raised in a worker: no reset yet
        envs.call("action_masks")
    assert all(not process.is_alive() for process in envs.processes)


def test_bad_arguments_say_what_to_change():
    with pytest.raises(OptionsError, match="workers must be an integer >= 1, got 0"):
        BatchedVectorEnv(MAKERS, workers=0)
    with pytest.raises(OptionsError, match="at least one sub-environment"):
        BatchedVectorEnv([])
    envs = BatchedVectorEnv(MAKERS[:2], workers=1)
    with pytest.raises(OptionsError, match=r"one seed per sub-environment \(2\), got 3"):
        envs.reset(seed=[1, 2, 3])
    envs.close()


def test_split_and_merge_infos():
    assert split(5, 2) == [(0, 3), (3, 5)] and split(2, 2) == [(0, 1), (1, 2)]
    first = {"queue": np.array([3, 4]), "_queue": np.ones(2, bool), "metrics": {"x": np.array([1.0, 0.0]),
                                                                                 "_x": np.array([True, False])},
             "_metrics": np.array([True, False])}
    second = {"queue": np.array([5]), "_queue": np.ones(1, bool)}
    merged = merge_infos([first, second], [2, 1])
    np.testing.assert_array_equal(merged["queue"], [3, 4, 5])
    np.testing.assert_array_equal(merged["_metrics"], [True, False, False])
    np.testing.assert_array_equal(merged["metrics"]["x"], [1.0, 0.0, 0.0])
    np.testing.assert_array_equal(merged["metrics"]["_x"], [True, False, False])
