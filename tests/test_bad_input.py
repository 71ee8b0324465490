"""Issue 13: every bad input gets one clear line on stderr, the documented exit code, no traceback.

Each case feeds the input to the command a user would run (in-process ``main``) and asserts
the exact message, the exit code and that nothing else is printed on stderr.
"""
from __future__ import annotations

import gzip
import json

import pytest

from hdeeprm.cli import batsim as batsim_cli
from hdeeprm.cli import check as check_cli
from hdeeprm.cli import launch as launch_cli
from hdeeprm.cli import workload as workload_cli
from tests.toy import AGENTS, ROOT, TOY_OPTIONS, TOY_PLATFORM, TOY_WORKLOAD

GAIA_MINI = ROOT / "platforms" / "gaia_mini.json"
#: An SWF job line: job 1 at t = 0, 50 s on 1 processor.
JOB = "1 0 -1 50 1 -1 -1 1 -1 -1 1 -1 -1 -1 -1 -1 -1 -1"


def _job(**fields: str) -> str:
    """:data:`JOB` with some fields replaced (``f1="2"`` sets field 1)."""
    tokens = JOB.split()
    for key, value in fields.items():
        tokens[int(key[1:]) - 1] = value
    return " ".join(tokens)


def _options(tmp_path, workload: str, **extra) -> str:
    """A classic run's options file on gaia_mini (104 cores) reading ``workload``."""
    path = tmp_path / "options.json"
    path.write_text(json.dumps({"seed": 7, "workload_file_path": workload, "platform_file_path": str(GAIA_MINI),
                                "pybatsim": {"agent": {"type": "CLASSIC", "policy_pair": "first-high_gflops"}},
                                **extra}))
    return str(path)


def _one_line(capsys, rc: int, expected_rc: int, message: str) -> None:
    """Assert the exit code and that stderr is exactly ``message`` on one line (no traceback)."""
    err = capsys.readouterr().err
    assert (rc, err) == (expected_rc, message + "\n")


# --- SWF traces: launch, check and convert all refuse the same line with the same words ----------

SWF_CASES = {
    "processors beyond 2**53": ([_job(f8="1e30"), _job(f1="2")],
                                "field 8 (requested processors) must be an integer <= 9007199254740991 "
                                "(2**53 - 1), got '1e30' ({swf}:1)"),
    "job number beyond 2**53": ([_job(f1="1e23")],
                                "field 1 (job number) must be an integer <= 9007199254740991 (2**53 - 1), "
                                "got '1e23' ({swf}:1)"),
    "submit time a double cannot resolve": ([JOB, _job(f1="2", f2="1e300")],
                                            "field 2 (submit time) must be < 2**42 s (beyond it a double no "
                                            "longer resolves 1 ms), got '1e300' ({swf}:2)"),
    "duplicate job number": ([JOB, _job(f2="5")],
                             "field 1 (job number) must be unique, got 1 again (first on line 1) ({swf}:2)"),
    "plus sign": ([_job(f1="+2")], "field 1 (job number) must be an integer, got '+2' ({swf}:1)"),
    "underscore": ([_job(f4="5_0")], "field 4 (run time) must be a number, got '5_0' ({swf}:1)"),
    "non-ASCII digit": ([_job(f5="\u0663")], "field 5 (allocated processors) must be an integer, got "
                                             "'\u0663' ({swf}:1)"),
}


@pytest.mark.parametrize("front", ["hdeeprm-launch", "hdeeprm-check", "hdeeprm-workload"])
@pytest.mark.parametrize("case", list(SWF_CASES))
def test_bad_swf_lines_are_one_line_errors(tmp_path, capsys, case, front):
    lines, message = SWF_CASES[case]
    swf = tmp_path / "t.swf"
    swf.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    if front == "hdeeprm-launch":
        rc = launch_cli.main([_options(tmp_path, str(swf)), "-q", "-o", str(tmp_path / "out")])
    elif front == "hdeeprm-check":
        rc = check_cli.main([_options(tmp_path, str(swf))])
    else:
        rc = workload_cli.main(["convert", str(swf), "-o", str(tmp_path / "w.json"), "--platform",
                                str(GAIA_MINI)])
    _one_line(capsys, rc, 2, f"{front}: error: " + message.format(swf=swf))
    assert not (tmp_path / "w.json").exists() and not (tmp_path / "out" / "out_jobs.csv").exists()


def test_a_utf8_byte_order_mark_is_accepted(tmp_path, capsys):
    """The BOM of a file saved by some editors is skipped: the header is read, not taken as a job."""
    swf = tmp_path / "bom.swf"
    swf.write_bytes(b"\xef\xbb\xbf; MaxProcs: 8\n" + JOB.encode() + b"\n")
    rc = workload_cli.main(["convert", str(swf), "-o", str(tmp_path / "w.json"), "--reference-speed", "1e9"])
    out, err = capsys.readouterr()
    assert (rc, err) == (0, "") and out.startswith("8 cores, from the trace header's MaxProcs\n")
    assert [job["id"] for job in json.loads((tmp_path / "w.json").read_text())["jobs"]] == ["1"]


def test_a_count_within_2_53_is_flagged_as_too_large_not_wrapped(tmp_path, capsys):
    """1e15 processors fit a 64-bit integer: the job is kept, flagged and rejected at submission."""
    swf = tmp_path / "t.swf"
    swf.write_text(_job(f8="1000000000000000") + "\n" + _job(f1="2") + "\n")
    out = tmp_path / "out"
    assert launch_cli.main([_options(tmp_path, str(swf)), "-q", "-o", str(out)]) == 0
    rows = (out / "out_jobs.csv").read_text().splitlines()[1:]
    assert [row.split(",")[:8:7] for row in rows] == [["1", "REJECTED"], ["2", "COMPLETED_SUCCESSFULLY"]]
    assert rows[0].split(",")[4] == "1000000000000000"
    assert check_cli.main([_options(tmp_path, str(swf))]) == 1
    assert ("- job 1 requests 1000000000000000 cores, the platform has 104: it will be rejected"
            in capsys.readouterr().out)


# --- Batsim JSON workloads ------------------------------------------------------------------------

def _batsim_json(tmp_path, subtime) -> str:
    path = tmp_path / "w.json"
    path.write_text(json.dumps({"nb_res": 104, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "d"},
                                                          {"id": "2", "subtime": subtime, "res": 1, "profile": "d"}],
                                "profiles": {"d": {"type": "delay", "delay": 10}}}))
    return str(path)


@pytest.mark.parametrize("front", ["hdeeprm-launch", "hdeeprm-check"])
def test_a_binary_batsim_workload_is_named(tmp_path, capsys, front):
    path = tmp_path / "binary.json"
    path.write_bytes(b"{\xff\xfe\x00\x01")
    options = _options(tmp_path, str(tmp_path / "unused.swf"))
    main = launch_cli.main if front == "hdeeprm-launch" else check_cli.main
    rc = main([options, "-cw", str(path)] + (["-q", "-o", str(tmp_path / "out")] if front == "hdeeprm-launch" else []))
    _one_line(capsys, rc, 2, f"{front}: error: line is not UTF-8 text: byte 0xff at column 2; save the file as UTF-8 "
                             f"({path}:1)")


def test_a_batsim_subtime_a_double_cannot_resolve_is_refused(tmp_path, capsys):
    workload = _batsim_json(tmp_path, 1e300)
    rc = launch_cli.main([_options(tmp_path, workload), "-q", "-o", str(tmp_path / "out")])
    _one_line(capsys, rc, 2, "hdeeprm-launch: error: job 1 (id '2'): field 'subtime' must be < 2**42 s (beyond it "
                             f"a double no longer resolves 1 ms), got 1e+300 ({workload})")


def test_an_upper_case_json_suffix_is_a_batsim_workload(tmp_path, capsys):
    workload = tmp_path / "W.JSON"
    workload.write_text(open(_batsim_json(tmp_path, 5)).read())
    out = tmp_path / "out"
    assert launch_cli.main([_options(tmp_path, str(workload)), "-q", "-o", str(out)]) == 0
    assert len((out / "out_jobs.csv").read_text().splitlines()) == 3


# --- options ---------------------------------------------------------------------------------------

@pytest.mark.parametrize(("seed", "message"), [(-1, "seed: -1 is less than the minimum of 0"),
                                               (7.5, "seed: 7.5 is not of type 'integer'"),
                                               ("7", "seed: '7' is not of type 'integer'")])
def test_bad_seeds_are_one_line_errors(tmp_path, capsys, seed, message):
    swf = tmp_path / "t.swf"
    swf.write_text(JOB + "\n")
    options = _options(tmp_path, str(swf), seed=seed)
    rc = launch_cli.main([options, "-q", "-o", str(tmp_path / "out")])
    _one_line(capsys, rc, 2, f"hdeeprm-launch: error: {message} ({options})")


def test_an_integral_float_seed_is_that_integer(tmp_path):
    swf = tmp_path / "t.swf"
    swf.write_text(JOB + "\n")
    assert launch_cli.main([_options(tmp_path, str(swf), seed=7.0), "-q", "-o", str(tmp_path / "out")]) == 0
    seed = json.loads((tmp_path / "out" / "run.json").read_text())["options"]["seed"]
    assert (seed, type(seed)) == (7, int)


# --- agents ------------------------------------------------------------------------------------------

BAD_AGENT = '''from hdeeprm.agents import Agent


class Bad(Agent):
    def __init__(self, gamma, hidden, action_size, observation_size):
        pass

    def decide(self, observation):
        return {decide}

    def rewarded(self, reward):
        {rewarded}

    def end_episode(self):
        {end_episode}

    def fail(self):
        raise ValueError("boom")
'''


@pytest.mark.parametrize("method", ["decide", "rewarded", "end_episode"])
def test_an_agent_that_raises_is_named_with_its_own_frames(tmp_path, capsys, method):
    body = {"decide": "0", "rewarded": "pass", "end_episode": "return None"}
    body[method] = ("self.fail()" if method == "decide" else "return self.fail()")
    agent = tmp_path / "agent.py"
    agent.write_text(BAD_AGENT.format(**body))
    rc = launch_cli.main([str(agent), str(TOY_OPTIONS), "-q", "-o", str(tmp_path / "out")])
    err = capsys.readouterr().err.splitlines()
    call_line = BAD_AGENT.splitlines().index({"decide": "    def decide(self, observation):",
                                              "rewarded": "    def rewarded(self, reward):",
                                              "end_episode": "    def end_episode(self):"}[method]) + 2
    raise_line = len(BAD_AGENT.splitlines())
    assert rc == 3
    assert err[0] == f"hdeeprm-launch: error: {agent}:{raise_line}: Bad.{method}() raised ValueError: boom"
    assert err[1] == "Traceback of the agent (most recent call last):"
    frames = [line for line in err[2:] if line.startswith("  File ")]
    assert frames == [f'  File "{agent}", line {call_line}, in {method}',
                      f'  File "{agent}", line {raise_line}, in fail']


@pytest.mark.parametrize("value", ["1.9", "True", '"1"'])
def test_an_agent_returning_a_non_integer_is_refused(tmp_path, capsys, value):
    agent = tmp_path / "agent.py"
    agent.write_text(BAD_AGENT.format(decide=value, rewarded="pass", end_episode="return None"))
    rc = launch_cli.main([str(agent), str(TOY_OPTIONS), "-q", "-o", str(tmp_path / "out")])
    shown = {"1.9": "1.9", "True": "True", '"1"': "'1'"}[value]
    _one_line(capsys, rc, 3, f"hdeeprm-launch: error: Bad.decide() must be an integer in [0, 4], got {shown}")


# --- checkpoints (-im, -om) ------------------------------------------------------------------------

def _reinforce(tmp_path, *extra: str) -> int:
    return launch_cli.main([str(AGENTS / "reinforce.py"), str(TOY_OPTIONS), "-q", "-o", str(tmp_path / "out"),
                            *extra])


@pytest.fixture(scope="module")
def good_checkpoint(tmp_path_factory) -> bytes:
    """The bytes of a checkpoint of the toy's REINFORCE agent."""
    pytest.importorskip("torch")
    tmp = tmp_path_factory.mktemp("model")
    assert _reinforce(tmp, "-om", str(tmp / "m.pt")) == 0
    return (tmp / "m.pt").read_bytes()


@pytest.mark.parametrize(("kind", "why"), [
    ("empty", "the file is empty"),
    ("truncated", "not an archive written by torch.save (truncated, or another kind of file)"),
    ("text", "not an archive written by torch.save (truncated, or another kind of file)"),
    ("foreign", "no 'hdeeprm-checkpoint' manifest (a torch.save file of something else)"),
    ("directory", "it is a directory"),
])
def test_a_bad_inmodel_is_not_an_hdeeprm_checkpoint(tmp_path, capsys, good_checkpoint, kind, why):
    import torch

    path = tmp_path / "in.pt"
    if kind == "directory":
        path.mkdir()
    elif kind == "foreign":
        torch.save([1, 2], path)
    else:
        path.write_bytes({"empty": b"", "truncated": good_checkpoint[:len(good_checkpoint) // 2],
                          "text": b"not a checkpoint"}[kind])
    _one_line(capsys, _reinforce(tmp_path, "-im", str(path)), 3,
              f"hdeeprm-launch: error: not an HDeepRM checkpoint ({path}): {why}")


def test_a_corrupt_inmodel_is_one_line(tmp_path, capsys, good_checkpoint):
    path = tmp_path / "in.pt"
    data = bytearray(good_checkpoint)
    data[200:400] = bytes(range(200))
    path.write_bytes(bytes(data))
    rc = _reinforce(tmp_path, "-im", str(path))
    err = capsys.readouterr().err
    assert rc == 3 and err.count("\n") == 1
    assert err.startswith(f"hdeeprm-launch: error: not an HDeepRM checkpoint ({path}): torch.load cannot read it")


@pytest.mark.parametrize("where", ["under a file", "a directory"])
def test_an_unwritable_outmodel_fails_before_training(tmp_path, capsys, where):
    blocker = tmp_path / "blocker"
    if where == "under a file":
        blocker.write_text("")
        path = blocker / "m.pt"
        why = f"{blocker} is not a directory"
    else:
        blocker.mkdir()
        path = blocker
        why = "it is a directory"
    rc = _reinforce(tmp_path, "-om", str(path))
    _one_line(capsys, rc, 2, f"hdeeprm-launch: error: -om {path}: cannot write the checkpoint there ({why})")
    assert not (tmp_path / "out" / "episodes.csv").exists()


# --- other commands ----------------------------------------------------------------------------------

def _gzip_trace(tmp_path, damage: str):
    data = gzip.compress((JOB + "\n").encode() * 200, mtime=0)
    if damage == "truncated":
        data = data[:20]
    elif damage == "bad header":
        data = b"\x1f\x8b" + b"\x00" * 20
    path = tmp_path / "t.swf.gz"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(("damage", "why"), [
    ("truncated", "Compressed file ended before the end-of-stream marker was reached"),
    ("bad header", "Unknown compression method"),
])
def test_stats_on_a_corrupt_gzip_names_the_fault(tmp_path, capsys, damage, why):
    path = _gzip_trace(tmp_path, damage)
    rc = workload_cli.main(["stats", str(path)])
    _one_line(capsys, rc, 2, f"hdeeprm-workload: error: cannot read the file: {why} ({path})")


def test_batsim_server_refuses_a_malformed_endpoint(tmp_path, capsys):
    pytest.importorskip("zmq")
    from hdeeprm.platform import load_platform, write_simgrid_platform

    xml = tmp_path / "p.xml"
    write_simgrid_platform(load_platform(TOY_PLATFORM), xml)
    rc = batsim_cli.main(["-p", str(xml), "-w", str(TOY_WORKLOAD), "-s", "notanendpoint", "--timeout", "5"])
    _one_line(capsys, rc, 2, "hdeeprm-batsim: error: socket endpoint must be a ZeroMQ endpoint such as "
                             "'tcp://127.0.0.1:28000', got 'notanendpoint' (Invalid argument)")


# --- accepted but questionable: decided (README "Options file" and "Running" sections) --------------

EMPTY_CASES = {
    "empty trace": ("", [], "the trace has no job lines"),
    "header only": ("; MaxProcs: 4\n", [], "the trace has no job lines"),
    "first_job beyond the end": (f"{JOB}\n{_job(f1='2')}\n", ["--first-job", "5"],
                                 "first_job = 5 passes over all its 2 usable jobs"),
    "every job skipped": (f"{_job(f2='-1')}\n{_job(f1='2', f5='0', f8='0')}\n{_job(f1='3', f4='-1')}\n", [],
                          "every one of its 3 records is skipped (1 unknown submit time, 1 no processor count, "
                          "1 unknown run time)"),
    "time window": (f"{JOB}\n", ["--time-window", "100", "200"],
                    "none of its 1 records has a submit time (SWF field 2) in the time window [100, 200) s"),
    "nb_jobs 0": (f"{JOB}\n", ["--nb-jobs", "0"], "nb_jobs is 0"),
}


@pytest.mark.parametrize("case", list(EMPTY_CASES))
def test_an_empty_selection_warns_naming_the_filter(tmp_path, capsys, case):
    text, flags, why = EMPTY_CASES[case]
    swf = tmp_path / "t.swf"
    swf.write_text(text)
    rc = workload_cli.main(["convert", str(swf), "-o", str(tmp_path / "w.json"), "--nb-cores", "4",
                            "--reference-speed", "1e9", *flags])
    _one_line(capsys, rc, 0, f"hdeeprm-workload: warning: no job kept from {swf}: {why}")


def test_a_run_of_an_empty_trace_warns(tmp_path, capsys):
    swf = tmp_path / "t.swf"
    swf.write_text("; MaxProcs: 104\n")
    rc = launch_cli.main([_options(tmp_path, str(swf)), "-q", "-o", str(tmp_path / "out")])
    _one_line(capsys, rc, 0, f"hdeeprm-launch: warning: no job kept from {swf}: the trace has no job lines")


def test_a_key_given_twice_in_the_options_is_refused_with_its_line(tmp_path, capsys):
    options = tmp_path / "o.json"
    options.write_text('{"seed": 7,\n "pybatsim": {"agent": {"type": "CLASSIC",\n'
                       '                          "type": "LEARNING"}},\n "seed": 8}\n')
    rc = launch_cli.main([str(options), "-q", "-o", str(tmp_path / "out")])
    _one_line(capsys, rc, 2, "hdeeprm-launch: error: key 'type' must appear once in its object, got it twice "
                             f"(JSON would keep the last silently) ({options}:3)")


def test_options_that_are_not_utf8_are_one_line(tmp_path, capsys):
    options = tmp_path / "o.json"
    options.write_bytes(b'{"seed": 7\xff}')
    rc = launch_cli.main([str(options), "-q", "-o", str(tmp_path / "out")])
    _one_line(capsys, rc, 2, "hdeeprm-launch: error: line is not UTF-8 text: byte 0xff at column 11; save the file as "
                             f"UTF-8 ({options}:1)")


def test_policy_pair_replacing_a_selection_warns(tmp_path, capsys):
    swf = tmp_path / "t.swf"
    swf.write_text(JOB + "\n")
    options = _options(tmp_path, str(swf))
    data = json.loads(open(options).read())
    data["pybatsim"]["env"] = {"actions": {"selection": [{"shortest": ["low_power", "high_gflops"]}]}}
    open(options, "w").write(json.dumps(data))
    rc = launch_cli.main([options, "-q", "-o", str(tmp_path / "out")])
    _one_line(capsys, rc, 0, "hdeeprm-launch: warning: pybatsim.agent.policy_pair 'first-high_gflops' replaces "
                             f"the 2 pair(s) of pybatsim.env.actions.selection ({options})")


def test_a_batsim_nb_res_unlike_the_platform_warns(tmp_path, capsys):
    workload = tmp_path / "w.json"
    workload.write_text(json.dumps({"nb_res": 999, "jobs": [{"id": "1", "subtime": 0, "res": 1, "profile": "d"}],
                                    "profiles": {"d": {"type": "delay", "delay": 10}}}))
    rc = launch_cli.main([_options(tmp_path, str(workload)), "-q", "-o", str(tmp_path / "out")])
    _one_line(capsys, rc, 0, f"hdeeprm-launch: warning: the workload's nb_res (999) differs from the platform's "
                             f"104 cores ({workload}): the platform's cores are simulated, jobs larger than the "
                             "platform are rejected at submission")


def test_a_nan_loss_warns_once(tmp_path, capsys):
    agent = tmp_path / "agent.py"
    agent.write_text(BAD_AGENT.format(decide="0", rewarded="pass", end_episode="return float('nan')"))
    out = tmp_path / "out"
    rc = launch_cli.main([str(agent), str(TOY_OPTIONS), "-q", "-nr", "3", "-o", str(out)])
    _one_line(capsys, rc, 0, "hdeeprm-launch: warning: episode 0: the training loss is nan (the agent diverged: "
                             "try a lower lr); written to losses.log as is")
    assert (out / "losses.log").read_text() == "nan\nnan\nnan\n"


@pytest.mark.parametrize(("text", "message"), [
    ('{"seed": NaN}', "numbers must be finite JSON numbers (RFC 8259), got NaN"),
    ('{"pybatsim": {"agent": {"lr": Infinity}}}', "numbers must be finite JSON numbers (RFC 8259), got Infinity"),
    ('{"workload": {"default_mem": 1e400}}', "numbers must fit a double, got 1e400"),
    ('{"seed": 18446744073709551616}', "seed: 18446744073709551616 is greater than the maximum of "
                                       "18446744073709551615"),
    ('{"workload_file_path": "a\\u0000b"}', "workload_file_path must be a file path, got 'a\\x00b' (it holds a "
                                            "NUL character)"),
])
def test_options_found_by_the_property_test(tmp_path, capsys, text, message):
    options = tmp_path / "o.json"
    options.write_text(text)
    rc = launch_cli.main([str(options), "-q", "-o", str(tmp_path / "out")])
    _one_line(capsys, rc, 2, f"hdeeprm-launch: error: {message} ({options})")


def test_an_outdir_that_is_a_file_is_named(tmp_path, capsys):
    swf = tmp_path / "t.swf"
    swf.write_text(JOB + "\n")
    (tmp_path / "afile").write_text("")
    rc = launch_cli.main([_options(tmp_path, str(swf)), "-q", "-o", str(tmp_path / "afile")])
    _one_line(capsys, rc, 2, f"hdeeprm-launch: error: -o {tmp_path / 'afile'}: must be a directory, got a file")


def test_convert_into_a_missing_folder_names_the_output_not_a_temporary_file(tmp_path, capsys):
    swf = tmp_path / "t.swf"
    swf.write_text(JOB + "\n")
    out = tmp_path / "nodir" / "w.json"
    rc = workload_cli.main(["convert", str(swf), "-o", str(out), "--nb-cores", "4", "--reference-speed", "1e9"])
    _one_line(capsys, rc, 2, f"hdeeprm-workload: error: -o {out}: the folder {out.parent} does not exist: create it "
                             "first")


@pytest.mark.parametrize(("flags", "message"), [
    (["--reference-speed", "inf"], "argument --reference-speed: must be a finite number > 0, got 'inf'"),
    (["--reference-speed", "1e400"], "argument --reference-speed: must be a finite number > 0, got '1e400'"),
    (["--reference-speed", "1e9", "--default-mem", "inf"],
     "argument --default-mem: must be a finite number >= 0, got 'inf'"),
    (["--reference-speed", "1e9", "--mem-bw-choices", "nan", "4"],
     "argument --mem-bw-choices: must be a finite number >= 0, got 'nan'"),
    (["--reference-speed", "1e9", "--seed", "-5"], "argument --seed: must be an integer >= 0, got '-5'"),
])
def test_convert_refuses_non_finite_or_negative_flags(tmp_path, capsys, flags, message):
    """Before, inf and NaN reached the JSON as Infinity/NaN (not JSON) and a negative seed a traceback."""
    swf = tmp_path / "t.swf"
    swf.write_text(JOB + "\n")
    rc = workload_cli.main(["convert", str(swf), "-o", str(tmp_path / "w.json"), "--nb-cores", "4", *flags])
    err = capsys.readouterr().err
    assert (rc, err.splitlines()[-1]) == (2, f"hdeeprm-workload convert: error: {message}")
    assert "Traceback" not in err and not (tmp_path / "w.json").exists()


@pytest.mark.parametrize(("name", "content", "message"), [
    ("probs.json", b"{\n", "malformed JSON: Expecting property name enclosed in double quotes (column 1) ({path}:2)"),
    ("probs.json", b"[1, 2]", "'mean_per_episode' must be a non-empty list of equal-length lists of numbers ({path})"),
    ("probs.json", b'{"actions": ["a"], "mean_per_episode": [[0.5, 0.5]]}',
     "'actions' must name the 2 actions of 'mean_per_episode', got ['a'] ({path})"),
    ("rewards.log", b"1.5\n\xff\xfe\n", "line must be UTF-8 text ({path}:2)"),
])
def test_visual_names_malformed_inputs(tmp_path, capsys, name, content, message):
    from hdeeprm.cli import visual as visual_cli

    (tmp_path / name).write_bytes(content)
    rc = visual_cli.main([str(tmp_path)])
    _one_line(capsys, rc, 2, "hdeeprm-visual: error: " + message.format(path=tmp_path / name))


def test_a_max_procs_that_is_not_an_integer_is_named(tmp_path, capsys):
    swf = tmp_path / "t.swf"
    swf.write_text("; MaxProcs: abc\n" + JOB + "\n")
    rc = workload_cli.main(["convert", str(swf), "-o", str(tmp_path / "w.json"), "--reference-speed", "1e9"])
    _one_line(capsys, rc, 2, "hdeeprm-workload: error: the trace header's MaxProcs is not an integer ('abc'): pass "
                             f"--nb-cores N or --platform platform.json ({swf})")
