"""Simulators: the embedded Batsim-compatible engine and, in :mod:`~hdeeprm.simulation.batsim`, real Batsim.

:mod:`~hdeeprm.simulation.kernel` is the clock, the event queue and the jobs' life cycle;
:mod:`~hdeeprm.simulation.engine` the Batsim-compatible engine on it, which holds the CPU model
(:mod:`~hdeeprm.simulation.cpu_model`) and takes further resource models behind one interface
(:mod:`~hdeeprm.simulation.resource_model`, e.g. :mod:`~hdeeprm.simulation.gpu_model`);
:mod:`~hdeeprm.simulation.energy` is the hosts' energy accounting and
:mod:`~hdeeprm.simulation.recording` the logs of the Batsim-format outputs;
:mod:`~hdeeprm.simulation.port` is the interface the decision system
commands, whichever simulator runs.

The other modules:

* :mod:`~hdeeprm.simulation.checks`: Input checks of the embedded engine: host tables, job profiles and
  decision arguments.
* :mod:`~hdeeprm.simulation.cpu_model`: The CPU resource model of the event kernel: hosts, pstates, lockstep
  progress and Batsim 4.2.1's energy.
* :mod:`~hdeeprm.simulation.gpu_model`: The GPU resource model of the event kernel: GPU speed, allocation and
  power.
* :mod:`~hdeeprm.simulation.kernel`: The event kernel: the clock, the submission stream, the heap of timed
  events and their same-instant order.
* :mod:`~hdeeprm.simulation.resource_model`: The interface between the event kernel and the resource models
  plugged into it (SimGrid's way).
* :mod:`~hdeeprm.simulation.pstates`: The current pstate of every host, with its speed and wattages: the
  engine's hot per-host state (its usual switches and sums compiled in ``pstates_kernel.pyx`` when the install
  built it; the pure-Python path otherwise, same figures).
* :mod:`~hdeeprm.simulation.results`: What the embedded engine hands out: a :class:`Batch` per instant, a
  :class:`SimulationResult`.
"""
