"""Decisions of the workload manager: queue, head-of-line blocking, void, rejections."""
from hdeeprm.decision.manager import WorkloadManager
from hdeeprm.decision.actions import VOID, action_index
from hdeeprm.platform.hierarchy import P0, P2

from .helpers import RecordingSimulator, job, small_hierarchy


def manager(actions=None, **kw):
    sim = RecordingSimulator()
    return sim, WorkloadManager(sim, small_hierarchy(), actions=actions, **kw)


def test_pstates_are_set_before_the_job_starts():
    sim, m = manager([action_index("first", "high_gflops")])
    assert m.on_batch(0.0, [job(0, 1)], []) is True
    assert m.apply(0) == 1
    assert sim.commands == [("SET_RESOURCE_STATE", (2,), P0), ("SET_RESOURCE_STATE", (3,), P2),
                            ("EXECUTE_JOB", "0", (2,))]


def test_head_of_line_blocking_stops_at_the_first_job_that_does_not_fit():
    sim, m = manager([action_index("first", "high_gflops")])
    m.on_batch(0.0, [job(0, 6), job(1, 3), job(2, 1)], [])
    assert m.apply(0) == 1                  # job 0 takes 6 cores, job 1 (3) blocks job 2 (1)
    assert [j.index for j in m.queue] == [1, 2]
    smallest = action_index("smallest", "high_gflops")
    sim2, m2 = manager([smallest])
    m2.on_batch(0.0, [job(0, 6), job(1, 3), job(2, 1)], [])
    assert m2.apply(0) == 3 - 1             # smallest first: job 2 (1), job 1 (3); job 0 (6) does not fit


def test_a_job_larger_than_the_platform_is_rejected_with_its_reason():
    sim, m = manager()
    assert m.on_batch(0.0, [job(0, 9)], []) is False
    assert sim.commands == [("REJECT_JOB", "0", "requests 9 cores, the platform has 8")]
    sim, m = manager()
    m.on_batch(0.0, [job(1, 2, mem=9 * 1024.0)], [])   # only node 1 (16 GB) can give 9 GB, to one core
    assert sim.commands[0][0] == "REJECT_JOB"
    assert "allows at most 1 such cores" in sim.commands[0][2]


def test_void_waits_but_never_forever():
    sim, m = manager([action_index("first", "high_gflops"), VOID], has_future_events=lambda: False)
    m.on_batch(0.0, [job(0, 2)], [])
    assert m.action_mask().tolist() == [True, False]     # void would wait forever
    assert m.apply(1) == 1                                # replaced by the first pair
    assert m.void_overridden == 1
    sim, m = manager([action_index("first", "high_gflops"), VOID], has_future_events=lambda: True)
    m.on_batch(0.0, [job(0, 2)], [])
    assert m.apply(1) == 0 and m.queue


def test_completion_frees_cores_and_restores_pstates():
    sim, m = manager([action_index("first", "high_gflops")])
    j = job(0, 2)
    m.on_batch(0.0, [j], [])
    m.apply(0)
    sim.commands.clear()
    assert m.on_batch(10.0, [], [j]) is False            # queue empty: no decision
    assert sim.commands == [("SET_RESOURCE_STATE", (2, 3), 3)]
    assert m.resources.nb_free == 8
