"""The life cycle of a run's output folder, shared by every kind of run (CPU, GPU, evaluation, sweep).

A run owns its folder: :func:`claim_outdir` locks it (refusing a live owner) and clears a previous run's outputs;
:func:`write_run_info` writes ``run.json`` (``"status"`` :data:`RUNNING`, then :data:`FINISHED`,
:data:`INTERRUPTED` or :data:`FAILED`); :func:`end_failed` leaves a failed run's folder as failed;
:func:`previous_run` tells what became of the run that last wrote a folder (``hdeeprm-check OUTDIR``).
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import platform as _platform
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hdeeprm import __version__
from hdeeprm.compiled import compiled_paths
from hdeeprm.config.options import Options
from hdeeprm.files import (FolderLock, atomic_write, check_output_folder, folder_owner, lock_folder, naming,
                           remove_folder_orphans)
from hdeeprm.jsontext import encode_json
from hdeeprm.outputs.visual import PLOTS
from hdeeprm.workload.model import Workload

log = logging.getLogger(__name__)


@dataclass
class RunResult:
    """What a launch produced.

    Attributes:
        metrics: Metrics summary of each episode, in order.
        outdir: Folder holding the outputs.
    """

    metrics: list[dict] = field(default_factory=list)
    outdir: Path = Path(".")


#: Run statuses written in ``run.json``: while the run goes on, and how it ended.
RUNNING, FINISHED, INTERRUPTED, FAILED = "running", "finished", "interrupted", "failed"
#: What a run writes into its folder (glob patterns): removed before it starts, so that a
#: folder never mixes the files of two runs (the plots of ``hdeeprm-visual`` included).
RUN_OUTPUTS: tuple[str, ...] = ("run.json", "out_*.csv", "out_metrics.json", "overutilizations.json",
                                "episodes.csv", "rewards.log", "losses.log", "makespans.log", "probs.json",
                                *(f"{name}.png" for name in PLOTS), "jct_cdf.png", "gpu_timeline.png")


def claim_outdir(outdir: Path, keep: Iterable[str | Path | None] = ()) -> FolderLock:
    """Make ``outdir`` the run's own: lock it, create it, remove the files of :data:`RUN_OUTPUTS` in it.

    A folder that another live run holds is refused (:func:`~hdeeprm.files.lock_folder`);
    a previous run that died without saying so (``run.json`` still ``"running"``, its lock gone:
    ``kill -9``, the out-of-memory killer, a power cut) is reported as a warning, and the temporary
    files its interrupted writes left behind are removed.

    Args:
        outdir: The run's output folder.
        keep: Input files never removed even when their name matches (e.g. ``-cw OUTDIR/out_x.csv``).

    Returns:
        The folder's lock, held until the caller releases it (at the end of the run).

    Raises:
        OptionsError: ``outdir`` exists and is not a directory, or another run holds it.
        OSError: The folder cannot be created or a file removed.
    """
    check_output_folder(outdir)
    lock = lock_folder(outdir)
    try:
        dead = previous_run(outdir)
        if dead is not None and dead["state"] in (DIED, DAMAGED):
            log.warning("%s: %s; its outputs are replaced", outdir, dead["text"])
        remove_folder_orphans(outdir)
        kept = {Path(p).resolve() for p in keep if p}
        removed = [path for pattern in RUN_OUTPUTS for path in sorted(outdir.glob(pattern))
                   if path.is_file() and path.resolve() not in kept]
        for path in removed:
            path.unlink()
    except BaseException:
        lock.release()
        raise
    if removed:
        log.info("removed %d output file(s) of a previous run from %s", len(removed), outdir)
    return lock


#: States of a run folder's run, as :func:`previous_run` tells them (beside ``run.json``'s statuses); DAMAGED:
#: ``run.json`` is there but empty or cut short (a write that a full disk or a crash of the machine stopped).
ALIVE, DIED, DAMAGED = "alive", "died", "damaged"


def previous_run(outdir: str | Path) -> dict | None:
    """What the run that last wrote ``outdir/run.json`` became.

    Args:
        outdir: A run folder.

    Returns:
        None when there is no readable ``run.json``; else ``{"state", "pid", "episodes", "text"}``:
        ``state`` is ``run.json``'s status, :data:`ALIVE` (it says running and its process holds the
        folder), :data:`DIED` (it says running but no process holds the folder: killed by
        ``kill -9``, the out-of-memory killer or a crash of the machine) or :data:`DAMAGED` (``run.json``
        is empty or cut short: ``text`` names the file and says which); ``episodes`` is the
        number of episodes it recorded (the rows of ``episodes.csv`` when more than ``run.json``
        says); ``text`` says it in words.
    """
    outdir = Path(outdir)
    path = outdir / "run.json"
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError):   # no run.json, a folder of that name, or bytes that are not UTF-8
        return None
    try:
        info = json.loads(text)
    except ValueError as exc:
        if text.strip() and not text.lstrip().startswith("{"):
            return None   # not one HDeepRM wrote
        how = (f"is empty ({len(text.encode('utf-8'))} bytes)" if not text.strip() else
               f"is cut short ({len(text.encode('utf-8'))} bytes, not valid JSON from line {exc.lineno})")
        return {"state": DAMAGED, "pid": "unknown", "episodes": 0,
                "text": f"{path} {how}: the write was stopped (a full disk or a crash of the machine); "
                        "what the run did is unknown"}
    try:
        status = str(info.get("status"))
        pid = info.get("pid", "unknown")
        episodes = int(info.get("episodes_completed") or 0)
    except (ValueError, TypeError, AttributeError):   # not one HDeepRM wrote
        return None
    with contextlib.suppress(OSError, ValueError):
        with open(outdir / "episodes.csv", encoding="utf-8") as f:
            episodes = max(episodes, sum(1 for _ in f) - 1)
    if status != RUNNING:
        text = f"the previous run (pid {pid}) {status}" + (
            f" after {episodes} episode(s)" if status != FINISHED else "") + (
            f": {info['error']}" if info.get("error") else "")
        return {"state": status, "pid": pid, "episodes": episodes, "text": text}
    owner = folder_owner(outdir)
    if owner is not None:
        return {"state": ALIVE, "pid": owner, "episodes": episodes,
                "text": f"a run (pid {owner}) is running, {episodes} episode(s) done"}
    return {"state": DIED, "pid": pid, "episodes": episodes,
            "text": f"the previous run (pid {pid}) died after {episodes} episode(s) without finishing "
                    "(killed: kill -9, out of memory, or the machine stopped)"}


def write_run_info(outdir: Path, options: Options, workload: Workload, extra: dict | None = None, *,
                   status: str = FINISHED) -> None:
    """Write ``run.json``: the run's status and process, resolved options, versions, seed, workload report.

    Args:
        outdir: The run's folder.
        options: The resolved options.
        workload: The run's workload (its source, size and conversion report).
        extra: More keys (e.g. ``episodes_completed``, ``error``).
        status: :data:`RUNNING` (written before the first episode and at checkpoints), :data:`FINISHED`,
            :data:`INTERRUPTED` or :data:`FAILED`.

    The file is replaced atomically (:func:`~hdeeprm.files.atomic_write`): a full disk leaves the previous
    version whole, never an empty or cut-short file. When that fails on a failed or interrupted run (no room
    for the temporary copy), a short record (status, pid and ``extra``) is written over the previous version
    in place, in the blocks it already holds, so that it does not keep saying ``"running"``; when even that
    fails, the previous version stays whole.

    Raises:
        OSError: ``run.json`` cannot be written (naming it).
    """
    info = {
        "status": status, "pid": os.getpid(),
        "hdeeprm_version": __version__, "python": _platform.python_version(), "numpy": np.__version__,
        **compiled_paths(),   # compiled or pure Python, each: the same results, not the same speed
        "options": options.to_dict(), "workload": {"source": workload.source, "jobs": len(workload.jobs),
                                                     "report": workload.report},
    }
    if extra:
        info.update(extra)
    text = encode_json(info) + "\n"
    try:
        with atomic_write(outdir / "run.json") as f:
            f.write(text)
    except OSError:
        if status not in (FAILED, INTERRUPTED) or not (outdir / "run.json").is_file():
            raise
        short = encode_json({key: info[key] for key in ("status", "pid", *(extra or {}))}, indent=None) + "\n"
        with naming(outdir / "run.json"), open(outdir / "run.json", "r+", encoding="utf-8") as f:
            f.write(short)   # a short write into blocks the file holds: it needs no room, or leaves them as they were
            f.truncate()


def end_failed(outdir: Path, exc: BaseException, write_status) -> None:
    """Leave a failed run's folder as failed: ``run.json`` says so, no partial Batsim output is left.

    When the run failed on an I/O error (a full disk), the Batsim-format outputs of the episode
    being recorded (``out_*.csv``, ``out_metrics.json``, ``overutilizations.json``) are incomplete:
    they are removed, so that nothing looks like a finished run's (and the room is given back).
    ``run.json`` is then rewritten as failed; when even that cannot be done, the error is logged
    and the run's own error is the one raised (alone when it names ``run.json`` too).

    Args:
        outdir: The run's folder.
        exc: What the run raised.
        write_status: ``write_status(extra)`` writes ``run.json`` as failed with ``extra`` keys.
    """
    if isinstance(exc, OSError):
        for pattern in ("out_*.csv", "out_metrics.json", "overutilizations.json"):
            for path in outdir.glob(pattern):
                with contextlib.suppress(OSError):
                    path.unlink()
    error = f"{type(exc).__name__}: {exc}" if not isinstance(exc, OSError) else \
        f"OSError: {exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else "")
    try:
        write_status({"error": error})
    except OSError as again:
        if not (isinstance(exc, OSError) and exc.filename == again.filename):   # else the run's error says it
            log.error("could not mark %s as failed: %s", outdir / "run.json", again.strerror or again)


def progress_bar(total: int, unit: str, desc: str):
    """The progress bar of a run on standard error (tqdm), shown only when standard error is a terminal.

    Redirected to a file or a pipe (a batch job, a benchmark, CI), it draws nothing, so logs stay free of the
    bar's carriage returns and the run does not pay for redrawing it; the returned bar then ignores updates.

    Args:
        total: Units of the whole run (jobs, runs, episodes).
        unit: Their name, singular (``"job"``).
        desc: The label before the bar (``"hdeeprm"``).

    Returns:
        A ``tqdm.tqdm`` (``update(n)``, ``close()``), cleared when closed.
    """
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, desc=desc, leave=False, disable=None)
