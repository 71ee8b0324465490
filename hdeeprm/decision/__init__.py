"""The decision system: queue, policy pairs, start strategies and the heterogeneity layer.

:class:`~hdeeprm.decision.manager.WorkloadManager` turns an agent's action
(:mod:`~hdeeprm.decision.actions`: a job ordering from
:mod:`~hdeeprm.decision.orderings` and a core selection from
:mod:`~hdeeprm.decision.core_selection`, applied by a start strategy from
:mod:`~hdeeprm.decision.strategies`) into Batsim commands, while
:mod:`~hdeeprm.decision.contention` keeps memory, bandwidth and pstates.
Observations and rewards read a :class:`~hdeeprm.decision.view.StateView`.
"""
