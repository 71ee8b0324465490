"""Issue 37, items 3 and 5: ``-v``/``--log-level`` on every command; the split-submissions warning on Batsim runs only.

Every console script of setup.py takes ``--log-level`` (and ``-v`` but ``hdeeprm-batsim``, whose ``-v`` is
Batsim's); ``-v`` shows the run's steps, ``-vv`` its inputs, ``--log-level error`` hides the warnings; without
them a command prints what it always printed. The split-submissions warning comes only from a run that faces
Batsim (``"clock": "batsim"``); an embedded run on the exact clock names the instants at the info level.
"""
from __future__ import annotations

import importlib
import json
import logging
import re

import pytest

from hdeeprm.cli import batsim as batsim_cli
from hdeeprm.cli import gpu as gpu_cli
from hdeeprm.cli import launch as launch_cli
from hdeeprm.cli.verbosity import log_level
from tests.toy import ROOT

#: The console scripts of setup.py's entry points: (name, module).
SCRIPTS = re.findall(r'"(hdeeprm-[a-z]+)=([\w.]+):main"', (ROOT / "setup.py").read_text())
SPLIT = "deliver in two messages"


def test_setup_lists_the_ten_commands():
    assert len(SCRIPTS) == 10 and {"hdeeprm-serve", "hdeeprm-visual", "hdeeprm-workload"} <= dict(SCRIPTS).keys()


@pytest.mark.parametrize("prog, module", SCRIPTS)
def test_every_command_takes_log_level_and_v(prog, module, capsys):
    main = importlib.import_module(module).main
    try:
        rc = main(["--help"])
    except SystemExit as exc:
        rc = exc.code
    out = " ".join(capsys.readouterr().out.split())   # argparse wraps the help to the terminal
    assert rc == 0 and "--log-level LEVEL" in out and "debug, info, warning, error, critical" in out
    assert ("-v, --verbose" in out) == (prog != "hdeeprm-batsim")


@pytest.fixture()
def small_quickstart(tmp_path):
    """The quickstart's options on its first 50 jobs, paths made absolute."""
    options = json.loads((ROOT / "examples" / "quickstart.json").read_text())
    options.update(nb_jobs=50, workload_file_path=str(ROOT / "workloads" / "lublin_500_100.swf"),
                   platform_file_path=str(ROOT / "platforms" / "gaia_mini.json"))
    path = tmp_path / "quick.json"
    path.write_text(json.dumps(options))
    return path


def _launch(capsys, options, outdir, *flags):
    rc = launch_cli.main([str(options), "-o", str(outdir), "-q", *flags])
    return rc, capsys.readouterr().err.splitlines()


def test_launch_says_its_steps_with_v_and_its_inputs_with_vv(small_quickstart, tmp_path, capsys):
    out = tmp_path / "run"
    assert _launch(capsys, small_quickstart, out) == (0, [])   # the default: as before, nothing
    rc, err = _launch(capsys, small_quickstart, out, "-v")
    assert rc == 0 and err[0] == f"hdeeprm-launch: info: run: 50 jobs on 104 cores, agent ClassicAgent, " \
                                 f"1 episode(s), outputs in {out}"
    assert err[-1].startswith("hdeeprm-launch: info: episode 0: makespan ")
    assert not any(": debug: " in line for line in err)
    rc, err = _launch(capsys, small_quickstart, out, "-vv")
    assert rc == 0 and err[0] == f"hdeeprm-launch: debug: inputs: options {small_quickstart}, platform " \
                                 f"{ROOT / 'platforms' / 'gaia_mini.json'}, workload " \
                                 f"{ROOT / 'workloads' / 'lublin_500_100.swf'}"
    rc, again = _launch(capsys, small_quickstart, out, "--log-level", "DEBUG")   # any case
    assert rc == 0 and again == err


def test_v_and_log_level_exclude_each_other_and_bad_names_are_refused(small_quickstart, tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        launch_cli.main([str(small_quickstart), "-v", "--log-level", "info"])
    assert exc.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == \
        "hdeeprm-launch: error: argument --log-level: not allowed with argument -v/--verbose"
    with pytest.raises(SystemExit):
        launch_cli.main([str(small_quickstart), "--log-level", "loud"])
    assert capsys.readouterr().err.splitlines()[-1] == "hdeeprm-launch: error: argument --log-level: invalid " \
        "choice: 'loud' (choose from 'debug', 'info', 'warning', 'error', 'critical')"


def test_a_command_leaves_logging_as_it_found_it(small_quickstart, tmp_path, capsys):
    logger = logging.getLogger("hdeeprm")
    before = (logger.level, list(logger.handlers), logger.propagate)
    assert launch_cli.main([str(small_quickstart), "-o", str(tmp_path / "run"), "-q", "-vv"]) == 0
    assert (logger.level, list(logger.handlers), logger.propagate) == before


def test_subcommands_take_the_flags_before_or_after_their_name(capsys):
    for argv in (["types", "--log-level", "debug"], ["--log-level", "debug", "types"], ["-v", "types"],
                 ["types", "-vv"]):
        args = gpu_cli.build_parser().parse_args(argv)
        assert log_level(args) in (logging.DEBUG, logging.INFO)
    assert log_level(gpu_cli.build_parser().parse_args(["-v", "types"])) == logging.INFO   # not reset by types
    assert gpu_cli.main(["types", "-v"]) == 0 and capsys.readouterr().out.startswith("type ")


def test_hdeeprm_batsim_keeps_batsims_v():
    args = batsim_cli.build_parser().parse_args(["-p", "p.xml", "-w", "w.json", "-v", "debug", "--log-level", "info"])
    assert (args.verbosity, log_level(args)) == ("debug", logging.INFO)


def test_serve_gives_its_level_to_uvicorn_too():
    from hdeeprm.cli.serve import build_parser

    assert log_level(build_parser().parse_args(["GpuPlacement-v0"])) == logging.WARNING
    assert log_level(build_parser().parse_args(["GpuPlacement-v0", "--log-level", "error"])) == logging.ERROR


# --------------------------------------------------------------------------- split submissions (item 3)
@pytest.fixture()
def sdsc_prefix(shared, tmp_path):
    """``options(clock)``: the SDSC-SP2 example on its first 700 jobs (one same-time pair at risk, t = 532099 s)."""
    def options(clock=None):
        data = json.loads((ROOT / "examples" / "sdsc_sp2_gaia_first_high_gflops.json").read_text())
        data.update(nb_jobs=700, platform_file_path=str(ROOT / "platforms" / "gaia.json"))
        if clock:
            data["clock"] = clock
        path = tmp_path / f"sdsc_{clock}.json"
        path.write_text(json.dumps(data))
        return path
    return options


def test_an_embedded_sdsc_run_prints_no_split_warning(sdsc_prefix, tmp_path, capsys):
    assert _launch(capsys, sdsc_prefix(), tmp_path / "exact") == (0, [])
    rc, err = _launch(capsys, sdsc_prefix(), tmp_path / "exact", "-v")   # named at the info level
    assert rc == 0 and [line for line in err if SPLIT in line] == [
        "hdeeprm-launch: info: 1 instant(s) with 2+ jobs submitted together that real Batsim may deliver in two "
        "messages (its clock can land 1 ulp below the submission time; docs/engine.rst, \"Split submissions\"): "
        "t = 532099.000000 s"]


def test_an_embedded_kth_run_prints_no_split_warning(shared, tmp_path, capsys):
    data = json.loads((ROOT / "examples" / "kth_sp2_first_high_gflops.json").read_text())
    data.update(nb_jobs=2000, platform_file_path=str(ROOT / "platforms" / "kth_sp2.json"))
    (tmp_path / "kth.json").write_text(json.dumps(data))
    assert _launch(capsys, tmp_path / "kth.json", tmp_path / "kth") == (0, [])


def test_a_batsim_clock_run_warns_of_split_submissions_and_log_level_error_hides_it(sdsc_prefix, tmp_path, capsys):
    rc, err = _launch(capsys, sdsc_prefix("batsim"), tmp_path / "batsim")
    assert rc == 0 and len(err) == 1 and err[0].startswith(
        "hdeeprm-launch: warning: 1 instant(s) with 2+ jobs submitted together that real Batsim may deliver")
    assert _launch(capsys, sdsc_prefix("batsim"), tmp_path / "batsim", "--log-level", "error") == (0, [])


def test_verbosity_changes_no_output_file(sdsc_prefix, tmp_path, capsys):
    _launch(capsys, sdsc_prefix(), tmp_path / "quiet")
    _launch(capsys, sdsc_prefix(), tmp_path / "verbose", "-vv")
    for name in ("out_jobs.csv", "out_machine_states.csv", "out_pstate_changes.csv"):   # no wall times
        assert (tmp_path / "quiet" / name).read_bytes() == (tmp_path / "verbose" / name).read_bytes()
