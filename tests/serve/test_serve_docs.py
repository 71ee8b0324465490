"""docs/serve.rst says what the server does: ids, tasks and scenarios from the registries, the server's errors."""
from __future__ import annotations

import re

import hdeeprm
from hdeeprm.serve.sessions import env_tasks
from tests.toy import ROOT

PAGE = (ROOT / "docs" / "serve.rst").read_text(encoding="utf-8")
TOKEN = re.compile(r"``([^`]+)``")


def paragraph(starting: str) -> str:
    """The paragraph of the page that starts with ``starting``."""
    start = PAGE.index(starting)
    end = PAGE.find("\n\n", start)
    return PAGE[start:end if end >= 0 else None]


def task_table() -> dict[str, tuple[str, str]]:
    """The rows of the task table: short id -> (parameter cell, tasks cell, continuation lines joined)."""
    lines = PAGE[PAGE.index("environment                      parameter"):].splitlines()
    rule = lines[1]
    bounds = [m.span() for m in re.finditer(r"=+", rule)]
    rows: dict[str, list[str]] = {}
    current = None
    for line in lines[2:]:
        if line.startswith("="):
            break
        cells = [line[a:b if i < len(bounds) - 1 else None].strip() for i, (a, b) in enumerate(bounds)]
        if cells[0]:
            current = TOKEN.fullmatch(cells[0]).group(1)
            rows[current] = cells[1:]
        else:
            rows[current][-1] += " " + cells[-1]
    return {name: (cells[0], cells[1]) for name, cells in rows.items()}


def test_the_page_lists_every_registered_id_in_registration_order():
    listed = TOKEN.findall(paragraph("``ENV_ID`` is one of the registered ids"))
    assert [t for t in listed if t.startswith("hdeeprm/") and t != "hdeeprm/"] == list(hdeeprm.ENV_ENTRY_POINTS)


def test_the_task_table_has_every_id_with_its_parameter_and_tasks():
    from hdeeprm.env.gpu_scenarios import GPU_SCENARIOS

    rows = task_table()
    assert sorted(rows) == sorted(env_id.split("/", 1)[1] for env_id in hdeeprm.ENV_ENTRY_POINTS)
    for name, (parameter, tasks) in rows.items():
        expected_parameter, expected_tasks = env_tasks("hdeeprm/" + name)
        if expected_parameter is None:
            assert (parameter, tasks) == ("none", "none (a ``task`` is refused)"), name
            continue
        assert parameter == f"``{expected_parameter}``", name
        named = TOKEN.findall(tasks) + (list(GPU_SCENARIOS.names()) if "every scenario" in tasks else [])
        assert sorted(named) == sorted(expected_tasks), name


def test_the_scenario_list_is_the_registrys():
    from hdeeprm.env.gpu_scenarios import GPU_SCENARIOS, SPLITS
    from hdeeprm.env.gpu_provisioning import PROVISIONING_TASKS

    text = paragraph("The scenarios of ``GPU_SCENARIOS``:")
    scenarios = text[:text.index("(the ``test-*`` ones held out)")]
    assert TOKEN.findall(scenarios)[1:] == list(GPU_SCENARIOS.names())
    assert all(f"``{split}``" in text for split in SPLITS) and all(f"``{t}``" in text for t in PROVISIONING_TASKS)


def test_the_error_table_matches_the_servers_statuses():
    """The statuses the tests see (test_serve.py, test_serve_edges.py) are the ones the page lists."""
    table = PAGE[PAGE.index("status  when"):]
    statuses = re.findall(r"^(\d{3}) ", table[:table.index("Over HTTP")], flags=re.M)
    assert statuses == ["422", "400", "404", "409", "503"]
    assert "a step before the first reset (WebSocket)" in table
    assert '"status": 409' in table and "reset the session before stepping it" in table
