"""The heterogeneity layer's dynamic state: memory, bandwidth and pstates.

HDeepRM's contention model (DESIGN section 4, from the original HDeepRM,
Herrera et al. 2019):

* **Memory** is a hard per-node limit: a core is a candidate for a job only if
  its node still has ``job.mem`` MB free; each allocated core takes
  ``job.mem`` MB from its node until the job ends.
* **Memory bandwidth** is a soft per-processor limit: each busy core takes
  ``job.mem_bw`` GB/s from its processor; while the sum exceeds the
  processor's bandwidth every busy core of that processor runs in pstate P1
  (0.75 G) instead of P0 (G).
* Idle cores of a processor with at least one busy core are in P2; every core
  of a fully idle processor is in P3 (the initial state).

The model is a replaceable component: :class:`ContentionModel` decides the
pstate of the cores of one processor; :class:`ResourceState` keeps the
bookkeeping and reports the pstate switches the simulator must apply.
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from hdeeprm.resources import P0, P1, P2, P3, ResourceHierarchy
from hdeeprm.workload.model import Job


class ContentionModel:
    """Maps the load of processors to the pstates of their cores.

    Subclass and override :meth:`pstates` to plug in another model (e.g. a
    proportional slow-down); :class:`ResourceState` calls it, vectorised, for
    the cores of every processor whose load changed.
    """

    def pstates(self, busy: np.ndarray, used_bw: np.ndarray, mem_bw: np.ndarray,
                processor_active: np.ndarray) -> np.ndarray:
        """Pstates of a set of cores.

        Args:
            busy: Whether each core runs a job, bool, shape (k,).
            used_bw: Bandwidth requested on each core's processor, GB/s, shape (k,).
            mem_bw: Bandwidth each core's processor offers, GB/s, shape (k,).
            processor_active: Whether each core's processor has at least one busy core, bool, shape (k,).

        Returns:
            Pstate of each core, int64, shape (k,).
        """
        running = np.where(used_bw > mem_bw, P1, P0)
        idle = np.where(processor_active, P2, P3)
        return np.where(busy, running, idle)


class ResourceState:
    """Free cores, node memory, processor bandwidth and core pstates over time.

    Args:
        hierarchy: The static platform description.
        model: The contention model; :class:`ContentionModel` (HDeepRM's) by default.

    Attributes:
        core_free: bool, shape (n_cores,): no job runs on the core.
        core_job: int64, shape (n_cores,): index of the job on the core, -1 if free.
        core_pstate: int64, shape (n_cores,): current pstate (P0..P3).
        node_free_mem: float64, shape (n_nodes,): free memory per node in MB.
        processor_busy: int64, shape (n_processors,): busy cores per processor.
        processor_used_bw: float64, shape (n_processors,): requested bandwidth per processor, GB/s.
        n_free: number of free cores.
        overutilization: per processor, [number of times it became over-subscribed,
            seconds spent over-subscribed], float64, shape (n_processors, 2).
    """

    def __init__(self, hierarchy: ResourceHierarchy, model: ContentionModel | None = None) -> None:
        self.hierarchy = h = hierarchy
        self.model = model or ContentionModel()
        self.core_free = np.ones(h.n_cores, dtype=bool)
        self.core_job = np.full(h.n_cores, -1, dtype=np.int64)
        self.core_pstate = np.full(h.n_cores, P3, dtype=np.int64)
        self.node_free_mem = np.asarray(h.node_memory, dtype=np.float64).copy()
        self.processor_busy = np.zeros(h.n_processors, dtype=np.int64)
        self.processor_used_bw = np.zeros(h.n_processors, dtype=np.float64)
        self.n_free = h.n_cores
        self.overutilization = np.zeros((h.n_processors, 2), dtype=np.float64)
        self._over_since = np.full(h.n_processors, np.nan)
        self._first = np.asarray(h.processor_first_core, dtype=np.int64)
        self._count = np.asarray(h.processor_n_cores, dtype=np.int64)

    def candidates(self, mem: float) -> np.ndarray:
        """Cores a job needing ``mem`` MB per core may take now, bool, shape (n_cores,)."""
        if mem <= 0.0:
            return self.core_free
        return self.core_free & (self.node_free_mem[self.hierarchy.core_node] >= mem)

    def allocate(self, job: Job, cores: np.ndarray, now: float) -> dict[int, list[int]]:
        """Mark ``cores`` busy with ``job`` and return the pstate switches this causes.

        Args:
            job: The job being started.
            cores: Core ids, int, shape (job.res,); they must be candidates.
            now: Current time in seconds (for the over-utilization record).

        Returns:
            ``{pstate: [core ids]}`` of cores whose pstate changes, pstates ascending.
        """
        h = self.hierarchy
        self.core_free[cores] = False
        self.core_job[cores] = job.index
        self.n_free -= len(cores)
        if job.mem > 0.0:
            np.subtract.at(self.node_free_mem, h.core_node[cores], job.mem)
        procs = h.core_processor[cores]
        np.add.at(self.processor_busy, procs, 1)
        if job.mem_bw > 0.0:
            np.add.at(self.processor_used_bw, procs, job.mem_bw)
        return self._update(np.unique(procs), now)

    def release(self, job: Job, cores: Sequence[int], now: float) -> dict[int, list[int]]:
        """Free the cores of a finished ``job``; returns the pstate switches this causes."""
        h = self.hierarchy
        cores = np.asarray(cores, dtype=np.int64)
        self.core_free[cores] = True
        self.core_job[cores] = -1
        self.n_free += len(cores)
        if job.mem > 0.0:
            np.add.at(self.node_free_mem, h.core_node[cores], job.mem)
        procs = h.core_processor[cores]
        np.subtract.at(self.processor_busy, procs, 1)
        if job.mem_bw > 0.0:
            np.subtract.at(self.processor_used_bw, procs, job.mem_bw)
            # Bandwidth sums come back to zero exactly only up to rounding.
            idle = self.processor_busy[procs] == 0
            self.processor_used_bw[procs[idle]] = 0.0
        return self._update(np.unique(procs), now)

    def _update(self, procs: np.ndarray, now: float) -> dict[int, list[int]]:
        h = self.hierarchy
        counts = self._count[procs]
        if procs.size == 1:
            first = int(self._first[procs[0]])
            cores = np.arange(first, first + int(counts[0]))
        else:
            ends = np.cumsum(counts)
            cores = np.repeat(self._first[procs] - (ends - counts), counts) + np.arange(int(ends[-1]))
        used = self.processor_used_bw[procs]
        active = self.processor_busy[procs] > 0
        self._record_overutilization(procs, (used > h.processor_mem_bw[procs]) & active, now)
        core_procs = h.core_processor[cores]
        wanted = self.model.pstates(~self.core_free[cores], self.processor_used_bw[core_procs],
                                    h.processor_mem_bw[core_procs], self.processor_busy[core_procs] > 0)
        differ = wanted != self.core_pstate[cores]
        if not differ.any():
            return {}
        cores, wanted = cores[differ], wanted[differ]
        self.core_pstate[cores] = wanted
        return {int(p): cores[wanted == p].tolist() for p in np.unique(wanted)}

    def _record_overutilization(self, procs: np.ndarray, over: np.ndarray, now: float) -> None:
        was = ~np.isnan(self._over_since[procs])
        if (over == was).all():
            return
        starting = procs[over & ~was]
        self._over_since[starting] = now
        self.overutilization[starting, 0] += 1
        ending = procs[~over & was]
        self.overutilization[ending, 1] += now - self._over_since[ending]
        self._over_since[ending] = np.nan

    def overutilization_report(self, now: float) -> dict:
        """Memory-bandwidth over-utilization per processor, for ``overutilizations.json``.

        Args:
            now: End of the simulation in seconds (open over-subscriptions are closed there).

        Returns:
            ``{"total_events": int, "total_seconds": float, "processors": {id: {"type",
            "events", "seconds"}}}`` listing only processors that were ever over-subscribed.
        """
        h = self.hierarchy
        seconds = self.overutilization[:, 1].copy()
        open_ = ~np.isnan(self._over_since)
        seconds[open_] += now - self._over_since[open_]
        procs = {}
        for p in np.flatnonzero(self.overutilization[:, 0] > 0).tolist():
            procs[str(p)] = {"type": h.processor_type[p], "events": int(self.overutilization[p, 0]),
                             "seconds": float(seconds[p])}
        return {"total_events": int(self.overutilization[:, 0].sum()),
                "total_seconds": float(seconds.sum()), "processors": procs}
