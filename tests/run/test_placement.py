"""The ATC'23 placement experiment: invariants and ordering on the real trace (one seed), and the CLI."""
import csv

import numpy as np
import pytest

from hdeeprm.cli.gpu import main
from hdeeprm.errors import WorkloadError
from hdeeprm.platform.openb import read_openb_nodes
from hdeeprm.run.placement import arrival_order, run_experiment
from hdeeprm.workload.openb import openb_pods, read_openb_pods


@pytest.fixture(scope="module")
def openb(shared):
    return (read_openb_nodes(shared / "traces/gpu/openb_node_list_gpu_node.csv"),
            read_openb_pods(shared / "traces/gpu/openb_pod_list_default.csv"))


def test_arrivals_follow_the_protocol(openb):
    cluster, pods = openb
    capacity = 1000 * cluster.nb_gpus
    order = arrival_order(pods, capacity, 1.3, np.random.default_rng(42))
    assert sorted(order[:len(pods)]) == list(range(len(pods)))  # the whole trace first, shuffled
    total = int(pods.gpu_request[order].sum())
    assert total <= 1.3 * capacity < total + 1000 * 8  # stops at the first pod that would overshoot
    down = arrival_order(pods, capacity, 0.5, np.random.default_rng(42))
    assert len(set(down)) == len(down) and pods.gpu_request[down].sum() <= 0.5 * capacity


@pytest.mark.slow
def test_one_seed_orders_the_policies_and_keeps_invariants(openb):
    cluster, pods = openb
    runs = {r.policy: r for r in run_experiment(cluster, pods, ["random", "best_fit", "fgd"], [42])}
    at100 = {name: float(run.allocation_at([100])[0]) for name, run in runs.items()}
    assert at100["random"] + 3 < at100["best_fit"] < at100["fgd"] - 1
    assert 83 < at100["random"] and at100["fgd"] < 97
    arrived = runs["fgd"].arrived
    for run in runs.values():
        assert np.array_equal(run.arrived, arrived)  # same arrivals for every policy of a seed
        assert np.all(np.diff(run.allocated) >= 0) and np.all(run.allocated <= run.arrived)
        assert run.allocated[-1] <= run.capacity and 0 <= run.fragmented.min()
        placed = run.node >= 0
        step = np.r_[run.arrived[0], np.diff(run.arrived)]
        assert run.allocated[-1] == step[placed].sum() and run.nb_failed == int((~placed).sum()) > 0
        per_node = np.bincount(run.node[placed], weights=step[placed], minlength=cluster.nb_nodes)
        assert np.all(per_node <= 1000 * cluster.gpu_count)
    assert runs["fgd"].fragmentation_at([100])[0] < runs["random"].fragmentation_at([100])[0]
    ratio = {name: run.fragmentation_ratio_at([50, 90]) for name, run in runs.items()}
    assert np.all(ratio["fgd"] < ratio["best_fit"]) and np.all(ratio["best_fit"] < ratio["random"])
    assert all(np.all((run.fragmentation_ratio >= 0) & (run.fragmentation_ratio <= 1)) for run in runs.values())


@pytest.mark.slow
def test_cli_atc23_on_a_small_trace(tmp_path, capsys):
    (tmp_path / "openb_node_list_gpu_node.csv").write_text(
        "sn,cpu_milli,memory_mib,gpu,model\n" + "".join(f"n{i},32000,65536,4,T4\n" for i in range(6)))
    rows = [f"p{i},{1000 * (1 + i % 4)},1024,{1 if i % 3 else 2},{(300, 1000, 700)[i % 3] if i % 3 else 1000}\n"
            for i in range(20)]
    (tmp_path / "openb_pod_list_small.csv").write_text("name,cpu_milli,memory_mib,num_gpu,gpu_milli\n" + "".join(rows))
    code = main(["atc23", str(tmp_path), "--workload", "small", "--seeds", "2", "--policies", "fgd", "random",
                 "--output", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0 and "fgd" in out and "paper@100" not in out
    curves = ("allocation", "fragmentation", "fragmentation_ratio")
    assert {p.name for p in (tmp_path / "out").iterdir()} == {f"{what}{end}" for what in curves
                                                                 for end in (".csv", "_mean_sd.csv", ".png")}
    for what in curves:   # per seed: a row per policy and seed; mean +- sd: a mean and an sd row per policy
        per_seed = list(csv.reader(open(tmp_path / "out" / f"{what}.csv")))
        stats = list(csv.reader(open(tmp_path / "out" / f"{what}_mean_sd.csv")))
        assert len(per_seed) == 1 + 2 * 2 and [r[:2] for r in stats[1:]] == [["fgd", "mean"], ["fgd", "sd"],
                                                                             ["random", "mean"], ["random", "sd"]]
        # the mean row is the mean of the seeds' rows, column by column (where both seeds reached that %)
        fgd = [r for r in per_seed[1:] if r[0] == "fgd"]
        for k in range(3, len(per_seed[0])):
            if fgd[0][k] and fgd[1][k]:
                assert abs(float(stats[1][k - 1]) - (float(fgd[0][k]) + float(fgd[1][k])) / 2) <= 0.01
    assert main(["atc23", str(tmp_path), "--workload", "small", "--policies", "fdg"]) == 2
    assert "did you mean 'fgd'" in capsys.readouterr().err


def test_cli_types_and_nodes(shared, capsys):
    assert main(["types"]) == 0 and "H100 SXM5 80GB" in capsys.readouterr().out
    assert main(["nodes", str(shared / "traces/gpu/openb_node_list_gpu_node.csv")]) == 0
    assert "1213  6212" in capsys.readouterr().out


def test_pods_built_in_code_reject_bad_requests():
    with pytest.raises(WorkloadError, match="gpu_milli must be 1000"):
        openb_pods([("p", 1, 1, 2, 500, "")])
