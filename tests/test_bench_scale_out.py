"""The scale-out benchmark's copies (``benchmarks/bench_scale_out.py`` ``ceiling`` and ``cpu``), without timing."""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("bench_scale_out", ROOT / "benchmarks" / "bench_scale_out.py")
bench = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench)


def test_copies_start_together_each_with_its_own_number(tmp_path):
    """Three copies: each writes the file named by its number, and each waits for the others to exist."""
    script = ("import sys, time, pathlib\n"
              "d = pathlib.Path(sys.argv[1]); (d / sys.argv[2]).touch()\n"
              "t = time.monotonic() + 30\n"
              "while len(list(d.iterdir())) < 3 and time.monotonic() < t: time.sleep(0.01)\n"
              "sys.exit(0 if len(list(d.iterdir())) == 3 else 1)")
    bench.wall_seconds([sys.executable, "-c", script, str(tmp_path), "{copy}"], copies=3)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0", "1", "2"]


def test_a_failing_copy_stops_the_benchmark_with_its_error():
    with pytest.raises(SystemExit, match=r"failed \(1\): boom"):
        bench.wall_seconds([sys.executable, "-c", "import sys; sys.exit('boom' if sys.argv[1] == '1' else 0)",
                            "{copy}"], copies=2)


def test_the_ceiling_copy_is_the_sweeps_first_cell_on_one_worker():
    args = argparse.Namespace(cells=12, nb_jobs=20000, windows=10, policies=10)
    command = bench.ceiling_command(8, "OUT", args)
    assert command[command.index("-j") + 1] == "1"
    assert f"policy_pair={bench.policy_pairs(1)[0]}" in command and "nb_jobs=20000" in command
