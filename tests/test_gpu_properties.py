"""Issue 22, property-based: random openb node and pod lists, Philly tables and GPU type libraries never crash.

As for the SWF reader (tests/test_properties.py): each GPU reader either returns valid values (integers in
their documented bounds, finite times below 2**42 s, unique non-empty names, known GPU models) or raises the
project's own error for that input, whose message ends with the file (and line). Derandomised, no database.
"""
from __future__ import annotations

import gzip
import json
import math
import tempfile
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import event, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hdeeprm.errors import HDeepRMError, PlatformError, WorkloadError  # noqa: E402
from hdeeprm.platform.gpu_types import RANGES, GpuTypeLibrary, load_gpu_library  # noqa: E402
from hdeeprm.platform.openb import MILLI, NODE_COLUMNS, read_openb_nodes  # noqa: E402
from hdeeprm.reading import (MAX_GPUS_PER_JOB, MAX_GPUS_PER_NODE, MAX_MEMORY_MIB, MAX_NODE_CPU_MILLI,  # noqa: E402
                             MAX_TIME)
from hdeeprm.workload.gpu_jobs import from_openb, from_philly  # noqa: E402
from hdeeprm.workload.openb import POD_COLUMNS, SHORT_POD_COLUMNS, read_openb_pods  # noqa: E402
from hdeeprm.workload.philly import PHILLY_COLUMNS, read_philly  # noqa: E402

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None)
LIBRARY = load_gpu_library()

#: Numbers as a file may write them: plain, edge, and what Python's int()/float() take but the rules refuse.
NUMBER = st.one_of(
    st.integers(0, 10).map(str), st.integers(-2, 200_000).map(str), st.integers(-(10 ** 25), 10 ** 25).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr), st.floats(0, 1e7).map(lambda x: f"{x:.1f}"),
    st.sampled_from(["", " 8 ", "0", "1000", "500", "64", "65", "1e20", "1e300", "inf", "-inf", "nan", "+2", "5_0",
                     "\u0663", "0x10", "-0", "9007199254740992", "4398046511104", "1.", ".5", "x", "2.0",
                     "9" * 5000]))
#: GPU model cells: known names and aliases, mis-cased and unknown ones, lists with empty names.
MODEL = st.one_of(st.sampled_from(["", "T4", "V100M16", "v100m16", "V100M61", "A100 SXM4 80GB", "G2", "T4|A10",
                                   "T4||A10", "|", "P100 ", "\u00e9"]), st.text(max_size=6))
NAME = st.one_of(st.sampled_from(["n1", "n2", "n1", " ", "", "n\u00e9"]), st.text(max_size=4))
STAMP = st.one_of(st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)).map(
    lambda d: d.strftime("%Y-%m-%d %H:%M:%S").zfill(19)), st.sampled_from(["2017-13-09 00:00:00", "", "x",
                                                                        "\u0662017-10-09 07:01:55"]))


def _csv(cells: list[str]) -> str:
    """One CSV line; cells with a comma, a quote or a line break are quoted as CSV does."""
    def quote(cell: str) -> str:
        return '"' + cell.replace('"', '""') + '"' if any(c in cell for c in ',"\r\n') else cell
    return ",".join(quote(c) for c in cells)


def _write(tmp: str, header: tuple[str, ...], rows: list[list[str]], extra: bytes, gz: int, bom: bool) -> Path:
    """The file: ``gz`` 0 plain, 1 gzip, more: gzip with its last ``gz - 1`` bytes cut (corrupt)."""
    path = Path(tmp) / ("t.csv.gz" if gz else "t.csv")
    data = (b"\xef\xbb\xbf" if bom else b"") + ("\n".join([",".join(header), *map(_csv, rows)]) + "\n").encode()
    data += extra
    path.write_bytes(gzip.compress(data, mtime=0)[:-gz + 1 or None] if gz else data)
    return path


def _raised_properly(exc: HDeepRMError, kind: type[HDeepRMError], path: Path) -> None:
    event(f"refused: {str(exc).split(' (')[0].split(',')[0].split(' got ')[0][:40]}")
    assert isinstance(exc, kind), repr(exc)
    message = str(exc)
    assert "\n" not in message and (f"({path}:" in message or message.endswith(f"({path})")), message


ROWS = {"extra": st.one_of(st.just(b""), st.just(b""), st.binary(max_size=12)),
        "gz": st.one_of(st.integers(0, 1), st.integers(0, 1), st.integers(2, 40)),
        "bom": st.booleans()}


@SETTINGS
@pytest.mark.slow
@given(rows=st.lists(st.one_of(
    st.tuples(NAME, NUMBER, NUMBER, NUMBER, MODEL).map(list),
    st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.integers(1, 128_000).map(str),
              st.integers(1, 2 ** 20).map(str), st.integers(0, 8).map(str), st.sampled_from(["T4", "G2", ""])).map(
        list),
    st.lists(NUMBER, max_size=6)), max_size=6), **ROWS)
def test_random_node_lists_read_to_valid_nodes_or_raise_a_platform_error(rows, extra, gz, bom):
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(tmp, NODE_COLUMNS, rows, extra, gz, bom)
        try:
            cluster = read_openb_nodes(path)
            event("read")
        except HDeepRMError as exc:
            _raised_properly(exc, PlatformError, path)
            return
    assert len(set(cluster.names)) == cluster.nb_nodes and all(n.strip() == n and n for n in cluster.names)
    for column in (cluster.cpu_milli, cluster.memory_mib, cluster.gpu_count, cluster.gpu_model):
        assert column.dtype == np.int64 and column.shape == (cluster.nb_nodes,)
    assert ((cluster.cpu_milli >= 1) & (cluster.cpu_milli <= MAX_NODE_CPU_MILLI)).all()
    assert ((cluster.memory_mib >= 1) & (cluster.memory_mib <= MAX_MEMORY_MIB)).all()
    assert ((cluster.gpu_count >= 0) & (cluster.gpu_count <= MAX_GPUS_PER_NODE)).all()
    assert ((cluster.gpu_model < 0) == (cluster.gpu_count == 0)).all()
    assert all(model in LIBRARY for model in cluster.models)


@SETTINGS
@pytest.mark.slow
@given(rows=st.lists(st.one_of(
    st.tuples(NAME, NUMBER, NUMBER, NUMBER, NUMBER, MODEL, st.sampled_from(["LS", ""]),
              st.sampled_from(["Running", "Pending"]), NUMBER, NUMBER, NUMBER).map(list),
    st.tuples(st.sampled_from(["p", "q", "r", "s"]), st.integers(0, 120_000).map(str), st.integers(0, 2 ** 20).map(str),
              st.sampled_from(["0,0", "1,500", "1,1000", "2,1000", "8,1000"]), st.sampled_from(["", "T4", "G2|A10"]),
              st.integers(0, 10 ** 7).map(str), st.integers(0, 10 ** 7).map(str), st.sampled_from(["", "5"])).map(
        lambda r: [r[0], r[1], r[2], *r[3].split(","), r[4], "LS", "Running", r[5], r[6], r[7]]),
    st.lists(NUMBER, max_size=12)), max_size=6), short=st.booleans(), **ROWS)
def test_random_pod_lists_read_to_valid_pods_or_raise_a_workload_error(rows, short, extra, gz, bom):
    header = SHORT_POD_COLUMNS if short else POD_COLUMNS
    rows = [row[:5] for row in rows] if short else rows
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(tmp, header, rows, extra, gz, bom)
        try:
            pods = read_openb_pods(path)
            event("read")
        except HDeepRMError as exc:
            _raised_properly(exc, WorkloadError, path)
            return
    assert len(set(pods.names)) == len(pods) and all(n.strip() == n and n for n in pods.names)
    assert ((pods.cpu_milli >= 0) & (pods.cpu_milli <= MAX_NODE_CPU_MILLI)).all()
    assert ((pods.memory_mib >= 0) & (pods.memory_mib <= MAX_MEMORY_MIB)).all()
    num, milli = pods.num_gpu, pods.gpu_milli
    assert (((num == 0) & (milli == 0)) | ((num == 1) & (milli >= 1) & (milli <= MILLI))
            | ((num > 1) & (num <= MAX_GPUS_PER_NODE) & (milli == MILLI))).all()
    assert all(model and model in LIBRARY for spec in pods.gpu_spec for model in spec)
    if short:
        assert pods.times is None
        return
    known = pods.times[~np.isnan(pods.times)]
    assert ((known >= 0) & (known < MAX_TIME)).all()
    jobs = from_openb(pods)
    assert np.isfinite(jobs.submit).all() and (jobs.duration > 0).all() and (jobs.duration < MAX_TIME).all()


@SETTINGS
@pytest.mark.slow
@given(rows=st.lists(st.one_of(
    st.tuples(STAMP, NUMBER, NUMBER, NUMBER, st.text(max_size=3)).map(list),
    st.tuples(STAMP, st.integers(0, 10 ** 7).map(str), st.integers(0, 128).map(str),
              st.floats(0, 1e8).map(repr), st.just("vc")).map(list),
    st.lists(NUMBER, max_size=6)), max_size=6), **ROWS)
def test_random_philly_tables_read_to_valid_jobs_or_raise_a_workload_error(rows, extra, gz, bom):
    with tempfile.TemporaryDirectory() as tmp:
        path = _write(tmp, PHILLY_COLUMNS, rows, extra, gz, bom)
        try:
            table = read_philly(path)
            event("read")
        except HDeepRMError as exc:
            _raised_properly(exc, WorkloadError, path)
            return
    assert ((table.num_gpus >= 1) & (table.num_gpus <= MAX_GPUS_PER_JOB)).all()
    assert ((table.duration > 0) & (table.duration < MAX_TIME)).all() and np.isfinite(table.gpu_time).all()
    jobs = from_philly(table)
    assert ((jobs.submit >= 0) & (jobs.submit < MAX_TIME)).all() and math.isfinite(jobs.clock)


GOOD = {"vendor": "X", "arch": "Y", "form_factor": "PCIe", "fp64": 1.0, "fp64_tensor": None, "fp32": 2.0,
        "tf32": None, "fp16": 8.0, "memory": 8, "mem_bw": 300, "tdp": 100, "idle_power": 10, "idle_estimate": True,
        "mig_instances": 0, "sharing": ["time-slicing"], "interconnect": "PCIe", "aliases": ["MYGPU"],
        "_source": "vendor datasheet"}
JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-5, 10 ** 20), st.floats(allow_nan=False),
                        st.text(max_size=8), st.lists(st.text(max_size=4), max_size=2))


@SETTINGS
@pytest.mark.slow
@given(st.dictionaries(st.one_of(st.sampled_from(["My GPU", "T4", "P100", " ", "", "_doc"]), st.text(max_size=5)),
                       st.one_of(st.lists(st.tuples(st.sampled_from(sorted(GOOD)), JSON_SCALAR), max_size=3).map(
                           lambda changes: {**GOOD, **dict(changes)}), JSON_SCALAR), max_size=3))
def test_random_gpu_type_libraries_load_valid_types_or_raise_a_platform_error(entries):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "gpus.json"
        path.write_text(json.dumps(entries), encoding="utf-8")
        try:
            library = GpuTypeLibrary.load([path])
            event("read")
        except HDeepRMError as exc:
            _raised_properly(exc, PlatformError, path)
            return
    for name, gpu in library.types.items():
        assert name.strip() and gpu.name == name and all(alias.strip() for alias in gpu.aliases)
        for key, (low, high, _unit) in RANGES.items():
            value = getattr(gpu, key)
            assert value is None or low < value <= high
    assert all(library[alias].name == name for alias, name in library.aliases.items() if alias not in library.types)
