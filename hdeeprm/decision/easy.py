"""EASY backfilling written once, over a reservation view that each resource side supplies.

EASY backfilling (Lifka, "The ANL/IBM SP scheduling system", JSSPP 1995; Mu'alem and Feitelson,
IEEE TPDS 12(6), 2001), as :func:`easy_backfill` runs it:

1. **head of line**: jobs start in the decision's order until the first that does not fit, the *head*;
2. when at least one more job waits, the head gets a **reservation** at the **shadow time**: running jobs
   are released in order of estimated end (ties by start order) until the head fits;
3. every later job, in order, **backfills** (starts now) when it fits now and does not delay that
   reservation: it ends, by its estimate on the resources it gets, by the shadow time, or the head
   still fits at the shadow time with this job's resources taken.

What "resources", "fits" and "estimate" mean is the side's business, behind a :class:`ReservationView`:

* the cores of a CPU (or mixed CPU+GPU) run, with node memory, GPUs bound to the cores and the shares
  of resource models: :class:`hdeeprm.decision.backfilling.EasyBackfilling` (its PyBatsim-compatible
  free-space geometry is a separate rule set, kept apart);
* the nodes and GPUs of a timed GPU replay: :class:`hdeeprm.decision.gpu_manager.GpuManager`.

Each side keeps its shortcuts as hooks (:meth:`ReservationView.skip`, the caches behind
:meth:`ReservationView.place`), never as a second copy of the loop.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol, TypeVar

from hdeeprm.decision.start_strategy import start_in_order

J = TypeVar("J")
P = TypeVar("P")
#: A test a placement must pass: (placement) -> whether the job may start there.
Accept = Callable[[Any], bool]


class ReservationView(Protocol[J, P]):
    """What EASY needs to know of one side's resources during one decision (see the module docstring).

    ``J`` is the side's job (a :class:`~hdeeprm.workload.model.Job`, a GPU job index), ``P`` a placement
    (cores, a list of GPU placements). The view is built for one decision; it may keep caches for it.
    """

    def place(self, job: J, accept: Accept | None) -> P | None:
        """Place ``job`` now with the run's policy, or None when it does not fit (nothing taken then).

        Args:
            job: The job.
            accept: None (head of line: the policy's choice), or the test a placement must pass: the side
                tries its alternatives, in the policy's order of preference, while the test fails, where it
                can; a refused placement is rolled back.

        Returns:
            The placement; the job is not started yet (:meth:`start` does).
        """

    def start(self, job: J, placement: P) -> None:
        """Start ``job`` on ``placement`` now (after :meth:`place` returned it)."""

    def shadow(self, head: J, now: float) -> tuple[float, Any] | None:
        """The blocked head's reservation.

        Args:
            head: The head job.
            now: The decision's time, seconds.

        Returns:
            ``(shadow time s, what-if resources then)``, the resources the view's :meth:`hold` and
            :meth:`skip` read and update (``math.inf`` when the head never fits, if the side still
            backfills then), or None: no job backfills in this decision.
        """

    def estimate(self, job: J, placement: P) -> float:
        """Estimated run time of ``job`` on ``placement``, seconds."""

    def hold(self, then: Any, head: J, job: J, placement: P) -> bool:
        """Whether ``head`` still fits at the shadow time with ``job``, running on ``placement``, held then.

        When it does, ``job``'s resources are taken in ``then`` (the what-if resources of :meth:`shadow`);
        otherwise ``then`` is left unchanged.
        """

    def skip(self, job: J, now: float, shadow: float, then: Any) -> bool:
        """A cheap pre-filter: True when ``job`` surely cannot backfill (not placed, nothing drawn)."""


def easy_backfill(view: ReservationView[J, P], ordered: Sequence[J], now: float) -> list[tuple[J, P]]:
    """One EASY backfilling decision (Lifka 1995; Mu'alem and Feitelson 2001; see the module docstring).

    Args:
        view: The side's resources (:class:`ReservationView`).
        ordered: The queued jobs, in the decision's order.
        now: The decision's time, seconds.

    Returns:
        ``(job, placement)`` of every job started (:meth:`ReservationView.start` called), in start order:
        the head-of-line prefix, then the backfilled jobs.
    """
    def place_now(job: J) -> P | None:
        placement = view.place(job, None)
        if placement is not None:
            view.start(job, placement)
        return placement

    started: list[tuple[J, P]] = start_in_order(ordered, place_now, True)   # head of line
    rest = ordered[len(started):]
    if len(rest) < 2:
        return started
    head = rest[0]
    reservation = view.shadow(head, now)
    if reservation is None:
        return started
    shadow, then = reservation
    skip, place, start = view.skip, view.place, view.start   # the queue can be long, most jobs skipped
    for job in rest[1:]:
        if skip(job, now, shadow, then):
            continue
        placement = place(job, _spares_head(view, then, head, job, now, shadow))
        if placement is not None:
            start(job, placement)
            started.append((job, placement))
    return started


def _spares_head(view: ReservationView, then: Any, head: Any, job: Any, now: float, shadow: float) -> Accept:
    """EASY's test of a backfill placement: ends by the shadow time, or leaves the head enough then."""
    estimate, hold = view.estimate, view.hold   # called for every node a side tries

    def accept(placement) -> bool:
        return now + estimate(job, placement) <= shadow or hold(then, head, job, placement)
    return accept
