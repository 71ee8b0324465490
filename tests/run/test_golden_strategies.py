"""hdeeprm-launch with a fixed policy pair and a start strategy reproduces Batsim 4.2.1 golden runs.

The kth2000-delay case (2000 KTH-SP2 jobs as ``delay`` profiles on 100 identical hosts, ideal
network) was run by real Batsim 4.2.1 with PyBatsim 3.2.1's ``easyBackfill`` scheduler
(``easy-ideal``) and with a strict FCFS taking the lowest free host ids (``fcfs-ideal``). The
same workload on a 100-core HDeepRM platform, launched on the embedded engine, must give every
job the same start, finish, final state and allocated cores:

* ``easy_backfilling`` with ``first-contiguous`` is PyBatsim's EASY (FCFS order, its free-space
  geometry, one pass per event);
* ``head_of_line`` with ``first-high_gflops`` is the strict FCFS (on identical cores,
  ``high_gflops`` takes the lowest free ids).
"""
import csv
import json
from pathlib import Path

import pytest

from hdeeprm.run.launch import launch

ROOT = Path(__file__).resolve().parents[2]
COLUMNS = ("starting_time", "finish_time", "execution_time", "final_state", "allocated_resources")


def rows(path):
    with open(path, newline="") as f:
        return {r["job_id"]: r for r in csv.DictReader(f)}


@pytest.mark.slow
@pytest.mark.parametrize("run, strategy, pair", [("easy-ideal", "easy_backfilling", "first-contiguous"),
                                                 ("fcfs-ideal", "head_of_line", "first-high_gflops")])
def test_launch_reproduces_the_golden_run_job_for_job(shared, tmp_path, run, strategy, pair):
    case = shared / "batsim-golden" / "kth2000-delay"
    if not case.is_dir():
        pytest.skip(f"golden case not found at {case}")
    options = tmp_path / "options.json"
    options.write_text(json.dumps({
        "seed": 0, "workload_file_path": str(case / "workload.json"),
        "platform_file_path": str(ROOT / "platforms" / "kth_sp2.json"),
        "pybatsim": {"env": {"start_strategy": strategy},
                     "agent": {"type": "CLASSIC", "policy_pair": pair}}}))
    result = launch(str(options), outdir=tmp_path / "out", quiet=True)
    gold, mine = rows(case / run / "out_jobs.csv"), rows(tmp_path / "out" / "out_jobs.csv")
    assert len(gold) == 2000 and mine.keys() == gold.keys()
    differ = [j for j in gold if [mine[j][c] for c in COLUMNS] != [gold[j][c] for c in COLUMNS]]
    assert differ == []
    (schedule,) = csv.DictReader(open(case / run / "out_schedule.csv", newline=""))
    assert result.metrics[-1]["makespan"] == float(schedule["makespan"])
    assert result.metrics[-1]["mean_waiting_time"] == pytest.approx(float(schedule["mean_waiting_time"]),
                                                                     rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["easy_backfilling", "conservative_backfilling"])
def test_backfilling_on_a_real_trace_keeps_every_invariant(shared, tmp_path, strategy):
    """SDSC-SP2 on the heterogeneous Gaia slice, memory and bandwidth demands, new orderings in one set."""
    from hdeeprm.env.environment import HDeepRMEnv
    from tests.test_launch import check_invariants

    trace = shared / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz"
    base = {"seed": 2, "nb_jobs": 300, "workload_file_path": str(trace),
            "platform_file_path": str(ROOT / "platforms" / "gaia_mini.json"),
            "workload": {"default_mem": 2048}}
    metrics = {}
    for name, pair in (("hol", "f1-high_mem"), ("backfill", "f1-high_mem"), ("wfp3", "wfp3-contiguous")):
        options = tmp_path / f"{name}.json"
        env = {"start_strategy": "head_of_line" if name == "hol" else strategy}
        options.write_text(json.dumps({**base, "pybatsim": {"env": env, "agent": {"type": "CLASSIC",
                                                                                   "policy_pair": pair}}}))
        metrics[name] = launch(str(options), outdir=tmp_path / name, quiet=True).metrics[-1]
        check_invariants(tmp_path / name, 300)
    # Backfilling starts jobs head-of-line leaves waiting behind a blocked head.
    assert metrics["backfill"]["mean_waiting_time"] < metrics["hol"]["mean_waiting_time"]
    # An agent's action set mixing old and new pairs, through the Gymnasium environment.
    env = HDeepRMEnv(str(tmp_path / "hol.json"), actions=["first-high_gflops", "unicep-random", "saf-contiguous",
                                                          "void"])
    env.options = env.options.replace(start_strategy=strategy)
    env.reset(seed=0)
    terminated = truncated = False
    step = 0
    while not (terminated or truncated):
        allowed = [a for a in env.action_masks().nonzero()[0].tolist() if a != 3] or [3]
        _, _, terminated, truncated, info = env.step(allowed[step % len(allowed)])   # the pairs in turn
        step += 1
    assert info["jobs_ended"] == 300
