"""Mixed CPU + GPU runs: EASY plans GPU jobs with their scaled run times, worked by hand (issue 35, defect 1).

One node, durations on the run's reference GPU type (the default V100 SXM2 16GB, 15.7 TFLOP/s FP32). A job given
GPUs runs its duration times ``rate(V100 SXM2) / rate(its GPU)``: 15.7 / 14.0 = 1.1214 on a V100 PCIe 32GB (Dell
R740 2xV100, 40 cores), 15.7 / 19.5 = 0.8051 on an A100 SXM4 40GB (DGX A100, 128 cores). Decisions: FCFS,
``first-high_gflops`` (lowest core id first on one node), EASY backfilling.

Jobs (``delay``, requested time = duration; ``n`` = the node's cores):

====  ==========  =========  =====  ==========================================
job   submit (s)  cores      GPUs   duration (s)
====  ==========  =========  =====  ==========================================
C     0           n / 2      0      1000
H     10          n - 1      0      100 (the head: it waits for C's cores)
X     10          2          1      950 on the R740, 1200 on the DGX A100
====  ==========  =========  =====  ==========================================

At 10 s the head H gets its reservation at C's end (1000 s), when 1 core is spare beyond its ``n - 1``: X (2 cores)
may backfill only if it ends by 1000 s.
"""
from __future__ import annotations

import csv
import json
import math

import pytest

from hdeeprm.decision.actions import action_index
from hdeeprm.decision.strategies import make_start_strategy
from hdeeprm.errors import OptionsError
from hdeeprm.platform.gpu_platform import load_gpu_cluster
from hdeeprm.platform.loader import load_platform
from hdeeprm.run.episode import Episode
from hdeeprm.workload.model import DELAY, Job, Profile, Workload

#: Run-time factors against the reference type, as the GPU model divides the library's FP32 rates.
V100_PCIE = 15.7e12 / 14.0e12
A100 = 15.7e12 / 19.5e12


def _platform(tmp_path, node_type):
    path = tmp_path / "one_node.json"
    path.write_text(json.dumps({
        "clusters": [{"id": "one", "nodes": [{"type": node_type, "number": 1}],
                      "local_links": {"type": "InfiniBand QDR", "latency": "0us"}}],
        "global_links": {"type": "InfiniBand QDR", "latency": "0us"}}))
    return load_platform(path), load_gpu_cluster(path)


def _run(tmp_path, node_type, x_duration, estimate, **kwargs):
    hierarchy, cluster = _platform(tmp_path, node_type)
    n = hierarchy.nb_cores
    rows = [("C", 0, n // 2, 1000, 0), ("H", 10, n - 1, 100, 0), ("X", 10, 2, x_duration, 1)]
    jobs = Workload([Job(i, name, float(t), res, -1.0, Profile(f"p{i}", DELAY, float(run)), requested_time=float(run),
                         num_gpu=num, gpu_milli=1000 if num else 0) for i, (name, t, res, run, num) in enumerate(rows)])
    episode = Episode(hierarchy, jobs, actions=[action_index("first", "high_gflops")],
                      strategy=make_start_strategy("easy_backfilling"), gpus=cluster, gpu_estimate=estimate, **kwargs)
    while episode.advance():
        episode.apply(0)
    return episode, episode.engine.result()


def test_a_slower_gpu_job_no_longer_backfills_past_the_reservation(tmp_path):
    # Scaled: X would run 950 x 1.1214 = 1065.4 s, past 1000 s on the spare core H needs: it waits. H starts at
    # C's end (1000 s) on cores 0-38, X when H ends (1100 s) and runs 1065.4 s.
    _, result = _run(tmp_path, "Dell R740 2xV100", 950, "scaled")
    assert result.start_time.tolist() == [0.0, 1000.0, 1100.0]
    assert result.finish_time.tolist() == [1000.0, 1100.0, 1100.0 + 950.0 * V100_PCIE]
    # Requested (the trace's time as it is): X looks done by 960 s and backfills at 10 s, then runs to 1075.4 s,
    # holding the core H needs: the head starts 75.4 s after its reservation.
    _, result = _run(tmp_path, "Dell R740 2xV100", 950, "requested")
    assert result.start_time.tolist() == [0.0, 10.0 + 950.0 * V100_PCIE, 10.0]
    assert result.start_time[1] - 1000.0 == pytest.approx(75.357142857)


def test_a_faster_gpu_job_backfills_when_its_scaled_time_ends_before_the_reservation(tmp_path):
    # Scaled: X runs 1200 x 0.8051 = 966.2 s, ending at 976.2 s before H's reservation (1000 s): it backfills at 10 s.
    _, result = _run(tmp_path, "DGX A100", 1200, "scaled")
    assert result.start_time.tolist() == [0.0, 1000.0, 10.0]
    assert result.finish_time.tolist() == [1000.0, 1100.0, 10.0 + 1200.0 * A100]
    # Requested: X looks like it ends at 1210 s, holding the spare core past 1000 s: it waits for H's end.
    _, result = _run(tmp_path, "DGX A100", 1200, "requested")
    assert result.start_time.tolist() == [0.0, 1000.0, 1100.0]


def test_an_unknown_estimate_is_refused(tmp_path):
    with pytest.raises(OptionsError, match="^gpu_jobs.estimate must be one of scaled, requested, got 'exact'$"):
        _run(tmp_path, "DGX A100", 1200, "exact")


def test_the_gpu_ids_and_the_gpu_timeline_of_a_mixed_run(tmp_path):
    """out_jobs.csv gets the GPU replay's two columns, out_gpu_timeline.csv one row per instant (defect 2)."""
    streamed, plain = tmp_path / "streamed", tmp_path / "plain"
    episode, _ = _run(tmp_path, "Dell R740 2xV100", 950, "scaled", stream_to=streamed)
    episode.write_outputs(streamed)
    episode, _ = _run(tmp_path, "Dell R740 2xV100", 950, "scaled")
    episode.write_outputs(plain)
    for name in ("out_jobs.csv", "out_gpu_timeline.csv"):   # both ways of writing give the same bytes
        assert (streamed / name).read_bytes() == (plain / name).read_bytes(), name
    rows = list(csv.reader(open(streamed / "out_jobs.csv")))
    assert rows[0][-3:] == ["metadata", "allocated_gpus", "gpu_milli"]
    # C and H (no GPU): no id, share 0; X: GPU 0 of the node, whole.
    assert {row[0]: row[-2:] for row in rows[1:]} == {"C": ["", "0"], "H": ["", "0"], "X": ["0", "1000"]}
    end = 1100.0 + 950.0 * V100_PCIE
    # Power: 2 V100 PCIe idle at 30 W each; X's GPU at its 250 W TDP. Queued: jobs asking for GPUs.
    assert (streamed / "out_gpu_timeline.csv").read_text().splitlines() == [
        "time,allocated_gpu_milli,busy_gpus,fragmented_gpu_milli,gpu_power_w,queued_jobs",
        "0.000000,0,0,nan,60.000,0",
        "10.000000,0,0,nan,60.000,1",
        "1000.000000,0,0,nan,60.000,1",
        "1100.000000,1000,1,nan,280.000,0",
        f"{end:f},0,0,nan,60.000,0"]
    assert math.isnan(episode.result().gpu.timeline.fragmented[0])


def test_a_run_without_records_keeps_no_gpu_timeline(tmp_path):
    episode, _ = _run(tmp_path, "Dell R740 2xV100", 950, "scaled", record=False)
    assert episode.gpu_rows is None and episode.result().gpu.timeline is None
