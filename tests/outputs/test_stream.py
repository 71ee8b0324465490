"""Streamed Batsim-format outputs: the same bytes as the files written from a finished run."""
from pathlib import Path

import pytest

from hdeeprm.agents.base import ClassicAgent
from hdeeprm.config.build import build_platform, build_workload
from hdeeprm.config.options import load_options
from hdeeprm.errors import OptionsError
from hdeeprm.run.episode import run_episode

ROOT = Path(__file__).resolve().parents[2]
STREAMED = ("out_jobs.csv", "out_machine_states.csv", "out_pstate_changes.csv", "out_consumed_energy.csv")


def quickstart(nb_jobs=None):
    options = load_options(ROOT / "examples" / "quickstart.json")
    if nb_jobs is not None:
        options.nb_jobs = nb_jobs
    hierarchy = build_platform(options)
    return options, hierarchy, build_workload(options, hierarchy)


def test_streamed_files_equal_the_files_written_at_the_end(tmp_path):
    options, hierarchy, workload = quickstart()
    kept, _ = run_episode(hierarchy, workload, options, ClassicAgent(0))
    kept.write_outputs(tmp_path / "kept")
    streamed, _ = run_episode(hierarchy, workload, options, ClassicAgent(0), stream_to=tmp_path / "streamed")
    streamed.write_outputs(tmp_path / "streamed")
    for name in (*STREAMED, "out_metrics.json", "overutilizations.json"):
        assert (tmp_path / "kept" / name).read_bytes() == (tmp_path / "streamed" / name).read_bytes(), name
    a, b = ((tmp_path / d / "out_schedule.csv").read_text().splitlines() for d in ("kept", "streamed"))
    assert a[0] == b[0] and len(a[1].split(",")) == len(b[1].split(","))
    # Nothing kept per job or per switch once streamed: no host lists, no log rows.
    result = streamed.engine.result()
    assert all(alloc is None for alloc in result.allocation)
    assert result.machine_states == result.pstate_changes == result.energy_log == []
    assert len(kept.engine.result().machine_states) > 1000


def test_streamed_outputs_must_be_written_where_they_were_streamed(tmp_path):
    options, hierarchy, workload = quickstart(nb_jobs=20)
    episode, _ = run_episode(hierarchy, workload, options, ClassicAgent(0), stream_to=tmp_path / "a")
    with pytest.raises(OptionsError, match="streamed to"):
        episode.write_outputs(tmp_path / "b")
