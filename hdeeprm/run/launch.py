"""What ``hdeeprm-launch`` does, as a library: build inputs, run episodes, write outputs.

The command line front end is :mod:`hdeeprm.cli.launch`; everything here
raises :class:`~hdeeprm.errors.HDeepRMError` subclasses and never exits.
"""
from __future__ import annotations

import contextlib
import csv
import json
import logging
import math
import platform as _platform
import signal
import sys
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hdeeprm import __version__
from hdeeprm.simulation.kernel import warn_split_risks
from hdeeprm.config.build import build_agent, build_platform, build_workload, load_agent
from hdeeprm.config.options import Options, load_options
from hdeeprm.decision.actions import action_name
from hdeeprm.decision.contention import make_contention_model
from hdeeprm.errors import HDeepRMError, OptionsError
from hdeeprm.outputs.files import atomic_write
from hdeeprm.outputs.visual import PLOTS
from hdeeprm.run.episode import run_episode
from hdeeprm.run.loop import Observer, RewardFn, agent_failed
from hdeeprm.workload.model import Workload

if TYPE_CHECKING:
    from hdeeprm.agents.base import Agent

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


def claim_outdir(outdir: Path, keep: Iterable[str | Path | None] = ()) -> list[Path]:
    """Make ``outdir`` the run's own: create it and remove the files of :data:`RUN_OUTPUTS` in it.

    Args:
        outdir: The run's output folder.
        keep: Input files never removed even when their name matches (e.g. ``-cw OUTDIR/out_x.csv``).

    Returns:
        The files removed (the previous run's outputs).

    Raises:
        OptionsError: ``outdir`` exists and is not a directory.
        OSError: The folder cannot be created or a file removed.
    """
    if outdir.exists() and not outdir.is_dir():
        raise OptionsError(f"-o {outdir}: must be a directory, got a file")
    outdir.mkdir(parents=True, exist_ok=True)
    kept = {Path(p).resolve() for p in keep if p}
    removed = [path for pattern in RUN_OUTPUTS for path in sorted(outdir.glob(pattern))
               if path.is_file() and path.resolve() not in kept]
    for path in removed:
        path.unlink()
    if removed:
        log.info("removed %d output file(s) of a previous run from %s", len(removed), outdir)
    return removed


def write_run_info(outdir: Path, options: Options, workload: Workload, extra: dict | None = None, *,
                   status: str = FINISHED) -> None:
    """Write ``run.json``: the run's status, resolved options, versions, seed and the workload report.

    Args:
        outdir: The run's folder.
        options: The resolved options.
        workload: The run's workload (its source, size and conversion report).
        extra: More keys (e.g. ``episodes_completed``, ``error``).
        status: :data:`RUNNING` (written before the first episode), :data:`FINISHED`,
            :data:`INTERRUPTED` or :data:`FAILED`.
    """
    info = {
        "status": status,
        "hdeeprm_version": __version__, "python": _platform.python_version(), "numpy": np.__version__,
        "options": options.to_dict(), "workload": {"source": workload.source, "jobs": len(workload.jobs),
                                                     "report": workload.report},
    }
    if extra:
        info.update(extra)
    with atomic_write(outdir / "run.json") as f:
        f.write(json.dumps(info, indent=2) + "\n")


def launch(options: Options | str | Path, *, agent_path: str | None = None, custom_workload: str | None = None,
           inmodel: str | None = None, outmodel: str | None = None, nb_runs: int = 1,
           outdir: str | Path = "hdeeprm-run", quiet: bool = False, simulator: str = "embedded",
           batsim: str = "batsim", checkpoint_every: int | None = None,
           libraries: Sequence[str | Path] = ()) -> RunResult:
    """Run ``nb_runs`` episodes as ``hdeeprm-launch`` does and write the outputs.

    Writes into ``outdir``: the Batsim-format CSVs and ``out_metrics.json`` of
    the last episode, ``overutilizations.json``, ``episodes.csv`` (metrics,
    total reward and loss of every episode), ``run.json`` (resolved options,
    versions, workload report) and, as the original HDeepRM, one line per
    episode in ``rewards.log`` (sum of the rewards), ``losses.log`` (training
    loss, episodes that updated only) and ``makespans.log`` (seconds), plus
    ``probs.json`` when the agent records action preferences (``"actions"``:
    the action set's policy-pair names; ``"mean_per_episode"``: mean preference
    of each action over each episode's decisions; ``"probs"``: the preferences
    at every decision of the last episode).

    No global state is changed: torch's generator is seeded with the options'
    seed before the agent is built and before the first episode whenever torch
    is loaded, inside :func:`torch.random.fork_rng`, so runs are reproducible
    and the caller's torch generator is left as it was; logging is left to the
    application (the ``hdeeprm`` logger only gets records). ``inmodel`` is
    loaded before the first episode, ``outmodel`` saved (atomically) after the last, every
    ``checkpoint_every`` episodes, and when the run is interrupted (Ctrl-C).

    The run owns ``outdir``: once every input is known good (options, platform, workload, the
    agent built and its ``inmodel`` loaded) and before the first episode, the files of a previous run
    (:data:`RUN_OUTPUTS`) are removed and ``run.json`` is written with ``"status":
    "running"``; it is rewritten at the end with ``"finished"``, or ``"interrupted"``
    / ``"failed"`` (with ``episodes_completed`` and the ``error``), whatever happened.

    Args:
        options: An :class:`Options` or the path of an options file.
        agent_path: The user's agent file, or None for the options' classic policy pair.
        custom_workload: A Batsim JSON workload replacing the options' (``-cw``).
        inmodel: Checkpoint to load before the first episode (``-im``).
        outmodel: Checkpoint to save after the last episode (``-om``).
        nb_runs: Episodes to run (``-nr``), >= 1.
        outdir: Output folder, created if needed.
        quiet: No progress bar.
        simulator: ``"embedded"`` or ``"batsim"`` (a real Batsim binary, one episode).
        batsim: The Batsim binary with ``simulator="batsim"``.
        checkpoint_every: Also save ``outmodel`` after every this many episodes (None = only at the end).
        libraries: Extra type library files for the platform (as ``hdeeprm-platform --library``).

    Returns:
        The :class:`RunResult`.

    Raises:
        HDeepRMError: any invalid input (options, platform, workload, agent).
    """
    if not isinstance(options, Options):
        options = load_options(options)
    if options.gpu is not None:   # a timed GPU replay (hdeeprm.run.gpu_launch)
        from hdeeprm.run.gpu_launch import launch_gpu

        return launch_gpu(options, outdir=outdir, quiet=quiet, libraries=libraries, unsupported={
            "-a agent": agent_path, "-cw": custom_workload, "-im": inmodel, "-om": outmodel,
            "-nr > 1": nb_runs != 1, "--simulator batsim": simulator != "embedded",
            "--checkpoint-every": checkpoint_every is not None})
    if simulator == "batsim" and (nb_runs != 1 or outmodel):
        raise OptionsError("--simulator batsim runs one episode and trains nothing: drop -nr and -om, "
                           "or use the embedded simulator")
    if checkpoint_every is not None and (not outmodel or checkpoint_every < 1):
        raise OptionsError(f"--checkpoint-every needs -om and must be >= 1, got {checkpoint_every}"
                           + ("" if outmodel else " without -om"))
    if outmodel:
        from hdeeprm.agents.checkpoint import check_writable

        check_writable(outmodel)   # before hours of training, not after
    hierarchy = build_platform(options, libraries)
    workload = build_workload(options, hierarchy, custom_workload)
    agent_cls = load_agent(options, agent_path)
    outdir = Path(outdir)
    claimed = []

    def claim() -> None:
        """Take the folder once every input (the agent and its -im checkpoint too) is known good."""
        claim_outdir(outdir, keep=(options.source, options.workload_file_path, options.platform_file_path,
                                   custom_workload, agent_path, inmodel, outmodel, *libraries))
        write_run_info(outdir, options, workload, status=RUNNING)
        claimed.append(True)

    log.info("run: %d jobs on %d cores, agent %s, %d episode(s), outputs in %s", len(workload.jobs),
             hierarchy.nb_cores, agent_cls.__name__, nb_runs, outdir)
    result = RunResult(outdir=outdir)
    try:
        with seeded_torch(options.seed):
            _launch(options, hierarchy, workload, agent_cls, result, claim, inmodel=inmodel, outmodel=outmodel,
                    nb_runs=nb_runs, quiet=quiet, simulator=simulator, batsim=batsim,
                    checkpoint_every=checkpoint_every)
    except KeyboardInterrupt:
        if claimed:
            write_run_info(outdir, options, workload, {"episodes_completed": len(result.metrics)},
                           status=INTERRUPTED)
        raise
    except Exception as exc:
        if claimed:
            write_run_info(outdir, options, workload, {"episodes_completed": len(result.metrics),
                                                       "error": f"{type(exc).__name__}: {exc}"}, status=FAILED)
        raise
    write_run_info(outdir, options, workload, {"simulator": simulator} if simulator == "batsim" else None)
    return result


@contextlib.contextmanager
def seeded_torch(seed: int) -> Iterator[None]:
    """Seed torch's generator with ``seed`` for the block, privately, when torch is loaded.

    Inside :func:`torch.random.fork_rng`, so the caller's torch generator is
    left as it was; a no-op when torch was never imported (classic agents).
    Agents that use torch import it with their file: load the agent class first.
    """
    with contextlib.ExitStack() as stack:
        if "torch" in sys.modules:   # the agent file (or the caller) uses torch: seed it, privately
            stack.enter_context(sys.modules["torch"].random.fork_rng(devices=[]))
            _seed_torch(seed)
        yield


@contextlib.contextmanager
def _uninterrupted() -> Iterator[None]:
    """Defer Ctrl-C (SIGINT) to the end of the block.

    The agent's update of an episode and the record of that episode (metrics, logs,
    preferences) are thus never split by an interrupt.

    Outside the main thread, or when the application handles SIGINT itself, nothing is deferred.
    """
    if (threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def _seed_torch(seed: int) -> None:
    """Seed torch's generator when torch is loaded (agents that use it draw from it)."""
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


def agent_inputs(options: Options, hierarchy, workload: Workload,
                 agent_cls: type) -> tuple[Observer | None, RewardFn | None, int]:
    """The observation builder and the reward an agent of ``agent_cls`` gets on ``workload``.

    Classic agents get neither. The observer normalises by percentiles of
    ``workload`` (:mod:`hdeeprm.env.observation`), so each workload needs its own.

    Returns:
        ``(observer, reward, observation_size)``; ``(None, None, 0)`` for a classic agent.

    Raises:
        OptionsError: unknown observation type or objective.
    """
    from hdeeprm.agents.base import ClassicAgent

    if agent_cls is ClassicAgent:
        return None, None, 0
    from hdeeprm.env.observation import make_observer
    from hdeeprm.env.reward import make_reward

    observer = make_observer(options.observation, hierarchy, workload, options.queue_sensitivity)
    return observer, make_reward(options.objective), observer.size


def prepare_agent(options: Options, hierarchy, workload: Workload, agent_cls: type, *,
                  inmodel: str | None = None, outmodel: str | None = None) -> tuple[Agent, Observer | None,
                                                                                   RewardFn | None]:
    """Build the agent of a run as ``hdeeprm-launch`` does, load ``inmodel``, reseed torch.

    Call inside :func:`seeded_torch` for the launcher's draws.

    Returns:
        ``(agent, observer, reward)`` (see :func:`agent_inputs`).

    Raises:
        OptionsError: ``inmodel``/``outmodel`` with an agent that has no model.
        AgentError: the agent cannot be built, or the checkpoint does not fit it.
    """
    observer, reward, observation_size = agent_inputs(options, hierarchy, workload, agent_cls)
    agent = build_agent(options, agent_cls, observation_size)
    if inmodel or outmodel:
        if not hasattr(agent, "load_checkpoint"):
            raise OptionsError(f"-im/-om need a learning agent; {type(agent).__name__} has no model to load or save")
    if inmodel:
        agent.load_checkpoint(inmodel)
    _seed_torch(options.seed)   # the same draws whatever the agent's construction consumed
    return agent, observer, reward


def _launch(options: Options, hierarchy, workload: Workload, agent_cls, result: RunResult, claim, *, inmodel,
            outmodel, nb_runs: int, quiet: bool, simulator: str, batsim: str, checkpoint_every: int | None) -> None:
    """:func:`launch` once the inputs are built (torch, if used, already seeded); fills ``result``.

    ``claim()`` takes the output folder, once the agent is built and its checkpoint loaded.
    """
    outdir = result.outdir
    agent, observer, reward = prepare_agent(options, hierarchy, workload, agent_cls, inmodel=inmodel,
                                            outmodel=outmodel)
    claim()   # touches no random generator: the draws stay those prepare_agent seeded
    if simulator == "batsim":
        from hdeeprm.run.batsim import run_on_batsim

        result.metrics.append(run_on_batsim(hierarchy, workload, options, agent, outdir=outdir, batsim=batsim,
                                            observer=observer, reward=reward))
        return
    names = [action_name(a) for a in options.actions]
    mean_probs: list[list[float]] = []
    last_probs: list[list[float]] = []
    warned_loss = False   # a non-finite loss is said once per run
    bar = None
    if not quiet:
        from tqdm import tqdm

        bar = tqdm(total=len(workload.jobs) * nb_runs, unit="job", desc="hdeeprm", leave=False)
    logs = {name: open(outdir / f"{name}.log", "w") for name in ("rewards", "losses", "makespans")}
    try:
        for run in range(nb_runs):
            last = run == nb_runs - 1
            episode, total = run_episode(hierarchy, workload, options, agent, record=last, observer=observer,
                                         reward=reward, progress=bar,
                                         model=make_contention_model(options.contention),
                                         stream_to=outdir if last else None)
            with _uninterrupted():   # an episode's update and its record stay together
                probs = getattr(agent, "probs", None)
                if probs:
                    mean = np.mean(np.asarray(probs, dtype=np.float64), axis=0)
                    mean_probs.append([round(float(p), 6) for p in mean])
                    if last:
                        last_probs = [[round(float(p), 6) for p in row] for row in probs]
                try:
                    loss = agent.end_episode()
                except HDeepRMError:
                    raise
                except Exception as exc:   # the user's code: say which file and method, keep its frames
                    raise agent_failed(agent, "end_episode", exc) from exc
                metrics = episode.write_outputs(outdir) if last else episode.metrics()
                if last:
                    warn_split_risks(episode.engine.split_risks)   # the instants Batsim may split
                metrics = {"episode": run, **metrics, "reward": total if reward is not None else "",
                           "loss": loss if loss is not None else ""}
                result.metrics.append(metrics)
                log.info("episode %d: makespan %.6g s, mean bounded slowdown %.6g, reward %s, loss %s", run,
                         metrics["makespan"], metrics["mean_bounded_slowdown"], metrics["reward"],
                         metrics["loss"])
                logs["rewards"].write(f"{total!r}\n")
                if loss is not None:
                    if not math.isfinite(float(loss)) and not warned_loss:
                        log.warning("episode %d: the training loss is %s (the agent diverged: try a lower lr); "
                                    "written to losses.log as is", run, float(loss))
                        warned_loss = True
                    logs["losses"].write(f"{float(loss)!r}\n")
                logs["makespans"].write(f"{float(metrics['makespan'])!r}\n")
            if outmodel and checkpoint_every and not last and (run + 1) % checkpoint_every == 0:
                agent.save_checkpoint(outmodel)
    except KeyboardInterrupt:
        if outmodel and result.metrics:   # hours of training are not thrown away
            agent.save_checkpoint(outmodel)
            log.warning("interrupted after %d episode(s): model saved to %s", len(result.metrics), outmodel)
        raise
    finally:
        for f in logs.values():
            f.close()
        if bar is not None:
            bar.close()
        if mean_probs:
            (outdir / "probs.json").write_text(json.dumps({"actions": names, "mean_per_episode": mean_probs,
                                                            "probs": last_probs}) + "\n")
        if result.metrics:   # the episodes done so far, also when interrupted
            with open(outdir / "episodes.csv", "w", newline="") as f:
                writer = csv.DictWriter(f, fieldnames=list(result.metrics[0]))
                writer.writeheader()
                writer.writerows(result.metrics)
    if outmodel:
        agent.save_checkpoint(outmodel)
