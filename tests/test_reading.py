"""Issue 22, items 1 and 2: every GPU text input follows the reading rules of hdeeprm/reading.py.

Each class of bad input (non-ASCII or oversized integers, non-finite or huge times, implausible counts,
bytes that are not UTF-8, corrupt gzip data, duplicate or empty names, unknown GPU models) is fed to the
command a user runs (in-process ``main``) and gets one line naming the file and line, exit code 2, and
nothing written. The real traces of ../shared/traces/gpu are the positive cases.
"""
from __future__ import annotations

import gzip
import json
import logging

import pytest

from hdeeprm.cli import gpu as gpu_cli
from hdeeprm.cli import launch as launch_cli
from hdeeprm.cli import platform as platform_cli
from hdeeprm.cli import workload as workload_cli
from hdeeprm.errors import OptionsError, WorkloadError
from hdeeprm.platform.gpu_types import DEFAULT_GPU_LIBRARY, GpuTypeLibrary
from hdeeprm.platform.openb import read_openb_nodes
from hdeeprm.reading import MAX_TIME_TEXT
from hdeeprm.workload.gpu_jobs import read_gpu_workload
from hdeeprm.workload.openb import POD_COLUMNS, read_openb_pods
from hdeeprm.workload.philly import read_philly
from tests.conftest import TRACES

GPU_TRACES = TRACES / "gpu"
needs_gpu_traces = pytest.mark.skipif(not GPU_TRACES.is_dir(), reason=f"no GPU traces at {GPU_TRACES}")

NODE_HEADER = "sn,cpu_milli,memory_mib,gpu,model\n"
POD_HEADER = ",".join(POD_COLUMNS) + "\n"
POD = "p1,1000,1024,1,500,,LS,Running,0,100,10"   # shares half a GPU, ran from 10 s to 100 s
PHILLY_HEADER = "timestamp,duration,num_gpus,gpu_time,cluster\n"
PHILLY = "2017-10-09 07:01:55,66.0,1,66.0,a"
TIME = f"a number >= 0 and {MAX_TIME_TEXT}"


def _one_line(capsys, rc: int, expected_rc: int, message: str) -> None:
    """Assert the exit code and that stderr is exactly ``message`` on one line (no traceback)."""
    err = capsys.readouterr().err
    assert (rc, err) == (expected_rc, message + "\n")


def _pod(**fields: str) -> str:
    """:data:`POD` with some columns replaced by name."""
    cells = POD.split(",")
    for key, value in fields.items():
        cells[POD_COLUMNS.index(key)] = value
    return ",".join(cells)


# --- openb node lists: hdeeprm-platform summary --------------------------------------------------

NODE_CASES = {
    "a node with 1,000 GPUs": ("n1,8000,65536,1000,T4",
                               "gpu must be an integer in 0..64 (GPUs of one node), got '1000'"),
    "1e20 GPUs": ("n1,8000,65536,1e20,T4", "gpu must be an integer in 0..64 (GPUs of one node), got '1e20'"),
    "a 0 MiB GPU node": ("n1,8000,0,2,T4",
                         "memory_mib must be an integer in 1..134217728 (MiB of one node), got '0'"),
    "a 20-digit integer": ("n1,12345678901234567890,65536,2,T4", "cpu_milli must be an integer in 1..10000000 "
                           "(thousandths of a core of one node), got '12345678901234567890'"),
    "an Arabic-Indic digit": ("n1,8000,65536,\u0662,T4",
                              "gpu must be an integer in 0..64 (GPUs of one node), got '\u0662'"),
    "a 5,000-digit integer": ("n1,8000,65536," + "9" * 5000 + ",T4",
                              f"gpu must be an integer in 0..64 (GPUs of one node), got '{'9' * 5000}'"),
    "an underscore": ("n1,8_000,65536,2,T4", "cpu_milli must be an integer in 1..10000000 "
                      "(thousandths of a core of one node), got '8_000'"),
    "an empty name": (" ,8000,65536,2,T4", "sn must not be empty"),
}


@pytest.mark.parametrize("row, message", NODE_CASES.values(), ids=NODE_CASES)
def test_bad_node_lists_get_one_line_from_platform_summary(tmp_path, capsys, row, message):
    path = tmp_path / "nodes.csv"
    path.write_text(NODE_HEADER + row + "\n", encoding="utf-8")
    rc = platform_cli.main(["summary", str(path)])
    _one_line(capsys, rc, 2, f"hdeeprm-platform: error: {message} ({path}:2)")


def test_node_list_bytes_that_are_not_utf8_are_located(tmp_path, capsys):
    path = tmp_path / "nodes.csv"
    path.write_bytes(NODE_HEADER.encode() + b"n1,8000,65536,2,T4\nn\xe9,8000,65536,2,T4\n")
    rc = gpu_cli.main(["nodes", str(path)])
    _one_line(capsys, rc, 2, f"hdeeprm-gpu: error: line is not UTF-8 text: byte 0xe9 at column 2; save the file "
                             f"as UTF-8 ({path}:3)")


def test_node_list_with_a_byte_order_mark_and_crlf_reads(tmp_path):
    path = tmp_path / "nodes.csv"
    path.write_bytes(b"\xef\xbb\xbf" + (NODE_HEADER + "n1,8000,65536,2,T4\n").replace("\n", "\r\n").encode())
    cluster = read_openb_nodes(path)
    assert (cluster.names, cluster.nb_gpus, cluster.models) == (("n1",), 2, ("T4",))


# --- openb pod lists and the Philly table: hdeeprm-workload gpu-stats -----------------------------

POD_CASES = {
    "an infinite time": (_pod(creation_time="inf"), f"creation_time must be {TIME}, got 'inf'"),
    "a time of 1e300 s": (_pod(deletion_time="1e300"), f"deletion_time must be {TIME}, got '1e300'"),
    "a negative time": (_pod(scheduled_time="-5"), f"scheduled_time must be {TIME}, got '-5'"),
    "1e20 GPUs": (_pod(num_gpu="1e20"), "num_gpu must be an integer in 0..64 (GPUs of one pod, all on one node), "
                  "got '1e20'"),
    "a 20-digit integer": (_pod(gpu_milli="99999999999999999999"),
                           "gpu_milli must be an integer in 0..9007199254740991, got '99999999999999999999'"),
    "a mis-cased GPU model": (_pod(gpu_spec="v100m16"), "gpu_spec must be a known gpu type, got 'v100m16'; did you "
                              f"mean 'V100M16'? (libraries searched: {DEFAULT_GPU_LIBRARY})"),
    "an unknown GPU model": (_pod(gpu_spec="T4|V100M61"), "gpu_spec must be a known gpu type, got 'V100M61'; did "
                             f"you mean 'V100M16'? (libraries searched: {DEFAULT_GPU_LIBRARY})"),
    "an empty GPU model": (_pod(gpu_spec="T4||A10"),
                           "gpu_spec must be GPU model names separated by '|', got 'T4||A10' (an empty name)"),
}


@pytest.mark.parametrize("row, message", POD_CASES.values(), ids=POD_CASES)
def test_bad_pod_lists_get_one_line_from_gpu_stats(tmp_path, capsys, row, message):
    path = tmp_path / "pods.csv"
    path.write_text(POD_HEADER + POD.replace("p1", "p0") + "\n" + row + "\n", encoding="utf-8")
    rc = workload_cli.main(["gpu-stats", str(path)])
    _one_line(capsys, rc, 2, f"hdeeprm-workload: error: {message} ({path}:3)")


def test_a_duplicate_pod_name_names_both_lines(tmp_path, capsys):
    path = tmp_path / "pods.csv"
    path.write_text(POD_HEADER + POD + "\n" + _pod(cpu_milli="2000") + "\n")
    rc = workload_cli.main(["gpu-stats", str(path)])
    _one_line(capsys, rc, 2, f"hdeeprm-workload: error: name must be unique, got 'p1' again (first on line 2) "
                             f"({path}:3)")


PHILLY_CASES = {
    "an infinite duration": ("2017-10-09 07:01:55,inf,1,66.0,a", f"duration must be {TIME}, got 'inf'"),
    "a duration of 1e300 s": ("2017-10-09 07:01:55,1e300,1,66.0,a", f"duration must be {TIME}, got '1e300'"),
    "NaN GPU time": ("2017-10-09 07:01:55,66,1,nan,a",
                     "gpu_time must be a number >= 0 and < 2**62 GPU-seconds (2**42 s x 2**20 GPUs), got 'nan'"),
    "a decimal GPU count": ("2017-10-09 07:01:55,66,2.0,132,a",
                            "num_gpus must be an integer in 0..1048576 (GPUs of one job), got '2.0'"),
    "1e20 GPUs": ("2017-10-09 07:01:55,66,100000000000000000000,66,a",
                  "num_gpus must be an integer in 0..1048576 (GPUs of one job), got '100000000000000000000'"),
    "a timestamp in Arabic-Indic digits": ("\u0662\u0660\u0661\u0667-10-09 07:01:55,66,1,66,a",
                                           "timestamp must be YYYY-MM-DD HH:MM:SS, got "
                                           "'\u0662\u0660\u0661\u0667-10-09 07:01:55'"),
}


@pytest.mark.parametrize("row, message", PHILLY_CASES.values(), ids=PHILLY_CASES)
def test_bad_philly_rows_get_one_line_from_gpu_stats(tmp_path, capsys, row, message):
    path = tmp_path / "philly.csv.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        f.write(PHILLY_HEADER + PHILLY + "\n" + row + "\n")
    rc = workload_cli.main(["gpu-stats", str(path)])
    _one_line(capsys, rc, 2, f"hdeeprm-workload: error: {message} ({path}:3)")


def test_corrupt_gzip_data_is_located(tmp_path, capsys):
    path = tmp_path / "philly.csv.gz"
    data = gzip.compress((PHILLY_HEADER + PHILLY + "\n").encode(), mtime=0)
    path.write_bytes(data[:-12])   # the compressed stream is cut: no end-of-stream marker
    rc = workload_cli.main(["gpu-stats", str(path)])
    _one_line(capsys, rc, 2, "hdeeprm-workload: error: corrupt gzip data: Compressed file ended before the "
                             f"end-of-stream marker was reached ({path}:2)")
    path.write_bytes(data[:10] + b"\x00" * 8 + data[18:])   # the deflate data is overwritten
    with pytest.raises(WorkloadError) as err:
        read_philly(path)
    assert str(err.value) == f"corrupt gzip data: Error -3 while decompressing data: invalid stored block lengths " \
                             f"({path}:1)"
    path.write_bytes(data[:-4] + b"\x00\x00\x00\x01")   # the trailer's length is wrong
    with pytest.raises(WorkloadError) as err:
        read_philly(path)
    assert str(err.value) == f"corrupt gzip data: Incorrect length of data produced ({path}:3)"


def test_latin1_pod_list_and_an_unclosed_quote_are_located(tmp_path, capsys):
    path = tmp_path / "pods.csv"
    path.write_bytes(POD_HEADER.encode() + _pod(qos="caf\xe9").encode("latin-1") + b"\n")
    rc = workload_cli.main(["gpu-stats", str(path)])
    _one_line(capsys, rc, 2, f"hdeeprm-workload: error: line is not UTF-8 text: byte 0xe9 at column 24; save the "
                             f"file as UTF-8 ({path}:2)")
    path.write_text(POD_HEADER + _pod(qos='"LS') + "\n")
    with pytest.raises(WorkloadError, match=r"^malformed CSV: unexpected end of data \(.*pods\.csv:2\)$"):
        read_openb_pods(path)


def test_a_bad_gpu_workload_writes_nothing(tmp_path, capsys):
    pods = tmp_path / "pods.csv"
    pods.write_text(POD_HEADER + _pod(deletion_time="inf") + "\n")
    nodes = tmp_path / "nodes.csv"
    nodes.write_text(NODE_HEADER + "n1,8000,65536,2,T4\n")
    options = tmp_path / "options.json"
    options.write_text(json.dumps({"seed": 1, "workload_file_path": str(pods), "platform_file_path": str(nodes),
                                   "gpu": {"placement": "best_fit"}}))
    out = tmp_path / "out"
    rc = launch_cli.main([str(options), "-o", str(out), "--quiet"])
    _one_line(capsys, rc, 2, f"hdeeprm-launch: error: deletion_time must be {TIME}, got 'inf' ({pods}:2)")
    assert not out.exists() or not any(out.iterdir())
    rc = gpu_cli.main(["atc23", str(tmp_path), "--workload", str(pods), "--nodes", str(nodes), "--output", str(out)])
    _one_line(capsys, rc, 2, f"hdeeprm-gpu: error: deletion_time must be {TIME}, got 'inf' ({pods}:2)")
    assert not out.exists() or not any(out.iterdir())


def test_a_repeated_swf_job_number_is_refused_by_stats(tmp_path, capsys):
    path = tmp_path / "t.swf"
    job = "1 0 -1 50 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1"
    path.write_text("; MaxProcs: 4\n" + job + "\n" + job.replace("1 0", "2 5", 1) + "\n" + job + "\n")
    rc = workload_cli.main(["stats", str(path)])
    _one_line(capsys, rc, 2, "hdeeprm-workload: error: field 1 (job number) must be unique, got 1 again (first on "
                             f"line 2) ({path}:4)")


# --- GPU type libraries and GPU platforms ----------------------------------------------------------

GOOD = {"vendor": "X", "arch": "Y", "form_factor": "PCIe", "fp64": 1.0, "fp64_tensor": None, "fp32": 2.0,
        "tf32": None, "fp16": 8.0, "memory": 8, "mem_bw": 300, "tdp": 100, "idle_power": 10, "idle_estimate": True,
        "mig_instances": 0, "sharing": ["time-slicing"], "interconnect": "PCIe", "aliases": [],
        "_source": "vendor datasheet"}


def _gpu_library(tmp_path, entries):
    path = tmp_path / "gpus.json"
    path.write_text(json.dumps(entries, indent=1))
    return path


def test_gpu_type_aliases_that_shadow_a_name_or_move_warn(tmp_path, capsys):
    path = _gpu_library(tmp_path, {"My T4": {**GOOD, "aliases": ["T4", "V100M16"]}})
    assert gpu_cli.main(["types", "--library", str(path)]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [f"hdeeprm-gpu: warning: alias 'T4' of gpu type 'My T4' ({path}:2) is the name of gpu type 'T4': "
                   "the name wins, the alias is never used",
                   f"hdeeprm-gpu: warning: alias 'V100M16' moves from gpu type 'V100 SXM2 16GB' to 'My T4' ({path}:2)"]


def test_a_gpu_type_named_like_an_alias_warns(tmp_path, caplog):
    path = _gpu_library(tmp_path, {"P100": GOOD})
    with caplog.at_level(logging.WARNING, logger="hdeeprm"):
        library = GpuTypeLibrary.load([path])
    assert caplog.messages == [f"gpu type 'P100' ({path}:2) is also an alias of gpu type 'P100 PCIe 16GB': the "
                               "name wins, so 'P100' now means the new type"]
    assert library["P100"].file == str(path)


@pytest.mark.parametrize("entries, message", [
    ({" ": GOOD}, "gpu type names must not be empty, got ' '"),
    ({"X": {**GOOD, "aliases": [""]}}, "gpu type 'X': aliases must be a list of non-empty names, got ['']"),
])
def test_empty_gpu_type_names_are_refused(tmp_path, capsys, entries, message):
    path = _gpu_library(tmp_path, entries)
    rc = gpu_cli.main(["types", "--library", str(path)])
    _one_line(capsys, rc, 2, f"hdeeprm-gpu: error: {message} ({path}:2)")


def _gpu_platform(tmp_path, gpus, capacity=64):
    library = tmp_path / "lib.json"
    library.write_text(json.dumps({"GPU box": {"processors": [{"type": "Xeon E5-2660", "number": 2}],
                                               "memory": {"capacity": capacity}, "gpus": gpus}}))
    platform = tmp_path / "p.json"
    platform.write_text(json.dumps({"clusters": [{"nodes": [{"type": "GPU box", "number": 1}]}]}))
    return platform, library


def test_implausible_gpu_node_types_are_refused(tmp_path, capsys):
    platform, library = _gpu_platform(tmp_path, [{"type": "T4", "number": 10 ** 12}])
    rc = platform_cli.main(["summary", str(platform), "--library", str(library)])
    _one_line(capsys, rc, 2, "hdeeprm-platform: error: node type 'GPU box': gpus[0].number must be an integer in "
                             f"1..64 (GPUs of one node), got 1000000000000 ({library}:1)")
    platform, library = _gpu_platform(tmp_path, [{"type": "T4", "number": 2}], capacity=0.0001)
    rc = platform_cli.main(["summary", str(platform), "--library", str(library)])
    _one_line(capsys, rc, 2, "hdeeprm-platform: error: node type 'GPU box': memory.capacity must give 1..134217728 "
                             f"MiB (MiB of one node) and its processors at most 10000 cores, got 0 MiB and 16 cores "
                             f"({library})")


# --- the real traces read as before ------------------------------------------------------------------

@pytest.mark.slow
@needs_gpu_traces
def test_real_gpu_traces_read_through_the_rules():
    cluster = read_openb_nodes(GPU_TRACES / "openb_node_list_all_node.csv")
    assert (cluster.nb_nodes, cluster.nb_gpus) == (1523, 6212)
    spec = read_openb_pods(GPU_TRACES / "openb_pod_list_gpuspec10.csv")   # every model checked against the library
    assert (len(spec), sum(1 for s in spec.gpu_spec if s)) == (8152, 8152 - 7420)
    timed = read_gpu_workload(GPU_TRACES / "openb_pod_list_default.csv")
    assert len(timed) + sum(timed.report["skipped"].values()) == 8152 and timed.duration.max() < 2 ** 42
    philly = read_gpu_workload(GPU_TRACES / "philly-derived.csv.gz")
    assert (len(philly), philly.report["skipped"]) == (82247, {"blank line": 1})
    assert philly.num_gpu.max() == 128 and float(philly.duration.max()) == 4628226.0


# --- the JSON inputs take their text through the same rules ------------------------------------------

def test_json_inputs_skip_a_bom_and_locate_bytes_that_are_not_utf8(tmp_path, capsys):
    from hdeeprm.config.options import load_options
    from hdeeprm.platform.library import read_json
    from hdeeprm.workload.batsim_json import read_batsim_workload

    workload = tmp_path / "w.json"
    body = {"nb_res": 4, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "d"}],
            "profiles": {"d": {"type": "delay", "delay": 10}}}
    workload.write_bytes(b"\xef\xbb\xbf" + json.dumps(body).encode())
    assert [(job.subtime, job.profile.delay) for job in read_batsim_workload(workload).jobs] == [(0, 10)]
    platform = tmp_path / "p.json"
    platform.write_bytes(b"\xef\xbb\xbf{\n \"clusters\": []\n}\n")
    assert read_json(platform, "platform file") == {"clusters": []}
    options = tmp_path / "o.json"
    options.write_bytes(b'{\n "seed": 7,\n "workload_file_path": "caf\xe9.swf"\n}\n')
    with pytest.raises(OptionsError) as err:
        load_options(options)
    assert str(err.value) == f"line is not UTF-8 text: byte 0xe9 at column 28; save the file as UTF-8 ({options}:3)"


def test_a_batsim_workload_giving_a_key_twice_is_refused_with_its_line(tmp_path, capsys):
    from hdeeprm.cli import check as check_cli
    from tests.test_bad_input import _options

    workload = tmp_path / "w.json"
    workload.write_text('{"nb_res": 4,\n "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "d",\n'
                        ' "subtime": 50}],\n "profiles": {"d": {"type": "delay", "delay": 10}}}\n')
    rc = check_cli.main([_options(tmp_path, str(tmp_path / "unused.swf")), "-cw", str(workload)])
    _one_line(capsys, rc, 2, "hdeeprm-check: error: key 'subtime' must appear once in its object, got it twice (JSON "
                             f"would keep the last silently) ({workload}:3)")
