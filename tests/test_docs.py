"""Issue 20, item 7: the documentation builds, every page is reachable, the README stays a front door.

* ``docs/`` builds with Sphinx, warnings as errors, and its API page documents every public name;
* every page of ``docs/`` is in the index's table of contents;
* README.rst is at most 250 lines and gives exactly the install and test commands that CI runs;
* every ``hdeeprm-*`` command shown in README.rst or docs/ is accepted by that command's parser,
  and the repository files it names exist.
"""
from __future__ import annotations

import re
import shlex
import subprocess
import sys

import pytest

from tests.toy import ROOT

DOCS = ROOT / "docs"
README = ROOT / "README.rst"
#: The pages a reader sees: the README and every page of docs/.
PAGES = [README, *sorted(DOCS.glob("*.rst"))]
README_MAX_LINES = 250


@pytest.mark.slow
def test_sphinx_builds_the_docs_with_warnings_as_errors(tmp_path):
    pytest.importorskip("sphinx")
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", "-d", str(tmp_path / "doctrees"),
         str(DOCS), str(tmp_path / "html")],
        cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert build.returncode == 0, build.stderr
    pages = {p.stem for p in (tmp_path / "html").glob("*.html")}
    assert {p.stem for p in DOCS.glob("*.rst")} <= pages
    import hdeeprm

    api = (tmp_path / "html" / "api.html").read_text(encoding="utf-8")
    public = [name for name in hdeeprm.__all__ if not name.startswith("__")]
    assert [name for name in public if f'id="hdeeprm.{name}"' not in api] == []


def _toctree_entries(page: str) -> list[str]:
    """The documents listed by the ``toctree`` directives of ``docs/<page>.rst``."""
    entries, inside = [], False
    for line in (DOCS / f"{page}.rst").read_text(encoding="utf-8").splitlines():
        if line.startswith(".. toctree::"):
            inside = True
        elif inside and line and not line[0].isspace():
            inside = False
        elif inside and line.strip() and not line.strip().startswith(":"):
            entries.append(line.strip())
    return entries


def test_every_docs_page_is_reachable_from_the_index():
    reached, todo = set(), ["index"]
    while todo:
        page = todo.pop()
        for entry in _toctree_entries(page):
            assert (DOCS / f"{entry}.rst").is_file(), f"{page}.rst lists {entry}, which does not exist"
            if entry not in reached:
                reached.add(entry)
                todo.append(entry)
    assert {p.stem for p in DOCS.glob("*.rst")} - {"index"} == reached


def _ci_commands() -> dict[str, str]:
    """The command .ci/run runs after each of its ``# --- install`` and ``# --- test`` markers."""
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    commands = {}
    for i, line in enumerate(lines):
        marker = re.match(r"# --- (\w+) \(README\.rst", line)
        if marker:
            commands[marker.group(1)] = next(x for x in lines[i + 1:] if x.strip() and not x.startswith("#"))
    return commands


def test_readme_is_short_and_gives_the_commands_ci_runs():
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES
    commands = _ci_commands()
    assert commands == {
        "install": 'python -m pip install -e ".[test]" && python -m pip install --no-deps pybatsim==3.2.1',
        "test": "ruff check . && python -m pytest -q"}
    for word, command in commands.items():
        at = lines.index("    " + command)          # a literal block line, exactly as CI runs it
        paragraph_end = max(i for i in range(at) if lines[i].strip() and not lines[i].startswith("    "))
        paragraph_start = paragraph_end
        while paragraph_start > 0 and lines[paragraph_start - 1].strip():
            paragraph_start -= 1
        assert lines[paragraph_start].startswith(word.capitalize()), lines[paragraph_start]
        assert lines[paragraph_end].endswith("::"), lines[paragraph_end]


def _shown_commands() -> list[tuple[str, str]]:
    """``(page, command)`` for every ``hdeeprm-*`` command line of the pages (continuations joined).

    Usage synopses (with ``[`` or ``|``) are left out: they are not commands.
    """
    found = []
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            text = lines[i].strip()
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text[:-1] + " " + lines[i].strip()
            i += 1
            if re.match(r"hdeeprm-[a-z]+ ", text) and "[" not in text and "|" not in text:
                found.append((page.name, text.split("  #")[0].strip()))
    return found


def _parse(prog: str, words: list[str]) -> None:
    """Parse ``words`` with ``prog``'s own command-line parser (SystemExit on a rejected line)."""
    from hdeeprm.cli import batsim, evaluate, gpu, launch, platform, serve, sweep, visual, workload

    parsers = {"hdeeprm-launch": launch.parse_args, "hdeeprm-evaluate": evaluate.parse_args,
               "hdeeprm-sweep": sweep.parse_args, "hdeeprm-batsim": batsim.build_parser().parse_args,
               "hdeeprm-visual": visual.build_parser().parse_args, "hdeeprm-gpu": gpu.build_parser().parse_args,
               "hdeeprm-platform": platform.build_parser().parse_args,
               "hdeeprm-workload": workload.build_parser().parse_args,
               "hdeeprm-serve": serve.build_parser().parse_args}
    parsers[prog](words)


def test_every_command_shown_is_accepted_by_its_parser(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)   # the commands are written for the repository root
    commands = _shown_commands()
    assert {c.split()[0] for _, c in commands} >= {"hdeeprm-launch", "hdeeprm-evaluate", "hdeeprm-sweep",
                                                   "hdeeprm-batsim", "hdeeprm-gpu", "hdeeprm-workload",
                                                   "hdeeprm-platform", "hdeeprm-visual", "hdeeprm-check"}
    rejected, missing = [], []
    for page, command in commands:
        prog, *words = shlex.split(command)
        missing += [f"{page}: {w}" for w in words
                    if re.match(r"(examples|platforms|workloads|benchmarks)/", w) and not (ROOT / w).exists()]
        if prog == "hdeeprm-check":
            from hdeeprm.cli import check   # no separate parser: the command itself, on the shipped inputs

            if "$" not in command and check.main(words) != 0:
                rejected.append(f"{page}: {command}")
            continue
        try:
            _parse(prog, words)
        except SystemExit:
            rejected.append(f"{page}: {command}: {capsys.readouterr().err.strip().splitlines()[-1]}")
    assert rejected == []
    assert missing == []


def _schema_keys(schema: dict) -> set[str]:
    """The name of every value of the options file's JSON schema (its leaves, at any depth)."""
    keys = set()
    for name, sub in schema.get("properties", {}).items():
        keys |= _schema_keys(sub) if "properties" in sub else {name}
    return keys


def test_the_docs_name_every_option_environment_and_policy():
    """Each name users can write (options keys, env ids, registered policies) is documented somewhere."""
    from hdeeprm import ENV_ENTRY_POINTS
    from hdeeprm.config.options import SCHEMA
    from hdeeprm.decision.core_selection import CORE_SELECTIONS
    from hdeeprm.decision.gpu_manager import GPU_ORDERINGS
    from hdeeprm.decision.gpu_scoring import GPU_PLACEMENTS
    from hdeeprm.decision.orderings import JOB_ORDERINGS
    from hdeeprm.decision.strategies import START_STRATEGIES
    from hdeeprm.decision.observation import OBSERVATIONS
    from hdeeprm.decision.reward import OBJECTIVES

    options = (DOCS / "options.rst").read_text(encoding="utf-8")
    assert sorted(k for k in _schema_keys(SCHEMA) if not re.search(rf"``([\w.]+\.)?{k}``", options)) == []
    text = " ".join(page.read_text(encoding="utf-8") for page in PAGES)
    names = [*ENV_ENTRY_POINTS, *JOB_ORDERINGS.names(), *CORE_SELECTIONS.names(), *START_STRATEGIES.names(),
             *GPU_PLACEMENTS.names(), *GPU_ORDERINGS.names(), *OBSERVATIONS.names(), *OBJECTIVES.names()]
    assert [name for name in names if f"``{name}``" not in text] == []


def _literals(pattern: str) -> set[tuple[str, str]]:
    """``(page, text)`` of every inline literal of the pages that matches ``pattern`` whole."""
    regex = re.compile(rf"``({pattern})``")
    return {(page.name, m.group(1)) for page in PAGES for m in regex.finditer(page.read_text(encoding="utf-8"))}


def _resolves(dotted: str) -> bool:
    """Whether ``dotted`` (``hdeeprm.module.Name.attr``) imports: its longest module, then attributes."""
    import importlib

    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_file_and_python_name_the_docs_mention_exists():
    """Paths such as ``hdeeprm/decision/backfilling.py`` and names such as ``hdeeprm.config.options.Options``."""
    paths = _literals(r"(?:hdeeprm|tests|benchmarks|examples|platforms|workloads|docs|\.ci)/[\w/.-]*?(?:/|\.\w+)")
    names = _literals(r"hdeeprm(?:\.\w+)+")
    assert len(paths) > 50 and len(names) > 10
    assert sorted(f"{page}: {path}" for page, path in paths if not (ROOT / path).exists()) == []
    assert sorted(f"{page}: {name}" for page, name in names if not _resolves(name)) == []
