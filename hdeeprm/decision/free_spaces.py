"""Free spaces: the "rectangle" bookkeeping of PyBatsim 3.2.1's ``easyBackfill`` scheduler.

PyBatsim's EASY backfilling (``schedulers/easyBackfill.py`` of PyBatsim 3.2.1,
https://gitlab.inria.fr/batsim/pybatsim) sees the cores 0..N-1 as a line and the
free cores as an ordered list of *free spaces*: maximal ranges of consecutive free
cores, each with a length in time (infinite, except while a reservation is laid
over it) and a side it allocates from. This module keeps that list with the same
rules, so that :mod:`hdeeprm.decision.backfilling` can reproduce its schedules job
for job. The rules, as PyBatsim applies them:

* **Allocation** (:meth:`FreeSpaces.take`): a job of n cores takes n consecutive
  cores of one space, at its low end when the space allocates from the low end,
  else at its high end.
* **Release** (:meth:`FreeSpaces.release`): the freed range merges with the free
  space just below it and/or just above it. Merged with both: the lower space
  keeps its side. Merged with the lower only: that space now allocates from its
  high end (next to where the job ended); merged with the upper only: from its
  low end. Merged with none: a new space, allocating from its low end.
* **Reservation** (:meth:`FreeSpaces.reserve`): the range ``[a, b]`` reserved for
  the blocked head from ``shadow`` on. The space holding core ``a`` (or starting
  at it) gets the length ``shadow - now``; when it starts below ``a`` it is paired
  with a *virtual* space of infinite length covering its cores below ``a``,
  inserted right after it; the space allocates from its high end and the virtual
  space from its low end. Likewise at core ``b``: the space holding it (or ending
  at it) gets the length ``shadow - now``; when it ends above ``b`` a virtual space
  covering its cores above ``b`` is inserted right after it; the space then
  allocates from its low end and the virtual space from its high end. Taking
  cores in one of a pair trims the other. Spaces lying strictly between ``a`` and
  ``b`` without touching them keep their infinite length (PyBatsim's behaviour).
* **End of the backfilling pass** (:meth:`FreeSpaces.unreserve`): virtual spaces
  are dropped; the shortened spaces get back an infinite length and allocate from
  their low end.

Allocations made by other core selections (any set of cores) and releases of such
sets are handled as one allocation or release per maximal run of consecutive
cores, in ascending order.
"""
from __future__ import annotations

import math

import numpy as np

from hdeeprm.decision.core_selection import free_runs


class Space:
    """One free space: the cores ``first..last`` (inclusive).

    Attributes:
        first: Lowest core id.
        last: Highest core id.
        length: Seconds the space stays free (``math.inf`` outside a reservation).
        low: Allocates from its low end (True) or from its high end (False).
        link: The other space of a reservation pair, or None.
        removed: Taken out of the list.
    """

    __slots__ = ("first", "last", "length", "low", "link", "removed")

    def __init__(self, first: int, last: int, length: float = math.inf, low: bool = True) -> None:
        self.first, self.last, self.length, self.low = first, last, length, low
        self.link: Space | None = None
        self.removed = False

    @property
    def size(self) -> int:
        """Number of cores."""
        return self.last - self.first + 1

    def __repr__(self) -> str:
        return f"Space({self.first}-{self.last}, length={self.length}, low={self.low})"


class FreeSpaces:
    """The ordered list of free spaces of a line of ``nb_cores`` cores (all free at first).

    Args:
        nb_cores: Number of cores (core ids 0..nb_cores-1).
    """

    def __init__(self, nb_cores: int) -> None:
        self.spaces: list[Space] = [Space(0, nb_cores - 1)] if nb_cores > 0 else []

    def copy(self) -> FreeSpaces:
        """An independent copy (links are not copied: copies are made outside reservations)."""
        out = FreeSpaces(0)
        out.spaces = [Space(s.first, s.last, s.length, s.low) for s in self.spaces]
        return out

    def _remove(self, space: Space) -> None:
        self.spaces.remove(space)
        space.removed = True

    def first_fit(self, nb: int, duration: float | None = None) -> Space | None:
        """The first space (list order) with at least ``nb`` cores and, if given, a length >= ``duration``."""
        for space in self.spaces:
            if nb <= space.size and (duration is None or duration <= space.length):
                return space
        return None

    def peek(self, space: Space, nb: int) -> tuple[int, int]:
        """The range ``(first, last)`` :meth:`take` would give, without taking it."""
        if space.low:
            return space.first, space.first + nb - 1
        return space.last - nb + 1, space.last

    def take(self, space: Space, nb: int) -> tuple[int, int]:
        """Allocate ``nb`` cores of ``space`` at its allocation side; returns the range ``(first, last)``."""
        first, last = self.peek(space, nb)
        link = space.link
        if space.low:
            space.first = last + 1
            if link is not None and link.first <= last:
                link.first = last + 1
        else:
            space.last = first - 1
            if link is not None and link.last >= first:
                link.last = first - 1
        if space.size <= 0:
            self._remove(space)
        if link is not None and not link.removed and link.size <= 0:
            self._remove(link)
        return first, last

    def remove_cores(self, cores: np.ndarray) -> None:
        """Take arbitrary free ``cores`` (int, shape (k,)) out of their spaces (other core selections).

        A space losing inner cores is split into the runs left, each keeping its length and side.
        """
        taken = set(np.asarray(cores).tolist())
        out = []
        for space in self.spaces:
            ids = range(space.first, space.last + 1)
            if not taken.intersection(ids):
                out.append(space)
                continue
            space.removed = True
            left = np.array([c not in taken for c in ids], dtype=bool)
            out.extend(Space(space.first + a, space.first + b, space.length, space.low)
                       for a, b in free_runs(left))
        self.spaces = out

    def release(self, first: int, last: int) -> Space:
        """Free the range ``first..last``; returns the space now holding it (merge rules above)."""
        below = above = None
        position = len(self.spaces)
        for i, space in enumerate(self.spaces):
            if space.first > first:
                above, position = space, i
                break
            below = space
        merge_below = below is not None and below.last + 1 == first
        merge_above = above is not None and above.first - 1 == last
        if merge_below and merge_above:
            below.last = above.last
            self._remove(above)
            return below
        if merge_below:
            below.last, below.low = last, False
            return below
        if merge_above:
            above.first, above.low = first, True
            return above
        space = Space(first, last)
        self.spaces.insert(position, space)
        return space

    def release_cores(self, cores: np.ndarray) -> list[Space]:
        """:meth:`release` of each maximal run of ``cores`` (int, shape (k,)), ascending."""
        mask = np.zeros(int(np.max(cores)) + 1, dtype=bool)
        mask[cores] = True
        return [self.release(first, last) for first, last in free_runs(mask)]

    def reserve(self, first: int, last: int, length: float) -> tuple:
        """Lay the reservation ``first..last`` (free from ``length`` seconds on) over the list.

        Returns:
            What :meth:`unreserve` needs to undo it.
        """
        v1 = s1 = v2 = s2 = None
        i = 0
        while i < len(self.spaces):
            space = self.spaces[i]
            if space.first == first:
                s1, space.length = space, length
            elif space.first < first <= space.last:
                v1 = Space(space.first, first - 1, math.inf, True)
                self.spaces.insert(i + 1, v1)
                v1.link, space.link, space.low = space, v1, False
                s1, space.length = space, length
            if space.last == last:
                s2, space.length = space, length
            elif space.first <= last < space.last:
                v2 = Space(last + 1, space.last, math.inf, False)
                self.spaces.insert(i + 1, v2)
                v2.link, space.link, space.low = space, v2, True
                s2, space.length = space, length
                break
            i += 1
        return v1, s1, v2, s2

    def unreserve(self, marks: tuple) -> None:
        """End a backfilling pass: drop the virtual spaces, restore the shortened ones."""
        v1, s1, v2, s2 = marks
        for virtual, shortened in ((v1, s1), (v2, s2)):
            if virtual is not None:
                virtual.link.link = None
                virtual.link = None
                if not virtual.removed:
                    self._remove(virtual)
            if shortened is not None:
                shortened.length, shortened.low = math.inf, True
