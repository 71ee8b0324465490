"""Outputs: the field's metrics (defined once), Batsim-format writers and plots.

:mod:`~hdeeprm.outputs.metrics` defines slowdown, bounded slowdown,
utilization, makespan and energy; :mod:`~hdeeprm.outputs.batsim_csv` writes
Batsim 4.2.1's ``out_*.csv`` files with those definitions;
:mod:`~hdeeprm.outputs.visual` draws ``hdeeprm-visual``'s plots;
:mod:`~hdeeprm.outputs.evaluation` aggregates, prints and plots ``hdeeprm-evaluate``'s comparisons.
"""
