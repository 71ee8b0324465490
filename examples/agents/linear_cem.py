"""A linear policy over the ``generations`` observation, trained by the cross-entropy method.

It picks a policy pair per decision from its action set by a linear score of the observation and, untrained,
always takes the first pair of the set (:class:`hdeeprm.agents.evolution.LinearPolicyAgent`). Its weights are
searched on whole training windows by ``python benchmarks/room_cpu.py --cem examples/agents/linear_cem.py``
(:func:`hdeeprm.run.evolve.train_cem`); the checkpoint it writes loads like any other::

    hdeeprm-launch examples/agents/linear_cem.py options.json -im runs/room_cpu/kth_sp2_cem_seed0.pt

with ``"observation": "generations"`` and the same action set in the options.
"""
from hdeeprm.agents.evolution import LinearPolicyAgent


class LinearCEMAgent(LinearPolicyAgent):
    """:class:`~hdeeprm.agents.evolution.LinearPolicyAgent` as it is (see the module docstring)."""
