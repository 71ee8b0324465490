"""The workload manager: HDeepRM's decision system.

It keeps the queue of pending jobs, the heterogeneity layer's state
(:class:`~hdeeprm.decision.contention.ResourceState`) and turns an agent's action (a
policy pair, see :mod:`hdeeprm.decision.policies`) into Batsim commands on a
:class:`~hdeeprm.simulation.port.SimulatorPort`. The same code runs on the
embedded engine and on a real Batsim through PyBatsim.

Decision rules (DESIGN section 5):

* After each batch of same-time events that submitted or completed a job, a
  decision is due when the queue is not empty and at least one core is free
  (with no free core every action would start nothing, so none is asked for).
* A non-void action starts queued jobs in the order of its job-selection
  policy until the first job that does not fit (head-of-line blocking, as the
  original HDeepRM).
* The void action starts nothing and waits for the next event. When nothing
  is left to happen (no running job, no future submission) waiting would last
  forever: the void action is then replaced by the first non-void action of
  the action set, counted in :attr:`WorkloadManager.void_overridden` and
  masked out in :meth:`WorkloadManager.action_mask`.
* Jobs that can never fit (more cores than the platform, or more memory per
  core than any node can give them) are rejected at submission with a reason.
"""
from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from hdeeprm.decision.contention import ContentionModel, ResourceState
from hdeeprm.errors import AgentError
from hdeeprm.decision.policies import VOID, CoreSelector, node_capacity, order_queue, policy_pair
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.simulation.port import SimulatorPort
from hdeeprm.workload.model import Job


#: Job attribute each job-selection policy sorts by (ascending, ties in submission order).
_HEAD_KEYS = {"first": "index", "shortest": "requested_time", "smallest": "res", "low_mem": "mem",
              "low_mem_bw": "mem_bw"}
_KEY_COLUMNS = ("requested_time", "res", "mem", "mem_bw")


_index_of = operator.attrgetter("index")


class WorkloadManager:
    """Queue, policy pairs and heterogeneity layer on top of a simulator.

    Args:
        simulator: Where commands go (the embedded engine or the PyBatsim adapter).
        hierarchy: The platform's resource hierarchy; host id = core id.
        actions: The action set: full action indices (0…35, :data:`~hdeeprm.decision.policies.VOID`
            = 36), in the agent's order. Defaults to all 36 policy pairs, no void.
        seed: Seed of the random job and core selection policies.
        model: The contention model (HDeepRM's by default).
        has_future_events: Callable telling whether the simulator still has events
            to deliver (submissions, completions, calls); used to keep the void
            action from waiting forever. ``None`` assumes events are pending while
            jobs run.
        jobs: All jobs of the workload, by index (optional): lets
            :meth:`action_mask` find each policy's first job with NumPy.

    Attributes:
        queue: Pending jobs in submission order.
        running: Running jobs by index, with their cores.
        state: The :class:`ResourceState`.
        rejected: ``(job, reason)`` of jobs rejected at submission.
        decisions: Number of decisions taken.
        void_overridden: Void actions replaced because nothing else could happen.
    """

    def __init__(self, simulator: SimulatorPort, hierarchy: ResourceHierarchy, *,
                 actions: Sequence[int] | None = None, seed: int = 0,
                 model: ContentionModel | None = None, has_future_events=None,
                 jobs: Sequence[Job] | None = None) -> None:
        self.sim = simulator
        self.hierarchy = hierarchy
        self.actions = list(range(VOID)) if actions is None else [int(a) for a in actions]
        self._pairs = [policy_pair(a) for a in self.actions]
        self.rng = np.random.default_rng(seed)
        self.state = ResourceState(hierarchy, model)
        self.selector = CoreSelector(self.state, self.rng)
        self.queue: list[Job] = []
        self.running: dict[int, tuple[Job, np.ndarray]] = {}
        self.rejected: list[tuple[Job, str]] = []
        self.decisions = 0
        self.void_overridden = 0
        self._has_future_events = has_future_events
        self._set_pstates = getattr(simulator, "set_pstates", None)
        # (nb_jobs, 4) table of the sort keys, for the action mask.
        self._keys = (np.array([[getattr(j, k) for k in _KEY_COLUMNS] for j in jobs], dtype=np.float64)
                      if jobs is not None else None)
        self._cores_per_node = np.bincount(np.asarray(hierarchy.core_node), minlength=hierarchy.nb_nodes)
        self.now = 0.0
        self.queue_before = 0  # queue length at the previous decision (observations)

    # ------------------------------------------------------------------ events
    def on_batch(self, now: float, submitted: Sequence[Job], completed: Sequence[Job]) -> bool:
        """Take in one batch of same-time events.

        Args:
            now: Time of the batch in seconds.
            submitted: JOB_SUBMITTED jobs, in Batsim order.
            completed: Jobs that ended (completed or killed), in start order.

        Returns:
            True when a decision is due (see the module docstring).
        """
        self.now = now
        for job in completed:
            entry = self.running.pop(job.index, None)
            if entry is None:
                continue
            self._switch(self.state.release(job, entry[1], now))
        for job in submitted:
            reason = self.never_fits(job)
            if reason is None:
                self.queue.append(job)
            else:
                self.rejected.append((job, reason))
                self.sim.reject_job(job, reason)
        return bool(self.queue) and self.state.nb_free > 0 and bool(submitted or completed)

    def never_fits(self, job: Job) -> str | None:
        """Why ``job`` can never run on this platform, or None when it can.

        A job never fits when it asks for more cores than the platform has, or
        for more memory per core than the nodes can give that many cores.
        """
        h = self.hierarchy
        if job.res > h.nb_cores:
            return f"requests {job.res} cores, the platform has {h.nb_cores}"
        if job.mem > 0.0:
            fit = int(np.minimum(np.floor(np.asarray(h.node_memory) / job.mem), self._cores_per_node).sum())
            if job.res > fit:
                return (f"requests {job.res} cores with {job.mem:g} MB each, the platform's node memory "
                        f"allows at most {fit} such cores")
        return None

    # ----------------------------------------------------------------- actions
    @property
    def nb_actions(self) -> int:
        """Size of the action set."""
        return len(self.actions)

    def _waiting_is_forever(self) -> bool:
        if self.running:
            return False
        if self._has_future_events is None:
            return True
        return not self._has_future_events()

    def apply(self, action: int) -> int:
        """Apply the action at position ``action`` of the action set.

        Args:
            action: Position in :attr:`actions` (0 … nb_actions − 1).

        Returns:
            Number of jobs started.

        Raises:
            AgentError: ``action`` is out of range.
        """
        if not 0 <= action < len(self._pairs):
            raise AgentError(f"action must be in [0, {len(self._pairs) - 1}], got {action}")
        self.decisions += 1
        self.queue_before = len(self.queue)
        pair = self._pairs[action]
        if pair is None:
            if not self._waiting_is_forever():
                return 0
            self.void_overridden += 1
            pair = next(p for p in self._pairs if p is not None)
        return self._start(*pair)

    def _start(self, job_policy: str, core_policy: str) -> int:
        ordered = order_queue(self.queue, job_policy, self.rng)
        started = []
        for job in ordered:
            cores = self.selector.select(job, core_policy)
            if cores is None:
                break
            self._switch(self.state.allocate(job, cores, self.now))
            self.sim.execute_job(job, cores.tolist())
            self.running[job.index] = (job, cores)
            started.append(job.index)
        if started:
            if ordered is self.queue:
                del self.queue[:len(started)]   # "first": the started jobs are a prefix
            else:
                gone = set(started)
                self.queue = [j for j in self.queue if j.index not in gone]
        return len(started)

    def _switch(self, changes: dict[int, list[int]]) -> None:
        if not changes:
            return
        if self._set_pstates is not None:   # the embedded engine: all switches in one call
            self._set_pstates(changes, validate=False)
            return
        for pstate, cores in changes.items():
            self.sim.set_pstate(cores, pstate)

    def action_mask(self) -> np.ndarray:
        """Which actions would start at least one job now, bool, shape (nb_actions,).

        Every core-selection policy picks from the same candidate cores, so
        whether an action starts something depends on the first job its
        job-selection policy picks. The void action is allowed unless waiting
        would last forever. A ``random`` job policy is allowed when the
        smallest queued job fits (its draw is not known in advance).
        """
        mask = np.zeros(len(self._pairs), dtype=bool)
        queue = self.queue
        heads = self._heads() if queue else {}
        fits: dict[int, bool] = {}
        for i, pair in enumerate(self._pairs):
            if pair is None:
                mask[i] = not self._waiting_is_forever()
            elif queue:
                head = heads[pair[0]]
                if head not in fits:
                    fits[head] = self._fits(queue[head])
                mask[i] = fits[head]
        return mask

    def _heads(self) -> dict[str, int]:
        """Queue position of the first job of each job-selection policy (``random``: the smallest)."""
        queue = self.queue
        if self._keys is None:
            heads = {jp: min(range(len(queue)), key=lambda q, a=attr: (getattr(queue[q], a), q))
                     for jp, attr in _HEAD_KEYS.items()}
            heads["random"] = min(range(len(queue)), key=lambda q: (queue[q].res, queue[q].mem, q))
            return heads
        idx = np.fromiter(map(_index_of, queue), dtype=np.intp, count=len(queue))
        keys = self._keys[idx]
        heads = {"first": 0}
        for jp, col in zip(("shortest", "smallest", "low_mem", "low_mem_bw"), range(4)):
            heads[jp] = int(np.argmin(keys[:, col]))   # first minimum: submission order breaks ties
        heads["random"] = int(np.lexsort((keys[:, 2], keys[:, 1]))[0])
        return heads

    def _fits(self, job: Job) -> bool:
        if job.res > self.state.nb_free:
            return False
        if job.mem <= 0.0:
            return True
        return int(node_capacity(self.state, job.mem).sum()) >= job.res
