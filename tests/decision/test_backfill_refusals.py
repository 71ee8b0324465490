"""EASY's memo of refused GPU job shapes on a mixed platform changes no schedule, and does skip work.

A GPU job whose cores and GPUs were found but would delay the head is refused; until a job starts, a job of the
same shape that runs at least as long is skipped without choosing its cores (``_CoreView``'s docstring says why
that is exact). Here the shipped mixed example (KTH-SP2 and Philly jobs on ``platforms/mixed_cpu_gpu.json``, a
window of it) runs with the memo and without it: every output file must be the same, byte for byte.
"""
import filecmp

import pytest

from hdeeprm.config.options import load_options
from hdeeprm.decision import backfilling
from hdeeprm.decision.actions import action_index
from hdeeprm.run.launch import launch
from tests.conftest import ROOT

#: The outputs whose bytes must not change (run.json and out_schedule.csv hold wall-clock figures).
COMPARED = ("out_jobs.csv", "out_metrics.json", "out_gpu_timeline.csv", "out_machine_states.csv",
            "out_consumed_energy.csv", "out_pstate_changes.csv", "episodes.csv")


@pytest.mark.slow
@pytest.mark.parametrize("pair, placement", [("first-high_gflops", "best_fit"),      # the example's: memo on
                                             ("first-random", "best_fit"),           # random cores: memo off
                                             ("shortest-low_power", "high_gflops")])
def test_the_refusal_memo_gives_the_schedule_of_trying_every_job(shared, tmp_path, monkeypatch, pair, placement):
    options = load_options(ROOT / "examples" / "mixed_kth_philly_easy.json")
    options = options.replace(nb_jobs=1200, actions=[action_index(*pair.split("-"))],
                              gpu_jobs={**options.gpu_jobs, "nb_jobs": 400, "placement": placement})
    skipped = []
    original = backfilling._CoreView.skip

    def counting(self, job, *args):
        out = original(self, job, *args)
        skipped.append(bool(out and job.num_gpu and self.refused))
        return out

    monkeypatch.setattr(backfilling._CoreView, "skip", counting)
    launch(options, outdir=tmp_path / "memo", quiet=True)
    monkeypatch.setattr(backfilling._CoreView, "place", _never_remembering(backfilling._CoreView.place))
    launch(options, outdir=tmp_path / "plain", quiet=True)
    for name in COMPARED:
        if (tmp_path / "memo" / name).exists():
            assert filecmp.cmp(tmp_path / "memo" / name, tmp_path / "plain" / name, shallow=False), name
    assert (tmp_path / "memo" / "out_jobs.csv").exists()
    if pair == "first-random":
        assert not any(skipped)   # random cores: the same shape may get other cores, nothing is remembered
    else:
        assert any(skipped)       # the window queues GPU jobs behind a GPU head: the memo is used


def _never_remembering(place):
    def plain(self, job, accept):
        out = place(self, job, accept)
        self.refused.clear()
        return out
    return plain
