"""Checks of keyword and command-line arguments, written once: the Gymnasium environments' and others.

Every registered environment (``gymnasium.make("hdeeprm/...", **kwargs)``) checks its keyword
arguments with these functions before doing any work, so a wrong value is refused with one
:class:`~hdeeprm.errors.OptionsError` that names the argument, the rule and the value given,
e.g. ``"max_steps must be an integer >= 1 or None, got 2.5"``. The rules:

* counts (:func:`count`) are integers (Python or NumPy, never ``bool`` or ``float``) with a lower bound and,
  for counts that size a space or an allocation (slots, nodes), an upper bound;
* lists (:func:`sequence`: window starts, pairs of numbers) are lists, tuples or 1-D NumPy arrays, never strings;
* real parameters (:func:`real`) are finite numbers (not ``bool``, not NaN, not infinite) in their range;
* switches (:func:`flag`) are ``bool`` (or NumPy's), never ``"no"`` or ``1``;
* ``options`` (:func:`options_argument`) is an :class:`~hdeeprm.config.options.Options`, a path
  (``str`` or :class:`os.PathLike`) or None;
* action lists (:func:`distinct`) name each action once;
* ``reset(options=...)`` (:func:`reset_options`) is None or a dict of the keys the environment documents.

:func:`env_errors` wraps each environment's ``__init__`` and ``reset``, so the message also names the
environment: ``"hdeeprm/HDeepRM-JobSlot-v0: nb_slots must be an integer in [1, 4096] (queued jobs shown), got
2.5"``.

The same rules serve the values of commands that have no argparse type for them (``hdeeprm-gpu
atc23 --ratio``, ``hdeeprm-workload generate --model gpu``), named by their flags.
"""
from __future__ import annotations

import functools
import math
import numbers
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np

from hdeeprm.errors import OptionsError

#: Most queued jobs a job-slot environment shows (``nb_slots``, ``slots``): 32 times SchedGym's 128, an
#: observation of at most 4096 x 8 float32 values (128 KiB); a network reading more rows per decision is
#: not a scheduler's.
MAX_SLOTS = 4096
#: What :data:`MAX_SLOTS` bounds, in messages.
SLOTS_WHAT = "queued jobs shown"


def count(name: str, value: Any, minimum: int = 1, *, optional: bool = False, maximum: int | None = None,
          what: str = "") -> int | None:
    """Check that ``value`` is an integer >= ``minimum`` (and <= ``maximum``; None allowed when ``optional``).

    Python and NumPy integers are integers; ``bool`` (Python's or NumPy's), floats (even ``2.0``) and
    strings are not.

    Args:
        name: The argument's name, for the message.
        value: What was given.
        minimum: The smallest value allowed.
        optional: Whether None (the argument's "no limit" or "all") is allowed.
        maximum: The largest value allowed (None: unbounded).
        what: What the bound stands for, shown after the rule (e.g. ``"GPUs of one node"``).

    Returns:
        The value as an ``int`` (None when None was given and allowed).

    Raises:
        OptionsError: ``"NAME must be an integer >= MIN[ or None], got VALUE"``, or with a maximum
            ``"NAME must be an integer in [MIN, MAX] (WHAT)[ or None], got VALUE"``.
    """
    if value is None and optional:
        return None
    if (isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)) and value >= minimum
            and (maximum is None or value <= maximum)):
        return int(value)
    rule = f">= {minimum}" if maximum is None else f"in [{minimum}, {maximum}]"
    rule += f" ({what})" if what else ""
    raise OptionsError(f"{name} must be an integer {rule}{' or None' if optional else ''}, got {value!r}")


def sequence(name: str, value: Any, what: str, length: int | None = None) -> list:
    """Check that ``value`` is a list, a tuple or a 1-D NumPy array (of ``length`` items when given).

    Args:
        name: The argument's name, for the message.
        value: What was given.
        what: What is expected, for the message (``"a list of integers"``, ``"a pair (low, high)"``).
        length: The number of items required (None: any).

    Returns:
        The items, as a list.

    Raises:
        OptionsError: ``"NAME must be WHAT, got 5"`` (a string is not a list).
    """
    if isinstance(value, np.ndarray) and value.ndim == 1:
        value = list(value)
    if not isinstance(value, (list, tuple)) or (length is not None and len(value) != length):
        raise OptionsError(f"{name} must be {what}, got {value!r}")
    return list(value)


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


def reset_options(options: Any, keys: Sequence[str] = ()) -> dict[str, Any]:
    """Check ``reset(options=...)`` of an environment that documents ``keys``.

    Args:
        options: What was given: None or a dict.
        keys: The keys the environment honours (none: it accepts no reset options).

    Returns:
        The options as a dict (empty for None).

    Raises:
        OptionsError: ``"reset options must be a dict or None, got 3"``, ``"this environment accepts no reset
            options, got {'start': 1}"`` (no keys) or ``"unknown reset option 'strat' (allowed: start)"``.
    """
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise OptionsError(f"reset options must be a dict or None, got {options!r}")
    unknown = [key for key in options if key not in keys]
    if unknown and not keys:
        raise OptionsError(f"this environment accepts no reset options, got {dict(options)!r}")
    if unknown:
        raise OptionsError(f"unknown reset option {unknown[0]!r} (allowed: {', '.join(keys)})")
    return dict(options)


def env_id_of(env: Any) -> str:
    """The id ``env``'s class is registered under (:data:`hdeeprm.ENV_ENTRY_POINTS`), else its class name."""
    from hdeeprm import ENV_ENTRY_POINTS

    cls = type(env)
    entry = f"{cls.__module__}:{cls.__qualname__}"
    return next((env_id for env_id, point in ENV_ENTRY_POINTS.items() if point == entry), cls.__name__)


_Method = TypeVar("_Method", bound=Callable[..., Any])


def env_errors(method: _Method) -> _Method:
    """Decorate an environment's ``__init__`` or ``reset``: its :class:`OptionsError` names the environment.

    The message becomes ``"ENV_ID: MESSAGE"`` (:func:`env_id_of`), once, however many decorated methods
    (a subclass's and its parent's) it passes through; the error's ``path``, ``line`` and ``field`` are kept.
    """
    @functools.wraps(method)
    def named(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except OptionsError as error:
            prefix = f"{env_id_of(self)}: "
            if str(error).startswith(prefix):
                raise
            named_error = OptionsError(prefix + str(error))
            named_error.path, named_error.line, named_error.field = error.path, error.line, error.field
            raise named_error from None

    return named  # type: ignore[return-value]
