"""The compiled output rows (hdeeprm/outputs/rows_kernel.pyx) write the bytes of the pure-Python rows."""
import filecmp
import io
import json
import math
import os

import numpy as np
import pytest

from hdeeprm.outputs import stream
from hdeeprm.outputs.stream import CsvStream
from hdeeprm.simulation.energy import EnergyAccount
from hdeeprm.simulation.runs import HostRuns
from hdeeprm.workload.model import DELAY, Job, JobState, Profile

compiled = pytest.mark.skipif(stream.StreamRows is None, reason="the compiled rows are not built")
FILES = ("jobs", "machine_states", "pstate_changes", "consumed_energy")


@pytest.mark.skipif(not os.environ.get("CI"), reason="only CI must have built it (an install without a C "
                    "compiler runs the pure-Python path)")
def test_the_install_builds_the_compiled_rows():
    assert stream.StreamRows is not None, "pip install -e . did not build rows_kernel.pyx"
    assert stream.output_rows_path() == "compiled (rows_kernel)"


def streams(monkeypatch, nb_hosts=64):
    """A compiled and a pure-Python CsvStream on one fake energy account, writing into memory."""
    account = EnergyAccount([[1.0] * nb_hosts] * 3, 1)   # offset, power and wattmin are set by each test
    out = []
    for kernel in (True, False):
        with monkeypatch.context() as m:
            if not kernel:
                m.setattr(stream, "StreamRows", None)
                m.setattr(stream, "JobRows", None)
            files = {name: io.StringIO() for name in FILES}
            out.append((CsvStream(nb_hosts, account, files, "w0"), files))
    return account, out


def job(index, sub=0.0, res=4, walltime=-1.0, name="ph1e9"):
    return Job(index, str(100 + index), sub, res, walltime, Profile(name, DELAY, delay=1.0), 0.0, 0.0, 100 + index,
               walltime)


@compiled
def test_a_hand_made_sequence_gives_the_same_rows_as_python(monkeypatch):
    account, pair = streams(monkeypatch)
    for rec, _ in pair:
        # a switch of two groups (one run, one split list) at 12.5 s, then the job start it made way for
        account.offset, account.power, account.wattmin = 0.0, 100.0, 50.0
        rec.switched_groups(12.5, [([0, 1, 2, 3], 1), ([5, 7, 8, 9], 0)], [50.0, 48.25, 47.0], 4, True)
        rec.job_started(12.5, 4)
        account.offset, account.power = -125.0, 110.0
        rec.switched(20.0, (9, 3, 4, 2), 2, 4)   # distinct ids in any order (the validated path)
        rec.switching(20.0)
        rec.job_ended(1e7 + 0.1, 0)
        rec.job_finished(job(0, 1.0), JobState.COMPLETED_SUCCESSFULLY, 12.5, 1e7 + 0.1, (0, 1, 2, 3), 1.5e9, "")
        rec.job_finished(job(1), JobState.COMPLETED_WALLTIME_REACHED, 3.0, 3.0, (4, 6), math.nan, "")
        rec.job_finished(job(2), JobState.REJECTED, math.nan, 30.0, None, math.nan, 'asks "too" much')
    (fast, a), (slow, b) = pair
    for name in FILES:
        assert a[name].getvalue() == b[name].getvalue(), name
    assert a["pstate_changes"].getvalue().splitlines()[:4] == ["12.5,0-3,-1", "12.5,0-3,1", "12.5,5 7-9,-1",
                                                               "12.5,5 7-9,0"]
    assert a["jobs"].getvalue().splitlines()[1].endswith(",inf,4 6,-1.000000,\"\"")   # ran 0 s, no energy


@pytest.mark.slow
@compiled
def test_random_sequences_give_the_same_rows_as_python(monkeypatch):
    """Hypothesis draws calls of every kind, with repeated instants and energies, runs and split host lists."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    times = st.sampled_from([0.0, 1.0, 1.0 + 2 ** -40, 86400.5, 1e6, 123456789.123456, 1e17, math.inf])
    watts = st.one_of(st.floats(0.0, 1e5, allow_nan=False), st.sampled_from([0.1, 1e-7, 1e20, math.nan]))
    hosts = st.lists(st.integers(0, 40), min_size=1, max_size=12, unique=True)
    call = st.one_of(
        st.tuples(st.just("switched_groups"), times, st.lists(st.tuples(hosts, st.integers(-1, 3)), min_size=1,
                                                               max_size=4), st.integers(0, 64), st.booleans()),
        st.tuples(st.just("job_started"), times, st.integers(0, 64)),
        st.tuples(st.just("job_ended"), times, st.integers(0, 64)),
        st.tuples(st.just("switching"), times),
        st.tuples(st.just("switched"), times, hosts, st.integers(0, 3), st.integers(0, 64)),
        st.tuples(st.just("job_finished"), times, times, hosts, watts,
                  st.sampled_from([JobState.COMPLETED_SUCCESSFULLY, JobState.COMPLETED_KILLED, JobState.REJECTED])))

    @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(st.lists(st.tuples(call, watts, watts, watts), max_size=30))
    def check(calls):
        account, pair = streams(monkeypatch)
        for (kind, *args), offset, power, wattmin in calls:
            account.offset, account.power, account.wattmin = offset, power, wattmin
            for rec, _ in pair:
                if kind == "switched_groups":
                    now, groups, busy, ascending = args
                    groups = [(sorted(h) if ascending else h, p) for h, p in groups]
                    wattmins = [wattmin + k for k in range(len(groups) + 1)]
                    rec.switched_groups(now, groups, wattmins, busy, ascending)
                elif kind == "switched":
                    rec.switched(args[0], tuple(args[1]), args[2], args[3])
                elif kind == "job_finished":
                    start, finish, ids, energy, state = args
                    rejected = state is JobState.REJECTED
                    rec.job_finished(job(0, 1.0), state, math.nan if rejected else start, finish,
                                     None if rejected else tuple(ids), energy, "no room" if rejected else "")
                else:
                    getattr(rec, kind)(*args)
        (_, a), (_, b) = pair
        for name in FILES:
            assert a[name].getvalue() == b[name].getvalue(), name

    check()


@compiled
def test_host_runs_groups_are_written_as_python_writes_them(monkeypatch):
    account, pair = streams(monkeypatch, nb_hosts=1000)
    for rec, _ in pair:
        rec.switched_groups(5.0, [(HostRuns([0, 400], [300, 700]), 1)], [1.0, 2.0], 600, True)
    (_, a), (_, b) = pair
    assert a["pstate_changes"].getvalue() == b["pstate_changes"].getvalue() == \
        "5,0-299 400-699,-1\n5,0-299 400-699,1\n"


@pytest.mark.slow
@compiled
def test_the_sdsc_sp2_run_on_gaia_writes_the_same_files_on_both_paths(gaia_run_both_paths):
    """The first 3,000 SDSC-SP2 jobs on Gaia with every output: the same bytes with and without the rows kernel."""
    compiled_dir, python_dir = gaia_run_both_paths((stream, "StreamRows"), (stream, "JobRows"))
    for folder, path in ((compiled_dir, "compiled (rows_kernel)"), (python_dir, "pure Python (kernel not built)")):
        assert json.loads((folder / "run.json").read_text())["output_rows"] == path
    for name in ("out_jobs.csv", "out_machine_states.csv", "out_pstate_changes.csv", "out_consumed_energy.csv"):
        assert filecmp.cmp(compiled_dir / name, python_dir / name, shallow=False), name
    assert len((compiled_dir / "out_pstate_changes.csv").read_text().splitlines()) > 10000


@pytest.mark.slow
@compiled
def test_the_kernel_writes_numbers_as_python_percent_f_does():
    """Its own conversion below 4.5e9 against CPython's, on a million values: uniform, log-uniform, negative,
    exact ties (odd multiples of 2**-7, where x * 1e6 ends in .5), their neighbours, and the edges."""
    from hdeeprm.outputs.rows_kernel import fixed6

    rng = np.random.default_rng(7)
    ties = (2 * rng.integers(0, 2 ** 38, 100_000) + 1) / 128.0
    near = (rng.integers(0, 4_500_000_000_000_000, 50_000) + 0.5) / 1e6
    values = np.concatenate([rng.uniform(0.0, 4.6e9, 250_000), 10 ** rng.uniform(-12, 10, 250_000),
                             -(10 ** rng.uniform(-12, 10, 100_000)), ties, -ties[:1000], near,
                             np.nextafter(near, 0.0), np.nextafter(near, np.inf), np.nextafter(ties, 0.0),
                             np.nextafter(ties, np.inf), rng.integers(0, 2 ** 40, 50_000) / 2.0 ** 20,
                             [0.0, -0.0, 5e-7, 4.9999999e-7, 5e-324, 1e-300, 4.5e9, np.nextafter(4.5e9, 0.0), 4.6e9,
                              1e300, np.inf, -np.inf, np.nan, 0.1, 0.7, 2.5e-6]]).tolist()
    assert len(values) > 1_000_000
    wrong = [x for x in values if fixed6(x) != "%f" % x]
    assert not wrong, wrong[:5]
