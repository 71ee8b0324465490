"""Conservative backfilling written once, over a reservation profile that each resource side supplies.

Conservative backfilling (Mu'alem and Feitelson, "Utilization, predictability, workloads, and user runtime
estimates in scheduling the IBM SP2 with backfilling", IEEE TPDS 12(6), 2001) gives **every** queued job a
**reservation**, not only the head of the queue as EASY does (:mod:`hdeeprm.decision.easy`). As
:func:`conservative_backfill` runs it, over a **profile** of the free resources over future time (running jobs
released at their estimated ends, each reservation taken from its start to its estimated end):

1. the side opens the decision's profile (built from the running jobs, or the plan kept from the last
   decision, whose due reservations start now on their reserved resources);
2. every queued job, in the decision's order, lists its **candidate start times**, ascending: the instants of
   the profile from which it may fit;
3. at the first candidate where it can be placed without moving any earlier reservation, the job is
   reserved in the profile: at *now* it is placed with the run's policy (cores chosen by the decision's core
   selection, GPUs by the placement policy) and starts; later, it is planned at that time and waits.

What "resources", "fits" and "estimated end" mean is the side's business, behind a :class:`ProfileView`:

* the cores of a CPU (or mixed CPU+GPU) run: :class:`hdeeprm.decision.backfilling.ConservativeBackfilling`
  (free cores over time; memory, GPUs and resource models are checked when a job starts);
* the nodes and GPUs of a timed GPU replay, whose plan is kept between decisions:
  :class:`hdeeprm.decision.gpu_reservations.ReservationPlan` (for
  :class:`hdeeprm.decision.gpu_manager.GpuManager`).

Each side keeps its shortcuts as hooks (:meth:`ProfileView.waiting`, :meth:`ProfileView.candidates`), never as
a second copy of the loop.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol, TypeVar

from hdeeprm.decision.easy import Accept

J = TypeVar("J")
P = TypeVar("P")


class ProfileView(Protocol[J, P]):
    """What conservative backfilling needs of one side's reservation profile (see the module docstring).

    ``J`` is the side's job (a :class:`~hdeeprm.workload.model.Job`, a GPU job index), ``P`` a placement (cores,
    a list of GPU placements). A *slot* is the side's handle on one instant of its profile (the time itself, a
    position in the profile's instants), handed back to the hooks as it came from :meth:`candidates`.
    """

    def open(self, now: float) -> list[tuple[J, P]]:
        """Build (or bring up to date) the decision's profile at ``now`` (seconds).

        Returns:
            ``(job, placement)`` of the jobs reserved by an earlier decision whose reservation is now, started on
            their reserved resources, in start order (empty on a side that plans anew at every decision).
        """

    def waiting(self, ordered: Sequence[J]) -> Iterable[J]:
        """The jobs to reserve, in the decision's order ``ordered``: those not reserved yet.

        A side whose profile is not kept between decisions may stop early, when no later job can start now.
        """

    def candidates(self, job: J, now: float) -> Iterable[tuple[float, Any]]:
        """``(time s, slot)`` of the instants, ascending, at which ``job``'s reservation may start.

        The first may be ``now``; each is tried until one places the job (generated lazily: the side may work out
        the next one only when the previous one failed).
        """

    def respects(self, job: J, slot: Any) -> Accept | None:
        """The test a placement of ``job`` from ``slot`` must pass: it moves no earlier reservation.

        None: any placement does (the candidate times already ensure it).
        """

    def place(self, job: J, accept: Accept | None) -> P | None:
        """Place ``job`` now with the run's policy (it may draw from the run's generator).

        Where it can, the placement passes ``accept`` (the side tries its alternatives in the policy's order of
        preference). Returns the placement, or None when it does not fit (nothing taken then); the job is not
        started yet (:meth:`start` does).
        """

    def plan(self, job: J, slot: Any, accept: Accept | None) -> P | None:
        """Where ``job`` would go from ``slot`` (a later instant), passing ``accept``; None: nowhere."""

    def reserve(self, job: J, slot: Any, placement: P) -> None:
        """Take ``job``'s resources on ``placement`` in the profile, from ``slot`` to the job's estimated end."""

    def start(self, job: J, placement: P) -> None:
        """Start ``job`` on ``placement`` now (its reservation is now, already reserved)."""

    def keep(self, job: J, when: float, placement: P) -> None:
        """Note ``job``'s reservation at ``when`` (seconds) on ``placement``, for a side that keeps its plan."""


def conservative_backfill(view: ProfileView[J, P], ordered: Sequence[J], now: float) -> list[tuple[J, P]]:
    """One conservative backfilling decision (Mu'alem and Feitelson 2001; see the module docstring).

    Args:
        view: The side's reservation profile (:class:`ProfileView`).
        ordered: The queued jobs, in the decision's order.
        now: The decision's time, seconds.

    Returns:
        ``(job, placement)`` of every job started now, in start order: the due reservations of
        :meth:`ProfileView.open`, then each job whose reservation is now (:meth:`ProfileView.start` called).
    """
    started: list[tuple[J, P]] = list(view.open(now))
    # the queue can be long and every job is reserved: the hooks looked up once
    candidates, respects, place, plan = view.candidates, view.respects, view.place, view.plan
    reserve, start, keep = view.reserve, view.start, view.keep
    for job in view.waiting(ordered):
        for when, slot in candidates(job, now):
            accept = respects(job, slot)
            placement = place(job, accept) if when == now else plan(job, slot, accept)
            if placement is None:   # no room then without moving an earlier reservation
                continue
            reserve(job, slot, placement)
            if when == now:
                start(job, placement)
                started.append((job, placement))
            else:
                keep(job, when, placement)
            break
    return started
