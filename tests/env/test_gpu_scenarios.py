"""GPU scenarios: held-out split, seeded sampling, the easy -> hard curriculum, trace windows."""
from __future__ import annotations

import numpy as np
import pytest

from hdeeprm.env.gpu_placement import GpuPlacementEnv
from hdeeprm.env.gpu_scenarios import GPU_SCENARIOS, ScenarioSampler, generated_jobs, scenarios
from hdeeprm.errors import OptionsError


def test_test_split_is_held_out_and_covers_every_difficulty():
    train, test = scenarios("train"), scenarios("test")
    assert {s.name for s in train}.isdisjoint(s.name for s in test)
    assert {s.difficulty for s in train} == {s.difficulty for s in test} == {1, 2, 3}
    seen = {(s.platform, s.load, s.seed, s.trace, s.first_job) for s in train}
    assert not any((s.platform, s.load, s.seed, s.trace, s.first_job) in seen for s in test)
    with pytest.raises(OptionsError, match="easy-gen"):
        scenarios(["easy-gne"])


def test_generator_scenarios_are_seeded():
    a, b = generated_jobs(30, seed=4), generated_jobs(30, seed=4)
    assert np.array_equal(a.submit, b.submit) and np.array_equal(a.num_gpu, b.num_gpu) and a.submit[0] == 0.0
    assert not np.array_equal(a.submit, generated_jobs(30, seed=5).submit)
    assert len(GPU_SCENARIOS["medium-gen"].jobs()) == 150


def test_sampling_is_reproducible_per_seed():
    def names(seed):
        env = GpuPlacementEnv(scenario=["easy-gen", "easy-gen-b", "medium-gen"], max_steps=1)
        env.reset(seed=seed)
        out = [env.scenario.name]
        for _ in range(5):
            env.reset()
            out.append(env.scenario.name)
        return out

    assert names(7) == names(7)
    assert len(set(names(7) + names(8))) > 1


def test_curriculum_opens_difficulties_in_order():
    pool = [GPU_SCENARIOS[n] for n in ("easy-gen", "medium-gen", "hard-gen")]
    sampler = ScenarioSampler(pool, curriculum=True, curriculum_episodes=6)
    rng = np.random.default_rng(0)
    drawn = [sampler.draw(rng).difficulty for _ in range(12)]
    assert drawn[:2] == [1, 1] and max(drawn[:4]) <= 2 and max(drawn[:2]) == 1
    assert [ScenarioSampler(pool, True, 6).level()] == [1] and sampler.level() == 3
    assert 3 in drawn[4:]
    with pytest.raises(OptionsError, match="curriculum_episodes"):
        ScenarioSampler(pool, True, 0)


@pytest.mark.slow
def test_philly_windows_of_train_and_test_differ(shared):
    train, test = GPU_SCENARIOS["hard-philly"].jobs(), GPU_SCENARIOS["test-hard-philly"].jobs()
    assert len(train) == len(test) == 200 and set(train.ids).isdisjoint(test.ids)


def test_the_openb_window_is_held_out_on_the_openb_cluster(shared):
    scenario = GPU_SCENARIOS["test-openb"]
    jobs, cluster = scenario.jobs(), scenario.cluster()
    assert scenario.split == "test" and len(jobs) == 300 and cluster.nb_nodes == 1213
    assert 40 * 3600 < jobs.submit[-1] - jobs.submit[0] < 60 * 3600
    assert all(s.cluster().nb_nodes <= 20 for s in scenarios("train"))
