"""Issue 13, promises of the front door: usage lines, help texts, the summary's units, README commands, plots."""
from __future__ import annotations

import re
import shlex

import numpy as np
import pytest

from hdeeprm.cli import launch as launch_cli
from hdeeprm.cli import workload as workload_cli
from tests.toy import ROOT, TOY_OPTIONS


def test_launch_usage_names_one_options_file(capsys):
    usage = " ".join(launch_cli.build_parser().format_usage().split())
    assert usage.startswith("usage: hdeeprm-launch [-h] [-a agent.py] [-cw workload.json] [-im in.pt] [-om out.pt]")
    assert usage.rstrip().endswith("[agent.py] options.json")
    assert usage.count("options.json") == 1 and usage.count("...") == 0
    with pytest.raises(SystemExit) as exc:
        launch_cli.main([str(TOY_OPTIONS), str(TOY_OPTIONS)])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"hdeeprm-launch: error: expected [agent.py] options.json (one options file), got two JSON files: "
        f"{TOY_OPTIONS} {TOY_OPTIONS}")


def test_help_texts_are_plain_and_point_to_the_options_documentation():
    launch_help = launch_cli.build_parser().format_help()
    assert "'Options file' section" in launch_help and "examples/quickstart.json" in launch_help
    assert "--library" in launch_help and "--checkpoint-every" in launch_help
    parser = workload_cli.build_parser()
    texts = [parser.format_help()] + [sub.format_help() for action in parser._subparsers._group_actions
                                      for sub in action.choices.values()]
    assert [t for t in texts if re.search(r"``|:func:|:class:|:data:", t)] == []


def test_the_summary_has_units():
    metrics = {"nb_jobs": 2, "nb_completed": 2, "nb_killed": 0, "nb_rejected": 0, "makespan": 5.25,
               "mean_waiting_time": 0.0, "mean_turnaround_time": 5.0, "mean_slowdown": 1.0,
               "mean_bounded_slowdown": 1.0, "utilization": 0.5, "energy": 1234.5}
    assert launch_cli.format_summary(metrics).splitlines() == [
        "  nb_jobs                  2 jobs",
        "  nb_completed             2 jobs",
        "  nb_killed                0 jobs",
        "  nb_rejected              0 jobs",
        "  makespan                 5.25 s",
        "  mean_waiting_time        0 s",
        "  mean_turnaround_time     5 s",
        "  mean_slowdown            1 (turnaround / run time)",
        "  mean_bounded_slowdown    1 (tau = 10 s)",
        "  utilization              0.5 (busy core time / available, 0-1)",
        "  energy                   1234.5 J"]


def test_readme_checkpoints_go_under_outdir():
    """Every command of README.rst and docs/ that saves a model saves it inside its -o OUTDIR."""
    pages = [ROOT / "README.rst", *sorted((ROOT / "docs").glob("*.rst"))]
    commands = [line.strip() for page in pages for line in page.read_text().splitlines()
                if line.strip().startswith("hdeeprm-launch") and " -om " in line]
    assert commands
    for command in commands:
        words = shlex.split(command)
        outmodel, outdir = words[words.index("-om") + 1], words[words.index("-o") + 1]
        assert outmodel.startswith(outdir.rstrip("/") + "/"), command


@pytest.fixture()
def axes():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def test_a_one_point_series_is_drawn(axes):
    """A classic run's rewards.png (one episode) shows its point, on integer episode ticks."""
    from hdeeprm.outputs.visual import _plot_series, _step_plot

    _plot_series(axes, np.array([-3.5]), "total reward", "Rewards")
    _step_plot(axes, (np.array([0.0]), np.array([0.0])), "pending jobs", "Queue size")
    assert [(line.get_marker(), len(line.get_xdata())) for line in axes.lines] == [("o", 1), ("o", 1)]
    axes.figure.canvas.draw()
    assert all(float(t).is_integer() for t in axes.get_xticks())


def test_gantt_cores_are_integer_ticks(axes, tmp_path):
    from hdeeprm.outputs.visual import _gantt

    out = tmp_path / "out"
    out.mkdir()
    (out / "out_jobs.csv").write_text(
        "job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
        "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
        "allocated_resources,consumed_energy,metadata\n"
        '0,w0,p,0,1,5,1,COMPLETED_SUCCESSFULLY,0,4.77,4.77,0,4.77,1,2,0,""\n'
        '1,w0,p,0,1,5,1,COMPLETED_SUCCESSFULLY,0,5.25,5.25,0,5.25,1,3,0,""\n')
    _gantt(out, axes)
    axes.figure.canvas.draw()
    ticks = axes.get_yticks()
    assert len(ticks) >= 2 and all(float(t).is_integer() for t in ticks)
