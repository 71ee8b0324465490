"""The engine's and the writers' fast paths give the same figures and text as their general versions."""
import random

import numpy as np
from procset import ProcSet

from hdeeprm.outputs.batsim_csv import EnergyRows, distinct_interval_set, format_job_row, interval_set
from hdeeprm.outputs.stream import CsvStream
from hdeeprm.simulation.energy import IDLE, EnergyAccount, gather
from hdeeprm.simulation.engine import Engine
from hdeeprm.simulation.pstates import HostPstates
from hdeeprm.simulation.recording import Recorder
from hdeeprm.platform.hosts import HostSpec
from hdeeprm.workload.model import PARALLEL_HOMOGENEOUS, Job, JobState, Profile, Workload


def random_table(rng: np.random.Generator, nb_hosts: int) -> np.ndarray:
    """A pstate table (4 pstates, speed / Idle / AllCores rows) with wattages that do not sum exactly."""
    table = rng.uniform(1.0, 200.0, size=(4, 3, nb_hosts)) * np.pi
    table[:, 0] *= 1e9
    return table


def test_distinct_interval_set_is_procsets_text():
    rng = random.Random(3)
    for _ in range(300):
        lo = rng.randrange(50)
        span = rng.randint(1, 90)
        hosts = rng.sample(range(lo, lo + span), rng.randint(1, min(span, 40)))
        for ids in (hosts, sorted(hosts), tuple(hosts), list(range(lo, lo + len(hosts)))):
            assert distinct_interval_set(ids) == interval_set(ids) == str(ProcSet(*ids))
    assert distinct_interval_set(()) == "" and distinct_interval_set([5]) == "5"
    assert distinct_interval_set([9, 7, 8]) == "7-9" and distinct_interval_set([0, 7, 1, 3]) == "0-1 3 7"


def test_switch_by_runs_equals_host_by_host_switch_to_the_bit():
    rng = np.random.default_rng(11)
    nb_hosts = 120
    table = random_table(rng, nb_hosts)
    initial = rng.integers(0, 4, nb_hosts).tolist()
    fast, slow = HostPstates(table, initial), HostPstates(table, initial)
    fast_account, slow_account = EnergyAccount(fast.cur, 1), EnergyAccount(slow.cur, 1)
    for _ in range(400):
        a = int(rng.integers(0, nb_hosts))
        size = int(rng.choice([1, 2, 5, 33, 70]))
        hosts = list(range(a, min(nb_hosts, a + size)))
        if rng.random() < 0.4:   # not one run
            hosts = sorted(set(rng.choice(nb_hosts, size=size).tolist()))
        p = int(rng.integers(0, 4))
        _, wattmins, n = fast.switch_groups([(hosts, p)], [-1] * nb_hosts, fast_account, True)
        slow_account.switch_hosts(tuple(hosts), gather(slow.tab[p][IDLE], hosts))
        slow.apply(tuple(hosts), p)
        assert n == len(hosts) and wattmins == [wattmins[0], slow_account.wattmin]
        assert fast_account.wattmin == slow_account.wattmin and fast_account._d_idle == slow_account._d_idle
        assert fast.pstate == slow.pstate and fast.cur == slow.cur


def test_switch_groups_reports_the_jobs_on_the_switched_hosts():
    table = random_table(np.random.default_rng(2), 10)
    hosts = HostPstates(table, [3] * 10)
    host_job = [-1, -1, 4, 4, -1, -1, -1, 9, -1, -1]
    jobs, wattmins, n = hosts.switch_groups([([0, 1], 2), ([3, 7], 1), ([8], 0)], host_job, None, True)
    assert jobs - {-1} == {4, 9} and wattmins == [] and n == 5
    assert list(hosts.pstate) == [2, 2, 3, 1, 3, 3, 3, 1, 0, 3]


def test_switched_groups_rows_are_those_of_one_switch_per_group(tmp_path):
    account = EnergyAccount([[1.0] * 6, [10.0, 20.0, 30.0, 40.0, 50.0, 60.0], [99.0] * 6], 1)
    account.offset, account.power = 123.0, 4.5
    groups = [([0, 1, 2], 1), ([4], 0), ([3, 5], 2)]
    wattmins = [210.0, 205.5, 201.25, 199.0]
    one, many = Recorder(6, account), Recorder(6, account)
    for k, (hosts, p) in enumerate(groups):
        account.wattmin = wattmins[k]
        one.switching(7.0)
        account.wattmin = wattmins[k + 1]
        one.switched(7.0, tuple(hosts), p, 2)
    many.switched_groups(7.0, groups, wattmins, 2)
    assert (one.machine_states, one.pstate_changes, one.energy_log) == \
        (many.machine_states, many.pstate_changes, many.energy_log)
    texts = []
    for way in ("one", "many"):
        files = CsvStream.open(tmp_path / way, "out", np.zeros(6, dtype=int), True)
        stream = CsvStream(6, account, files, "w")
        account.wattmin = 199.0
        stream.job_started(3.0, 1)
        if way == "one":
            for k, (hosts, p) in enumerate(groups):
                account.wattmin = wattmins[k]
                stream.switching(7.0)
                account.wattmin = wattmins[k + 1]
                stream.switched(7.0, tuple(hosts), p, 2)
        else:
            stream.switched_groups(7.0, groups, wattmins, 2)
            stream.switched_groups(7.0, groups[:1], wattmins[:2], 2)
        if way == "one":
            account.wattmin = wattmins[0]
            stream.switching(7.0)
            account.wattmin = wattmins[1]
            stream.switched(7.0, (0, 1, 2), 1, 2)
        CsvStream.close_files(files)
        texts.append([(tmp_path / way / f"out_{name}.csv").read_text()
                      for name in ("machine_states", "pstate_changes", "consumed_energy")])
    assert texts[0] == texts[1]
    assert "7,0-2,-1\n7,0-2,1\n7,4,-1\n7,4,0\n7,3 5,-1\n7,3 5,2\n" in texts[1][1]


def test_energy_rows_again_is_a_row_at_the_same_instant():
    a, b = EnergyRows(), EnergyRows()
    for rows in (a, b):
        rows.row(1.0, 10.0, "s", 5.0)
    assert a.row(2.0, 30.0, "p", 6.0) == b.row(2.0, 30.0, "p", 6.0) == "2.000000,30.000000,p,6.000000,20.000000\n"
    assert a.row(2.0, 30.0, "p", 7.5) == b.again("p", 7.5) == "2.000000,30.000000,p,7.500000,NA\n"


def test_job_row_text_is_the_f_string_text():
    values = [0.0, -0.0, 1e-7, 2.5e-7, 123456789.123456789, 1e300, 1e308, np.float64(3.25), 7, -1.0]
    rng = random.Random(5)
    for _ in range(200):
        sub, start, finish, walltime, energy = (rng.choice(values) for _ in range(5))
        for state in (JobState.COMPLETED_SUCCESSFULLY, JobState.COMPLETED_WALLTIME_REACHED):
            row = format_job_row("j1", "w", "p", sub, np.int64(4), walltime, state, start, finish, "0-3", energy)
            run, turnaround = finish - start, finish - sub
            stretch = float(row.split(",")[13])
            success = int(state is JobState.COMPLETED_SUCCESSFULLY)
            assert row == (f"j1,w,p,{sub:f},4,{walltime:f},{success},{state.value},{start:f},{run:f},{finish:f},"
                           f"{start - sub:f},{turnaround:f},{stretch:f},0-3,{energy:f},\"\"")
    nan_energy = format_job_row("j", "w", "p", 0.0, 1, -1.0, JobState.COMPLETED_SUCCESSFULLY, 0.0, 1.0, "0",
                                float("nan"))
    assert nan_energy.endswith(",0,-1.000000,\"\"")


def test_unchecked_execute_job_runs_as_the_checked_one():
    results = []
    for validate in (True, False):
        hosts = [HostSpec(f"h{i}", (2e9, 1e9), (10.0, 5.0), (30.0 + i, 20.0), i % 2) for i in range(6)]
        jobs = [Job(0, "a", 0.0, 3, -1.0, Profile("p", PARALLEL_HOMOGENEOUS, cpu=4e9)),
                Job(1, "b", 0.0, 2, -1.0, Profile("q", PARALLEL_HOMOGENEOUS, cpu=3e9))]
        engine = Engine(hosts, Workload(jobs))
        batch = engine.next_batch()
        for job, ids in zip(batch.submitted, ([3, 1, 2], [5, 0])):   # a run of hosts (out of order), two apart
            engine.execute_job(job, np.array(ids, dtype=np.int64), validate=validate)
        assert engine.busy.tolist() == [True, True, True, True, False, True] and engine.nb_busy == 5
        engine.set_pstate([2, 5], 1)
        while engine.next_batch() is not None:
            pass
        assert not engine.busy.any() and engine.nb_busy == 0
        result = engine.result()
        results.append((result.allocation, result.finish_time.tolist(), result.consumed_energy.tolist(),
                        result.host_busy.tolist(), result.host_last_end.tolist()))
    assert results[0] == results[1]


def test_ascending_interval_set_is_procsets_text():
    from hdeeprm.outputs.batsim_csv import ascending_interval_set

    rng = random.Random(8)
    for _ in range(200):
        hosts = sorted(rng.sample(range(60), rng.randint(1, 30)))
        assert ascending_interval_set(hosts) == str(ProcSet(*hosts))
    assert ascending_interval_set([4, 5, 6]) == "4-6" and ascending_interval_set((9,)) == "9"


def test_release_hosts_by_runs_equals_host_by_host():
    from hdeeprm.simulation.pstates import release_hosts

    rng = random.Random(6)
    busy = [rng.uniform(0, 1e6) * np.pi for _ in range(50)]
    last = [-np.inf] * 50
    for hosts in ([7, 5, 6, 8], [3], [10, 11], [20, 22, 21, 30], list(range(40, 50))):
        ran, now = rng.uniform(0, 1e5) * np.e, rng.uniform(1e5, 1e6)
        idx = slice(40, 50) if hosts[0] == 40 else np.array(hosts)
        fast = ([1] * 50, np.array(busy), np.array(last))
        slow = ([1] * 50, list(busy), list(last))
        release_hosts(hosts, idx, *fast, ran, now)
        for h in hosts:
            slow[0][h], slow[2][h] = -1, now
            slow[1][h] += ran
        assert (fast[0], fast[1].tolist(), fast[2].tolist()) == slow


def test_summarise_by_slice_equals_by_hosts_to_the_bit():
    rng = np.random.default_rng(4)
    hosts = HostPstates(random_table(rng, 200), rng.integers(0, 4, 200).tolist())
    for lo, n in ((3, 3), (10, 32), (50, 33), (0, 200)):
        run = tuple(range(lo, lo + n))
        assert hosts.summarise(run, slice(lo, lo + n)) == hosts.summarise(run)
