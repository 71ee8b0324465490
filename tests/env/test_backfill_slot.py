"""The backfill-slot environment: it replays ordering + EASY/conservative on SDSC-SP2 windows, commits, refuses."""
from __future__ import annotations

import numpy as np
import pytest

from hdeeprm.decision.orderings import JOB_ORDERINGS
from hdeeprm.env.backfill_slot import BACKFILL_SLOT_FEATURES, BackfillSlotEnv
from hdeeprm.errors import OptionsError
from hdeeprm.workload.model import Job, Profile, Workload

from tests.toy import ROOT

SDSC_OPTIONS = ROOT / "examples" / "evaluation" / "sdsc_sp2_128.json"


def _naming_heads(env: BackfillSlotEnv, ordering: str) -> dict:
    """Run one episode naming the head of ``ordering`` at every decision; the final metrics."""
    env.reset(seed=0)
    done = False
    while not done:
        m = env.episode.manager
        head = JOB_ORDERINGS[ordering].order(m.queue, m.rng, m.now)[0]
        _, _, done, _, info = env.step(m.queue.index(head))
    return info["metrics"]


@pytest.fixture(scope="module")
def sdsc_windows(shared):
    """Two windows of 1,024 SDSC-SP2 jobs drawn as hdeeprm-evaluate draws them, with their runner."""
    from hdeeprm.config.options import load_options
    from hdeeprm.run.evaluate import WindowRunner, plan

    options = load_options(SDSC_OPTIONS)
    return options, WindowRunner(options), plan(options, nb_windows=10, length=1024).windows[:2]


@pytest.mark.slow
@pytest.mark.parametrize("ordering, backfilling, commit", [
    ("first", "easy_backfilling", True), ("first", "easy_backfilling", False),
    ("largest", "easy_backfilling", False), ("first", "conservative_backfilling", True)])
def test_naming_an_orderings_head_replays_that_ordering_with_backfilling(sdsc_windows, ordering, backfilling,
                                                                         commit):
    from hdeeprm.run.evaluate import evaluate
    from hdeeprm.run.policies import parse_policy_list

    options, runner, windows = sdsc_windows
    for window in windows:
        expected = evaluate(options, parse_policy_list([f"{ordering}-high_gflops+{backfilling}"]), [window])[0]
        env = BackfillSlotEnv(options, platform=runner.hierarchy, workload=runner.workload(window),
                              nb_slots=1024, backfilling=backfilling, backfill_ordering=ordering, commit=commit)
        got = _naming_heads(env, ordering)
        assert got["mean_bounded_slowdown"] == expected["mean_bounded_slowdown"]
        assert got["mean_waiting_time"] == expected["mean_waiting_time"]


def _workload():
    # 4 cores: a (2 cores) and b (4 cores) and c (1 core) at t = 0, d (1 core, short) at t = 1.
    def job(i, subtime, res, requested, delay):
        return Job(i, str(i), subtime, res, float(requested), Profile(f"p{i}", "delay", delay=delay))
    return Workload([job(0, 0.0, 2, 10, 8.0), job(1, 0.0, 4, 5, 4.0), job(2, 0.0, 1, 20, 16.0),
                     job(3, 1.0, 1, 3, 2.0)], nb_res=4)


@pytest.mark.parametrize("commit", [True, False])
def test_a_named_job_that_does_not_fit_is_reserved_for_and_committed_to(toy_hierarchy, commit):
    env = BackfillSlotEnv(platform=toy_hierarchy, workload=_workload(), nb_slots=3, commit=commit)
    obs, info = env.reset(seed=0)
    assert obs.shape == (3, len(BACKFILL_SLOT_FEATURES)) and info["time"] == 0.0
    assert info["action_mask"].tolist() == [True, True, True]
    _, _, _, _, info = env.step(0)              # a starts, 2 cores stay free
    assert info["time"] == 0.0 and info["queue"] == 2
    _, _, done, _, info = env.step(0)           # b (4 cores) does not fit: it gets the reservation, c backfills
    if commit:   # b stays the head: d backfills at t = 1 without asking the agent, which is next asked later
        assert done or info["time"] > 1.0
    else:        # at t = 1, d arrives and fits: the agent names a job again (b or d)
        assert info["time"] == 1.0 and [j.index for j in env.episode.manager.queue] == [1, 3] and env.head is None


def test_an_empty_slot_names_slot_0_and_is_counted(toy_hierarchy):
    env = BackfillSlotEnv(platform=toy_hierarchy, workload=_workload(), nb_slots=4)
    env.reset(seed=0)
    _, _, _, _, info = env.step(3)               # only 3 jobs are queued
    assert info["empty_named"] == 1 and info["queue"] == 2
    assert [j.index for j in env.episode.manager.queue] == [1, 2]


@pytest.mark.parametrize("kwargs, message", [
    ({"backfilling": "greedy"},
     "backfilling must be one of easy_backfilling, conservative_backfilling, got 'greedy'"),
    ({"backfill_ordering": "fisrt"}, "fisrt"),
    ({"normalisers": (3600.0,)}, r"normalisers must be a pair \(seconds, cores\), got \(3600.0,\)"),
    ({"normalisers": (3600.0, 0.0)}, "normalisers"),
])
def test_bad_arguments(toy_hierarchy, kwargs, message):
    with pytest.raises(OptionsError, match=message):
        BackfillSlotEnv(platform=toy_hierarchy, workload=_workload(), **kwargs)


def test_fixed_normalisers_scale_the_features(toy_hierarchy):
    env = BackfillSlotEnv(platform=toy_hierarchy, workload=_workload(), nb_slots=3, normalisers=(20.0, 4.0))
    obs, _ = env.reset(seed=0)
    np.testing.assert_allclose(obs[:, 1:4], [[0.5, 0.5, 0.25], [0.25, 1.0, 0.25], [1.0, 0.25, 0.25]])
    assert (obs[:, 5] == 1.0).all()
