"""The reservation profile of conservative backfilling on a GPU cluster: free resources over future time.

Conservative backfilling (Mu'alem and Feitelson, IEEE TPDS 12(6), 2001) gives every queued job a reservation
at the earliest time it fits without moving the reservation of any job before it. On a GPU cluster the
resources are per node (CPU, memory) and per GPU (its free share and its free GPU memory), so the profile is
a table: one row per future instant where something is estimated to end, holding the free resources from
that instant to the next one, ``N`` nodes by ``W`` GPU slots. A reservation takes its resources from the row
of its start up to the row of its estimated end (a row is added there when new), so that the rows after it
see them taken.

Rows live in one growing buffer and are kept in time order by an index list, so that checking or taking a
job's resources over a window of rows is one NumPy operation per part of the job.

:class:`ReservationPlan` is the GPU replay's side of the one conservative backfilling loop,
:func:`hdeeprm.decision.conservative.conservative_backfill`: this profile and the queued jobs' reservations, kept
from one decision to the next.
"""
from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from hdeeprm.decision.gpu_choices import Accept, plan_parts
from hdeeprm.decision.gpu_placement import Placement, PlacementState, PodRequest, gpu_fits


class ReservationProfile:
    """Free resources of a GPU cluster from now on, as running and reserved jobs are estimated to end.

    Args:
        state: The cluster's free resources now (read; never changed).
        now: The decision's time in seconds.
        ends: ``(estimated end s, placements)`` of every running (or starting) job, any order; an end before
            ``now`` counts as now. Placements are ``Placement`` records (node, GPUs, pod).

    Attributes:
        times: The profile's instants, ascending, seconds.
    """

    def __init__(self, state: PlacementState, now: float, ends: Sequence[tuple[float, Sequence]]) -> None:
        nodes, width = state.gpu_left.shape
        size = len(ends) + 8
        self.cpu = np.empty((size, nodes), dtype=np.int64)
        self.memory = np.empty((size, nodes), dtype=np.int64)
        self.gpu = np.empty((size, nodes, width), dtype=np.int64)
        self.gpu_memory = np.empty((size, nodes, width), dtype=np.int64)
        self.model, self.active, self.capacity = state.model, state.active, state.gpu_memory
        self._state = state.free_copy()   # a what-if state to plan in, its free resources taken from a row
        self.cpu[0], self.memory[0], self.gpu[0] = state.cpu_left, state.memory_left, state.gpu_left
        self.gpu_memory[0] = state.gpu_memory_left
        self.used = 1
        self.times: list[float] = [now]
        self.rows: list[int] = [0]
        for end, placed in sorted(ends, key=lambda e: max(e[0], now)):
            end = max(end, now)
            if end != self.times[-1]:
                row = self._copy_row(self.rows[-1])
                self.times.append(end)
                self.rows.append(row)
            self._take(self.rows[-1:], placed, -1)

    def forget_before(self, now: float) -> None:
        """Drop the instants before ``now``: the one holding ``now`` becomes the first, at ``now``."""
        keep = bisect.bisect_right(self.times, now) - 1
        if keep > 0:
            del self.times[:keep], self.rows[:keep]
        self.times[0] = now

    def _copy_row(self, source: int) -> int:
        """A new buffer row holding a copy of row ``source``; returns its index."""
        if self.used == len(self.cpu) and 2 * len(self.rows) <= self.used:   # reuse the rows forgotten
            live = np.array(self.rows)
            n = len(live)
            self.cpu[:n], self.memory[:n], self.gpu[:n] = self.cpu[live], self.memory[live], self.gpu[live]
            self.gpu_memory[:n] = self.gpu_memory[live]
            source = self.rows.index(source)
            self.rows, self.used = list(range(n)), n
        if self.used == len(self.cpu):
            grow = len(self.cpu)
            self.cpu = np.concatenate([self.cpu, np.empty_like(self.cpu[:grow])])
            self.memory = np.concatenate([self.memory, np.empty_like(self.memory[:grow])])
            self.gpu = np.concatenate([self.gpu, np.empty_like(self.gpu[:grow])])
            self.gpu_memory = np.concatenate([self.gpu_memory, np.empty_like(self.gpu_memory[:grow])])
        row = self.used
        self.cpu[row], self.memory[row], self.gpu[row] = self.cpu[source], self.memory[source], self.gpu[source]
        self.gpu_memory[row] = self.gpu_memory[source]
        self.used += 1
        return row

    def _take(self, rows: list[int], placed: Sequence, sign: int = 1) -> None:
        """Take (``sign`` 1) or give back (-1) the resources of ``placed`` in buffer ``rows``."""
        span = rows[0] if len(rows) == 1 else rows
        for p in placed:
            pod = p.pod
            self.cpu[span, p.node] -= sign * pod.cpu
            self.memory[span, p.node] -= sign * pod.memory
            if not pod.num_gpu:
                continue
            where = (span, p.node, p.gpus) if len(rows) == 1 else np.ix_(rows, [p.node], p.gpus)
            self.gpu[where] -= sign * pod.gpu_milli
            taken = pod.memory_taken(self.capacity[p.node])
            if taken:
                self.gpu_memory[where] -= sign * taken

    def candidates(self, pod: PodRequest, since: float) -> list[int]:
        """Positions (in :attr:`times`) from ``since`` on where ``pod`` fits some node, ascending."""
        first = bisect.bisect_left(self.times, since)
        rows = self.rows[first:]
        ok = (self.cpu[rows] >= pod.cpu) & (self.memory[rows] >= pod.memory)
        if self.active is not None:
            ok &= self.active
        if pod.num_gpu:
            ok &= pod.allowed[self.model]
            ok &= gpu_fits(self.gpu[rows], self.gpu_memory, pod, rows).sum(axis=2) >= pod.num_gpu
        return (np.flatnonzero(ok.any(axis=1)) + first).tolist()

    def plan(self, position: int, pods: Sequence[PodRequest], accept: Accept | None = None) -> list[Placement] | None:
        """Where a job's parts go at ``times[position]`` (:func:`~hdeeprm.decision.gpu_choices.plan_parts`).

        Args:
            position: A position in :attr:`times`.
            pods: The job's parts.
            accept: A test the placement must pass (e.g. that it leaves every later reservation in place,
                :meth:`holds`): each part goes to the node with the fewest free GPUs among those where it passes.

        Returns:
            The placements, or None when a part fits no node then (or none that ``accept`` accepts).
        """
        row = self.rows[position]
        then = self._state.free_copy()
        then.set_free(self.cpu[row].copy(), self.memory[row].copy(), self.gpu[row].copy(), self.gpu_memory[row].copy())
        return plan_parts(then, pods, accept=accept)

    def holds(self, position: int, end: float, placed: Sequence) -> bool:
        """Whether every row from ``times[position]`` to before ``end`` has room for ``placed`` where it is."""
        rows = self.rows[position:bisect.bisect_left(self.times, end)]
        if not rows:
            return True
        # Amount needed per (node, what): what -2 CPU, -1 memory, g >= 0 GPU g's share, -3 - g its GPU memory.
        need: dict[tuple[int, int], int] = {}
        for p in placed:
            need[p.node, -2] = need.get((p.node, -2), 0) + p.pod.cpu
            need[p.node, -1] = need.get((p.node, -1), 0) + p.pod.memory
            taken = p.pod.memory_taken(self.capacity[p.node])
            for g in (p.gpus.tolist() if p.pod.num_gpu else ()):
                need[p.node, g] = need.get((p.node, g), 0) + p.pod.gpu_milli
                if taken:
                    need[p.node, -3 - g] = need.get((p.node, -3 - g), 0) + taken
        for (node, g), amount in need.items():
            column = (self.cpu[rows, node] if g == -2 else self.memory[rows, node] if g == -1
                      else self.gpu[rows, node, g] if g >= 0 else self.gpu_memory[rows, node, -3 - g])
            if column.min() < amount:
                return False
        return True

    def reserve(self, position: int, end: float, placed: Sequence) -> None:
        """Take ``placed`` from ``times[position]`` up to ``end`` (an instant added at ``end`` when new)."""
        after = bisect.bisect_left(self.times, end)
        if after == len(self.times) or self.times[after] != end:
            row = self._copy_row(self.rows[after - 1])   # may renumber the rows: before inserting
            self.times.insert(after, end)
            self.rows.insert(after, row)
        self._take(self.rows[position:after], placed)


def _fits_now(state: PlacementState, placed: Sequence[Placement]) -> bool:
    """Whether ``state`` has room for every part of ``placed`` on its node and GPUs (parts on distinct nodes)."""
    return all(state.has_room(p.node, p.gpus, p.pod) for p in placed)


class ReservationPlan:
    """Conservative backfilling's plan on a GPU cluster, kept between decisions (a timed replay's profile view).

    The reservation profile and every queued job's reservation: the
    :class:`~hdeeprm.decision.conservative.ProfileView` of a timed GPU replay.

    With exact estimates (a replay's) reservations stay valid, so a decision starts the jobs whose reservation has
    come, on the resources reserved for them, and reserves only the jobs queued since. Everything is planned anew,
    in the decision's order, at the first decision, when the active nodes changed, when a running job is past its
    estimated end or a due job no longer fits (estimates were wrong), or when a reserved job left the queue by
    other means (an environment's agent). Slots are positions in :attr:`ReservationProfile.times`; each part of a
    job planned later goes to the fitting node with the fewest free GPUs among those where it leaves every earlier
    reservation in place, a job starting now to the policy's most preferred such node (every fitting node is tried,
    :func:`~hdeeprm.decision.gpu_choices.place_job`), kept from its start to its estimated end. Its shortcut: the
    profile only loses resources as reservations are added, so a shape whose first part fits no node at a time
    before the first candidate of an earlier job of that shape still does not (candidates start there).

    Args:
        manager: The :class:`~hdeeprm.decision.gpu_manager.GpuManager` (its state, queue, running jobs, parts of
            each job, shapes, run-time estimate and policy).

    Attributes:
        profile: The reservation profile (None before the first decision).
        reserved: Job -> (reserved start s, reservation order, placements), for the jobs reserved later than now.
    """

    def __init__(self, manager) -> None:
        self.manager = manager
        self.profile: ReservationProfile | None = None
        self.reserved: dict[int, tuple[float, int, list[Placement]]] = {}
        self._nb_reserved = 0
        self._active: np.ndarray | None = None   # the active nodes the plan was made for
        self._floor: dict[int, float] = {}     # shape -> first candidate time of this decision, s
        self._taken: set[int] = set()             # the due jobs this decision starts

    def open(self, now: float) -> list[tuple[int, list[Placement]]]:
        """Plan anew at ``now`` (s) when the plan is stale, else drop its past; start the due reservations.

        Returns:
            ``(job, placements)`` of the due reserved jobs, placed in the manager's state on their reserved
            resources, by reserved start then reservation order.
        """
        m = self.manager
        active = m.state.active
        due = sorted((t, seq, job) for job, (t, seq, _) in self.reserved.items() if t <= now)
        moved = (active is None) != (self._active is None) or (active is not None
                                                                and not np.array_equal(active, self._active))
        queued = set(m.queue)
        stale = (self.profile is None or moved or any(end < now for end, _, _ in m.running.values())
                 or any(job not in queued for job in self.reserved)   # started by other means (an env's agent)
                 or not all(_fits_now(m.state, self.reserved[job][2]) for _, _, job in due))
        if stale:
            self.profile = ReservationProfile(m.state, now, [(end, placed) for end, _, placed in m.running.values()])
            self.reserved, due = {}, []
        else:
            self.profile.forget_before(now)
        self._active = None if active is None else active.copy()
        started = []
        for _, _, job in due:
            placed = self.reserved.pop(job)[2]
            for p in placed:
                m.state.place(p.node, p.gpus, p.pod)
            started.append((job, placed))
        self._taken = {job for job, _ in started}
        self._floor = {}
        return started

    def waiting(self, ordered: Sequence[int]) -> list[int]:
        """The jobs of ``ordered`` neither reserved nor started by :meth:`open`."""
        reserved, taken = self.reserved, self._taken
        return [job for job in ordered if job not in reserved and job not in taken]

    def candidates(self, job: int, now: float):
        """``(time s, position)`` of the profile's instants where ``job``'s first part fits some node.

        From the floor of ``job``'s shape (else now) on (:meth:`ReservationProfile.candidates`); the first one
        sets the floor.
        """
        m, profile, floor = self.manager, self.profile, self._floor
        shape, times = m.shapes[job], profile.times
        for k in profile.candidates(m.chunks[job][0], floor.get(shape, now)):
            floor.setdefault(shape, times[k])
            yield times[k], k

    def respects(self, job: int, position: int) -> Accept:
        """The test of a placement of ``job`` from ``times[position]``: it moves no earlier reservation.

        It passes when every row of the profile from then to the job's estimated end there has room for it where it
        is placed (:meth:`ReservationProfile.holds`).
        """
        profile, estimate = self.profile, self.manager.estimate
        start = profile.times[position]
        return lambda parts: profile.holds(position, start + estimate(job, parts), parts)

    def place(self, job: int, accept: Accept | None) -> list[Placement] | None:
        """Place ``job`` now in the manager's state with the run's policy (its resources taken).

        Each part goes to the policy's most preferred node that ``accept`` accepts; None when none does.
        """
        return self.manager._try(job, accept)

    def plan(self, job: int, position: int, accept: Accept | None) -> list[Placement] | None:
        """Where ``job``'s parts go at ``times[position]`` (:meth:`ReservationProfile.plan`); None: nowhere."""
        return self.profile.plan(position, self.manager.chunks[job], accept)

    def reserve(self, job: int, position: int, placed: list[Placement]) -> None:
        """Take ``placed`` in the profile from ``times[position]`` to ``job``'s estimated end there."""
        profile = self.profile
        profile.reserve(position, profile.times[position] + self.manager.estimate(job, placed), placed)

    def start(self, job: int, placed: list[Placement]) -> None:
        """Nothing: the manager's caller starts the job (and tells :meth:`GpuManager.started`)."""

    def keep(self, job: int, when: float, placed: list[Placement]) -> None:
        """Keep ``job``'s reservation at ``when`` (s) on ``placed`` for the decisions to come."""
        self.reserved[job] = (when, self._nb_reserved, placed)
        self._nb_reserved += 1
