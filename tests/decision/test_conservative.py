"""Conservative backfilling's loop (hdeeprm.decision.conservative) on a tiny fake reservation profile, hand-worked."""
from __future__ import annotations

from hdeeprm.decision.conservative import conservative_backfill


class CountProfile:
    """Identical cores counted over time, no geometry: a job is (name, cores, estimated run time s).

    Slots are times. A job's candidates are every instant of the profile (now, running jobs' ends, reservations'
    starts and ends) from which its cores stay free for its run time; a job named in ``unplaceable`` fails its
    placement now (as a core selection that finds no cores with enough memory).
    """

    def __init__(self, nb_cores: int, running: list[tuple[float, int]], due=(), unplaceable=()) -> None:
        self.nb_cores, self.running, self.due, self.unplaceable = nb_cores, running, list(due), set(unplaceable)
        self.reservations: list[tuple[float, float, int]] = []   # (start s, end s, cores)
        self.calls: list[tuple[str, str, float]] = []
        self.kept: dict[str, float] = {}
        self.started: list[str] = []

    def free(self, t: float) -> int:
        return (self.nb_cores - sum(c for end, c in self.running if end > t)
                - sum(c for start, end, c in self.reservations if start <= t < end))

    def open(self, now):
        self.now = now
        return [(job, job[1]) for job in self.due]

    def waiting(self, ordered):
        return ordered

    def candidates(self, job, now):
        instants = sorted({now} | {end for end, _ in self.running if end > now}
                          | {t for start, end, _ in self.reservations for t in (start, end)})
        for t in instants:
            if all(self.free(u) >= job[1] for u in instants if t <= u < t + job[2]):
                yield t, t

    def respects(self, job, slot):
        return None

    def place(self, job, accept):
        self.calls.append(("place", job[0], self.now))
        return None if job[0] in self.unplaceable else job[1]

    def plan(self, job, slot, accept):
        self.calls.append(("plan", job[0], slot))
        return job[1]

    def reserve(self, job, slot, cores):
        self.reservations.append((slot, slot + job[2], cores))

    def start(self, job, cores):
        self.started.append(job[0])

    def keep(self, job, when, cores):
        self.kept[job[0]] = when


JOBS = [("A", 3, 5.0), ("B", 2, 12.0), ("C", 1, 10.0), ("D", 1, 20.0), ("E", 2, 5.0)]


def test_every_job_is_reserved_in_order_and_those_reserved_now_start():
    # 4 cores, 2 held until 10 s; now 0 s. Free: 2 on [0, 10), 4 after.
    # A (3 cores, 5 s): 10 s (4 free then) -> free 2 | 1 on [10, 15) | 4.
    # B (2 cores, 12 s): not 0 (1 free on [10, 15)), not 10; 15 s -> 2 on [15, 27).
    # C (1 core, 10 s): now, [0, 10) has 2: starts -> 1 on [0, 10).
    # D (1 core, 20 s): now, 1 free on [0, 10), 1 on [10, 15), 2 on [15, 20): starts, delaying neither A nor B.
    # E (2 cores, 5 s): 0 free on [0, 15), 1 on [15, 20); 20 s (2 free on [20, 27)).
    view = CountProfile(4, [(10.0, 2)])
    started = conservative_backfill(view, JOBS, 0.0)
    assert [job[0] for job, _ in started] == ["C", "D"] == view.started
    assert view.kept == {"A": 10.0, "B": 15.0, "E": 20.0}
    assert [c[:2] for c in view.calls] == [("plan", "A"), ("plan", "B"), ("place", "C"), ("place", "D"),
                                          ("plan", "E")]


def test_a_job_that_cannot_be_placed_now_is_reserved_at_its_next_candidate_and_due_jobs_start_first():
    # As above, but C's placement now fails: C is reserved at its next candidate, 10 s (1 core free on [10, 15)
    # after A, 2 on [15, 20) after B) -> 0 free on [10, 15), 1 on [15, 20), 2 on [20, 27).
    # D (1 core, 20 s): not 0 or 10 (0 free on [10, 15)); 15 s (1, 2 then 4 free).
    # E (2 cores, 5 s): now, 2 free on [0, 5): starts. X, reserved by an earlier decision, is due: first.
    view = CountProfile(4, [(10.0, 2)], due=[("X", 0, 1.0)], unplaceable={"C"})
    started = conservative_backfill(view, JOBS, 0.0)
    assert [job[0] for job, _ in started] == ["X", "E"]
    assert view.started == ["E"]   # the due job was started by the view's open
    assert view.kept == {"A": 10.0, "B": 15.0, "C": 10.0, "D": 15.0}
    assert [c for c in view.calls if c[1] == "C"] == [("place", "C", 0.0), ("plan", "C", 10.0)]


def test_a_job_with_no_candidate_is_not_reserved():
    # F needs 5 of 4 cores: no candidate, nothing placed or kept; G starts.
    view = CountProfile(4, [])
    started = conservative_backfill(view, [("F", 5, 1.0), ("G", 4, 1.0)], 0.0)
    assert [job[0] for job, _ in started] == ["G"] and view.kept == {} and view.calls == [("place", "G", 0.0)]
