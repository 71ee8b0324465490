"""Observations: hand-computed values on the learning toy, queue statistics against numpy."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from hdeeprm.decision.orderings import QueueIndex
from hdeeprm.decision.view import StateView
from hdeeprm.run.episode import Episode
from hdeeprm.errors import OptionsError
from hdeeprm.decision.observation import Observer, make_observer, queue_variation
from hdeeprm.workload.model import Job, Profile, Workload

from tests.toy import toy_episode


def test_sizes_of_the_three_types(toy_hierarchy, toy_workload):
    # 1 node + 2 processors + 3 x 4 cores + 21 queue values.
    sizes = {k: make_observer(k, toy_hierarchy, toy_workload).size for k in ("normal", "small", "minimal")}
    assert sizes == {"normal": 36, "small": 24, "minimal": 21}


def test_normal_observation_before_and_after_the_decision(toy_hierarchy, toy_workload, toy_options):
    obs = make_observer("normal", toy_hierarchy, toy_workload)
    ep = Episode(toy_hierarchy, toy_workload, actions=toy_options.actions, seed=0, record=False)
    assert ep.advance()
    before = obs(ep.view)
    assert before.dtype == np.float32
    # All memory and bandwidth free; every core idle in P3 (speed 0, power 0.05 P, no work);
    # both jobs equal the workload's p99, so the 20 queue statistics are 1; the queue was empty: 1.
    expected = [1.0, 1.0, 1.0] + [0.0, 0.05, 0.0] * 4 + [1.0] * 20 + [1.0]
    np.testing.assert_allclose(before, expected, rtol=0, atol=1e-7)
    ep.apply(1)  # shortest-high_mem_bw: job 0 on core 0 (processor 0), job 1 on core 2 (processor 1)
    after = obs(ep.view)
    # node: (32768 - 2 x 8000) / 32768; each processor 24 of 32 GB/s used; cores 0, 2 in P0
    # (speed G, power P, all work left), cores 1, 3 in P2 (power 0.25 P); queue empty, it emptied: 0.
    expected = ([16768 / 32768, 0.25, 0.25] + [1, 1, 1, 0, 0.25, 0, 1, 1, 1, 0, 0.25, 0] + [0.0] * 21)
    np.testing.assert_allclose(after, expected, rtol=0, atol=1e-7)


def test_remaining_work_fraction_midway(toy_hierarchy, toy_workload, toy_options):
    obs = make_observer("normal", toy_hierarchy, toy_workload)
    ep = toy_episode(toy_hierarchy, toy_workload, toy_options, 4)  # first-high_mem_bw
    ep.engine.call_me_later(2.1)
    ep.engine.next_batch()  # t = 2.1 s: core 0 did 8.4 of 21 GFLOP, core 2 did 9.24
    o = obs(ep.view)
    assert o[3 + 2] == pytest.approx(1 - 8.4 / 21, abs=1e-6)
    assert o[3 + 8] == pytest.approx(1 - 9.24 / 21, abs=1e-6)


def test_small_and_minimal_are_slices_of_normal(toy_hierarchy, toy_workload, toy_options):
    ep = toy_episode(toy_hierarchy, toy_workload, toy_options, 0)
    normal = make_observer("normal", toy_hierarchy, toy_workload)(ep.view)
    small = make_observer("small", toy_hierarchy, toy_workload)(ep.view)
    minimal = make_observer("minimal", toy_hierarchy, toy_workload)(ep.view)
    np.testing.assert_array_equal(small, np.r_[normal[:3], normal[-21:]])
    np.testing.assert_array_equal(minimal, normal[-21:])


@pytest.mark.parametrize(("now", "before", "expected"), [
    (3, 0, 1.0),      # the queue was empty and now is not
    (0, 0, 0.5),      # no change
    (0, 2, 0.0),      # it emptied
    (20, 20, 0.5),
    (101, 100, 0.6),  # (1/100 + 0.05) / 0.1
    (100, 101, 0.4),  # (-1/100 + 0.05) / 0.1
    (21, 20, 1.0),    # +5 % saturates
    (20, 22, 0.0),
])
def test_queue_variation(now, before, expected):
    assert queue_variation(now, before, 0.05) == pytest.approx(expected)


def _workload(n: int, seed: int) -> Workload:
    rng = np.random.default_rng(seed)
    prof = Profile("p", "delay", delay=1.0)
    jobs = [Job(index=i, id=str(i), subtime=0.0, res=int(rng.integers(1, 65)), walltime=float(rng.integers(60, 86400)),
                profile=prof, mem=float(rng.choice([0, 512, 1024, 4096])), mem_bw=float(rng.choice([4, 8, 24])),
                requested_time=float(rng.integers(60, 86400)))
            for i in range(n)]
    return Workload(jobs=jobs)


def test_queue_statistics_equal_numpy_percentiles(toy_hierarchy):
    wl = _workload(400, 1)
    obs = Observer("minimal", toy_hierarchy, wl, 0.05)
    q = np.array([[j.requested_time, j.res, j.mem, j.mem_bw] for j in wl.jobs])
    norm = np.percentile(q, 99, axis=0)
    rng = np.random.default_rng(2)
    manager = SimpleNamespace(queue=[], queue_before=0, hierarchy=toy_hierarchy, queue_indices=QueueIndex())
    view = StateView(manager, wl, lambda job: 0.0)
    for step in range(60):
        if step % 7 == 0:  # the manager replaces its list when jobs start
            manager.queue = [j for j in manager.queue if rng.random() < 0.5]
        manager.queue.extend(wl.jobs[i] for i in rng.choice(400, size=int(rng.integers(0, 6)), replace=False))
        out = obs(view)
        idx = [j.index for j in manager.queue]
        if not idx:
            np.testing.assert_array_equal(out[:20], 0.0)
            continue
        ref = np.clip(np.percentile(q[idx] / norm, [0, 25, 50, 75, 100], axis=0).T.ravel(), 0, 1)
        np.testing.assert_allclose(out[:20], ref, rtol=1e-6, atol=1e-7)


def test_unknown_type_and_bad_sensitivity(toy_hierarchy, toy_workload):
    with pytest.raises(OptionsError, match=r"^unknown observation type 'minimum' \(valid: normal, small, "
                                           r"minimal, generations; did you mean 'minimal'\?\)"):
        make_observer("minimum", toy_hierarchy, toy_workload)
    with pytest.raises(OptionsError, match="^queue_sensitivity must be > 0, got 0$"):
        make_observer("minimal", toy_hierarchy, toy_workload, 0)
