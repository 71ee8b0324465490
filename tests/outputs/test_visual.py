"""hdeeprm-visual: readers computed by hand, every plot written, CLI errors."""
from __future__ import annotations

import numpy as np
import pytest
from matplotlib.figure import Figure

from hdeeprm.cli.visual import main
from hdeeprm.errors import InputError
from hdeeprm.outputs.visual import (PLOT_BINS, binned, busy_cores, draw_plot, gantt_selection, make_plots, queue_size,
                                    read_jobs, read_log, step_counts)

HEADER = ("job_id,workload_name,profile,submission_time,requested_number_of_resources,requested_time,success,"
          "final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,"
          "allocated_resources,consumed_energy,metadata\n")
ROWS = [  # job 0: cores 0-1 from 0 to 10 s; job 1: cores 2 5 from 2 to 6 s; job 2 rejected at 3 s;
          # job 3 waits from 1 s to 10 s, then cores 0-2 until 12 s.
    '0,w0,p,0,2,20,1,COMPLETED_SUCCESSFULLY,0,10,10,0,10,1,0-1,0,""\n',
    '1,w0,p,2,2,20,1,COMPLETED_SUCCESSFULLY,2,4,6,0,4,1,2 5,0,""\n',
    '2,w0,p,3,9,20,0,REJECTED,-1,0,3,0,0,0,,0,"too big"\n',
    '3,w0,p,1,3,20,1,COMPLETED_SUCCESSFULLY,10,2,12,9,11,5.5,0-2,0,""\n',
]


@pytest.fixture()
def outdir(tmp_path):
    (tmp_path / "out_jobs.csv").write_text(HEADER + "".join(ROWS))
    (tmp_path / "rewards.log").write_text("1.5\n2.5\n")
    (tmp_path / "losses.log").write_text("0.25\n")
    (tmp_path / "probs.json").write_text('{"actions": ["a", "b"], "mean_per_episode": [[0.5, 0.5], [0.2, 0.8]], '
                                         '"probs": [[0.2, 0.8]]}\n')
    return tmp_path


def test_readers(outdir):
    np.testing.assert_array_equal(read_log(outdir / "rewards.log"), [1.5, 2.5])
    jobs = read_jobs(outdir / "out_jobs.csv")
    assert jobs["ran"].tolist() == [True, True, False, True]
    assert [c.tolist() for c in jobs["cores"]] == [[0, 1], [2, 5], [], [0, 1, 2]]
    t, v = busy_cores(jobs)
    assert t.tolist() == [0, 2, 6, 10, 12] and v.tolist() == [2, 4, 2, 3, 0]
    t, v = queue_size(jobs)
    assert t.tolist() == [0, 1, 2, 3, 10] and v.tolist() == [0, 1, 1, 1, 0]


def test_step_counts_applies_decreases_first():
    t, v = step_counts(np.array([0.0, 5.0]), np.array([5.0, 9.0]))
    assert t.tolist() == [0, 5, 9] and v.tolist() == [1, 1, 0]


@pytest.mark.slow
def test_every_plot_is_written(outdir, tmp_path):
    written = make_plots(outdir, dest=tmp_path / "png")
    assert [p.name for p in written] == ["rewards.png", "losses.png", "action_preferences.png", "gantt.png",
                                         "utilization.png", "queue_size.png"]
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in written)


def test_errors(outdir, tmp_path, capsys):
    (outdir / "losses.log").write_text("0.5\nnan?\n")
    with pytest.raises(InputError, match=r"line must be a number, got 'nan\?' \(.*losses.log:2\)"):
        read_log(outdir / "losses.log")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match="plot 'gantt' needs out_jobs.csv, which is missing"):
        make_plots(empty, ["gantt"])
    assert main([str(tmp_path / "nope")]) == 2
    assert "output folder not found" in capsys.readouterr().err
    assert main([str(empty)]) == 2
    assert main([str(outdir), "-p", "gantt", "-o", str(tmp_path / "g")]) == 0
    assert (tmp_path / "g" / "gantt.png").is_file()


def test_binned_means_and_bands_by_hand():
    # 1 on [0, 1), 3 on [1, 2), 0 on [2, 3.5), 2 on [3.5, 4): bins of 1 s.
    edges, mean, low, high = binned(np.array([0.0, 1.0, 2.0, 3.5, 4.0]), np.array([1.0, 3.0, 0.0, 2.0, 0.0]), 4)
    assert edges.tolist() == [0, 1, 2, 3, 4]
    assert mean.tolist() == [1, 3, 0, 1] and low.tolist() == [1, 3, 0, 0] and high.tolist() == [1, 3, 0, 2]


def test_gantt_selection(outdir):
    jobs = read_jobs(outdir / "out_jobs.csv", cores=False)
    assert jobs["alloc"] == ["0-1", "2 5", "", "0-2"]
    assert gantt_selection(jobs)[0].tolist() == [0, 1, 3]
    assert gantt_selection(jobs, window=(7.0, 9.0))[0].tolist() == [0]      # only job 0 runs then
    # Submission order: job 0 (0 s), job 3 (1 s), job 1 (2 s), job 2 (3 s, rejected).
    assert gantt_selection(jobs, job_range=(2, 4))[0].tolist() == [1, 3]


@pytest.mark.slow
def test_long_series_are_binned_and_the_gantt_takes_a_window(tmp_path):
    n = 5000   # one-core jobs back to back on cores 0-9: a series longer than 2 x PLOT_BINS
    rows = [f'{i},w0,p,{i},1,20,1,COMPLETED_SUCCESSFULLY,{i},2,{i + 2},0,2,1,{i % 10},0,""\n' for i in range(n)]
    (tmp_path / "out_jobs.csv").write_text(HEADER + "".join(rows))
    assert busy_cores(read_jobs(tmp_path / "out_jobs.csv"))[0].size > 2 * PLOT_BINS
    assert main([str(tmp_path), "-p", "utilization", "gantt", "--window", "100", "200"]) == 0
    assert main([str(tmp_path), "-p", "gantt", "--jobs", "10", "20", "-o", str(tmp_path / "j")]) == 0
    assert (tmp_path / "utilization.png").is_file() and (tmp_path / "j" / "gantt.png").is_file()
    with pytest.raises(InputError, match="start < end"):
        make_plots(tmp_path, ["gantt"], window=(5.0, 1.0))
    ax = Figure().subplots()
    draw_plot(tmp_path, "utilization", ax)   # 5,001 s in 1,000 bins of 5.001 s
    assert ax.get_xlabel() == "time (s)"
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["min-max per bin", "mean per bin of 5.001 s"]
