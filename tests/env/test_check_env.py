"""Every registered environment passes Gymnasium's own checker, with warnings as errors."""
from __future__ import annotations

import warnings

import pytest
from gymnasium.envs.registration import load_env_creator
from gymnasium.utils.env_checker import check_env

import hdeeprm
from tests.conftest import SHARED

#: Environments whose defaults replay a public trace of ../shared (skipped without it).
NEEDS_SHARED = {hdeeprm.GPU_PLACEMENT_ENV_ID, hdeeprm.GPU_JOB_SLOT_ENV_ID}


@pytest.mark.slow
@pytest.mark.parametrize("env_id", sorted(hdeeprm.ENV_ENTRY_POINTS))
def test_every_registered_env_passes_check_env_with_warnings_as_errors(env_id):
    if env_id in NEEDS_SHARED and not SHARED.is_dir():
        pytest.skip(f"shared data folder not found at {SHARED}")
    # The class itself, as registered (gymnasium.make would add its own deprecation notice for v0 ids beside v1).
    env_class = load_env_creator(hdeeprm.ENV_ENTRY_POINTS[env_id])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        env = env_class()
        try:
            check_env(env, skip_render_check=True)
        finally:
            env.close()
