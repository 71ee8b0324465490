"""The learning toy (4 cores, 2 jobs) shipped with the examples: paths, fixtures and a one-decision episode.

The fixtures are made available to every test by ``tests/conftest.py``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOY_OPTIONS = ROOT / "examples" / "learning" / "learning.json"
TOY_WORKLOAD = ROOT / "examples" / "learning" / "workload.json"
TOY_PLATFORM = ROOT / "platforms" / "learning.json"
AGENTS = ROOT / "examples" / "agents"


def quickstart_sweep(folder: Path) -> Path:
    """A two-cell sweep over the shipped quickstart (it needs no shared trace), written into ``folder``."""
    spec = folder / "sweep.json"
    spec.write_text(json.dumps({"options": str(ROOT / "examples" / "quickstart.json"),
                                "grid": {"policy_pair": ["first-high_gflops", "first-random"]}}))
    return spec


@pytest.fixture(scope="session")
def toy_hierarchy():
    """The toy platform: one node (32 GB), processors of 2 cores at 4 and 4.4 GFLOP/s, 32 GB/s each."""
    from hdeeprm.platform import load_platform

    return load_platform(TOY_PLATFORM)


@pytest.fixture(scope="session")
def toy_workload():
    """Two 1-core jobs at t = 0, 21 GFLOP, 8000 MB and 24 GB/s each, requested time 5 s."""
    from hdeeprm.workload.batsim_json import read_batsim_workload

    return read_batsim_workload(TOY_WORKLOAD)


@pytest.fixture(scope="session")
def toy_options():
    """The toy's options: objective makespan, minimal observation, 5 pairs."""
    from hdeeprm.config.options import load_options

    return load_options(TOY_OPTIONS)


def toy_episode(hierarchy, workload, options, action):
    """A toy episode after its single decision took ``action``."""
    from hdeeprm.run.episode import Episode

    ep = Episode(hierarchy, workload, actions=options.actions, seed=0, record=False)
    assert ep.advance()
    ep.apply(action)
    return ep
