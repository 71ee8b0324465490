"""The cross-entropy method and the linear policy it trains, on a quadratic and on real KTH-SP2 windows."""
from __future__ import annotations

import numpy as np
import pytest

from hdeeprm.agents.evolution import cross_entropy_method
from hdeeprm.errors import OptionsError

from tests.toy import ROOT

AGENT = str(ROOT / "examples" / "agents" / "linear_cem.py")
PAIRS = (("saf", "high_mem"), ("saf", "low_power"), ("shortest", "high_gflops"))


def test_cem_minimises_a_quadratic_and_keeps_the_best():
    target = np.array([1.5, -2.0, 0.25, 3.0])
    seen = []

    def fitness(x):
        seen.append(x.copy())
        return float(((x - target) ** 2).sum())

    state = cross_entropy_method(fitness, np.zeros(4), std=1.0, population=20, elite=5, generations=60, seed=3)
    assert np.abs(state.mean - target).max() < 0.05
    assert state.best_fitness == min(fitness(x) for x in seen[:-1]) == fitness(state.best)
    np.testing.assert_array_equal(seen[0], np.zeros(4))   # each generation evaluates its centre first
    assert [row["generation"] for row in state.history] == list(range(60))
    assert all(a["best_so_far"] >= b["best_so_far"] for a, b in zip(state.history, state.history[1:]))


def test_cem_refuses_bad_sizes():
    with pytest.raises(OptionsError, match=r"^the cross-entropy method needs population >= 2 \(got 8\), "
                                           r"1 <= elite <= population \(got 9\), generations >= 1 \(got 5\) and "
                                           r"0 < smoothing <= 1 \(got 0.7\)$"):
        cross_entropy_method(lambda x: 0.0, np.zeros(2), population=8, elite=9, generations=5)


def _kth(shared, nb_jobs: int):
    from hdeeprm.config.options import Options
    from hdeeprm.decision.actions import action_index
    from hdeeprm.run.evaluate import Window

    trace = shared / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz"
    if not trace.is_file():
        pytest.skip("KTH-SP2 trace not available")
    options = Options(workload_file_path=str(trace), platform_file_path=str(ROOT / "platforms" / "gaia_mini.json"),
                      seed=1996, contention="hdeeprm", start_strategy="easy_backfilling", observation="generations",
                      actions=[action_index(*pair) for pair in PAIRS])
    windows = [Window(index=0, first_job=0, nb_jobs=nb_jobs, split="train"),
               Window(index=1, first_job=2000, nb_jobs=nb_jobs, split="train")]
    return options, windows


def test_the_untrained_linear_agent_is_the_first_pair(shared):
    """Every metric of the first pair under EASY, window by window: the imitation start is exact."""
    from hdeeprm.run.evaluate import evaluate
    from hdeeprm.run.policies import Policy

    options, windows = _kth(shared, 150)
    agent = Policy(label="linear", strategy="easy_backfilling", agent=AGENT)
    pair = Policy(label="saf-high_mem+easy_backfilling", strategy="easy_backfilling", job="saf", core="high_mem")
    rows = evaluate(options, [agent, pair], windows)
    for w in windows:
        mine, theirs = [{k: v for k, v in row.items() if k != "policy"} for row in rows if row["window"] == w.index]
        assert mine == theirs


def _energy_gj(summaries):
    return sum(s["energy"] for s in summaries) / len(summaries) / 1e9


@pytest.mark.parametrize("objective", [None, _energy_gj])
def test_train_cem_saves_the_best_weights_it_measured(shared, tmp_path, objective):
    """The checkpoint, run by hdeeprm-evaluate's runner, gives the training figure the search recorded for it."""
    from hdeeprm.run.evaluate import evaluate
    from hdeeprm.run.evolve import train_cem
    from hdeeprm.run.policies import Policy

    options, windows = _kth(shared, 120)
    model = tmp_path / "cem.pt"
    options = options.replace(seed=4)   # the search's seed, and the conversion's (bandwidth draws) in both runs
    history = train_cem(options, AGENT, windows, outmodel=model, population=4, elite=2, generations=2,
                        objective=objective)
    assert [row["evaluations"] for row in history] == [4, 8]
    rows = evaluate(options, [Policy(label="cem", strategy="easy_backfilling", agent=AGENT, model=str(model))],
                    windows)
    measured = (np.mean([row["mean_bounded_slowdown"] for row in rows]) if objective is None
                else objective(rows))
    assert measured == pytest.approx(history[-1]["best_so_far"], rel=1e-12)
