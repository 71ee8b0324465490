"""Shared pytest fixtures: where the read-only shared data (traces, Batsim golden runs) lives."""
from __future__ import annotations

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


@pytest.fixture(scope="session")
def shared() -> Path:
    """Path of the shared data folder; skips the test when it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED}")
    return SHARED


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
