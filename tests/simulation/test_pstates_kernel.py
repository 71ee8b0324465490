"""The compiled host pstates (hdeeprm/simulation/pstates_kernel.pyx) give the pure-Python figures to the bit."""
import copy
import filecmp
import os
import random

import numpy as np
import pytest

from hdeeprm.simulation import pstates
from hdeeprm.simulation.energy import EnergyAccount
from hdeeprm.simulation.pstates import HostPstates

compiled = pytest.mark.skipif(pstates.ListPstates is None, reason="the compiled host pstates are not built")


@pytest.mark.skipif(not os.environ.get("CI"), reason="only CI must have built it (an install without a C "
                    "compiler runs the pure-Python path)")
def test_the_install_builds_the_compiled_host_pstates():
    assert pstates.ListPstates is not None, "pip install -e . did not build pstates_kernel.pyx"


def pair(table, initial, monkeypatch):
    """A compiled and a pure-Python HostPstates on one table, each with its own energy account."""
    fast = HostPstates(table, initial)
    with monkeypatch.context() as m:
        m.setattr(pstates, "ListPstates", None)
        slow = HostPstates(table, initial)
    assert fast._kernel is not None and slow._kernel is None
    return [(fast, EnergyAccount(fast.cur, 1)), (slow, EnergyAccount(slow.cur, 1))]


def same_state(a: HostPstates, b: HostPstates, accounts):
    assert a.pstate == b.pstate
    for k in range(3):   # the bits of every value (== would let -0.0 and 0.0 pass)
        assert np.array(a.cur[k]).tobytes() == np.array(b.cur[k]).tobytes()
    assert (accounts[0].wattmin, accounts[0]._d_idle) == (accounts[1].wattmin, accounts[1]._d_idle)


def bits(values):
    return np.array(values, dtype=np.float64).tobytes()


@compiled
def test_a_hand_made_switch_and_sum_equal_the_pure_path(monkeypatch):
    # 4 hosts, 2 pstates: speed (FLOP/s), Idle (W), AllCores (W)
    table = np.array([[[1e9, 1e9, 2e9, 2e9], [10.0, 10.1, 20.0, 20.2], [50.0, 50.5, 90.0, 90.9]],
                      [[5e8, 5e8, 1e9, 1e9], [0.1, 0.2, 0.3, 0.4], [25.0, 25.5, 45.0, 45.5]]])
    out = []
    for hp, account in pair(table, [0, 0, 0, 0], monkeypatch):
        jobs, wattmins, n = hp.switch_groups([([0, 1, 3], 1), ([2], 1)], [7, -1, -1, 7], account, True)
        out.append((jobs - {-1}, bits(wattmins), n, hp.pstate, bits(hp.summarise((0, 1, 3), np.array([0, 1, 3]))),
                    bits(hp.summarise((1, 2, 3), slice(1, 4)))))
    assert out[0] == out[1]
    jobs, wattmins, n, pstate, _, _ = out[0]
    assert jobs == {7} and n == 4 and pstate == [1, 1, 1, 1]
    assert np.frombuffer(wattmins) == pytest.approx([60.3, 60.3 - 39.6, 60.3 - 39.6 - 19.7])   # Idle sums


@pytest.mark.slow
@compiled
def test_random_platforms_switches_and_sums_equal_the_pure_path_to_the_bit(monkeypatch):
    """Hypothesis draws tables (1-40 hosts, 1-4 pstates, wattages of any magnitude) and switch sequences."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    value = st.one_of(st.floats(0.0, 1e4, allow_nan=False, allow_subnormal=False), st.sampled_from([0.1, 1e-9, 3e7]))

    @st.composite
    def case(draw):
        nb_hosts, nb_pstates = draw(st.integers(1, 40)), draw(st.integers(1, 4))
        table = np.array(draw(st.lists(value, min_size=nb_pstates * 3 * nb_hosts, max_size=nb_pstates * 3 * nb_hosts)),
                         dtype=np.float64).reshape(nb_pstates, 3, nb_hosts)
        initial = draw(st.lists(st.integers(0, nb_pstates - 1), min_size=nb_hosts, max_size=nb_hosts))
        hosts = st.lists(st.integers(0, nb_hosts - 1), min_size=1, max_size=nb_hosts, unique=True)
        steps = draw(st.lists(st.tuples(st.lists(st.tuples(hosts, st.integers(0, nb_pstates - 1)), min_size=1,
                                                  max_size=3), hosts, st.integers(0, 2 ** 32)), max_size=12))
        return table, initial, steps

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(case())
    def check(drawn):
        table, initial, steps = drawn
        both = pair(table, initial, monkeypatch)
        for groups, job_hosts, seed in steps:
            disjoint, taken = [], set()   # the groups' hosts are disjoint and ascending, as the manager gives them
            for h, p in groups:
                ids = sorted(set(h) - taken)
                taken.update(h)
                if ids:
                    disjoint.append((ids, p))
            groups = disjoint
            host_job = random.Random(seed).choices([-1, -1, 3, 5], k=len(initial))
            results = []
            for hp, account in both:
                if groups:
                    jobs, wattmins, n = hp.switch_groups(groups, host_job, account, True)
                    results.append((jobs - {-1}, bits(wattmins), n))
                ids = tuple(job_hosts)
                lo = min(ids)
                run = slice(lo, lo + len(ids)) if sorted(ids) == list(range(lo, lo + len(ids))) else np.array(ids)
                results.append(bits(hp.summarise(ids, run)))
            assert results[:len(results) // 2] == results[len(results) // 2:]
            same_state(both[0][0], both[1][0], [account for _, account in both])

    check()


@compiled
def test_groups_the_kernel_does_not_take_go_the_pure_way(monkeypatch):
    """More than SMALL hosts, descending ids or a HostRuns: the Python path, same result."""
    table = np.tile(np.arange(1.0, 41.0), (2, 3, 1)) * np.array([1.0, 2.0])[:, None, None]
    for groups in ([(list(range(40)), 1)], [([5, 3], 1)], [([1, 2], 1), (list(range(3, 40)), 1)]):
        out = []
        for hp, account in pair(table, [0] * 40, monkeypatch):
            out.append((hp.switch_groups(groups, [-1] * 40, account, True)[1], list(hp.pstate)))
        assert out[0] == out[1]


@compiled
def test_a_deep_copy_goes_on_by_itself(monkeypatch):
    table = np.array([[[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[7.0, 8.0], [9.0, 10.0], [11.0, 12.0]]])
    hp = HostPstates(table, [0, 0])
    twin = copy.deepcopy(hp)
    assert twin._kernel is not None and twin._kernel is not hp._kernel
    twin.switch_groups([([0, 1], 1)], [-1, -1], None, True)
    assert twin.pstate == [1, 1] and twin.cur[1] == [9.0, 10.0]
    assert hp.pstate == [0, 0] and hp.cur[1] == [3.0, 4.0]   # the original's lists are untouched


@pytest.mark.slow
@compiled
def test_the_sdsc_sp2_run_on_gaia_writes_the_same_files_on_both_paths(gaia_run_both_paths):
    """The first 3,000 SDSC-SP2 jobs on Gaia with every output: the same bytes with and without the kernel."""
    compiled_dir, python_dir = gaia_run_both_paths((pstates, "ListPstates"))
    for name in ("out_jobs.csv", "out_pstate_changes.csv", "out_consumed_energy.csv", "out_machine_states.csv",
                 "out_metrics.json"):
        assert filecmp.cmp(compiled_dir / name, python_dir / name, shallow=False), name
