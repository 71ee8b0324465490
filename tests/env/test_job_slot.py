"""The job-slot environment: Gymnasium's checker, a hand-worked schedule, masks, waits and errors."""
from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from hdeeprm import JOB_SLOT_ENV_ID, register_envs
from hdeeprm.env.job_slot import SLOT_FEATURES, JobSlotEnv
from hdeeprm.errors import AgentError, OptionsError
from hdeeprm.workload.model import Job, Profile, Workload

from tests.toy import ROOT

LUBLIN = ROOT / "workloads" / "lublin_500_100.swf"
KTH_PLATFORM = ROOT / "platforms" / "kth_sp2.json"


def test_check_env_passes_on_a_real_trace():
    env = JobSlotEnv(platform=KTH_PLATFORM, workload=LUBLIN, nb_jobs=60, nb_slots=16)
    assert env.observation_space.shape == (16, len(SLOT_FEATURES))
    check_env(env, skip_render_check=True)


def test_make_by_id_with_the_default_128_slots():
    register_envs()
    env = gymnasium.make(JOB_SLOT_ENV_ID)    # the quickstart inputs
    obs, info = env.reset(seed=0)
    assert obs.shape == (128, 5) and env.action_space.n == 128
    assert info["action_mask"].any() and not info["action_mask"][info["queue"]:].any()


def _workload():
    # a: 2 cores 10 s, b: 4 cores 5 s, c: 1 core 20 s, all at t = 0; d: 1 core 1 s at t = 2.
    def job(i, name, subtime, res, delay):
        return Job(i, name, subtime, res, 100.0, Profile(f"p{i}", "delay", delay=delay))
    return Workload([job(0, "a", 0.0, 2, 10.0), job(1, "b", 0.0, 4, 5.0), job(2, "c", 0.0, 1, 20.0),
                     job(3, "d", 2.0, 1, 1.0)], nb_res=4)


def test_a_hand_worked_schedule_on_the_toy_platform(toy_hierarchy):
    # 4 cores. The agent starts b (all 4 cores) first, so a, c wait; at t = 5 (d queued since 2) it
    # picks d, then c, then a: every one fits at t = 5 (1 + 1 + 2 cores), all at the same instant.
    env = JobSlotEnv(platform=toy_hierarchy, workload=_workload(), nb_slots=3, objective="avg_job_completion")
    obs, info = env.reset(seed=0)
    assert info["time"] == 0.0 and info["action_mask"].tolist() == [True, True, True]
    # Rows: waiting 0; requested time 100 s / p99 of requested times (100): 1; cores / p99 of cores
    # (np.percentile of [2, 4, 1, 1] at 99 = 3.94); can start now.
    assert obs[1].tolist() == pytest.approx([0.0, 1.0, 1.0, 0.0, 1.0])
    assert obs[0, 2] == pytest.approx(2 / 3.94) and obs[2, 2] == pytest.approx(1 / 3.94)
    obs, reward, terminated, truncated, info = env.step(1)          # b
    assert info["time"] == 5.0 and info["queue"] == 3               # b ended; a, c, d queued, all fit
    assert reward == -3.0                                           # avg_job_completion: -(pending + running)
    assert obs[2, 0] == pytest.approx((5.0 - 2.0) / 100.0)         # d has waited 3 s
    for slot, queue_after in ((2, 2), (1, 1), (0, 0)):                # d, then c, then a, all at t = 5
        assert env.action_masks()[slot]
        obs, reward, terminated, truncated, info = env.step(slot)
        assert info["queue"] == queue_after
    assert terminated and info["metrics"]["nb_completed"] == 4
    result = env.episode.engine.result()
    assert result.start_time.tolist() == [5.0, 0.0, 5.0, 5.0]
    assert result.finish_time.tolist() == [15.0, 5.0, 25.0, 6.0]


def test_a_masked_slot_waits_for_the_next_event(toy_hierarchy):
    env = JobSlotEnv(platform=toy_hierarchy, workload=_workload(), nb_slots=4)
    env.reset(seed=0)
    env.step(0)                                  # a on 2 cores; b (4 cores) cannot start, c can
    assert env.action_masks().tolist() == [False, True, False, False]
    _, _, _, _, info = env.step(0)              # slot 0 is b now: masked, so wait
    assert info["time"] == 2.0 and info["queue"] == 3   # d arrived at t = 2


def test_waiting_forever_starts_the_first_job_that_fits(toy_hierarchy):
    one = Workload([Job(0, "a", 0.0, 1, 100.0, Profile("p", "delay", delay=1.0))], nb_res=4)
    env = JobSlotEnv(platform=toy_hierarchy, workload=one, nb_slots=2)
    env.reset(seed=0)
    _, _, terminated, _, info = env.step(1)     # an empty slot, and nothing else will ever happen
    assert terminated and info["waits_overridden"] == 1 and info["metrics"]["nb_completed"] == 1


def test_same_seed_same_episode():
    def run():
        env = JobSlotEnv(platform=KTH_PLATFORM, workload=LUBLIN, nb_jobs=80, nb_slots=8, core_selection="random")
        obs, info = env.reset(seed=5)
        rng, trace = np.random.default_rng(1), []
        done = False
        while not done:
            action = int(rng.choice(np.flatnonzero(info["action_mask"])))
            obs, reward, terminated, truncated, info = env.step(action)
            trace.append((action, reward, info["time"]))
            done = terminated or truncated
        return trace, info["metrics"]
    assert run() == run()


def test_the_short_queue_observation_equals_the_array_one(monkeypatch):
    """A queue of up to 8 jobs is observed row by row in Python: the same float32 values as the arrays give."""
    from hdeeprm.env import job_slot
    env = JobSlotEnv(platform=KTH_PLATFORM, workload=LUBLIN, nb_jobs=200, nb_slots=16)
    obs, info = env.reset(seed=0)
    rng, seen, done = np.random.default_rng(3), set(), False
    while not done:
        queued = len(env.episode.manager.queue)
        short = env._observe()
        monkeypatch.setattr(job_slot, "_SHORT_QUEUE", 0)   # every queue through the arrays
        assert np.array_equal(short.view(np.uint32), env._observe().view(np.uint32)), queued   # to the bit
        monkeypatch.undo()
        seen.add(min(queued, 9))
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        done = terminated or truncated
    assert {1, 2, 8} <= seen and 9 in seen   # short queues of several lengths, and long ones
    assert not obs[:, 0].any() or 0.0 < obs[:, 0].max() <= 1.0


@pytest.mark.parametrize("kwargs, message", [
    ({"nb_slots": 0},
     r"^hdeeprm/HDeepRM-JobSlot-v0: nb_slots must be an integer in \[1, 4096\] \(queued jobs shown\), got 0$"),
    ({"core_selection": "fastest"}, "unknown core-selection policy 'fastest'"),
])
def test_bad_arguments(toy_hierarchy, kwargs, message):
    with pytest.raises(OptionsError, match=message):
        JobSlotEnv(platform=toy_hierarchy, workload=_workload(), **kwargs)


def test_non_integer_actions_are_refused(toy_hierarchy):
    env = JobSlotEnv(platform=toy_hierarchy, workload=_workload(), nb_slots=3)
    env.reset(seed=0)
    with pytest.raises(AgentError, match=r"must be an integer in \[0, 2\], got 1.5"):
        env.step(1.5)


def test_the_mask_is_the_managers_fit_test_when_node_memory_binds():
    """6,000 MB per core on gaia_mini's 4,096 MB per core nodes: many shown jobs have the cores but not the memory."""
    from hdeeprm.config.options import Options

    env = JobSlotEnv(Options().replace(default_mem=6000.0), nb_slots=16, nb_jobs=120)
    _, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    blocked_by_memory = 0
    done = False
    while not done:
        manager = env.episode.manager
        shown = manager.queue[:16]
        assert info["action_mask"].tolist() == [manager.fits(job) for job in shown] + [False] * (16 - len(shown))
        blocked_by_memory += sum(job.res <= manager.resources.nb_free and not manager.fits(job) for job in shown)
        _, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    assert blocked_by_memory > 100
