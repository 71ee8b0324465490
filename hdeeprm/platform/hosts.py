"""Host descriptions the simulators run on (one Batsim/SimGrid host each).

In HDeepRM's heterogeneity layer every core is one host. A
:class:`HostSpec` is what both the SimGrid XML exporter writes and the
SimGrid XML reader returns, and what the embedded engine simulates.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class HostSpec:
    """One compute host with its power states (pstates).

    Attributes:
        name: Host name; Batsim numbers hosts 0..N-1 in byte-wise order of names.
        speeds: Computing speed of each pstate in FLOP/s, shape (nb_pstates,).
        idle_watts: Power drawn in each pstate while nothing computes on the
            host, in watts, shape (nb_pstates,) (SimGrid ``wattage_per_state`` Idle).
        computing_watts: Power drawn in each pstate while computing, in watts,
            shape (nb_pstates,) (SimGrid ``wattage_per_state`` AllCores).
        initial_pstate: Pstate at t = 0.
        properties: Other SimGrid host properties (strings), forwarded to
            schedulers in SIMULATION_BEGINS.
    """

    name: str
    speeds: tuple[float, ...]
    idle_watts: tuple[float, ...]
    computing_watts: tuple[float, ...]
    initial_pstate: int = 0
    properties: dict[str, str] = field(default_factory=dict)
