"""Strict JSON decoding for the JSON inputs (options, platforms, type libraries, Batsim workloads).

Python's :mod:`json` keeps the last of two equal keys silently and reads ``NaN``,
``Infinity`` and ``1e400`` as non-finite floats; RFC 8259 (https://www.rfc-editor.org/rfc/rfc8259)
says object names "SHOULD be unique" and has no non-finite numbers. :func:`decode_json`
refuses all of these with a one-line error naming the file and line. The text itself comes
through :func:`hdeeprm.reading.read_text` (UTF-8, byte-order mark skipped, bad bytes located).
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
