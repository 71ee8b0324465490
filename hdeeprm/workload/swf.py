"""Reading and writing Standard Workload Format (SWF) traces.

SWF is the format of the Parallel Workloads Archive (PWA), version 2.2, described at
https://www.cs.huji.ac.il/labs/parallel/workload/swf.html. A trace is a text file,
plain or gzip-compressed:

* header lines start with ``;``; most are ``; Key: value`` pairs (``MaxNodes``,
  ``MaxProcs``, ``UnixStartTime``, ...), some continue the previous value on the next
  line, some are free comments (the archive asks users to keep the acknowledgements);
* every other non-blank line is one job: exactly 18 whitespace-separated numbers,
  ``-1`` meaning "unknown". Some logs have decimals in the time and memory fields.

The reader is streamed: :func:`iter_swf` yields one light :class:`SWFRecord` (a named
tuple of 18 numbers plus the line number) per job line and never holds the trace in
memory. Malformed input raises :class:`hdeeprm.errors.WorkloadError` naming the file,
the line and the field. :func:`write_swf` writes records (and a header) back, so that
``iter_swf(write_swf(records))`` gives the same records.
"""
from __future__ import annotations

import gzip
import io
import math
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, NamedTuple

import numpy as np

from hdeeprm.errors import WorkloadError
from hdeeprm.reading import DIGITS as _DIGITS
from hdeeprm.reading import MAX_INTEGER, MAX_TIME, MAX_TIME_TEXT, READ_ERRORS
from hdeeprm.reading import NUMBER as _NUMBER

#: Names of the 18 SWF fields, in file order (SWF v2.2, fields 1..18).
FIELD_NAMES: tuple[str, ...] = (
    "job number",              # 1
    "submit time",             # 2  seconds since the log start (UnixStartTime)
    "wait time",               # 3  seconds
    "run time",                # 4  seconds (wall clock)
    "allocated processors",    # 5
    "average CPU time used",   # 6  seconds per processor
    "used memory",             # 7  KB per processor
    "requested processors",    # 8
    "requested time",          # 9  seconds (user estimate)
    "requested memory",        # 10 KB per processor
    "status",                  # 11 1 completed, 0 failed, 5 cancelled, 2-4 partial
    "user id",                 # 12
    "group id",                # 13
    "executable number",       # 14
    "queue number",            # 15
    "partition number",        # 16
    "preceding job number",    # 17
    "think time",              # 18 seconds from the preceding job's end
)
#: Number of fields of an SWF job line.
NB_FIELDS = len(FIELD_NAMES)
#: 0-based indices of the fields that must be integers (counts, identifiers, status).
INTEGER_FIELDS: frozenset[int] = frozenset({0, 4, 7, 10, 11, 12, 13, 14, 15, 16})
#: 0-based indices of the fields in seconds (submit, wait, run, average CPU, requested and
#: think times): each must be below :data:`~hdeeprm.reading.MAX_TIME`.
TIME_FIELDS: frozenset[int] = frozenset({1, 2, 3, 5, 8, 17})
#: The value SWF uses for "unknown".
UNKNOWN = -1

_KEY_LINE = re.compile(r"^([A-Za-z][A-Za-z0-9_]*)\s*:\s*(.*?)\s*$")


class SWFRecord(NamedTuple):
    """One SWF job line: the 18 fields in file order, plus where it came from.

    Every field is an ``int``, or a ``float`` when the trace wrote a decimal; ``-1``
    means unknown. Units follow the SWF definition: times in seconds, memory in KB
    per processor.

    Attributes:
        job_number: Field 1, job number (>= 1 in PWA logs).
        submit_time: Field 2, submit time in seconds since the log start.
        wait_time: Field 3, wait time in seconds.
        run_time: Field 4, run time (wall clock) in seconds.
        allocated_processors: Field 5, number of allocated processors.
        average_cpu_time: Field 6, average CPU time used per processor, in seconds.
        used_memory: Field 7, used memory per processor, in KB.
        requested_processors: Field 8, number of requested processors.
        requested_time: Field 9, requested (estimated) run time in seconds.
        requested_memory: Field 10, requested memory per processor, in KB.
        status: Field 11, 1 completed, 0 failed, 5 cancelled (2-4: partial executions).
        user_id: Field 12, user identifier.
        group_id: Field 13, group identifier.
        executable_number: Field 14, application identifier.
        queue_number: Field 15, queue identifier.
        partition_number: Field 16, partition identifier.
        preceding_job_number: Field 17, job this one depends on.
        think_time: Field 18, seconds between the preceding job's end and this submission.
        line: 1-based line number in the file it was read from (0 when built in memory).
    """

    job_number: int
    submit_time: float
    wait_time: float
    run_time: float
    allocated_processors: int
    average_cpu_time: float
    used_memory: float
    requested_processors: int
    requested_time: float
    requested_memory: float
    status: int
    user_id: int
    group_id: int
    executable_number: int
    queue_number: int
    partition_number: int
    preceding_job_number: int
    think_time: float
    line: int = 0

    @property
    def fields(self) -> tuple[float, ...]:
        """The 18 SWF fields without the line number."""
        return tuple(self[:NB_FIELDS])


@dataclass
class SWFHeader:
    r"""The ``;`` header of an SWF trace.

    Attributes:
        fields: ``Key -> value`` of the ``; Key: value`` lines, in file order. A key
            given several times (``Note``, ``Queue``) and continuation lines (a ``;``
            line starting with blanks right after a key line) are joined with ``"\\n"``.
        lines: Every header line as written, without its leading ``;`` (acknowledgements
            and comments included), so that a writer can reproduce the header.
    """

    fields: dict[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)

    def get_int(self, key: str) -> int | None:
        """The value of ``key`` as an integer, or None when absent or not an integer.

        Args:
            key: A header key, e.g. ``"MaxProcs"`` or ``"UnixStartTime"``.

        Returns:
            The integer value (first line of a multi-line value), or None.
        """
        value = self.fields.get(key)
        if value is None:
            return None
        try:
            return int(value.split("\n", 1)[0].split()[0])
        except (ValueError, IndexError):
            return None

    @property
    def max_procs(self) -> int | None:
        """``MaxProcs``: the machine's number of processors, or None when absent.

        This is the unit of the job fields (allocated and requested processors, fields 5
        and 8). ``MaxNodes`` is deliberately not used in its place: it counts nodes, and
        on machines with SMP nodes (several processors per node) it is smaller than the
        number of processors (see :attr:`max_nodes`).
        """
        return self.get_int("MaxProcs")

    @property
    def max_nodes(self) -> int | None:
        """``MaxNodes``: the machine's number of nodes, or None when absent."""
        return self.get_int("MaxNodes")

    def add_line(self, text: str) -> None:
        """Record one header line (the text after ``;``) and update :attr:`fields`.

        A key line is ``Key: value`` indented by at most one blank (``; MaxProcs: 128``);
        a line indented by two blanks or more right after a key line (or after another
        such line) continues the value; any other line is a free comment.

        Args:
            text: The line without its leading ``;`` and without the line break.
        """
        self.lines.append(text)
        body = text.lstrip()
        indent = len(text) - len(body)
        match = _KEY_LINE.match(body) if indent <= 1 else None
        if match:
            key, value = match.group(1), match.group(2)
            old = self.fields.get(key)
            self.fields[key] = value if old is None else old + "\n" + value
            self._last_key = key
        elif body and indent >= 2 and self._last_key:
            self.fields[self._last_key] += "\n" + body.rstrip()
        else:
            self._last_key = ""

    _last_key: str = field(default="", init=False, repr=False, compare=False)

    @classmethod
    def from_fields(cls, fields: dict[str, object], comments: Iterable[str] = ()) -> SWFHeader:
        """Build a header from ``Key -> value`` pairs (e.g. for a generated trace).

        Args:
            fields: Header keys and values; values are written with ``str``.
            comments: Free comment lines written after the key lines.

        Returns:
            The header, whose :attr:`lines` are ``" Key: value"`` then the comments.
        """
        header = cls()
        for key, value in fields.items():
            for i, part in enumerate(str(value).split("\n")):
                header.add_line(f" {key}: {part}" if i == 0 else f"   {part}")
        for comment in comments:
            header.add_line(f" {comment}" if comment else "")
        return header


def open_swf(path: str | os.PathLike) -> IO[str]:
    """Open an SWF trace for reading text, decompressing gzip when needed.

    Gzip is recognised by its magic bytes (``1f 8b``), whatever the file name.

    Args:
        path: The trace, plain or gzip-compressed (``.swf`` or ``.swf.gz``).

    Returns:
        A text stream (UTF-8, a leading byte-order mark skipped, undecodable bytes
        replaced) the caller must close.

    Raises:
        WorkloadError: The file does not exist or cannot be read.
    """
    name = os.fspath(path)
    try:
        raw = open(name, "rb")  # noqa: SIM115 - returned to the caller
    except FileNotFoundError:
        raise WorkloadError("SWF trace not found", path=name) from None
    except OSError as exc:
        raise WorkloadError(f"cannot read SWF trace: {exc.strerror}", path=name) from None
    magic = raw.peek(2)[:2] if hasattr(raw, "peek") else b""
    stream: IO[bytes] = gzip.GzipFile(fileobj=raw, mode="rb") if magic == b"\x1f\x8b" else raw
    return io.TextIOWrapper(stream, encoding="utf-8-sig", errors="replace")


def _number(token: str, index: int, path: str, line: int) -> float:
    """Parse and check one field of a job line (slow path, only for decimals and errors)."""
    name = f"field {index + 1} ({FIELD_NAMES[index]})"
    integral = index in INTEGER_FIELDS
    value: float = float(token) if _NUMBER.fullmatch(token) else math.nan
    if not math.isfinite(value) or (integral and not value.is_integer()):
        kind = "an integer" if integral else "a number"
        raise WorkloadError(f"{name} must be {kind}, got {token!r}", path, line, FIELD_NAMES[index])
    if _DIGITS.fullmatch(token):
        value = int(token)
    elif integral:
        value = int(value)
    if value < 0 and value != UNKNOWN:
        raise WorkloadError(f"{name} must be -1 (unknown) or >= 0, got {token}", path, line,
                            FIELD_NAMES[index])
    if integral and value > MAX_INTEGER:
        raise WorkloadError(f"{name} must be an integer <= {MAX_INTEGER} (2**53 - 1), got {token!r}",
                            path, line, FIELD_NAMES[index])
    if index in TIME_FIELDS and not value < MAX_TIME:
        raise WorkloadError(f"{name} must be {MAX_TIME_TEXT}, got {token!r}", path, line,
                            FIELD_NAMES[index])
    return value


def _parse_decimal_line(tokens: list[str], path: str, line: int) -> list[float]:
    """Parse a job line that has decimals; integer fields become ``int``."""
    try:
        values: list[float] = list(map(float, tokens))
    except ValueError:
        return [_number(tok, i, path, line) for i, tok in enumerate(tokens)]  # raises
    for i, value in enumerate(values):
        integral = i in INTEGER_FIELDS
        if (value < 0 and value != UNKNOWN) or not value < MAX_TIME or (integral and not value.is_integer()):
            values[i] = _number(tokens[i], i, path, line)  # raises, unless a large integer count
        elif integral:
            values[i] = int(value)
    return values


def parse_swf_line(text: str, path: str = "<string>", line: int = 0) -> SWFRecord:
    """Parse one SWF job line.

    Args:
        text: The line (without the ``;`` of comments: call it on job lines only).
        path: File name used in error messages.
        line: 1-based line number used in error messages and stored in the record.

    Returns:
        The record; integer-looking tokens become ``int``, decimals ``float``.

    Raises:
        WorkloadError: Not exactly 18 fields, a field that is not an SWF number (or not an
            integer for counts and identifiers, see :data:`INTEGER_FIELDS`), a negative
            value other than -1, an integer above :data:`MAX_INTEGER` or a time (see
            :data:`TIME_FIELDS`) not below :data:`~hdeeprm.reading.MAX_TIME`. The
            message names the field, e.g.
            ``field 5 (allocated processors) must be an integer, got 'x' (trace.swf:12)``.
    """
    tokens = text.split()
    if len(tokens) != NB_FIELDS:
        count = len(tokens)
        if count < NB_FIELDS:
            missing = FIELD_NAMES[count]
            raise WorkloadError(f"expected {NB_FIELDS} fields, got {count}: field {count + 1} "
                                f"({missing}) is missing", path, line, missing)
        raise WorkloadError(f"expected {NB_FIELDS} fields, got {count}", path, line)
    if not text.isascii() or "_" in text or "+" in text:   # not SWF's syntax, unless 1e+05
        return SWFRecord(*(_number(tok, i, path, line) for i, tok in enumerate(tokens)), line)
    try:
        values: list[float] = list(map(int, tokens))  # fast path: the usual all-integer line
    except ValueError:
        values = _parse_decimal_line(tokens, path, line)
    else:
        if min(values) < UNKNOWN or max(values) >= MAX_TIME:
            values = [_number(token, i, path, line) for i, token in enumerate(tokens)]  # raises if bad
    return SWFRecord(*values, line)


def iter_swf(path: str | os.PathLike, header: SWFHeader | None = None) -> Iterator[SWFRecord]:
    """Stream the job records of an SWF trace, in file order.

    Args:
        path: The trace, plain or gzip-compressed.
        header: If given, every ``;`` line read is added to it (see
            :meth:`SWFHeader.add_line`); it is complete once the header is past.

    Yields:
        One :class:`SWFRecord` per job line (blank lines are ignored).

    Raises:
        WorkloadError: Missing file or malformed line (see :func:`parse_swf_line`).
    """
    name = os.fspath(path)
    with open_swf(name) as stream:
        for number, text in _job_lines(stream, header, name):
            yield parse_swf_line(text, name, number)


def _job_lines(stream: IO[str], header: SWFHeader | None, path: str) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each job line; ``;`` lines go to ``header``."""
    number = 0
    try:
        for number, text in enumerate(stream, 1):
            stripped = text.lstrip()
            if not stripped:
                continue
            if stripped[0] == ";":
                if header is not None:
                    header.add_line(stripped[1:].rstrip("\r\n"))
                continue
            yield number, stripped
    except READ_ERRORS as exc:  # corrupt or truncated gzip stream
        raise WorkloadError(f"cannot read SWF trace after line {number}: {exc}", path) from None


def _parse_chunk(texts: list[str], numbers: list[int], path: str) -> np.ndarray:
    """Parse job lines at once with numpy; re-parse line by line to report an error."""
    joined = "".join(texts)
    values = None
    if joined.isascii() and "_" not in joined and "+" not in joined:   # else not SWF: line by line
        try:
            values = np.loadtxt(texts, dtype=np.float64, ndmin=2, comments=None)
        except ValueError:
            values = None
    if values is not None and values.shape[1] == NB_FIELDS:
        integral = values[:, _INTEGER_INDEX]
        if (np.isfinite(values).all() and ((values >= 0) | (values == UNKNOWN)).all()
                and (integral == np.floor(integral)).all() and (integral <= MAX_INTEGER).all()
                and (values[:, _TIME_INDEX] < MAX_TIME).all()):
            return values
    records = [parse_swf_line(text, path, number) for text, number in zip(texts, numbers)]
    return np.array([record[:NB_FIELDS] for record in records], dtype=np.float64).reshape(-1, NB_FIELDS)


_INTEGER_INDEX = np.array(sorted(INTEGER_FIELDS))
_TIME_INDEX = np.array(sorted(TIME_FIELDS))


#: Job lines of the first block of :func:`iter_swf_chunks` (the blocks then double).
FIRST_CHUNK_LINES = 4096


def iter_swf_chunks(path: str | os.PathLike, header: SWFHeader | None = None,
                    chunk_lines: int = 65536) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """Stream an SWF trace as numpy blocks: the fast path for converters and statistics.

    Same validation and messages as :func:`iter_swf`, at a fraction of its cost.

    Args:
        path: The trace, plain or gzip-compressed.
        header: If given, every ``;`` line read is added to it.
        chunk_lines: Maximum number of job lines per block. Blocks start at
            :data:`FIRST_CHUNK_LINES` lines and double up to it, so a reader that stops
            early (the first ``nb_jobs`` of a long trace) parses little more than it keeps.

    Yields:
        ``(values, lines)``: ``values`` of shape ``(k, 18)``, dtype float64, the SWF
        fields in file order (units as in SWF: seconds, KB per processor); ``lines`` of
        shape ``(k,)``, dtype int64, their 1-based line numbers. ``k >= 1``.

    Raises:
        WorkloadError: Missing file or malformed line (see :func:`parse_swf_line`).
    """
    name = os.fspath(path)
    texts: list[str] = []
    numbers: list[int] = []
    size = min(FIRST_CHUNK_LINES, chunk_lines)
    with open_swf(name) as stream:
        for number, text in _job_lines(stream, header, name):
            texts.append(text)
            numbers.append(number)
            if len(texts) >= size:
                yield _parse_chunk(texts, numbers, name), np.array(numbers, dtype=np.int64)
                texts, numbers = [], []
                size = min(2 * size, chunk_lines)
    if texts:
        yield _parse_chunk(texts, numbers, name), np.array(numbers, dtype=np.int64)


def check_unique_job_numbers(numbers: np.ndarray, source: str | os.PathLike | None) -> None:
    """Refuse a job number (SWF field 1) given twice, naming the lines of both.

    Args:
        numbers: Job numbers, shape ``(n,)``, any real dtype (pass only the known ones: ``-1`` is "unknown").
        source: The trace they were read from; when it is a file, it is read again (on the error path only)
            to find the two lines.

    Raises:
        WorkloadError: ``field 1 (job number) must be unique, got 7 again (first on line 3) (trace.swf:9)``.
    """
    ordered = np.sort(numbers)
    repeated = ordered[1:][ordered[1:] == ordered[:-1]]
    if not repeated.size:
        return
    number = int(repeated[0])
    source = os.fspath(source) if source else ""
    lines: list[int] = []
    if source and os.path.isfile(source):   # the error path only: find where it is
        for values, where in iter_swf_chunks(source):
            lines += where[values[:, 0] == number].tolist()
            if len(lines) >= 2:
                break
    if len(lines) >= 2:
        raise WorkloadError(f"field 1 (job number) must be unique, got {number} again (first on line "
                            f"{lines[0]})", source, lines[1], "job number")
    raise WorkloadError(f"field 1 (job number) must be unique, got {number} twice", source or None,
                        field="job number")


def read_swf_header(path: str | os.PathLike) -> SWFHeader:
    """Read only the header (the leading ``;`` lines) of an SWF trace.

    Args:
        path: The trace, plain or gzip-compressed.

    Returns:
        The header; empty when the trace has none.

    Raises:
        WorkloadError: The file does not exist or cannot be read.
    """
    header = SWFHeader()
    with open_swf(path) as stream:
        try:
            for text in stream:
                stripped = text.lstrip()
                if stripped and stripped[0] != ";":
                    break
                if stripped:
                    header.add_line(stripped[1:].rstrip("\r\n"))
        except READ_ERRORS as exc:  # corrupt or truncated gzip stream
            raise WorkloadError(f"cannot read SWF trace header: {exc}", os.fspath(path)) from None
    return header


def read_swf(path: str | os.PathLike) -> tuple[SWFHeader, list[SWFRecord]]:
    """Read a whole SWF trace (header and every record) into memory.

    Prefer :func:`iter_swf` for large traces.

    Args:
        path: The trace, plain or gzip-compressed.

    Returns:
        ``(header, records)``.

    Raises:
        WorkloadError: Missing file or malformed line.
    """
    header = SWFHeader()
    records = list(iter_swf(path, header))
    return header, records


def _format_value(value: float) -> str:
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return str(value)


#: Column widths used by :func:`format_swf_record` (right-aligned, like PWA logs).
_WIDTHS = (6, 9, 7, 7, 5, 7, 7, 5, 7, 7, 2, 4, 4, 4, 3, 3, 5, 5)


def format_swf_record(record: SWFRecord | Iterable[float]) -> str:
    """Format 18 SWF fields as one job line (no line break).

    Args:
        record: An :class:`SWFRecord` (its line number is ignored) or 18 numbers.

    Returns:
        The fields right-aligned in PWA-like columns; integral floats are written
        as integers, other floats with the shortest exact representation.

    Raises:
        ValueError: ``record`` does not have 18 fields.
    """
    values = tuple(record)[:NB_FIELDS]
    if len(values) != NB_FIELDS:
        raise ValueError(f"an SWF record has {NB_FIELDS} fields, got {len(values)}")
    return " ".join(_format_value(v).rjust(w) for v, w in zip(values, _WIDTHS))


def write_swf(path: str | os.PathLike, records: Iterable[SWFRecord | Iterable[float]],
              header: SWFHeader | None = None) -> int:
    """Write records (and a header) as an SWF trace.

    A path ending in ``.gz`` is written gzip-compressed (with a zero modification time
    so that the bytes only depend on the content). The file is written atomically
    (:func:`hdeeprm.files.atomic_write`): a full disk or an interrupt leaves the
    previous file, never half a trace.

    Args:
        path: The file to create or overwrite.
        records: Records or tuples of 18 numbers, written in the given order.
        header: Header lines written first, each as ``;`` + the line.

    Returns:
        The number of job lines written.

    Raises:
        OSError: The file cannot be written.
        ValueError: A record does not have 18 fields.
    """
    from hdeeprm.files import atomic_write

    name = os.fspath(path)
    count = 0
    with atomic_write(name, binary=True) as dest:   # an interrupted or failed write leaves no partial trace
        # the gzip header names the destination (as GzipFile(name) would), not the temporary file
        raw: IO[bytes] = gzip.GzipFile(name, "wb", mtime=0, fileobj=dest) if name.endswith(".gz") else dest
        with io.TextIOWrapper(raw, encoding="utf-8", newline="\n") as out:
            if header is not None:
                for text in header.lines:
                    out.write(f";{text}\n")
            for record in records:
                out.write(format_swf_record(record))
                out.write("\n")
                count += 1
    return count
