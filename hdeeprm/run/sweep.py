"""What ``hdeeprm-sweep`` does, as a library: a grid of ``hdeeprm-launch`` runs and one summary table.

A sweep is an options file crossed with lists of overrides, e.g.::

    {"options": "quickstart.json",
     "grid": {"policy_pair": ["first-high_gflops", "shortest-low_power"],
              "start_strategy": ["head_of_line", "easy_backfilling"],
              "seed": [1, 2, 3]}}

* **Grid**: every combination of the lists is a *cell* (:func:`expand_grid`); keys
  vary slowest to fastest in the order given (the first key is the outer loop),
  as :func:`itertools.product`. Keys are option names (:data:`~hdeeprm.config.options.OVERRIDE_PATHS`:
  ``seed``, ``nb_jobs``, ``first_job``, ``start_strategy``, ``contention``,
  ``objective``, ``workload_file_path``, ``platform_file_path``, ... and
  ``policy_pair``), each value checked as the options file would check it
  (:func:`~hdeeprm.config.options.parse_overrides`); paths are relative to the sweep file.
* **Cells**: a cell is exactly ``hdeeprm-launch`` (:func:`hdeeprm.run.launch.launch`)
  with the base options :meth:`~hdeeprm.config.options.Options.replace`-d by the
  cell's values, written into its own subfolder of the output folder
  (``003-policy_pair=first-high_gflops_seed=2``). A cell that fails is recorded with
  its error and the sweep goes on. A cell whose folder already holds a finished run
  of the same options (``run.json``) is not run again, so an interrupted sweep resumes.
  Each cell's wall time (seconds, the whole ``hdeeprm-launch`` in its worker) is kept
  in its folder (:data:`CELL_FILE`), so a resumed sweep still reports it.
* **Summary**: one row per cell (:func:`summary_rows`): ``summary.csv``, ``summary.parquet``
  (typed columns, when pyarrow is installed) and ``summary.png`` (the main metrics of
  every cell, :func:`hdeeprm.outputs.sweep.plot_summary`).
* **Backends**: ``processes`` (a local pool of ``jobs`` processes started clean with
  ``spawn``, as ``hdeeprm-evaluate -j``; 1 = in this process) or ``ray`` (one Ray task
  per cell, on a local Ray instance of ``jobs`` CPUs or on the cluster at ``address``;
  https://docs.ray.io/en/latest/ray-core/tasks.html). Every run is seeded by its
  options alone and the table is read from the cells' ``out_metrics.json`` in grid
  order, so the table is the same whatever the backend, the number of workers and
  the order the cells end in.
"""
from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Any

import jsonschema

from hdeeprm.config.options import Options, load_options, parse_overrides
from hdeeprm.errors import OptionsError
from hdeeprm.run.lifecycle import progress_bar
from hdeeprm.jsontext import decode_json, encode_json
from hdeeprm.files import check_output_folder, lock_folder
from hdeeprm.run.pool import worker_map

#: Ways to run the cells: a local process pool (the default) or Ray.
BACKENDS: tuple[str, ...] = ("processes", "ray")
DEFAULT_BACKEND = "processes"
#: Names of the summary table (CSV and Parquet) and of its plot, written into the sweep's output folder.
SUMMARY_FILE, PARQUET_FILE, PLOT_FILE = "summary.csv", "summary.parquet", "summary.png"
#: What the summary after the cells imports (plot, Parquet): the parent imports it while its workers run.
#: pyarrow imports pandas, when it is installed, at its first array (about 0.3 s).
SUMMARY_MODULES: tuple[str, ...] = ("matplotlib.pyplot", "pyarrow", "pyarrow.parquet", "pandas")
#: File of a cell's folder with its wall time and error, written by :func:`run_cell`.
CELL_FILE = "sweep_cell.json"
#: Columns of a summary row before the overrides and the metrics.
ROW_KEYS: tuple[str, ...] = ("cell",)
#: Columns of a summary row after the overrides, before the metrics (``out_metrics.json``):
#: ``wall_time`` is the cell's whole run in seconds.
STATUS_KEYS: tuple[str, ...] = ("status", "error", "wall_time")
#: Parquet types of the summary's columns that do not depend on the grid (pyarrow aliases).
COLUMN_TYPES: dict[str, str] = {"cell": "string", "status": "string", "error": "string", "wall_time": "float64"}
#: Cell statuses in the summary: finished (now, or found finished in its folder), or failed.
DONE, FAILED = "finished", "failed"

SWEEP_SCHEMA: dict[str, Any] = {
    "type": "object", "additionalProperties": False, "required": ["options"],
    "properties": {"options": {"type": "string", "minLength": 1},
                   "grid": {"type": "object", "additionalProperties": {"type": "array", "minItems": 1}}},
}


@dataclass(frozen=True)
class Cell:
    """One run of a sweep.

    Attributes:
        index: Position in the grid (0-based).
        values: The overrides as given (option name -> value), in grid key order.
        options: The base options with the overrides applied.
        outdir: The cell's output folder.
    """

    index: int
    values: dict[str, Any]
    options: Options
    outdir: Path


def expand_grid(grid: dict[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """Every combination of the grid's lists, the first key varying slowest.

    Args:
        grid: Option name -> list of values (each list non-empty).

    Returns:
        One dict per combination, keys in ``grid`` order; ``[{}]`` for an empty grid
        (one run of the base options).

    Raises:
        OptionsError: an empty list of values.
    """
    for name, values in grid.items():
        if not values:
            raise OptionsError(f"sweep key '{name}' has no value: give at least one")
    return [dict(zip(grid, combo)) for combo in product(*grid.values())]


def cell_name(index: int, values: dict[str, Any]) -> str:
    """The folder name of a cell: ``003-policy_pair=first-high_gflops_seed=2``.

    Path values keep their file name; characters other than letters, digits and
    ``._+=-`` become ``_``; names are cut to 120 characters (the index keeps them unique).
    """
    parts = [f"{name}={shown_value(name, v)}" for name, v in values.items()]
    return re.sub(r"[^A-Za-z0-9._+=-]", "_", "_".join([f"{index:03d}", *parts]) if parts else f"{index:03d}")[:120]


def shown_value(name: str, value: Any) -> str:
    """How a swept value is shown in names and plots: the file name of a ``*_path`` option, else the value."""
    return Path(value).name if name.endswith("_path") else str(value)


def parse_grid_args(items: Sequence[str]) -> dict[str, list[Any]]:
    """The grid of ``-g NAME=V1,V2`` arguments; each value is read as JSON when it is JSON, else as text.

    Raises:
        OptionsError: an argument without ``=`` or a name given twice.
    """
    grid: dict[str, list[Any]] = {}
    for item in items:
        name, eq, text = item.partition("=")
        name = name.strip()
        if not eq or not name or not text:
            raise OptionsError(f"-g {item!r} must be NAME=VALUE[,VALUE...], e.g. -g seed=1,2,3")
        if name in grid:
            raise OptionsError(f"-g {name} is given twice: list all its values in one -g")
        grid[name] = [_value(v.strip()) for v in text.split(",")]
    return grid


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def load_sweep(path: str | Path) -> tuple[Options, dict[str, list[Any]], str]:
    """Read an options file, or a sweep file (``{"options": ..., "grid": {...}}``).

    Returns:
        ``(base options, grid, source)``: ``source`` is the file relative paths of the
        grid are resolved against; the grid is empty for an options file.

    Raises:
        OptionsError: a missing or malformed file, or an invalid sweep file.
    """
    path = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8-sig")
        data = decode_json(text, path, OptionsError)
    except FileNotFoundError:
        raise OptionsError("sweep or options file not found", path=path) from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        data = None   # load_options says what is wrong
    if not (isinstance(data, dict) and "grid" in data):
        return load_options(path), {}, path
    errors = list(jsonschema.Draft202012Validator(SWEEP_SCHEMA).iter_errors(data))
    if errors:
        where = ".".join(str(p) for p in errors[0].absolute_path) or "sweep"
        raise OptionsError(f"sweep file {where}: {errors[0].message}", path=path)
    options_path = Path(path).resolve().parent / data["options"]
    return load_options(options_path), dict(data.get("grid", {})), path


def make_cells(options: Options, grid: dict[str, Sequence[Any]], outdir: str | Path,
               source: str = "<command line>", sources: Mapping[str, str] | None = None) -> list[Cell]:
    """The cells of a sweep, every override checked (once per value) before any run.

    Args:
        options: The base options.
        grid: Option name -> values (:func:`expand_grid`).
        outdir: The sweep's output folder; each cell gets a subfolder (:func:`cell_name`).
        source: Where the grid comes from (messages; relative paths are resolved against its
            folder; ``"<command line>"``: the working folder).
        sources: Per option name, where its values come from instead of ``source``.

    Raises:
        OptionsError: an unknown option name (with the closest valid one) or an invalid value.
    """
    outdir = Path(outdir).resolve()
    expand_grid(grid)   # no empty list
    checked = {name: [parse_overrides({name: value}, (sources or {}).get(name, source)) for value in values]
               for name, values in grid.items()}
    cells = []
    for index, combo in enumerate(product(*(range(len(values)) for values in grid.values()))):
        values = {name: grid[name][j] for name, j in zip(grid, combo)}
        changes = {k: v for name, j in zip(grid, combo) for k, v in checked[name][j].items()}
        cells.append(Cell(index=index, values=values, options=options.replace(**changes) if changes else options,
                          outdir=outdir / cell_name(index, values)))
    return cells


def is_done(cell: Cell) -> bool:
    """Whether the cell's folder holds a finished run of the cell's options (``run.json``, ``out_metrics.json``)."""
    try:
        info = json.loads((cell.outdir / "run.json").read_text())
    except (OSError, ValueError):
        return False
    return (info.get("status") == DONE and (cell.outdir / "out_metrics.json").is_file()
            and info.get("options") == json.loads(json.dumps(cell.options.to_dict())))


def run_cell(options: Options, outdir: str) -> str:
    """Run one cell as ``hdeeprm-launch`` (quiet); what a worker process or Ray task calls.

    Writes :data:`CELL_FILE` into ``outdir`` (created if needed): ``{"wall_time": seconds, "error": ...}``.

    Returns:
        ``""`` when the run finished, else its error (``"OptionsError: ..."``).
    """
    from hdeeprm.files import atomic_write
    from hdeeprm.run.launch import launch

    start = time.perf_counter()
    try:
        launch(options, outdir=outdir, quiet=True)
        error = ""
    except Exception as exc:   # recorded in the summary; the sweep goes on
        error = f"{type(exc).__name__}: {exc}"
    wall = time.perf_counter() - start
    Path(outdir).mkdir(parents=True, exist_ok=True)
    with atomic_write(Path(outdir) / CELL_FILE) as f:
        f.write(encode_json({"wall_time": wall, "error": error}, indent=None) + "\n")
    return error


def _run_task(task: tuple[Options, str]) -> str:
    return run_cell(*task)


@contextlib.contextmanager
def _processes(tasks: list[tuple[Options, str]], jobs: int) -> Iterator[Iterator[str]]:
    if jobs == 1:
        yield (run_cell(*task) for task in tasks)
        return
    with worker_map(_run_task, tasks, jobs, preload=SUMMARY_MODULES) as results:
        yield results


@contextlib.contextmanager
def _ray(tasks: list[tuple[Options, str]], jobs: int, address: str | None) -> Iterator[Iterator[str]]:
    try:
        import ray
    except ImportError:
        raise OptionsError("--backend ray needs Ray: pip install 'ray[default]' (or the extra: "
                           "pip install -e '.[ray]'), or use --backend processes") from None
    started = not ray.is_initialized()
    if started:
        if address:
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=jobs, include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(num_cpus=1)(run_cell)
        refs = [remote.remote(*task) for task in tasks]
        yield (ray.get(ref) for ref in refs)
    finally:
        if started:
            ray.shutdown()


def read_metrics(outdir: Path) -> dict[str, Any]:
    """The metrics summary a run wrote (``out_metrics.json``), nested keys flattened as ``a.b``."""
    def flat(prefix: str, data: dict) -> Iterator[tuple[str, Any]]:
        for key, value in data.items():
            if isinstance(value, dict):
                yield from flat(f"{prefix}{key}.", value)
            else:
                yield f"{prefix}{key}", value

    return dict(flat("", json.loads((outdir / "out_metrics.json").read_text())))


def read_wall_time(outdir: Path) -> float | str:
    """The cell's wall time in seconds (:data:`CELL_FILE`), or ``""`` when it was not recorded."""
    try:
        return float(json.loads((outdir / CELL_FILE).read_text())["wall_time"])
    except (OSError, ValueError, KeyError, TypeError):
        return ""


def summary_rows(cells: Sequence[Cell], errors: Sequence[str | None]) -> list[dict[str, Any]]:
    """One row per cell, in grid order: :data:`ROW_KEYS`, the overrides, :data:`STATUS_KEYS`, the metrics.

    Args:
        cells: The cells.
        errors: Per cell: ``""`` (run now) or None (found done), else its error.

    Returns:
        Rows with the same keys (metrics missing from a row, e.g. a failed cell's, are ``""``;
        so is a wall time that was not recorded);
        list and dict values are written as JSON; a metric named as an override (``nb_jobs``)
        is ``out_nb_jobs``.
    """
    rows = []
    for cell, error in zip(cells, errors):
        status = FAILED if error else DONE
        row = {"cell": cell.outdir.name,
               **{k: json.dumps(v) if isinstance(v, (list, dict)) else v for k, v in cell.values.items()},
               "status": status, "error": error or "", "wall_time": read_wall_time(cell.outdir)}
        if status != FAILED:   # a metric named as an override (nb_jobs) is written out_NAME
            row.update({f"out_{k}" if k in cell.values else k: v for k, v in read_metrics(cell.outdir).items()})
        rows.append(row)
    keys = list(dict.fromkeys(k for row in rows for k in row))
    return [{k: row.get(k, "") for k in keys} for row in rows]


def run_sweep(options: Options, grid: dict[str, Sequence[Any]], *, outdir: str | Path = "hdeeprm-sweep",
              backend: str = DEFAULT_BACKEND, jobs: int = 1, address: str | None = None,
              source: str = "<command line>", sources: Mapping[str, str] | None = None, rerun: bool = False,
              quiet: bool = False) -> list[dict[str, Any]]:
    """Run every cell of the grid and write the summary into ``outdir`` (see the module docstring).

    ``summary.csv`` and ``summary.png`` are always written; ``summary.parquet`` when pyarrow is
    installed (else a stale one is removed: :func:`write_summary`).

    Args:
        options: The base options.
        grid: Option name -> values.
        outdir: The sweep's folder (created); cells go into subfolders.
        backend: One of :data:`BACKENDS`.
        jobs: Worker processes, or CPUs of the local Ray instance (>= 1).
        address: With ``ray``: the address of a running Ray cluster (None = a local instance).
        source, sources: Where the grid's values come from (see :func:`make_cells`).
        rerun: Run the cells already done too.
        quiet: No progress bar.

    Returns:
        The summary rows (:func:`summary_rows`).

    Raises:
        OptionsError: a bad backend, ``jobs`` or override, or Ray missing with ``ray``.
    """
    if backend not in BACKENDS:
        raise OptionsError(f"unknown backend '{backend}' (valid: {', '.join(BACKENDS)})")
    if jobs < 1:
        raise OptionsError(f"the number of workers must be >= 1, got {jobs}")
    check_output_folder(outdir)
    cells = make_cells(options, grid, outdir, source, sources)
    with lock_folder(outdir):   # a second sweep into the folder is refused; each cell's run locks its own
        return _run_cells(cells, grid, outdir, backend=backend, jobs=jobs, address=address, rerun=rerun, quiet=quiet)


def _run_cells(cells: list[Cell], grid: dict[str, Sequence[Any]], outdir: str | Path, *, backend: str, jobs: int,
               address: str | None, rerun: bool, quiet: bool) -> list[dict[str, Any]]:
    """:func:`run_sweep` once its folder is locked."""
    todo = [i for i, cell in enumerate(cells) if rerun or not is_done(cell)]
    errors: list[str | None] = [None] * len(cells)
    tasks = [(cells[i].options, str(cells[i].outdir)) for i in todo]
    runner: Callable[[], contextlib.AbstractContextManager[Iterator[str]]] = (
        (lambda: _ray(tasks, jobs, address)) if backend == "ray" else (lambda: _processes(tasks, jobs)))
    bar = None
    if not quiet:
        bar = progress_bar(len(tasks), "run", "hdeeprm-sweep")
    try:
        if tasks:
            with runner() as results:
                for i, error in zip(todo, results):
                    errors[i] = error
                    if bar is not None:
                        bar.update()
    finally:
        if bar is not None:
            bar.close()
    rows = summary_rows(cells, errors)
    write_summary(outdir, rows, list(grid))
    return rows


def write_summary(outdir: str | Path, rows: Sequence[dict[str, Any]], keys: Sequence[str]) -> list[Path]:
    """Write the summary rows into ``outdir``: :data:`SUMMARY_FILE`, :data:`PARQUET_FILE`, :data:`PLOT_FILE`.

    Args:
        outdir: The sweep's folder (created).
        rows: :func:`summary_rows`.
        keys: The grid's keys (the plot groups the cells by them).

    Returns:
        The files written; without pyarrow, the Parquet file is left out (and removed if an
        earlier sweep wrote one, so that it never disagrees with the CSV).
    """
    from hdeeprm.outputs.evaluation import write_csv
    from hdeeprm.outputs.sweep import plot_summary, write_parquet

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    written = [write_csv(outdir / SUMMARY_FILE, rows)]
    try:
        written.append(write_parquet(outdir / PARQUET_FILE, rows, COLUMN_TYPES))
    except ImportError:
        (outdir / PARQUET_FILE).unlink(missing_ok=True)
    # keys of one value say nothing about the differences: in the title, not in every label
    fixed = [k for k in keys if len({str(row[k]) for row in rows}) == 1]
    varying = [k for k in keys if k not in fixed]
    labels = [", ".join(shown_value(k, row[k]) for k in varying) or row["cell"] for row in rows]
    title = "; ".join([f"hdeeprm-sweep: {len(rows)} cell(s)", *(f"{k}={shown_value(k, rows[0][k])}" for k in fixed)])
    written.append(plot_summary(rows, varying, outdir / PLOT_FILE, labels=labels, title=title))
    return written
