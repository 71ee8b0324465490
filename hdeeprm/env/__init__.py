"""The Gymnasium face of HDeepRM: the environment, its observations and its rewards.

:class:`~hdeeprm.env.environment.HDeepRMEnv` (registered as
``"hdeeprm/HDeepRM-v0"`` by ``import hdeeprm``) runs the embedded engine one
decision per step; :mod:`~hdeeprm.decision.observation` and
:mod:`~hdeeprm.decision.reward` define what the agent sees and optimises, read
from a :class:`~hdeeprm.decision.view.StateView`. On GPU clusters,
:mod:`~hdeeprm.env.gpu_placement` (``"hdeeprm/GpuPlacement-v0"``, selective placement) and
:mod:`~hdeeprm.env.gpu_provisioning` (``"hdeeprm/GpuProvisioning-v1"`` and ``-v0``, scaling under a budget)
drive the timed GPU replay, on the scenarios of :mod:`~hdeeprm.env.gpu_scenarios`.

The other modules:

* :mod:`~hdeeprm.env.backfill_slot`: Backfill slots: the agent names the job a backfilling strategy reserves
  for; the others backfill around it.
* :mod:`~hdeeprm.env.gpu_job_slot`: GPU job slots: the agent picks which queued GPU job starts next; a
  placement policy places it.
* :mod:`~hdeeprm.env.job_slot`: A job-slot Gymnasium environment: the agent picks which queued job starts
  next.
* :mod:`~hdeeprm.env.rlscheduler`: RLScheduler's SchedGym as a Gymnasium environment: commit to one of the first
  128 queued jobs.
* :mod:`~hdeeprm.env.steps`: Two rules every HDeepRM environment's ``step`` follows: a reset comes first, and
  ``max_steps`` truncates.
* :mod:`~hdeeprm.env.vector`: A vector environment that runs several sub-environments in each worker process.
"""
