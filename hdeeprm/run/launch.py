"""What ``hdeeprm-launch`` does, as a library: build inputs, run episodes, write outputs.

The command line front end is :mod:`hdeeprm.cli.launch`; everything here
raises :class:`~hdeeprm.errors.HDeepRMError` subclasses and never exits.
"""
from __future__ import annotations

import csv
import json
import logging
import platform as _platform
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hdeeprm import __version__
from hdeeprm.agents.base import Agent, ClassicAgent, instantiate_agent, load_agent_class
from hdeeprm.run.episode import Episode
from hdeeprm.errors import AgentError, OptionsError
from hdeeprm.config.options import Options
from hdeeprm.platform import load_platform
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.workload.model import Workload

log = logging.getLogger("hdeeprm")


def build_platform(options: Options) -> ResourceHierarchy:
    """Load the options' platform and check ``nb_resources`` against it.

    Raises:
        OptionsError: no platform given, or ``nb_resources`` differs from the platform's cores.
        PlatformError: the platform file is invalid.
    """
    if not options.platform_file_path:
        raise OptionsError("platform_file_path is required", path=options.source)
    hierarchy = load_platform(options.platform_file_path)
    if options.nb_resources is not None and options.nb_resources != hierarchy.nb_cores:
        raise OptionsError(f"nb_resources must equal the platform's cores ({hierarchy.nb_cores} in "
                           f"{options.platform_file_path}), got {options.nb_resources}", path=options.source)
    return hierarchy


def build_workload(options: Options, hierarchy: ResourceHierarchy, custom_workload: str | None = None) -> Workload:
    """The workload of a run: a Batsim JSON (``-cw`` or a ``.json`` path) or a converted SWF trace.

    SWF traces are converted afresh on every run (no cache, so a changed
    option always takes effect), with the platform's core count and reference
    speed, the options' seed, ``nb_jobs``, ``first_job``, ``actual_work``,
    ``profile_type``, ``default_mem``, ``enforce_walltime`` and ``mem_bw_choices``.

    Raises:
        OptionsError: no workload given.
        WorkloadError: the workload file is invalid.
    """
    from hdeeprm.workload.batsim_json import read_batsim_workload

    path = custom_workload or options.workload_file_path
    if not path:
        raise OptionsError("a workload is required: set workload_file_path or pass -cw workload.json",
                           path=options.source)
    if path.endswith(".json"):
        workload = read_batsim_workload(path)
        if options.nb_jobs is not None and options.nb_jobs < len(workload.jobs):
            workload = Workload(jobs=workload.jobs[:options.nb_jobs], name=workload.name,
                                nb_res=workload.nb_res, reference_speed=workload.reference_speed,
                                report={**workload.report, "beyond nb_jobs": len(workload.jobs) - options.nb_jobs},
                                source=workload.source)
        return workload
    from hdeeprm.workload.convert import swf_to_workload

    return swf_to_workload(path, nb_cores=hierarchy.nb_cores, reference_speed=hierarchy.reference_speed,
                           nb_jobs=options.nb_jobs, first_job=options.first_job,
                           actual_work=options.actual_work, profile_type=options.profile_type,
                           default_mem=options.default_mem, seed=options.seed,
                           enforce_walltime=options.enforce_walltime, mem_bw_choices=options.mem_bw_choices)


def build_agent(options: Options, agent_path: str | None, observation_size: int) -> Agent:
    """The agent of a run: the user's ``agent.py`` or the options' classic policy pair.

    Raises:
        OptionsError: no agent file for a LEARNING agent, or a classic run without one policy pair.
        AgentError: the agent file cannot be loaded or instantiated.
    """
    if agent_path:
        cls = load_agent_class(agent_path)
        return instantiate_agent(cls, gamma=options.gamma, hidden=options.hidden,
                                 action_size=len(options.actions), observation_size=observation_size,
                                 lr=options.lr, seed=options.seed, options=options)
    if options.agent_type == "LEARNING":
        raise OptionsError("a LEARNING agent needs an agent file: hdeeprm-launch agent.py options.json",
                           path=options.source)
    if len(options.actions) != 1:
        raise OptionsError("without an agent file the options must give one classic policy pair: "
                           "pybatsim.agent.policy_pair (e.g. \"first-high_gflops\") or a "
                           f"pybatsim.env.actions.selection with one pair, got {len(options.actions)} actions",
                           path=options.source)
    return ClassicAgent(0)


@dataclass
class RunResult:
    """What a launch produced.

    Attributes:
        metrics: Metrics summary of each episode, in order.
        outdir: Folder holding the outputs.
    """

    metrics: list[dict] = field(default_factory=list)
    outdir: Path = Path(".")


def run_episode(hierarchy: ResourceHierarchy, workload: Workload, options: Options, agent: Agent, *,
                record: bool = True, observer=None, reward=None, progress=None) -> Episode:
    """Simulate ``workload`` once with ``agent`` deciding.

    Args:
        hierarchy, workload, options: The run's inputs.
        agent: Decides at every decision point.
        record: Keep the logs needed by the Batsim-format outputs.
        observer: ``observer(episode) -> np.ndarray`` (float32, (observation_size,)),
            used when ``agent.needs_observation``.
        reward: ``reward(episode) -> float`` given to ``agent.rewarded`` after each action.
        progress: A tqdm-like bar updated with the number of jobs ended, or None.

    Returns:
        The finished :class:`~hdeeprm.run.episode.Episode`.

    Raises:
        AgentError: the agent returned an action outside the action set.
    """
    episode = Episode(hierarchy, workload, actions=options.actions, seed=options.seed, record=record)
    needs_obs = agent.needs_observation and observer is not None
    shown = 0
    while episode.advance():
        obs = observer(episode) if needs_obs else None
        action = agent.decide(obs)
        try:
            episode.apply(int(action))
        except (TypeError, ValueError):
            raise AgentError(f"{type(agent).__name__}.decide must return an int, got {action!r}") from None
        if reward is not None:
            agent.rewarded(reward(episode))
        if progress is not None and episode.jobs_ended - shown >= 256:
            progress.update(episode.jobs_ended - shown)
            shown = episode.jobs_ended
    if progress is not None:
        progress.update(episode.jobs_ended - shown)
    return episode


def write_run_info(outdir: Path, options: Options, workload: Workload, extra: dict | None = None) -> None:
    """Write ``run.json``: resolved options, versions, seed and the workload report."""
    info = {
        "hdeeprm_version": __version__, "python": _platform.python_version(), "numpy": np.__version__,
        "options": options.to_dict(), "workload": {"source": workload.source, "jobs": len(workload.jobs),
                                                     "report": workload.report},
    }
    if extra:
        info.update(extra)
    (outdir / "run.json").write_text(json.dumps(info, indent=2) + "\n")


def launch(options_path: str, *, agent_path: str | None = None, custom_workload: str | None = None,
           inmodel: str | None = None, outmodel: str | None = None, nb_runs: int = 1,
           outdir: str | Path = "hdeeprm-run", quiet: bool = False, simulator: str = "embedded",
           batsim: str = "batsim") -> RunResult:
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

    torch's generator is seeded with the options' seed before a LEARNING agent
    is built and before the first episode whenever torch is loaded, so runs
    are reproducible. ``inmodel`` is loaded before the first episode,
    ``outmodel`` saved (atomically) after the last.

    Raises:
        HDeepRMError: any invalid input (options, platform, workload, agent).
    """
    import sys

    from hdeeprm.config.options import load_options
    from hdeeprm.decision.policies import action_name

    def seed_torch() -> None:
        if "torch" in sys.modules:
            sys.modules["torch"].manual_seed(options.seed)

    options = load_options(options_path)
    logging.basicConfig(level=options.log_level)
    hierarchy = build_platform(options)
    workload = build_workload(options, hierarchy, custom_workload)
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    observer = reward = None
    observation_size = 0
    if agent_path or options.agent_type == "LEARNING":
        from hdeeprm.env.observation import make_observer
        from hdeeprm.env.reward import make_reward

        observer = make_observer(options.observation, hierarchy, workload, options.queue_sensitivity)
        observation_size = observer.size
        reward = make_reward(options.objective)
    if options.agent_type == "LEARNING":
        import torch  # noqa: F401  (seeded before the agent builds its networks)
        seed_torch()
    agent = build_agent(options, agent_path, observation_size)
    if inmodel or outmodel:
        if not hasattr(agent, "load_checkpoint"):
            raise OptionsError(f"-im/-om need a learning agent; {type(agent).__name__} has no model to load or save")
    if inmodel:
        agent.load_checkpoint(inmodel)
    if simulator == "batsim":
        from hdeeprm.run.batsim import run_on_batsim

        metrics = run_on_batsim(hierarchy, workload, options, agent, outdir=outdir, batsim=batsim,
                                observer=observer, reward=reward)
        write_run_info(outdir, options, workload, {"simulator": "batsim"})
        return RunResult(metrics=[metrics], outdir=outdir)
    seed_torch()
    total = [0.0]

    def scored(episode) -> float:
        value = reward(episode)
        total[0] += value
        return value
    names = [action_name(a) for a in options.actions]
    mean_probs: list[list[float]] = []
    last_probs: list[list[float]] = []
    result = RunResult(outdir=outdir)
    bar = None
    if not quiet:
        from tqdm import tqdm

        bar = tqdm(total=len(workload.jobs) * nb_runs, unit="job", desc="hdeeprm", leave=False)
    logs = {name: open(outdir / f"{name}.log", "w") for name in ("rewards", "losses", "makespans")}
    try:
        for run in range(nb_runs):
            last = run == nb_runs - 1
            total[0] = 0.0
            episode = run_episode(hierarchy, workload, options, agent, record=last, observer=observer,
                                  reward=scored if reward is not None else None, progress=bar)
            probs = getattr(agent, "probs", None)
            if probs:
                mean_probs.append([round(float(p), 6) for p in np.mean(np.asarray(probs, dtype=np.float64), axis=0)])
                if last:
                    last_probs = [[round(float(p), 6) for p in row] for row in probs]
            loss = agent.end_episode()
            metrics = episode.write_outputs(outdir) if last else episode.metrics()
            metrics = {"episode": run, **metrics, "reward": total[0] if reward is not None else "",
                       "loss": loss if loss is not None else ""}
            result.metrics.append(metrics)
            logs["rewards"].write(f"{total[0]!r}\n")
            if loss is not None:
                logs["losses"].write(f"{float(loss)!r}\n")
            logs["makespans"].write(f"{float(metrics['makespan'])!r}\n")
    finally:
        for f in logs.values():
            f.close()
        if bar is not None:
            bar.close()
    if mean_probs:
        (outdir / "probs.json").write_text(json.dumps({"actions": names, "mean_per_episode": mean_probs,
                                                        "probs": last_probs}) + "\n")
    with open(outdir / "episodes.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(result.metrics[0]))
        writer.writeheader()
        writer.writerows(result.metrics)
    if outmodel:
        agent.save_checkpoint(outmodel)
    write_run_info(outdir, options, workload)
    return result
