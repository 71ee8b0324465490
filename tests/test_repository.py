"""Habits of the code base that a review asked for, kept by tests (ruff keeps the docstrings and print)."""
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted((ROOT / "hdeeprm").rglob("*.py"))


def test_docstrings_cite_nothing_outside_the_repository():
    """Defect 7: sources are public documents or the project's own docs/, never the workplace's notes."""
    outside = re.compile(r"DESIGN(\.md)? section|batsim-golden/README|STYLE\.md|\.\./shared")
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in SOURCES
            for i, line in enumerate(p.read_text().splitlines(), 1) if outside.search(line)]
    assert hits == []
    for doc in ("docs/model.rst", "docs/engine.rst"):
        assert (ROOT / doc).is_file(), doc


def test_counts_are_spelled_nb():
    """Defect 11: one spelling for counts (Batsim's and the original HDeepRM's ``nb_``)."""
    count = re.compile(r"(?<!\w)n_(?:cores|hosts|processors|nodes|jobs|busy|clusters|free|pstates|"
                       r"actions|res|decisions)\b")
    hits = [f"{p.relative_to(ROOT)}:{i}" for p in SOURCES
            for i, line in enumerate(p.read_text().splitlines(), 1) if count.search(line)]
    assert hits == []


def test_no_module_is_over_600_lines():
    """The layout issue: every module can be read in one sitting."""
    sizes = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in SOURCES}
    assert {name: n for name, n in sizes.items() if n > 600} == {}


def test_the_front_door_and_the_docs_are_valid_restructuredtext():
    """README.rst and docs/*.rst render without a docutils warning (a malformed table went unseen once).

    Plain docutils reads README.rst and the pages that use no Sphinx markup; the others (``:doc:``
    links, ``toctree``, autodoc) are read by Sphinx in tests/test_docs.py, which fails on the same
    docutils warnings (``-W``).
    """
    import io

    import pytest

    docutils_core = pytest.importorskip("docutils.core")
    sphinx_markup = re.compile(r":doc:`|^\.\. (toctree|auto\w+|hdeeprm-[\w-]+)::", re.M)
    pages = [ROOT / "README.rst", *sorted((ROOT / "docs").glob("*.rst"))]
    plain = [doc for doc in pages if not sphinx_markup.search(doc.read_text(encoding="utf-8"))]
    assert ROOT / "README.rst" in plain and {"model.rst", "engine.rst"} <= {doc.name for doc in plain}
    for doc in plain:
        stream = io.StringIO()
        docutils_core.publish_doctree(doc.read_text(encoding="utf-8"), source_path=str(doc),
                                      settings_overrides={"warning_stream": stream, "report_level": 2,
                                                          "halt_level": 5})
        assert stream.getvalue() == "", doc.name


def test_every_folder_guide_names_its_modules():
    """Each package's ``__init__`` docstring (its folder guide) names every module and sub-package beside it."""
    import ast

    missing = {}
    for init in sorted((ROOT / "hdeeprm").rglob("__init__.py")):
        guide = ast.get_docstring(ast.parse(init.read_text())) or ""
        names = [p.stem for p in init.parent.glob("*.py") if p.stem != "__init__"]
        names += [p.name for p in init.parent.iterdir() if (p / "__init__.py").is_file()]
        absent = sorted(name for name in names if name not in guide)
        if absent:
            missing[str(init.relative_to(ROOT))] = absent
    assert missing == {}
