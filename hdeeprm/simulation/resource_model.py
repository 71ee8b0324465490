"""The interface between the event kernel and the resource models plugged into it (SimGrid's way).

SimGrid keeps one kernel (time, events, activities) and puts each kind of resource behind one model
interface (CPU, network, disk): the kernel asks a model how fast an activity goes and what it costs, and
knows no model by name (Casanova et al., "Versatile, scalable, and accurate simulation of distributed
applications and platforms", JPDC 74(10), 2014). HDeepRM's kernel does the same: the
:class:`~hdeeprm.simulation.engine.Engine` holds the CPU model (:class:`~hdeeprm.simulation.cpu_model.CpuModel`,
the hosts every Batsim job runs on) and a list of further models, each a :class:`ResourceModel`: the GPU
model (:class:`~hdeeprm.simulation.gpu_model.GpuModel`), or a model of a user's own (a site-wide licence
count, a burst buffer). A job asks a model for a *share* (its GPUs, its licences) through
``Engine.execute_job(job, hosts, shares={name: share})``; the kernel then calls

- :meth:`ResourceModel.start` when the job starts (the model takes the share and returns the job's run-time
  factor: the job runs its ``delay`` times the product of the factors of the models it holds),
- :meth:`ResourceModel.end` at **every** job end, whether the job held a share of the model or not (a model
  that meters energy closes its energy window there, as Batsim's ``consumed_joules`` runs to the last job end),
- :meth:`ResourceModel.advance` when the clock moves, before the events of the new instant (power
  integration), and :meth:`ResourceModel.first_submission` when the first jobs are submitted (the energy
  window opens).

Which share a job gets, and whether it fits, is the decision system's business; the kernel never asks. A model
that the workload manager schedules by itself (``WorkloadManager(..., models=[...])``: a counted resource such as
licences, which the job asks for whatever cores it gets) also answers the scheduler's questions, the stages of
the Kubernetes scheduler framework (filter, reserve): :meth:`SchedulableModel.demand` (the share a job asks for),
:meth:`SchedulableModel.never_fits` (rejection at submission), :meth:`ResourceModel.fits` (the fit test now), and
for the reservations of EASY backfilling a what-if state: :meth:`SchedulableModel.free_now`,
:meth:`SchedulableModel.fits_in` and :meth:`SchedulableModel.moved` (the free resources when running jobs end, or
with a backfilled job still holding its share). The GPU model is scheduled with the job's cores instead (a GPU is
on the node of its cores: :mod:`hdeeprm.decision.gpu_binding`).
"""
from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

__all__ = ["ResourceModel", "SchedulableModel"]


@runtime_checkable
class ResourceModel(Protocol):
    """A kind of resource plugged into the event kernel (see the module docstring).

    Attributes:
        name: The key of the job's share in ``Engine.execute_job(..., shares={name: share})``, unique among the
            models of one engine (``"gpu"`` for the GPU model).
    """

    name: str

    def advance(self, t: float) -> None:
        """The clock moves to ``t`` seconds (>= the last call's): integrate what the model meters up to ``t``."""

    def first_submission(self, t: float) -> None:
        """The first jobs are submitted at ``t`` seconds (called after :meth:`advance`): open the energy window."""

    def fits(self, job: int, share: Any) -> bool:
        """Whether ``share`` is free now for job index ``job`` (the fit test the decision system asks)."""

    def start(self, job: int, share: Any, duration: float) -> float:
        """Job index ``job`` starts now holding ``share``; ``duration`` is its run time in seconds at factor 1.

        ``duration`` is NaN for a ``parallel_homogeneous`` job (its time is its FLOP at its hosts' speed): the
        model must then return 1.0 (the kernel refuses another factor).

        Returns:
            The job's run-time factor on this share (> 0; 1.0 when the resource does not change its speed).

        Raises:
            SimulationError: The share is not free (a decision system that skipped :meth:`fits`).
        """

    def end(self, job: int) -> None:
        """Job index ``job`` ends now: free its share if it holds one (called at every job end, see above)."""

    def power(self) -> float:
        """The resource's power now, watts (0.0 for a resource that draws none)."""

    @property
    def spent(self) -> float:
        """Joules consumed from the first submission to the last job end so far (0.0 for no energy)."""


@runtime_checkable
class SchedulableModel(ResourceModel, Protocol):
    """A :class:`ResourceModel` the workload manager schedules by itself (see the module docstring).

    Its what-if state is any value the model understands (a count, an array); the scheduler only passes it back.
    """

    def demand(self, job: Any) -> Any | None:
        """The share a :class:`~hdeeprm.workload.model.Job` asks for, or None when it needs none of this resource."""

    def never_fits(self, job: Any) -> str | None:
        """Why the job can never get its share even on an idle platform (it is then rejected), or None."""

    def free_now(self) -> Any:
        """A what-if copy of what is free now (changing it changes nothing in the model)."""

    def fits_in(self, state: Any, share: Any) -> bool:
        """Whether ``share`` fits in what-if state ``state``."""

    def moved(self, state: Any, share: Any, sign: int) -> Any:
        """``state`` with ``share`` given back (``sign`` +1: a job ends) or taken (-1: a job holds it); returned."""
