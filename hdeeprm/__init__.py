"""HDeepRM: workload management for heterogeneous clusters with classic and deep-RL agents.

Public surface (``from hdeeprm import ...``), grouped by the data flow:

* configuration: :class:`~hdeeprm.config.options.Options`, :func:`~hdeeprm.config.options.load_options`
* inputs: :func:`~hdeeprm.platform.loader.load_platform`,
  :class:`~hdeeprm.platform.hierarchy.ResourceHierarchy`,
  :class:`~hdeeprm.workload.model.Workload`, :class:`~hdeeprm.workload.model.Job`
* running: :func:`~hdeeprm.run.launch.launch` (what ``hdeeprm-launch`` does),
  :class:`~hdeeprm.run.episode.Episode`, :class:`~hdeeprm.env.environment.HDeepRMEnv`
* the kernel: :class:`~hdeeprm.simulation.kernel.EventKernel`, :class:`~hdeeprm.simulation.engine.Engine`
  (the CPU model), :class:`~hdeeprm.simulation.gpu_model.GpuModel` and
  :class:`~hdeeprm.simulation.gpu_model.GpuSpeedModel`
* GPUs: :class:`~hdeeprm.platform.openb.GpuCluster`, :func:`~hdeeprm.platform.gpu_platform.load_gpu_cluster`,
  :func:`~hdeeprm.platform.gpu_types.load_gpu_library`, :class:`~hdeeprm.workload.gpu_jobs.GpuJobs`,
  :func:`~hdeeprm.workload.gpu_jobs.read_gpu_workload`, :class:`~hdeeprm.run.gpu_replay.GpuRunConfig`,
  :class:`~hdeeprm.run.gpu_replay.GpuReplay`, :func:`~hdeeprm.run.gpu_replay.simulate_gpu`,
  :class:`~hdeeprm.simulation.results.GpuUsage`, :class:`~hdeeprm.decision.gpu_manager.GpuManager`,
  :class:`~hdeeprm.decision.gpu_binding.GpuBinder`, :func:`~hdeeprm.run.gpu_launch.launch_gpu`
* agents: :class:`~hdeeprm.agents.base.Agent`, :class:`~hdeeprm.agents.base.ClassicAgent`
* errors: :class:`~hdeeprm.errors.HDeepRMError` and its subclasses

Importing this package prints nothing, imports none of these modules (they
load on first use, PEP 562), never imports torch or Gymnasium, and registers
the Gymnasium environments of :data:`ENV_ENTRY_POINTS` (``"hdeeprm/HDeepRM-v0"``,
``"hdeeprm/HDeepRM-JobSlot-v0"``, ``"hdeeprm/GpuPlacement-v0"``, ``"hdeeprm/GpuProvisioning-v0"``,
``"hdeeprm/GpuProvisioning-v1"``, ``"hdeeprm/GpuJobSlot-v0"``, ``"hdeeprm/RLScheduler-v0"``,
``"hdeeprm/HDeepRM-BackfillSlot-v0"``)
by their string entry points:
at once when Gymnasium is already loaded, else right after Gymnasium is first
imported (so ``hdeeprm-launch`` does not pay for importing Gymnasium).

The other modules:

* :mod:`~hdeeprm.arguments`: Checks of keyword and command-line arguments, written once: the Gymnasium
  environments' and others.
* :mod:`~hdeeprm.files`: Writing files so that an interrupted write never leaves a truncated file behind.
* :mod:`~hdeeprm.jsontext`: Strict JSON decoding for the JSON inputs (options, platforms, type libraries,
  Batsim workloads).
* :mod:`~hdeeprm.reading`: The reading rules every text input of HDeepRM follows, written once.
* :mod:`~hdeeprm.registry`: Registries of names: one place per kind of named thing, with closest-match
  suggestions.
* :mod:`~hdeeprm.compiled`: How the Python code holds its optional compiled twins: their path names, and
  copies that remake their own.
* :mod:`~hdeeprm.summation`: Left-to-right float sums, the same on every Python version (the outputs' energies).
* :mod:`~hdeeprm.cli`: HDeepRM's console scripts, one module each.
* :mod:`~hdeeprm.outputs`: Outputs: the field's metrics (defined once), Batsim-format writers and plots.
* :mod:`~hdeeprm.serve`: HDeepRM's environments over the network, the OpenEnv way (``pip install -e
  ".[serve]"``).
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import logging
import sys
from typing import Any

__version__ = "0.3.0"

#: Public name -> module that defines it.
_EXPORTS = {
    "Options": "hdeeprm.config.options", "load_options": "hdeeprm.config.options",
    "load_platform": "hdeeprm.platform.loader", "ResourceHierarchy": "hdeeprm.platform.hierarchy",
    "Workload": "hdeeprm.workload.model", "Job": "hdeeprm.workload.model",
    "launch": "hdeeprm.run.launch", "Episode": "hdeeprm.run.episode",
    "HDeepRMEnv": "hdeeprm.env.environment", "JobSlotEnv": "hdeeprm.env.job_slot",
    "Agent": "hdeeprm.agents.base", "ClassicAgent": "hdeeprm.agents.base",
    "HDeepRMError": "hdeeprm.errors",
    # GPUs: clusters and traces, the kernel's GPU model, the replay, the mixed-platform binder
    "GpuCluster": "hdeeprm.platform.openb", "load_gpu_cluster": "hdeeprm.platform.gpu_platform",
    "load_gpu_library": "hdeeprm.platform.gpu_types", "GpuJobs": "hdeeprm.workload.gpu_jobs",
    "read_gpu_workload": "hdeeprm.workload.gpu_jobs", "GpuModel": "hdeeprm.simulation.gpu_model",
    "GpuSpeedModel": "hdeeprm.simulation.gpu_model", "GpuRunConfig": "hdeeprm.run.gpu_replay",
    "GpuReplay": "hdeeprm.run.gpu_replay", "simulate_gpu": "hdeeprm.run.gpu_replay",
    "GpuUsage": "hdeeprm.simulation.results", "SimulationResult": "hdeeprm.simulation.results",
    "GpuManager": "hdeeprm.decision.gpu_manager",
    "GpuBinder": "hdeeprm.decision.gpu_binding", "launch_gpu": "hdeeprm.run.gpu_launch",
    "EventKernel": "hdeeprm.simulation.kernel", "Engine": "hdeeprm.simulation.engine",
}
#: Id of the Gymnasium environment with HDeepRM's policy-pair actions (the default).
ENV_ID = "hdeeprm/HDeepRM-v0"
#: Id of the job-slot environment (the agent picks one of the first K queued jobs).
JOB_SLOT_ENV_ID = "hdeeprm/HDeepRM-JobSlot-v0"
#: Id of the selective GPU placement environment (a node for the head job of the GPU queue, or skip).
GPU_PLACEMENT_ENV_ID = "hdeeprm/GpuPlacement-v0"
#: Id of the GPU provisioning environment (scale the active GPU nodes under a budget and a queueing SLA).
GPU_PROVISIONING_ENV_ID = "hdeeprm/GpuProvisioning-v0"
#: Id of its v1 (the grader credits spending below the budget, the clock is observed, the reward is the grader).
GPU_PROVISIONING_V1_ENV_ID = "hdeeprm/GpuProvisioning-v1"
#: Id of the GPU job-slot environment (the agent picks one of the first K queued GPU jobs, a policy places it).
GPU_JOB_SLOT_ENV_ID = "hdeeprm/GpuJobSlot-v0"
#: Id of RLScheduler's SchedGym (commit to one of the first 128 queued jobs, their loop and observation).
RLSCHEDULER_ENV_ID = "hdeeprm/RLScheduler-v0"
#: Id of the backfill-slot environment (the agent names the job that starts next or gets the EASY reservation).
BACKFILL_SLOT_ENV_ID = "hdeeprm/HDeepRM-BackfillSlot-v0"
#: Every environment id -> its Gymnasium entry point.
ENV_ENTRY_POINTS = {ENV_ID: "hdeeprm.env.environment:HDeepRMEnv",
                    JOB_SLOT_ENV_ID: "hdeeprm.env.job_slot:JobSlotEnv",
                    GPU_PLACEMENT_ENV_ID: "hdeeprm.env.gpu_placement:GpuPlacementEnv",
                    GPU_PROVISIONING_ENV_ID: "hdeeprm.env.gpu_provisioning:GpuProvisioningEnv",
                    GPU_PROVISIONING_V1_ENV_ID: "hdeeprm.env.gpu_provisioning:GpuProvisioningEnvV1",
                    GPU_JOB_SLOT_ENV_ID: "hdeeprm.env.gpu_job_slot:GpuJobSlotEnv",
                    RLSCHEDULER_ENV_ID: "hdeeprm.env.rlscheduler:RLSchedulerEnv",
                    BACKFILL_SLOT_ENV_ID: "hdeeprm.env.backfill_slot:BackfillSlotEnv"}

__all__ = ["BACKFILL_SLOT_ENV_ID", "ENV_ID", "GPU_JOB_SLOT_ENV_ID", "GPU_PLACEMENT_ENV_ID", "GPU_PROVISIONING_ENV_ID",
           "GPU_PROVISIONING_V1_ENV_ID", "JOB_SLOT_ENV_ID", "RLSCHEDULER_ENV_ID", "__version__",
           "register_envs", *_EXPORTS]

# A library leaves logging to the application: records go to the "hdeeprm" logger and
# nowhere else unless the application configures logging (Python's logging HOWTO).
logging.getLogger(__name__).addHandler(logging.NullHandler())


def register_envs() -> None:
    """Register the environments of :data:`ENV_ENTRY_POINTS` with Gymnasium (idempotent; imports only gymnasium)."""
    import gymnasium

    for env_id, entry_point in ENV_ENTRY_POINTS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(id=env_id, entry_point=entry_point)


class _RegisterAfterGymnasium(importlib.abc.MetaPathFinder):
    """Import hook: registers the environment as soon as the ``gymnasium`` package has loaded."""

    def find_spec(self, name, path, target=None):
        """Hand back Gymnasium's own spec, its loader wrapped to register the env afterwards."""
        if name != "gymnasium":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None:
            load = spec.loader.exec_module

            def load_then_register(module) -> None:
                load(module)
                register_envs()

            spec.loader.exec_module = load_then_register
        return spec


def __getattr__(name: str) -> Any:
    """The public names, imported from their modules on first access."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hdeeprm' has no attribute '{name}'")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    """The public names."""
    return sorted(__all__)


if "gymnasium" in sys.modules:
    register_envs()
elif not any(isinstance(f, _RegisterAfterGymnasium) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterAfterGymnasium())
