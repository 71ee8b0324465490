"""Running HDeepRM: one episode, the launcher, the Batsim path and the pre-flight checks.

:mod:`~hdeeprm.run.loop` is the one decide -> apply -> reward step;
:mod:`~hdeeprm.run.episode` couples the embedded engine and the workload
manager; :mod:`~hdeeprm.run.launch` is ``hdeeprm-launch`` as a library;
:mod:`~hdeeprm.run.batsim` runs the same decision system against a real
Batsim; :mod:`~hdeeprm.run.check` is ``hdeeprm-check``; :mod:`~hdeeprm.run.evaluate`
is ``hdeeprm-evaluate`` (policies compared on windows of a trace).

The other modules:

* :mod:`~hdeeprm.run.batsim_server`: What ``hdeeprm-batsim`` does: the embedded engine behind Batsim's command
  line, serving one decision process.
* :mod:`~hdeeprm.run.evolve`: Training an agent's weights by the cross-entropy method on whole training
  windows, judged by the mean bounded slowdown.
* :mod:`~hdeeprm.run.gpu_launch`: What ``hdeeprm-launch`` does for an options file with a ``gpu`` block: a
  timed GPU replay.
* :mod:`~hdeeprm.run.gpu_replay`: The timed GPU replay: jobs arrive, queue, are placed on a GpuCluster, run
  and release their GPUs.
* :mod:`~hdeeprm.run.lifecycle`: The life cycle of a run's output folder, shared by every kind of run (CPU,
  GPU, evaluation, sweep).
* :mod:`~hdeeprm.run.placement`: Placement-only GPU experiments: the ATC'23 protocol (Weng et al., Fig. 9(a))
  on a :class:`GpuCluster`.
* :mod:`~hdeeprm.run.policies`: The policies of ``hdeeprm-evaluate``: policy pairs with a start strategy, and
  learning agents.
* :mod:`~hdeeprm.run.pool`: Worker processes for ``hdeeprm-evaluate -j`` and ``hdeeprm-sweep -j``, stopped
  cleanly by Ctrl-C.
* :mod:`~hdeeprm.run.session`: The session contract: advance -> decide -> apply -> reward, over a read-only
  view (``Episode`` and ``GpuReplay`` implement it; ``drive`` is the plain loop).
* :mod:`~hdeeprm.run.rlscheduler`: RLScheduler's evaluation protocol: its replay of a window, its metrics, its
  table.
* :mod:`~hdeeprm.run.stop`: Stopping a command cleanly: Ctrl-C (SIGINT) and SIGTERM take one path.
* :mod:`~hdeeprm.run.sweep`: What ``hdeeprm-sweep`` does, as a library: a grid of ``hdeeprm-launch`` runs and
  one summary table.
"""
