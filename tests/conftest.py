"""Shared pytest fixtures: where the read-only shared data (traces, Batsim golden runs) lives."""
from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: The workplace's read-only data folder (../shared next to the checkout), or $HDEEPRM_SHARED.
SHARED = Path(os.environ.get("HDEEPRM_SHARED", ROOT.parent / "shared"))
# The shipped examples name the public traces as $HDEEPRM_SHARED/traces/...
os.environ["HDEEPRM_SHARED"] = str(SHARED)
TRACES = SHARED / "traces"
GOLDEN = SHARED / "batsim-golden"
REFERENCE = SHARED / "reference" / "hdeeprm-original"


def pytest_collection_modifyitems(config, items):
    """Deselect timing runs (marker ``benchmark``) unless the ``-m`` expression names them.

    Written here rather than as ``addopts = -m 'not benchmark'``: a user's own ``-m "not slow"`` (the quick
    subset) would replace that expression and bring the timing runs back in.
    """
    if "benchmark" in (config.option.markexpr or ""):
        return
    kept = [item for item in items if item.get_closest_marker("benchmark") is None]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if item not in kept])
        items[:] = kept


@pytest.fixture(scope="session")
def shared() -> Path:
    """Path of the shared data folder; skips the test when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED}")
    return SHARED


@pytest.fixture
def gaia_run_both_paths(shared, tmp_path, monkeypatch):
    """``run(*off)``: the first 3,000 SDSC-SP2 jobs on Gaia with every output, as installed, then with each
    ``(module, name)`` of ``off`` (a compiled class) set to None, the pure-Python path; returns both folders."""
    from hdeeprm.cli.launch import main as launch_main

    def run(*off):
        options = json.loads((ROOT / "examples" / "sdsc_sp2_gaia_first_high_gflops.json").read_text())
        options["platform_file_path"] = str(ROOT / "platforms" / "gaia.json")
        options["nb_jobs"] = 3000
        (tmp_path / "o.json").write_text(json.dumps(options))
        assert launch_main([str(tmp_path / "o.json"), "-o", str(tmp_path / "compiled"), "-q"]) == 0
        for module, name in off:
            monkeypatch.setattr(module, name, None)
        assert launch_main([str(tmp_path / "o.json"), "-o", str(tmp_path / "python"), "-q"]) == 0
        return tmp_path / "compiled", tmp_path / "python"
    return run


@pytest.fixture(scope="session", autouse=True)
def _sb3_log_folder(tmp_path_factory):
    """Stable-Baselines3's ``learn()`` without a logger makes an empty log folder in the system's temp
    folder at every call ($SB3_LOGDIR when set): the suite's go to one folder under pytest's own."""
    os.environ["SB3_LOGDIR"] = str(tmp_path_factory.mktemp("sb3"))


@pytest.fixture
def sigint_reaches_children():
    """Commands started by the test receive SIGINT (Ctrl-C) as Python's ``KeyboardInterrupt``.

    A suite run as a background job of a non-interactive shell starts with SIGINT ignored, and an ignored
    signal stays ignored in every child: the commands that the Ctrl-C tests interrupt would not notice the
    signal. This process's handler is made Python's default for the test (a handler, unlike "ignored", is
    reset to the default in a child), then put back.
    """
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


from tests.toy import toy_hierarchy, toy_options, toy_workload  # noqa: E402,F401  (fixtures for every test)
