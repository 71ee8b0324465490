"""hdeeprm-sweep's front end: exit codes, one-line errors, -g paths, the shipped sweep file."""
import csv
import importlib.util
from pathlib import Path

import pytest

from hdeeprm.cli.sweep import main, parse_args
from hdeeprm.run.sweep import load_sweep, make_cells

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.json"


@pytest.mark.slow
def test_sweep_command_writes_the_summary(tmp_path, capsys):
    code = main([str(QUICKSTART), "-g", "policy_pair=first-high_gflops,shortest-low_power", "-g", "nb_jobs=30",
                 "-o", str(tmp_path), "-q", "-j", "2"])
    assert code == 0
    out = capsys.readouterr().out
    parquet = ", summary.parquet" if importlib.util.find_spec("pyarrow") else ""   # pyarrow: the test extra
    assert f"2 of 2 run(s) finished; summary in {tmp_path / 'summary.csv'}{parquet} and summary.png" in out
    assert (tmp_path / "summary.parquet").is_file() == bool(parquet) and (tmp_path / "summary.png").is_file()
    with open(tmp_path / "summary.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [r["policy_pair"] for r in rows] == ["first-high_gflops", "shortest-low_power"]
    assert all((tmp_path / r["cell"] / "out_jobs.csv").is_file() for r in rows)


def test_without_pyarrow_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "pyarrow", None)   # as if pyarrow were not installed
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    assert main([str(QUICKSTART), "-g", "nb_jobs=15", "-o", str(tmp_path), "-q"]) == 0
    captured = capsys.readouterr()
    assert f"summary in {tmp_path / 'summary.csv'} and summary.png" in captured.out
    assert captured.err == ("hdeeprm-sweep: summary.parquet not written: it needs pyarrow (pip install pyarrow, "
                            "or pip install -e '.[parquet]')\n")


def test_bad_name_is_one_line_exit_2(tmp_path, capsys):
    assert main([str(QUICKSTART), "-g", "start_stratgy=easy_backfilling", "-o", str(tmp_path), "-q"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and err.startswith("hdeeprm-sweep: error: unknown option 'start_stratgy'")
    assert err.endswith("did you mean 'start_strategy'?) (<command line>)")
    assert not (tmp_path / "summary.csv").exists()


def test_failed_cell_exit_1(tmp_path, capsys):
    assert main([str(QUICKSTART), "-g", "nb_resources=104,7", "-g", "nb_jobs=20", "-o", str(tmp_path), "-q"]) == 1
    captured = capsys.readouterr()
    assert "cell 001_nb_resources=7_nb_jobs=20 failed: OptionsError" in captured.err
    assert "1 of 2 run(s) finished" in captured.out


def test_grid_paths_are_relative_to_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main([str(QUICKSTART), "-g", "platform_file_path=platforms/gaia_mini.json", "-g", "nb_jobs=10",
                 "-o", str(tmp_path), "-q"]) == 0
    assert (tmp_path / "000_platform_file_path=gaia_mini.json_nb_jobs=10" / "out_metrics.json").is_file()


def test_address_needs_ray_backend():
    with pytest.raises(SystemExit):
        parse_args([str(QUICKSTART), "--address", "auto"])


def test_shipped_sweep_file_expands(tmp_path, shared):
    options, grid, source = load_sweep(ROOT / "examples" / "sweep" / "sdsc_sp2_128.json")
    cells = make_cells(options, grid, tmp_path, source)
    assert len(cells) == 3 * 2 * 2
    assert Path(cells[0].options.workload_file_path).name == "SDSC-SP2-1998-4.2-cln.swf.gz"
    assert {c.options.agent_type for c in cells} == {"CLASSIC"}
