"""A resource kind of the user's own, defined here only: a site-wide pool of software licences.

Nothing of ``hdeeprm/simulation`` or ``hdeeprm/decision`` knows it: the engine holds it as one more resource
model (``models=``), the workload manager asks it the scheduler's questions (the share a job asks for, whether it
fits now, the what-if state of EASY's reservation), and the jobs that need licences run with EASY backfilling.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from hdeeprm.config.build import build_platform, build_workload
from hdeeprm.config.options import load_options
from hdeeprm.decision.actions import action_index
from hdeeprm.decision.strategies import make_start_strategy
from hdeeprm.errors import SimulationError
from hdeeprm.run.episode import Episode
from hdeeprm.run.session import drive
from hdeeprm.simulation.resource_model import ResourceModel, SchedulableModel
from hdeeprm.workload.model import DELAY, Job, JobState, Profile, Workload

from .decision.helpers import small_hierarchy

ROOT = Path(__file__).resolve().parents[1]


class Licences:
    """A site-wide count of software licences (FlexLM-style floating licences); a job holds its own while it runs.

    Args:
        total: Licences of the site.
        need: Job id -> licences it asks for (jobs not named need none).
    """

    name = "licences"
    spent = 0.0

    def __init__(self, total: int, need: dict[str, int]) -> None:
        self.total, self.free, self.need = total, total, need
        self.held: dict[int, int] = {}
        self.peak = 0

    # the kernel's side
    def advance(self, t: float) -> None:
        """Nothing is metered."""

    def first_submission(self, t: float) -> None:
        """No energy window."""

    def fits(self, job: int, share: int) -> bool:
        return share <= self.free

    def start(self, job: int, share: int, duration: float) -> float:
        if share > self.free:
            raise SimulationError(f"job {job} asks for {share} licences, {self.free} are free")
        self.free -= share
        self.held[job] = share
        self.peak = max(self.peak, self.total - self.free)
        return 1.0

    def end(self, job: int) -> None:
        self.free += self.held.pop(job, 0)

    def power(self) -> float:
        return 0.0

    # the scheduler's side
    def demand(self, job: Job) -> int | None:
        return self.need.get(job.id) or None

    def never_fits(self, job: Job) -> str | None:
        n = self.need.get(job.id, 0)
        return f"asks for {n} licences, the site has {self.total}" if n > self.total else None

    def free_now(self) -> int:
        return self.free

    def fits_in(self, state: int, share: int) -> bool:
        return share <= state

    def moved(self, state: int, share: int, sign: int) -> int:
        return state + sign * share


def test_the_toy_model_is_a_resource_model():
    assert isinstance(Licences(1, {}), ResourceModel) and isinstance(Licences(1, {}), SchedulableModel)


def _job(index: int, res: int, run: float, subtime: float) -> Job:
    """A ``delay`` job whose requested time is its run time (exact estimates)."""
    return Job(index=index, id="ABCDEF"[index], subtime=subtime, res=res, walltime=-1.0,
               profile=Profile(f"p{index}", DELAY, delay=run), requested_time=run)


def _starts(need: dict[str, int], total: int = 2):
    """Start times by job id of the hand-worked case under EASY, ``first-high_gflops``, on 8 cores."""
    workload = Workload([_job(0, 7, 100.0, 0.0), _job(1, 4, 10.0, 1.0), _job(2, 1, 500.0, 1.0),
                         _job(3, 1, 50.0, 1.0), _job(4, 1, 5.0, 2.0)])
    licences = Licences(total, need)
    episode = Episode(small_hierarchy(), workload, actions=[action_index("first", "high_gflops")],
                      strategy=make_start_strategy("easy_backfilling"), models=[licences], record=False)
    drive(episode, lambda session: 0)
    result = episode.result()
    starts = {job.id: float(t) for job, t in zip(workload.jobs, result.start_time)}
    return starts, result, licences


def test_easy_counts_licences_in_the_heads_reservation():
    # 8 cores, 2 licences. A (7 cores, 100 s) runs from 0. At 1 s: B (4 cores, 10 s, 2 licences) is the blocked
    # head: its shadow time is 100 s (A's end); C (1 core, 500 s, 1 licence) and D (1 core, 50 s, 1 licence)
    # wait behind it. E (1 core, 5 s, 3 licences) can never get its licences: rejected at submission.
    # C fits now (1 free core, 2 free licences) but would still hold a licence at 100 s, leaving B 1 of its 2:
    # it would delay B, so it does not backfill (cores alone would let it: 8 - 1 = 7 >= 4 at 100 s).
    # D ends at 51 <= 100 s: it backfills at 1 s on the free core. At 51 s C is asked again: same answer.
    # At 100 s A ends, B starts (2 licences); C needs a licence: none free until B ends at 110 s.
    starts, result, licences = _starts({"B": 2, "C": 1, "D": 1, "E": 3})
    assert starts == pytest.approx({"A": 0.0, "B": 100.0, "C": 110.0, "D": 1.0, "E": np.nan}, nan_ok=True)
    assert result.state[4] is JobState.REJECTED and result.reasons[4] == "asks for 3 licences, the site has 2"
    assert licences.peak == 2 and licences.free == 2 and not licences.held
    # Without licences the same jobs backfill on cores alone: C at 1 s (it leaves B 7 >= 4 cores); no core is
    # left for D, nor for E at 2 s: both start with B when A ends.
    starts, _, _ = _starts({})
    assert starts == {"A": 0.0, "B": 100.0, "C": 1.0, "D": 100.0, "E": 100.0}


@pytest.mark.parametrize("strategy", ["easy_backfilling", "head_of_line", "greedy"])
def test_licences_on_a_real_trace_and_platform(strategy):
    """The quickstart's 500 jobs on Gaia's 104-core slice, every job of 16+ cores needing one of 3 licences."""
    options = load_options(ROOT / "examples" / "quickstart.json")
    hierarchy = build_platform(options)
    workload = build_workload(options, hierarchy)
    need = {job.id: 1 for job in workload.jobs if job.res >= 16}
    pair = [action_index("first", "high_gflops")]

    def run(models):
        episode = Episode(hierarchy, workload, actions=pair, seed=options.seed, record=False,
                          strategy=make_start_strategy(strategy), models=models)
        drive(episode, lambda session: 0)
        return episode.result()

    plain = run([])
    unlimited = Licences(len(need), need)   # never short: the schedule must be the plain one
    assert np.array_equal(run([unlimited]).start_time, plain.start_time)
    licences = Licences(3, need)
    limited = run([licences])
    start, finish = limited.start_time, limited.finish_time
    assert len(need) > 3 and all(s is JobState.COMPLETED_SUCCESSFULLY for s in limited.state)
    # at no instant more than 3 licensed jobs run together, and the limit was reached
    licensed = np.array([job.id in need for job in workload.jobs])
    events = sorted([(t, 1) for t in start[licensed]] + [(t, -1) for t in finish[licensed]], key=lambda e: (e[0], e[1]))
    assert max(np.cumsum([d for _, d in events])) == licences.peak == 3
    assert licences.free == 3 and not licences.held
    # the limit binds: some licensed jobs start later than without it
    assert (start[licensed] > plain.start_time[licensed]).any()
