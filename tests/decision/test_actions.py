"""Issue 35, part 4: action indices are only ever appended; every index keeps its policy pair."""
from __future__ import annotations

import hashlib
import re

import pytest

from hdeeprm.decision import actions
from hdeeprm.decision.actions import (BASE_CORE_POLICIES, BASE_JOB_POLICIES, BASE_NB_ACTIONS, VOID, action_index,
                                      action_name, action_table, nb_actions, parse_action, policy_pair)
from hdeeprm.decision.core_selection import CORE_SELECTIONS
from hdeeprm.decision.orderings import JOB_ORDERINGS, JobOrdering
from hdeeprm.errors import OptionsError

from tests.toy import ROOT

#: sha256 of the base generation's 120 names, one a line, in index order (the table as frozen).
BASE_TABLE_SHA256 = "bc644bcfc6df0f4ea0379a1a3611bdc6df27be477c6271d1983f6d7982545e7c"


@pytest.fixture
def registries():
    """Let a test register policies: both registries are put back as they were afterwards."""
    saved = [(r, dict(r._entries), dict(r._numbers)) for r in (JOB_ORDERINGS, CORE_SELECTIONS)]
    try:
        yield
    finally:
        for registry, entries, numbers in saved:
            registry._entries.clear()
            registry._entries.update(entries)
            registry._numbers.clear()
            registry._numbers.update(numbers)


def _register_job(name: str) -> None:
    JOB_ORDERINGS.register(name, JobOrdering(name, score=lambda job, now: job.id))


def _register_core(name: str) -> None:
    CORE_SELECTIONS.register(name, "_" + name)


def _check_consistent(table: tuple[str, ...]) -> None:
    """Every index of ``table`` maps to its pair and back, by index and by name."""
    assert len(set(table)) == len(table) == nb_actions() == actions.NB_ACTIONS
    for i, name in enumerate(table):
        assert action_name(i) == name and parse_action(name) == i
        pair = policy_pair(i)
        assert (pair is None) == (i == VOID)
        if pair is not None:
            assert action_index(*pair) == i and "-".join(pair) == name


def test_the_base_generation_is_todays_table():
    """The 120 indices of today keep their pairs: the frozen table, and the indices the issue names."""
    table = action_table()
    assert len(table) == BASE_NB_ACTIONS == nb_actions() == actions.NB_ACTIONS == 120
    assert hashlib.sha256("\n".join(table).encode()).hexdigest() == BASE_TABLE_SHA256
    assert JOB_ORDERINGS.names()[:len(BASE_JOB_POLICIES)] == BASE_JOB_POLICIES
    assert CORE_SELECTIONS.names()[:len(BASE_CORE_POLICIES)] == BASE_CORE_POLICIES
    assert {n: table.index(n) for n in ("first-high_gflops", "void", "random-contiguous", "first-contiguous",
                                        "unicep-contiguous", "smallest_gpu_demand-random",
                                        "shortest_gpu_time-contiguous")} == {
        "first-high_gflops": 7, "void": 36, "random-contiguous": 37, "first-contiguous": 38,
        "unicep-contiguous": 105, "smallest_gpu_demand-random": 106, "shortest_gpu_time-contiguous": 119}
    _check_consistent(table)


def test_a_new_core_selection_then_ordering_only_append(registries):
    """One more core selection, then one more ordering: every old index keeps its pair, the new come after."""
    old = action_table()
    _register_core("foo")
    after_core = action_table()
    assert after_core[:len(old)] == old
    assert after_core[len(old):] == tuple(f"{job}-foo" for job in BASE_JOB_POLICIES)
    assert (action_index("first", "contiguous"), action_index("unicep", "contiguous")) == (38, 105)
    _register_job("bar")
    after_job = action_table()
    assert after_job[:len(after_core)] == after_core
    assert after_job[len(after_core):] == tuple(f"bar-{core}" for core in (*BASE_CORE_POLICIES, "foo"))
    # The module docstring's example.
    assert [action_index(*p) for p in (("random", "foo"), ("first", "foo"), ("shortest_gpu_time", "foo"),
                                       ("bar", "random"), ("bar", "contiguous"), ("bar", "foo"))] == \
        [120, 121, 136, 137, 143, 144]
    doc = re.sub(r"\s+", " ", actions.__doc__)
    assert all(f"``{n}`` = {i}" in doc for n, i in (("random-foo", 120), ("first-foo", 121),
                                                                 ("shortest_gpu_time-foo", 136),
                                                                 ("bar-random", 137), ("bar-foo", 144)))
    _check_consistent(after_job)
    assert actions.JOB_POLICIES[-1] == "bar" and actions.CORE_POLICIES[-1] == "foo"
    assert actions.EXTENDED_PAIRS[-1] == ("bar", "foo")


def test_interleaved_registrations_follow_the_global_order(registries):
    """An ordering first, then a core selection, then another ordering: each appends what it adds, in turn."""
    old = action_table()
    _register_job("bar")
    _register_core("foo")
    _register_job("baz")
    table = action_table()
    n_jobs, n_cores = len(BASE_JOB_POLICIES), len(BASE_CORE_POLICIES)
    assert table[:len(old)] == old
    assert table[len(old):] == (
        *(f"bar-{c}" for c in BASE_CORE_POLICIES),                       # bar: with the 7 cores known then
        *(f"{j}-foo" for j in (*BASE_JOB_POLICIES, "bar")),              # foo: with the 18 orderings known then
        *(f"baz-{c}" for c in (*BASE_CORE_POLICIES, "foo")))             # baz: with the 8 cores
    assert len(table) == BASE_NB_ACTIONS + n_cores + (n_jobs + 1) + (n_cores + 1)
    _check_consistent(table)


def test_the_registries_come_back_after_a_test(registries):
    """The fixture's undo (and the table follows the registries both ways)."""
    _register_core("foo")
    assert nb_actions() == BASE_NB_ACTIONS + len(BASE_JOB_POLICIES)


def test_the_table_after_the_undo():
    assert nb_actions() == BASE_NB_ACTIONS and "foo" not in CORE_SELECTIONS and "bar" not in JOB_ORDERINGS


def test_out_of_range_indices_are_refused():
    for bad in (-1, BASE_NB_ACTIONS):
        with pytest.raises(OptionsError, match=rf"^actions must be in \[0, 119\] \(36 = void\), got {bad}$"):
            policy_pair(bad)
        with pytest.raises(OptionsError, match=rf"^actions must be in \[0, 119\] \(36 = void\), got {bad}$"):
            parse_action(bad)


def test_the_documented_count_is_the_real_count():
    """The module docstring and the docs give the real numbers (the issue's stale 106)."""
    doc = re.sub(r"\s+", " ", actions.__doc__)
    assert f"(:data:`BASE_NB_ACTIONS` = {nb_actions()} actions, void included)" in doc
    assert f"**37-{BASE_NB_ACTIONS - 1}**" in doc and f"**{BASE_NB_ACTIONS} and above**" in doc
    assert f"the {len(BASE_JOB_POLICIES)} job-selection policies" in doc
    assert f"and {len(BASE_CORE_POLICIES)} core selections" in doc
    assert "106 actions" not in doc and "NB_ACTIONS` = 106" not in doc
    for page in ("policies.rst", "model.rst"):
        text = re.sub(r"\s+", " ", (ROOT / "docs" / page).read_text(encoding="utf-8"))
        assert f"{BASE_NB_ACTIONS} actions" in text and "only ever appended" in text, page
