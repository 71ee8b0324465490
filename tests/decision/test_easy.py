"""EASY backfilling's skeleton (hdeeprm.decision.easy) on a tiny fake reservation view, hand-worked."""
from __future__ import annotations

import math

from hdeeprm.decision.easy import easy_backfill


class CountView:
    """Identical cores counted, no geometry: a job is (name, cores, estimated run time s)."""

    def __init__(self, nb_cores: int, running: list[tuple[float, int]]) -> None:
        self.running = running   # (estimated end s, cores)
        self.free = nb_cores - sum(c for _, c in running)
        self.calls: list[str] = []

    def place(self, job, accept):
        self.calls.append(job[0])
        if job[1] > self.free:
            return None
        placement = job[1]
        return placement if accept is None or accept(placement) else None

    def start(self, job, placement):
        self.free -= placement

    def shadow(self, head, now):
        free = self.free
        for end, cores in sorted(self.running):
            free += cores
            if free >= head[1]:
                return end, {"spare": free - head[1]}
        return None

    def estimate(self, job, placement):
        return job[2]

    def hold(self, then, head, job, placement):
        if placement > then["spare"]:
            return False
        then["spare"] -= placement
        return True

    def skip(self, job, now, shadow, then):
        return job[0] == "skipped"


def test_backfills_short_jobs_and_jobs_that_leave_the_head_enough():
    # 4 cores, 2 held by a job estimated to end at 10 s; now 0 s. Head A (3 cores) is blocked: shadow time 10 s,
    # 4 cores free then, 1 spare. E (2 cores, 20 s) fits now but would keep 2 > 1 spare cores past 10 s: refused.
    # B (1 core, 20 s) runs past 10 s but takes the spare core: starts. C (1 core, 5 s) ends by 10 s: starts.
    # D finds no free core now. The skipped job is never placed.
    view = CountView(4, [(10.0, 2)])
    jobs = [("A", 3, 1.0), ("E", 2, 20.0), ("skipped", 1, 1.0), ("B", 1, 20.0), ("C", 1, 5.0), ("D", 1, 1.0)]
    started = easy_backfill(view, jobs, 0.0)
    assert [job[0] for job, _ in started] == ["B", "C"]
    assert view.calls == ["A", "E", "B", "C", "D"] and view.free == 0


def test_head_of_line_then_no_reservation_no_backfill():
    # H starts (head of line); A (5 cores) never fits, the view gives no reservation: nothing backfills.
    view = CountView(4, [(10.0, 2)])
    started = easy_backfill(view, [("H", 1, 1.0), ("A", 5, 1.0), ("C", 1, 1.0)], 0.0)
    assert [job[0] for job, _ in started] == ["H"]


def test_a_job_ending_at_the_shadow_time_backfills():
    # Ends exactly at the shadow time (10 s): it does not delay the head (<=), even with no spare core.
    view = CountView(4, [(10.0, 2)])
    started = easy_backfill(view, [("A", 4, 1.0), ("C", 1, 10.0), ("F", 1, math.nextafter(10.0, math.inf))], 0.0)
    assert [job[0] for job, _ in started] == ["C"]
