"""Shared pytest fixtures: where the read-only shared data (traces, Batsim golden runs) lives."""
from __future__ import annotations

import os
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


from tests.toy import toy_hierarchy, toy_options, toy_workload  # noqa: E402,F401  (fixtures for every test)
