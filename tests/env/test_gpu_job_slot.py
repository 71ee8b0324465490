"""The GPU job-slot environment: the agent picks which queued GPU job starts, a placement policy places it."""
from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import hdeeprm
from hdeeprm.platform.openb import gpu_cluster
from hdeeprm.workload.gpu_jobs import gpu_jobs


def _env(**kwargs):
    # one node, 2 V100 (speed factor 1); A (1 GPU, 100 s) at 0 s, B (both GPUs, 50 s) at 10 s, C (1 GPU, 200 s)
    # at 20 s, D (1 GPU, 60 s) at 30 s
    cluster = gpu_cluster([("n0", 8000, 65536, 2, "V100M16")])
    jobs = gpu_jobs([("A", 0, 100, 1, 1000, 0, 0, 0, ""), ("B", 10, 50, 2, 1000, 0, 0, 0, ""),
                     ("C", 20, 200, 1, 1000, 0, 0, 0, ""), ("D", 30, 60, 1, 1000, 0, 0, 0, "")])
    return gymnasium.make(hdeeprm.GPU_JOB_SLOT_ENV_ID, platform=cluster, workload=jobs, slots=4, **kwargs).unwrapped


def test_the_agent_picks_the_job_and_the_return_is_minus_the_mean_wait():
    env = _env()
    obs, info = env.reset(seed=0)
    assert info["time"] == 0.0 and info["action_mask"].tolist() == [True, False, False, False, True]
    obs, reward, *_ , info = env.step(0)           # A starts at 0 s on GPU 0
    assert reward == pytest.approx(-10 / 3600 / 4)   # then B waits alone on [10, 20): job-hours over 4 jobs
    # nothing else queued: the replay runs to 20 s, where C fits (B, first in FCFS order, does not)
    assert info["time"] == 20.0 and info["action_mask"].tolist() == [False, True, False, False, True]
    assert obs.shape == (5, 8) and obs[0, 0] == 1.0 and obs[0, 7] == 0.0 and obs[1, 7] == 1.0
    obs, reward, *_ , info = env.step(4)           # wait: at 30 s D arrives
    assert info["time"] == 30.0 and info["action_mask"].tolist() == [False, True, True, False, True]
    assert reward == pytest.approx(-(10 * 2) / 3600 / 4)   # B and C wait on [20, 30)
    obs, reward, *_ , info = env.step(2)           # D (slot 2) starts at 30 s, before C
    done = False
    while not done:                                 # then strict FCFS: the head if it fits, else wait
        obs, reward, terminated, truncated, info = env.step(0 if info["action_mask"][0] else 4)
        done = terminated or truncated
    start = env.replay.start_time
    assert start.tolist() == [0.0, 100.0, 150.0, 30.0]   # B when A and D are done, C after B
    waits = start - env.replay.jobs.submit
    assert info["metrics"]["mean_waiting_time"] == pytest.approx(waits.mean())


def test_waiting_forever_is_replaced_by_the_first_job_that_fits():
    cluster = gpu_cluster([("n0", 8000, 65536, 2, "V100M16")])
    jobs = gpu_jobs([("only", 5, 100, 1, 1000, 0, 0, 0, "")])
    env = gymnasium.make(hdeeprm.GPU_JOB_SLOT_ENV_ID, platform=cluster, workload=jobs, slots=2).unwrapped
    obs, info = env.reset(seed=0)
    # nothing runs and no submission is left: waiting would last forever, so it is masked ...
    assert info["action_mask"].tolist() == [True, False, False]
    obs, reward, terminated, truncated, info = env.step(2)
    # ... and replaced by the first job that fits, which starts now
    assert info["waits_overridden"] == 1 and terminated
    assert env.replay.start_time.tolist() == env.replay.jobs.submit.tolist()


def test_random_valid_episodes_end_with_every_job_done_on_a_generated_scenario():
    env = gymnasium.make(hdeeprm.GPU_JOB_SLOT_ENV_ID, scenario="easy-gen").unwrapped
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(3)
    total, done = 0.0, False
    while not done:
        assert env.observation_space.contains(obs)
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        total += reward
        done = terminated or truncated
    metrics = info["metrics"]
    assert metrics["nb_completed"] + metrics["nb_rejected"] == len(env.replay.jobs)
    assert total == pytest.approx(-metrics["mean_waiting_time"] / 3600 * len(env.replay.jobs) / metrics["nb_completed"]
                                  if metrics["nb_rejected"] else -metrics["mean_waiting_time"] / 3600)
