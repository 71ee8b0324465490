"""The session contract (advance -> decide -> apply): one driver for the CPU episode and the GPU replay."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from hdeeprm.decision.actions import action_index
from hdeeprm.outputs.gpu_outputs import gpu_summary
from hdeeprm.run.episode import Episode
from hdeeprm.run.gpu_replay import GpuReplay, GpuRunConfig, policy_decision, simulate_gpu
from hdeeprm.run.launch import launch
from hdeeprm.run.session import Session, drive
from hdeeprm.config.build import build_platform, build_workload
from hdeeprm.config.options import load_options
from hdeeprm.platform.openb import gpu_cluster
from hdeeprm.workload.gpu_jobs import gpu_jobs
from hdeeprm.workload.model import Workload

from tests.decision.helpers import job, small_hierarchy


def test_both_sessions_offer_the_contract():
    episode = Episode(small_hierarchy(), Workload([job(0, 1)]), actions=[action_index("first", "high_gflops")])
    replay = GpuReplay(gpu_cluster([("n0", 8000, 65536, 2, "V100 SXM2 32GB")]),
                       gpu_jobs([("a", 0, 10, 1, 1000, 0, 0, 0, "")]))
    assert isinstance(episode, Session) and isinstance(replay, Session)


def test_driving_a_gpu_replay_with_its_policy_is_the_plain_replay():
    cluster = gpu_cluster([("n0", 8000, 65536, 2, "V100 SXM2 32GB"), ("n1", 8000, 65536, 1, "T4")])
    jobs = gpu_jobs([("a", 0, 100, 1, 500, 1000, 1024, 0, ""), ("b", 10, 50, 2, 1000, 1000, 1024, 0, ""),
                     ("c", 20, 30, 1, 1000, 0, 0, 0, ""), ("d", 20, 40, 3, 1000, 0, 0, 0, "")])
    config = GpuRunConfig(start_strategy="easy_backfilling")
    plain = simulate_gpu(cluster, jobs, config)
    replay = GpuReplay(cluster, jobs, config)
    metrics = drive(replay, policy_decision)
    assert replay.done and metrics == gpu_summary(plain)
    driven = replay.result()
    assert np.array_equal(driven.start_time, plain.start_time, equal_nan=True)
    assert np.array_equal(driven.gpu.timeline.allocated, plain.gpu.timeline.allocated)


def test_driving_an_episode_gives_the_launchers_metrics(tmp_path):
    example = Path(__file__).resolve().parents[2] / "examples" / "quickstart.json"
    options = load_options(example)
    out = launch(example, outdir=tmp_path / "out", quiet=True)
    launched = json.loads((tmp_path / "out" / "out_metrics.json").read_text())
    hierarchy = build_platform(options)
    workload = build_workload(options, hierarchy)
    episode = Episode(hierarchy, workload, actions=options.actions, seed=options.seed)
    metrics = drive(episode, lambda session: 0)   # the one policy pair of the options
    assert out is not None and {k: metrics[k] for k in launched if k in metrics} == {
        k: launched[k] for k in launched if k in metrics}
    assert metrics["nb_jobs"] == launched["nb_jobs"] == 500
