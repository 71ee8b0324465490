"""Outputs: the field's metrics (defined once), Batsim-format writers and plots.

:mod:`~hdeeprm.outputs.metrics` defines slowdown, bounded slowdown,
utilization, makespan and energy; :mod:`~hdeeprm.outputs.batsim_csv` writes
Batsim 4.2.1's ``out_*.csv`` files with those definitions;
:mod:`~hdeeprm.outputs.visual` draws ``hdeeprm-visual``'s plots;
:mod:`~hdeeprm.outputs.evaluation` aggregates, prints and plots ``hdeeprm-evaluate``'s comparisons.

The other modules:

* :mod:`~hdeeprm.outputs.gpu_metrics`: GPU metrics of the ATC'23 experiment: allocation rate and the curves
  against the arrived GPU share.
* :mod:`~hdeeprm.outputs.gpu_outputs`: Metrics, files and plots of a timed GPU run
  (a :class:`~hdeeprm.simulation.results.SimulationResult` with its GPU part).
* :mod:`~hdeeprm.outputs.stream`: Batsim-format outputs written while the simulation runs, in bounded memory
  (its rows made in ``rows_kernel.pyx`` when the install built it; the pure-Python rows otherwise, same bytes).
* :mod:`~hdeeprm.outputs.sweep`: Outputs of ``hdeeprm-sweep``: the summary table as Parquet, and the plot of
  every cell's main metrics.
"""
