"""The attention policy over nodes (examples/agents/gpu_attention.py): masks, any cluster size, train, save, reload."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from hdeeprm.env.gpu_placement import GpuPlacementEnv
from hdeeprm.errors import AgentError

from tests.toy import ROOT


def _module():
    path = ROOT / "examples" / "agents" / "gpu_attention.py"
    spec = importlib.util.spec_from_file_location("gpu_attention", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_masked_logits_and_one_network_for_two_cluster_sizes():
    m = _module()
    torch.manual_seed(0)
    small, large = GpuPlacementEnv(scenario="easy-gen"), GpuPlacementEnv(scenario="medium-gen")
    policy = m.NodeAttentionPolicy(small.observation_space["nodes"].shape[1])
    for env, n in ((small, 14), (large, 20)):
        obs, info = env.reset(seed=0)
        mask = info["action_mask"]
        logits, value = policy(torch.as_tensor(obs["nodes"])[None], torch.as_tensor(obs["job"])[None],
                               torch.as_tensor(mask)[None])
        assert logits.shape == (1, n + 1) and value.shape == (1,)
        assert torch.isinf(logits[0, ~torch.as_tensor(mask)]).all() and torch.isfinite(logits[0, mask]).all()


def test_train_save_reload_same_decisions(tmp_path):
    m = _module()
    torch.manual_seed(0)
    env = GpuPlacementEnv(scenario="easy-gen")
    policy = m.NodeAttentionPolicy(env.observation_space["nodes"].shape[1])
    before = [p.detach().clone() for p in policy.parameters()]
    history = m.train(env, policy, 2, seed=0)
    assert len(history) == 2 and all(np.isfinite(history))
    assert any(not torch.equal(a, b) for a, b in zip(before, policy.parameters()))
    path = tmp_path / "att.pt"
    m.save(policy, str(path))
    again = m.NodeAttentionPolicy(env.observation_space["nodes"].shape[1])
    m.load(again, str(path))
    obs, info = env.reset(seed=5)
    args = (torch.as_tensor(obs["nodes"])[None], torch.as_tensor(obs["job"])[None],
            torch.as_tensor(info["action_mask"])[None])
    assert torch.equal(policy(*args)[0], again(*args)[0])
    with pytest.raises(AgentError, match="observation"):
        m.load(m.NodeAttentionPolicy(5), str(path))


def test_main_trains_saves_and_reloads(tmp_path, capsys):
    m = _module()
    path = tmp_path / "att.pt"
    assert m.main(["--episodes", "1", "-om", str(path)]) == 0
    assert m.main(["--episodes", "0", "--scenario", "test-easy-gen", "-im", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == ["1", "attention", "best_fit", "0", "attention", "best_fit"]
    assert lines[-1].split()[1] == "test-easy-gen"
