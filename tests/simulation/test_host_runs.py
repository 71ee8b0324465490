"""The large-job path (host sets held as runs, per-host values in arrays) gives the figures of the general one."""
import csv
from pathlib import Path

import numpy as np
import pytest
from procset import ProcSet

from hdeeprm.decision import contention, manager
from hdeeprm.decision.contention import ResourceState
from hdeeprm.platform import load_platform
from hdeeprm.simulation import checks, pstates, runs
from hdeeprm.simulation.energy import EnergyAccount
from hdeeprm.simulation.pstates import HostPstates
from hdeeprm.simulation.runs import HostRuns
from hdeeprm.workload.model import PARALLEL_HOMOGENEOUS, Job, Profile

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_host_runs_read_as_the_tuple_of_their_ids():
    rng = np.random.default_rng(5)
    for _ in range(200):
        ids = rng.permutation(300)[:int(rng.integers(1, 200))]
        if rng.random() < 0.5:
            ids = np.sort(ids)
        held = HostRuns.of(ids)
        as_tuple = tuple(ids.tolist())
        assert tuple(held) == as_tuple and len(held) == len(as_tuple) and held == as_tuple and held == list(as_tuple)
        assert [held[i] for i in (0, len(ids) // 2, -1)] == [as_tuple[i] for i in (0, len(ids) // 2, -1)]
        assert held.text() == str(ProcSet(*as_tuple))
        assert np.array_equal(held.array, ids) and np.array_equal(np.arange(400)[held.idx], ids)
    assert HostRuns.of(np.array([7, 8, 9, 3])).starts == [7, 3] and HostRuns([0, 5], [3, 9]).text() == "0-2 5-8"


def _table(rng: np.random.Generator, nb_hosts: int) -> np.ndarray:
    table = rng.uniform(1.0, 200.0, size=(4, 3, nb_hosts)) * np.pi   # wattages that do not sum exactly
    table[:, 0] *= 1e9
    return table


@pytest.mark.slow
@pytest.mark.parametrize("arrays", [False, True])
def test_pstate_switches_and_summaries_by_runs_equal_the_list_paths_to_the_bit(arrays):
    rng = np.random.default_rng(17)
    nb_hosts = 600
    table = _table(rng, nb_hosts)
    initial = rng.integers(0, 4, nb_hosts).tolist()
    fast, slow = HostPstates(table, initial, arrays=arrays), HostPstates(table, initial, arrays=False)
    fast_account, slow_account = EnergyAccount(fast.cur, 1), EnergyAccount(slow.cur, 1)
    for _ in range(300):
        size = int(rng.integers(257, 500))
        hosts = np.sort(rng.choice(nb_hosts, size=size, replace=False))
        if rng.random() < 0.5:   # one run
            a = int(rng.integers(0, nb_hosts - size))
            hosts = np.arange(a, a + size)
        p = int(rng.integers(0, 4))
        _, fast_w, _ = fast.switch_groups([(HostRuns.of(hosts), p)], [-1] * nb_hosts, fast_account, True,
                                          np.full(nb_hosts, -1) if arrays else None)
        _, slow_w, _ = slow.switch_groups([(hosts.tolist(), p)], [-1] * nb_hosts, slow_account, True)
        assert fast_w == slow_w and list(fast.pstate) == list(slow.pstate)
        assert all(list(f) == list(s) for f, s in zip(fast.cur, slow.cur))
        job = rng.permutation(nb_hosts)[:int(rng.integers(257, 590))]   # any order: sums run in the job's order
        assert fast.summarise(HostRuns.of(job), HostRuns.of(job).idx) == slow.summarise(tuple(job.tolist()))


def _job(index: int, res: int, mem: float, mem_bw: float) -> Job:
    return Job(index=index, id=str(index), subtime=0.0, res=res, walltime=-1.0, mem=mem, mem_bw=mem_bw,
               profile=Profile(name="p", type=PARALLEL_HOMOGENEOUS, cpu=1e9))


@pytest.mark.slow
@pytest.mark.parametrize("arrays", [False, True])
def test_resource_state_by_runs_equals_the_processor_by_processor_path_on_gaia(arrays, monkeypatch):
    hierarchy = load_platform(ROOT / "platforms" / "gaia.json")
    slow = ResourceState(hierarchy)   # lists (Gaia's 2,280 cores)
    monkeypatch.setattr(contention, "ARRAYS_ABOVE", 0 if arrays else 10 ** 9)
    fast = ResourceState(hierarchy)
    rng = np.random.default_rng(23)
    running, now = {}, 0.0
    for index in range(400):
        now += float(rng.uniform(0.0, 50.0))
        if running and (rng.random() < 0.45 or fast.nb_free < 600):
            j = list(running)[int(rng.integers(len(running)))]
            job, cores = running.pop(j)
            changes = fast.release(job, cores, now)
            expected = slow._load(job, slow._mark(cores, cores.tolist(), True, -1) or cores.tolist(), cores, -1, now)
            slow.nb_free += len(cores)
        else:
            mem = float(rng.choice([0.0, 500.0])) if rng.random() < 0.5 else 0.0
            job = _job(index, int(rng.integers(257, 600)), mem, float(rng.choice([0.0, 2.5, 6.0])))
            free = np.flatnonzero(fast.candidates(job.mem))
            cores = np.sort(rng.choice(free, size=job.res, replace=False)) if rng.random() < 0.3 else free[:job.res]
            changes = fast.allocate(job, cores, now)
            slow._mark(cores, cores.tolist(), False, job.index)
            slow.nb_free -= len(cores)
            expected = slow._load(job, cores.tolist(), cores, 1, now)
            running[index] = (job, cores)
        assert {p: list(c) for p, c in changes.items()} == expected and list(changes) == list(expected)
        for name in ("core_free", "core_job", "core_pstate", "processor_busy", "processor_used_bw", "node_free_mem"):
            assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    assert np.array_equal(fast.overutilization, slow.overutilization)
    assert fast.overutilization_report(now) == slow.overutilization_report(now)


def _replay(tmp_path: Path, name: str) -> dict:
    from hdeeprm.cli.launch import main

    out = tmp_path / name
    assert main([str(ROOT / "examples" / "quickstart.json"), "-o", str(out), "-q"]) == 0
    files = {}
    for path in sorted(out.iterdir()):
        if path.name == "run.json":
            continue
        if path.name.endswith("_schedule.csv"):   # without its wall-clock columns
            rows = list(csv.DictReader(path.open()))
            files[path.name] = [{k: v for k, v in r.items() if k not in ("scheduling_time", "simulation_time")}
                                for r in rows]
        else:
            files[path.name] = path.read_bytes()
    return files


def test_quickstart_replay_is_the_same_by_runs_in_arrays_and_host_by_host(tmp_path, monkeypatch):
    for module in (runs, pstates, checks, contention, manager):
        monkeypatch.setattr(module, "RUNS", 64)   # Lublin jobs of up to 100 cores: those above 64 go by runs
    by_runs = _replay(tmp_path, "runs")
    for module in (pstates, contention):
        monkeypatch.setattr(module, "ARRAYS_ABOVE", 0)
    in_arrays = _replay(tmp_path, "arrays")
    for module in (runs, pstates, checks, contention, manager):
        monkeypatch.setattr(module, "RUNS", 10 ** 9)
    for module in (pstates, contention):
        monkeypatch.setattr(module, "ARRAYS_ABOVE", 10 ** 9)
    host_by_host = _replay(tmp_path, "hosts")
    assert by_runs == in_arrays == host_by_host
    assert len(by_runs["out_pstate_changes.csv"]) > 1000


def test_a_static_order_that_is_the_core_ids_picks_the_cores_the_explicit_order_picks():
    from hdeeprm.decision.core_selection import CoreSelector, node_capacity

    hierarchy = load_platform(ROOT / "platforms" / "gaia.json")
    state = ResourceState(hierarchy)
    selector = CoreSelector(state, np.random.default_rng(0))
    rng = np.random.default_rng(4)
    for _ in range(50):
        state.core_free[:] = rng.random(hierarchy.nb_cores) < 0.6
        state.node_free_mem[:] = rng.uniform(0.0, 4000.0, hierarchy.nb_nodes)
        job = _job(0, int(rng.integers(1, 900)), float(rng.choice([0.0, 300.0])), 0.0)
        cap = node_capacity(state, job.mem) if job.mem > 0.0 else None
        cand = state.candidates(job.mem)
        by_ids = selector._ordered(job, None, cand, cap)
        explicit = selector._ordered(job, np.arange(hierarchy.nb_cores), cand, cap)
        assert (by_ids is None and explicit is None) or np.array_equal(by_ids, explicit)


@pytest.mark.parametrize("arrays", [False, True])
def test_a_large_delay_job_draws_the_idle_wattage_summed_as_host_by_host(arrays):
    rng = np.random.default_rng(8)
    table = _table(rng, 900)
    hosts = HostPstates(table, rng.integers(0, 4, 900).tolist(), arrays=arrays)
    account = EnergyAccount(hosts.cur, 2)
    job = np.concatenate((np.arange(500, 800), np.arange(10, 200)))
    account.delay_started(0, HostRuns.of(job), 3.0)
    account.delay_started(1, tuple(job.tolist()), 3.0)
    assert account._job_idle[0] == account._job_idle[1] and account._job_power[0] == account._job_power[1]
