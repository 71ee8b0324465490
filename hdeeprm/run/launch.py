"""What ``hdeeprm-launch`` does, as a library: build inputs, run episodes, write outputs.

The command line front end is :mod:`hdeeprm.cli.launch`; everything here
raises :class:`~hdeeprm.errors.HDeepRMError` subclasses and never exits.
"""
from __future__ import annotations

import contextlib
import csv
import logging
import math
import numbers
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hdeeprm.config.build import build_agent, build_gpu_side, build_platform, build_workload, load_agent
from hdeeprm.config.options import Options, load_options
from hdeeprm.decision.actions import action_name
from hdeeprm.decision.contention import make_contention_model
from hdeeprm.errors import AgentError, HDeepRMError, OptionsError
from hdeeprm.jsontext import encode_json
from hdeeprm.files import (FolderLock, atomic_write, check_output_folder, naming,
                                   open_for_writing)
from hdeeprm.run.episode import run_episode
from hdeeprm.run.lifecycle import (FAILED, INTERRUPTED, RUNNING, RunResult,
                                   claim_outdir, end_failed, progress_bar, write_run_info)
from hdeeprm.run.loop import Observer, RewardFn, agent_failed, method_location
from hdeeprm.run.stop import deferred
from hdeeprm.simulation.kernel import warn_split_risks
from hdeeprm.workload.model import Workload

if TYPE_CHECKING:
    from hdeeprm.agents.base import Agent

log = logging.getLogger(__name__)


def launch(options: Options | str | Path, *, agent_path: str | None = None, custom_workload: str | None = None,
           inmodel: str | None = None, outmodel: str | None = None, nb_runs: int = 1,
           outdir: str | Path = "hdeeprm-run", quiet: bool = False, simulator: str = "embedded",
           batsim: str = "batsim", checkpoint_every: int | None = None,
           libraries: Sequence[str | Path] = (), gpu_libraries: Sequence[str | Path] = ()) -> RunResult:
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
        gpu_libraries: Extra GPU type library files, for a GPU run (options with a ``gpu`` block).

    Returns:
        The :class:`RunResult`.

    Raises:
        HDeepRMError: any invalid input (options, platform, workload, agent).
    """
    check_output_folder(outdir)   # a file, or a folder another run holds: refused before any work
    if not isinstance(options, Options):
        options = load_options(options)
    if options.gpu is not None:   # a timed GPU replay (hdeeprm.run.gpu_launch)
        from hdeeprm.run.gpu_launch import launch_gpu

        return launch_gpu(options, outdir=outdir, quiet=quiet, libraries=libraries, gpu_libraries=gpu_libraries,
                          unsupported={
            "-a agent": agent_path, "-cw": custom_workload, "-im": inmodel, "-om": outmodel,
            "-nr > 1": nb_runs != 1, "--simulator batsim": simulator != "embedded",
            "--checkpoint-every": checkpoint_every is not None})
    if gpu_libraries:
        raise OptionsError("--gpu-library applies to GPU runs (options with a 'gpu' block)", path=options.source)
    if simulator == "batsim" and options.gpu_jobs is not None:
        raise OptionsError("gpu_jobs runs on the embedded simulator only (Batsim has no GPU model): drop "
                           "--simulator batsim", path=options.source)
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
    gpus = build_gpu_side(options)   # the GPUs of the nodes, for gpu_jobs (None without)
    agent_cls = load_agent(options, agent_path)
    outdir = Path(outdir)
    locks: list[FolderLock] = []

    def claim() -> None:
        """Take the folder once every input (the agent and its -im checkpoint too) is known good."""
        locks.append(claim_outdir(outdir, keep=(options.source, options.workload_file_path,
                                                options.platform_file_path, custom_workload, agent_path, inmodel,
                                                outmodel, *libraries)))
        write_run_info(outdir, options, workload, {"episodes_completed": 0}, status=RUNNING)

    def progress() -> None:
        """Say in ``run.json`` how many episodes are done (at checkpoints), while the run goes on."""
        write_run_info(outdir, options, workload, {"episodes_completed": len(result.metrics)}, status=RUNNING)

    log.debug("inputs: options %s, platform %s, workload %s", options.source, options.platform_file_path,
              custom_workload or options.workload_file_path)
    log.info("run: %d jobs on %d cores, agent %s, %d episode(s), outputs in %s", len(workload.jobs),
             hierarchy.nb_cores, agent_cls.__name__, nb_runs, outdir)
    result = RunResult(outdir=outdir)
    try:
        try:
            with seeded_torch(options.seed):
                _launch(options, hierarchy, workload, agent_cls, result, claim, progress, gpus=gpus, inmodel=inmodel,
                        outmodel=outmodel, nb_runs=nb_runs, quiet=quiet, simulator=simulator, batsim=batsim,
                        checkpoint_every=checkpoint_every)
            write_run_info(outdir, options, workload, {"episodes_completed": len(result.metrics),
                                                       **({"simulator": simulator} if simulator == "batsim"
                                                          else {})})
        except KeyboardInterrupt:
            if locks:
                write_run_info(outdir, options, workload, {"episodes_completed": len(result.metrics)},
                               status=INTERRUPTED)
            raise
        except Exception as exc:
            if locks:
                end_failed(outdir, exc, lambda extra: write_run_info(
                    outdir, options, workload, {"episodes_completed": len(result.metrics), **extra},
                    status=FAILED))
            raise
    finally:
        for lock in locks:
            lock.release()
    return result


def _write_line(f, line: str) -> None:
    """Write ``line`` and a line break to the open log ``f`` and flush it (so that ``kill -9`` keeps it)."""
    f.write(line + "\n")
    f.flush()


def end_episode(agent: Agent) -> float | None:
    """Call the agent's :meth:`~hdeeprm.agents.base.Agent.end_episode` and check what it returns.

    Args:
        agent: The agent at the end of an episode.

    Returns:
        The training loss as a float, or None when the agent learnt nothing.

    Raises:
        AgentError: ``end_episode`` raised (``"agent.py:LINE: A.end_episode() raised ..."``, as
            :func:`~hdeeprm.run.loop.agent_failed`) or returned something that is not a real number
            or None (``"agent.py:LINE: A.end_episode() must return the loss (a number) or None,
            got 'x'"``, LINE being the method's).
    """
    try:
        loss = agent.end_episode()
    except HDeepRMError:
        raise
    except Exception as exc:   # the user's code: say which file and method, keep its frames
        raise agent_failed(agent, "end_episode", exc) from exc
    if loss is None:
        return None
    if isinstance(loss, np.ndarray) and loss.size == 1:
        loss = loss.reshape(()).item()
    if hasattr(loss, "item") and not isinstance(loss, (bool, np.bool_)) and callable(loss.item):
        with contextlib.suppress(Exception):   # a one-element torch tensor
            loss = loss.item()
    if isinstance(loss, numbers.Real) and not isinstance(loss, (bool, np.bool_)):
        return float(loss)
    raise AgentError(f"{method_location(agent, 'end_episode')}: {type(agent).__name__}.end_episode() must return "
                     f"the loss (a number) or None, got {loss!r}")


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


def _seed_torch(seed: int) -> None:
    """Seed torch's generator when torch is loaded (agents that use it draw from it)."""
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(seed)


def agent_inputs(options: Options, hierarchy, workload: Workload,
                 agent_cls: type) -> tuple[Observer | None, RewardFn | None, int]:
    """The observation builder and the reward an agent of ``agent_cls`` gets on ``workload``.

    Classic agents get neither. The observer normalises by percentiles of
    ``workload`` (:mod:`hdeeprm.decision.observation`), so each workload needs its own.

    Returns:
        ``(observer, reward, observation_size)``; ``(None, None, 0)`` for a classic agent.

    Raises:
        OptionsError: unknown observation type or objective.
    """
    from hdeeprm.agents.base import ClassicAgent

    if agent_cls is ClassicAgent:
        return None, None, 0
    from hdeeprm.decision.observation import make_observer
    from hdeeprm.decision.reward import make_reward

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


def _launch(options: Options, hierarchy, workload: Workload, agent_cls, result: RunResult, claim, progress, *,
            gpus=None, inmodel, outmodel, nb_runs: int, quiet: bool, simulator: str, batsim: str,
            checkpoint_every: int | None) -> None:
    """:func:`launch` once the inputs are built (torch, if used, already seeded); fills ``result``.

    ``claim()`` takes the output folder, once the agent is built and its checkpoint loaded;
    ``progress()`` rewrites ``run.json`` with the episodes done (at checkpoints, and at most once
    a second otherwise). ``episodes.csv`` and the logs get each episode's line as soon as it ends
    (flushed), so a run killed without warning leaves the episodes it did.
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
        bar = progress_bar(len(workload.jobs) * nb_runs, "job", "hdeeprm")
    logs = {name: open_for_writing(outdir / f"{name}.log") for name in ("rewards", "losses", "makespans")}
    episodes = None   # episodes.csv, opened at the first episode's end (its columns are that episode's keys)
    reported = time.monotonic()
    try:
        for run in range(nb_runs):
            last = run == nb_runs - 1
            with naming(outdir):   # a write error no stream names (they do: open_for_writing) names the folder
                episode, total = run_episode(hierarchy, workload, options, agent, record=last, observer=observer,
                                             reward=reward, progress=bar,
                                             model=make_contention_model(options.contention),
                                             stream_to=outdir if last else None, gpus=gpus)
            with deferred():   # an episode's update and its record stay together
                probs = getattr(agent, "probs", None)
                if probs:
                    mean = np.mean(np.asarray(probs, dtype=np.float64), axis=0)
                    mean_probs.append([round(float(p), 6) for p in mean])
                    if last:
                        last_probs = [[round(float(p), 6) for p in row] for row in probs]
                loss = end_episode(agent)
                with naming(outdir):
                    metrics = episode.write_outputs(outdir) if last else episode.metrics()
                if last:
                    # the instants Batsim may split: a warning when the run reproduces Batsim's clock
                    warn_split_risks(episode.engine.split_risks, facing_batsim=options.clock == "batsim")
                metrics = {"episode": run, **metrics, "reward": total if reward is not None else "",
                           "loss": loss if loss is not None else ""}
                result.metrics.append(metrics)
                log.info("episode %d: makespan %.6g s, mean bounded slowdown %.6g, reward %s, loss %s", run,
                         metrics["makespan"], metrics["mean_bounded_slowdown"], metrics["reward"],
                         metrics["loss"])
                _write_line(logs["rewards"], f"{total!r}")
                if loss is not None:
                    if not math.isfinite(loss) and not warned_loss:
                        log.warning("episode %d: the training loss is %s (the agent diverged: try a lower lr); "
                                    "written to losses.log as is", run, loss)
                        warned_loss = True
                    _write_line(logs["losses"], f"{loss!r}")
                _write_line(logs["makespans"], f"{float(metrics['makespan'])!r}")
                # episodes.csv last: a run killed at any moment never lists an episode whose log lines are missing
                if episodes is None:
                    episodes = open_for_writing(outdir / "episodes.csv", newline="")
                    writer = csv.DictWriter(episodes, fieldnames=list(metrics))
                    writer.writeheader()
                writer.writerow(metrics)
                episodes.flush()
            checkpoint = bool(outmodel and checkpoint_every and not last and (run + 1) % checkpoint_every == 0)
            if checkpoint:
                agent.save_checkpoint(outmodel)
            if not last and (checkpoint or time.monotonic() - reported >= 1.0):
                progress()
                reported = time.monotonic()
    except KeyboardInterrupt:
        if outmodel and result.metrics:   # hours of training are not thrown away
            agent.save_checkpoint(outmodel)
            log.warning("interrupted after %d episode(s): model saved to %s", len(result.metrics), outmodel)
        raise
    finally:
        for f in (*logs.values(), *([episodes] if episodes is not None else [])):
            with contextlib.suppress(OSError):   # a full disk: the error that matters is already raised
                f.close()
        if bar is not None:
            bar.close()
        if mean_probs:
            with atomic_write(outdir / "probs.json") as f:
                f.write(encode_json({"actions": names, "mean_per_episode": mean_probs, "probs": last_probs},
                                    indent=None) + "\n")
    if outmodel:
        agent.save_checkpoint(outmodel)
