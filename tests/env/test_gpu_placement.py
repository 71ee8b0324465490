"""The selective GPU placement env: a hand-worked tiny cluster, the policy's replay reproduced, Gymnasium's checker."""
from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import hdeeprm
from hdeeprm.decision.gpu_choices import select_node
from hdeeprm.env.gpu_placement import GpuPlacementEnv
from hdeeprm.env.gpu_scenarios import GPU_SCENARIOS
from hdeeprm.errors import OptionsError
from hdeeprm.platform.openb import gpu_cluster
from hdeeprm.run.gpu_replay import GpuRunConfig, simulate_gpu
from hdeeprm.workload.gpu_jobs import gpu_jobs

V100 = "V100 SXM2 16GB"


def tiny():
    """n0: 2 V100 (the reference type), n1: 1 T4; job a: half a V100 (V100 only), job b: one whole GPU, both at 0 s."""
    cluster = gpu_cluster([("n0", 8000, 65536, 2, V100), ("n1", 8000, 65536, 1, "T4")])
    jobs = gpu_jobs([("a", 0, 100, 1, 500, 0, 0, 0, V100), ("b", 0, 100, 1, 1000, 0, 0, 0, "")])
    return GpuPlacementEnv(cluster, jobs)


def test_masks_reward_skip_and_override_by_hand():
    env = tiny()
    obs, info = env.reset(seed=0)
    assert info["job"] == 0 and info["action_mask"].tolist() == [True, False, True]   # a may not use the T4
    assert (env.action_masks() == info["action_mask"]).all()
    assert obs["nodes"].shape == (2, 8 + 8) and obs["nodes"][:, -1].tolist() == [1.0, 0.0]
    # a on n0: allocation +500/3000; ATC'23 fragmentation (typical pods a and b, weight 1 each) goes from
    # 500 (the T4 is idle share a cannot use: 1000 x 1/2) to 750 (n0's half-used GPU is lost to b: 500 x 1/2).
    obs, reward, term, trunc, info = env.step(0)
    assert reward == pytest.approx(500 / 3000 - 250 / 3000)
    assert info["job"] == 1 and info["action_mask"].tolist() == [True, True, True]
    # Skip b: a runs, so the replay goes to a's end at 100 s; b waited 100 s for 1000/3000 of the capacity.
    obs, reward, term, trunc, info = env.step(env.skip)
    assert reward == pytest.approx(-(1000 / 3000) * 100 / 3600) and info["time"] == 100.0 and not term
    assert info["skips_overridden"] == 0
    # Skip b again: nothing runs and nothing is left to arrive, so best_fit places it (on the T4, least left)
    # and the fragmentation of the idle T4 (500) disappears.
    obs, reward, term, trunc, info = env.step(env.skip)
    assert info["skips_overridden"] == 1 and term
    assert reward == pytest.approx(1000 / 3000 + 500 / 3000)
    assert env.replay.model.placements[1][0].node == 1
    assert info["metrics"]["nb_completed"] == 2 and info["metrics"]["mean_waiting_time"] == pytest.approx(50.0)


def spread_cluster():
    """n0: 2 V100, n1 and n2: 1 V100 each (a job of 3 GPUs is spread as 2 + 1, one of 4 as 2 + 2)."""
    return gpu_cluster([("n0", 8000, 65536, 2, V100), ("n1", 8000, 65536, 1, V100), ("n2", 8000, 65536, 1, V100)])


def test_an_overridden_skip_places_every_part_of_a_spread_job():
    jobs = gpu_jobs([("wide", 0, 100, 3, 1000, 0, 0, 0, "")])
    env = GpuPlacementEnv(spread_cluster(), jobs)
    _, info = env.reset(seed=0)
    assert info["job"] == 0 and info["action_mask"].tolist() == [True, False, False, True]   # part 1 (2 GPUs): n0
    _, reward, term, _, info = env.step(env.skip)   # nothing runs, nothing arrives: overridden
    # +3/4 allocated; the fragmentation (typical pod: the 3-GPU job itself, which no single node fits, so all
    # 3 idle GPUs of the 4 count) falls from 3000 to 0 thousandths of the 4000
    assert term and info["skips_overridden"] == 1 and reward == pytest.approx(3 / 4 + 3 / 4)
    assert sorted(p.node for p in env.replay.model.placements[0]) == [0, 1]   # best_fit: n1 before n2 (rank tie)
    assert info["metrics"]["nb_completed"] == 1 and env.replay.manager.queue == []


def test_a_spread_job_that_can_never_run_is_rejected_not_dropped():
    """Parts 2 + 2 on nodes of 2, 1, 1 GPUs: the job used to stay queued and end the episode unrun."""
    jobs = gpu_jobs([("never", 0, 100, 4, 1000, 0, 0, 0, ""), ("one", 0, 100, 1, 1000, 0, 0, 0, "")])
    env = GpuPlacementEnv(spread_cluster(), jobs)
    _, info = env.reset(seed=0)
    assert info["job"] == 1 and env.replay.rejected.tolist() == [True, False]
    _, _, term, _, info = env.step(env.skip)
    assert term and info["skips_overridden"] == 1
    assert info["metrics"]["nb_completed"] == 1 and info["metrics"]["nb_rejected"] == 1


def test_a_masked_node_is_a_skip_and_bad_actions_raise():
    env = tiny()
    env.reset(seed=0)
    _, reward, _, _, info = env.step(1)   # the T4, masked for a
    assert info["job"] == 1 and reward == 0.0 and env.replay.manager.queue == [0, 1]
    with pytest.raises(Exception, match="action"):
        env.step(7)


def test_placing_where_the_policy_would_reproduces_the_replay():
    """An agent choosing best_fit's node at every decision gives hdeeprm-launch's schedule, job by job."""
    scenario = GPU_SCENARIOS["medium-gen"]
    cluster, jobs = scenario.cluster(), scenario.jobs()
    env = GpuPlacementEnv(cluster, jobs)
    _, info = env.reset(seed=0)
    done = False
    while not done:
        manager = env.replay.manager
        node, _ = select_node(manager.state, manager.chunks[info["job"]][0], manager.policy, manager.rank,
                              manager.rng)
        _, _, done, _, info = env.step(node)
    expected = simulate_gpu(cluster, jobs, GpuRunConfig())
    assert np.array_equal(env.replay.start_time, expected.start_time, equal_nan=True)
    assert np.array_equal(env.replay.result().gpu.timeline.allocated, expected.gpu.timeline.allocated)
    assert info["metrics"]["nb_completed"] == float((~expected.rejected).sum()) > 100


def test_gymnasium_checker_and_registered_id():
    env = gymnasium.make(hdeeprm.GPU_PLACEMENT_ENV_ID, scenario=["easy-gen", "medium-gen"])
    check_env(env.unwrapped)
    obs, info = env.reset(seed=3)
    assert obs["nodes"].shape[0] == 20 and info["scenario"] in ("easy-gen", "medium-gen")
    assert info["action_mask"][14:20].sum() == 0 or info["scenario"] == "medium-gen"   # padded nodes masked


def test_inputs_are_checked():
    with pytest.raises(OptionsError, match="both platform and workload"):
        GpuPlacementEnv(platform="platforms/dgx_a100.json")
    with pytest.raises(OptionsError, match="frag_weight"):
        GpuPlacementEnv(frag_weight=-1)


def test_the_1213_node_openb_cluster(shared):
    """The observation and mask scale to the real openb cluster and pod list."""
    gpu = shared / "traces" / "gpu"
    env = GpuPlacementEnv(gpu / "openb_node_list_gpu_node.csv", gpu / "openb_pod_list_default.csv", nb_jobs=40)
    obs, info = env.reset(seed=0)
    assert obs["nodes"].shape == (1213, 16) and env.action_space.n == 1214
    assert env.observation_space.contains(obs)
    for _ in range(40):
        mask = info["action_mask"]
        nodes = np.flatnonzero(mask[:-1])
        assert len(nodes) and (obs["nodes"][nodes, -1] == 1.0).all()
        obs, reward, term, trunc, info = env.step(int(nodes[-1]))
        if term:
            break
    assert term and info["metrics"]["nb_completed"] + info["metrics"]["nb_rejected"] == 40
