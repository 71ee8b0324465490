"""Issue 22, item 5: every registered environment refuses bad arguments with one OptionsError naming them.

The rules live in :mod:`hdeeprm.arguments`; each case goes through ``gymnasium.make`` as a user's
code would, and the observations of every environment stay in their Box.
"""
from __future__ import annotations

import re

import gymnasium
import numpy as np
import pytest

import hdeeprm
from hdeeprm.config.options import Options
from hdeeprm.decision.observation import clip_unit
from hdeeprm.errors import OptionsError

CPU_ENVS = (hdeeprm.ENV_ID, hdeeprm.JOB_SLOT_ENV_ID)
GPU_ENVS = (hdeeprm.GPU_PLACEMENT_ENV_ID, hdeeprm.GPU_PROVISIONING_ENV_ID, hdeeprm.GPU_PROVISIONING_V1_ENV_ID)
INF, NAN = float("inf"), float("nan")

#: (environment ids, keyword arguments, the exact message).
CASES = [
    (CPU_ENVS + GPU_ENVS, {"max_steps": 0}, "max_steps must be an integer >= 1 or None, got 0"),
    (CPU_ENVS + GPU_ENVS, {"max_steps": 2.5}, "max_steps must be an integer >= 1 or None, got 2.5"),
    (CPU_ENVS + GPU_ENVS, {"nb_jobs": 2.5}, "nb_jobs must be an integer >= 1 or None, got 2.5"),
    (CPU_ENVS + GPU_ENVS, {"nb_jobs": True}, "nb_jobs must be an integer >= 1 or None, got True"),
    (CPU_ENVS + GPU_ENVS, {"nb_jobs": "10"}, "nb_jobs must be an integer >= 1 or None, got '10'"),
    (CPU_ENVS, {"seed": 1.5}, "seed must be an integer >= 0 or None, got 1.5"),
    (CPU_ENVS, {"options": 3}, "options must be an Options object, the path of an options file or None, got 3"),
    (CPU_ENVS, {"options": {"seed": 1}},
     "options must be an Options object, the path of an options file or None, got {'seed': 1}"),
    ((hdeeprm.ENV_ID,), {"void": "yes"}, "void must be True or False or None, got 'yes'"),
    ((hdeeprm.ENV_ID,), {"void": 1}, "void must be True or False or None, got 1"),
    ((hdeeprm.ENV_ID,), {"action_mask": "no"}, "action_mask must be True or False, got 'no'"),
    ((hdeeprm.ENV_ID,), {"queue_sensitivity": INF}, "queue_sensitivity must be a finite number > 0, got inf"),
    ((hdeeprm.ENV_ID,), {"queue_sensitivity": NAN}, "queue_sensitivity must be a finite number > 0, got nan"),
    ((hdeeprm.ENV_ID,), {"actions": [1, 1]}, "actions must name each action once, got 1 twice"),
    ((hdeeprm.ENV_ID,), {"actions": ["first-random", 6]}, "actions must name each action once, got 6 twice"),
    ((hdeeprm.ENV_ID,), {"actions": "first-random"},
     "actions must be a list of action indices or 'job-core' names, got 'first-random'"),
    ((hdeeprm.JOB_SLOT_ENV_ID,), {"nb_slots": 2.0},
     "nb_slots must be an integer in [1, 4096] (queued jobs shown), got 2.0"),
    ((hdeeprm.JOB_SLOT_ENV_ID,), {"nb_slots": 0},
     "nb_slots must be an integer in [1, 4096] (queued jobs shown), got 0"),
    (GPU_ENVS, {"first_job": -1}, "first_job must be an integer >= 0, got -1"),
    (GPU_ENVS, {"curriculum": "no"}, "curriculum must be True or False, got 'no'"),
    ((hdeeprm.GPU_PLACEMENT_ENV_ID,), {"gpu_slots": 0},
     "gpu_slots must be an integer in [1, 64] (GPUs of one node), got 0"),
    ((hdeeprm.GPU_PLACEMENT_ENV_ID,), {"gpu_slots": 2.5},
     "gpu_slots must be an integer in [1, 64] (GPUs of one node), got 2.5"),
    ((hdeeprm.GPU_PLACEMENT_ENV_ID,), {"curriculum_episodes": 0},
     "curriculum_episodes must be an integer >= 1, got 0"),
    ((hdeeprm.GPU_PLACEMENT_ENV_ID,), {"max_nodes": 0},
     "max_nodes must be an integer in [1, 65536] (nodes) or None, got 0"),
    ((hdeeprm.GPU_PLACEMENT_ENV_ID,), {"frag_weight": NAN}, "frag_weight must be a finite number >= 0, got nan"),
    ((hdeeprm.GPU_PLACEMENT_ENV_ID,), {"wait_weight": INF}, "wait_weight must be a finite number >= 0, got inf"),
    (GPU_ENVS[1:], {"step_seconds": INF}, "step_seconds must be a finite number > 0, got inf"),
    (GPU_ENVS[1:], {"sla_seconds": 0}, "sla_seconds must be a finite number > 0, got 0"),
    (GPU_ENVS[1:], {"gpu_hour_price": INF}, "gpu_hour_price must be a finite number > 0, got inf"),
    (GPU_ENVS[1:], {"budget_share": NAN}, "budget_share must be a finite number > 0, got nan"),
    (GPU_ENVS[1:], {"cost_weight": NAN}, "cost_weight must be a finite number in [0, 1], got nan"),
    (GPU_ENVS[1:], {"initial_share": 1.5}, "initial_share must be a finite number in [0, 1], got 1.5"),
]


@pytest.mark.parametrize("env_id, kwargs, message",
                         [(env_id, kwargs, message) for ids, kwargs, message in CASES for env_id in ids])
def test_bad_arguments_are_one_options_error_naming_them(env_id, kwargs, message):
    with pytest.raises(OptionsError, match=f"^{re.escape(f'{env_id}: {message}')}$"):
        gymnasium.make(env_id, **kwargs)


def test_options_may_be_an_object_or_a_path():
    """The two accepted forms of ``options`` still work (and NumPy integers are counts)."""
    root = hdeeprm.__file__.rsplit("/", 2)[0]
    env = gymnasium.make(hdeeprm.ENV_ID, options=Options(), nb_jobs=np.int64(20), max_steps=np.int32(5))
    assert env.unwrapped.max_steps == 5
    env = gymnasium.make(hdeeprm.JOB_SLOT_ENV_ID, options=f"{root}/examples/quickstart.json", nb_jobs=20)
    assert env.unwrapped.workload.jobs


def test_clip_unit_keeps_every_value_in_the_box():
    values = np.array([NAN, -INF, INF, -0.5, 0.25, 7.0])
    assert clip_unit(values).tolist() == [0.0, 0.0, 1.0, 0.0, 0.25, 1.0]
    assert clip_unit(values).dtype == np.float32


def _rollout(env, steps: int) -> int:
    """Steps taken with random actions; asserts every observation is in the observation space."""
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    env.action_space.seed(int(rng.integers(1000)))
    for step in range(steps):
        assert env.observation_space.contains(obs), f"step {step}: {obs}"
        obs, reward, terminated, truncated, _ = env.step(env.action_space.sample())
        assert np.isfinite(reward)
        if terminated or truncated:
            obs, _ = env.reset()
    assert env.observation_space.contains(obs)
    return steps


@pytest.mark.parametrize("env_id, kwargs", [
    (hdeeprm.ENV_ID, {"observation": "normal", "queue_sensitivity": 1e-300}),
    (hdeeprm.ENV_ID, {"observation": "small", "queue_sensitivity": 1e300}),
    (hdeeprm.JOB_SLOT_ENV_ID, {}),
])
def test_cpu_observations_never_leave_their_box(env_id, kwargs):
    env = gymnasium.make(env_id, nb_jobs=60, disable_env_checker=True, **kwargs).unwrapped
    assert _rollout(env, 150) == 150


@pytest.mark.slow
@pytest.mark.parametrize("env_id, kwargs", [
    (hdeeprm.GPU_PLACEMENT_ENV_ID, {"gpu_slots": 1}),
    (hdeeprm.GPU_PROVISIONING_ENV_ID, {"step_seconds": 1e-3}),
    (hdeeprm.GPU_PROVISIONING_V1_ENV_ID, {"step_seconds": 1e6}),
])
def test_gpu_observations_never_leave_their_box(shared, env_id, kwargs):
    """On the openb cluster with its CPU-only nodes and a pod list with CPU-only pods."""
    gpu = shared / "traces" / "gpu"
    env = gymnasium.make(env_id, platform=gpu / "openb_node_list_all_node.csv",
                         workload=gpu / "openb_pod_list_cpu050.csv", nb_jobs=200, disable_env_checker=True,
                         **kwargs).unwrapped
    assert _rollout(env, 150) == 150
