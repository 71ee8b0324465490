"""Constructors from options: the platform, the workload and the agent of a run.

Configuration flows one way: command line -> :class:`~hdeeprm.config.options.Options`
-> these constructors -> the run. Nothing here reads globals or the current
directory; every path comes resolved from the options.
"""
from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Sequence

from hdeeprm.agents.base import Agent, ClassicAgent, instantiate_agent, load_agent_class
from hdeeprm.config.options import SWF_CONVERSION_OPTIONS, Options
from hdeeprm.errors import OptionsError
from hdeeprm.platform import load_platform
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.workload.model import Workload

log = logging.getLogger(__name__)


def build_platform(options: Options, libraries: Sequence[str | os.PathLike] = ()) -> ResourceHierarchy:
    """Load the options' platform and check ``nb_resources`` against it.

    Args:
        options: The run's options (``platform_file_path``, ``nb_resources``).
        libraries: Extra type library files (later ones override earlier ones and the shipped types).

    Raises:
        OptionsError: no platform given, a GPU node list given, or ``nb_resources`` differs from the
            platform's cores.
        PlatformError: the platform file is invalid.
    """
    if not options.platform_file_path:
        raise OptionsError("platform_file_path is required", path=options.source)
    from hdeeprm.platform.gpu_platform import is_node_list

    if is_node_list(options.platform_file_path):
        raise OptionsError(f"platform_file_path {options.platform_file_path} is an openb node list (a GPU cluster): "
                           "a CPU run needs an HDeepRM platform JSON; for a timed GPU run add a 'gpu' block to the "
                           "options", path=options.source)
    hierarchy = load_platform(options.platform_file_path, extra_libraries=list(libraries))
    if options.nb_resources is not None and options.nb_resources != hierarchy.nb_cores:
        raise OptionsError(f"nb_resources must equal the platform's cores ({hierarchy.nb_cores} in "
                           f"{options.platform_file_path}), got {options.nb_resources}", path=options.source)
    return hierarchy


def build_workload(options: Options, hierarchy: ResourceHierarchy, custom_workload: str | None = None) -> Workload:
    """The workload of a run: a Batsim JSON (``-cw`` or a ``.json`` path) or a converted SWF trace.

    With a ``gpu_jobs`` block, the jobs of its GPU trace window join (:func:`with_gpu_jobs`).

    SWF traces are converted afresh on every run (no cache, so a changed
    option always takes effect), with the platform's core count and reference
    speed, the options' seed, ``nb_jobs``, ``first_job``, ``actual_work``,
    ``profile_type``, ``default_mem``, ``enforce_walltime`` and ``mem_bw_choices``.
    A Batsim JSON workload is read as it is (its jobs carry their own ``mem``,
    ``mem_bw`` and walltime), cut to ``nb_jobs``; a warning says when it has no jobs or
    when its ``nb_res`` differs from the platform's cores (the platform wins).

    Raises:
        OptionsError: no workload given, or SWF conversion options (the ``workload``
            block) set together with a Batsim JSON workload, where they cannot apply.
        WorkloadError: the workload file is invalid.
    """
    from hdeeprm.workload.batsim_json import read_batsim_workload

    path = custom_workload or options.workload_file_path
    if not path:
        raise OptionsError("a workload is required: set workload_file_path or pass -cw workload.json",
                           path=options.source)
    if options.gpu_jobs is not None and path.lower().endswith(".json"):
        return with_gpu_jobs(build_workload(options.replace(gpu_jobs=None), hierarchy, custom_workload), options)
    if path.lower().endswith(".json"):
        given = [name for name in SWF_CONVERSION_OPTIONS if name in options.given]
        if given:
            raise OptionsError(f"workload.{given[0]} only applies to SWF traces, but the workload {path} is "
                               f"a Batsim JSON workload whose jobs carry their own values: remove "
                               f"workload.{given[0]} from the options or use an SWF trace", path=options.source)
        workload = read_batsim_workload(path)
        if not workload.jobs:
            log.warning("no job to simulate: the workload %s has no jobs", path)
        if workload.nb_res and workload.nb_res != hierarchy.nb_cores:
            log.warning("the workload's nb_res (%d) differs from the platform's %d cores (%s): the platform's "
                        "cores are simulated, jobs larger than the platform are rejected at submission",
                        workload.nb_res, hierarchy.nb_cores, path)
        if options.nb_jobs is not None and options.nb_jobs < len(workload.jobs):
            workload = Workload(jobs=workload.jobs[:options.nb_jobs], name=workload.name,
                                nb_res=workload.nb_res, reference_speed=workload.reference_speed,
                                report={**workload.report, "beyond nb_jobs": len(workload.jobs) - options.nb_jobs},
                                source=workload.source)
        return workload
    from hdeeprm.workload.convert import swf_to_workload

    if options.gpu_jobs is not None:
        return with_gpu_jobs(build_workload(options.replace(gpu_jobs=None), hierarchy, custom_workload), options)
    return swf_to_workload(path, nb_jobs=options.nb_jobs, first_job=options.first_job,
                           **swf_conversion(options, hierarchy))


def swf_conversion(options: Options, hierarchy: ResourceHierarchy) -> dict:
    """The SWF conversion arguments a run's options and platform set (all but ``nb_jobs`` and ``first_job``).

    What :func:`build_workload` and the trace windows of :mod:`hdeeprm.config.trace_windows` give
    :func:`~hdeeprm.workload.convert.swf_to_workload` / ``records_to_workload``.

    Returns:
        ``nb_cores``, ``reference_speed`` (the platform's), ``actual_work``, ``profile_type``, ``default_mem``,
        ``seed``, ``enforce_walltime`` and ``mem_bw_choices`` (the options').
    """
    return {"nb_cores": hierarchy.nb_cores, "reference_speed": hierarchy.reference_speed,
            "actual_work": options.actual_work, "profile_type": options.profile_type,
            "default_mem": options.default_mem, "seed": options.seed,
            "enforce_walltime": options.enforce_walltime, "mem_bw_choices": options.mem_bw_choices}


#: Key of a workload's report that counts the jobs :func:`with_gpu_jobs` added (``gpu_jobs``): the rest of the
#: report is the CPU trace's (its conversion report, which counts only the CPU trace's jobs).
GPU_JOBS_REPORT = "gpu jobs"


def with_gpu_jobs(workload: Workload, options: Options) -> Workload:
    """``workload`` with the jobs of the options' GPU trace window (``gpu_jobs``), merged by submission time.

    Both traces start at time 0 of the run (each window's first job submits at 0). Equal times keep the CPU job
    first (a stable merge); Batsim's same-instant order then sorts them by id. The report gains
    :data:`GPU_JOBS_REPORT` (the GPU jobs added); the GPU jobs have no SWF job number (``swf_id`` -1).

    Raises:
        WorkloadError: the GPU trace is invalid or ``gpu_jobs.first_job`` is past its end.
    """
    from hdeeprm.workload.gpu_jobs import DEFAULT_CORES_PER_GPU, as_core_jobs, read_gpu_workload

    block = options.gpu_jobs
    trace = read_gpu_workload(block["workload_file_path"]).window(int(block.get("first_job", 0)), block.get("nb_jobs"))
    extra = as_core_jobs(trace, 0, int(block.get("cores_per_gpu", DEFAULT_CORES_PER_GPU)))
    merged = sorted(workload.jobs + extra, key=lambda job: job.subtime)   # stable: CPU jobs first at equal times
    jobs = [dataclasses.replace(job, index=i) for i, job in enumerate(merged)]
    report = {**workload.report, GPU_JOBS_REPORT: len(extra)}
    return Workload(jobs=jobs, name=workload.name, nb_res=workload.nb_res, reference_speed=workload.reference_speed,
                    report=report, source=workload.source)


def build_gpu_side(options: Options):
    """The GPUs of the platform's nodes for a run with ``gpu_jobs`` (None without), one node per hierarchy node.

    Raises:
        OptionsError: the platform's node types carry no GPU, or ``gpu_jobs.placement`` needs the fragmentation
            model.
        PlatformError: the platform file is invalid.
    """
    if options.gpu_jobs is None:
        return None
    from hdeeprm.decision.gpu_binding import DEFAULT_BINDING_PLACEMENT, binding_policy
    from hdeeprm.platform.gpu_platform import load_gpu_cluster

    try:
        binding_policy(options.gpu_jobs.get("placement", DEFAULT_BINDING_PLACEMENT))
    except OptionsError as exc:
        raise OptionsError(f"gpu_jobs.{exc}", path=options.source) from None

    cluster = load_gpu_cluster(options.platform_file_path)
    if cluster.nb_gpus == 0:
        raise OptionsError(f"gpu_jobs needs a platform whose node types carry GPUs; {options.platform_file_path} has "
                           "none (e.g. platforms/mixed_cpu_gpu.json)", path=options.source)
    return cluster


def load_agent(options: Options, agent_path: str | None) -> type[Agent]:
    """The agent class of a run: the user's ``agent.py`` or :class:`ClassicAgent`.

    Raises:
        OptionsError: no agent file for a LEARNING agent, or a classic run without one policy pair.
        AgentError: the agent file cannot be loaded.
    """
    if agent_path:
        return load_agent_class(agent_path)
    if options.agent_type == "LEARNING":
        raise OptionsError("a LEARNING agent needs an agent file: hdeeprm-launch agent.py options.json",
                           path=options.source)
    if len(options.actions) != 1:
        raise OptionsError("without an agent file the options must give one classic policy pair: "
                           "pybatsim.agent.policy_pair (e.g. \"first-high_gflops\") or a "
                           f"pybatsim.env.actions.selection with one pair, got {len(options.actions)} actions",
                           path=options.source)
    return ClassicAgent


def check_learning(cls: type, agent_path: str) -> None:
    """Refuse to train an agent class that has no model (a classic or non-learning agent).

    A learning agent is one that can save its model (``save_checkpoint``), as
    :class:`~hdeeprm.agents.learning.LearningAgent` and its subclasses.

    Args:
        cls: The agent file's class (:func:`load_agent`).
        agent_path: Its file, for the message.

    Raises:
        OptionsError: ``"--train agent.py: A is not a learning agent (it has no save_checkpoint(), nothing to
            train): give an agent file whose class learns, or compare it with -p agent.py"``.
    """
    if not callable(getattr(cls, "save_checkpoint", None)):
        raise OptionsError(f"--train {agent_path}: {cls.__name__} is not a learning agent (it has no "
                           "save_checkpoint(), nothing to train): give an agent file whose class learns, or compare "
                           f"it with -p {agent_path}")


def build_agent(options: Options, cls: type[Agent], observation_size: int) -> Agent:
    """Instantiate the agent class of :func:`load_agent` with what the options offer.

    Learning agents get ``(gamma, hidden, action_size, observation_size)`` as in the
    original HDeepRM, plus ``lr``, ``seed`` and ``options`` when they ask for them.

    Raises:
        AgentError: the constructor needs something not offered, or fails.
    """
    if cls is ClassicAgent:
        return ClassicAgent(0)
    return instantiate_agent(cls, gamma=options.gamma, hidden=options.hidden,
                             action_size=len(options.actions), observation_size=observation_size,
                             lr=options.lr, seed=options.seed, options=options)
