"""Decisions of the workload manager: queue, head-of-line blocking, void, rejections."""
import pytest

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


@pytest.mark.slow
def test_a_blocked_head_found_without_sorting_changes_nothing(shared, monkeypatch):
    """HDeepRM-v0 on 1,000 KTH-SP2 jobs, 3,000 random steps over every policy pair: the same observations,
    rewards, masks and final metrics whether a blocked first job is found from the queue heads or by the sort."""
    from pathlib import Path

    import numpy as np

    from hdeeprm.decision.orderings import QueueHeads
    from hdeeprm.env.environment import HDeepRMEnv
    from hdeeprm.platform import load_platform
    from hdeeprm.workload.convert import swf_to_workload

    hierarchy = load_platform(Path(__file__).resolve().parents[2] / "platforms" / "kth_sp2.json")
    workload = swf_to_workload(shared / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz", nb_cores=hierarchy.nb_cores,
                               reference_speed=hierarchy.reference_speed, nb_jobs=1000, seed=0)

    def run():
        env = HDeepRMEnv(platform=hierarchy, workload=workload, observation="minimal", objective="avg_job_slowdown")
        obs, info = env.reset(seed=2)
        out = [obs.tobytes()]
        for action in np.random.default_rng(2).integers(env.action_space.n, size=3000).tolist():
            obs, reward, terminated, truncated, info = env.step(action)
            out += [obs.tobytes(), reward, info["action_mask"].tobytes(), info["queue"]]
            if terminated or truncated:
                out.append(info["metrics"])
                obs, info = env.reset()
        return out, env.episode.manager

    shortcut, manager = run()
    assert manager._heads.sorted_heads
    init = QueueHeads.__init__

    def without(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.sorted_heads = {}

    monkeypatch.setattr(QueueHeads, "__init__", without)
    sorting, manager = run()
    assert not manager._heads.sorted_heads
    assert shortcut == sorting
