"""Gymnasium spaces and their values as JSON, exactly: what :mod:`hdeeprm.serve` sends over the network.

A served environment's observation and action spaces travel once, described by :func:`describe` (in the
JSON schemas of ``/schema``); each value travels as plain JSON numbers (nested lists for arrays, objects
for ``Dict`` spaces, lists for ``Tuple`` spaces) that an LLM agent can read, and :func:`decode` rebuilds
it with the space's dtype and shape. A float32 value goes through JSON unchanged: widening it to a
double is exact, and JSON numbers are written with the shortest text that reads back as the same double
(Python's ``repr``, pydantic's ryu). JSON has no NaN or infinities (RFC 8259): those travel as the
strings ``"nan"``, ``"inf"`` and ``"-inf"``.

Supported spaces: ``Box``, ``Discrete``, ``MultiDiscrete``, ``MultiBinary``, ``Dict`` and ``Tuple`` of them
(all of HDeepRM's environments use ``Box``, ``Discrete`` and ``Dict``).
"""
from __future__ import annotations

import math
from typing import Any, Literal, Union

import numpy as np
from gymnasium import spaces
from pydantic import create_model

from hdeeprm.errors import OptionsError

#: How the non-finite floats travel (JSON has no NaN or infinities).
NON_FINITE = ("nan", "inf", "-inf")
#: JSON type of a float element: a number, or one of :data:`NON_FINITE`.
JsonFloat = Union[float, Literal["nan", "inf", "-inf"]]


def _float(value: float) -> float | str:
    """A float as JSON: itself when finite, else ``"nan"``, ``"inf"`` or ``"-inf"``."""
    if math.isfinite(value):
        return value
    return "nan" if value != value else ("inf" if value > 0 else "-inf")


def _floats(values: Any) -> Any:
    """Nested lists of floats with the non-finite ones as strings (see :func:`_float`)."""
    if isinstance(values, list):
        return [_floats(v) for v in values]
    return _float(values)


def array_to_json(array: np.ndarray) -> Any:
    """An array as nested lists of JSON numbers (booleans for a bool array), exact for every dtype.

    Args:
        array: Any numeric or bool array (a 0-d array gives a scalar).

    Returns:
        ``array.tolist()``, with non-finite floats as :data:`NON_FINITE` strings.
    """
    values = array.tolist()
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        return _floats(values)
    return values


def json_to_array(data: Any, dtype: np.dtype, shape: tuple[int, ...], what: str = "value") -> np.ndarray:
    """Inverse of :func:`array_to_json`: an array of ``dtype`` and ``shape``.

    Raises:
        OptionsError: ``data`` is not nested lists of numbers of that shape.
    """
    try:
        array = np.array(data, dtype=dtype)
    except (TypeError, ValueError):
        raise OptionsError(f"{what} must be nested lists of numbers of shape {list(shape)}, got {str(data)[:80]}") \
            from None
    if array.shape != tuple(shape):
        raise OptionsError(f"{what} must have shape {list(shape)}, got {list(array.shape)}")
    return array


def describe(space: spaces.Space) -> dict[str, Any]:
    """JSON description of ``space``, enough for :func:`from_description` to rebuild an equal space.

    Returns:
        ``{"type": "Box", "shape": [...], "dtype": "float32", "low": ..., "high": ...}`` (bounds as one number
        when uniform), ``{"type": "Discrete", "n": n, "start": s}``, ``{"type": "MultiDiscrete", "nvec": [...]}``,
        ``{"type": "MultiBinary", "n": ...}``, ``{"type": "Dict", "spaces": {...}}`` or ``{"type": "Tuple",
        "spaces": [...]}``.

    Raises:
        OptionsError: A space of another kind.
    """
    if isinstance(space, spaces.Box):
        def bound(values: np.ndarray) -> Any:
            first = values.flat[0] if values.size else 0
            return array_to_json(np.asarray(first)) if (values == first).all() else array_to_json(values)
        return {"type": "Box", "shape": list(space.shape), "dtype": str(space.dtype), "low": bound(space.low),
                "high": bound(space.high)}
    if isinstance(space, spaces.Discrete):
        return {"type": "Discrete", "n": int(space.n), "start": int(space.start), "dtype": str(space.dtype)}
    if isinstance(space, spaces.MultiDiscrete):
        return {"type": "MultiDiscrete", "nvec": space.nvec.tolist(), "dtype": str(space.dtype)}
    if isinstance(space, spaces.MultiBinary):
        return {"type": "MultiBinary", "n": np.asarray(space.n).tolist()}
    if isinstance(space, spaces.Dict):
        return {"type": "Dict", "spaces": {key: describe(sub) for key, sub in space.spaces.items()}}
    if isinstance(space, spaces.Tuple):
        return {"type": "Tuple", "spaces": [describe(sub) for sub in space.spaces]}
    raise OptionsError(f"a {type(space).__name__} space cannot be served (supported: Box, Discrete, "
                       "MultiDiscrete, MultiBinary, Dict, Tuple)")


def from_description(description: dict[str, Any]) -> spaces.Space:
    """The space :func:`describe` described.

    Raises:
        OptionsError: An unknown space type.
    """
    kind = description.get("type")
    if kind == "Box":
        shape = tuple(description["shape"])
        dtype = np.dtype(description["dtype"])
        low, high = (np.broadcast_to(np.array(description[key], dtype=dtype), shape) for key in ("low", "high"))
        return spaces.Box(low, high, shape, dtype)
    if kind == "Discrete":
        return spaces.Discrete(description["n"], start=description.get("start", 0),
                               dtype=description.get("dtype", np.int64))
    if kind == "MultiDiscrete":
        return spaces.MultiDiscrete(description["nvec"], dtype=description.get("dtype", np.int64))
    if kind == "MultiBinary":
        return spaces.MultiBinary(description["n"])
    if kind == "Dict":
        return spaces.Dict({key: from_description(sub) for key, sub in description["spaces"].items()})
    if kind == "Tuple":
        return spaces.Tuple([from_description(sub) for sub in description["spaces"]])
    raise OptionsError(f"unknown space type {kind!r} (known: Box, Discrete, MultiDiscrete, MultiBinary, Dict, Tuple)")


def encode(space: spaces.Space, value: Any) -> Any:
    """A value of ``space`` as JSON (see the module docstring).

    Args:
        space: The space ``value`` belongs to.
        value: An array, an integer (``Discrete``), a dict (``Dict``) or a tuple (``Tuple``).

    Returns:
        JSON numbers, nested lists, objects.
    """
    if isinstance(space, spaces.Dict):
        return {key: encode(sub, value[key]) for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        return [encode(sub, v) for sub, v in zip(space.spaces, value)]
    if isinstance(space, spaces.Discrete):
        return int(value)
    return array_to_json(np.asarray(value, dtype=space.dtype))


def decode(space: spaces.Space, data: Any, what: str = "observation") -> Any:
    """Inverse of :func:`encode`: the value with the space's dtypes and shapes.

    ``Discrete`` values come back as the space's dtype (``np.int64`` by default), arrays with the
    space's dtype and shape, ``Dict`` values as dicts in the space's key order, ``Tuple`` values as tuples.

    Raises:
        OptionsError: ``data`` does not fit the space's structure or shapes.
    """
    if isinstance(space, spaces.Dict):
        if not isinstance(data, dict) or set(data) != set(space.spaces):
            raise OptionsError(f"{what} must be an object with keys {sorted(space.spaces)}, got {str(data)[:80]}")
        return {key: decode(sub, data[key], f"{what}.{key}") for key, sub in space.spaces.items()}
    if isinstance(space, spaces.Tuple):
        if not isinstance(data, list) or len(data) != len(space.spaces):
            raise OptionsError(f"{what} must be a list of {len(space.spaces)} values, got {str(data)[:80]}")
        return tuple(decode(sub, d, f"{what}[{i}]") for i, (sub, d) in enumerate(zip(space.spaces, data)))
    if isinstance(space, spaces.Discrete):
        if isinstance(data, bool) or not isinstance(data, int):
            raise OptionsError(f"{what} must be an integer, got {data!r}")
        return space.dtype.type(data)
    return json_to_array(data, space.dtype, space.shape, what)


def json_type(space: spaces.Space, name: str = "Value") -> Any:
    """Python type of a value of ``space`` as JSON, for the typed pydantic models of :mod:`hdeeprm.serve.app`.

    Returns:
        ``int`` (``Discrete``), nested ``list[...]`` of ``float`` (or :data:`NON_FINITE`), ``int`` or ``bool``
        for arrays, a pydantic model named ``name`` with one field per key for ``Dict`` spaces (``dict[str,
        Any]`` when a key is not a Python identifier), ``list[Any]`` for ``Tuple`` spaces.
    """
    if isinstance(space, spaces.Dict):
        if not all(isinstance(key, str) and key.isidentifier() and not key.startswith("_") for key in space.spaces):
            return dict[str, Any]
        return create_model(name, **{key: (json_type(sub, f"{name}_{key}"), ...) for key, sub in space.spaces.items()})
    if isinstance(space, spaces.Tuple):
        return list[Any]
    if isinstance(space, spaces.Discrete):
        return int
    kind = np.dtype(space.dtype).kind
    element: Any = JsonFloat if kind == "f" else (bool if kind == "b" else int)
    for _ in range(len(space.shape)):
        element = list[element]
    return element
