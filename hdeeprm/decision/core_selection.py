"""Core selections (core-selection policies): which free cores a starting job gets.

HDeepRM's six core-selection policies (Herrera et al., "HDeepRM: Deep
Reinforcement Learning for Workload Management in Heterogeneous Clusters",
2019; the original HDeepRM's ``workload_manager.py``; ``high_cores`` packs,
although the original's docstring said the opposite). Each is re-evaluated
after every core taken: for the keys that do not change when a core is taken
(speed, power, packing order) the order is computed at once with NumPy, for
the dynamic ones (node memory, processor bandwidth) core by core. Ties go to
the lowest core id.

================  ==========================================================
name              cores taken first
================  ==========================================================
``random``        a uniform random sample of the candidates
``high_gflops``   fastest processor type (peak GFLOP/s per core)
``high_cores``    processor with the most busy cores (packing)
``high_mem``      node with the most free memory
``high_mem_bw``   processor with the most remaining memory bandwidth
``low_power``     lowest power per core (W)
``contiguous``    the lowest-numbered run of consecutive free cores long
                  enough for the job, its lowest cores (first fit over
                  contiguous ranges: the "rectangle" allocation of PyBatsim
                  3.2.1's ``easyBackfill`` scheduler, ``allocJobFCFS``)
================  ==========================================================

The first six are the original HDeepRM's (action indices 0-35); ``contiguous``
was added for the comparison with Batsim schedulers (action indices above 36).
With a memory demand, ``contiguous`` uses a run only if the nodes of the cores it
would take have the memory; otherwise it tries the next run. Under the
``easy_backfilling`` start strategy, ``contiguous`` follows PyBatsim's free-space
list exactly, which also remembers at which end of a free range the last job
ended (:mod:`hdeeprm.decision.backfilling`).

A candidate core is free and its node still has the job's memory per core
(memory is a hard per-node limit, :mod:`hdeeprm.decision.contention`). Every
policy is registered once in :data:`CORE_SELECTIONS`, in action-index order.
"""
from __future__ import annotations

import numpy as np

from hdeeprm.decision.contention import ResourceState
from hdeeprm.registry import Registry
from hdeeprm.workload.model import Job

#: The core-selection policies (name -> name of the :class:`CoreSelector` method), in
#: action-index order.
CORE_SELECTIONS: Registry[str] = Registry("core-selection policy")
for _name in ("random", "high_gflops", "high_cores", "high_mem", "high_mem_bw", "low_power", "contiguous"):
    CORE_SELECTIONS.register(_name, "_" + _name)


#: Core selections whose picks depend on the run's random generator, not only on the free cores.
RANDOM_CORE_SELECTIONS = frozenset({"random"})


class CoreSelector:
    """Picks the cores of a job under a core-selection policy.

    Args:
        resources: The resource state (free cores, memory, bandwidth).
        rng: Random generator for the ``random`` policy.
    """

    def __init__(self, resources: ResourceState, rng: np.random.Generator) -> None:
        self.resources = resources
        self.rng = rng
        h = resources.hierarchy
        idx = np.arange(h.nb_cores)
        # Static core orders (ties by core id): fastest processor first, lowest power first; None when the
        # order is the core ids' own (a homogeneous platform), read then without a gather over every core.
        self._fastest = _unless_identity(np.lexsort((idx, -np.asarray(h.core_speed))))
        self._frugal = _unless_identity(np.lexsort((idx, np.asarray(h.core_power))))
        self._policies = {name: getattr(self, CORE_SELECTIONS[name]) for name in CORE_SELECTIONS}
        # Whether every node (True) / processor (False) holds one core, core c in group c (e.g. KTH-SP2's
        # 100 single-core nodes): the dynamic policies then reduce to one sort (see _dynamic).
        self._single = {by_node: np.array_equal(groups, idx)
                        for by_node, groups in ((True, h.core_node), (False, h.core_processor))}

    def select(self, job: Job, policy: str, within: np.ndarray | None = None) -> np.ndarray | None:
        """Cores for ``job`` under ``policy``, or None when it does not fit now.

        Args:
            job: A queued job.
            policy: A name registered in :data:`CORE_SELECTIONS` (validated by the caller).
            within: Only these cores may be taken, bool (nb_cores,) (e.g. the cores of the node holding the
                job's GPUs); None: any core.

        Returns:
            Core ids, int64, shape (job.res,), in the order they were taken.
        """
        st = self.resources
        if job.res > st.nb_free:
            return None
        cand = st.candidates(job.mem)
        if within is not None:
            cand = cand & within
        cap = node_capacity(st, job.mem) if job.mem > 0.0 else None
        return self._policies[policy](job, cand, cap)

    def _high_gflops(self, job: Job, cand: np.ndarray, cap: np.ndarray | None):
        return self._ordered(job, self._fastest, cand, cap)

    def _low_power(self, job: Job, cand: np.ndarray, cap: np.ndarray | None):
        return self._ordered(job, self._frugal, cand, cap)

    def _high_cores(self, job: Job, cand: np.ndarray, cap: np.ndarray | None):
        # Packing: processor with the most busy cores first; taking a core only
        # raises its count, so the order fixed now stays right core by core.
        h = self.resources.hierarchy
        busy = self.resources.processor_busy[h.core_processor]
        return self._ordered(job, np.lexsort((np.arange(h.nb_cores), -busy)), cand, cap)

    def _high_mem(self, job: Job, cand: np.ndarray, cap: np.ndarray | None):
        return self._dynamic(job, cand, cap, by_node=True)

    def _high_mem_bw(self, job: Job, cand: np.ndarray, cap: np.ndarray | None):
        return self._dynamic(job, cand, cap, by_node=False)

    def _contiguous(self, job: Job, cand: np.ndarray, cap: np.ndarray | None):
        for first, last in free_runs(cand):
            if last - first + 1 < job.res:
                continue
            cores = np.arange(first, first + job.res, dtype=np.int64)
            if cap is None or fits_capacity(self.resources.hierarchy.core_node[cores], cap):
                return cores
        return None

    def _ordered(self, job: Job, order: np.ndarray | None, cand: np.ndarray, cap: np.ndarray | None):
        if order is not None and cap is None:   # the first job.res candidates in order: mostly in a short head
            head = order[:max(4 * job.res, 64)]
            cores = head[cand[head]]
            if cores.size >= job.res:
                return cores[:job.res]
        # cand is a 1-D mask: its nonzero() is np.flatnonzero without the wrapper calls (about 0.7 µs a job)
        cores = cand.nonzero()[0] if order is None else order[cand[order]]
        if cap is not None:
            nodes = self.resources.hierarchy.core_node[cores]
            cores = cores[_rank_in_group(nodes) < cap[nodes]]
        if cores.size < job.res:
            return None
        return cores[:job.res]

    def _random(self, job: Job, cand: np.ndarray, cap: np.ndarray | None):
        free = np.flatnonzero(cand)
        if cap is None:
            if free.size < job.res:
                return None
            return self.rng.choice(free, size=job.res, replace=False)
        # With a memory limit every draw changes the candidates: draw a random
        # order, then keep, node by node, as many cores as the node's memory allows.
        order = self.rng.permutation(free)
        nodes = self.resources.hierarchy.core_node[order]
        keep = order[_rank_in_group(nodes) < cap[nodes]]
        if keep.size < job.res:
            return None
        return keep[:job.res]

    def _dynamic(self, job: Job, cand: np.ndarray, cap: np.ndarray | None, *, by_node: bool):
        # Groups (nodes or processors) hold contiguous cores; the best group is re-chosen after
        # every core since taking one lowers its score (free memory or remaining bandwidth).
        st, h = self.resources, self.resources.hierarchy
        if self._single[by_node]:
            taken = self._by_score(job, cand, by_node)
            if taken is not False:
                return taken
        cand = cand.copy()
        if by_node:
            group_of_core, first, count = h.core_node, h.node_first_core, h.node_n_cores
            score, cost = st.node_free_mem.copy(), job.mem
        else:
            group_of_core, first, count = h.core_processor, h.processor_first_core, h.processor_n_cores
            score = np.asarray(h.processor_mem_bw, dtype=np.float64) - st.processor_used_bw
            cost = job.mem_bw
        nb_groups = score.size
        avail = np.bincount(group_of_core[cand], minlength=nb_groups)
        node_left = cap.copy() if cap is not None else None
        masked = np.where(avail > 0, score, -np.inf)
        taken = np.empty(job.res, dtype=np.int64)
        for k in range(job.res):
            g = int(masked.argmax())
            if masked[g] == -np.inf:
                return None
            start = int(first[g])
            core = start + int(cand[start:start + int(count[g])].argmax())
            taken[k] = core
            cand[core] = False
            score[g] -= cost
            avail[g] -= 1
            masked[g] = score[g] if avail[g] > 0 else -np.inf
            if node_left is not None:
                node = int(h.core_node[core])
                node_left[node] -= 1
                if node_left[node] <= 0:   # the node's memory is exhausted: drop its cores
                    lo = int(h.node_first_core[node])
                    cand[lo:lo + int(h.node_n_cores[node])] = False
                    if by_node:
                        avail[node] = 0
                        masked[node] = -np.inf
                    else:
                        procs = np.unique(group_of_core[lo:lo + int(h.node_n_cores[node])])
                        avail[procs] = 0
                        masked[procs] = -np.inf
        return taken

    def _by_score(self, job: Job, cand: np.ndarray, by_node: bool):
        """:meth:`_dynamic` when each group is one core: the candidates by descending score, ties by core id.

        Taking a group's one core exhausts it, so the loop's re-chosen best group is the next in that
        order, and the node's memory cap never excludes a core before it is taken. The loop stops at a
        score of -inf; NaN scores (argmax's order, not a sort's) are left to the loop.

        Returns:
            The cores, None when fewer than ``job.res`` candidates score above -inf, or False (NaN: use the loop).
        """
        st, h = self.resources, self.resources.hierarchy
        if job.res <= 0:
            return False
        cores = np.flatnonzero(cand)
        if cores.size < job.res:
            return None
        if by_node:
            score = st.node_free_mem.take(cores)
        else:
            score = np.asarray(h.processor_mem_bw, dtype=np.float64).take(cores) - st.processor_used_bw.take(cores)
        if np.isnan(score).any():
            return False
        picked = np.argsort(-score, kind="stable")[:job.res]
        if score[picked[-1]] == -np.inf:
            return None
        return cores.take(picked)


def _unless_identity(order: np.ndarray) -> np.ndarray | None:
    """``order`` (a permutation of the core ids), or None when it is ``0, 1, 2, ...``."""
    return None if np.array_equal(order, np.arange(order.size)) else order


def free_runs(free: np.ndarray) -> list[tuple[int, int]]:
    """Maximal runs of consecutive True values, ascending.

    Args:
        free: bool, shape (nb_cores,).

    Returns:
        ``[(first core, last core), ...]`` (inclusive bounds).
    """
    edges = np.diff(np.concatenate(([0], free.view(np.int8), [0])))
    starts, ends = np.flatnonzero(edges == 1), np.flatnonzero(edges == -1) - 1
    return list(zip(starts.tolist(), ends.tolist()))


def fits_capacity(nodes: np.ndarray, cap: np.ndarray) -> bool:
    """Whether taking one core on each of ``nodes`` (int, shape (k,)) stays within ``cap`` per node."""
    return bool((np.bincount(nodes, minlength=cap.size) <= cap).all())


def node_capacity(resources: ResourceState, mem: float) -> np.ndarray:
    """How many more cores needing ``mem`` MB each every node can take now.

    Args:
        resources: The resource state.
        mem: Memory per core in MB, > 0.

    Returns:
        int64, shape (nb_nodes,): min(free memory // mem, free cores of the node).
    """
    h = resources.hierarchy
    free_cores = np.bincount(h.core_node[resources.core_free], minlength=h.nb_nodes)
    return np.minimum(np.floor(resources.node_free_mem / mem), free_cores).astype(np.int64)


def _rank_in_group(groups: np.ndarray) -> np.ndarray:
    """Rank of each element among the earlier elements of the same group.

    ``_rank_in_group([3, 1, 3, 3, 1]) == [0, 0, 1, 2, 1]``.
    """
    if groups.size == 0:
        return groups
    order = np.argsort(groups, kind="stable")
    g = groups[order]
    starts = np.r_[0, np.flatnonzero(g[1:] != g[:-1]) + 1]
    run = np.zeros(g.size, dtype=np.int64)
    run[starts] = starts
    np.maximum.accumulate(run, out=run)
    rank = np.empty_like(run)
    rank[order] = np.arange(g.size) - run
    return rank
