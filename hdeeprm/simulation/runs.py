"""Host sets held as runs of consecutive ids: the large-job path of the engine and the manager.

A job of thousands of cores (a Lublin job scaled to a Curie-size platform) is given, by
``first-high_gflops`` and the other static orders on a homogeneous platform, a few runs of
consecutive cores. :class:`HostRuns` keeps such a set as its runs, so that what the engine and the
heterogeneity layer do for the job costs NumPy work over its runs or its hosts' values (slices of
the per-host arrays), never Python work per host. Small host sets stay plain lists and tuples (the
fast path of a few hosts); a :class:`HostRuns` is made only above :data:`RUNS` hosts.
"""
from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, chain

import numpy as np

#: Engines of more hosts (resource states of more cores) than this keep their per-host, per-core and
#: per-processor values in NumPy arrays, read one by one through memoryviews (a little slower than lists, but
#: a large job's thousands of hosts go by array slices, with nothing to keep in step); smaller ones in lists.
ARRAYS_ABOVE = 16384
#: Pstate switches of more hosts than this are applied by slices over runs of consecutive hosts.
MANY = 64
#: Jobs and pstate switches of more hosts than this are held as runs (:class:`HostRuns`) by the manager, the
#: heterogeneity layer and the engine: a few dozen NumPy calls each, whatever their size, where the per-host
#: paths cost a Python step per host or per processor (on the Curie-size replay of
#: ``benchmarks/bench_memory.py``, 128 and 256 give the same time, 64 and 512 a few per cent more). Above
#: ``SMALL`` (32), so their sums are NumPy's pairwise ones, as :func:`hdeeprm.simulation.energy.total` makes them.
RUNS = 256


class HostRuns(Sequence):
    """Distinct host ids as runs of consecutive ids, in a given order (a read-only sequence of ints).

    Iterating, indexing, ``len`` and ``==`` (against any sequence of ints) behave as on the tuple of
    the ids; the engine, the energy accounting and the output writers read :attr:`starts` and
    :attr:`stops` instead.

    Args:
        starts: First id of each run (ints).
        stops: One past the last id of each run (ints), ``stops[r] > starts[r]``.
        array: The ids as an int64 array, when the caller has it (kept, not copied).

    Attributes:
        starts: First id of each run, in the order of the ids.
        stops: One past the last id of each run.
    """

    __slots__ = ("starts", "stops", "_n", "_array", "_ends")

    def __init__(self, starts: list[int], stops: list[int], array: np.ndarray | None = None) -> None:
        self.starts = starts
        self.stops = stops
        self._n = sum(stops) - sum(starts)
        self._array = array
        self._ends: list[int] | None = None

    @classmethod
    def of(cls, ids: np.ndarray) -> HostRuns:
        """The runs of ``ids``, distinct integer ids in any order (kept in that order).

        Args:
            ids: int, shape (k,), k >= 1.

        Returns:
            A :class:`HostRuns` whose iteration gives ``ids`` back.
        """
        ids = np.asarray(ids, dtype=np.int64)
        breaks = np.flatnonzero(ids[1:] - ids[:-1] != 1).tolist()
        ends = [*breaks, ids.size - 1]
        return cls(ids[[0, *[e + 1 for e in breaks]]].tolist(), (ids[ends] + 1).tolist(), ids)

    @property
    def array(self) -> np.ndarray:
        """The ids, int64, shape (len,) (made once)."""
        if self._array is None:
            self._array = np.concatenate([np.arange(a, b, dtype=np.int64) for a, b in zip(self.starts, self.stops)])
        return self._array

    @property
    def idx(self) -> np.ndarray | slice:
        """An index of the ids into a per-host array: their slice when they are one run, else :attr:`array`."""
        if len(self.starts) == 1:
            return slice(self.starts[0], self.stops[0])
        return self.array

    def sorted_runs(self) -> tuple[list[int], list[int]]:
        """The runs in ascending order, adjacent runs merged: ``(starts, stops)``."""
        starts, stops = self.starts, self.stops
        if len(starts) == 1:
            return starts, stops
        pairs = sorted(zip(starts, stops))
        out_a, out_b = [pairs[0][0]], [pairs[0][1]]
        for a, b in pairs[1:]:
            if a == out_b[-1]:
                out_b[-1] = b
            else:
                out_a.append(a)
                out_b.append(b)
        return out_a, out_b

    def text(self) -> str:
        """Batsim's interval-set text of the ids (``"0-3 7"``), as ``str(procset.ProcSet(*ids))``."""
        return " ".join(f"{a}-{b - 1}" if b - a > 1 else str(a) for a, b in zip(*self.sorted_runs()))

    def __len__(self) -> int:
        return self._n

    def __iter__(self) -> Iterator[int]:
        return chain.from_iterable(map(range, self.starts, self.stops))

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self)[i]
        n = self._n
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("HostRuns index out of range")
        if self._ends is None:
            self._ends = list(accumulate(b - a for a, b in zip(self.starts, self.stops)))
        r = bisect_right(self._ends, i)
        return self.starts[r] + i - (self._ends[r] - (self.stops[r] - self.starts[r]))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HostRuns):
            return self.starts == other.starts and self.stops == other.stops
        if isinstance(other, (Sequence, np.ndarray)) and not isinstance(other, str):
            return len(other) == self._n and tuple(self) == tuple(other)
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"HostRuns({self.text()!r})"


def distinct_values(values_of_host: np.ndarray | list, runs: HostRuns) -> list:
    """The distinct values of ``values_of_host`` (an array, or a list) over the hosts of ``runs`` (in no set order).

    Cheap on an array when the values come in long stretches (e.g. the job index on each host).
    """
    out: set = set()
    for a, b in zip(runs.starts, runs.stops):
        if isinstance(values_of_host, list):
            out.update(values_of_host[a:b])
            continue
        v = values_of_host[a:b]
        out.add(int(v[0]))
        out.update(v[1:][v[1:] != v[:-1]].tolist())
    return list(out)
