"""The compiled small-job path (``contention_kernel.pyx``) against the pure-Python one, to the bit."""
import filecmp
import json
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hdeeprm.decision import contention
from hdeeprm.decision.contention import ContentionModel, NoContention, ResourceState
from hdeeprm.platform import load_platform
from hdeeprm.workload.convert import swf_to_workload

from .helpers import job, small_hierarchy

ROOT = Path(__file__).resolve().parents[2]
compiled = pytest.mark.skipif(contention.SmallJobKernel is None, reason="the compiled kernel is not built")


@pytest.mark.skipif(not os.environ.get("CI"), reason="only CI must have built it (an install without a C "
                    "compiler runs the pure-Python path)")
def test_the_install_builds_the_compiled_kernel():
    assert contention.SmallJobKernel is not None, "pip install -e . did not build contention_kernel.pyx"


def pure(hierarchy, model) -> ResourceState:
    """A state on the pure-Python path (the kernel left out, as on an install without it)."""
    kernel, contention.SmallJobKernel = contention.SmallJobKernel, None
    try:
        return ResourceState(hierarchy, model)
    finally:
        contention.SmallJobKernel = kernel


@compiled
def test_a_state_uses_the_kernel_for_the_models_it_knows_only():
    h = small_hierarchy()
    assert ResourceState(h, ContentionModel()).kernel is not None
    assert ResourceState(h, NoContention()).kernel is not None

    class Mine(ContentionModel):   # a user's model: asked in Python, processor by processor
        def pstates(self, busy_cores, used_bw, mem_bw):
            return super().pstates(busy_cores, used_bw, mem_bw)

    assert ResourceState(h, Mine()).kernel is None
    assert pure(h, ContentionModel()).kernel is None


@compiled
def test_a_job_sharing_a_processor_switches_the_same_cores_as_the_pure_path():
    """small_hierarchy: a job on cores 4-5 of the 4-core processor 2, then one on 2-3 and 6 (two processors)."""
    h = small_hierarchy()
    fast, slow = ResourceState(h), pure(h, ContentionModel())
    a, b = job(0, 2, mem=100.0, mem_bw=15.0), job(1, 3, mem=50.0, mem_bw=12.0)
    assert fast.allocate(a, np.array([4, 5]), 0.0) == slow.allocate(a, np.array([4, 5]), 0.0) == \
        {0: [4, 5], 2: [6, 7]}
    # processor 2 goes over its 40 GB/s: its busy cores 4-6 switch to P1, and processor 1 comes out of P3
    assert fast.allocate(b, np.array([6, 2, 3]), 5.0) == slow.allocate(b, np.array([6, 2, 3]), 5.0) == \
        {0: [2, 3], 1: [4, 5, 6]}
    assert fast.release(a, [4, 5], 9.0) == slow.release(a, [4, 5], 9.0) == {0: [6], 2: [4, 5]}
    for name in ("core_pstate", "core_job", "processor_busy", "processor_used_bw", "node_free_mem"):
        assert np.array_equal(getattr(fast, name), getattr(slow, name)), name
    assert fast.overutilization_report(20.0) == slow.overutilization_report(20.0) == {
        "total_events": 1, "total_seconds": 4.0, "processors": {"2": {"type": "C", "events": 1, "seconds": 4.0}}}


@pytest.mark.slow
@compiled
@pytest.mark.parametrize("platform", ["gaia.json", "kth_sp2.json"])
@pytest.mark.parametrize("model", [ContentionModel, NoContention])
def test_random_starts_and_ends_of_real_jobs_equal_the_pure_path_to_the_bit(shared, platform, model):
    """SDSC-SP2's jobs with random memory and bandwidth on Gaia (several cores per processor: shared
    processors) and KTH-SP2 (one core each): same switches, sums and over-utilization records."""
    hierarchy = load_platform(ROOT / "platforms" / platform)
    jobs = swf_to_workload(shared / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz", nb_cores=hierarchy.nb_cores,
                           reference_speed=hierarchy.reference_speed, nb_jobs=600, seed=0).jobs
    fast, slow = ResourceState(hierarchy, model()), pure(hierarchy, model())
    assert fast.kernel is not None and slow.kernel is None
    rng = np.random.default_rng(11)
    running: list[tuple] = []
    now, started = 0.0, 0
    for j in jobs:
        j = replace(j, res=min(j.res, contention.RUNS), mem=float(rng.choice([0.0, 96.5, 1000.0])),
                    mem_bw=float(rng.choice([0.0, 0.7, 3.1, 9.9])))
        while running and (fast.nb_free < j.res or rng.random() < 0.3):
            done, cores = running.pop(int(rng.integers(len(running))))
            now += float(rng.uniform(0.0, 50.0))
            assert fast.release(done, cores, now) == slow.release(done, cores, now)
        free = np.flatnonzero(fast.candidates(j.mem))
        if free.size < j.res:
            continue
        if rng.random() < 0.5:   # the first free cores (whole and single processors), or scattered ones
            cores = free[:j.res]
        else:
            cores = rng.choice(free, size=j.res, replace=False)
        assert fast.allocate(j, cores, now) == slow.allocate(j, cores, now)
        running.append((j, cores.tolist()))
        started += 1
        for name in ("core_free", "core_job", "core_pstate", "processor_busy", "processor_used_bw",
                     "node_free_mem", "overutilization"):
            assert np.array_equal(getattr(fast, name), getattr(slow, name), equal_nan=True), name
    assert fast.nb_free == slow.nb_free
    assert fast.overutilization_report(now) == slow.overutilization_report(now)
    assert started > 400
    if model is ContentionModel:
        assert fast.overutilization[:, 0].sum() > 0   # the over-utilization records were exercised


@pytest.mark.slow
@compiled
def test_the_sdsc_sp2_run_on_gaia_writes_the_same_files_on_both_paths(gaia_run_both_paths):
    """The first 3,000 SDSC-SP2 jobs on Gaia with every output: the same bytes with and without the kernel."""
    compiled_dir, python_dir = gaia_run_both_paths((contention, "SmallJobKernel"))
    for folder, path in ((compiled_dir, "compiled (contention_kernel)"),
                         (python_dir, "pure Python (kernel not built)")):
        assert json.loads((folder / "run.json").read_text())["contention_bookkeeping"] == path
    names = sorted(p.name for p in compiled_dir.iterdir() if p.name != "run.json")
    assert "out_pstate_changes.csv" in names and "overutilizations.json" in names
    for name in names:
        a, b = compiled_dir / name, python_dir / name
        if name == "out_schedule.csv":   # its two wall-clock columns differ from run to run
            strip = [lambda p: [",".join(r.split(",")[:17] + r.split(",")[19:]) for r in p.read_text().splitlines()]]
            assert strip[0](a) == strip[0](b), name
        else:
            assert filecmp.cmp(a, b, shallow=False), name


@compiled
def test_a_core_out_of_range_is_refused_before_anything_changes():
    st = ResourceState(small_hierarchy())
    before = st.core_free.copy()
    with pytest.raises(IndexError, match="core 8 is out of range: the platform has 8 cores"):
        st.allocate(job(0, 2), np.array([1, 8]), 0.0)
    assert np.array_equal(st.core_free, before) and not st.processor_busy.any()


@pytest.mark.parametrize("kernel", [True, False], ids=["compiled", "python"])
def test_a_deep_copied_state_goes_on_by_itself(kernel, monkeypatch):
    """copy.deepcopy of a state (an environment's, for a look-ahead): the copy's kernel works on its own arrays."""
    import copy
    if not kernel:
        monkeypatch.setattr(contention, "SmallJobKernel", None)
    elif contention.SmallJobKernel is None:
        pytest.skip("the compiled kernel is not built")
    h = small_hierarchy()
    st = ResourceState(h)
    a, b = job(0, 2, mem=100.0, mem_bw=15.0), job(1, 3, mem=50.0, mem_bw=12.0)
    st.allocate(a, np.array([4, 5]), 0.0)
    twin = copy.deepcopy(st)
    assert (twin.kernel is not None) == kernel
    assert twin.allocate(b, np.array([6, 2, 3]), 5.0) == {0: [2, 3], 1: [4, 5, 6]}
    assert st.core_free[[2, 3, 6]].all() and st.processor_busy.tolist() == [0, 0, 2]   # the original is untouched
    assert st.allocate(b, np.array([6, 2, 3]), 5.0) == {0: [2, 3], 1: [4, 5, 6]}
    for name in ("core_free", "core_job", "core_pstate", "processor_busy", "processor_used_bw", "node_free_mem",
                 "overutilization"):
        assert np.array_equal(getattr(st, name), getattr(twin, name), equal_nan=True), name


def test_a_deep_copied_environment_replays_the_same_steps():
    import copy

    from hdeeprm.env.environment import HDeepRMEnv
    env = HDeepRMEnv(platform=ROOT / "platforms" / "kth_sp2.json", workload=ROOT / "workloads" / "lublin_500_100.swf",
                     nb_jobs=300)
    env.reset(seed=0)
    for a in range(40):
        env.step(a % 5)
    twin = copy.deepcopy(env)
    steps = [a % 7 for a in range(200)]
    def run(e):
        return [(o.tobytes(), r, t) for o, r, t, *_ in map(e.step, steps)]

    assert run(env) == run(twin)


def _hierarchy(cores_per_processor: list[list[int]], bandwidths: list[float], memories: list[float]):
    """Nodes of processors of 1-4 cores each (``cores_per_processor[node]``), as small_hierarchy builds one."""
    from hdeeprm.platform.hierarchy import ResourceHierarchy
    counts = [k for node in cores_per_processor for k in node]
    proc_node = [n for n, node in enumerate(cores_per_processor) for _ in node]
    return ResourceHierarchy(
        core_processor=np.repeat(np.arange(len(counts)), counts), processor_node=np.array(proc_node),
        processor_n_cores=np.array(counts), processor_speed=np.full(len(counts), 2.0e9),
        processor_power=np.full(len(counts), 10.0),
        processor_mem_bw=np.array([bandwidths[p % len(bandwidths)] for p in range(len(counts))]),
        processor_type=["T"] * len(counts), node_cluster=np.zeros(len(cores_per_processor), dtype=np.int64),
        node_memory=np.array([memories[n % len(memories)] for n in range(len(cores_per_processor))]),
        node_type=["N"] * len(cores_per_processor), cluster_id=["c"])


@compiled
@pytest.mark.parametrize("model", [ContentionModel, NoContention])
def test_random_platforms_and_jobs_equal_the_pure_path_to_the_bit(model):
    """Hypothesis draws platforms (nodes of processors of 1-4 cores) and start/end sequences."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    platforms = st.tuples(st.lists(st.lists(st.integers(1, 4), min_size=1, max_size=3), min_size=1, max_size=3),
                          st.lists(st.sampled_from([1.0, 4.0, 10.0]), min_size=1, max_size=3),
                          st.lists(st.sampled_from([100.0, 1000.0]), min_size=1, max_size=3))

    @settings(max_examples=80, deadline=None)
    @given(platforms, st.lists(st.tuples(st.booleans(), st.integers(0, 2**31)), min_size=1, max_size=40))
    def check(platform, steps):
        h = _hierarchy(*platform)
        fast, slow = ResourceState(h, model()), pure(h, model())
        running, now = [], 0.0
        for k, (start, seed) in enumerate(steps):
            rng = np.random.default_rng(seed)
            now += float(rng.uniform(0.0, 10.0))
            if running and (not start or fast.nb_free == 0):
                done, cores = running.pop(int(rng.integers(len(running))))
                assert fast.release(done, cores, now) == slow.release(done, cores, now)
            else:
                j = job(k, 1, mem=float(rng.choice([0.0, 10.0, 50.0])), mem_bw=float(rng.choice([0.0, 0.7, 3.1])))
                free = np.flatnonzero(fast.candidates(j.mem))
                if not free.size:
                    continue
                cores = rng.choice(free, size=int(rng.integers(1, min(free.size, 6) + 1)), replace=False)
                j = replace(j, res=len(cores))
                assert fast.allocate(j, cores, now) == slow.allocate(j, cores, now)
                running.append((j, cores.tolist()))
            for name in ("core_free", "core_job", "core_pstate", "processor_busy", "processor_used_bw",
                         "node_free_mem", "overutilization"):
                assert np.array_equal(getattr(fast, name), getattr(slow, name), equal_nan=True), name
        assert fast.overutilization_report(now) == slow.overutilization_report(now)

    check()
