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
"""
from __future__ import annotations

import bisect
from collections.abc import Sequence

import numpy as np

from hdeeprm.decision.gpu_placement import Accept, Placement, PlacementState, PodRequest, gpu_fits, plan_parts


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
        """Where a job's parts go at ``times[position]`` (:func:`~hdeeprm.decision.gpu_placement.plan_parts`).

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
        then.cpu_left, then.memory_left = self.cpu[row].copy(), self.memory[row].copy()
        then.gpu_left, then.gpu_memory_left = self.gpu[row].copy(), self.gpu_memory[row].copy()
        then.total_left = then.gpu_left.sum(axis=1)
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
