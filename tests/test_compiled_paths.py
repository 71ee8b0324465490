"""The compiled extensions are listed once (hdeeprm.compiled.COMPILED_PATHS): setup.py, run.json and the docs agree."""
from __future__ import annotations

import json
import runpy

from hdeeprm.cli import launch as launch_cli
from hdeeprm.compiled import COMPILED_PATHS, NOT_BUILT, compiled_paths
from tests.toy import ROOT


def test_every_cython_source_is_listed_once():
    sources = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "hdeeprm").rglob("*.pyx"))
    assert sorted(path.source for path in COMPILED_PATHS) == sources
    assert len({path.key for path in COMPILED_PATHS}) == len(COMPILED_PATHS) == 4


def test_setup_builds_the_listed_extensions():
    setup_text = (ROOT / "setup.py").read_text()
    assert "COMPILED_PATHS" in setup_text
    listed = runpy.run_path(str(ROOT / "hdeeprm" / "compiled.py"))["COMPILED_PATHS"]
    assert [(p.module, p.source) for p in listed] == [(p.module, p.source) for p in COMPILED_PATHS]


def test_the_engine_page_names_every_compiled_path():
    text = (ROOT / "docs" / "engine.rst").read_text()
    section = " ".join(text[text.index("\nCompiled paths\n"):].split())   # lines joined
    for path in COMPILED_PATHS:
        assert f"``{path.source}``" in section, path.source
        assert f"``{path.key}`` (``{path.extension}``)" in section, path.key


def test_run_json_names_every_compiled_path(tmp_path, monkeypatch):
    out = tmp_path / "out"
    assert launch_cli.main([str(ROOT / "examples" / "quickstart.json"), "-q", "-o", str(out)]) == 0
    info = json.loads((out / "run.json").read_text())
    assert {path.key: info[path.key] for path in COMPILED_PATHS} == compiled_paths()
    assert all(info[path.key] in (f"compiled ({path.extension})", NOT_BUILT) for path in COMPILED_PATHS)
    from hdeeprm.simulation import pstates

    monkeypatch.setattr(pstates, "ListPstates", None)
    assert compiled_paths()["host_pstates"] == NOT_BUILT
