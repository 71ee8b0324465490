"""The ``generations`` observation: by hand on the learning toy; the ``normal`` one aggregated on Gaia's slice."""
from __future__ import annotations

import numpy as np
import pytest

from hdeeprm.decision.observation import make_observer, processor_generations
from hdeeprm.platform import load_platform
from hdeeprm.run.episode import Episode

from tests.toy import ROOT, toy_episode


def test_by_hand_on_the_toy(toy_hierarchy, toy_workload, toy_options):
    obs = make_observer("generations", toy_hierarchy, toy_workload)
    assert obs.size == 2 * 4 + 21   # two generations: processors of 4 and 4.4 GFLOP/s per core
    ep = toy_episode(toy_hierarchy, toy_workload, toy_options, 1)  # shortest-high_mem_bw: jobs 0, 1 on cores 0, 2
    # in each generation (one processor each): 1 of 2 cores busy, remaining work 1 and 0; the one node
    # (32768 - 2 x 8000) / 32768 free; 24 of 32 GB/s used; the queue emptied: 21 zeros.
    expected = [0.5, 0.5, 16768 / 32768, 0.25] * 2 + [0.0] * 21
    np.testing.assert_allclose(obs(ep.view), expected, rtol=0, atol=1e-7)


def test_generations_of_gaia_mini():
    h = load_platform(ROOT / "platforms" / "gaia_mini.json")
    cores, processors, count = processor_generations(h)
    assert count == 3
    assert np.bincount(cores).tolist() == [48, 24, 32]   # 9.04, 11.72, 17.6 GFLOP/s per core: slowest first
    assert np.bincount(processors).tolist() == [8, 4, 4]


def test_aggregates_the_normal_observation_on_a_real_window(shared):
    from hdeeprm.config.options import Options
    from hdeeprm.config.build import build_workload

    trace = shared / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"
    if not trace.is_file():
        pytest.skip("KTH-SP2 trace not available")
    options = Options(workload_file_path=str(trace), platform_file_path=str(ROOT / "platforms" / "gaia_mini.json"),
                      nb_jobs=300, seed=1996, contention="hdeeprm")
    h = load_platform(options.platform_file_path)
    workload = build_workload(options, h)
    normal = make_observer("normal", h, workload)
    compact = make_observer("generations", h, workload)
    cores, processors, count = processor_generations(h)
    ep = Episode(h, workload, actions=options.actions, seed=0, record=False)
    checked = busy = 0
    while ep.advance():
        if checked % 17 == 0:
            full, got = normal(ep.view), compact(ep.view)
            mem = full[:h.nb_nodes]
            bw = full[h.nb_nodes:h.nb_nodes + h.nb_processors]
            per_core = full[h.nb_nodes + h.nb_processors:-21].reshape(h.nb_cores, 3)
            left = per_core[:, 2]
            running = ep.view.resources.core_job >= 0
            for g in range(count):
                mine = processors == g
                want = [running[cores == g].mean(), left[cores == g].mean(), mem[h.processor_node[mine]].mean(),
                        bw[mine].mean()]
                np.testing.assert_allclose(got[4 * g:4 * g + 4], want, rtol=0, atol=2e-6)
            np.testing.assert_array_equal(got[-21:], full[-21:])
            busy += int(running.any())
        checked += 1
        ep.apply(0)
    assert busy > 10
