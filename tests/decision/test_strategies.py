"""Start strategies on tiny queues worked out by hand: head of line, EASY, conservative, PyBatsim's geometry.

The platform is helpers.small_hierarchy (8 cores; high_gflops takes 2, 3, 0, 1, then 4-7).
"""
import math

import pytest

from hdeeprm.decision.actions import action_index
from hdeeprm.decision.free_spaces import FreeSpaces
from hdeeprm.decision.manager import WorkloadManager
from hdeeprm.decision.strategies import START_STRATEGIES, make_start_strategy

from .helpers import RecordingSimulator, job, small_hierarchy


def manager(strategy, pair="first-high_gflops"):
    sim = RecordingSimulator()
    m = WorkloadManager(sim, small_hierarchy(), actions=[action_index(*pair.split("-"))],
                        strategy=make_start_strategy(strategy))
    return sim, m


def started(sim):
    """(job id, cores) of the EXECUTE_JOB commands, then forget them."""
    out = [(c[1], c[2]) for c in sim.commands if c[0] == "EXECUTE_JOB"]
    sim.commands.clear()
    return out


def test_the_registry():
    assert START_STRATEGIES.names() == ("head_of_line", "easy_backfilling", "conservative_backfilling", "greedy",
                                       "commit_head")


def scenario_easy(strategy):
    """A (6 cores, 10 s) runs from t = 0; at t = 1 B (4 cores) blocks, C (1 core, 5 s) and E (1 core, 100 s) wait."""
    sim, m = manager(strategy)
    m.on_batch(0.0, [job(0, 6, walltime=10.0)], [])
    m.apply(0)
    assert started(sim) == [("0", (2, 3, 0, 1, 4, 5))]
    m.on_batch(1.0, [job(1, 4, walltime=10.0), job(2, 1, walltime=5.0), job(3, 1, walltime=100.0)], [])
    m.apply(0)
    return started(sim), [j.id for j in m.queue]


def test_easy_starts_jobs_that_head_of_line_blocks():
    # Head of line: B needs 4 of the 2 free cores and blocks everything behind it.
    assert scenario_easy("head_of_line") == ([], ["1", "2", "3"])
    # EASY: B's reservation is at the shadow time 10 s (A's estimated end). C ends at 1 + 5 = 6 <= 10: it
    # starts. E would run past 10 s, but at 10 s B still finds 8 - 1 = 7 >= 4 free cores: it starts too.
    assert scenario_easy("easy_backfilling") == ([("2", (6,)), ("3", (7,))], ["1"])


def test_greedy_starts_whatever_fits_without_a_reservation():
    # Greedy: B (4 cores) does not fit the 2 free cores and waits; C and E fit and start, as under EASY here.
    assert scenario_easy("greedy") == ([("2", (6,)), ("3", (7,))], ["1"])
    # A (6 of 8 cores, 10 s) runs; at t = 1 B (8 cores) blocks and C (1 core, 100 s) waits. EASY keeps C
    # back (at B's shadow time, 10 s, C would hold 1 of the 8 cores B needs); greedy starts it.
    for strategy, expected in (("easy_backfilling", []), ("greedy", [("2", (6,))])):
        sim, m = manager(strategy)
        m.on_batch(0.0, [job(0, 6, walltime=10.0)], [])
        m.apply(0)
        started(sim)
        m.on_batch(1.0, [job(1, 8, walltime=10.0), job(2, 1, walltime=100.0)], [])
        m.apply(0)
        assert started(sim) == expected, strategy


def scenario_conservative(strategy):
    """A (6 cores, 10 s) runs; at t = 1: B (4 cores, 10 s), C (8 cores, 10 s), D (1 core, 30 s), E (1 core, 5 s)."""
    sim, m = manager(strategy)
    m.on_batch(0.0, [job(0, 6, walltime=10.0)], [])
    m.apply(0)
    started(sim)
    m.on_batch(1.0, [job(1, 4, walltime=10.0), job(2, 8, walltime=10.0), job(3, 1, walltime=30.0),
                     job(4, 1, walltime=5.0)], [])
    m.apply(0)
    return started(sim)


def test_conservative_protects_every_queued_job_easy_only_the_head():
    # EASY protects B only (shadow 10 s, 8 - 4 = 4 spare cores then): D (1 core until 31 s) starts
    # although it pushes C (8 cores) back; E ends at 6 s < 10 s and starts.
    assert scenario_conservative("easy_backfilling") == [("3", (6,)), ("4", (7,))]
    # Conservative: B reserved on [10, 20) with 4 cores, C on [20, 30) with all 8; D would hold a core
    # on [1, 31) and take one C needs: it waits. E on [1, 6) delays nobody: it starts.
    assert scenario_conservative("conservative_backfilling") == [("4", (6,))]


def test_conservative_starts_the_head_like_head_of_line():
    sim, m = manager("conservative_backfilling")
    m.on_batch(0.0, [job(0, 3, walltime=10.0), job(1, 3, walltime=10.0), job(2, 3, walltime=10.0)], [])
    assert m.apply(0) == 2
    assert started(sim) == [("0", (2, 3, 0)), ("1", (1, 4, 5))]


def test_completions_are_forgotten_and_the_reservation_moves():
    """After A ends early (at 4 s instead of 10 s), B starts: no stale estimate keeps it waiting."""
    sim, m = manager("easy_backfilling")
    a = job(0, 6, walltime=10.0)
    m.on_batch(0.0, [a], [])
    m.apply(0)
    m.on_batch(1.0, [job(1, 4, walltime=10.0), job(2, 4, walltime=50.0)], [])
    m.apply(0)
    started(sim)
    assert m.strategy.running.keys() == {0}
    m.on_batch(4.0, [], [a])
    m.apply(0)
    assert [jid for jid, _ in started(sim)] == ["1", "2"]


def test_pybatsim_geometry_runs_one_pass_per_event():
    """With contiguous pairs EASY is PyBatsim's: C's submission is handled before A's completion."""
    sim, m = manager("easy_backfilling", "first-contiguous")
    a, b = job(0, 2, walltime=10.0), job(1, 2, walltime=100.0)
    m.on_batch(0.0, [a, b], [])
    m.apply(0)
    assert started(sim) == [("0", (0, 1)), ("1", (2, 3))]
    m.on_batch(10.0, [job(2, 2, walltime=5.0)], [a])
    m.apply(0)
    # At C's submission A still holds 0-1: C goes to the free space 4-7 (one pass per batch would pick 0-1).
    assert started(sim) == [("2", (4, 5))]


def test_pybatsim_geometry_backfills_into_spaces_long_enough():
    """Head B (6 cores) is reserved on 0-5 from 10 s; C (1 core, 100 s) must avoid 0-5, D (2 cores, 5 s) may not."""
    sim, m = manager("easy_backfilling", "first-contiguous")
    m.on_batch(0.0, [job(0, 4, walltime=10.0), job(1, 1, walltime=100.0)], [])
    m.apply(0)
    assert started(sim) == [("0", (0, 1, 2, 3)), ("1", (4,))]
    m.on_batch(1.0, [job(2, 6, walltime=10.0), job(3, 1, walltime=100.0), job(4, 2, walltime=5.0)], [])
    m.apply(0)
    # Free space: 5-7. B's reservation: job 0's end (10 s) frees 0-3, 4 < 6 cores; job 1's end (100 s)
    # frees 4, merging 0-7: B gets 0-5, shadow 100 s. Space 5-7 (holding core 5) gets the length
    # 100 - 1 = 99 s and a virtual space 6-7 of infinite length. C (100 s > 99 s) only fits the virtual
    # space, which allocates from its high end: core 7. D (5 s) fits the 99 s space 5-6 (next pass).
    assert started(sim) == [("3", (7,)), ("4", (5, 6))]


def test_free_space_release_rules():
    fs = FreeSpaces(8)
    for expected in ((0, 1), (2, 3), (4, 5), (6, 7)):
        assert fs.take(fs.first_fit(2), 2) == expected
    assert fs.spaces == []
    assert fs.release(0, 1).low is True              # a new space allocates from its low end
    merged = fs.release(2, 3)                       # merged with the space below only
    assert (merged.first, merged.last, merged.low) == (0, 3, False)
    assert fs.take(merged, 1) == (3, 3)             # ... so it allocates next to where the job ended
    fs.release(6, 7)
    above = fs.release(4, 5)                        # merged with the space above only
    assert (above.first, above.last, above.low) == (4, 7, True)


def test_free_space_reservation_pairs():
    fs = FreeSpaces(8)
    fs.take(fs.first_fit(4), 4)                     # 0-3 busy, 4-7 free
    space = fs.spaces[0]
    marks = fs.reserve(6, 9, 10.0)                  # reserved 6-9 from 10 s on (8-9 would free later)
    assert [(s.first, s.last, s.length, s.low) for s in fs.spaces] == [(4, 7, 10.0, False), (4, 5, math.inf, True)]
    assert fs.first_fit(2, 20.0) is fs.spaces[1]    # a long job only fits the virtual space 4-5
    assert fs.take(fs.spaces[1], 2) == (4, 5)
    assert (space.first, space.last) == (6, 7)      # ... which trims its pair
    fs.unreserve(marks)
    assert [(s.first, s.last, s.length, s.low) for s in fs.spaces] == [(6, 7, math.inf, True)]


@pytest.mark.parametrize("strategy", ["easy_backfilling", "conservative_backfilling"])
def test_node_memory_decides_when_the_head_fits(strategy):
    """H (1 core, 9 GB) fits only node 1 (16 GB; node 0 has 8 GB), whose memory is taken until 50 s."""
    sim, m = manager(strategy)
    m.on_batch(0.0, [job(0, 4, walltime=10.0), job(1, 3, walltime=50.0, mem=3 * 1024.0)], [])
    m.apply(0)
    assert started(sim) == [("0", (2, 3, 0, 1)), ("1", (4, 5, 6))]   # node 1: 16 - 9 = 7 GB left
    m.on_batch(2.0, [job(3, 1, walltime=10.0, mem=9 * 1024.0), job(4, 1, walltime=30.0)], [])
    m.apply(0)
    # Counting cores only, H would fit now on the free core; with node memory its shadow time is
    # 50 s (job 1 frees node 1), so L, ending at 32 s, starts on the free core of node 0.
    assert started(sim) == [("4", (7,))] and [j.id for j in m.queue] == ["3"]


def test_the_action_mask_allows_pairs_whose_head_is_blocked_when_backfilling():
    masks = {}
    for strategy in ("head_of_line", "easy_backfilling"):
        sim, m = manager(strategy)
        m.on_batch(0.0, [job(0, 6, walltime=10.0)], [])
        m.apply(0)
        m.on_batch(1.0, [job(1, 4, walltime=10.0), job(2, 1, walltime=5.0)], [])
        masks[strategy] = m.action_mask().tolist()
    assert masks == {"head_of_line": [False], "easy_backfilling": [True]}


@pytest.mark.parametrize("strategy", ["easy_backfilling", "conservative_backfilling"])
def test_a_job_past_its_estimate_is_expected_to_end_right_away(strategy):
    """A (6 cores) asked 10 s but still runs at 20 s: B (7 cores) is reserved right after now, so C
    (2 cores, 100 s) may not take the cores B needs; D (2 cores, 0 s) may (it ends before then)."""
    sim, m = manager(strategy)
    m.on_batch(0.0, [job(0, 6, walltime=10.0)], [])
    m.apply(0)
    started(sim)
    m.on_batch(20.0, [job(1, 7, walltime=10.0), job(2, 2, walltime=100.0), job(3, 2, walltime=0.0)], [])
    m.apply(0)
    assert started(sim) == [("3", (6, 7))]


def test_commit_head_keeps_the_blocked_head_until_it_starts():
    # A (6 of 8 cores, 10 s) runs; at t = 1 B (4 cores) blocks. At t = 2 C (1 core) arrives, shorter than B.
    # Head of line re-sorts (shortest first) and starts C; commit_head stays committed to B and starts nothing.
    for strategy, expected in (("head_of_line", [("2", (6,))]), ("commit_head", [])):
        sim, m = manager(strategy, "shortest-high_gflops")
        a, b, c = job(0, 6, walltime=10.0), job(1, 4, walltime=50.0), job(2, 1, walltime=5.0)
        m.on_batch(0.0, [a], [])
        m.apply(0)
        started(sim)
        m.on_batch(1.0, [b], [])
        m.apply(0)
        assert started(sim) == []
        m.on_batch(2.0, [c], [])
        m.apply(0)
        assert started(sim) == expected
    # When A ends, the committed B starts first, then the order resumes with C.
    m.on_batch(10.0, [], [a])
    m.apply(0)
    assert [j for j, _ in started(sim)] == ["1", "2"]
    assert m.strategy.committed is None


def test_commit_head_takes_arrivals_into_an_empty_queue_in_arrival_order():
    # X (6 of 8 cores) ends at t = 10, when A (7 cores, 100 s) and then B (2 cores, 5 s) arrive into an empty
    # queue. RLScheduler's loop takes A alone, before X's cores are released: A does not fit, becomes the
    # committed head, and starts once X's cores are free; B (2 cores) then waits. Head of line sorts first
    # (shortest: B, then A) and starts B, which blocks A.
    for strategy, expected in (("head_of_line", ["2"]), ("commit_head", ["1"])):
        sim, m = manager(strategy, "shortest-high_gflops")
        x = job(0, 6, walltime=10.0)
        m.on_batch(0.0, [x], [])
        m.apply(0)
        started(sim)
        m.on_batch(10.0, [job(1, 7, walltime=100.0), job(2, 2, walltime=5.0)], [x])
        m.apply(0)
        assert [j for j, _ in started(sim)] == expected
