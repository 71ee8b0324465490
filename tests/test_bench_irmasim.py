"""The IRMaSim comparison's conversions (``benchmarks/bench_irmasim.py``), checked without an IRMaSim checkout."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from hdeeprm.platform import load_platform
from hdeeprm.workload.convert import swf_to_workload

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_irmasim", ROOT / "benchmarks" / "bench_irmasim.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)

#: Three SWF jobs: 4 cores for 100 s, 1 core for 10 s, 128 cores for 50 s (requested 200, 20, 60 s).
SWF = """; MaxProcs: 128
1 0 5 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1
2 30 0 10 1 -1 -1 1 20 -1 1 1 1 -1 1 -1 -1 -1
3 60 0 50 128 -1 -1 128 60 -1 1 1 1 -1 1 -1 -1 -1
"""


@pytest.fixture(scope="module")
def gaia():
    """HDeepRM's Gaia platform (platforms/gaia.json)."""
    return load_platform(ROOT / "platforms" / "gaia.json")


def test_platform_keeps_every_node_processor_and_core_speed(gaia):
    out = bench.irmasim_platform(gaia)
    (platform,) = out["platform"].values()
    assert platform["model_name"] == "modelV1"
    nodes = [entry["type"] for cluster in platform["clusters"] for entry in cluster["nodes"]
             for _ in range(entry["number"])]
    assert len(nodes) == gaia.nb_nodes == 153
    cores_per_node, speeds = [], []
    for name in nodes:
        n = 0
        for slot in out["node"][name]["processors"]:
            proc = out["processor"][slot["type"]]
            n += proc["cores"] * slot["number"]
            speeds += [proc["clock_rate"] * proc["dpflops_per_cycle"] * 1e9] * (proc["cores"] * slot["number"])
        cores_per_node.append(n)
    assert cores_per_node == gaia.node_n_cores.tolist()
    assert sum(cores_per_node) == 2280
    np.testing.assert_allclose(speeds, gaia.core_speed, rtol=1e-12)   # same cores in the same order


def test_workload_keeps_jobs_cores_and_flop(tmp_path, gaia):
    trace = tmp_path / "three.swf"
    trace.write_text(SWF)
    workload = swf_to_workload(trace, nb_cores=gaia.nb_cores, reference_speed=gaia.reference_speed)
    jobs = bench.irmasim_workload(workload, gaia.nb_nodes)["jobs"]
    assert [(j["id"], j["subtime"], j["ntasks"], j["nodes"], j["req_time"]) for j in jobs] == [
        ("job1", 0.0, 4, 4, 200.0), ("job2", 30.0, 1, 1, 20.0), ("job3", 60.0, 128, 128, 60.0)]
    for job, runtime in zip(jobs, (100, 10, 50)):   # FLOP per core, rounded up to IRMaSim's integer ops
        assert job["req_ops"] - runtime * gaia.reference_speed == pytest.approx(0.5, abs=0.5)
        assert (job["ipc"], job["mem"], job["mem_vol"]) == (1, 0, 0)
    packed = bench.irmasim_workload(workload, gaia.nb_nodes, tasks_per_node=12)["jobs"]
    assert [j["nodes"] for j in packed] == [1, 1, 11]


def test_job_wider_than_the_platform_names_it(tmp_path, gaia):
    trace = tmp_path / "three.swf"
    trace.write_text(SWF)
    workload = swf_to_workload(trace, nb_cores=gaia.nb_cores, reference_speed=gaia.reference_speed)
    with pytest.raises(ValueError, match=r"^job 3: 128 cores at 1 per node need 128 nodes, the platform has 100"):
        bench.irmasim_workload(workload, 100)


def test_missing_checkout_is_a_one_line_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        bench.main(["--irmasim", str(tmp_path / "nowhere")])
    assert exc.value.code == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.endswith(f"--irmasim {tmp_path / 'nowhere'}: no irmasim/cmd.py there "
                         "(a checkout of github.com/irmasim/IRMaSim is needed)")
