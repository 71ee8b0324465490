"""An attention policy over nodes for ``hdeeprm/GpuPlacement-v0``: one network for any cluster size.

Each node's features and the job's features are embedded by small MLPs; the job embedding attends
over the embeddings of the nodes where the job fits (multi-head attention, Vaswani et al., NeurIPS
2017), next to the mean of all node embeddings; a score MLP gives one logit per node from
``[node, context, job]`` and a skip logit from ``[context, job]``; masked nodes get ``-inf``. The
weights never depend on the number of nodes (the pointer-network pattern of Vinyals et al., NeurIPS
2015, and of the attention schedulers for Kubernetes), so a policy trained on a 14-node cluster runs
on the 1,213-node openb cluster. A value head on ``[context, job]`` is the baseline of an episodic
actor-critic update (REINFORCE with a learned baseline, Sutton and Barto 2018, section 13.4).

Train, save, reload and compare with best_fit::

    python examples/agents/gpu_attention.py --episodes 20 --scenario easy-gen -om out/gpu_attention.pt
    python examples/agents/gpu_attention.py --episodes 0 --scenario test-easy-gen -im out/gpu_attention.pt
    python examples/agents/gpu_attention.py --episodes 60 --scenario train --curriculum --eval test

Checkpoints are HDeepRM checkpoints (:mod:`hdeeprm.agents.checkpoint`).
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
import torch
from torch import nn

from hdeeprm.agents.checkpoint import check_compatible, load_checkpoint, save_checkpoint
from hdeeprm.env.gpu_placement import JOB_FEATURES, GpuPlacementEnv


#: Initial bias of the skip logit (e^-3: about 5 % of the mass against one fitting node).
SKIP_PRIOR = -3.0


class NodeAttentionPolicy(nn.Module):
    """Logits over ``N`` nodes + skip, and a state value, from a GpuPlacement observation.

    Args:
        node_features: Columns of the ``nodes`` observation (``gpu_slots + 8``).
        job_features: Length of the ``job`` observation.
        dim: Embedding width.
        heads: Attention heads (divides ``dim``).
    """

    def __init__(self, node_features: int, job_features: int = len(JOB_FEATURES), dim: int = 64, heads: int = 4):
        super().__init__()
        self.node_features, self.job_features = node_features, job_features
        self.node = nn.Sequential(nn.Linear(node_features, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.job = nn.Sequential(nn.Linear(job_features, dim), nn.ReLU(), nn.Linear(dim, dim))
        self.attend = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.score = nn.Sequential(nn.Linear(4 * dim, dim), nn.ReLU(), nn.Linear(dim, 1))
        self.skip = nn.Sequential(nn.Linear(3 * dim, dim), nn.ReLU(), nn.Linear(dim, 1))
        self.value = nn.Sequential(nn.Linear(3 * dim, dim), nn.ReLU(), nn.Linear(dim, 1))
        with torch.no_grad():   # prior: an untrained policy rarely skips (a skip holds the job until the next event)
            self.skip[-1].bias.fill_(SKIP_PRIOR)

    def forward(self, nodes: torch.Tensor, job: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Masked logits and values.

        Args:
            nodes: Node features, float32 (B, N, F).
            job: Job features, float32 (B, J).
            mask: Allowed actions, bool (B, N + 1) (the last one: skip).

        Returns:
            ``(logits (B, N + 1) with -inf on masked actions, values (B,))``.
        """
        h = self.node(nodes)                                    # (B, N, d)
        q = self.job(job)                                       # (B, d)
        fits = mask[:, :-1]
        keys_off = ~fits
        keys_off = torch.where(keys_off.all(dim=1, keepdim=True), torch.zeros_like(keys_off), keys_off)
        attended, _ = self.attend(q[:, None, :], h, h, key_padding_mask=keys_off)
        context = torch.cat([attended[:, 0], h.mean(dim=1)], dim=-1)     # (B, 2d)
        glob = torch.cat([context, q], dim=-1)                            # (B, 3d)
        per_node = torch.cat([h, glob[:, None, :].expand(-1, h.shape[1], -1)], dim=-1)
        logits = torch.cat([self.score(per_node)[..., 0], self.skip(glob)], dim=-1)
        return logits.masked_fill(~mask, float("-inf")), self.value(glob)[:, 0]

    def act(self, obs: dict, mask: np.ndarray, greedy: bool = False) -> tuple[int, torch.Tensor, torch.Tensor]:
        """Sample (or take the most likely) action for one observation.

        Returns:
            ``(action, log-probability, value)``.
        """
        logits, value = self(torch.as_tensor(obs["nodes"])[None], torch.as_tensor(obs["job"])[None],
                             torch.as_tensor(mask)[None])
        dist = torch.distributions.Categorical(logits=logits[0])
        action = torch.argmax(logits[0]) if greedy else dist.sample()
        return int(action), dist.log_prob(action), value[0]


def run_episode(env: GpuPlacementEnv, policy: NodeAttentionPolicy, *, seed: int, greedy: bool = False):
    """One episode; returns ``(log-probs, values, rewards, final info)``."""
    obs, info = env.reset(seed=seed)
    logps, values, rewards, done = [], [], [], info["job"] < 0
    while not done:
        action, logp, value = policy.act(obs, info["action_mask"], greedy)
        obs, reward, terminated, truncated, info = env.step(action)
        logps.append(logp)
        values.append(value)
        rewards.append(reward)
        done = terminated or truncated
    return logps, values, rewards, info


def train(env: GpuPlacementEnv, policy: NodeAttentionPolicy, episodes: int, *, lr: float = 1e-3,
          gamma: float = 0.99, seed: int = 0) -> list[float]:
    """Episodic actor-critic updates; returns the return of each training episode."""
    optimizer = torch.optim.Adam(policy.parameters(), lr=lr)
    history = []
    for e in range(episodes):
        logps, values, rewards, _ = run_episode(env, policy, seed=seed + e)
        if not rewards:
            continue
        g, returns = 0.0, []
        for r in reversed(rewards):
            g = r + gamma * g
            returns.append(g)
        returns_t = torch.tensor(returns[::-1], dtype=torch.float32)
        values_t = torch.stack(values)
        advantage = returns_t - values_t.detach()
        loss = -(torch.stack(logps) * advantage).mean() + 0.5 * ((values_t - returns_t) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(policy.parameters(), 1.0)
        optimizer.step()
        history.append(float(sum(rewards)))
    return history


def save(policy: NodeAttentionPolicy, path: str) -> None:
    """Write an HDeepRM checkpoint of the policy (sizes in the manifest)."""
    save_checkpoint(path, policy.state_dict(), None, agent_class=type(policy).__name__,
                    observation_size=policy.node_features, action_size=policy.job_features)


def load(policy: NodeAttentionPolicy, path: str) -> None:
    """Load a checkpoint written by :func:`save` (AgentError when the sizes or parameters differ)."""
    data = load_checkpoint(path)
    check_compatible(data, policy.state_dict(), observation_size=policy.node_features,
                     action_size=policy.job_features, path=path)
    policy.load_state_dict(data["model_state_dict"])


def compare(scenario: str, policy: NodeAttentionPolicy, seed: int = 10_000) -> dict[str, dict[str, float]]:
    """Metrics of the greedy policy and of best_fit (every job where the run's policy puts it) on one scenario."""
    env = GpuPlacementEnv(scenario=[scenario])
    with torch.no_grad():
        *_, info = run_episode(env, policy, seed=seed, greedy=True)
    learned = info["metrics"]
    _, info = env.reset(seed=seed)
    done = info["job"] < 0
    while not done:
        _, _, done, _, info = env.step(env.policy_node(info["job"]))
    return {"attention": learned, "best_fit": info["metrics"]}


def main(argv: list[str] | None = None) -> int:
    """Train on scenarios, optionally save/load, print the greedy policy's metrics beside best_fit's."""
    from hdeeprm.env.gpu_scenarios import scenarios

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scenario", default="easy-gen", help="training scenario name or split (default easy-gen)")
    p.add_argument("--eval", default=None, help="scenario name or split to evaluate on (default: --scenario)")
    p.add_argument("--curriculum", action="store_true", help="easy -> hard curriculum over the scenarios")
    p.add_argument("--episodes", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("-im", "--input-model", help="checkpoint to start from")
    p.add_argument("-om", "--output-model", help="checkpoint to write after training")
    args = p.parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)   # small networks: one thread is faster and leaves the machine's other cores alone
    env = GpuPlacementEnv(scenario=args.scenario, curriculum=args.curriculum,
                          curriculum_episodes=max(args.episodes, 1))
    policy = NodeAttentionPolicy(env.observation_space["nodes"].shape[1])
    if args.input_model:
        load(policy, args.input_model)
    history = train(env, policy, args.episodes, seed=args.seed)
    if args.output_model:
        save(policy, args.output_model)
    print(f"{args.episodes} episodes on {args.scenario}; last returns "
          f"{', '.join(f'{h:.3f}' for h in history[-3:]) or '-'}")
    for scenario in scenarios(args.eval or args.scenario):
        for name, m in compare(scenario.name, policy, 10_000 + args.seed).items():
            print(f"{name:10s} {scenario.name:17s} mean_jct {m['jct_mean']:9.0f} s  waiting "
                  f"{m['mean_waiting_time']:8.0f} s  allocation {m['gpu_allocation_rate']:.3f}  "
                  f"fragmented share {m['gpu_fragmented_share']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
