"""Issue 37, item 4: the environment ids, bounds and reset options of the docs cannot drift from the code.

docs/envs.rst is read as reStructuredText (docutils) and its tables compared with the registry
(``hdeeprm.ENV_ENTRY_POINTS``) and with what each environment does: the id table names every registered
id once with its module and class; the bounds table states the constants the checks use; the reset
options table lists, per id, the keys ``reset(options=...)`` accepts (read back from the environment's
own refusal of an unknown key). Every ``hdeeprm/...-vN`` id written in the README or a docs page is a
registered one, and the page's count of environments is the registry's.
"""
from __future__ import annotations

import re
import warnings

import docutils.core
import docutils.nodes
import pytest
from gymnasium.envs.registration import load_env_creator

import hdeeprm
from hdeeprm.arguments import MAX_SLOTS
from hdeeprm.env.gpu_placement import MAX_NODES
from hdeeprm.errors import OptionsError
from hdeeprm.reading import MAX_GPUS_PER_NODE
from tests.toy import ROOT

ENVS_PAGE = ROOT / "docs" / "envs.rst"
PAGES = [ROOT / "README.rst", *sorted((ROOT / "docs").glob("*.rst"))]
#: Data-free inputs of each environment, for reading its reset options back.
SMALL = {hdeeprm.ENV_ID: {"nb_jobs": 5}, hdeeprm.JOB_SLOT_ENV_ID: {"nb_jobs": 5},
         hdeeprm.BACKFILL_SLOT_ENV_ID: {"nb_jobs": 5}, hdeeprm.RLSCHEDULER_ENV_ID: {"length": 64},
         hdeeprm.GPU_PLACEMENT_ENV_ID: {"scenario": "easy-gen"}, hdeeprm.GPU_JOB_SLOT_ENV_ID: {"scenario": "easy-gen"},
         hdeeprm.GPU_PROVISIONING_ENV_ID: {}, hdeeprm.GPU_PROVISIONING_V1_ENV_ID: {}}
NUMBERS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def _tables(section: str) -> list[list[list[str]]]:
    """The tables of docs/envs.rst's section ``section`` (its title's text): rows of cell texts, header first."""
    quiet = {"report_level": 5, "halt_level": 5, "doctitle_xform": False}   # Sphinx's roles are unknown here
    tree = docutils.core.publish_doctree(ENVS_PAGE.read_text(encoding="utf-8"), settings_overrides=quiet)
    for node in tree.findall(docutils.nodes.section):
        if node[0].astext() == section:
            return [[[entry.astext().strip() for entry in row.findall(docutils.nodes.entry)]
                     for row in table.findall(docutils.nodes.row)]
                    for table in node.findall(docutils.nodes.table)
                    if table.parent is node or table.parent.parent is node]
    raise AssertionError(f"docs/envs.rst has no section '{section}'")


def test_the_id_table_is_the_registry():
    (table,) = _tables("Gymnasium environments")[:1]
    assert table[0][:3] == ["id", "module", "class"]
    rows = {row[0]: f"{row[1]}:{row[2]}" for row in table[1:]}
    assert len(rows) == len(table) - 1, "an id is listed twice in docs/envs.rst"
    assert rows == hdeeprm.ENV_ENTRY_POINTS


def test_the_page_counts_the_registered_environments():
    text = ENVS_PAGE.read_text(encoding="utf-8")
    assert f"registers {NUMBERS[len(hdeeprm.ENV_ENTRY_POINTS)]} environments" in text


def test_every_id_the_readme_and_the_docs_write_is_registered():
    written = {(page.name, m.group(0)) for page in PAGES
               for m in re.finditer(r"hdeeprm/[A-Za-z][\w-]*-v\d+", page.read_text(encoding="utf-8"))}
    assert sorted((page, env_id) for page, env_id in written if env_id not in hdeeprm.ENV_ENTRY_POINTS) == []


@pytest.mark.slow
def test_the_bounds_table_states_the_checked_bounds():
    table = _tables("Arguments and reset options")[0]
    stated = {row[0]: row[2] for row in table[1:]}
    for name, bound in (("nb_slots", MAX_SLOTS), ("slots", MAX_SLOTS), ("gpu_slots", MAX_GPUS_PER_NODE),
                        ("max_nodes", MAX_NODES)):
        assert re.match(rf"1 to {bound}\b", stated[name]), (name, stated[name])


def _reset_keys(env_id: str) -> list[str]:
    """The keys ``env_id`` accepts, read from its refusal of an unknown one."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        env = load_env_creator(hdeeprm.ENV_ENTRY_POINTS[env_id])(**SMALL[env_id])
    with pytest.raises(OptionsError) as refused:
        env.reset(options={"no such key": 1})
    message = str(refused.value)
    if message == f"{env_id}: this environment accepts no reset options, got {{'no such key': 1}}":
        return []
    allowed = re.fullmatch(rf"{re.escape(env_id)}: unknown reset option 'no such key' \(allowed: (.*)\)", message)
    assert allowed, message
    return allowed.group(1).split(", ")


def test_the_reset_options_table_lists_what_each_environment_accepts():
    table = _tables("Arguments and reset options")[1]
    assert table[0][:2] == ["id", "keys"]
    documented = {row[0]: [] if row[1] == "(none)" else row[1].split(", ") for row in table[1:]}
    assert sorted(documented) == sorted(hdeeprm.ENV_ENTRY_POINTS)
    assert {env_id: _reset_keys(env_id) for env_id in documented} == documented
