"""Synthetic workload generators (SWF output), e.g. the Lublin-Feitelson model.

The other modules:

* :mod:`~hdeeprm.workload.generators.gpu`: A seeded synthetic GPU workload: Philly-like arrivals, sizes and
  durations, with GPU constraints.
* :mod:`~hdeeprm.workload.generators.lublin`: Synthetic rigid-job workloads from the Lublin & Feitelson model.
"""
