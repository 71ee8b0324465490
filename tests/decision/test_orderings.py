"""The job orderings beyond the original six: each one's order on a tiny queue, worked out by hand."""
import math

import numpy as np
import pytest

from hdeeprm.decision.actions import action_index
from hdeeprm.decision.manager import WorkloadManager
from hdeeprm.decision.orderings import JOB_ORDERINGS, QueueHeads

from .helpers import RecordingSimulator, job, small_hierarchy

RNG = np.random.default_rng(0)


def jobs(*specs):
    """Jobs from (subtime s, requested time r, cores n), indexed in the given (submission) order."""
    return [job(i, n, subtime=s, walltime=r) for i, (s, r, n) in enumerate(specs)]


def order(name, queue, now=0.0):
    return [j.index for j in JOB_ORDERINGS[name].order(queue, RNG, now)]


def test_the_registry_holds_the_field_s_orderings_after_the_original_six():
    assert JOB_ORDERINGS.names() == ("random", "first", "shortest", "smallest", "low_mem", "low_mem_bw",
                                     "longest", "largest", "saf", "f1", "f2", "f3", "f4", "wfp3", "unicep",
                                     "smallest_gpu_demand", "shortest_gpu_time")


def test_one_registry_orders_cpu_queues_and_the_gpu_replay():
    from hdeeprm.decision.gpu_manager import GPU_ORDERINGS
    from hdeeprm.workload.model import DELAY, Job, Profile

    # the GPU replay's orderings are JOB_ORDERINGS entries under the same names (one name per ordering);
    # "fcfs", the Kubernetes and ATC'23 term, is an alias of "first", not a second name
    assert GPU_ORDERINGS.names() == ("first", "smallest_gpu_demand", "shortest_gpu_time")
    assert GPU_ORDERINGS["first"] == GPU_ORDERINGS["fcfs"] == JOB_ORDERINGS["first"].gpu_keys
    assert GPU_ORDERINGS.check("fcfs") == "first" and "fcfs" in GPU_ORDERINGS
    # on a mixed queue: jobs asking for no GPU first (submission order), then by GPU share x requested time
    q = [Job(i, str(i), 0.0, 1, -1.0, Profile("p", DELAY, 1.0), requested_time=t, num_gpu=g, gpu_milli=m)
         for i, (t, g, m) in enumerate(((100, 1, 1000), (10, 0, 0), (50, 2, 500), (30, 1, 500)))]
    rng = np.random.default_rng(0)
    assert [j.index for j in JOB_ORDERINGS["smallest_gpu_demand"].order(q, rng)] == [1, 3, 0, 2]
    assert [j.index for j in JOB_ORDERINGS["shortest_gpu_time"].order(q, rng)] == [1, 3, 2, 0]


def test_longest_largest_and_smallest_area_first():
    q = jobs((0, 100, 4), (0, 10, 8), (0, 1000, 1), (0, 100, 8))
    assert order("longest", q) == [2, 0, 3, 1]        # r: 1000, 100, 100 (tie: submission order), 10
    assert order("largest", q) == [1, 3, 0, 2]        # n: 8, 8, 4, 1
    q = jobs((0, 100, 4), (0, 10, 8), (0, 1000, 1), (0, 50, 2))
    assert order("saf", q) == [1, 3, 0, 2]            # r * n: 80, 100, 400, 1000


def test_f1_lets_a_small_later_job_pass_a_big_earlier_one():
    # F1 = log10(r) n + 870 log10(s): 0 + 50 = 50; 5 x 100 + 870 log10(900) = 3070.2; 0 + 870 x 3 = 2610
    q = jobs((0, 10, 50), (900, 1e5, 100), (1000, 1, 1))
    assert order("f1", q) == [0, 2, 1]
    assert JOB_ORDERINGS["f1"].score(q[1], 0.0) == pytest.approx(500 + 870 * math.log10(900))


def test_f2_f3_f4():
    # F2 = sqrt(r) n + 25600 log10(s): 100; 1000 x 100 = 1e5; 2 + 25600; 1 + 51200
    assert order("f2", jobs((1, 100, 10), (1, 1e6, 100), (10, 4, 1), (100, 1, 1))) == [0, 2, 3, 1]
    # F3 = r n + 6860000 log10(s): 1e7; 10 + 6.86e6; 1 + 1.372e7
    assert order("f3", jobs((1, 1e4, 1000), (10, 10, 1), (100, 1, 1))) == [1, 0, 2]
    # F4 = r sqrt(n) + 530000 log10(s): 2e6; 100 + 530000; 1 + 1590000
    assert order("f4", jobs((1, 1e6, 4), (10, 100, 1), (1000, 1, 1))) == [1, 2, 0]


def test_wfp3_grows_with_the_waiting_time_at_the_decision_instant():
    # WFP3 utility (w / r)^3 n at now = 100: 1, 125, 8, 0 (just submitted)
    q = jobs((0, 100, 1), (50, 10, 1), (90, 10, 8), (100, 10, 8))
    assert order("wfp3", q, now=100.0) == [1, 2, 0, 3]
    two = jobs((0, 100, 1), (50, 10, 1))
    assert order("wfp3", two, now=55.0) == [0, 1]      # 0.55^3 = 0.166 > 0.5^3 = 0.125
    assert order("wfp3", two, now=100.0) == [1, 0]     # 1 < 5^3


def test_unicep_puts_one_core_jobs_first_then_by_waiting_over_log_size():
    # UNICEP utility w / (log2(n) r) at now = 100: 1 / 2 = 0.5; one core (w / r = 1); 5 / 1 = 5; one core (4)
    q = jobs((0, 100, 4), (0, 100, 1), (50, 10, 2), (60, 10, 1))
    assert order("unicep", q, now=100.0) == [3, 1, 2, 0]


@pytest.mark.parametrize("name", ["longest", "largest", "saf", "f1", "f2", "f3", "f4", "wfp3", "unicep"])
def test_ties_keep_submission_order(name):
    q = jobs(*[(5, 10, 2)] * 4)
    assert order(name, q, now=5.0) == [0, 1, 2, 3]


@pytest.mark.parametrize("now", [55.0, 100.0])
def test_the_action_mask_and_the_manager_use_the_decision_instant(now):
    """The mask's head of each new ordering is the job it starts first; WFP3 sees the batch's time."""
    q = jobs((0, 100, 1), (50, 10, 1))
    heads = QueueHeads(policies=["wfp3", "unicep", "f1", "longest"])(q, now)
    for name, position in heads.items():
        assert JOB_ORDERINGS[name].order(q, RNG, now)[0] is q[position], name
    sim = RecordingSimulator()
    m = WorkloadManager(sim, small_hierarchy(), actions=[action_index("wfp3", "high_gflops")])
    m.on_batch(now, q, [])    # both pending at the decision (submitted at 0 s and 50 s)
    m.apply(0)
    started = [c[1] for c in sim.commands if c[0] == "EXECUTE_JOB"]
    assert started == (["0", "1"] if now == 55.0 else ["1", "0"])


def test_every_pair_has_one_index_and_the_original_37_keep_theirs():
    from hdeeprm.decision.actions import (CORE_POLICIES, JOB_POLICIES, NB_ACTIONS, VOID, action_name,
                                          parse_action, policy_pair)
    from hdeeprm.errors import OptionsError

    indices = {action_index(j, c): (j, c) for j in JOB_POLICIES for c in CORE_POLICIES}
    assert sorted(indices) == [i for i in range(NB_ACTIONS) if i != VOID]
    assert all(policy_pair(i) == pair and parse_action(action_name(i)) == i for i, pair in indices.items())
    assert [action_name(i) for i in (0, 7, 35, 36)] == ["random-random", "first-high_gflops",
                                                         "low_mem_bw-low_power", "void"]
    # Above 36, row by row: the original orderings' new core selection first, then the new orderings.
    assert [action_name(i) for i in (37, 42, 43, 50, 105, 106, 119)] == [
        "random-contiguous", "low_mem_bw-contiguous", "longest-random", "largest-random", "unicep-contiguous",
        "smallest_gpu_demand-random", "shortest_gpu_time-contiguous"]
    assert NB_ACTIONS == 120
    with pytest.raises(OptionsError, match=r"^actions must be in \[0, 119\] \(36 = void\), got 120$"):
        parse_action(NB_ACTIONS)


def test_the_tabulated_heads_equal_the_heads_read_from_the_queue():
    """The action mask's one-gather heads (random's by the (cores, memory) rank) = the keys read job by job."""
    from hdeeprm.workload.model import DELAY, Job, Profile

    rng = np.random.default_rng(3)
    workload = [Job(i, str(i), float(i), int(rng.integers(1, 4)), -1.0, Profile("p", DELAY, 1.0),
                    float(rng.choice([0.0, 100.0, 200.0])), float(rng.choice([4.0, 8.0])),
                    requested_time=float(rng.choice([10.0, 20.0, 30.0]))) for i in range(200)]
    tabulated, read = QueueHeads(workload), QueueHeads()
    assert tabulated.names == read.names == JOB_ORDERINGS.names()
    queue = []
    for step in range(200):   # the manager's own edits: appends, head deletions, deletions anywhere
        if queue and rng.random() < 0.4:
            del queue[int(rng.integers(len(queue))) if rng.random() < 0.5 else slice(0, int(rng.integers(1, 3)))]
        else:
            queue.append(workload[step])
        if queue:
            now = 100.0 + step
            assert tabulated.positions(queue, now) == [read(queue, now)[n] for n in read.names]
            assert tabulated(queue, now) == read(queue, now)


def test_the_queue_index_cache_follows_the_managers_edits():
    """Appends, starts at the head, starts anywhere, a new list, nothing: the cached indices are always the queue's,
    asked once or several times after each edit."""
    from hdeeprm.decision.orderings import QueueIndex

    rng = np.random.default_rng(5)
    pending = [job(i, 1) for i in range(3000)]
    index, queue, submitted = QueueIndex(), [], 0
    for _ in range(1500):
        edit = rng.random()
        if edit < 0.45 or not queue:
            for _ in range(int(rng.integers(1, 4))):
                queue.append(pending[submitted])
                submitted += 1
        elif edit < 0.65:
            del queue[:int(rng.integers(1, 11))]             # head starts, beyond what the cache follows too
        elif edit < 0.8:
            del queue[int(rng.integers(len(queue)))]         # a start behind the head (backfilling, job slots)
        elif edit < 0.88:
            del queue[int(rng.integers(len(queue)))]         # a start, then a submission: the same length
            queue.append(pending[submitted])
            submitted += 1
        elif edit < 0.95:
            queue = [j for j in queue if rng.random() < 0.7]  # the manager's new list
        # else: nothing changed (the observation, the reward and the mask of one decision ask in turn)
        if queue:
            for _ in range(int(rng.integers(1, 4))):
                assert index(queue).tolist() == [j.index for j in queue]


def test_a_sorted_head_is_the_first_job_of_the_stable_sort():
    """QueueHeads.first: the job the stable sort puts first, ties by submission, on random queues; a policy whose
    key has a NaN somewhere in the workload is left out (a sort over NaN keys has no first minimum)."""
    rng = np.random.default_rng(11)
    workload = [job(i, int(rng.integers(1, 5)), mem=float(rng.integers(0, 3)), walltime=float(rng.integers(1, 6)))
                for i in range(300)]
    heads = QueueHeads(workload)
    assert set(heads.sorted_heads) == {"shortest", "smallest", "low_mem", "low_mem_bw"}
    for _ in range(300):
        queue = [workload[i] for i in sorted(rng.choice(300, int(rng.integers(1, 60)), replace=False))]
        for name in heads.sorted_heads:
            assert queue[heads.first(queue, name)] is JOB_ORDERINGS[name].order(queue, rng)[0], name
    with_nan = [*workload[:10], job(10, 2, walltime=float("nan"))]
    assert "shortest" not in QueueHeads(with_nan).sorted_heads and "smallest" in QueueHeads(with_nan).sorted_heads
