"""The JSON codec of hdeeprm.serve: spaces and values survive JSON exactly (dtype, shape, NaN, infinities)."""
from __future__ import annotations

import json

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces

import hdeeprm
from hdeeprm.errors import OptionsError
from hdeeprm.serve import spaces as codec

SPACES = [
    spaces.Box(0.0, 1.0, (13,), np.float32),
    spaces.Box(np.array([-np.inf, 0.0]), np.array([np.inf, 2.5]), (2,), np.float64),
    spaces.Box(-3, 7, (2, 3), np.int16),
    spaces.Discrete(5, start=2),
    spaces.MultiDiscrete([3, 4]),
    spaces.MultiBinary(4),
    spaces.Dict({"nodes": spaces.Box(0.0, 1.0, (4, 16), np.float32), "job": spaces.Box(0.0, 1.0, (9,), np.float32)}),
    spaces.Tuple([spaces.Discrete(2), spaces.Box(0.0, 1.0, (3,), np.float32)]),
]


def through_json(value):
    return json.loads(json.dumps(value, allow_nan=False))


def same(a, b):
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")


@pytest.mark.parametrize("space", SPACES, ids=lambda s: type(s).__name__)
def test_spaces_and_their_values_survive_json_exactly(space):
    assert codec.from_description(through_json(codec.describe(space))) == space
    space.seed(0)
    for _ in range(20):
        value = space.sample()
        assert same(codec.decode(space, through_json(codec.encode(space, value))), value)


def test_float32_values_and_non_finite_floats_round_trip_bit_for_bit():
    space = spaces.Box(-np.inf, np.inf, (6,), np.float32)
    value = np.array([np.nextafter(np.float32(0.1), np.float32(1)), 1e-45, 3.4028235e38, np.nan, np.inf, -np.inf],
                     dtype=np.float32)
    data = through_json(codec.encode(space, value))
    assert data[3:] == ["nan", "inf", "-inf"]
    back = codec.decode(space, data)
    assert back.dtype == np.float32 and back.tobytes() == value.tobytes()


@pytest.mark.parametrize("env_id", sorted(hdeeprm.ENV_ENTRY_POINTS))
def test_every_registered_environment_has_servable_spaces(env_id, request):
    if env_id == hdeeprm.GPU_JOB_SLOT_ENV_ID:
        request.getfixturevalue("shared")   # its default scenarios replay the Philly trace
    kwargs = {"scenario": "easy-gen"} if env_id == hdeeprm.GPU_PLACEMENT_ENV_ID else {}
    env = gymnasium.make(env_id, **kwargs)
    for space in (env.observation_space, env.action_space):
        assert codec.from_description(through_json(codec.describe(space))) == space


def test_values_of_the_wrong_shape_or_kind_are_refused_in_one_line():
    box = spaces.Box(0.0, 1.0, (2,), np.float32)
    with pytest.raises(OptionsError, match=r"^observation must have shape \[2\], got \[3\]$"):
        codec.decode(box, [0.1, 0.2, 0.3])
    with pytest.raises(OptionsError, match=r"^observation must be nested lists of numbers of shape \[2\]"):
        codec.decode(box, ["a", 0.2])
    with pytest.raises(OptionsError, match=r"^observation must be an integer, got True$"):
        codec.decode(spaces.Discrete(2), True)
    with pytest.raises(OptionsError, match=r"^a Text space cannot be served"):
        codec.describe(spaces.Text(5))
