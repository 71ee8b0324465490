"""Stable-Baselines3 PPO and DQN, and sb3-contrib MaskablePPO, on the GPU envs (skipped without them)."""
from __future__ import annotations

import numpy as np
import pytest

from hdeeprm.env.gpu_placement import GpuPlacementEnv
from hdeeprm.env.gpu_provisioning import GpuProvisioningEnv

sb3 = pytest.importorskip("stable_baselines3")


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["PPO", "DQN"])
def test_sb3_learns_on_both_gpu_envs(algo):
    from stable_baselines3.common.env_checker import check_env

    for env, policy in ((GpuPlacementEnv(scenario="easy-gen"), "MultiInputPolicy"),
                        (GpuProvisioningEnv(task="easy", max_steps=100), "MlpPolicy")):
        check_env(env)
        kwargs = {"n_steps": 128, "batch_size": 64, "n_epochs": 1} if algo == "PPO" else {
            "learning_starts": 64, "buffer_size": 1000, "batch_size": 32}
        model = getattr(sb3, algo)(policy, env, seed=0, verbose=0, device="cpu", **kwargs)
        model.learn(total_timesteps=256)
        assert model.num_timesteps >= 256
        obs, _ = env.reset(seed=0)
        action, _ = model.predict(obs, deterministic=True)
        assert 0 <= int(action) < env.action_space.n


def test_maskable_ppo_only_takes_allowed_nodes():
    contrib = pytest.importorskip("sb3_contrib")
    env = GpuPlacementEnv(scenario="easy-gen")
    model = contrib.MaskablePPO("MultiInputPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0,
                                verbose=0, device="cpu")
    model.learn(total_timesteps=256)
    obs, info = env.reset(seed=1)
    for _ in range(20):
        action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=False)
        assert info["action_mask"][int(action)]
        obs, _, term, trunc, info = env.step(action)
        if term or trunc:
            break
    assert np.isfinite(next(model.policy.parameters()).detach().numpy()).all()
