"""SWF reader and writer: header, records, gzip, round trips, located errors."""
from __future__ import annotations

import gzip
import re
import shutil

import numpy as np
import pytest

from hdeeprm.errors import WorkloadError
from hdeeprm.workload.swf import (FIELD_NAMES, SWFHeader, SWFRecord, format_swf_record, iter_swf,
                                  iter_swf_chunks, parse_swf_line, read_swf, read_swf_header,
                                  write_swf)
from tests.workload.trace_paths import HPC2N, KTH, LUBLIN, NASA, SDSC, needs_traces


GOOD = "1 0 5 100 4 -1 -1 4 3600 -1 1 3 1 -1 -1 -1 -1 -1"


def _trace(tmp_path, *job_lines: str, name: str = "t.swf"):
    path = tmp_path / name
    path.write_text("; Version: 2.2\n; MaxProcs: 8\n" + "".join(line + "\n" for line in job_lines))
    return path


# --- header -----------------------------------------------------------------------------------

@needs_traces
def test_kth_header_keys_continuations_and_raw_lines():
    header = read_swf_header(KTH)
    assert header.get_int("MaxProcs") == 100
    assert header.get_int("MaxNodes") == 100
    assert header.get_int("UnixStartTime") == 843480031
    assert header.max_procs == 100
    assert header.fields["Computer"] == "IBM SP2"
    assert header.fields["Information"] == ("http://www.pdc.kth.se/\n"
                                            "http://www.cs.huji.ac.il/labs/parallel/workload/")
    # "Note" appears twice; the second continues over three indented lines.
    assert header.fields["Note"] == ("uses the EASY scheduler\nTHIS IS A CLEANED VERSION OF THE LOG!\n"
                                     "The filter used to produce it was\njob<=14 (14 jobs removed)")
    # zcat KTH | grep -c '^;'  -> 24 header lines, kept verbatim (acknowledgements included)
    assert len(header.lines) == 24
    assert header.lines[3] == " Acknowledge: Lars Malinowsky"


@needs_traces
def test_sdsc_repeated_queue_key_and_copyright_continuation():
    header = read_swf_header(SDSC)
    assert header.fields["Queue"].split("\n") == [
        "0  interactive", "1  express", "2  high", "3  normal", "4  low", "5  standby", "6  No_Class"]
    assert header.fields["Copyright"].startswith("JOBLOG Repository Data Usage Agreement:\n"
                                                 "This Job Trace Repository")
    assert header.get_int("TimeZone") == -28800
    assert header.get_int("Computer") is None
    assert header.get_int("Missing") is None


def test_max_procs_is_never_taken_from_max_nodes():
    header = SWFHeader.from_fields({"MaxNodes": 120, "MaxProcs": 240})   # SMP nodes: 2 processors each
    assert (header.max_procs, header.max_nodes) == (240, 120)
    nodes_only = SWFHeader.from_fields({"MaxNodes": 256})
    assert (nodes_only.max_procs, nodes_only.max_nodes) == (None, 256)
    assert (SWFHeader().max_procs, SWFHeader().max_nodes) == (None, None)


@needs_traces
def test_a_real_header_with_max_nodes_only():
    header = read_swf_header(LUBLIN)   # zcat -f lublin_256.swf | grep -c 'MaxProcs' -> 0
    assert (header.max_procs, header.max_nodes) == (None, 256)


def test_header_from_fields_round_trips_through_add_line():
    header = SWFHeader.from_fields({"Version": "2.2", "MaxProcs": 16, "Note": "a\nb"}, comments=["x"])
    assert header.lines == [" Version: 2.2", " MaxProcs: 16", " Note: a", "   b", " x"]
    assert header.fields == {"Version": "2.2", "MaxProcs": "16", "Note": "a\nb"}
    assert header.max_procs == 16


# --- records ----------------------------------------------------------------------------------

@needs_traces
@pytest.mark.parametrize("path, count", [
    # Data lines counted with: zcat -f FILE | awk '!/^;/ && NF>0' | wc -l
    (KTH, 28476), (SDSC, 59715), (NASA, 18239), (LUBLIN, 10000),
    # The HPC2N slice has 3170 job lines (its README's 3,171 counts the trailing blank line).
    (HPC2N, 3170),
])
def test_number_of_records_per_trace(path, count):
    assert sum(len(values) for values, _ in iter_swf_chunks(path)) == count


@needs_traces
def test_first_kth_record_exact():
    record = next(iter_swf(KTH))
    assert record == SWFRecord(15, 599850, 192180, 3477, 4, -1, -1, 4, 53940, -1, 1, 12, 12,
                               -1, -1, -1, -1, -1, 25)
    assert record.line == 25  # 24 header lines before it
    assert record.fields == (15, 599850, 192180, 3477, 4, -1, -1, 4, 53940, -1, 1, 12, 12,
                             -1, -1, -1, -1, -1)


@needs_traces
def test_hpc2n_decimals_kept_and_integer_fields_stay_int():
    record = next(r for r in iter_swf(HPC2N) if r.job_number == 7047)
    # grep -n '^ *7047 ' HPC2N-2002-first3171.swf -> line 3077:
    # 7047 4851035 15519 452 18 401.81 57344 16 43200 972800 1 6 1 -1 -1 1 -1 -1
    assert record.line == 3077
    assert record.average_cpu_time == 401.81
    assert record.allocated_processors == 18 and isinstance(record.allocated_processors, int)
    assert record.requested_memory == 972800


@needs_traces
def test_chunks_and_records_agree_with_line_numbers():
    records = list(iter_swf(HPC2N))
    blocks = list(iter_swf_chunks(HPC2N, chunk_lines=1000))
    assert [len(v) for v, _ in blocks] == [1000, 1000, 1000, 170]
    values = np.concatenate([v for v, _ in blocks])
    lines = np.concatenate([n for _, n in blocks])
    np.testing.assert_array_equal(values, np.array([r.fields for r in records], dtype=float))
    assert lines.tolist() == [r.line for r in records]


@needs_traces
def test_gzip_and_plain_give_the_same_records(tmp_path):
    gz = tmp_path / "hpc2n.swf.gz"
    with open(HPC2N, "rb") as src, gzip.open(gz, "wb") as dst:
        shutil.copyfileobj(src, dst)
    disguised = tmp_path / "hpc2n_gzipped.swf"  # gzip recognised by magic, not by name
    shutil.copy(gz, disguised)
    plain_header, plain = read_swf(HPC2N)
    for path in (gz, disguised):
        header, records = read_swf(path)
        assert records == plain
        assert header.lines == plain_header.lines


@needs_traces
@pytest.mark.parametrize("name", ["copy.swf", "copy.swf.gz"])
def test_round_trip_write_read(tmp_path, name):
    header, records = read_swf(HPC2N)
    out = tmp_path / name
    assert write_swf(out, records, header) == 3170
    header2, records2 = read_swf(out)
    assert [r.fields for r in records2] == [r.fields for r in records]
    assert header2.fields == header.fields
    assert header2.lines == header.lines


def test_format_record_integral_floats_and_decimals():
    text = format_swf_record((1, 0.0, 2.5, 100, 4, 401.81, -1, 4, 3600.0, -1, 1, 3, 1, -1, -1, -1, -1, -1))
    assert text.split() == ["1", "0", "2.5", "100", "4", "401.81", "-1", "4", "3600", "-1", "1",
                            "3", "1", "-1", "-1", "-1", "-1", "-1"]
    with pytest.raises(ValueError, match=f"^{re.escape('an SWF record has 18 fields, got 3')}$"):
        format_swf_record((1, 2, 3))


def test_blank_lines_ignored_and_comments_anywhere(tmp_path):
    path = tmp_path / "t.swf"
    path.write_text(f"; A: 1\n\n{GOOD}\n; late comment\n   \n{GOOD}\n")
    header = SWFHeader()
    records = list(iter_swf(path, header))
    assert [r.line for r in records] == [3, 6]
    assert header.lines == [" A: 1", " late comment"]


# --- errors -----------------------------------------------------------------------------------

@pytest.mark.parametrize("line, message, field", [
    ("1 0 5 100 4 -1 -1 4", "expected 18 fields, got 8: field 9 (requested time) is missing",
     "requested time"),
    ("1 0 5 100 4 -1 -1 4 3600 -1 1 3 1 -1 -1 -1 -1",
     "expected 18 fields, got 17: field 18 (think time) is missing", "think time"),
    (GOOD + " 7", "expected 18 fields, got 19", None),
    ("1 0 5 100 x -1 -1 4 3600 -1 1 3 1 -1 -1 -1 -1 -1",
     "field 5 (allocated processors) must be an integer, got 'x'", "allocated processors"),
    ("1 0 5 1h -1 -1 -1 4 3600 -1 1 3 1 -1 -1 -1 -1 -1",
     "field 4 (run time) must be a number, got '1h'", "run time"),
    ("1 0 5 100 4 -1 -1 -4 3600 -1 1 3 1 -1 -1 -1 -1 -1",
     "field 8 (requested processors) must be -1 (unknown) or >= 0, got -4", "requested processors"),
    ("1 0 5 100 4 -1 -1 4 3600 -1 1 3 1 -1 -1 -1 -1 -2.5",
     "field 18 (think time) must be -1 (unknown) or >= 0, got -2.5", "think time"),
    ("1 0 5 100 4.5 -1 -1 4 3600 -1 1 3 1 -1 -1 -1 -1 -1",
     "field 5 (allocated processors) must be an integer, got '4.5'", "allocated processors"),
    ("1 0 5 nan 4 -1 -1 4 3600 -1 1 3 1 -1 -1 -1 -1 -1",
     "field 4 (run time) must be a number, got 'nan'", "run time"),
])
def test_bad_line_names_file_line_and_field(tmp_path, line, message, field):
    path = _trace(tmp_path, GOOD, line)
    expected = f"{message} ({path}:4)"
    with pytest.raises(WorkloadError, match=f"^{re.escape(expected)}$") as info:
        list(iter_swf(path))
    assert (info.value.path, info.value.line, info.value.field) == (str(path), 4, field)
    with pytest.raises(WorkloadError, match=f"^{re.escape(expected)}$"):  # the fast block reader says the same
        list(iter_swf_chunks(path))


def test_missing_file(tmp_path):
    path = tmp_path / "nope.swf"
    for read in (lambda p: list(iter_swf(p)), read_swf_header, lambda p: list(iter_swf_chunks(p))):
        with pytest.raises(WorkloadError, match=f"^{re.escape(f'SWF trace not found ({path})')}$"):
            read(path)


def test_field_names_follow_the_swf_definition():
    assert len(FIELD_NAMES) == 18
    assert FIELD_NAMES[4] == "allocated processors" and FIELD_NAMES[8] == "requested time"
    assert parse_swf_line(GOOD).requested_time == 3600


@needs_traces
def test_truncated_gzip_names_the_last_line_read(tmp_path):
    path = tmp_path / "cut.swf.gz"
    path.write_bytes(KTH.read_bytes()[:100_000])
    for read in (iter_swf, iter_swf_chunks):
        message = (f"cannot read SWF trace after line 6705: Compressed file ended before the end-of-stream "
                   f"marker was reached ({path})")
        with pytest.raises(WorkloadError, match=f"^{re.escape(message)}$"):
            list(read(path))


def test_truncated_last_line_of_a_plain_file(tmp_path):
    path = tmp_path / "cut.swf"
    path.write_text(f"{GOOD}\n{GOOD[:12]}")  # the file ends in the middle of a line
    message = f"expected 18 fields, got 5: field 6 (average CPU time used) is missing ({path}:2)"
    with pytest.raises(WorkloadError, match=f"^{re.escape(message)}$"):
        list(iter_swf(path))
