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
    """Maps the load of one processor to the pstates of its cores.

    Subclass and override :meth:`pstates` to plug in another model (e.g. a
    proportional slow-down); :class:`ResourceState` calls it for every
    processor whose load changed.
    """

    def pstates(self, busy: np.ndarray, used_bw: float, mem_bw: float) -> np.ndarray:
        """Pstates of the cores of one processor.

        Args:
            busy: Which cores of the processor run a job, bool, shape (n_cores_of_processor,).
            used_bw: Bandwidth requested by its busy cores, GB/s.
            mem_bw: Bandwidth the processor offers, GB/s.

        Returns:
            Pstate of each core, int, shape (n_cores_of_processor,).
        """
        if not busy.any():
            return np.full(busy.shape, P3, dtype=np.int64)
        out = np.full(busy.shape, P2, dtype=np.int64)
        out[busy] = P1 if used_bw > mem_bw else P0
        return out


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
        changes: dict[int, list[int]] = {}
        for p in procs.tolist():
            first = self._first[p]
            last = first + self._count[p]
            used, cap = self.processor_used_bw[p], h.processor_mem_bw[p]
            self._record_overutilization(p, used > cap and self.processor_busy[p] > 0, now)
            wanted = self.model.pstates(~self.core_free[first:last], used, cap)
            current = self.core_pstate[first:last]
            differ = np.flatnonzero(wanted != current)
            if differ.size:
                for i in differ.tolist():
                    changes.setdefault(int(wanted[i]), []).append(first + i)
                current[differ] = wanted[differ]
        return dict(sorted(changes.items()))

    def _record_overutilization(self, p: int, over: bool, now: float) -> None:
        since = self._over_since[p]
        if over and np.isnan(since):
            self._over_since[p] = now
            self.overutilization[p, 0] += 1
        elif not over and not np.isnan(since):
            self.overutilization[p, 1] += now - since
            self._over_since[p] = np.nan

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
