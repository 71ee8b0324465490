"""RLScheduler's kernel and the group-baseline PPO (hdeeprm.agents.kernel_ppo), and the held-out benchmark's rollout."""
from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import torch

from hdeeprm.agents.kernel_ppo import RaggedKernel, choose, group_batch, ppo_update, ragged_numpy
from hdeeprm.env.backfill_slot import BACKFILL_SLOT_FEATURES, BackfillSlotEnv

from tests.toy import ROOT

_spec = importlib.util.spec_from_file_location("heldout_ppo", ROOT / "benchmarks" / "heldout_ppo.py")
heldout = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(heldout)


def _trajectory(rng, returns_last: float, n_steps: int = 3):
    steps = []
    for t in range(n_steps):
        rows = rng.random((3, 4), dtype=np.float32)
        steps.append((rows, t % 3, float(np.log(1 / 3)), 0.0, returns_last if t == n_steps - 1 else 0.0,
                      np.zeros(2, dtype=np.float32)))
    return steps


def test_the_numpy_scores_are_the_torch_kernels_and_log_probs_are_a_softmax_over_each_samples_rows():
    torch.manual_seed(0)
    net = RaggedKernel(4, 2)
    rows = np.random.default_rng(0).random((5, 4), dtype=np.float32)
    scores, _ = ragged_numpy(net)
    z = scores(rows)
    with torch.no_grad():
        np.testing.assert_allclose(z, net.kernel(torch.from_numpy(rows)).squeeze(-1).numpy(), rtol=1e-5, atol=1e-6)
        # two samples: rows 0-1 and rows 2-4; actions: row 1 and row 4
        logp = net.log_probs(torch.from_numpy(rows), torch.tensor([0, 0, 1, 1, 1]), 2, torch.tensor([1, 4]))
    expected = [z[1] - np.log(np.exp(z[:2]).sum()), z[4] - np.log(np.exp(z[2:]).sum())]
    np.testing.assert_allclose(logp.numpy(), expected, rtol=1e-5)


def test_the_group_baseline_is_the_mean_return_of_the_other_replays_of_the_same_sequence():
    rng = np.random.default_rng(1)
    trajs = [_trajectory(rng, r) for r in (-10.0, -20.0, -30.0, -100.0, -200.0, -300.0)]
    batch = group_batch(trajs, 1.0, 0.97, group=3)
    adv = batch["adv"].numpy().reshape(6, 3)
    np.testing.assert_allclose(adv[:, 0], [15.0, 0.0, -15.0, 150.0, 0.0, -150.0])
    assert (adv == adv[:, :1]).all()     # every step of a trajectory gets its trajectory's advantage


def test_an_update_makes_the_better_trajectorys_actions_more_likely():
    torch.manual_seed(0)
    rng = np.random.default_rng(2)
    net = RaggedKernel(4, 2)
    good, bad = _trajectory(rng, -1.0), _trajectory(rng, -50.0)
    trajs = [good, bad]
    batch = group_batch(trajs, 1.0, 0.97, group=2)
    with torch.no_grad():
        before = net.log_probs(batch["x"], batch["seg"], len(batch["ret"]), batch["act_row"])
    batch["logp"] = before.clone()
    opt = torch.optim.Adam(net.kernel.parameters(), lr=1e-2)
    ppo_update(net, opt, None, batch, pi_iters=5, v_iters=0)
    with torch.no_grad():
        after = net.log_probs(batch["x"], batch["seg"], len(batch["ret"]), batch["act_row"])
    assert (after[:3] - before[:3]).sum() > 0 > (after[3:] - before[3:]).sum()


def test_the_benchmarks_rollout_pays_minus_the_mean_bounded_slowdown_once(toy_hierarchy):
    from tests.env.test_backfill_slot import _workload

    env = BackfillSlotEnv(platform=toy_hierarchy, workload=_workload(), nb_slots=heldout.SLOTS, commit=False)
    scores, _ = ragged_numpy(RaggedKernel(len(BACKFILL_SLOT_FEATURES), 2))
    steps, bsld = heldout.rollout(env, scores, np.random.default_rng(0), greedy=False)
    assert bsld >= 1.0 and [s[4] for s in steps] == [0.0] * (len(steps) - 1) + [-bsld]
    assert all(s[0].shape[1] == len(BACKFILL_SLOT_FEATURES) for s in steps)
    greedy, again = (heldout.rollout(env, scores, None, greedy=True)[1] for _ in range(2))
    assert greedy == again


@pytest.mark.parametrize("label, parts", [("first-high_gflops", ("first", "head_of_line")),
                                          ("largest-high_gflops+easy_backfilling", ("largest", "easy_backfilling"))])
def test_heuristic_labels_split_into_ordering_and_strategy(label, parts):
    policy = heldout.parse_policy_list([label])[0]   # the parser the benchmark reads its heuristic's label with
    assert (policy.job, policy.strategy) == parts


def test_choose_samples_the_softmax_of_the_scores_takes_the_argmax_greedily_and_skips_a_lone_job():
    rows = np.zeros((3, 2), dtype=np.float32)
    scores = lambda r: np.array([0.0, 2.0, 1.0])   # noqa: E731
    assert choose(rows, scores, np.random.default_rng(0), greedy=True) == (1, 0.0)
    unscored = lambda r: pytest.fail("a lone job is not scored")   # noqa: E731
    assert choose(rows[:1], unscored, np.random.default_rng(0), greedy=False) == (0, 0.0)
    p = np.exp([0.0, 2.0, 1.0]) / np.exp([0.0, 2.0, 1.0]).sum()
    rng = np.random.default_rng(3)
    counts = np.zeros(3)
    for _ in range(4000):
        action, logp = choose(rows, scores, rng, greedy=False)
        counts[action] += 1
        assert logp == pytest.approx(np.log(p[action]))
    assert counts / counts.sum() == pytest.approx(p, abs=0.03)
