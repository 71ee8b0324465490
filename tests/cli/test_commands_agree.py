"""Issue 22, item 3: the commands agree on what they accept.

Each case feeds the input to the command's ``main`` and asserts the exact one-line message, the exit
code and that nothing was written. The GPU inputs are tiny files written here (two nodes, a few pods).
"""
from __future__ import annotations

import json
import time

import pytest

from hdeeprm.cli import check as check_cli
from hdeeprm.cli import evaluate as evaluate_cli
from hdeeprm.cli import gpu as gpu_cli
from hdeeprm.cli import launch as launch_cli
from hdeeprm.cli import platform as platform_cli
from hdeeprm.cli import sweep as sweep_cli
from hdeeprm.cli import visual as visual_cli
from hdeeprm.cli import workload as workload_cli
from tests.toy import ROOT, quickstart_sweep

QUICKSTART = ROOT / "examples" / "quickstart.json"
GAIA = ROOT / "platforms" / "gaia_mini.json"
NODES = "sn,cpu_milli,memory_mib,gpu,model\nn0,64000,262144,2,P100\nn1,96000,786432,8,V100M32\n"
POD_HEADER = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time," \
             "scheduled_time\n"
PODS = POD_HEADER + "p0,4000,8192,1,1000,,LS,Running,0,100,0\np1,4000,8192,2,1000,,LS,Running,10,300,10\n" \
                    "p2,4000,8192,0,0,,BE,Running,20,50,20\n"


def _listing(folder):
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def _one_line(capsys, rc, expected_rc, message):
    captured = capsys.readouterr()
    assert (rc, captured.err) == (expected_rc, message + "\n")


@pytest.fixture()
def gpu_inputs(tmp_path):
    """A two-node GPU cluster, a three-pod list and options of a GPU run on them."""
    nodes, pods = tmp_path / "nodes.csv", tmp_path / "pods.csv"
    nodes.write_text(NODES)
    pods.write_text(PODS)
    options = tmp_path / "gpu.json"
    options.write_text(json.dumps({"seed": 1, "platform_file_path": str(nodes), "workload_file_path": str(pods),
                                   "gpu": {"placement": "best_fit"}}))
    return nodes, pods, options


# ------------------------------------------------------------------ GPU options in check, evaluate, launch
def test_check_runs_the_gpu_checks_of_gpu_options(gpu_inputs, capsys):
    _, _, options = gpu_inputs
    assert check_cli.main([str(options)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == ["ok   check_gpu_platform", "ok   check_gpu_workload", "ok   check_gpu_jobs_fit"]


def test_check_fails_gpu_jobs_that_never_fit(gpu_inputs, tmp_path, capsys):
    _, pods, options = gpu_inputs
    pods.write_text(POD_HEADER + "big,4000,8192,16,1000,,LS,Running,0,100,0\n")
    assert check_cli.main([str(options)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "FAIL check_gpu_jobs_fit" and out[3].startswith("     - job big never fits: ")


def test_check_and_launch_take_a_gpu_type_library(gpu_inputs, tmp_path, capsys):
    _, _, options = gpu_inputs
    missing = tmp_path / "missing.json"
    for main, prog, extra in ((check_cli.main, "hdeeprm-check", []),
                              (launch_cli.main, "hdeeprm-launch", ["-q", "-o", str(tmp_path / "out")])):
        rc = main([str(options), "--gpu-library", str(missing), *extra])
        _one_line(capsys, rc, 2, f"{prog}: error: gpu type library not found ({missing})")
    assert not (tmp_path / "out").exists()
    rc = launch_cli.main([str(QUICKSTART), "--gpu-library", str(missing), "-q", "-o", str(tmp_path / "out")])
    _one_line(capsys, rc, 2, "hdeeprm-launch: error: --gpu-library applies to GPU runs (options with a 'gpu' block) "
                             f"({QUICKSTART})")
    assert not (tmp_path / "out").exists()


def test_evaluate_says_in_one_line_that_it_does_not_take_gpu_options(gpu_inputs, tmp_path, capsys):
    _, _, options = gpu_inputs
    rc = evaluate_cli.main([str(options), "-p", "first-high_gflops", "-o", str(tmp_path / "ev"), "-q"])
    _one_line(capsys, rc, 2, "hdeeprm-evaluate: error: hdeeprm-evaluate compares CPU policies on windows of an SWF "
                             "trace; options with a 'gpu' block are a timed GPU run: run it with hdeeprm-launch (or "
                             f"compare GPU placements with hdeeprm-gpu atc23) ({options})")
    assert not (tmp_path / "ev").exists()


@pytest.mark.parametrize("main, prog, extra", [(check_cli.main, "hdeeprm-check", []),
                                                (evaluate_cli.main, "hdeeprm-evaluate", ["-p", "first-random"])])
def test_a_node_list_as_a_cpu_platform_is_named(gpu_inputs, tmp_path, capsys, main, prog, extra):
    nodes, _, _ = gpu_inputs
    options = tmp_path / "cpu.json"
    options.write_text(json.dumps({"platform_file_path": str(nodes),
                                   "workload_file_path": str(ROOT / "workloads" / "lublin_500_100.swf")}))
    rc = main([str(options), *extra, *(["-o", str(tmp_path / "ev"), "-q"] if extra else [])])
    _one_line(capsys, rc, 2, f"{prog}: error: platform_file_path {nodes} is an openb node list (a GPU cluster): a CPU "
                             "run needs an HDeepRM platform JSON; for a timed GPU run add a 'gpu' block to the options "
                             f"({options})")


def test_platform_xml_needs_a_platform_json(gpu_inputs, tmp_path, capsys):
    nodes, _, _ = gpu_inputs
    out = tmp_path / "p.xml"
    rc = platform_cli.main(["xml", str(nodes), "-o", str(out)])
    _one_line(capsys, rc, 2, "hdeeprm-platform: error: hdeeprm-platform xml needs an HDeepRM platform JSON, got an "
                             "openb node list (a GPU cluster; SimGrid platforms describe CPU hosts): give a platform "
                             f"JSON, e.g. platforms/gaia_mini.json ({nodes})")
    assert not out.exists()


# ------------------------------------------------------------------ empty GPU runs warn
def test_an_empty_gpu_run_warns(gpu_inputs, tmp_path, capsys):
    _, pods, options = gpu_inputs
    data = json.loads(options.read_text())
    data["nb_jobs"] = 0
    options.write_text(json.dumps(data))
    assert launch_cli.main([str(options), "-q", "-o", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().err == (f"hdeeprm-launch: warning: the GPU workload selection is empty ({pods}, "
                                       "first_job 0, nb_jobs 0): the run has no job\n")
    assert json.loads((tmp_path / "out" / "out_metrics.json").read_text())["nb_jobs"] == 0


def test_a_gpu_run_on_a_platform_without_gpus_warns(gpu_inputs, tmp_path, capsys):
    _, pods, options = gpu_inputs
    nodes = tmp_path / "cpu_nodes.csv"
    nodes.write_text("sn,cpu_milli,memory_mib,gpu,model\nc0,64000,262144,0,\n")
    options.write_text(json.dumps({"seed": 1, "platform_file_path": str(nodes), "workload_file_path": str(pods),
                                   "gpu": {}}))
    assert launch_cli.main([str(options), "-q", "-o", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().err == (f"hdeeprm-launch: warning: the GPU platform {nodes} has no GPU: every job "
                                       "asking for one is rejected\n")


def test_nb_jobs_0_in_an_options_file_warns_as_the_readme_says(tmp_path, capsys):
    options = tmp_path / "o.json"
    trace = ROOT / "workloads" / "lublin_500_100.swf"
    options.write_text(json.dumps({"seed": 1, "nb_jobs": 0, "workload_file_path": str(trace),
                                   "platform_file_path": str(GAIA),
                                   "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops"}}}))
    assert launch_cli.main([str(options), "-q", "-o", str(tmp_path / "out")]) == 0
    assert capsys.readouterr().err == f"hdeeprm-launch: warning: no job kept from {trace}: nb_jobs is 0\n"


# ------------------------------------------------------------------ -o: a file where a folder is meant, and back
def _folder_commands(tmp_path, target):
    """(main, argv, message prefix) of every command writing into a folder, ``target`` as that folder."""
    return [
        (launch_cli.main, [str(QUICKSTART), "-q", "-o", target], "hdeeprm-launch: error: -o"),
        (evaluate_cli.main, [str(QUICKSTART), "-p", "first-random", "-q", "-o", target], "hdeeprm-evaluate: error: -o"),
        (sweep_cli.main, [str(quickstart_sweep(tmp_path)), "-q", "-o", target], "hdeeprm-sweep: error: -o"),
        (gpu_cli.main, ["atc23", str(tmp_path), "--output", target], "hdeeprm-gpu: error: --output"),
        (visual_cli.main, [str(tmp_path), "-o", target], "hdeeprm-visual: error: -o"),
    ]


def test_every_output_folder_that_is_a_file_is_refused_before_any_work(tmp_path, capsys):
    target = tmp_path / "afile"
    target.write_text("mine")
    for main, argv, prefix in _folder_commands(tmp_path, str(target)):
        before = _listing(tmp_path)
        rc = main(argv)
        _one_line(capsys, rc, 2, f"{prefix} {target}: must be a directory, got a file")
        assert _listing(tmp_path) == before and target.read_text() == "mine"


def test_an_output_folder_under_a_file_is_refused(tmp_path, capsys):
    parent = tmp_path / "afile"
    parent.write_text("mine")
    target = parent / "out"
    for main, argv, prefix in _folder_commands(tmp_path, str(target)):
        rc = main(argv)
        _one_line(capsys, rc, 2, f"{prefix} {target}: {parent} is a file, not a directory")


def test_every_output_file_that_is_a_folder_is_refused_before_any_work(tmp_path, capsys):
    folder = tmp_path / "adir"
    folder.mkdir()
    swf = ROOT / "workloads" / "lublin_500_100.swf"
    for main, argv, prog in [
        (platform_cli.main, ["xml", str(GAIA), "-o", str(folder)], "hdeeprm-platform"),
        (workload_cli.main, ["convert", str(swf), "-o", str(folder), "--platform", str(GAIA)], "hdeeprm-workload"),
        (workload_cli.main, ["generate", "-o", str(folder), "--nb-jobs", "5", "--nb-cores", "8"], "hdeeprm-workload"),
        (workload_cli.main, ["generate", "--model", "gpu", "-o", str(folder), "--nb-jobs", "5"], "hdeeprm-workload"),
    ]:
        rc = main(argv)
        _one_line(capsys, rc, 2, f"{prog}: error: -o {folder}: must be a file, got a directory")
        assert _listing(tmp_path) == ["adir"]


# ------------------------------------------------------------------ hdeeprm-gpu atc23
@pytest.mark.parametrize("argv, message", [
    (["--ratio", "nan"], "--ratio must be a finite number in (0, 10], got nan"),
    (["--ratio", "inf"], "--ratio must be a finite number in (0, 10], got inf"),
    (["--ratio", "0"], "--ratio must be a finite number in (0, 10], got 0.0"),
    (["--ratio", "11"], "--ratio must be a finite number in (0, 10], got 11.0"),
    (["--first-seed", "-1"], "--first-seed must be an integer >= 0, got -1"),
    (["--seeds", "0"], "--seeds must be an integer >= 1, got 0"),
])
def test_atc23_refuses_bad_numbers(gpu_inputs, tmp_path, capsys, argv, message):
    nodes, pods, _ = gpu_inputs
    rc = gpu_cli.main(["atc23", str(tmp_path), "--nodes", str(nodes), "--workload", str(pods), *argv,
                       "--output", str(tmp_path / "out")])
    _one_line(capsys, rc, 2, f"hdeeprm-gpu: error: {message}")
    assert capsys.readouterr().out == "" and not (tmp_path / "out").exists()


@pytest.mark.parametrize("rows, message", [
    ("p0,4000,8192,0,0,,BE,Running,0,100,0\n",
     "the pod list {pods} asks for no GPU (every pod has num_gpu 0 or gpu_milli 0): the ATC'23 experiment brings in "
     "GPU requests up to ratio x the GPUs; give a pod list with GPU pods"),
    ("", "the pod list {pods} has no pod"),
])
def test_atc23_refuses_pod_lists_it_cannot_run(gpu_inputs, tmp_path, capsys, rows, message):
    """A pod list asking for no GPU used to make the arrivals loop until memory ran out."""
    nodes, pods, _ = gpu_inputs
    pods.write_text(POD_HEADER + rows)
    start = time.monotonic()
    rc = gpu_cli.main(["atc23", str(tmp_path), "--nodes", str(nodes), "--workload", str(pods), "--seeds", "1"])
    _one_line(capsys, rc, 2, "hdeeprm-gpu: error: " + message.format(pods=pods))
    assert time.monotonic() - start < 10


# ------------------------------------------------------------------ generate --model gpu
@pytest.mark.parametrize("argv, message", [
    (["--model", "gpu", "--memory-gb", "500"],
     "--memory-gb 500: no GPU type has that much memory (the largest: {largest}), so the jobs needing it could run "
     "nowhere; lower --memory-gb or set --memory-share 0"),
    (["--model", "gpu", "--rate", "1e-300"],
     "--rate 1e-300 jobs per hour is too low for 5 jobs: their arrivals would pass the time bound (< 2**42 s (beyond "
     "it a double no longer resolves 1 ms)); raise --rate to at least 1.64e-08"),
    (["--model", "gpu", "--burst-median", "1e300", "--burst-probability", "1"],
     "--burst-median 1e+300 (--burst-probability 1) leaves 1.91e-299 burst-starting arrivals per hour at --rate 31.47: "
     "5 jobs could pass the time bound (< 2**42 s (beyond it a double no longer resolves 1 ms)); lower --burst-median "
     "or raise --rate"),
    (["--model", "gpu", "--burst-probability", "nan"],
     "--burst-probability must be a finite number in [0, 1], got nan"),
    (["--model", "gpu", "--type-share", "0.5"],
     "--type-share 0.5 needs the GPU types to pin jobs to: give --types"),
    (["--model", "gpu", "--nb-cores", "8"], "--nb-cores do(es) not apply to --model gpu: drop it"),
    (["--model", "gpu", "--job-types"], "--job-types do(es) not apply to --model gpu: drop it"),
    (["--nb-cores", "8", "--rate", "3", "--types", "V100M32"],
     "--rate, --types do(es) not apply to --model lublin: drop them"),
])
def test_generate_refuses_what_cannot_produce_the_trace(tmp_path, capsys, argv, message):
    from hdeeprm.platform.gpu_types import load_gpu_library

    largest = max(load_gpu_library().types.values(), key=lambda gpu: gpu.memory)
    out = tmp_path / "w.csv"
    rc = workload_cli.main(["generate", "-o", str(out), "--nb-jobs", "5", *argv])
    _one_line(capsys, rc, 2, "hdeeprm-workload: error: "
              + message.format(largest=f"{largest.name}, {largest.memory:g} GB"))
    assert _listing(tmp_path) == []


def test_generate_caps_bursts_at_the_jobs_asked(tmp_path, capsys):
    """A huge burst median still draws only the jobs asked (the burst is cut where the trace ends)."""
    out = tmp_path / "w.csv"
    assert workload_cli.main(["generate", "--model", "gpu", "-o", str(out), "--nb-jobs", "50", "--burst-median",
                              "1e6", "--burst-probability", "1", "--rate", "1e9"]) == 0
    assert len(out.read_text().splitlines()) == 51


def test_gpu_stats_memory_follows_the_jobs_not_the_time_span(tmp_path, capsys):
    """Two pods 10**11 s apart: a counter per minute of the span would need 13 GB."""
    pods = tmp_path / "pods.csv"
    pods.write_text(POD_HEADER + "a,1000,1024,1,1000,,LS,Running,0,100,0\n"
                                 "b,1000,1024,1,1000,,LS,Running,100000000000,100000000100,100000000000\n")
    assert workload_cli.main(["gpu-stats", str(pods), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["pods.csv"]["max_jobs_in_a_minute"] == 1


def test_an_output_file_in_a_missing_folder_is_refused_before_any_work(tmp_path, capsys):
    target = tmp_path / "nowhere" / "p.xml"
    rc = platform_cli.main(["xml", str(GAIA), "-o", str(target)])
    _one_line(capsys, rc, 2, f"hdeeprm-platform: error: -o {target}: the folder {target.parent} does not exist: "
                             "create it first")
    assert _listing(tmp_path) == []
