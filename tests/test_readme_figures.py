"""Every figure README.rst quotes is printed by a command it names; the cheap ones are rerun here.

The expensive ones (the ATC'23 figure, the learning runs) are printed by the ``benchmarks/`` commands the README
names beside them; the first test checks that each paragraph quoting a figure names such a command, a test or a
docs page that gives one.
"""
from __future__ import annotations

import importlib.util
import re

import pytest

from tests.conftest import ROOT

README = (ROOT / "README.rst").read_text(encoding="utf-8")
#: The README's words with every run of white space as one space (sentences wrap anywhere).
WORDS = " ".join(README.split())
#: A figure: a number with a decimal point (1,232.06, 95.21, 0.776), or a count of matching jobs (500/500).
FIGURE = re.compile(r"\b\d[\d,]*\.\d+\b|\b\d+/\d+\b")
#: What may name the source of a figure: a command, a benchmark, a test module or a docs page.
SOURCE = re.compile(r"``(hdeeprm-[a-z]+[^`]*|python benchmarks/[^`]+|tests/[^`]+|docs/[a-z]+\.rst)``")


def _section(title: str) -> str:
    start = README.index(title + "\n" + "-" * len(title))
    end = README.find("\n-", start + 2 * len(title) + 2)
    end = README.rfind("\n\n", start, end) if end > 0 else len(README)
    return README[start:end]


def _paragraphs_with_figures(text: str) -> list[str]:
    """Top-level bullets (``* ...``) of ``text``, or its blank-line paragraphs when it has none, with a figure."""
    parts = re.split(r"\n(?=\* )", text) if "\n* " in text else text.split("\n\n")
    return [part for part in parts if FIGURE.search(part)]


def _load_benchmark(name: str):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _readme_number(text: str) -> float:
    return float(text.replace(",", ""))


def test_every_quoted_figure_names_the_command_that_prints_it():
    paragraphs = [*_paragraphs_with_figures(_section("Results")),
                  *_paragraphs_with_figures(_section("CPU and GPU jobs together"))]
    assert len(paragraphs) >= 4, paragraphs
    for paragraph in paragraphs:
        assert SOURCE.search(paragraph), f"a README paragraph quotes figures but names no command:\n{paragraph}"


def test_rlschedulers_figures_are_the_tests_and_the_benchmarks():
    from tests.run.test_rlscheduler import PUBLISHED

    sdsc = PUBLISHED[("SDSC-SP2-1998-4.2-cln.swf.gz", 10000)]
    best = {backfilling: min(sdsc[backfilling][0]) for backfilling in (False, True)}
    published_rl = _load_benchmark("rlscheduler_ppo").PUBLISHED_RL
    learning = WORDS[WORDS.index("*In RLScheduler's protocol*"):WORDS.index("*Where it does not win.*")]
    number = r"(\d[\d,]*\.\d+)"
    without = re.search(rf"without backfilling, against their published agent's {number} and the best heuristic's "
                        rf"{number}", learning)
    with_ = re.search(rf"with backfilling, against {number} and {number}", learning)
    assert (_readme_number(without[1]), _readme_number(without[2])) == (published_rl[False], best[False])
    assert (_readme_number(with_[1]), _readme_number(with_[2])) == (published_rl[True], best[True])


@pytest.mark.slow
def test_the_gpu_headroom_figures_are_what_the_benchmark_prints(shared, capsys):
    assert _load_benchmark("gpu_learning").main(["headroom"]) == 0
    printed = {line.split()[0]: line.split()[-1].rstrip("%") for line in capsys.readouterr().out.splitlines()
               if line.startswith("test-")}
    quoted = re.search(r"at most ([\d.]+) % and ([\d.]+) % on two generated scenarios, ([\d.]+) % on the third, "
                       r"([\d.]+) % on the openb window and ([\d.]+) % on the Philly one", WORDS)
    assert quoted, "the README's headroom sentence changed: update this test with it"
    assert list(quoted.groups()) == [printed[name] for name in
                                     ("test-medium-gen", "test-hard-gen", "test-easy-gen", "test-openb",
                                      "test-hard-philly")]


@pytest.mark.slow
def test_the_mixed_examples_figures_under_easy_are_what_the_run_prints(shared, tmp_path):
    from hdeeprm.config.options import load_options
    from hdeeprm.run.launch import launch

    options = load_options(ROOT / "examples" / "mixed_kth_philly_easy.json")
    assert options.start_strategy == "easy_backfilling"
    metrics = launch(options, outdir=tmp_path, quiet=True).metrics[0]
    section = _section("CPU and GPU jobs together")
    section = " ".join(section.split())
    gpu = re.search(r"GPU jobs' mean bounded slowdown: ([\d.,]+) under EASY.*?\(mean wait ([\d.]+) h", section)
    cpu = re.search(r"CPU jobs' ([\d.,]+),", section)
    assert _readme_number(gpu[1]) == round(metrics["gpu_jobs_mean_bounded_slowdown"], 1)
    assert _readme_number(gpu[2]) == round(metrics["gpu_jobs_mean_waiting_time"] / 3600, 1)
    assert _readme_number(cpu[1]) == round(metrics["cpu_jobs_mean_bounded_slowdown"], 1)
