"""Job-selection and core-selection policies, and the action index map.

HDeepRM's action space (DESIGN section 5, from the original HDeepRM): an
action is a *policy pair* — a job-selection policy that orders the queue and
a core-selection policy that picks the cores of each job. Action index =
6 × job_policy_index + core_policy_index in the orders of
:data:`JOB_POLICIES` and :data:`CORE_POLICIES` (0…35); 36 is the void action
(start nothing, wait for the next event) when enabled.

Job selection sorts the queue by an ascending key, stable, ties by submission
order. Core selection is re-evaluated after each core is taken; for the keys
that do not change when a core is taken (speed, power, packing order) this is
computed at once with NumPy, for the dynamic ones (node memory, processor
bandwidth) core by core.
"""
from __future__ import annotations

import difflib
from collections.abc import Callable, Sequence

import numpy as np

from hdeeprm.decision.contention import ResourceState
from hdeeprm.errors import OptionsError
from hdeeprm.workload.model import Job

#: Job-selection policies, in action-index order.
JOB_POLICIES: tuple[str, ...] = ("random", "first", "shortest", "smallest", "low_mem", "low_mem_bw")
#: Core-selection policies, in action-index order.
CORE_POLICIES: tuple[str, ...] = ("random", "high_gflops", "high_cores", "high_mem", "high_mem_bw",
                                  "low_power")
#: Index of the void action in the full action space.
VOID = len(JOB_POLICIES) * len(CORE_POLICIES)

_JOB_KEYS: dict[str, Callable[[Job], float]] = {
    "first": lambda j: j.subtime,
    "shortest": lambda j: j.requested_time,
    "smallest": lambda j: j.res,
    "low_mem": lambda j: j.mem,
    "low_mem_bw": lambda j: j.mem_bw,
}


def suggest(name: str, valid: Sequence[str]) -> str:
    """Text listing ``valid`` names and the closest match to ``name`` (difflib)."""
    close = difflib.get_close_matches(name, valid, n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"valid: {', '.join(valid)}{hint}"


def action_index(job_policy: str, core_policy: str) -> int:
    """Index of a policy pair in the full 37-action space.

    Raises:
        OptionsError: an unknown policy name (the message lists the valid ones).
    """
    if job_policy not in JOB_POLICIES:
        raise OptionsError(f"unknown job-selection policy '{job_policy}' ({suggest(job_policy, JOB_POLICIES)})")
    if core_policy not in CORE_POLICIES:
        raise OptionsError(f"unknown core-selection policy '{core_policy}' ({suggest(core_policy, CORE_POLICIES)})")
    return len(CORE_POLICIES) * JOB_POLICIES.index(job_policy) + CORE_POLICIES.index(core_policy)


def policy_pair(action: int) -> tuple[str, str] | None:
    """The (job policy, core policy) of a full action index, None for :data:`VOID` (inverse of
    :func:`action_index`)."""
    if action == VOID:
        return None
    return JOB_POLICIES[action // len(CORE_POLICIES)], CORE_POLICIES[action % len(CORE_POLICIES)]


def action_name(action: int) -> str:
    """Name of a full action index: ``"first-high_gflops"`` style, or ``"void"``."""
    pair = policy_pair(action)
    return "void" if pair is None else "-".join(pair)


def parse_policy_pair(pair: str) -> tuple[str, str]:
    """Split a ``"job-core"`` policy pair such as ``"first-high_gflops"``.

    Raises:
        OptionsError: not of the form job-core, or unknown policies.
    """
    job, sep, core = pair.partition("-")
    if not sep:
        raise OptionsError(f"policy pair must be 'job_policy-core_policy', got '{pair}'")
    action_index(job, core)
    return job, core


def order_queue(queue: list[Job], policy: str, rng: np.random.Generator) -> list[Job]:
    """The queue in the order ``policy`` selects jobs (ascending key, stable).

    Args:
        queue: Pending jobs in submission order.
        policy: One of :data:`JOB_POLICIES`.
        rng: Random generator for the ``random`` policy.
    """
    if policy == "first":
        return queue
    if policy == "random":
        return [queue[i] for i in rng.permutation(len(queue))]
    return sorted(queue, key=_JOB_KEYS[policy])


class CoreSelector:
    """Picks the cores of a job under a core-selection policy.

    Args:
        state: The resource state (free cores, memory, bandwidth).
        rng: Random generator for the ``random`` policy.
    """

    def __init__(self, state: ResourceState, rng: np.random.Generator) -> None:
        self.state = state
        self.rng = rng
        h = state.hierarchy
        n = h.nb_cores
        idx = np.arange(n)
        # Static core orders (ties by core id): fastest processor first, lowest power first.
        self._static = {
            "high_gflops": np.lexsort((idx, -np.asarray(h.core_speed))),
            "low_power": np.lexsort((idx, np.asarray(h.core_power))),
        }

    def select(self, job: Job, policy: str) -> np.ndarray | None:
        """Cores for ``job`` under ``policy``, or None when it does not fit now.

        Returns:
            Core ids, int64, shape (job.res,), in the order they were taken.
        """
        st = self.state
        if job.res > st.nb_free:
            return None
        cand = st.candidates(job.mem)
        cap = node_capacity(st, job.mem) if job.mem > 0.0 else None
        if policy == "random":
            return self._random(job, cand, cap)
        if policy in self._static:
            return self._ordered(job, self._static[policy], cand, cap)
        if policy == "high_cores":
            # Packing: processor with the most busy cores first; taking a core only
            # raises its count, so the order fixed now stays right core by core.
            h = st.hierarchy
            busy = st.processor_busy[h.core_processor]
            order = np.lexsort((np.arange(h.nb_cores), -busy))
            return self._ordered(job, order, cand, cap)
        if policy == "high_mem":
            return self._dynamic(job, cand, cap, by_node=True)
        if policy == "high_mem_bw":
            return self._dynamic(job, cand, cap, by_node=False)
        raise OptionsError(f"unknown core-selection policy '{policy}' ({suggest(policy, CORE_POLICIES)})")

    def _ordered(self, job: Job, order: np.ndarray, cand: np.ndarray, cap: np.ndarray | None):
        cores = order[cand[order]]
        if cap is not None:
            cores = cores[_rank_in_group(self.state.hierarchy.core_node[cores]) < cap[self.state.hierarchy.core_node[cores]]]
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
        nodes = self.state.hierarchy.core_node[order]
        keep = order[_rank_in_group(nodes) < cap[nodes]]
        if keep.size < job.res:
            return None
        return keep[:job.res]

    def _dynamic(self, job: Job, cand: np.ndarray, cap: np.ndarray | None, *, by_node: bool):
        # Groups (nodes or processors) hold contiguous cores; the best group is re-chosen after
        # every core since taking one lowers its score (free memory or remaining bandwidth).
        st, h = self.state, self.state.hierarchy
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
            g = int(np.argmax(masked))
            if masked[g] == -np.inf:
                return None
            start = int(first[g])
            core = start + int(np.argmax(cand[start:start + int(count[g])]))
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


def node_capacity(state: ResourceState, mem: float) -> np.ndarray:
    """How many more cores needing ``mem`` MB each every node can take now.

    Args:
        state: The resource state.
        mem: Memory per core in MB, > 0.

    Returns:
        int64, shape (nb_nodes,): min(free memory // mem, free cores of the node).
    """
    h = state.hierarchy
    free_cores = np.bincount(h.core_node[state.core_free], minlength=h.nb_nodes)
    return np.minimum(np.floor(state.node_free_mem / mem), free_cores).astype(np.int64)


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
