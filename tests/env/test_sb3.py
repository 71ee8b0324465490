"""Stable-Baselines3 PPO trains on the environment without error (skipped without SB3)."""
from __future__ import annotations

import numpy as np
import pytest

from hdeeprm.env.environment import HDeepRMEnv

from tests.toy import ROOT

sb3 = pytest.importorskip("stable_baselines3")


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
