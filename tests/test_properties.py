"""Issue 13, property-based: random SWF lines, options and Batsim workloads never crash the readers.

Each reader either returns valid values or raises the project's own error type
(:class:`~hdeeprm.errors.HDeepRMError`), never anything else (Hypothesis,
https://hypothesis.readthedocs.io). The examples are derandomised so that a run is reproducible,
and nothing is written to a ``.hypothesis`` folder.
"""
from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from hdeeprm.config.options import _KEY_PATHS, load_options  # noqa: E402
from hdeeprm.errors import HDeepRMError, OptionsError, WorkloadError  # noqa: E402
from hdeeprm.workload.batsim_json import read_batsim_workload  # noqa: E402
from hdeeprm.workload.convert import swf_to_workload  # noqa: E402
from hdeeprm.reading import MAX_TIME  # noqa: E402
from hdeeprm.workload.swf import (INTEGER_FIELDS, MAX_INTEGER, NB_FIELDS, TIME_FIELDS, UNKNOWN,  # noqa: E402
                                  iter_swf_chunks, parse_swf_line)

SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, database=None)

#: Tokens a trace may hold: plain and edge numbers, and what Python accepts but SWF does not.
TOKEN = st.one_of(
    st.integers(min_value=-2, max_value=10 ** 6).map(str),
    st.integers(min_value=-(10 ** 25), max_value=10 ** 25).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(min_value=0, max_value=1e6).map(lambda x: f"{x:.3f}"),
    st.sampled_from(["-1", "0", "1e300", "1e30", "1e+05", ".5", "1.", "-0", "+2", "5_0", "\u0663", "0x10",
                     "nan", "inf", "-inf", "1e23", "9007199254740992", "4398046511104", "-1.0", "1e-400", "x"]),
)
#: A job line: usually 18 tokens, sometimes fewer or more, with odd blanks.
LINE = st.builds(lambda tokens, sep: sep.join(tokens),
                 st.one_of(st.lists(TOKEN, min_size=NB_FIELDS, max_size=NB_FIELDS),
                           st.lists(TOKEN, min_size=0, max_size=NB_FIELDS + 2)),
                 st.sampled_from([" ", "  ", "\t", " \t "]))
#: A valid job line, so that traces mix good and bad lines.
GOOD_LINE = st.builds(
    lambda n, sub, run, procs: f"{n} {sub} -1 {run} {procs} -1 -1 {procs} -1 -1 1 -1 -1 -1 -1 -1 -1 -1",
    st.integers(1, 10 ** 6), st.integers(0, 10 ** 9), st.integers(0, 10 ** 6), st.integers(1, 300))


def _check_record(record) -> None:
    values = record[:NB_FIELDS]
    assert len(values) == NB_FIELDS
    for i, value in enumerate(values):
        assert isinstance(value, (int, float)) and not isinstance(value, bool)
        assert math.isfinite(value) and (value == UNKNOWN or value >= 0)
        if i in INTEGER_FIELDS:
            assert isinstance(value, int) and value <= MAX_INTEGER
        if i in TIME_FIELDS:
            assert value < MAX_TIME


@pytest.mark.slow
@SETTINGS
@given(LINE)
def test_an_swf_line_parses_to_valid_values_or_raises_a_workload_error(line):
    try:
        record = parse_swf_line(line, "t.swf", 1)
    except WorkloadError as exc:
        assert str(exc).endswith("(t.swf:1)")
        return
    _check_record(record)


@pytest.mark.slow
@SETTINGS
@given(st.lists(st.one_of(LINE, GOOD_LINE, GOOD_LINE), min_size=0, max_size=8))
def test_a_random_trace_converts_or_raises_a_workload_error(lines):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.swf"
        path.write_text("; MaxProcs: 64\n" + "".join(f"{line}\n" for line in lines), encoding="utf-8")
        by_line = []
        try:
            by_line = [parse_swf_line(line, str(path), i + 2) for i, line in enumerate(lines) if line.strip()]
        except WorkloadError as exc:
            with pytest.raises(WorkloadError, match="^" + __import__("re").escape(str(exc)) + "$"):
                list(iter_swf_chunks(path))   # the fast reader says the same
            return
        chunks = [values for values, _ in iter_swf_chunks(path)]
        assert [list(map(float, r[:NB_FIELDS])) for r in by_line] == [row.tolist() for c in chunks for row in c]
        try:
            workload = swf_to_workload(path, nb_cores=64, reference_speed=1e9)
        except WorkloadError as exc:
            assert "must be unique" in str(exc)
            return
        ids = [job.id for job in workload.jobs]
        assert len(set(ids)) == len(ids)
        for job in workload.jobs:
            assert 0 <= job.subtime < MAX_TIME and job.res >= 1 and math.isfinite(job.profile.cpu)
            assert job.profile.cpu >= 0 and math.isfinite(job.requested_time)


JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-5, 10 ** 20), st.floats(allow_nan=False),
                        st.text(max_size=12))
JSON_VALUE = st.recursive(JSON_SCALAR, lambda inner: st.one_of(st.lists(inner, max_size=4),
                                                               st.dictionaries(st.text(max_size=8), inner,
                                                                               max_size=4)), max_leaves=12)
OPTION_KEYS = ["seed", "nb_resources", "nb_jobs", "workload_file_path", "platform_file_path", "contention",
               "pybatsim", "workload"]
PYBATSIM = st.fixed_dictionaries({}, optional={
    "log_level": st.one_of(st.sampled_from(["WARNING", "DEBUG"]), JSON_SCALAR),
    "env": st.fixed_dictionaries({}, optional={
        "objective": st.one_of(st.sampled_from(["makespan", "avg_job_slowdown"]), JSON_SCALAR),
        "actions": st.one_of(JSON_VALUE, st.fixed_dictionaries({"selection": st.lists(
            st.dictionaries(st.sampled_from(["first", "shortest", "bogus"]),
                            st.lists(st.sampled_from(["high_gflops", "low_power", "x"]), max_size=3), max_size=2),
            max_size=3)}, optional={"void": st.booleans()})),
        "observation": JSON_SCALAR, "queue_sensitivity": JSON_SCALAR}),
    "agent": st.fixed_dictionaries({}, optional={
        "type": st.one_of(st.sampled_from(["CLASSIC", "LEARNING"]), JSON_SCALAR),
        "policy_pair": st.one_of(st.sampled_from(["first-high_gflops", "shortest-low_power", "a-b"]), JSON_SCALAR),
        "hidden": JSON_SCALAR, "lr": JSON_SCALAR, "gamma": JSON_SCALAR, "run": JSON_SCALAR}),
})
OPTIONS = st.fixed_dictionaries({}, optional={
    "seed": st.one_of(st.integers(-3, 2 ** 70), JSON_SCALAR),
    "nb_resources": JSON_SCALAR, "nb_jobs": JSON_SCALAR,
    "workload_file_path": st.one_of(st.text(max_size=20), st.sampled_from(["$NOT_SET_VAR/t.swf", "~/t.swf"])),
    "platform_file_path": st.text(max_size=20), "contention": JSON_SCALAR,
    "pybatsim": st.one_of(PYBATSIM, JSON_VALUE),
    "workload": st.one_of(JSON_VALUE, st.fixed_dictionaries({}, optional={
        "actual_work": JSON_SCALAR, "first_job": JSON_SCALAR, "default_mem": JSON_SCALAR,
        "mem_bw_choices": st.lists(JSON_SCALAR, max_size=3), "enforce_walltime": JSON_SCALAR}))})


#: A valid options file, which :data:`MUTATED` changes in a few places (so that the checks after the
#: schema's, e.g. path resolution, see random values too).
VALID = {"seed": 1, "nb_resources": 4, "nb_jobs": 2, "workload_file_path": "w.json",
         "platform_file_path": "p.json", "contention": "hdeeprm",
         "pybatsim": {"log_level": "WARNING",
                      "env": {"objective": "makespan", "observation": "minimal", "queue_sensitivity": 0.05,
                              "actions": {"selection": [{"first": ["high_gflops"]}], "void": False}},
                      "agent": {"type": "LEARNING", "run": "train", "hidden": 8, "lr": 0.01, "gamma": 0.9}},
         "workload": {"actual_work": "runtime", "first_job": 0, "default_mem": 0, "mem_bw_choices": [4, 8],
                      "enforce_walltime": False}}
KEY_PATHS = [*_KEY_PATHS, ("pybatsim", "env", "actions"), ("pybatsim", "agent", "policy_pair"),
             ("pybatsim", "env", "actions", "void")]


def _mutate(changes) -> dict:
    data = json.loads(json.dumps(VALID))
    for path, value in changes:
        node = data
        for key in path[:-1]:
            node = node.setdefault(key, {}) if isinstance(node, dict) else {}
        if isinstance(node, dict):
            node[path[-1]] = value
    return data


PATH_TEXT = st.one_of(st.sampled_from(["$NOT_SET_VAR/x", "a\x00b", "~/x", "", "${HOME}/x"]), st.text(max_size=12))
#: Numbers, edge values first (Hypothesis draws mostly small integers otherwise).
NUMBER = st.one_of(st.sampled_from([2 ** 64, 2 ** 70, 2 ** 64 - 1, -1, 7.0, 7.5, 1e308, math.nan, math.inf, 0, True]),
                   st.integers(-3, 2 ** 70), st.floats(), JSON_SCALAR)


def _value_for(path: tuple[str, ...]):
    """Random values for one key: path-like text for paths, numbers for numbers, anything otherwise."""
    if path[-1].endswith("_path"):
        return PATH_TEXT
    if path[-1] in ("seed", "nb_resources", "nb_jobs", "first_job", "hidden", "lr", "gamma", "queue_sensitivity",
                    "default_mem"):
        return NUMBER
    return st.one_of(JSON_VALUE, st.sampled_from(["none", "hdeeprm", "shortest-low_power", "first-x", "tsafrir"]))


MUTATED = st.lists(st.sampled_from(KEY_PATHS).flatmap(lambda path: st.tuples(st.just(path), _value_for(path))),
                   min_size=1, max_size=3).map(_mutate)


@SETTINGS
@pytest.mark.slow
@given(st.one_of(MUTATED, MUTATED, OPTIONS, st.dictionaries(st.sampled_from(OPTION_KEYS) | st.text(max_size=6),
                                                           JSON_VALUE, max_size=4), JSON_VALUE))
def test_random_options_load_or_raise_an_options_error(data):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "o.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        try:
            options = load_options(path)
        except OptionsError:
            return
    assert isinstance(options.seed, int) and 0 <= options.seed < 2 ** 64
    for name in ("lr", "gamma", "queue_sensitivity", "default_mem"):
        assert math.isfinite(getattr(options, name)), name
    assert all(math.isfinite(x) and x >= 0 for x in options.mem_bw_choices)
    assert options.actions and all(isinstance(a, int) for a in options.actions)


@SETTINGS
@given(st.one_of(st.binary(max_size=40), st.text(max_size=40).map(str.encode)))
def test_random_bytes_as_options_raise_an_options_error(raw):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "o.json"
        path.write_bytes(raw)
        try:
            load_options(path)
        except OptionsError:
            pass


JOB = st.fixed_dictionaries({"id": st.one_of(st.integers(0, 5), st.text(max_size=3), JSON_SCALAR),
                             "subtime": st.one_of(st.integers(0, 100), JSON_SCALAR),
                             "res": st.one_of(st.integers(1, 4), JSON_SCALAR),
                             "profile": st.sampled_from(["d", "p", "missing"])},
                            optional={"walltime": JSON_SCALAR, "mem": JSON_SCALAR, "mem_bw": JSON_SCALAR,
                                      "req_time": JSON_SCALAR, "swf_id": JSON_SCALAR})
WORKLOAD = st.fixed_dictionaries({"jobs": st.lists(JOB, max_size=4), "profiles": st.fixed_dictionaries({
    "d": st.fixed_dictionaries({"type": st.just("delay"), "delay": st.one_of(st.integers(0, 9), JSON_SCALAR)}),
    "p": st.fixed_dictionaries({"type": st.sampled_from(["parallel_homogeneous", "composed"]),
                                "cpu": st.one_of(st.floats(0, 1e12), JSON_SCALAR)},
                               optional={"com": JSON_SCALAR})})}, optional={"nb_res": JSON_SCALAR})


@pytest.mark.slow
@SETTINGS
@given(st.one_of(WORKLOAD, JSON_VALUE))
def test_random_batsim_workloads_read_or_raise_a_workload_error(data):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "w.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        try:
            workload = read_batsim_workload(path)
        except HDeepRMError as exc:
            assert isinstance(exc, WorkloadError)
            return
    ids = [job.id for job in workload.jobs]
    assert len(set(ids)) == len(ids)
    for job in workload.jobs:
        assert 0 <= job.subtime < MAX_TIME and isinstance(job.res, int) and job.res >= 1
        assert job.walltime == -1 or 0 < job.walltime < MAX_TIME
