"""The compiled queue statistics (hdeeprm/decision/queue_kernel.pyx) give the NumPy path's bits."""
import copy
import os
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from hdeeprm.decision import observation, orderings
from hdeeprm.decision.observation import Observer
from hdeeprm.decision.orderings import QueueHeads, QueueIndex
from hdeeprm.platform import load_platform
from hdeeprm.workload.convert import swf_to_workload

ROOT = Path(__file__).resolve().parents[2]
compiled = pytest.mark.skipif(observation.QueueStats is None, reason="the compiled queue statistics are not built")


@pytest.mark.skipif(not os.environ.get("CI"), reason="only CI must have built it (an install without a C "
                    "compiler runs the NumPy path)")
def test_the_install_builds_the_compiled_queue_statistics():
    assert observation.QueueStats is not None and orderings.QueueArgmin is not None, \
        "pip install -e . did not build queue_kernel.pyx"


def kth_workload(shared, nb_jobs=400):
    hierarchy = load_platform(ROOT / "platforms" / "kth_sp2.json")
    trace = shared / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"
    return hierarchy, swf_to_workload(trace, nb_cores=hierarchy.nb_cores, reference_speed=hierarchy.reference_speed,
                                      nb_jobs=nb_jobs, seed=0)


def both_observers(hierarchy, workload, monkeypatch):
    fast = Observer("minimal", hierarchy, workload)
    with monkeypatch.context() as m:
        m.setattr(observation, "QueueStats", None)
        slow = Observer("minimal", hierarchy, workload)
    assert fast._stats is not None and slow._stats is None
    return fast, slow


def observe(observer, queue):
    view = SimpleNamespace(queue=queue, queue_before=3, queue_indices=QueueIndex())
    return observer(view)


@compiled
def test_random_queues_of_a_real_trace_observe_the_same_bits(shared, monkeypatch):
    hierarchy, workload = kth_workload(shared)
    fast, slow = both_observers(hierarchy, workload, monkeypatch)
    rng = np.random.default_rng(3)
    for n in [2, 3, 4, 5, 8, 9, 17, 64, 65, 200, 400] + rng.integers(2, 400, 60).tolist():
        queue = [workload.jobs[i] for i in rng.choice(len(workload.jobs), n, replace=False)]
        a, b = observe(fast, queue), observe(slow, queue)
        assert a.tobytes() == b.tobytes(), n
    assert (a[:20] < 1.0).any() and (a[:20] == 1.0).any()   # values both below and above the clip at 1


@pytest.mark.slow
@compiled
def test_odd_quantities_observe_the_same_bits(shared, monkeypatch):
    """Hypothesis draws the scaled quantities themselves: ties, zeros, values above 1, infinities, NaN."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    hierarchy, workload = kth_workload(shared, nb_jobs=64)
    fast, slow = both_observers(hierarchy, workload, monkeypatch)
    value = st.one_of(st.floats(0.0, 3.0, width=32), st.sampled_from([0.0, 0.25, 1.0, 1.5, np.inf, np.nan]))

    @settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(value, min_size=4 * 64, max_size=4 * 64), st.lists(st.integers(0, 63), min_size=2, max_size=64,
                                                                         unique=True))
    def check(values, ids):
        scaled = np.array(values, dtype=np.float32).reshape(4, 64)
        fast._scaled_t = slow._scaled_t = scaled
        fast._stats = fast._compile()   # on the new table (the slow one keeps the NumPy path)
        assert slow._stats is None
        queue = [workload.jobs[i] for i in ids]
        with np.errstate(invalid="ignore"):   # inf - inf on the NumPy path: NaN, as the kernel gives
            assert observe(fast, queue).tobytes() == observe(slow, queue).tobytes()

    check()


@pytest.mark.slow
@compiled
def test_queue_heads_follow_numpys_argmin_rule():
    """The first minimum per column, a NaN first of all, -0.0 and 0.0 equal: as ``argmin``."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=200, deadline=None)
    @given(st.lists(st.sampled_from([0.0, -0.0, 1.0, 2.0, 2.0, np.inf, -np.inf, np.nan]), min_size=40, max_size=40),
           st.lists(st.integers(0, 7), min_size=1, max_size=8))
    def check(values, ids):
        table = np.array(values).reshape(8, 5)
        argmin = orderings.QueueArgmin(table)
        idx = np.array(ids, dtype=np.intp)
        columns = [None, 4, 0, 1, 2, 3]
        want = table.take(idx, axis=0).argmin(axis=0).tolist()
        assert argmin.firsts(idx, columns) == [0 if c is None else want[c] for c in columns]

    check()


@compiled
def test_an_environment_steps_through_the_same_states_on_both_paths(shared, monkeypatch):
    """2,000 random steps of HDeepRM-v0 (minimal observation) on KTH-SP2: observations, rewards and masks alike."""
    from hdeeprm.env.environment import HDeepRMEnv

    hierarchy, workload = kth_workload(shared, nb_jobs=1000)

    def run():
        env = HDeepRMEnv(platform=hierarchy, workload=workload, observation="minimal", objective="avg_job_slowdown")
        obs, info = env.reset(seed=4)
        out = [obs.tobytes(), info["action_mask"].tobytes()]
        for action in np.random.default_rng(4).integers(env.action_space.n, size=2000).tolist():
            obs, reward, terminated, truncated, info = env.step(action)
            out += [obs.tobytes(), np.float64(reward).tobytes(), info["action_mask"].tobytes()]
            if terminated or truncated:
                obs, info = env.reset()
        return out, env

    fast, env = run()
    assert env.observer._stats is not None and env.episode.manager._heads._argmin is not None
    monkeypatch.setattr(observation, "QueueStats", None)
    monkeypatch.setattr(orderings, "QueueArgmin", None)
    slow, env = run()
    assert env.observer._stats is None and env.episode.manager._heads._argmin is None
    assert fast == slow


@compiled
def test_deep_copies_keep_their_own_compiled_statistics(shared):
    hierarchy, workload = kth_workload(shared, nb_jobs=64)
    obs, heads = Observer("minimal", hierarchy, workload), QueueHeads(workload.jobs)
    obs_copy, heads_copy = copy.deepcopy(obs), copy.deepcopy(heads)
    assert obs_copy._stats is not None and obs_copy._stats is not obs._stats
    assert heads_copy._argmin is not None and heads_copy._argmin is not heads._argmin
    queue = workload.jobs[:30]
    assert observe(obs_copy, queue).tobytes() == observe(obs, queue).tobytes()
    assert heads_copy.positions(queue) == heads.positions(queue)
