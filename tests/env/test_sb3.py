"""Stable-Baselines3 PPO trains on the environment without error (skipped without SB3)."""
from __future__ import annotations

import numpy as np
import pytest

from hdeeprm.env.environment import HDeepRMEnv

from tests.toy import ROOT

sb3 = pytest.importorskip("stable_baselines3")


@pytest.mark.slow
def test_ppo_trains_a_few_thousand_steps():
    env = HDeepRMEnv(platform=ROOT / "platforms" / "kth_sp2.json", workload=ROOT / "workloads" / "lublin_500_100.swf",
                     nb_jobs=50, observation="minimal", objective="avg_job_completion",
                     actions=["first-high_gflops", "shortest-high_gflops", "smallest-high_gflops"])
    model = sb3.PPO("MlpPolicy", env, n_steps=512, batch_size=128, n_epochs=2, seed=0, verbose=0)
    model.learn(total_timesteps=2048)
    assert model.num_timesteps == 2048
    obs, _ = env.reset(seed=0)
    action, _ = model.predict(obs, deterministic=True)
    assert 0 <= int(action) < 3
    assert np.isfinite(model.policy.parameters().__next__().detach().numpy()).all()


def test_sb3_env_checker():
    from stable_baselines3.common.env_checker import check_env

    check_env(HDeepRMEnv(ROOT / "examples" / "learning" / "learning.json"), warn=True)


def test_ppo_trains_on_the_job_slot_env_and_sb3_accepts_it():
    from stable_baselines3.common.env_checker import check_env

    from hdeeprm.env.job_slot import JobSlotEnv

    env = JobSlotEnv(platform=ROOT / "platforms" / "kth_sp2.json", workload=ROOT / "workloads" / "lublin_500_100.swf",
                     nb_jobs=50, nb_slots=16, objective="avg_job_completion")
    with pytest.warns(UserWarning, match="unconventional shape"):   # (K, 5), as SchedGym's; MlpPolicy flattens it
        check_env(env, warn=True)
    model = sb3.PPO("MlpPolicy", env, n_steps=256, batch_size=64, n_epochs=1, seed=0, verbose=0)
    model.learn(total_timesteps=512)
    assert model.num_timesteps == 512
    obs, _ = env.reset(seed=0)
    assert 0 <= int(model.predict(obs, deterministic=True)[0]) < 16
