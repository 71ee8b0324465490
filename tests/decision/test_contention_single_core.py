"""The one-core-processor path of the contention model (the IBM SP2 platforms) against the general one."""
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from hdeeprm.decision import contention
from hdeeprm.decision.contention import ContentionModel, NoContention, ResourceState
from hdeeprm.platform import load_platform
from hdeeprm.workload.convert import swf_to_workload

ROOT = Path(__file__).resolve().parents[2]


class HalfBandwidth(ContentionModel):
    """A user's model (asked for every processor): busy cores slow down above half the bandwidth."""

    def pstates(self, busy_cores: int, used_bw: float, mem_bw: float) -> tuple[int, int]:
        return super().pstates(busy_cores, 2.0 * used_bw, mem_bw)


@pytest.mark.parametrize("arrays", [False, True], ids=["lists", "arrays"])
@pytest.mark.parametrize("model", [ContentionModel, NoContention, HalfBandwidth])
def test_whole_processor_loads_equal_the_per_processor_ones_to_the_bit(shared, monkeypatch, arrays, model):
    """KTH-SP2's jobs on its 100 one-core processors: same switches, sums and over-utilization records
    (the pure-Python paths; tests/decision/test_contention_kernel.py compares the compiled one with them)."""
    monkeypatch.setattr(contention, "SmallJobKernel", None)
    if arrays:   # the per-processor state of a platform above ARRAYS_ABOVE cores
        monkeypatch.setattr(contention, "ARRAYS_ABOVE", 0)
    hierarchy = load_platform(ROOT / "platforms" / "kth_sp2.json")
    jobs = swf_to_workload(shared / "traces" / "KTH-SP2-1996-2.1-cln.swf.gz", nb_cores=hierarchy.nb_cores,
                           reference_speed=hierarchy.reference_speed, nb_jobs=400, seed=0).jobs
    fast, slow = ResourceState(hierarchy, model()), ResourceState(hierarchy, model())
    assert fast._one_core_each and fast._arrays == arrays
    slow._one_core_each = False   # the general path: a dict of cores per processor, then one settle each
    rng = np.random.default_rng(5)
    running: list[tuple] = []
    now = 0.0
    for job in jobs:
        job = replace(job, mem=float(rng.choice([0.0, 96.5])))   # the memory sums too
        while running and (fast.nb_free < job.res or rng.random() < 0.3):
            done, cores = running.pop(int(rng.integers(len(running))))
            now += float(rng.uniform(0.0, 50.0))
            assert fast.release(done, cores, now) == slow.release(done, cores, now)
        if fast.nb_free < job.res:
            continue
        cores = rng.choice(np.flatnonzero(fast.core_free), size=job.res, replace=False)
        assert fast.allocate(job, cores, now) == slow.allocate(job, cores, now)
        running.append((job, cores.tolist()))
        for name in ("core_pstate", "processor_busy", "processor_used_bw", "node_free_mem", "overutilization"):
            assert np.array_equal(getattr(fast, name), getattr(slow, name), equal_nan=True), name
    assert fast.overutilization_report(now) == slow.overutilization_report(now)
    assert fast.overutilization[:, 0].sum() > 0   # the P2SC's bandwidth is over-used: the records were exercised
