"""The session contract: advance -> decide -> apply -> reward, over a read-only view.

Every way of running HDeepRM drives a simulation through the same four verbs, whatever the resources:

* :meth:`Session.advance` runs the kernel's events until a decision is due (False once the run has ended);
* the caller **decides** from what it may read (a read-only view: the CPU run's
  :class:`~hdeeprm.decision.view.StateView`, the GPU replay's manager queue and placement state);
* :meth:`Session.apply` applies the decision (an action of the policy-pair set, or placed GPU jobs);
* the caller computes its **reward** from the view (:mod:`hdeeprm.decision.reward`), and at the end reads
  :meth:`Session.metrics` (the one metrics summary of the run) and :meth:`Session.result` (the one result type,
  :class:`~hdeeprm.simulation.results.SimulationResult`).

Two sessions implement it: :class:`~hdeeprm.run.episode.Episode` (cores, memory bandwidth, pstates, and on a
mixed platform GPUs: ``hdeeprm-launch``, ``HDeepRM-v0``, ``HDeepRM-JobSlot-v0``, ``hdeeprm-evaluate``) and
:class:`~hdeeprm.run.gpu_replay.GpuReplay` (a timed GPU replay: ``hdeeprm-launch`` with a ``gpu`` block,
``GpuPlacement-v0``, ``GpuJobSlot-v0``, ``GpuProvisioning-v0/v1``, the GPU benchmarks). Both run on the one
event kernel (:class:`~hdeeprm.simulation.engine.Engine`). :func:`drive` is the plain loop over any session.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

from hdeeprm.simulation.results import SimulationResult


@runtime_checkable
class Session(Protocol):
    """What a simulation run offers its driver (see the module docstring).

    Attributes:
        done: True once no event is left.
    """

    done: bool

    def advance(self) -> bool:
        """Run events until a decision is due; False when the run has ended."""

    def apply(self, decision: Any) -> int:
        """Apply a decision taken at the current instant; returns the number of jobs it started."""

    def metrics(self) -> dict[str, float | int]:
        """The run's metrics summary (the same keys ``hdeeprm-launch`` writes to ``out_metrics.json``)."""

    def result(self) -> SimulationResult:
        """The run's result (callable at any time: a snapshot)."""

    def close(self) -> None:
        """Release what the run holds open (streamed files); what was written stays."""


def drive(session: Session, decide: Callable[[Session], Any]) -> dict[str, float | int]:
    """Run ``session`` to its end, taking ``decide(session)`` at every decision and applying it.

    Args:
        session: A fresh session.
        decide: The decision rule: session -> decision (what :meth:`Session.apply` takes).

    Returns:
        The session's metrics summary.
    """
    try:
        while session.advance():
            session.apply(decide(session))
    finally:
        session.close()
    return session.metrics()
