"""A mixed CPU + GPU run on real input: KTH-SP2 jobs and Philly jobs together on platforms/mixed_cpu_gpu.json."""
from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from hdeeprm.config.options import load_options
from hdeeprm.decision.actions import action_index
from hdeeprm.errors import OptionsError
from hdeeprm.outputs.gpu_outputs import TIMELINE_COLUMNS
from hdeeprm.platform.gpu_platform import load_gpu_cluster
from hdeeprm.platform.loader import load_platform
from hdeeprm.run.launch import launch
from tests.conftest import ROOT

EXAMPLE = ROOT / "examples" / "mixed_kth_philly_easy.json"


@pytest.mark.slow
@pytest.mark.parametrize("pair", ["first-high_gflops", "first-contiguous"])
def test_cpu_and_gpu_jobs_share_the_platform_under_easy(shared, tmp_path, pair):
    # "contiguous" alone once made EASY take PyBatsim's core-only geometry, which started GPU jobs without GPUs
    options = load_options(EXAMPLE).replace(nb_jobs=300, actions=[action_index(*pair.split("-"))])
    options = options.replace(gpu_jobs={**options.gpu_jobs, "nb_jobs": 100})
    result = launch(options, outdir=tmp_path, quiet=True)
    rows = list(csv.DictReader(open(tmp_path / "out_jobs.csv")))
    gpu_rows = [r for r in rows if r["job_id"].startswith("gpu-")]
    assert len(rows) == 400 and len(gpu_rows) == 100
    # every job ends completed, or rejected with its reason (none here: every Philly job of the window fits a node)
    assert {r["final_state"] for r in rows} == {"COMPLETED_SUCCESSFULLY"}
    # a GPU job's cores are on one node, and that node carries GPUs (the R740s and the DGX A100s)
    hierarchy = load_platform(options.platform_file_path)
    gpu_nodes = {n for n in range(hierarchy.nb_nodes) if hierarchy.node_type[n] != "Dell R720"}
    for r in gpu_rows:
        cores = [c for part in r["allocated_resources"].split() for c in
                 (range(int(part.split("-")[0]), int(part.split("-")[-1]) + 1))]
        nodes = {int(hierarchy.core_node[c]) for c in cores}
        assert len(nodes) == 1 and nodes <= gpu_nodes, r
    # each GPU job's GPUs (global ids, node-major, the GPU replay's columns) are on the node of its cores
    cluster = load_gpu_cluster(options.platform_file_path)
    first_gpu = np.concatenate(([0], np.cumsum(cluster.gpu_count)))
    for r in rows:
        gpus = [g for part in r["allocated_gpus"].split() for g in
                range(int(part.split("-")[0]), int(part.split("-")[-1]) + 1)]
        if not r["job_id"].startswith("gpu-"):
            assert gpus == [] and r["gpu_milli"] == "0", r
            continue
        core = int(r["allocated_resources"].split()[0].split("-")[0])
        node = int(hierarchy.core_node[core])
        assert gpus and all(first_gpu[node] <= g < first_gpu[node + 1] for g in gpus), r
        assert r["gpu_milli"] == "1000"   # Philly jobs hold whole GPUs
    timeline = list(csv.DictReader(open(tmp_path / "out_gpu_timeline.csv")))
    assert list(timeline[0]) == list(TIMELINE_COLUMNS)
    assert max(int(t["allocated_gpu_milli"]) for t in timeline) <= 1000 * cluster.nb_gpus
    assert float(timeline[-1]["time"]) == max(float(r["finish_time"]) for r in rows)   # the last instant: the last end
    metrics = json.loads((tmp_path / "out_metrics.json").read_text())
    assert metrics == {**metrics, "nb_jobs": 400, "nb_completed": 400}
    assert metrics["gpu_energy"] > 0 and metrics["energy"] == metrics["cpu_energy"] + metrics["gpu_energy"]
    assert result.metrics[0]["energy"] == metrics["energy"]


@pytest.mark.slow
def test_gpu_jobs_need_a_platform_with_gpus(shared, tmp_path):
    options = load_options(EXAMPLE).replace(platform_file_path=str(ROOT / "platforms" / "gaia_mini.json"),
                                            nb_jobs=10)
    with pytest.raises(OptionsError, match="^gpu_jobs needs a platform whose node types carry GPUs; .*gaia_mini.json "
                                           "has none"):
        launch(options, outdir=tmp_path, quiet=True)
    assert not (tmp_path / "run.json").exists()   # refused before the folder is claimed


@pytest.mark.slow
def test_fragmentation_scored_placement_is_refused_in_a_mixed_run(shared, tmp_path):
    options = load_options(EXAMPLE).replace(nb_jobs=10)
    options = options.replace(gpu_jobs={**options.gpu_jobs, "nb_jobs": 5, "placement": "fgd"})
    with pytest.raises(OptionsError, match="^gpu_jobs.placement 'fgd' scores with the ATC'23 fragmentation, which "
                                           "needs the typical pods of a GPU replay; in a mixed run use a policy"):
        launch(options, outdir=tmp_path, quiet=True)
    assert not (tmp_path / "run.json").exists()   # refused before the folder is claimed
