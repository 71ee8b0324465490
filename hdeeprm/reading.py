"""The reading rules every text input of HDeepRM follows, written once.

SWF traces (:mod:`hdeeprm.workload.swf`), the openb node and pod lists (:mod:`hdeeprm.platform.openb`,
:mod:`hdeeprm.workload.openb`), the Philly table (:mod:`hdeeprm.workload.philly`), and the JSON inputs
(Batsim workloads, platforms, type libraries, options: :mod:`hdeeprm.jsontext`) take their numbers, their
bounds and their text the same way:

- **integers** are ASCII digits only (``+2``, ``5_0``, ``1e3``, ``٣`` are not integers, though Python's
  ``int()`` takes some of them) and at most :data:`MAX_INTEGER` (2**53 - 1, the largest integer a double
  holds exactly: the readers' arrays are float64 or go through one);
- **numbers** are ``-?digits[.digits][e[+-]digits]`` (no ``inf``, ``nan``, ``1_000``); **times** are
  finite and below :data:`MAX_TIME` (2**42 s);
- **counts and sizes** have plausible upper bounds (:data:`MAX_GPUS_PER_NODE`, :data:`MAX_GPUS_PER_JOB`,
  :data:`MAX_NODE_CPU_MILLI`, :data:`MAX_MEMORY_MIB`), named in the message when exceeded: a node with
  1,000 GPUs is a typo, and 1e20 GPUs would wrap to a negative int64;
- **text** is UTF-8 (a leading byte-order mark is skipped), plain or gzip-compressed (told by the magic
  bytes, whatever the name); bytes that are not UTF-8 and corrupt gzip data are reported with
  ``file:line`` and what is wrong, never a traceback;
- **identifiers** (job numbers, pod and node names) are unique and not empty: the second one is refused
  with the line of the first.

Each check raises the reader's own :class:`~hdeeprm.errors.InputError` subclass
(:class:`~hdeeprm.errors.WorkloadError` for workloads, :class:`~hdeeprm.errors.PlatformError` for
platforms), whose message ends with ``(file:line)``.
"""
from __future__ import annotations

import csv
import gzip
import math
import os
import re
import zlib
from collections.abc import Iterator
from pathlib import Path

from hdeeprm.errors import InputError

#: Largest value of an integer field: 2**53 - 1, the largest integer a double holds exactly. A larger count
#: or identifier would silently change value in a float64 array (2**53 + 1 reads as 2**53).
MAX_INTEGER = 2 ** 53 - 1
#: Largest time (seconds) an input may hold: submit, run, requested and wall times, delays must be below
#: 2**42 s (about 139,000 years). An IEEE 754 double has a 53-bit significand, so below 2**42 two times 1 ms
#: apart are still different numbers; above it a job's duration would be absorbed into its submit time
#: (1e300 + 50 == 1e300), and ``inf`` gives an infinite makespan and NaN utilisation.
MAX_TIME = 2.0 ** 42
#: How error messages state the :data:`MAX_TIME` bound ("field X must be <this>, got Y").
MAX_TIME_TEXT = "< 2**42 s (beyond it a double no longer resolves 1 ms)"
#: Most GPUs on one node (openb node lists, platform node types, one pod's whole GPUs). The largest servers
#: sold hold 16 (NVIDIA HGX-2, 16 x V100); 64 leaves room for denser ones.
MAX_GPUS_PER_NODE = 64
#: Most GPUs of one job (the Philly table; a job may spread over nodes). The largest published training jobs
#: use about 1e5 GPUs (Meta's Llama 3: 16,384 H100; xAI's Colossus: 100,000); 2**20 leaves room.
MAX_GPUS_PER_JOB = 2 ** 20
#: Most CPU of one node or pod in thousandths of a core: 10,000 cores (the largest servers have about 2,000
#: hardware threads, e.g. 8 sockets x 128 cores x 2).
MAX_NODE_CPU_MILLI = 10_000 * 1000
#: Most memory of one node or pod in MiB: 128 TiB (the largest single-image servers hold 32 to 48 TB).
MAX_MEMORY_MIB = 2 ** 27
#: What reading a corrupt or truncated (gzip) file raises: caught and reported as the reader's error.
READ_ERRORS = (OSError, EOFError, zlib.error)
#: The text of a number: optional ``-``, digits with an optional decimal part, an optional exponent.
#: Python's ``float()`` also takes ``+2``, ``5_0``, ``inf``, ``nan`` and non-ASCII digits: not numbers here.
NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")
#: The text of an integer: optional ``-`` and ASCII digits.
DIGITS = re.compile(r"-?[0-9]+")
_GZIP_MAGIC = b"\x1f\x8b"
_BOM = b"\xef\xbb\xbf"


def parse_int(text: str, name: str, error: type[InputError], path: str | None, line: int | None,
              low: int = 0, high: int = MAX_INTEGER, unit: str = "") -> int:
    """Parse an integer field: ASCII digits only, in ``low..high``.

    Args:
        text: The field as written (blanks around it are ignored).
        name: The field's name, for messages (e.g. ``"gpu"``).
        error: The reader's error class (:class:`~hdeeprm.errors.WorkloadError`, ...).
        path, line: Where the field was read, for messages.
        low, high: Accepted bounds (inclusive); ``high`` at most :data:`MAX_INTEGER`.
        unit: What the bound counts, named in the message (e.g. ``"GPUs of one node"``).

    Returns:
        The integer.

    Raises:
        error: e.g. ``gpu must be an integer in 0..64 (GPUs of one node), got '1000' (nodes.csv:3)``.
    """
    token = text.strip()
    high = min(high, MAX_INTEGER)
    # at most 20 characters: 2**53 has 16 digits, and int() refuses more than 4,300 (CPython's guard)
    if not DIGITS.fullmatch(token) or len(token) > 20 or not low <= int(token) <= high:
        bound = f" ({unit})" if unit else ""
        raise error(f"{name} must be an integer in {low}..{high}{bound}, got {text!r}", path, line, name)
    return int(token)


def parse_number(text: str, name: str, error: type[InputError], path: str | None, line: int | None,
                 high: float = MAX_TIME, high_text: str = MAX_TIME_TEXT) -> float:
    """Parse a non-negative number field (a time in seconds unless told): finite, ``0 <= value < high``.

    Args:
        text: The field as written (blanks around it are ignored).
        name: The field's name, for messages.
        error: The reader's error class.
        path, line: Where the field was read, for messages.
        high: Exclusive upper bound (default :data:`MAX_TIME`).
        high_text: How the message states the bound (default :data:`MAX_TIME_TEXT`).

    Returns:
        The value as a float.

    Raises:
        error: e.g. ``duration must be a number >= 0 and < 2**42 s (...), got 'inf' (philly.csv:7)``.
    """
    token = text.strip()
    value = float(token) if NUMBER.fullmatch(token) else math.nan
    if not 0 <= value < high:
        raise error(f"{name} must be a number >= 0 and {high_text}, got {text!r}", path, line, name)
    return value


def check_name(text: str, name: str, seen: dict[str, int], error: type[InputError], path: str | None,
               line: int) -> str:
    """Check an identifier: not empty and not seen before; record it in ``seen``.

    Args:
        text: The identifier as written (blanks around it are dropped).
        name: The field's name, for messages (e.g. ``"sn"``).
        seen: Identifiers read so far -> their line; updated.
        error: The reader's error class.
        path, line: Where it was read.

    Returns:
        The identifier, stripped.

    Raises:
        error: ``name must not be empty`` or ``name must be unique, got 'x' again (first on line 3)``.
    """
    ident = text.strip()
    if not ident:
        raise error(f"{name} must not be empty", path, line, name)
    if ident in seen:
        raise error(f"{name} must be unique, got {ident!r} again (first on line {seen[ident]})", path, line, name)
    seen[ident] = line
    return ident


def iter_text_lines(path: str | os.PathLike, what: str, error: type[InputError]) -> Iterator[tuple[int, str]]:
    """Stream the lines of a UTF-8 text file, plain or gzip-compressed, checking every byte.

    Args:
        path: The file (gzip is told by its magic bytes, whatever its name).
        what: What the file is, for messages (``"openb pod list"``).
        error: The reader's error class.

    Yields:
        ``(line number, text)``: 1-based numbers, the text with its line break, a leading byte-order
        mark dropped.

    Raises:
        error: ``<what> not found``; ``cannot read <what>: <reason>``; ``line is not UTF-8 text: byte 0xe9
            at column 5; save the file as UTF-8`` and ``corrupt gzip data: <reason>``, both with ``file:line``.
    """
    name = os.fspath(path)
    try:
        raw = open(name, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        raise error(f"{what} not found", name) from None
    except OSError as exc:
        raise error(f"cannot read {what}: {exc.strerror or exc}", name) from None
    number = 0
    with raw:
        try:
            stream = gzip.GzipFile(fileobj=raw, mode="rb") if raw.peek(2)[:2] == _GZIP_MAGIC else raw
            for number, data in enumerate(stream, 1):
                if number == 1 and data.startswith(_BOM):
                    data = data[len(_BOM):]
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise error(_not_utf8(data, exc.start), name, number) from None
                yield number, text
        except READ_ERRORS as exc:   # a corrupt or truncated gzip stream, or an I/O error while reading
            raise error(_read_failure(exc, what), name, number + 1) from None


def read_text(path: str | os.PathLike, what: str, error: type[InputError]) -> str:
    """The whole text of a UTF-8 file, plain or gzip-compressed (for JSON inputs), checking every byte.

    Args:
        path: The file.
        what: What the file is, for messages (``"options file"``).
        error: The reader's error class.

    Returns:
        The text, a leading byte-order mark dropped.

    Raises:
        error: As :func:`iter_text_lines`: ``<what> not found``, ``cannot read <what>: <reason>``, ``line is not
            UTF-8 text: byte 0xff at column 11; save the file as UTF-8 (file:line)``, ``corrupt gzip data: ...``.
    """
    name = os.fspath(path)
    try:
        with open(name, "rb") as raw:
            data = raw.read()
    except FileNotFoundError:
        raise error(f"{what} not found", name) from None
    except OSError as exc:
        raise error(f"cannot read {what}: {exc.strerror or exc}", name) from None
    if data[:2] == _GZIP_MAGIC:
        try:
            data = gzip.decompress(data)
        except READ_ERRORS as exc:
            raise error(_read_failure(exc, what), name) from None
    data = data[len(_BOM):] if data.startswith(_BOM) else data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        start = data.rfind(b"\n", 0, exc.start) + 1
        raise error(_not_utf8(data[start:exc.start + 4], exc.start - start), name,
                    data.count(b"\n", 0, exc.start) + 1) from None


def _not_utf8(line: bytes, start: int) -> str:
    """What is wrong with ``line``, whose byte ``start`` (0-based) begins no UTF-8 character."""
    column = len(line[:start].decode("utf-8", "replace")) + 1
    return f"line is not UTF-8 text: byte 0x{line[start]:02x} at column {column}; save the file as UTF-8"


def _read_failure(exc: BaseException, what: str) -> str:
    """What a read error means: corrupt gzip data (zlib, truncation, bad header) or an I/O failure."""
    if isinstance(exc, (EOFError, zlib.error, gzip.BadGzipFile)):
        return f"corrupt gzip data: {exc}"
    return f"cannot read {what}: {getattr(exc, 'strerror', None) or exc}"


def iter_csv_rows(path: str | os.PathLike | Path, what: str,
                  error: type[InputError]) -> Iterator[tuple[int, list[str]]]:
    """Stream the records of a CSV file (see :func:`iter_text_lines` for the text rules).

    Args:
        path: The file, plain or gzip-compressed.
        what: What the file is, for messages.
        error: The reader's error class.

    Yields:
        ``(line number, fields)``: the line where the record ends (records span one line but for quoted
        line breaks) and its fields as written. Blank lines give an empty list.

    Raises:
        error: As :func:`iter_text_lines`, or ``malformed CSV: <reason>`` (a NUL byte, an unclosed quote).
    """
    name = os.fspath(path)
    reader = csv.reader((text for _, text in iter_text_lines(name, what, error)), strict=True)
    try:
        for row in reader:
            yield reader.line_num, row
    except csv.Error as exc:
        raise error(f"malformed CSV: {exc}", name, reader.line_num or 1) from None
