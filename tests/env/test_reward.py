"""Rewards of the six objectives, worked out by hand on the learning toy."""
from __future__ import annotations

import numpy as np
import pytest

from hdeeprm.errors import OptionsError
from hdeeprm.decision.reward import OBJECTIVES
from hdeeprm.decision.reward import make_reward

from tests.toy import toy_episode

# Toy: processor 0 = cores 0, 1 (G 4 GFLOP/s, P 40 W), processor 1 = cores 2, 3 (4.4 GFLOP/s, 50 W),
# 32 GB/s each; two 1-core jobs of 24 GB/s. Action 0 (shortest-high_gflops) packs both jobs on
# processor 1 (48 > 32 GB/s: P1, 0.75 G), action 1 (shortest-high_mem_bw) spreads them (P0),
# action 2 (shortest-low_power) packs them on processor 0 (P1).
EXPECTED = {
    0: {"makespan": 2 * 0.75 * 4.4, "energy_consumption": -(2 * 50 + 2 * 0.05 * 40),
        "edp": -((2 * 50 + 2 * 0.05 * 40) / 180) * (16.8 / 6.6) ** 2},
    1: {"makespan": 4.0 + 4.4, "energy_consumption": -(40 + 50 + 0.25 * 40 + 0.25 * 50),
        "edp": -(112.5 / 180) * (16.8 / 8.4) ** 2},
    2: {"makespan": 2 * 0.75 * 4.0, "energy_consumption": -(2 * 40 + 2 * 0.05 * 50),
        "edp": -(85 / 180) * (16.8 / 6.0) ** 2},
}


@pytest.mark.parametrize("action", [0, 1, 2])
def test_pstate_objectives(toy_hierarchy, toy_workload, toy_options, action):
    ep = toy_episode(toy_hierarchy, toy_workload, toy_options, action)
    for objective, value in EXPECTED[action].items():
        assert make_reward(objective)(ep.view) == pytest.approx(value, rel=1e-12), objective


def test_job_count_objectives(toy_hierarchy, toy_workload, toy_options):
    ep = toy_episode(toy_hierarchy, toy_workload, toy_options, 1)
    assert make_reward("avg_job_slowdown")(ep.view) == pytest.approx(-2 / 5)  # two running jobs, 5 s requested
    assert make_reward("avg_job_completion")(ep.view) == -2.0
    assert make_reward("avg_utilization")(ep.view) == 2.0


def test_edp_of_an_idle_platform_uses_the_floor_speed(toy_hierarchy, toy_workload, toy_options):
    from hdeeprm.run.episode import Episode

    ep = Episode(toy_hierarchy, toy_workload, actions=toy_options.actions, seed=0, record=False)
    ep.advance()  # nothing started: every core in P3, 4 x 0.05 P
    floor = 0.75 * 4.0
    assert make_reward("edp")(ep.view) == pytest.approx(-(0.05 * 180 / 180) * (16.8 / floor) ** 2)
    assert make_reward("makespan")(ep.view) == 0.0


@pytest.mark.parametrize("objective", OBJECTIVES.names())
def test_every_objective_along_a_whole_episode(objective):
    """Each objective's reward, at every step of a whole 120-job episode, equals its definition
    recomputed from scratch (pstate factors x core G and P, busy cores, job counts)."""
    from hdeeprm.env.environment import HDeepRMEnv
    from hdeeprm.platform.hierarchy import PSTATE_POWER_FACTORS, PSTATE_SPEED_FACTORS

    from tests.toy import ROOT

    env = HDeepRMEnv(platform=ROOT / "platforms" / "gaia_mini.json", workload=ROOT / "workloads" / "lublin_500_100.swf",
                     nb_jobs=120, objective=objective, actions=["first-high_gflops", "smallest-low_power"],
                     action_mask=False)
    h = env.hierarchy
    speed_f, power_f = np.asarray(PSTATE_SPEED_FACTORS), np.asarray(PSTATE_POWER_FACTORS)
    g_max, p_max = h.core_speed.sum() / 1e9, h.core_power.sum()
    floor = 0.75 * h.core_speed.min() / 1e9

    def oracle(view):
        pstate = view.resources.core_pstate
        speed = float((h.core_speed / 1e9 * speed_f[pstate]).sum())
        power = float((h.core_power * power_f[pstate]).sum())
        busy = sum(job.res for job, _ in view.running.values())
        return {"avg_job_slowdown": None, "avg_job_completion": -(len(view.queue) + len(view.running)),
                "avg_utilization": busy, "makespan": speed, "energy_consumption": -power,
                "edp": -(power / p_max) * (g_max / max(speed, floor)) ** 2}[objective]

    reward, checked = env.reward_fn, []

    def compare(view):
        value = reward(view)
        expected = oracle(view)
        if expected is not None:
            assert value == pytest.approx(expected, rel=1e-9, abs=1e-12)
        checked.append(value)
        return value

    env.reward_fn = compare
    env.reset(seed=1)
    done, steps = False, 0
    while not done:
        _, r, done, _, info = env.step(steps % 2)
        assert r == checked[-1]
        steps += 1
    m = info["metrics"]
    assert m["nb_completed"] + m["nb_killed"] + m["nb_rejected"] == 120 and steps == len(checked) > 50
    assert len(set(checked)) > 5   # the reward follows the state, it is not a constant


def test_unknown_objective():
    with pytest.raises(OptionsError, match=r"unknown objective 'makespam' \(valid: avg_job_slowdown, "
                                           r"avg_job_completion, avg_utilization, makespan, energy_consumption, "
                                           r"edp; did you mean 'makespan'\?\)"):
        make_reward("makespam")


def test_slowdown_reward_equals_the_direct_sum_along_a_trace():
    from hdeeprm.env.environment import HDeepRMEnv
    from hdeeprm.decision.observation import requested_times

    from tests.toy import ROOT

    env = HDeepRMEnv(platform=ROOT / "platforms" / "kth_sp2.json", workload=ROOT / "workloads" / "lublin_500_100.swf",
                     nb_jobs=150, actions=["first-high_gflops", "smallest-low_power"], action_mask=False)
    rt = requested_times(env.workload)
    reward, seen = env.reward_fn, []

    def checked(view):  # the reward is computed right after the action, before the simulation advances
        expected = -sum(1 / rt[j.index] for j in view.queue) - sum(1 / rt[i] for i in view.running)
        value = reward(view)
        assert value == pytest.approx(expected, rel=1e-12, abs=1e-15)
        seen.append(len(view.queue))
        return value

    env.reward_fn = checked
    env.reset(seed=0)
    done, steps = False, 0
    while not done:
        _, _, done, _, _ = env.step(int(steps % 3 == 0))
        steps += 1
    assert len(seen) == steps > 100 and max(seen) > 10  # the queue really grew and shrank
