"""The second simulator: Batsim's protocol codec, the Batsim-protocol server and the PyBatsim adapter.

The other modules:

* :mod:`~hdeeprm.simulation.batsim.pybatsim_adapter`: Run HDeepRM's decision system against a real Batsim,
  through PyBatsim.
"""
