"""hdeeprm-visual on real runs: rewards only for learning runs and always for them, time axes in s, hours or days."""
from __future__ import annotations

import pytest
from matplotlib.figure import Figure

from hdeeprm.cli.visual import main
from hdeeprm.errors import InputError
from hdeeprm.outputs.visual import ONE_EPISODE_NOTE, draw_plot, learning_run, time_unit
from hdeeprm.run.launch import launch
from tests.toy import ROOT

#: Real quickstart and learning runs (about 4 s in all on 2 cores): outside the quick subset.
pytestmark = pytest.mark.slow

LEARNING = ROOT / "examples" / "learning" / "learning.json"
REINFORCE = str(ROOT / "examples" / "agents" / "reinforce.py")


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The quickstart (classic, 5.8 days of jobs) and the toy learning run with 1 and 3 episodes."""
    base = tmp_path_factory.mktemp("runs")
    launch(ROOT / "examples" / "quickstart.json", outdir=base / "quickstart", quiet=True)
    for n in (1, 3):
        launch(LEARNING, agent_path=REINFORCE, nb_runs=n, outdir=base / f"learning{n}", quiet=True)
    return base


def _drawn(capsys, outdir, *args) -> list[str]:
    assert main([str(outdir), *args]) == 0
    return [line.rsplit("/", 1)[-1] for line in capsys.readouterr().out.split()]


def _axes(outdir, name, **choices):
    ax = Figure().subplots()   # no pyplot: nothing to close, no backend
    draw_plot(outdir, name, ax, **choices)
    return ax


def test_a_classic_run_draws_no_rewards(runs, capsys):
    assert learning_run(runs / "quickstart") is False
    assert (runs / "quickstart" / "rewards.log").read_text() == "0.0\n"   # a classic pair gets no reward
    assert _drawn(capsys, runs / "quickstart", "-o", str(runs / "png-q")) == ["gantt.png", "utilization.png",
                                                                             "queue_size.png"]
    assert not (runs / "png-q" / "rewards.png").exists()
    assert main([str(runs / "quickstart"), "-p", "rewards"]) == 2
    assert "plot 'rewards' is for learning runs: this run's agent got no reward" in capsys.readouterr().err


@pytest.mark.parametrize("episodes", [1, 3])
def test_a_learning_run_draws_its_rewards_whatever_the_episode_count(runs, capsys, episodes):
    outdir = runs / f"learning{episodes}"
    assert learning_run(outdir) is True
    drawn = _drawn(capsys, outdir, "-o", str(runs / f"png-l{episodes}"))
    assert drawn[:3] == ["rewards.png", "losses.png", "action_preferences.png"]
    assert (runs / f"png-l{episodes}" / "rewards.png").read_bytes()[:4] == b"\x89PNG"
    ax = _axes(outdir, "rewards")
    (line,) = ax.get_lines()
    assert line.get_xdata().tolist() == list(range(1, episodes + 1))
    notes = [t.get_text() for t in ax.texts]
    assert notes == ([ONE_EPISODE_NOTE] if episodes == 1 else [])
    if episodes == 1:
        assert line.get_marker() == "o"   # one point is marked: a line through it would be invisible


def test_learning_run_falls_back_to_run_json_then_to_unknown(tmp_path):
    assert learning_run(tmp_path) is None   # the original HDeepRM's logs alone: rewards.log is drawn
    (tmp_path / "run.json").write_text('{"options": {"agent_type": "LEARNING"}}')
    assert learning_run(tmp_path) is True
    (tmp_path / "episodes.csv").write_text("episode,reward,loss\n0,,\n")
    assert learning_run(tmp_path) is False   # episodes.csv says what the agent got


def test_time_axes_name_their_unit(runs):
    quickstart = runs / "quickstart"
    for name in ("gantt", "utilization", "queue_size"):
        assert _axes(quickstart, name).get_xlabel() == "time (days)"
        assert _axes(quickstart, name, window=(0.0, 86400.0)).get_xlabel() == "time (hours)"
        assert _axes(runs / "learning3", name).get_xlabel() == "time (s)"
    ax = _axes(quickstart, "utilization")
    assert 5.7 < max(ax.get_lines()[0].get_xdata()) < 5.8   # 498,219 s of jobs: 5.77 days
    assert _axes(quickstart, "gantt", window=(0.0, 86400.0)).get_xlim() == (0.0, 24.0)


def test_time_unit_thresholds():
    assert time_unit(0.0) == (1.0, "s") and time_unit(7200.0) == (1.0, "s")
    assert time_unit(7201.0) == (3600.0, "hours") and time_unit(3 * 86400.0) == (3600.0, "hours")
    assert time_unit(500_000.0) == (86400.0, "days") and time_unit(float("nan")) == (1.0, "s")


def test_draw_plot_refuses_what_make_plots_refuses(runs):
    with pytest.raises(InputError, match="unknown plot 'gant'.*did you mean 'gantt'"):
        _axes(runs / "quickstart", "gant")
    with pytest.raises(InputError, match="start < end"):
        _axes(runs / "quickstart", "gantt", window=(5.0, 1.0))
