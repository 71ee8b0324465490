"""SB3 trains against a served environment unchanged (issue 25: a few PPO steps through hdeeprm.serve.Client)."""
from __future__ import annotations

import numpy as np
import pytest

import hdeeprm
from hdeeprm.serve import Client
from tests.serve.server import serving

stable_baselines3 = pytest.importorskip("stable_baselines3")


@pytest.mark.slow
def test_ppo_trains_a_few_steps_through_the_client():
    from stable_baselines3 import PPO
    from stable_baselines3.common.env_checker import check_env

    with serving(hdeeprm.GPU_PROVISIONING_V1_ENV_ID) as (url, app):
        env = Client(url, task="test-easy-gen")
        try:
            check_env(env, warn=False)
            model = PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
            model.learn(total_timesteps=128)
            assert model.num_timesteps == 128
            obs, _ = env.reset(seed=1)
            action, _ = model.predict(obs, deterministic=True)
            obs, reward, *_ = env.step(action)
            assert obs.dtype == np.float32 and np.isfinite(reward)
            assert app.state.hub.live == 1
        finally:
            env.close()
