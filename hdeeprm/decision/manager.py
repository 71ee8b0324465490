"""The workload manager: HDeepRM's decision system.

It keeps the queue of pending jobs, the heterogeneity layer's state
(:class:`~hdeeprm.decision.contention.ResourceState`) and turns an agent's action (a
policy pair, see :mod:`hdeeprm.decision.actions`) into Batsim commands on a
:class:`~hdeeprm.simulation.port.SimulatorPort`. The same code runs on the
embedded engine and on a real Batsim through PyBatsim.

Decision rules (the original HDeepRM's, Herrera et al. 2019; ``docs/model.rst``,
"Decisions"):

* After each batch of same-time events that submitted or completed a job, a
  decision is due when the queue is not empty and at least one core is free
  (with no free core every action would start nothing, so none is asked for).
* A non-void action orders the queue with its job-selection policy and hands
  that order to the start strategy (:mod:`hdeeprm.decision.strategies`); the
  default, head-of-line, starts jobs until the first that does not fit, as the
  original HDeepRM.
* The void action starts nothing and waits for the next event. When nothing
  is left to happen (no running job, no future submission) waiting would last
  forever: the void action is then replaced by the first non-void action of
  the action set, counted in :attr:`WorkloadManager.void_overridden` and
  masked out in :meth:`WorkloadManager.action_mask`.
* Jobs that can never fit (more cores than the platform, or more memory per
  core than any node can give them) are rejected at submission with a reason.
"""
from __future__ import annotations

from dataclasses import replace

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from hdeeprm.decision.actions import VOID, policy_pair
from hdeeprm.decision.contention import ContentionModel, ResourceState
from hdeeprm.decision.core_selection import CoreSelector, node_capacity
from hdeeprm.decision.gpu_binding import GpuBinder
from hdeeprm.decision.orderings import JOB_ORDERINGS, QueueHeads, QueueIndex
from hdeeprm.decision.strategies import HeadOfLine, StartStrategy
from hdeeprm.errors import AgentError
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.simulation.port import SimulatorPort
from hdeeprm.simulation.runs import RUNS, HostRuns
from hdeeprm.workload.model import Job

if TYPE_CHECKING:
    from hdeeprm.simulation.resource_model import SchedulableModel


class WorkloadManager:
    """Queue, policy pairs and heterogeneity layer on top of a simulator.

    Args:
        simulator: Where commands go (the embedded engine or the PyBatsim adapter).
        hierarchy: The platform's resource hierarchy; host id = core id.
        actions: The action set: full action indices (:mod:`hdeeprm.decision.actions`;
            :data:`~hdeeprm.decision.actions.VOID` = 36), in the agent's order. Defaults
            to the original 36 policy pairs, no void.
        seed: Seed of the random job and core selection policies.
        model: The contention model (HDeepRM's by default).
        strategy: The start strategy (head-of-line by default).
        has_future_events: Callable telling whether the simulator still has events
            to deliver (submissions, completions, calls); used to keep the void
            action from waiting forever. ``None`` assumes events are pending while
            jobs run.
        jobs: All jobs of the workload, by index (optional): lets
            :meth:`action_mask` tabulate the policies' sort keys once.
        gpus: The GPU side of a platform whose nodes carry GPUs
            (:class:`~hdeeprm.decision.gpu_binding.GpuBinder`), or None: jobs asking for GPUs then get their
            cores and GPUs on one node.
        models: Resource models the manager schedules by itself beside the cores
            (:class:`~hdeeprm.simulation.resource_model.SchedulableModel`: a licence count, a burst buffer),
            the same objects the embedded engine holds (``Engine(..., models=...)``): a job that asks for a share
            of one is rejected when it can never get it, fits only when its share is free too, starts with it
            (``execute_job(..., shares=...)``), and EASY backfilling counts it in the head's reservation.

    Attributes:
        queue: Pending jobs in submission order.
        running: Running jobs by index, with their cores.
        resources: The :class:`ResourceState` (free cores, memory, bandwidth, pstates).
        rejected: ``(job, reason)`` of jobs rejected at submission.
        models: The resource models scheduled beside the cores (see ``models``).
        decisions: Number of decisions taken.
        void_overridden: Void actions replaced because nothing else could happen.
    """

    def __init__(self, simulator: SimulatorPort, hierarchy: ResourceHierarchy, *,
                 actions: Sequence[int] | None = None, seed: int = 0,
                 model: ContentionModel | None = None, strategy: StartStrategy | None = None,
                 has_future_events=None, jobs: Sequence[Job] | None = None, gpus: GpuBinder | None = None,
                 models: Sequence[SchedulableModel] = ()) -> None:
        self.sim = simulator
        self.hierarchy = hierarchy
        self.actions = list(range(VOID)) if actions is None else [int(a) for a in actions]
        self._pairs = [policy_pair(a) for a in self.actions]
        self._has_void = VOID in self.actions
        self.rng = np.random.default_rng(seed)
        self.resources = ResourceState(hierarchy, model)
        self.selector = CoreSelector(self.resources, self.rng)
        self.gpus = gpus
        #: ``select(job, core_policy)``: the cores a job gets now, or None (and its GPUs, on a GPU platform).
        self.select = self.selector.select if gpus is None else self._select_with_gpus
        self.models = tuple(models)
        if self.models:
            if not hasattr(simulator, "set_pstates"):
                raise AgentError("resource models (models=) need the embedded engine, which holds them")
            self.select = self._select_with_models(self.select)
        self.strategy = strategy or HeadOfLine()
        self.queue: list[Job] = []
        self.running: dict[int, tuple[Job, np.ndarray]] = {}
        self.rejected: list[tuple[Job, str]] = []
        self.decisions = 0
        self.void_overridden = 0
        self._has_future_events = has_future_events
        self._set_pstates = getattr(simulator, "set_pstates", None)
        #: ``queue_indices(queue)``: the job indices of :attr:`queue` (intp), cached between the mask, the
        #: observations and the rewards of a decision (:class:`~hdeeprm.decision.orderings.QueueIndex`).
        self.queue_indices = QueueIndex()
        self._heads = QueueHeads(jobs, [p[0] for p in self._pairs if p is not None], self.queue_indices)
        # action_mask: per action, its job policy's place in the heads (the void's: after them)
        self._mask_plan = np.array([len(self._heads.names) if p is None else self._heads.names.index(p[0])
                                    for p in self._pairs], dtype=np.intp)
        self._cores_per_node = np.bincount(np.asarray(hierarchy.core_node), minlength=hierarchy.nb_nodes)
        self.now = 0.0
        self.queue_before = 0  # queue length at the previous decision (observations)
        self.core_policy = ""   # core selection of the decision being applied
        self.strategy.bind(self)

    @property
    def pairs(self) -> list[tuple[str, str] | None]:
        """The action set as ``(job policy, core policy)`` pairs (None for void), in action order."""
        return list(self._pairs)

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
        ended = []
        for job in completed:
            entry = self.running.pop(job.index, None)
            if entry is None:
                continue
            ended.append(entry)
            self._switch(self.resources.release(job, entry[1], now))
            if self.gpus is not None:
                self.gpus.give_cores(job, entry[1])
        nb_queued = len(self.queue)
        for job in submitted:
            reason = self.never_fits(job)
            if reason is None:
                self.queue.append(job)
            else:
                self.rejected.append((job, reason))
                self.sim.reject_job(job, reason)
        self.strategy.on_batch(now, self.queue[nb_queued:], ended)
        return bool(self.queue) and self.resources.nb_free > 0 and bool(submitted or completed)

    def never_fits(self, job: Job) -> str | None:
        """Why ``job`` can never run on this platform, or None when it can.

        A job never fits when it asks for more cores than the platform has, or
        for more memory per core than the nodes can give that many cores.
        """
        h = self.hierarchy
        for model in self.models:
            share = model.demand(job)
            reason = None if share is None else model.never_fits(job)
            if reason is not None:
                return reason
        if job.num_gpu:
            if self.gpus is None:
                return f"requests {job.num_gpu} GPUs, the platform has none"
            reason = self.gpus.never_fits(job)
            if reason is not None:
                return reason
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

    def waiting_is_forever(self) -> bool:
        """Whether waiting for the next event would wait forever (nothing runs, no event is left)."""
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
            if not self.waiting_is_forever():
                return 0
            self.void_overridden += 1
            pair = next(p for p in self._pairs if p is not None)
        return self._start(*pair)

    def _start(self, job_policy: str, core_policy: str) -> int:
        heads = self._heads
        if job_policy in heads.sorted_heads and self.queue and self.gpus is None and type(self.strategy) is HeadOfLine:
            # Head-of-line blocking starts nothing when the policy's first job asks for more cores than are free
            # (the selection refuses it before anything else): known from the queue heads, without the sort.
            if self.queue[heads.first(self.queue, job_policy)].res > self.resources.nb_free:
                self.core_policy = core_policy
                return 0
        return len(self._run_strategy(JOB_ORDERINGS[job_policy].order(self.queue, self.rng, self.now), core_policy))

    def start_ordered(self, ordered: Sequence[Job], core_policy: str) -> list[Job]:
        """Let the start strategy walk ``ordered`` (queued jobs in an order the caller chose); it counts as a decision.

        The decision of action spaces where the agent names the job a backfilling strategy
        reserves for (:mod:`hdeeprm.env.backfill_slot`): the caller puts that job first.

        Args:
            ordered: Queued jobs (a subset of :attr:`queue`, any order).
            core_policy: A name of :data:`~hdeeprm.decision.core_selection.CORE_SELECTIONS`.

        Returns:
            The started jobs, in start order (they have left the queue).
        """
        self.decisions += 1
        self.queue_before = len(self.queue)
        return self._run_strategy(ordered, core_policy)

    def _run_strategy(self, ordered: Sequence[Job], core_policy: str) -> list[Job]:
        """The start strategy on ``ordered``; the started jobs leave the queue and are returned in start order."""
        select, launch = self.select, self._launch
        self.core_policy = core_policy

        def place(job: Job, cores: np.ndarray | None = None) -> bool:
            if cores is None:
                cores = select(job, core_policy)
            if cores is None:
                return False
            launch(job, cores)
            return True

        started = self.strategy.start(ordered, place)
        if started:
            if ordered is self.queue and all(map(operator.is_, started, self.queue)):
                del self.queue[:len(started)]   # the started jobs are a prefix of the queue
            else:
                gone = {job.index for job in started}
                self.queue = [j for j in self.queue if j.index not in gone]
        return started

    def start_queued(self, position: int, core_policy: str) -> bool:
        """Start the queued job at ``position`` now, on the cores ``core_policy`` picks.

        The decision of job-slot action spaces (the agent names the job, a core-selection
        policy places it; Zhang et al., "RLScheduler", SC'20). It counts as a decision.

        Args:
            position: Index in :attr:`queue` (submission order), in [0, len(queue)).
            core_policy: A name of :data:`~hdeeprm.decision.core_selection.CORE_SELECTIONS`.

        Returns:
            Whether the job started (False: it does not fit now; nothing changed but the count).
        """
        self.decisions += 1
        self.queue_before = len(self.queue)
        job = self.queue[position]
        cores = self.select(job, core_policy)
        if cores is None:
            return False
        self._launch(job, cores)
        del self.queue[position]
        return True

    def wait(self) -> None:
        """The agent chooses to start nothing now (a job-slot agent's wait): it counts as a decision."""
        self.decisions += 1

    def _select_with_gpus(self, job: Job, core_policy: str, within: np.ndarray | None = None) -> np.ndarray | None:
        """:attr:`select` on a GPU platform: a job asking for GPUs gets a node's cores and GPUs."""
        if not job.num_gpu:
            return self.selector.select(job, core_policy, within)
        return self.gpus.choose(job, lambda cores, count: self.selector.select(
            job if count == job.res else replace(job, res=count), core_policy, cores))   # a gang part: its cores

    def _select_with_models(self, select):
        """:attr:`select` with resource models: a job whose share of one is not free now fits nowhere."""
        def choose(job: Job, core_policy: str, *within) -> np.ndarray | None:
            return select(job, core_policy, *within) if self.models_fit(job) else None
        return choose

    def models_fit(self, job: Job) -> bool:
        """Whether the share ``job`` asks for of every resource model is free now (the models' fit test)."""
        for model in self.models:
            share = model.demand(job)
            if share is not None and not model.fits(job.index, share):
                return False
        return True

    def shares(self, job: Job) -> dict:
        """Model name -> the share ``job`` asks for, for every resource model it needs (empty: none)."""
        return {model.name: share for model in self.models if (share := model.demand(job)) is not None}

    def _launch(self, job: Job, cores: np.ndarray) -> None:
        """Run ``job`` on ``cores`` now: allocate them, switch pstates, send EXECUTE_JOB.

        A job of more than :data:`~hdeeprm.simulation.runs.RUNS` cores goes to the resource state and the
        embedded engine as the runs of its cores (:class:`~hdeeprm.simulation.runs.HostRuns`, made once). Its shares
        of the resource models go with it.
        """
        hosts = HostRuns.of(cores) if len(cores) > RUNS else cores
        self._switch(self.resources.allocate(job, hosts, self.now))
        shares = self.shares(job) if self.models else None   # models need the embedded engine (checked at init)
        if self.gpus is not None:
            share = self.gpus.take_cores(job, cores)
            if share is not None:
                self.sim.execute_job(job, cores.tolist(), gpus=share, shares=shares)
                self.running[job.index] = (job, cores)
                return
        if self._set_pstates is not None:   # the embedded engine: the array as it is, free cores of the platform
            self.sim.execute_job(job, hosts, validate=False, shares=shares)
        else:
            self.sim.execute_job(job, cores.tolist())
        self.running[job.index] = (job, cores)

    def _switch(self, changes: dict[int, list[int]]) -> None:
        if not changes:
            return
        if self._set_pstates is not None:   # the embedded engine: all switches in one call
            self._set_pstates(changes, validate=False)
            return
        for pstate, cores in changes.items():
            self.sim.set_pstate(list(cores), pstate)

    def action_mask(self) -> np.ndarray:
        """Which actions would start at least one job now, bool, shape (nb_actions,).

        Every core-selection policy picks from the same candidate cores, so
        whether an action starts something depends on the first job its
        job-selection policy picks. The void action is allowed unless waiting
        would last forever. A ``random`` job policy is allowed when the
        smallest queued job fits (its draw is not known in advance). With a
        start strategy that may start jobs behind a blocked head (backfilling),
        a pair is also allowed when any queued job fits now. The mask counts
        cores and node memory only: a ``contiguous`` pair may be allowed and
        still find no run of consecutive free cores.
        """
        queue = self.queue
        ok = [False] * (len(self._heads.names) + 1)
        if queue:
            fits, checked = self.fits, {}
            behind = False if self.strategy.head_only else any(map(fits, queue))
            for k, head in enumerate(self._heads.positions(queue, self.now)):
                fit = checked.get(head)
                if fit is None:
                    fit = checked[head] = fits(queue[head])
                ok[k] = fit or behind
        if self._has_void:
            ok[-1] = not self.waiting_is_forever()
        return np.array(ok, dtype=bool)[self._mask_plan]

    def fits(self, job: Job) -> bool:
        """Whether ``job`` could start now: enough free cores, with node memory for its MB per core."""
        if job.res > self.resources.nb_free or (self.models and not self.models_fit(job)):
            return False
        if job.num_gpu and self.gpus is not None:
            return self.gpus.fits_now(job, self.resources)
        if job.mem <= 0.0:
            return True
        return int(node_capacity(self.resources, job.mem).sum()) >= job.res
