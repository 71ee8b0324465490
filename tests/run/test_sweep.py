"""hdeeprm.run.sweep: grid expansion, runs equal to hdeeprm-launch's, backends, bad overrides."""
import csv
import json
from pathlib import Path

import pytest

from hdeeprm.config.options import load_options, parse_overrides
from hdeeprm.decision.actions import action_index
from hdeeprm.errors import OptionsError
from hdeeprm.run.launch import launch
from hdeeprm.run.sweep import (cell_name, expand_grid, load_sweep, make_cells, parse_grid_args, read_metrics,
                               run_sweep)

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart.json"
#: A small grid on the quickstart inputs: 2 policy pairs x 2 start strategies, 60 jobs.
GRID = {"policy_pair": ["first-high_gflops", "shortest-low_power"],
        "start_strategy": ["head_of_line", "easy_backfilling"], "nb_jobs": [60]}


@pytest.fixture(scope="module")
def quickstart():
    return load_options(QUICKSTART)


def _csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def _timeless(path: Path) -> list[dict]:
    """The summary rows without their wall times (the only column that differs between two runs)."""
    rows = _csv(path)
    assert all(float(row.pop("wall_time")) > 0 for row in rows)
    return rows


def test_grid_expands_first_key_slowest():
    cells = expand_grid({"a": [1, 2], "b": ["x", "y", "z"]})
    assert cells == [{"a": a, "b": b} for a in (1, 2) for b in ("x", "y", "z")]
    assert list(cells[0]) == ["a", "b"]
    assert expand_grid({}) == [{}]
    with pytest.raises(OptionsError, match="'a' has no value"):
        expand_grid({"a": []})


def test_grid_args_read_json_values_and_text():
    assert parse_grid_args(["seed=1,2", "policy_pair=first-high_gflops", "lr=0.5", "enforce_walltime=true"]) == {
        "seed": [1, 2], "policy_pair": ["first-high_gflops"], "lr": [0.5], "enforce_walltime": [True]}
    for bad in (["seed"], ["=1"], ["seed=1", "seed=2"]):
        with pytest.raises(OptionsError, match="-g"):
            parse_grid_args(bad)


def test_cells_apply_the_overrides(quickstart, tmp_path):
    cells = make_cells(quickstart, GRID, tmp_path)
    assert len(cells) == 4 and [c.index for c in cells] == [0, 1, 2, 3]
    last = cells[3]
    assert last.values == {"policy_pair": "shortest-low_power", "start_strategy": "easy_backfilling", "nb_jobs": 60}
    assert last.options.actions == [action_index("shortest", "low_power")]
    assert last.options.start_strategy == "easy_backfilling" and last.options.nb_jobs == 60
    assert last.options.seed == quickstart.seed   # untouched options stay the file's
    assert last.outdir == (tmp_path.resolve()
                           / "003_policy_pair=shortest-low_power_start_strategy=easy_backfilling_nb_jobs=60")
    assert len({c.outdir for c in cells}) == 4
    assert (cell_name(7, {"workload_file_path": "/a/b/KTH.swf.gz", "x": "a b/c"})
            == "007_workload_file_path=KTH.swf.gz_x=a_b_c")


@pytest.mark.parametrize("changes, message", [
    ({"sed": 1}, "unknown option 'sed' .*did you mean 'seed'"),
    ({"start_strategy": "easy_backfiling"}, "did you mean 'easy_backfilling'"),
    ({"policy_pair": "first-high_gflop"}, "did you mean 'high_gflops'"),
    ({"seed": "x"}, "seed: 'x' is not of type 'integer'"),
])
def test_bad_overrides_are_one_line_options_errors(quickstart, tmp_path, changes, message):
    with pytest.raises(OptionsError, match=message) as err:
        make_cells(quickstart, {k: [v] for k, v in changes.items()}, tmp_path, source="sweep.json")
    assert "\n" not in str(err.value) and str(err.value).endswith("(sweep.json)")
    assert not tmp_path.joinpath("000").exists()   # checked before any run


@pytest.mark.slow
def test_summary_equals_individual_launches(quickstart, tmp_path):
    rows = run_sweep(quickstart, GRID, outdir=tmp_path / "sweep", quiet=True)
    assert len(rows) == 4
    table = _csv(tmp_path / "sweep" / "summary.csv")
    assert [r["status"] for r in table] == ["finished"] * 4
    for i, values in enumerate(expand_grid(GRID)):
        alone = tmp_path / f"alone{i}"
        pair = values["policy_pair"].split("-")
        launch(quickstart.replace(actions=[action_index(*pair)], start_strategy=values["start_strategy"], nb_jobs=60),
               outdir=alone, quiet=True)
        metrics = json.loads((alone / "out_metrics.json").read_text())
        row = table[i]
        assert row["policy_pair"] == values["policy_pair"] and row["start_strategy"] == values["start_strategy"]
        assert row["out_nb_jobs"] == "60" and row["nb_jobs"] == "60"
        for key, value in metrics.items():
            assert row["out_nb_jobs" if key == "nb_jobs" else key] == str(value), key
    # the four cells do not all give the same schedule: the overrides took effect
    assert len({r["mean_bounded_slowdown"] for r in table}) == 4


@pytest.mark.slow
def test_processes_backend_equals_serial_and_reruns_skip(quickstart, tmp_path):
    grid = {"seed": [1, 2, 3], "nb_jobs": [40]}
    run_sweep(quickstart, grid, outdir=tmp_path / "serial", quiet=True)
    run_sweep(quickstart, grid, outdir=tmp_path / "pool", jobs=2, quiet=True)
    serial = (tmp_path / "serial" / "summary.csv").read_text()
    assert _timeless(tmp_path / "serial" / "summary.csv") == _timeless(tmp_path / "pool" / "summary.csv")
    assert len({r["mean_waiting_time"] for r in _csv(tmp_path / "serial" / "summary.csv")}) == 3
    # a rerun finds every cell done and does not run it again
    cell = next((tmp_path / "serial").glob("000_*"))
    stamp = (cell / "run.json").stat().st_mtime_ns
    run_sweep(quickstart, grid, outdir=tmp_path / "serial", quiet=True)
    assert (cell / "run.json").stat().st_mtime_ns == stamp
    assert (tmp_path / "serial" / "summary.csv").read_text() == serial   # the wall times were kept too


def test_failing_cell_is_recorded_and_the_sweep_goes_on(quickstart, tmp_path):
    rows = run_sweep(quickstart, {"nb_jobs": [30], "nb_resources": [104, 5]}, outdir=tmp_path, quiet=True)
    assert [r["status"] for r in rows] == ["finished", "failed"]
    assert rows[1]["error"].startswith("OptionsError") and rows[1]["makespan"] == ""
    assert rows[0]["makespan"] == read_metrics(tmp_path / rows[0]["cell"])["makespan"]


def test_sweep_file(tmp_path):
    (tmp_path / "sweep.json").write_text(json.dumps({"options": str(QUICKSTART), "grid": {"seed": [4, 5]}}))
    options, grid, source = load_sweep(tmp_path / "sweep.json")
    assert options.seed == load_options(QUICKSTART).seed and grid == {"seed": [4, 5]}
    assert source == str(tmp_path / "sweep.json")
    (tmp_path / "bad.json").write_text(json.dumps({"options": str(QUICKSTART), "grid": {"seed": []}}))
    with pytest.raises(OptionsError, match="sweep file grid.seed: .*(bad.json)"):
        load_sweep(tmp_path / "bad.json")
    assert load_sweep(QUICKSTART)[1] == {}   # an options file is a sweep of one cell
    # paths of a sweep file are relative to its folder; those of other sources (-g) to theirs
    cells = make_cells(options, {"platform_file_path": ["p.json"], "workload_file_path": ["w.swf"]}, tmp_path,
                       source, sources={"workload_file_path": "<command line>"})
    assert cells[0].options.platform_file_path == str(tmp_path / "p.json")
    assert cells[0].options.workload_file_path == str(Path.cwd() / "w.swf")


def test_unknown_backend_and_missing_ray(quickstart, tmp_path, monkeypatch):
    with pytest.raises(OptionsError, match="unknown backend 'dask'"):
        run_sweep(quickstart, {}, outdir=tmp_path, backend="dask")
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)   # as if Ray were not installed
    with pytest.raises(OptionsError, match=r"needs Ray: pip install 'ray\[default\]'"):
        run_sweep(quickstart, {"nb_jobs": [10]}, outdir=tmp_path, backend="ray", quiet=True)


@pytest.mark.slow
def test_ray_backend_equals_processes(quickstart, tmp_path):
    pytest.importorskip("ray")
    grid = {"policy_pair": ["first-high_gflops", "smallest-high_cores"], "nb_jobs": [40]}
    run_sweep(quickstart, grid, outdir=tmp_path / "a", quiet=True)
    run_sweep(quickstart, grid, outdir=tmp_path / "b", backend="ray", jobs=2, quiet=True)
    assert _timeless(tmp_path / "a" / "summary.csv") == _timeless(tmp_path / "b" / "summary.csv")


def test_parse_overrides_resolves_paths(tmp_path):
    out = parse_overrides({"platform_file_path": "p.json", "policy_pair": "first-random"}, str(tmp_path / "s.json"))
    assert out == {"platform_file_path": str(tmp_path / "p.json"), "actions": [action_index("first", "random")],
                   "agent_type": "CLASSIC"}


def test_parquet_table_equals_the_csv_with_typed_columns(quickstart, tmp_path):
    pq = pytest.importorskip("pyarrow.parquet")
    grid = {"policy_pair": ["first-high_gflops", "shortest-low_power"], "nb_resources": [104, 5],
            "enforce_walltime": [False], "nb_jobs": [25]}
    rows = run_sweep(quickstart, grid, outdir=tmp_path, quiet=True)
    assert [r["status"] for r in rows] == ["finished", "failed"] * 2
    table = pq.read_table(tmp_path / "summary.parquet")
    text = _csv(tmp_path / "summary.csv")
    assert table.column_names == list(text[0]) == list(rows[0])
    assert table.column_names[:9] == ["cell", "policy_pair", "nb_resources", "enforce_walltime", "nb_jobs",
                                      "status", "error", "wall_time", "out_nb_jobs"]
    types = {f.name: str(f.type) for f in table.schema}
    assert {types[k] for k in ("cell", "policy_pair", "status", "error")} == {"string"}
    assert {types[k] for k in ("nb_resources", "nb_jobs", "out_nb_jobs", "nb_completed", "decisions")} == {"int64"}
    assert types["enforce_walltime"] == "bool"
    assert {types[k] for k in ("wall_time", "makespan", "energy", "mean_bounded_slowdown", "utilization")} == {"double"}
    # every value is the CSV's (missing as null, not ""), and the CSV's is the returned row's
    for parquet_row, csv_row, row in zip(table.to_pylist(), text, rows):
        assert parquet_row == {k: None if v == "" else v for k, v in row.items()}
        assert {k: "" if v is None else str(v) for k, v in parquet_row.items()} == csv_row
    failed = table.to_pylist()[1]
    assert failed["makespan"] is None and failed["error"].startswith("OptionsError: nb_resources must equal")
    assert failed["wall_time"] > 0 and table.to_pylist()[0]["error"] is None
    assert (tmp_path / "summary.png").stat().st_size > 10_000


def test_without_pyarrow_the_csv_and_the_plot_are_written(quickstart, tmp_path, monkeypatch):
    import sys

    (tmp_path / "summary.parquet").write_text("stale")
    monkeypatch.setitem(sys.modules, "pyarrow", None)   # as if pyarrow were not installed
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    run_sweep(quickstart, {"seed": [1, 2], "nb_jobs": [20]}, outdir=tmp_path, quiet=True)
    assert not (tmp_path / "summary.parquet").exists()   # never one that disagrees with the CSV
    assert len(_csv(tmp_path / "summary.csv")) == 2 and (tmp_path / "summary.png").is_file()
