"""Strict JSON decoding for the JSON inputs (options, platforms, type libraries, Batsim workloads), and strict encoding.

Python's :mod:`json` keeps the last of two equal keys silently and reads ``NaN``,
``Infinity`` and ``1e400`` as non-finite floats; RFC 8259 (https://www.rfc-editor.org/rfc/rfc8259)
says object names "SHOULD be unique" and has no non-finite numbers. :func:`decode_json`
refuses all of these with a one-line error naming the file and line. The text itself comes
through :func:`hdeeprm.reading.read_text` (UTF-8, byte-order mark skipped, bad bytes located).

The other way, Python's :mod:`json` *writes* ``NaN``, ``Infinity`` and ``-Infinity``, which are not
JSON: JavaScript's ``JSON.parse`` and most other parsers refuse them, ``jq`` turns them into
1.797e308. Every JSON file HDeepRM writes (``out_metrics.json``, ``overutilizations.json``,
``run.json``, ``probs.json``, the sweep's cell records) goes through :func:`encode_json`: a
non-finite float is written ``null`` and, in an object at the top, named under the key
:data:`UNDEFINED` with the reason it has no value; the text is then made with ``allow_nan=False``,
so nothing non-finite can slip through.
"""
from __future__ import annotations

import json
import json.decoder
import json.scanner
import math
import re
from typing import Any

from hdeeprm.errors import HDeepRMError

#: JSON tokens that matter to find a key: strings, brackets, colons.
_JSON_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|[{}\[\]:]')


def _second_key_line(text: str, start: int, end: int, key: str) -> int:
    """1-based line of the second ``key`` among the keys of the JSON object ``text[start:end]``."""
    depth, seen, previous = 0, 0, None
    for match in _JSON_TOKEN.finditer(text, start, end):
        token = match.group()
        if token in "{[":
            depth += 1
        elif token in "}]":
            depth -= 1
        elif token == ":" and depth == 0 and previous is not None and json.loads(previous.group()) == key:
            seen += 1
            if seen == 2:
                return text.count("\n", 0, previous.start()) + 1
        previous = match if token.startswith('"') else None
    return text.count("\n", 0, start) + 1


#: The key of a top-level object under which :func:`encode_json` says why a value was written ``null``.
UNDEFINED = "undefined"


def _finite(value: Any, path: str, replaced: dict[str, float]) -> Any:
    """``value`` with every non-finite float (Python's or NumPy's) replaced by None, noted in ``replaced``."""
    if isinstance(value, float):   # np.float64 is a float too
        if math.isfinite(value):
            return value
        replaced[path] = value
        return None
    if isinstance(value, dict):
        return {key: _finite(item, f"{path}.{key}" if path else str(key), replaced) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item, f"{path}[{k}]", replaced) for k, item in enumerate(value)]
    if hasattr(value, "dtype") and hasattr(value, "item") and getattr(value, "ndim", 1) == 0:   # a NumPy scalar
        return _finite(value.item(), path, replaced)
    return value


def encode_json(value: Any, *, reasons: dict[str, str] | None = None, indent: int | None = 2) -> str:
    """JSON text that every parser reads: non-finite floats written ``null``, with the reason.

    Args:
        value: What to write (dicts, lists, strings, numbers, booleans, None; NumPy scalars too).
        reasons: Why a value may be non-finite, by its path (a top-level key such as ``"mean_slowdown"``,
            ``"a.b"`` for a nested key, ``"a[2]"`` for a list item). A path without a reason gets
            ``"not a finite number (inf)"`` (or ``-inf``, ``nan``).
        indent: Indentation of the text (None: one line, as ``json.dumps`` writes it).

    Returns:
        The text, without a final line break. When a value was replaced and ``value`` is a dict,
        the text gains the key :data:`UNDEFINED`: ``{path: reason}`` for each value written ``null``.

    Raises:
        ValueError: ``value`` holds something JSON has no form for once the floats are mapped (never
            a non-finite number: those are mapped first).
        TypeError: ``value`` holds an object :mod:`json` cannot write.
    """
    replaced: dict[str, float] = {}
    clean = _finite(value, "", replaced)
    if replaced and isinstance(clean, dict):
        reasons = reasons or {}
        clean[UNDEFINED] = {path: reasons.get(path, f"not a finite number ({number})")
                            for path, number in replaced.items()}
    return json.dumps(clean, allow_nan=False, indent=indent)


class _Repeated(Exception):
    """A key given twice: :func:`decode_json` decodes again with the slow scanner, which finds its line."""


def decode_json(text: str, source: str, error: type[HDeepRMError]) -> Any:
    """Decode JSON text, refusing an object that gives a key twice (JSON would keep the last silently).

    Args:
        text: The JSON document.
        source: Its file, for messages.
        error: The project error type to raise (:class:`~hdeeprm.errors.OptionsError` for options,
            :class:`~hdeeprm.errors.PlatformError` for platform files and type libraries,
            :class:`~hdeeprm.errors.WorkloadError` for Batsim workloads).

    Returns:
        The decoded value.

    Raises:
        error: ``"key 'K' must appear once in its object, got it twice"`` with the line of
            the second one, or ``NaN``, ``Infinity`` or a number beyond a double (e.g. ``1e400``),
            which Python's json would take as non-finite floats.
        json.JSONDecodeError: Malformed JSON.
    """
    def constant(name: str) -> float:
        raise error(f"numbers must be finite JSON numbers (RFC 8259), got {name}", path=source)

    def number(text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            raise error(f"numbers must fit a double, got {text}", path=source)
        return value

    def pairs_once(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        out = dict(pairs)
        if len(out) != len(pairs):
            raise _Repeated
        return out

    try:   # the C scanner first: it is about ten times faster on a large workload
        return json.JSONDecoder(parse_constant=constant, parse_float=number, object_pairs_hook=pairs_once).decode(text)
    except _Repeated:
        pass
    decoder = json.JSONDecoder(parse_constant=constant, parse_float=number)

    def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None):
        pairs, end = json.decoder.JSONObject(s_and_end, strict, scan_once, None, list, memo)
        keys: set[str] = set()
        for key, _ in pairs:
            if key in keys:
                line = _second_key_line(s_and_end[0], s_and_end[1], end, key)
                raise error(f"key '{key}' must appear once in its object, got it twice (JSON would "
                            "keep the last silently)", path=source, line=line)
            keys.add(key)
        return dict(pairs), end

    decoder.parse_object = parse_object
    decoder.scan_once = json.scanner.py_make_scanner(decoder)   # the C scanner would not call parse_object
    return decoder.decode(text)
