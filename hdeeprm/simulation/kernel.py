"""The event kernel: the clock, the submission stream, the heap of timed events and their same-instant order.

One kernel times every run, whatever its resources: :class:`~hdeeprm.simulation.engine.Engine` subclasses
:class:`EventKernel` and adds the CPU model (hosts, pstates, Batsim 4.2.1's energy) and, plugged in, the GPU
model (:class:`~hdeeprm.simulation.gpu_model.GpuModel`). What is here is the part the models share, as SimGrid's
kernel is shared by its CPU, network and disk models and SimPy's ``Environment`` by its processes:

- **the clock** :attr:`EventKernel.now`, seconds since the start of the simulation, which only moves forward, to
  the next instant that has an event;
- **the submission stream**: jobs sorted once by ``(subtime, "workload!id")``, Batsim's order of same-instant
  JOB_SUBMITTED (docs/engine.rst, "Same-instant event order"), merged with the heap and always first;
- **the heap** of ``(time, priority, key, job, version)`` tuples: job ends keyed by start sequence number (so
  same-instant ends come in start order) and calls keyed by a push counter (:data:`PRIORITY_COMPLETION`,
  :data:`PRIORITY_CALL`). A re-timed job's older entries are invalidated lazily by its version number.

Equal-time events thus pop in a fixed order and reruns are identical.
"""
from __future__ import annotations

import heapq
import math

from hdeeprm.errors import SimulationError
from hdeeprm.workload.model import Workload

__all__ = ["EventKernel", "PRIORITY_SUBMISSION", "PRIORITY_COMPLETION", "PRIORITY_CALL"]

#: Same-instant order of JOB_SUBMITTED events: first in a batch, ordered by the string
#: ``workload!id`` (docs/engine.rst, "Same-instant event order"). Submissions are a sorted
#: stream, not heap entries.
PRIORITY_SUBMISSION = 0
#: Same-instant order of job ends (JOB_COMPLETED, including walltime kills): after the
#: submissions, among themselves in the order the jobs were started (docs/engine.rst,
#: "Same-instant event order").
PRIORITY_COMPLETION = 1
#: Same-instant order of REQUESTED_CALL (CALL_ME_LATER, Batsim protocol): after job ends.
PRIORITY_CALL = 2

_INF = math.inf


class EventKernel:
    """The clock, the submission stream and the heap of one run (see the module docstring).

    Args:
        workload: The jobs, with ``jobs[i].index == i``.

    Attributes:
        now: Current simulated time in seconds.
    """

    def __init__(self, workload: Workload) -> None:
        self.now = 0.0
        jobs = workload.jobs
        prefix = f"{workload.name}!"
        order = sorted(range(len(jobs)), key=lambda i: (jobs[i].subtime, prefix + jobs[i].id))
        self._sub_order = order
        self._sub_times = [jobs[i].subtime for i in order]
        self._sub_ptr = 0
        self._heap: list[tuple[float, int, int, int, int]] = []
        self._seq = 0
        self._version = [0] * len(jobs)

    def _drop_stale(self) -> None:
        """Pop invalidated completion entries from the top of the heap."""
        heap, version = self._heap, self._version
        while heap:
            top = heap[0]
            if top[1] != PRIORITY_COMPLETION or top[4] == version[top[3]]:
                return
            heapq.heappop(heap)

    def next_event_time(self) -> float:
        """Time of the next submission, job end or call in seconds (inf when none is left)."""
        self._drop_stale()
        t = self._heap[0][0] if self._heap else _INF
        ptr = self._sub_ptr
        if ptr < len(self._sub_order) and self._sub_times[ptr] < t:
            t = self._sub_times[ptr]
        return t

    def call_me_later(self, when: float) -> None:
        """Ask for a REQUESTED_CALL at time ``when`` (Batsim CALL_ME_LATER).

        Args:
            when: Simulated time in seconds, >= :attr:`now` (equal: a batch at the same instant).

        Raises:
            SimulationError: ``when`` is in the past or not finite.
        """
        when = float(when)
        if not (when >= self.now and when != _INF):
            raise SimulationError(f"call_me_later: time must be finite and >= now "
                                  f"({self.now:g} s), got {when}")
        self._seq += 1
        heapq.heappush(self._heap, (when, PRIORITY_CALL, self._seq, -1, 0))
