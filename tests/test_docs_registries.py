"""Issue 37, item 4: docs/options.rst and docs/policies.rst cannot drift from the code.

The tables of docs/options.rst are read as reStructuredText (docutils' simple-table parser) and
compared with what the code accepts: every key of the options file's JSON schema
(``hdeeprm.config.options.SCHEMA``) has one row and no row names a key the schema refuses; every
default is the one :class:`~hdeeprm.config.options.Options` (or the ``gpu`` and ``gpu_jobs`` blocks'
owners) applies; every name a key accepts (a schema ``enum``, a registry) is written in its row, and
no other name is; every bound a row states is the schema's. docs/policies.rst names every
registered ordering, core selection and start strategy, in registry order where it lists them, and
its action numbers are :mod:`hdeeprm.decision.actions`'. docs/gpus.rst's table of placements lists
the GPU placement registry. A failure names the page, the key and what differs.
"""
from __future__ import annotations

import dataclasses
import functools
import json
import re

import pytest
from docutils.parsers.rst.tableparser import SimpleTableParser
from docutils.statemachine import StringList

from hdeeprm.config.options import OVERRIDE_PATHS, SCHEMA, Options, parse_options
from hdeeprm.decision import actions
from hdeeprm.decision.core_selection import CORE_SELECTIONS
from hdeeprm.decision.gpu_binding import DEFAULT_BINDING_PLACEMENT, DEFAULT_GPU_ESTIMATE, binding_policy
from hdeeprm.decision.gpu_manager import GPU_START_STRATEGIES
from hdeeprm.decision.gpu_scoring import GPU_PLACEMENTS
from hdeeprm.decision.orderings import JOB_ORDERINGS
from hdeeprm.decision.strategies import START_STRATEGIES
from hdeeprm.errors import OptionsError
from hdeeprm.run.gpu_replay import GpuRunConfig
from hdeeprm.simulation.gpu_model import GpuSpeedModel
from hdeeprm.workload.gpu_jobs import DEFAULT_CORES_PER_GPU
from tests.toy import ROOT

DOCS = ROOT / "docs"
#: Section of docs/options.rst -> the block of the options file its table describes (() = the top level).
OPTION_TABLES = {"Top level": (), "``pybatsim``": ("pybatsim",), "``workload``: SWF conversion": ("workload",),
                 "``gpu``: a timed GPU run": ("gpu",), "``gpu_jobs``: GPU jobs beside a CPU run": ("gpu_jobs",)}
#: Defaults no Options field holds: the keys that set ``Options.actions``, and the GPU blocks' keys
#: (their owners' constants; ``first_job`` and ``nb_jobs`` are read with these defaults in
#: hdeeprm/run/gpu_launch.py and hdeeprm/config/build.py).
BLOCK_DEFAULTS = {
    ("pybatsim", "env", "actions", "selection"): list(range(actions.VOID)),
    ("pybatsim", "env", "actions", "void"): False,
    ("pybatsim", "agent", "policy_pair"): None,
    **{("gpu", f.name): (f.default if f.default is not dataclasses.MISSING else f.default_factory())
       for f in dataclasses.fields(GpuRunConfig)},
    ("gpu", "first_job"): 0,
    ("gpu_jobs", "workload_file_path"): "(required)", ("gpu_jobs", "first_job"): 0, ("gpu_jobs", "nb_jobs"): None,
    ("gpu_jobs", "cores_per_gpu"): DEFAULT_CORES_PER_GPU, ("gpu_jobs", "placement"): DEFAULT_BINDING_PLACEMENT,
    ("gpu_jobs", "reference_type"): GpuSpeedModel().reference_type, ("gpu_jobs", "estimate"): DEFAULT_GPU_ESTIMATE,
}
#: Words a default cell may use for a default that is no value: what each stands for.
DEFAULT_WORDS = {"none": (None, "", {}), "all": (None,), "not checked": (None,), "(see below)": ("(block)",),
                 "(required)": ("(required)",), "the original 36 pairs": (list(range(actions.VOID)),)}
#: Names a row may write that are not values of its key (other keys, a refused older value).
OTHER_NAMES = {("clock",): {"gpu", "gpu_jobs"}, ("pybatsim", "log_level"): {"hdeeprm"},
               ("gpu", "start_strategy"): {"blocking"}}


def _sections(page: str) -> dict[str, list[str]]:
    """The lines of each section of ``docs/<page>.rst``, by title (every level)."""
    lines = (DOCS / f"{page}.rst").read_text(encoding="utf-8").splitlines()
    sections, title = {}, ""
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.strip() and len(set(nxt)) == 1 and nxt[0] in "=-~^" and len(nxt) >= len(line.rstrip()):
            title = line.strip()
            sections[title] = []
        elif title:
            sections[title].append(line)
    return sections


def _tables(lines: list[str]) -> list[list[list[str]]]:
    """The simple tables among ``lines``: rows of cells, each cell's text joined into one line (head row first)."""
    tables, i = [], 0
    while i < len(lines):
        if re.fullmatch(r"=+( +=+)+", lines[i]):
            borders, j = 1, i + 1
            while borders < 3:   # top, under the head, bottom; a table without head ends at its second border
                borders += bool(re.fullmatch(r"=+( +=+)+", lines[j]))
                j += 1
                if borders == 2 and (j == len(lines) or not lines[j].strip()):
                    break
            _, head, body = SimpleTableParser().parse(StringList(lines[i:j]))
            tables.append([[" ".join(" ".join(cell[3]).split()) for cell in row] for row in head + body])
            i = j
        else:
            i += 1
    return tables


def _literals(text: str) -> list[str]:
    """The ``literal`` texts of ``text``, without JSON quotes (``"hdeeprm"`` -> hdeeprm)."""
    return [m.strip('"') for m in re.findall(r"``(.+?)``", text)]


def _schema_keys(node: dict, path: tuple[str, ...], top: bool) -> dict[tuple[str, ...], dict]:
    """Key path -> schema of every key a table lists: objects with properties are flattened, except at the top."""
    out = {}
    for key, sub in node["properties"].items():
        if "properties" in sub and not top:
            out.update(_schema_keys(sub, (*path, key), False))
        else:
            out[(*path, key)] = sub
    return out


@functools.cache
def _option_rows() -> dict[tuple[str, ...], tuple[str, str, str]]:
    """Key path -> (key, default, meaning) of every row of docs/options.rst's tables."""
    sections = _sections("options")
    rows = {}
    for title, block in OPTION_TABLES.items():
        assert title in sections, f"docs/options.rst has no section {title!r} (the table of {block or 'top'} keys)"
        tables = _tables(sections[title])
        assert len(tables) == 1, f"docs/options.rst, {title}: expected one table, found {len(tables)}"
        head, *body = tables[0]
        assert head == ["key", "default", "meaning"], f"docs/options.rst, {title}: columns {head}"
        for key, default, meaning in body:
            (name,) = _literals(key)
            rows[(*block, *name.split("."))] = (name, default, meaning)
    return rows


def _schema() -> dict[tuple[str, ...], dict]:
    keys = _schema_keys(SCHEMA, (), True)
    for block in ("pybatsim", "workload", "gpu", "gpu_jobs"):
        keys.update(_schema_keys(SCHEMA["properties"][block], (block,), False))
    return keys


SCHEMA_KEYS = _schema()
FIELDS = {path: name for name, path in OVERRIDE_PATHS.items()}


def _row(path: tuple[str, ...]) -> tuple[str, str, str]:
    rows = _option_rows()
    assert path in rows, f"docs/options.rst lists no key {'.'.join(path)}, which the schema accepts"
    return rows[path]


def test_options_tables_list_every_key_of_the_schema():
    rows = _option_rows()
    assert sorted(set(SCHEMA_KEYS) - set(rows)) == [], "keys the schema accepts that docs/options.rst does not list"
    assert sorted(set(rows) - set(SCHEMA_KEYS)) == [], "keys docs/options.rst lists that the schema refuses"


def _default_value(text: str):
    """The value a default cell writes: a literal's JSON, a leading JSON value, or a :data:`DEFAULT_WORDS` word."""
    if text.startswith("``"):
        return json.loads(text[2:text.index("``", 2)])
    for word, _ in DEFAULT_WORDS.items():
        if text == word or text.startswith(word + ":"):
            return word
    try:
        return json.loads(text.split(" (")[0])
    except json.JSONDecodeError:
        raise AssertionError(f"default {text!r} is neither a value nor one of {list(DEFAULT_WORDS)}") from None


@pytest.mark.parametrize("path", sorted(SCHEMA_KEYS), ids=".".join)
def test_options_defaults_are_the_code_defaults(path):
    _, text, _ = _row(path)
    name = ".".join(path)
    if path in BLOCK_DEFAULTS:
        expected = BLOCK_DEFAULTS[path]
    elif path in FIELDS:
        expected = getattr(Options(), FIELDS[path])
    else:   # a block of its own table or of the gpu runs
        expected = "(block)" if path[0] in ("pybatsim", "workload") else None
    value = _default_value(text)
    accepted = DEFAULT_WORDS[value] if isinstance(value, str) and value in DEFAULT_WORDS else (value,)
    assert expected in accepted, f"docs/options.rst: {name} defaults to {text!r}, the code to {expected!r}"


def _accepted_names(path: tuple[str, ...]) -> tuple[str, ...] | None:
    """The names key ``path`` accepts (its schema enum or its registry), None for a key without a list."""
    if path == ("gpu", "placement"):
        return GPU_PLACEMENTS.names()
    if path == ("gpu_jobs", "placement"):   # the row says "as gpu.placement, but fgd"
        return ("gpu.placement", *_refused_by_mixed_runs())
    enum = SCHEMA_KEYS[path].get("enum")
    return tuple(map(str, enum)) if enum else None


def _refused_by_mixed_runs() -> tuple[str, ...]:
    refused = []
    for name in GPU_PLACEMENTS.names():
        try:
            binding_policy(name)
        except OptionsError:
            refused.append(name)
    return tuple(refused)


@pytest.mark.parametrize("path", [p for p in sorted(SCHEMA_KEYS) if _accepted_names(p)], ids=".".join)
def test_options_rows_name_every_accepted_value_and_no_other(path):
    _, _, meaning = _row(path)
    name = ".".join(path)
    written = {w for w in _literals(meaning) if re.fullmatch(r"[\w.]+( \w+)*", w)} - OTHER_NAMES.get(path, set())
    accepted = set(_accepted_names(path))
    assert sorted(accepted - written) == [], f"docs/options.rst: {name}'s row misses these values"
    assert sorted(written - accepted) == [], f"docs/options.rst: {name}'s row names values the code refuses"


@pytest.mark.parametrize("path", sorted(SCHEMA_KEYS), ids=".".join)
def test_options_bounds_are_the_schema_bounds(path):
    _, _, meaning = _row(path)
    name = ".".join(path)
    schema = SCHEMA_KEYS[path].get("additionalProperties", SCHEMA_KEYS[path])   # a map's bound is its values'
    for sign, bound in re.findall(r"\((≥|>) (\d+(?:\.\d+)?)", meaning):
        key = "minimum" if sign == "≥" else "exclusiveMinimum"
        assert schema.get(key) == float(bound), f"docs/options.rst: {name} says {sign} {bound}, the schema {schema}"


def test_overridable_options_are_listed_by_name():
    text = " ".join(" ".join(_sections("options")["Overriding options by name"]).split())
    listed = _literals(text[text.index("field name"):text.index("each value")])
    assert listed == [name for name in OVERRIDE_PATHS if name != "policy_pair"] + ["policy_pair"]


def test_the_minimal_options_file_gives_the_documented_action_set():
    assert parse_options({}).actions == BLOCK_DEFAULTS[("pybatsim", "env", "actions", "selection")]


def _policy_text(title: str) -> str:
    return " ".join(" ".join(_sections("policies")[title]).split())


def test_policies_page_names_the_original_pairs_and_every_registered_policy():
    pairs = _policy_text("Policy pairs")
    jobs, cores = re.search(r"job-selection policy \((.+?)\) × a core-selection policy \((.+?)\)", pairs).groups()
    assert tuple(_literals(jobs)) == actions.ORIGINAL_JOB_POLICIES
    assert tuple(_literals(cores)) == actions.ORIGINAL_CORE_POLICIES
    named = set(_literals(pairs + _policy_text("Orderings and core selections")))
    assert [n for n in JOB_ORDERINGS.names() if n not in named] == [], "orderings docs/policies.rst does not name"
    assert [n for n in CORE_SELECTIONS.names() if n not in named] == [], "core selections it does not name"


def test_policies_page_action_numbers_are_the_code_numbers():
    text = _policy_text("Orderings and core selections")
    counts = re.search(r"the (\d+) orderings and (\d+) core selections above are numbered (\d+)–(\d+)", text)
    assert tuple(map(int, counts.groups())) == (len(actions.BASE_JOB_POLICIES), len(actions.BASE_CORE_POLICIES),
                                                actions.VOID + 1, actions.BASE_NB_ACTIONS - 1)
    assert f"{actions.BASE_NB_ACTIONS} actions, void included" in text
    numbered = re.findall(r"``([\w-]+)`` = (\d+)", text)
    assert numbered and all(actions.parse_action(name) == int(i) for name, i in numbered), numbered


def test_policies_page_lists_the_start_strategies_in_registry_order():
    listed = re.findall(r"^\* ``(\w+)``", "\n".join(_sections("policies")["Start strategies"]), re.M)
    assert tuple(listed) == START_STRATEGIES.names()
    gpu = re.search(r"``gpu.start_strategy``.*? takes every one of them but (.+?)\.", _policy_text("Start strategies"))
    assert set(_literals(gpu.group(1))) == set(START_STRATEGIES.names()) - set(GPU_START_STRATEGIES)


def test_gpus_page_lists_the_gpu_placements_in_registry_order():
    (table,) = _tables(_sections("gpus")["Placement policies"])
    assert tuple(_literals(row[0])[0] for row in table) == GPU_PLACEMENTS.names()
