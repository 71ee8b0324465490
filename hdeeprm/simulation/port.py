"""The interface the decision system uses to command a simulator.

One workload manager drives two simulators: the embedded engine
(:class:`hdeeprm.simulation.engine.Engine` implements this protocol directly)
and a real Batsim reached through PyBatsim
(:mod:`hdeeprm.simulation.batsim.pybatsim_adapter`). Method names follow Batsim's
commands (https://batsim.readthedocs.io/en/latest/protocol.html): every
command takes effect at :attr:`now`, the instant of the batch of events being
answered.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from hdeeprm.workload.model import Job

#: Callback the simulators call once per batch of same-time events:
#: ``on_batch(now, submitted, completed)`` with ``now`` in seconds,
#: ``submitted`` the JOB_SUBMITTED jobs (Batsim order) and ``completed`` the
#: jobs that ended (JOB_COMPLETED / JOB_KILLED), in start order.
BatchCallback = Callable[[float, list[Job], list[Job]], None]


class SimulatorPort(Protocol):
    """Commands a decision system may send (Batsim names in brackets)."""

    @property
    def now(self) -> float:
        """Current simulated time in seconds."""

    def execute_job(self, job: Job, hosts: Sequence[int]) -> None:
        """Start ``job`` now on host ids ``hosts`` (EXECUTE_JOB)."""

    def reject_job(self, job: Job, reason: str) -> None:
        """Reject a submitted job; ``reason`` is recorded in the outputs (REJECT_JOB)."""

    def kill_job(self, job: Job) -> None:
        """Kill a running job (KILL_JOB)."""

    def set_pstate(self, hosts: Sequence[int], pstate: int) -> None:
        """Switch ``hosts`` to computation pstate ``pstate`` (SET_RESOURCE_STATE)."""

    def call_me_later(self, when: float) -> None:
        """Ask for a REQUESTED_CALL event at time ``when`` in seconds (CALL_ME_LATER)."""

    def progress(self, job: Job) -> float:
        """Fraction of the work of a running job done so far, in [0, 1]."""
