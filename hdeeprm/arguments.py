"""Checks of keyword and command-line arguments, written once: the Gymnasium environments' and others.

Every registered environment (``gymnasium.make("hdeeprm/...", **kwargs)``) checks its keyword
arguments with these functions before doing any work, so a wrong value is refused with one
:class:`~hdeeprm.errors.OptionsError` that names the argument, the rule and the value given,
e.g. ``"gpu_slots must be an integer >= 1, got 2.5"``. The rules:

* counts (:func:`count`) are integers (Python or NumPy, never ``bool`` or ``float``) with a lower bound;
* real parameters (:func:`real`) are finite numbers (not ``bool``, not NaN, not infinite) in their range;
* switches (:func:`flag`) are ``bool`` (or NumPy's), never ``"no"`` or ``1``;
* ``options`` (:func:`options_argument`) is an :class:`~hdeeprm.config.options.Options`, a path
  (``str`` or :class:`os.PathLike`) or None;
* action lists (:func:`distinct`) name each action once.

The same rules serve the values of commands that have no argparse type for them (``hdeeprm-gpu
atc23 --ratio``, ``hdeeprm-workload generate --model gpu``), named by their flags.
"""
from __future__ import annotations

import math
import numbers
import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from hdeeprm.errors import OptionsError


def count(name: str, value: Any, minimum: int = 1, *, optional: bool = False) -> int | None:
    """Check that ``value`` is an integer >= ``minimum`` (None allowed when ``optional``).

    Args:
        name: The argument's name, for the message.
        value: What was given.
        minimum: The smallest value allowed.
        optional: Whether None (the argument's "no limit" or "all") is allowed.

    Returns:
        The value as an ``int`` (None when None was given and allowed).

    Raises:
        OptionsError: ``"NAME must be an integer >= MIN[ or None], got VALUE"``.
    """
    if value is None and optional:
        return None
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) and value >= minimum:
        return int(value)
    raise OptionsError(f"{name} must be an integer >= {minimum}{' or None' if optional else ''}, got {value!r}")


def real(name: str, value: Any, *, minimum: float | None = None, maximum: float | None = None,
         positive: bool = False) -> float:
    """Check that ``value`` is a finite real number in its range.

    Args:
        name: The argument's name, for the message.
        value: What was given.
        minimum, maximum: Inclusive bounds (None: unbounded).
        positive: Whether the value must be > 0 (instead of ``minimum``).

    Returns:
        The value as a ``float``.

    Raises:
        OptionsError: ``"NAME must be a finite number > 0, got inf"`` (the rule as given by the bounds).
    """
    low = "(0" if positive else f"[{minimum:g}" if minimum is not None else None
    if low is not None and maximum is not None:
        rule = f"a finite number in {low}, {maximum:g}]"
    elif low is not None:
        rule = "a finite number > 0" if positive else f"a finite number >= {minimum:g}"
    else:
        rule = "a finite number" + (f" <= {maximum:g}" if maximum is not None else "")
    ok = isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))
    if ok:
        number = float(value)
        ok = (math.isfinite(number) and not (positive and number <= 0) and (minimum is None or number >= minimum)
              and (maximum is None or number <= maximum))
    if not ok:
        raise OptionsError(f"{name} must be {rule}, got {value!r}")
    return number


def flag(name: str, value: Any, *, optional: bool = False) -> bool | None:
    """Check that ``value`` is a boolean (None allowed when ``optional``).

    Raises:
        OptionsError: ``"NAME must be True or False, got 'yes'"``.
    """
    if value is None and optional:
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise OptionsError(f"{name} must be True or False{' or None' if optional else ''}, got {value!r}")


def options_argument(value: Any) -> Any:
    """Check that ``options`` is an :class:`~hdeeprm.config.options.Options`, a path or None.

    Returns:
        ``value`` unchanged.

    Raises:
        OptionsError: ``"options must be an Options object, the path of an options file or None, got 3"``.
    """
    from hdeeprm.config.options import Options

    if value is None or isinstance(value, (Options, str, os.PathLike)):
        return value
    raise OptionsError(f"options must be an Options object, the path of an options file or None, got {value!r}")


def distinct(name: str, values: Sequence[Any], key: Any = None) -> None:
    """Check that no item of ``values`` is given twice (compared by ``key(item)`` when given).

    Raises:
        OptionsError: ``"NAME must name each action once, got 'first-random' twice"``.
    """
    seen: set = set()
    for value in values:
        k = key(value) if key is not None else value
        if k in seen:
            raise OptionsError(f"{name} must name each action once, got {value!r} twice")
        seen.add(k)
