"""Simulators: the embedded Batsim-compatible engine and, in :mod:`~hdeeprm.simulation.batsim`, real Batsim.

:mod:`~hdeeprm.simulation.engine` is the event queue and job life cycle,
:mod:`~hdeeprm.simulation.energy` its energy accounting and
:mod:`~hdeeprm.simulation.recording` the logs of the Batsim-format outputs;
:mod:`~hdeeprm.simulation.port` is the interface the decision system
commands, whichever simulator runs.
"""
