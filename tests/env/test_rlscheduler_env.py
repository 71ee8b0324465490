"""hdeeprm/RLScheduler-v0: RLScheduler's SchedGym semantics on the loop their heuristics are replayed with."""
from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import hdeeprm
from hdeeprm.env.rlscheduler import EMPTY_SLOT, MAX_WAIT_TIME, RLS_FEATURES, RLS_SLOTS, RLSchedulerEnv
from hdeeprm.errors import AgentError, OptionsError
from hdeeprm.run.rlscheduler import replay
from hdeeprm.workload.rlscheduler import read_rlscheduler_swf

from tests.conftest import TRACES

SDSC = TRACES / "SDSC-SP2-1998-4.2-cln.swf.gz"


@pytest.fixture
def tiny(tmp_path):
    """A 4-node machine; jobs as (submit, run, procs, requested time[, user, group])."""
    def write(jobs):
        lines = []
        for i, job in enumerate(jobs):
            s, r, n, t, user, group = (*job, 1, 1) if len(job) == 4 else job
            lines.append(f"{i + 1} {s} -1 {r} {n} -1 -1 {n} {t} -1 1 {user} {group} -1 1 1 -1 -1")
        path = tmp_path / "tiny.swf"
        path.write_text("; MaxNodes: 4\n; MaxProcs: 4\n" + "\n".join(lines) + "\n")
        return read_rlscheduler_swf(path)
    return write


def drive(env: RLSchedulerEnv, key: str, start: int) -> tuple[float, float]:
    """Run one episode choosing what ``key``'s sorted queue would; (info's bsld, -sum of rewards)."""
    env.reset(options={"start": start})
    total, done = 0.0, False
    while not done:
        slot = env.heuristic_slot(key)
        assert slot is not None, "the heuristic's head is not among the shown jobs"
        _, reward, done, truncated, info = env.step(slot)
        assert not truncated
        total += reward
    return info["metrics"]["mean_bounded_slowdown"], -total


@pytest.mark.slow
@pytest.mark.parametrize("backfilling", [False, True])
@pytest.mark.parametrize("key", ["rls_sjf", "rls_f1", "rls_fcfs"])
def test_the_agent_choosing_as_a_heuristic_gets_the_replay_of_that_heuristic(shared, key, backfilling):
    if not SDSC.is_file():
        pytest.skip(f"{SDSC} not found")
    trace = read_rlscheduler_swf(SDSC)
    env = RLSchedulerEnv(trace, length=256, backfilling=backfilling, first_jobs=10000)
    got, paid = drive(env, key, 1981)   # the first of their SDSC-SP2 test windows
    expected = replay(trace, 1981, 256, key, backfilling).bounded_slowdown
    assert got == expected
    assert paid == pytest.approx(expected, rel=1e-12)


def test_spaces_masks_and_the_rows_of_shown_and_empty_slots():
    env = gymnasium.make(hdeeprm.RLSCHEDULER_ENV_ID).unwrapped
    obs, info = env.reset(seed=3)
    assert obs.shape == (RLS_SLOTS, len(RLS_FEATURES)) and obs.dtype == np.float32
    steps = 0
    done = False
    while not done:
        n = min(info["queue"], RLS_SLOTS)
        assert info["action_mask"].tolist() == [True] * n + [False] * (RLS_SLOTS - n)
        assert env.observation_space.contains(obs)
        assert (obs[n:] == np.asarray(EMPTY_SLOT, dtype=np.float32)).all()
        assert (obs[:n, 7] > 0.5).tolist() == [bool(env.trace.nodes[env.sim.start + j] <= env.sim.free)
                                               for j in env.shown]
        obs, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[-1]))
        steps += 1
    assert info["started"] == env.length and info["masked_actions"] == 0
    assert steps <= env.length


def test_a_seed_gives_their_draw_of_sequences():
    env = RLSchedulerEnv()
    first = [env.reset(seed=5)[1]["start"], *(env.reset()[1]["start"] for _ in range(3))]
    again = [env.reset(seed=5)[1]["start"], *(env.reset()[1]["start"] for _ in range(3))]
    assert first == again
    assert all(128 <= s < 500 - 128 - 1 for s in first)


def test_their_trajectory_filter_keeps_only_sequences_whose_sjf_slowdown_is_in_range():
    env = RLSchedulerEnv(sjf_filter=(30, 70))
    starts = [env.reset(seed=0)[1]["start"], *(env.reset()[1]["start"] for _ in range(5))]
    slowdowns = [replay(env.trace, s, env.length, "rls_sjf").bounded_slowdown for s in starts]
    assert all(30 < x < 70 for x in slowdowns)
    unfiltered = RLSchedulerEnv()
    drawn = [unfiltered.reset(seed=0)[1]["start"], *(unfiltered.reset()[1]["start"] for _ in range(19))]
    assert not all(30 < replay(env.trace, s, env.length, "rls_sjf").bounded_slowdown < 70 for s in drawn)


def test_commit_waits_for_the_chosen_job_and_backfills_only_with_backfilling(tiny):
    # job 0 takes 3 of 4 nodes for 100 s; the agent commits to job 1 (4 nodes); job 2 (1 node, 50 s) arrives at 2 s
    trace = tiny([(0, 100, 3, 100), (1, 10, 4, 10), (2, 50, 1, 50)])
    for backfilling, start_2 in ((False, 110.0), (True, 2.0)):
        env = RLSchedulerEnv(trace, length=3, starts=[0], backfilling=backfilling)
        env.reset()
        _, _, _, _, info = env.step(0)          # job 0 starts at 0; job 1 arrives into the empty queue
        assert env.shown.tolist() == [1] and info["time"] == 1.0
        while not env.sim.done:
            env.step(0)
        assert env.sim.result().starts.tolist() == [0.0, 100.0, start_2]


def test_more_than_128_waiting_jobs_show_their_sjf_and_smallest_choice(tiny):
    # job 0 holds the machine for 1,000 s; the agent commits to job 1 (4 nodes), 200 jobs arrive meanwhile
    jobs = [(0, 1000, 4, 1000), (1, 10, 4, 10)] + [(2 + i, 10, 1 + i % 4, 10 + (37 * i) % 200) for i in range(200)]
    trace = tiny(jobs)
    env = RLSchedulerEnv(trace, length=202, starts=[0])
    env.reset()
    env.step(0)
    obs, _, _, _, info = env.step(0)
    assert info["queue"] == 200 and info["time"] == 1000.0
    waiting = list(range(2, 202))
    by_time = sorted(waiting, key=lambda j: (trace.request[j], trace.submit[j]))
    by_size = sorted(waiting, key=lambda j: (trace.procs[j], trace.submit[j]))
    expected: list[int] = []
    for j in (j for pair in zip(by_time, by_size, strict=True) for j in pair):
        if j not in expected and len(expected) < RLS_SLOTS:
            expected.append(j)
    assert env.shown.tolist() == expected[:RLS_SLOTS]
    assert obs[0, 0] == pytest.approx((1000.0 - trace.submit[expected[0]]) / MAX_WAIT_TIME)
    assert (obs[:, 7] == np.float32(1e-5)).all()        # nothing fits: job 1 holds the machine


def test_features_follow_their_normalisers(tiny):
    trace = tiny([(0, 100, 2, 200, 3, 7), (1, 50, 1, -1, 6, -1)])
    env = RLSchedulerEnv(trace, length=2, starts=[0])
    obs, _ = env.reset()
    assert obs[0].tolist() == pytest.approx([0.0, 1 - 1e-5, 0.5, 1.0, 0.5, 1 - 1e-5, 1.0, 1 - 1e-5])


@pytest.mark.parametrize("kwargs,message", [
    ({"length": 0}, "length must be an integer >= 1, got 0"),
    ({"length": 300}, r"RLScheduler draws window starts in \[300, 199\): 500 jobs are too few for windows of 300"),
    ({"length": 501}, r"length must be an integer in \[1, 500\] \(kept jobs of the trace\), got 501"),
    ({"first_jobs": 600}, r"first_jobs must be an integer in \[0, 500\] \(kept jobs of the trace\), got 600"),
    ({"backfilling": "yes"}, "backfilling must be True or False, got 'yes'"),
    ({"starts": [450]},
     r"starts\[0\] must be an integer in \[0, 372\] \(windows of 128 jobs among 500 kept jobs\), got 450"),
    ({"sjf_filter": (150, 10)}, r"sjf_filter must be \(low, high\) with low < high, got \(150.0, 10.0\)"),
])
def test_bad_arguments_are_refused_in_one_line(kwargs, message):
    with pytest.raises(OptionsError, match=f"^hdeeprm/RLScheduler-v0: {message}"):
        RLSchedulerEnv(**kwargs)


def test_a_bad_action_and_a_filter_nothing_passes_are_refused_in_one_line():
    env = RLSchedulerEnv()
    env.reset(seed=0)
    with pytest.raises(AgentError, match=r"^the action must be an integer in \[0, 127\], got 128$"):
        env.step(128)
    env = RLSchedulerEnv(sjf_filter=(1e6, 1e7))
    with pytest.raises(OptionsError, match=r"^hdeeprm/RLScheduler-v0: sjf_filter \(1000000.0, 10000000.0\): none of "):
        env.reset(seed=0)
