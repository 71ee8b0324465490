"""hdeeprm.run.evaluate: windows, split, policies, and runs equal to hdeeprm-launch's."""
import json
import math
from pathlib import Path

import numpy as np
import pytest

from hdeeprm.cli.launch import main as launch_main
from hdeeprm.config.options import load_options, parse_options
from hdeeprm.errors import OptionsError
from hdeeprm.outputs.evaluation import EVALUATION_METRICS, aggregate, spread
from hdeeprm.run.evaluate import (Window, WindowRunner, evaluate, make_windows, plan, run_evaluation, train_agent,
                                  window_options)
from hdeeprm.run.policies import parse_policies, parse_policy_list
from hdeeprm.run.launch import launch

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.json"
REINFORCE = ROOT / "examples" / "agents" / "reinforce.py"
#: The metrics summary keys a window run and hdeeprm-launch both give.
SUMMARY_KEYS = ("nb_jobs", "nb_completed", "nb_killed", "nb_rejected", "mean_waiting_time", "max_waiting_time",
                "mean_turnaround_time", "max_turnaround_time", "mean_slowdown", "max_slowdown",
                "mean_bounded_slowdown", "max_bounded_slowdown", "utilization", "makespan", "energy", "decisions")


@pytest.fixture(scope="module")
def quickstart():
    return load_options(QUICKSTART)


@pytest.fixture(scope="module")
def learning_options():
    """The quickstart inputs with a six-pair action set and the minimal observation, for a learning agent."""
    return parse_options({
        "seed": 11, "workload_file_path": str(ROOT / "workloads" / "lublin_500_100.swf"),
        "platform_file_path": str(ROOT / "platforms" / "gaia_mini.json"),
        "pybatsim": {"env": {"objective": "avg_job_slowdown", "observation": "minimal",
                             "actions": {"selection": [{"first": ["high_gflops", "low_power"]},
                                                       {"shortest": ["high_gflops"]},
                                                       {"smallest": ["high_gflops", "high_cores", "random"]}]}},
                     "agent": {"type": "LEARNING", "hidden": 8, "lr": 0.01}}}, str(ROOT / "options.json"))


# --------------------------------------------------------------------------- windows and split

def test_windows_are_disjoint_slots_in_trace_order_and_split_by_the_seed():
    windows = make_windows(1000, 10, 100, seed=3, test_fraction=0.3)
    assert [w.index for w in windows] == list(range(10))
    # 10 of the 10 slots: the whole trace, each slot once.
    assert [w.first_job for w in windows] == list(range(0, 1000, 100))
    assert sum(w.split == "test" for w in windows) == 3 and sum(w.split == "train" for w in windows) == 7
    assert make_windows(1000, 10, 100, seed=3, test_fraction=0.3) == windows


def test_windows_drawn_among_more_slots_never_overlap():
    windows = make_windows(10_050, 6, 250, seed=8, test_fraction=0.5, offset=40)
    starts = [w.first_job for w in windows]
    assert starts == sorted(starts)
    assert all((s - 40) % 250 == 0 and s + 250 <= 10_090 for s in starts)
    assert all(b - a >= 250 for a, b in zip(starts, starts[1:]))
    assert sum(w.split == "test" for w in windows) == 3
    assert make_windows(10_050, 6, 250, seed=9, test_fraction=0.5, offset=40) != windows


@pytest.mark.parametrize("fraction, nb_test", [(0.0, 0), (0.25, 1), (0.5, 2), (0.625, 3), (1.0, 4)])
def test_test_fraction_is_rounded_half_up(fraction, nb_test):
    windows = make_windows(400, 4, 100, seed=1, test_fraction=fraction)
    assert sum(w.split == "test" for w in windows) == nb_test


@pytest.mark.parametrize("args, message", [
    ((500, 6, 100), "6 windows of 100 jobs need 600 usable jobs, the trace has 500: draw fewer or shorter windows"),
    ((500, 0, 100), "the number of windows and their length must be >= 1, got 0 and 100"),
])
def test_impossible_windows_are_refused(args, message):
    with pytest.raises(OptionsError) as err:
        make_windows(*args, seed=0)
    assert str(err.value) == message


def test_a_test_fraction_out_of_range_is_refused():
    with pytest.raises(OptionsError, match=r"the test fraction must be in \[0, 1\], got 1.5"):
        make_windows(500, 2, 100, seed=0, test_fraction=1.5)


def test_train_and_test_windows_hold_disjoint_jobs_of_the_trace(quickstart):
    the_plan = plan(quickstart, nb_windows=4, length=100, test_fraction=0.5)
    runner = WindowRunner(quickstart)
    ids = {split: set() for split in ("train", "test")}
    for w in the_plan.windows:
        jobs = runner.workload(w).jobs
        assert len(jobs) == 100 and jobs[0].subtime == 0.0     # shifted: each window starts at 0 s
        ids[w.split] |= {j.id for j in jobs}
    assert len(ids["train"]) == len(ids["test"]) == 200
    assert ids["train"].isdisjoint(ids["test"])
    assert [w.split for w in the_plan.selected("test")] == ["test", "test"]
    assert len(the_plan.selected("all")) == 4


def test_a_batsim_json_workload_is_refused(toy_options):
    with pytest.raises(OptionsError, match="cuts windows out of an SWF trace"):
        plan(toy_options, nb_windows=1, length=1)


# --------------------------------------------------------------------------- policies

def test_policy_specs():
    [p] = parse_policies("first-high_gflops")
    assert (p.label, p.job, p.core, p.strategy, p.agent) == ("first-high_gflops", "first", "high_gflops",
                                                             "head_of_line", None)
    [p] = parse_policies("smallest-low_power+head_of_line")
    assert p.label == "smallest-low_power" and p.strategy == "head_of_line"
    grid = parse_policies("first,shortest-high_gflops,low_power")
    assert [p.label for p in grid] == ["first-high_gflops", "first-low_power", "shortest-high_gflops",
                                       "shortest-low_power"]
    [a] = parse_policies(f"{REINFORCE}:{QUICKSTART}")
    assert (a.agent, a.model, a.strategy, a.job) == (str(REINFORCE), str(QUICKSTART), "head_of_line", None)


@pytest.mark.parametrize("spec, message", [
    ("frist-high_gflops", "policy 'frist-high_gflops': unknown job-selection policy 'frist' (valid: "),
    ("first-high_glops", "did you mean 'high_gflops'?"),
    ("first-high_gflops+head_of_lin", "policy 'first-high_gflops+head_of_lin': unknown start strategy "
                                      "'head_of_lin' (valid: "),
    ("firsthigh_gflops", "policy 'firsthigh_gflops' must be 'ordering-core_selection[+start_strategy]'"),
    ("first-high_gflops+", "must be 'ordering-core_selection[+start_strategy]'"),
    ("first,-high_gflops", "policy 'first,-high_gflops' has an empty ordering name"),
    ("missing_agent.py:model.pt", "policy 'missing_agent.py:model.pt': agent file not found (missing_agent.py)"),
    (f"{REINFORCE}:missing.pt", "model file not found (missing.pt)"),
])
def test_bad_policy_names_are_clear_errors(spec, message):
    with pytest.raises(OptionsError) as err:
        parse_policies(spec)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


def test_a_policy_given_twice_or_none_is_refused():
    with pytest.raises(OptionsError, match="policy 'first-high_gflops' is given twice"):
        parse_policy_list(["first,shortest-high_gflops", "first-high_gflops+head_of_line"])
    with pytest.raises(OptionsError, match="no policy to evaluate"):
        parse_policy_list([])


# --------------------------------------------------------------------------- runs

def test_every_value_of_the_table_is_hdeeprm_launchs_on_the_same_window(quickstart, tmp_path):
    policies = parse_policy_list(["first,smallest-high_gflops", "random-low_power"])
    windows = plan(quickstart, nb_windows=4, length=100, test_fraction=0.5).selected("test")
    rows = evaluate(quickstart, policies, windows)
    assert [(r["window"], r["policy"]) for r in rows] == [(w.index, p.label) for w in windows for p in policies]
    launched = {}
    for w in windows:
        for p in policies:
            outdir = tmp_path / f"{w.index}-{p.label}"
            launched[w.index, p.label] = launch(window_options(quickstart, w, p), outdir=outdir, quiet=True).metrics[0]
    for r in rows:
        m = launched[r["window"], r["policy"]]
        assert {k: r[k] for k in SUMMARY_KEYS} == {k: m[k] for k in SUMMARY_KEYS}
        assert r["nb_jobs"] == 100 and r["nb_completed"] == 100
    summary = aggregate(rows, [p.label for p in policies])
    for s in summary:
        for key, _, _ in EVALUATION_METRICS:
            values = [launched[w.index, s["policy"]][key] for w in windows]
            assert s[f"{key}_mean"] == pytest.approx(np.mean(values), rel=1e-12)
            assert s[f"{key}_std"] == pytest.approx(np.std(values, ddof=1), rel=1e-12)
    # The policies differ on these windows (a table of equal rows would prove nothing).
    assert len({round(s["mean_bounded_slowdown_mean"], 6) for s in summary}) == 3


def test_a_window_run_equals_the_hdeeprm_launch_command_on_an_options_file(quickstart, tmp_path):
    w = plan(quickstart, nb_windows=4, length=100).selected("test")[0]
    [p] = parse_policies("shortest-high_mem")
    [row] = evaluate(quickstart, [p], [w])
    data = json.loads(QUICKSTART.read_text())
    data["platform_file_path"] = str(ROOT / "platforms" / "gaia_mini.json")
    data["workload_file_path"] = str(ROOT / "workloads" / "lublin_500_100.swf")
    data["nb_jobs"] = 100
    data["workload"] = {"first_job": w.first_job}
    data["pybatsim"]["agent"]["policy_pair"] = "shortest-high_mem"
    data["pybatsim"]["env"]["start_strategy"] = "head_of_line"
    (tmp_path / "window.json").write_text(json.dumps(data))
    assert launch_main([str(tmp_path / "window.json"), "-o", str(tmp_path / "out"), "-q"]) == 0
    metrics = json.loads((tmp_path / "out" / "out_metrics.json").read_text())
    assert {k: row[k] for k in SUMMARY_KEYS} == {k: metrics[k] for k in SUMMARY_KEYS}


@pytest.mark.slow
def test_a_trained_agent_is_evaluated_as_hdeeprm_launch_runs_its_model(learning_options, tmp_path):
    the_plan = plan(learning_options, nb_windows=4, length=60, test_fraction=0.5)
    model = tmp_path / "model.pt"
    log = train_agent(learning_options, str(REINFORCE), the_plan.windows, episodes=3, outmodel=model)
    assert model.is_file() and len(log) == 3
    assert {row["window"] for row in log} <= {w.index for w in the_plan.windows if w.split == "train"}
    assert all(row["loss"] is not None for row in log)
    policies = parse_policy_list([f"{REINFORCE}:{model}", "first-high_gflops"])
    rows = evaluate(learning_options, policies, the_plan.selected("test"))
    for r in rows[::2]:
        w = next(w for w in the_plan.windows if w.index == r["window"])
        m = launch(window_options(learning_options, w, policies[0]), agent_path=str(REINFORCE), inmodel=str(model),
                   outdir=tmp_path / f"launch{w.index}", quiet=True).metrics[0]
        assert {k: r[k] for k in SUMMARY_KEYS} == {k: m[k] for k in SUMMARY_KEYS}
    # Two processes give the same values as this one.
    assert evaluate(learning_options, policies, the_plan.selected("test"), jobs=2) == rows


def test_training_needs_training_windows(learning_options, tmp_path):
    windows = [Window(0, 0, 50, "test")]
    with pytest.raises(OptionsError, match="training needs training windows"):
        train_agent(learning_options, str(REINFORCE), windows, episodes=1, outmodel=tmp_path / "m.pt")


@pytest.mark.slow
def test_the_same_seed_gives_the_same_table_and_processes_change_nothing(quickstart, tmp_path):
    specs = ["first,shortest-high_gflops", "random-random"]
    a = run_evaluation(quickstart, specs, nb_windows=3, length=80, split="all", outdir=tmp_path / "a", quiet=True)
    b = run_evaluation(quickstart, specs, nb_windows=3, length=80, split="all", outdir=tmp_path / "b", quiet=True,
                       jobs=2)
    assert a.rows == b.rows and a.summary == b.summary
    for name in ("windows.csv", "summary.csv"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    c = run_evaluation(quickstart.replace(seed=8), specs, nb_windows=3, length=80, split="all",
                       outdir=tmp_path / "c", quiet=True)
    assert [w.first_job for w in c.plan.windows] != [w.first_job for w in a.plan.windows]
    assert (tmp_path / "a" / "bounded_slowdown.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    info = json.loads((tmp_path / "a" / "run.json").read_text())
    assert info["evaluation"]["windows"] == [vars(w) for w in a.plan.windows]
    assert info["workload"]["report"]["kept"] == 500


def test_spread_worked_by_hand():
    s = spread([4.0, 1.0, 3.0, 2.0])
    assert s["mean"] == 2.5 and s["median"] == 2.5
    assert s["std"] == pytest.approx(math.sqrt(5 / 3))           # sum of squares 5, ddof 1
    assert (s["q1"], s["q3"]) == (1.75, 3.25)                    # linear interpolation at 0.75 and 2.25
    assert spread([7.0])["std"] == 0.0


@pytest.mark.slow
def test_windows_of_sdsc_sp2_on_its_128_core_platform(shared, tmp_path):
    trace = shared / "traces" / "SDSC-SP2-1998-4.2-cln.swf.gz"
    options = parse_options({"seed": 1998, "workload_file_path": str(trace),
                             "platform_file_path": str(ROOT / "platforms" / "sdsc_sp2.json"),
                             "workload": {"mem_bw_choices": [0]}}, str(ROOT / "options.json"))
    result = run_evaluation(options, ["first-high_gflops"], nb_windows=3, length=128, test_fraction=0.34,
                            outdir=tmp_path, quiet=True)
    assert result.plan.span.report["kept"] == 54_044 and result.plan.span.report["skipped: unknown run time"] == 5671
    [row] = result.rows
    assert row["nb_jobs"] == row["nb_completed"] == 128 and row["nb_rejected"] == 0
    assert row["first_job"] % 128 == 0 and row["mean_bounded_slowdown"] >= 1.0


@pytest.fixture
def first_fit_strategy():
    """A start strategy registered for one test: every job that fits starts (no head-of-line blocking)."""
    from hdeeprm.decision.strategies import START_STRATEGIES, StartStrategy

    class FirstFit(StartStrategy):
        name = "test_first_fit"

        def start(self, ordered, place):
            return [job for job in ordered if place(job)]

    START_STRATEGIES.register(FirstFit.name, FirstFit)
    yield FirstFit.name
    del START_STRATEGIES._entries[FirstFit.name]


def test_a_registered_start_strategy_is_run_as_hdeeprm_launch_runs_it(quickstart, first_fit_strategy, tmp_path):
    policies = parse_policy_list([f"first-high_gflops+head_of_line,{first_fit_strategy}"])
    assert [p.label for p in policies] == ["first-high_gflops", f"first-high_gflops+{first_fit_strategy}"]
    [w] = plan(quickstart, nb_windows=2, length=200).selected("test")
    rows = evaluate(quickstart, policies, [w])
    opts = window_options(quickstart, w, policies[1])
    assert opts.start_strategy == first_fit_strategy
    m = launch(opts, outdir=tmp_path, quiet=True).metrics[0]
    assert {k: rows[1][k] for k in SUMMARY_KEYS} == {k: m[k] for k in SUMMARY_KEYS}
    # Starting every job that fits waits less than blocking behind the head of the queue.
    assert rows[1]["mean_waiting_time"] < rows[0]["mean_waiting_time"]


@pytest.mark.parametrize("name", ["lublin_agent", "sdsc_sp2_128", "sdsc_sp2_gaia", "kth_sp2_100"])
def test_the_shipped_evaluation_options_load_with_their_platform(name, shared):
    from hdeeprm.config.build import build_platform

    options = load_options(ROOT / "examples" / "evaluation" / f"{name}.json")
    assert build_platform(options).nb_cores == options.nb_resources
    assert Path(options.workload_file_path).is_file() and len(options.actions) == 4 - (name != "lublin_agent")


def test_labels_name_a_start_strategy_other_than_the_default(first_fit_strategy):
    [p] = parse_policies(f"{REINFORCE}", default_strategy=first_fit_strategy)
    assert p.label == f"{REINFORCE}+{first_fit_strategy}" and p.model is None
    [p] = parse_policies(f"{REINFORCE}:{QUICKSTART}+head_of_line", default_strategy=first_fit_strategy)
    assert p.label == f"{REINFORCE}:{QUICKSTART}" and p.strategy == "head_of_line"
    [p] = parse_policies("first-high_gflops", default_strategy=first_fit_strategy)
    assert p.label == f"first-high_gflops+{first_fit_strategy}"
