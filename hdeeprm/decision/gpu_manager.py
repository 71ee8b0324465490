"""The GPU workload manager of a timed replay: queue, job orderings, placement, rejection.

Jobs enter the queue at submission; at every decision the queued jobs are taken in the
order of a :data:`GPU_ORDERINGS` key (ascending, stable, ties by submission order) and each
is placed with a :data:`~hdeeprm.decision.gpu_scoring.GPU_PLACEMENTS` policy. Which of them
start is the run's start strategy, a name of the registry the CPU decisions use
(:data:`~hdeeprm.decision.strategies.START_STRATEGIES`):

- ``greedy`` (default of GPU runs): every queued job is tried; one that does not fit waits for the
  next decision. This is how the Kubernetes scheduler treats pending pods (the scheduler the
  ATC'23 simulator of Weng et al. extends: ``hkust-adsl/kubernetes-scheduler-simulator``);
- ``head_of_line``: the decision stops at the first job that does not fit (the semantics of
  HDeepRM's CPU decisions);
- ``easy_backfilling`` (Lifka, JSSPP 1995, as for CPU jobs: the one loop of
  :func:`hdeeprm.decision.easy.easy_backfill`, over this module's view of the cluster): head of line, then
  the blocked head gets a reservation at the *shadow time*, the earliest estimated end of a running job after
  which it would fit (running jobs released in order of estimated end, ties by start order), and
  a later job starts now only if it fits now and does not delay that reservation: it ends (by its
  estimate) by the shadow time, or the head still fits at the shadow time with this job's
  resources taken. GPU traces carry no user estimate (openb, Philly): a job's estimated run time
  is its trace duration times the run-time factor of the GPUs it gets (the same knowledge the
  ``shortest_gpu_time`` ordering uses). Whether the head fits is checked with every part of a
  spread job placed at once, each on the fitting node with the fewest free GPUs. A later job is tried
  on every node where it fits now, in the policy's order of preference, before it is given up
  (:func:`~hdeeprm.decision.gpu_choices.place_job`): the policy's first node may be one the head
  needs, another one not; and its estimate depends on the node's GPU type.

- ``conservative_backfilling`` (Mu'alem and Feitelson, IEEE TPDS 2001, as for CPU jobs: the one loop of
  :func:`hdeeprm.decision.conservative.conservative_backfill`, over the plan of
  :class:`~hdeeprm.decision.gpu_reservations.ReservationPlan`): every queued
  job, in the decision's order, gets a reservation at the earliest time it fits without moving the
  reservation of any job before it; the jobs whose reservation is *now* start. A reservation is
  planned over the free resources at each estimated job end (running jobs and the jobs reserved
  before), each part of a job on the fitting node with the fewest free GPUs among those where it
  leaves every earlier reservation in place, kept from its start to its estimated end; a job starting
  now goes to the policy's most preferred node where it leaves every earlier reservation in place
  (every fitting node is tried, :func:`~hdeeprm.decision.gpu_choices.place_job`). Estimates are
  the ones of ``easy_backfilling``; they are exact in a replay, so the plan is kept between decisions
  (:class:`~hdeeprm.decision.gpu_reservations.ReservationProfile`): a reserved job starts on its
  reserved resources when its time comes and only the jobs queued since are reserved; everything
  is planned anew when an estimate proved wrong or the active nodes changed.

A job fits on one node (openb semantics, :class:`~hdeeprm.decision.gpu_placement.PodRequest`),
unless it asks for more whole GPUs than any node of an allowed model holds: it is then
**spread** over nodes (gang placement, as Philly's multi-server jobs, Jeon et al., ATC'19):
split into chunks of G whole GPUs (G: the largest allowed node) plus the remainder, its CPU and
memory split in proportion, each chunk placed by the policy in turn, all or nothing.

A job's GPU memory need (MiB per GPU) allows only the GPU types with that much memory; a job sharing a
GPU also holds that much of its memory, and the jobs sharing a GPU must fit its memory together
(:class:`~hdeeprm.decision.gpu_placement.PlacementState`).

A job that could not fit even on the empty cluster (no GPU of an allowed model with enough GPU
memory, too many GPUs for one node or for the cluster, too much CPU or memory) is **rejected**
at submission with its reason, never left to block the queue.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from hdeeprm.decision.gpu_choices import PolicyChoices, place_job, plan_parts
from hdeeprm.decision.gpu_placement import Placement, PlacementState, PodRequest, gpu_memory_mib
from hdeeprm.decision.gpu_scoring import draws_random, placement_policy
from hdeeprm.decision.gpu_reservations import ReservationPlan
from hdeeprm.decision.orderings import JOB_ORDERINGS
from hdeeprm.decision.start_strategy import start_in_order
from hdeeprm.decision.strategies import START_STRATEGIES
from hdeeprm.errors import OptionsError
from hdeeprm.decision.fragmentation import TypicalPods, allowed_models
from hdeeprm.platform.openb import MILLI, GpuCluster
from hdeeprm.registry import Registry
from hdeeprm.workload.gpu_jobs import GpuJobs

if TYPE_CHECKING:
    from hdeeprm.simulation.gpu_model import GpuSpeedModel

#: An ordering: jobs -> ascending sort key of every job, float64 (J,).
OrderingKey = Callable[[GpuJobs], np.ndarray]

#: Job orderings of the GPU queue, by name (ascending keys, ties by submission order): the orderings of
#: :data:`~hdeeprm.decision.orderings.JOB_ORDERINGS` offered to GPU runs (their rule over a GPU trace,
#: :meth:`~hdeeprm.decision.orderings.JobOrdering.gpu_keys`), under the same names (one name per
#: ordering); ``fcfs``, the Kubernetes and ATC'23 term that GPU runs used to give ``first``, is still accepted
#: as an alias of ``first``.
GPU_ORDERINGS: Registry[OrderingKey] = Registry("GPU job ordering")
for _name in JOB_ORDERINGS:
    if JOB_ORDERINGS[_name].gpu:
        GPU_ORDERINGS.register(_name, JOB_ORDERINGS[_name].gpu_keys)
GPU_ORDERINGS.alias("fcfs", "first")
#: Ordering of a run that names none.
DEFAULT_GPU_ORDERING = "first"
#: Placement policy of a run that names none.
DEFAULT_GPU_PLACEMENT = "best_fit"
#: Start strategy of a GPU run that names none (Kubernetes' pending-pod queue; see the module docstring).
DEFAULT_GPU_START_STRATEGY = "greedy"
#: Start strategies a GPU run can use.
GPU_START_STRATEGIES = tuple(name for name in START_STRATEGIES if START_STRATEGIES[name].replays)
#: A run-time estimate: (job, its placements) -> seconds the job is expected to run there.
Estimate = Callable[[int, list[Placement]], float]
#: A test a job's placement must pass (:data:`~hdeeprm.decision.gpu_choices.Accept`).
Accept = Callable[[list[Placement]], bool]


def split_in_proportion(total: int, parts: list[int], whole: int) -> list[int]:
    """``total`` split in proportion to ``parts`` (which sum to ``whole``), the remainder on the first part."""
    shares = [total * p // whole for p in parts]
    shares[0] += total - sum(shares)
    return shares


def fit_together(empty: PlacementState, pods: list[PodRequest]) -> bool:
    """Whether the parts of a job fit the cluster state ``empty`` at once, left as it was (:func:`plan_parts`)."""
    return plan_parts(empty, pods) is not None


class GpuManager:
    """Queue and placement of the jobs of one timed GPU run.

    Args:
        cluster: The cluster.
        jobs: The workload.
        placement: A name of :data:`~hdeeprm.decision.gpu_scoring.GPU_PLACEMENTS`, or weighted policies
            (``"fgd:1+best_fit:0.5"``, :func:`~hdeeprm.decision.gpu_scoring.placement_policy`).
        ordering: A name of :data:`GPU_ORDERINGS`.
        strategy: A start strategy, one of :data:`GPU_START_STRATEGIES` (see the module docstring).
        rng: Random generator of the run (node tie ranks, the ``random`` policy).
        typical: Typical pods of the fragmentation measure (kept up to date in :attr:`state`).
        estimate: Run-time estimate of a job on its placements, seconds (needed by ``easy_backfilling``;
            default: the trace duration).
        speed: The run's speed model (:class:`~hdeeprm.simulation.gpu_model.GpuSpeedModel`, e.g. the run's
            ``GpuRunConfig``), which ``high_gflops`` and ``low_power`` rank GPU types by; None: its defaults.

    Attributes:
        state: Free resources of the cluster.
        chunks: Per job, the requests it is placed as (one, or several for a spread job).
        reasons: Per job, why it can never fit, or None.
        queue: Submitted jobs waiting to start, by index.
        running: Started jobs not yet released: job -> (estimated end s, start sequence, placements).

    Raises:
        OptionsError: An unknown placement, ordering or start strategy name (with the closest valid one), or
            a strategy GPU runs do not have.
    """

    def __init__(self, cluster: GpuCluster, jobs: GpuJobs, placement: str, ordering: str, strategy: str,
                 rng: np.random.Generator, typical: TypicalPods | None = None,
                 estimate: Estimate | None = None, speed: GpuSpeedModel | None = None) -> None:
        self.policy = placement_policy(placement)
        self.placement = self.policy.name
        self.key = GPU_ORDERINGS[GPU_ORDERINGS.check(ordering)](jobs)
        # Each job's place in the ordering (key, then submission order): one int to sort the queue by.
        position = np.empty(len(jobs), dtype=np.int64)
        position[np.lexsort((np.arange(len(jobs)), self.key))] = np.arange(len(jobs))
        self._position: list[int] = position.tolist()
        self.strategy = START_STRATEGIES.check(strategy)
        if self.strategy not in GPU_START_STRATEGIES:
            raise OptionsError(f"start strategy {strategy!r} is not available for GPU jobs; use one of "
                               f"{', '.join(GPU_START_STRATEGIES)}")
        #: The strategy's decision over this replay's hooks (:meth:`~hdeeprm.decision.start_strategy.StartStrategy.
        #: start_replay`).
        self._start_replay = START_STRATEGIES[self.strategy].start_replay
        duration = jobs.duration
        self.estimate: Estimate = estimate or (lambda job, placed: float(duration[job]))
        self.running: dict[int, tuple[float, int, list[Placement]]] = {}
        # Conservative backfilling's plan, kept between decisions (its reservation profile and reservations).
        self.reservations = ReservationPlan(self)
        self._started = 0
        self.rng = rng
        self.cluster = cluster
        self.state = PlacementState(cluster, typical, speed)
        self.rank = rng.permutation(cluster.nb_nodes)
        self._choose = PolicyChoices(self.policy, self.rank, rng)
        self.queue: list[int] = []
        self.chunks: list[list[PodRequest]] = []
        self.reasons: list[str | None] = []
        memory_ok = gpu_memory_mib(cluster)
        empty = PlacementState(cluster)
        planned: dict[tuple, tuple[list[PodRequest], str | None]] = {}   # jobs asking for the same: planned once
        for i, ask in enumerate(zip(jobs.gpu_spec, jobs.gpu_memory_mib.tolist(), jobs.num_gpu.tolist(),
                                    jobs.gpu_milli.tolist(), jobs.cpu_milli.tolist(), jobs.memory_mib.tolist())):
            if ask not in planned:
                allowed = allowed_models(jobs.gpu_spec[i], cluster.models)
                allowed &= memory_ok >= jobs.gpu_memory_mib[i]
                planned[ask] = self._plan(jobs, i, allowed, empty)
            chunks, reason = planned[ask]
            self.chunks.append(list(chunks))
            self.reasons.append(reason)
        # What each job's requests ask for; equal shapes fit or fail together in one decision. Numbered, so that a
        # decision's sets of failed shapes hash small integers.
        asks = [tuple((p.cpu, p.memory, p.num_gpu, p.gpu_milli, p.gpu_memory, p.allowed.tobytes()) for p in chunks)
                for chunks in self.chunks]
        numbers: dict[tuple, int] = {}
        firsts: dict[tuple, int] = {}
        #: Per job, the number of what its requests ask for (jobs with equal numbers ask for the same).
        self.shapes = [numbers.setdefault(ask, len(numbers)) for ask in asks]
        #: Per job, the number of what its first request asks for (:meth:`first_part_fits`).
        self.first_shapes = [firsts.setdefault(ask[:1], len(firsts)) for ask in asks]

    def _plan(self, jobs: GpuJobs, i: int, allowed: np.ndarray, empty: PlacementState):
        """The chunks of job ``i`` and the reason it can never fit (None when it can)."""
        num, milli = int(jobs.num_gpu[i]), int(jobs.gpu_milli[i])
        cpu, memory, gpu_memory = int(jobs.cpu_milli[i]), int(jobs.memory_mib[i]), int(jobs.gpu_memory_mib[i])
        cluster = self.cluster
        if num:
            on_allowed = allowed[cluster.gpu_model]
            if not on_allowed.any():
                spec = "|".join(jobs.gpu_spec[i]) or "any"
                return [], (f"no node has a GPU of an allowed model (gpu_spec {spec}, "
                            f"{int(jobs.gpu_memory_mib[i])} MiB of GPU memory per GPU)")
            widest = int(cluster.gpu_count[on_allowed].max())
            if num > int(cluster.gpu_count[on_allowed].sum()):
                return [], f"asks for {num} GPUs, the cluster has {int(cluster.gpu_count[on_allowed].sum())} allowed"
            if num > widest:
                parts = [widest] * (num // widest) + ([num % widest] if num % widest else [])
                pods = [PodRequest(c, m, p, MILLI, allowed, gpu_memory)
                        for c, m, p in zip(split_in_proportion(cpu, parts, num),
                                           split_in_proportion(memory, parts, num), parts)]
                if any(len(empty.fitting_nodes(p)) == 0 for p in pods):
                    return [], f"a part of {parts[0]} GPUs of this spread job fits no node (CPU or memory)"
                if not fit_together(empty, pods):
                    return [], (f"its parts ({'+'.join(map(str, parts))} GPUs) do not fit the empty cluster together "
                                "(too few nodes with that many GPUs, CPU and memory)")
                return pods, None
        pod = PodRequest(cpu, memory, num, milli, allowed, gpu_memory if num else 0)
        if len(empty.fitting_nodes(pod)) == 0:
            return [], (f"fits no node even when the cluster is empty ({cpu} milli-CPU, {memory} MiB, "
                        f"{num} x {milli} milli-GPU)")
        return [pod], None

    def submit(self, job: int) -> str | None:
        """Queue ``job``; returns its rejection reason instead when it can never fit."""
        reason = self.reasons[job]
        if reason is None:
            self.queue.append(job)
        return reason

    def _try(self, job: int, accept: Accept | None = None) -> list[Placement] | None:
        """Place ``job`` now with the run's policy, taking its resources; None when no node takes it.

        Each part goes to the policy's most preferred node where ``accept`` holds
        (:func:`~hdeeprm.decision.gpu_choices.place_job`).
        """
        return place_job(self.state, self.chunks[job], self._choose, accept)

    def schedule(self, now: float = 0.0) -> list[tuple[int, list[Placement]]]:
        """Start what the start strategy starts now: the queued jobs in ordering order, placed.

        Args:
            now: The decision's time in seconds (the reservations of ``easy_backfilling`` are estimated
                from it).

        Returns:
            ``(job, placements)`` of every job started, in start order; they leave the queue. The caller
            starts them and tells :meth:`started`.
        """
        started = self._start_replay(self, now)
        taken = {job for job, _ in started}
        self.queue = sorted([job for job in self.queue if job not in taken] if taken else self.queue)
        return started

    def easy_view(self) -> _GpuView:
        """EASY backfilling's view of this replay (:class:`~hdeeprm.decision.easy.ReservationView`)."""
        return _GpuView(self)

    def in_order(self, blocking: bool) -> list[tuple[int, list[Placement]]]:
        """Head of line (``blocking``) or greedy over the ordered queue, written once in ``start_in_order``.

        A shape that failed in this decision is not tried again (resources only shrink within a decision), and
        greedy stops once every shape of the queue has failed (no job after could start).

        Returns:
            ``(job, placements)`` of the jobs started, in start order (the queue is left to :meth:`schedule`).
        """
        failed: set[int] = set()
        shapes = self.shapes
        ordered = self.ordered_queue()

        def place(job: int) -> list[Placement] | None:
            shape = shapes[job]
            if shape in failed:   # resources only shrink within a decision: the same shape fails again
                return None
            placed = self._try(job)
            if placed is None:
                failed.add(shape)
            return placed

        if blocking:
            return start_in_order(ordered, place, True)
        distinct = len(set(map(shapes.__getitem__, ordered)))

        def until_every_shape_failed():
            for job in ordered:
                if len(failed) == distinct:
                    return
                yield job

        return start_in_order(until_every_shape_failed(), place, False)

    def started(self, job: int, placed: list[Placement], now: float) -> None:
        """Note that ``job`` started now on ``placed`` (its estimated end feeds the reservations)."""
        self.running[job] = (now + self.estimate(job, placed), self._started, placed)
        self._started += 1

    def place(self, job: int) -> list[Placement] | None:
        """Place queued ``job`` (every part) with the run's policy and take it off the queue.

        Returns:
            The placements (the caller starts the job), or None (nothing changes) when it does not fit now.
        """
        placed = self._try(job)
        if placed is not None:
            self.queue.remove(job)
        return placed

    def ordered_queue(self) -> list[int]:
        """The queued jobs in the order a decision takes them (ordering key, ties by submission order)."""
        return sorted(self.queue, key=self._position.__getitem__)

    def fitting_mask(self, job: int) -> np.ndarray:
        """Nodes where the first part of queued ``job`` fits now, bool (N,) (the action mask of the GPU envs).

        For a spread job (several parts, see the module docstring) the chosen node takes the first part;
        :meth:`place_on` then places the other parts with the run's policy.
        """
        if self.chunks[job]:
            return self.state.fits(self.chunks[job][0])
        return np.zeros(self.cluster.nb_nodes, dtype=bool)

    def first_part_fits(self, jobs: list[int]) -> list[bool]:
        """Whether the first part of each queued job fits some node now (``fitting_mask(job).any()`` for each).

        Jobs whose first parts ask for the same resources share one fit test.
        """
        known: dict[int, bool] = {}
        fits = []
        for job in jobs:
            chunks = self.chunks[job]
            if not chunks:
                fits.append(False)
                continue
            shape = self.first_shapes[job]
            if shape not in known:
                known[shape] = bool(self.state.fits(chunks[0]).any())
            fits.append(known[shape])
        return fits

    def place_on(self, job: int, node: int) -> list[Placement] | None:
        """Place queued ``job`` with its first part on ``node`` (an agent's choice) and take it off the queue.

        A shared GPU is the fitting one with the least free share, whole GPUs the first fully free ones (as
        :meth:`~hdeeprm.decision.gpu_placement.PlacementState.choose_gpus`); the other parts of a spread job go
        where the run's policy puts them, all or nothing.

        Args:
            job: A queued job.
            node: A node of :meth:`fitting_mask`.

        Returns:
            The placements (the caller starts the job), or None (nothing changes) when the job does not fit
            there or its other parts fit nowhere.
        """
        chunks = self.chunks[job]
        if not chunks or not self.fitting_mask(job)[node]:
            return None
        first = chunks[0]
        gpus = self.state.choose_gpus(node, first, "best", self.rng)
        self.state.place(node, gpus, first)
        rest = place_job(self.state, chunks[1:], self._choose)
        if rest is None:
            self.state.release(node, gpus, first)
            return None
        self.queue.remove(job)
        return [Placement(node, gpus, first), *rest]

    def release(self, job: int) -> None:
        """Free what finished ``job`` held."""
        _, _, placements = self.running.pop(job)
        for p in placements:
            self.state.release(p.node, p.gpus, p.pod)


class _GpuView:
    """The GPU cluster's side of EASY's reservation view (:class:`~hdeeprm.decision.easy.ReservationView`).

    Built for one decision of ``manager``. Jobs are indices, placements lists of
    :class:`~hdeeprm.decision.gpu_placement.Placement`; the what-if resources at the shadow time are a
    :class:`~hdeeprm.decision.gpu_placement.PlacementState`. Its shortcuts (the pre-filter :meth:`skip`): a shape that
    fit no node now fails again (resources only shrink within a decision); a one-part shape no node could take
    without delaying the head, under a deterministic policy, is offered the same nodes and GPUs again until a job
    backfills, so a job of that shape is tried only if it ends by the shadow time on one of them.
    """

    def __init__(self, manager: GpuManager) -> None:
        self.manager, self.shapes = manager, manager.shapes
        self.starting: list[tuple[int, list[Placement]]] = []   # the jobs this decision starts, in order
        self.failed: set[int] = set()
        self.refused: dict[int, list[Placement]] = {}
        #: ``job``'s estimated run time on its placements, seconds: the run's estimate (:attr:`GpuManager.estimate`).
        self.estimate: Estimate = manager.estimate
        self.deterministic = not draws_random(manager.policy)

    def place(self, job: int, accept: Accept | None) -> list[Placement] | None:
        """Place ``job`` now with the run's policy; None when no node takes it (nothing taken then).

        With ``accept``, every fitting node is tried, in the policy's order of preference, while it refuses
        (:func:`~hdeeprm.decision.gpu_choices.place_job`); failures feed the shape caches of :meth:`skip`.
        """
        m = self.manager
        if accept is None:
            return m._try(job)
        tried: list[Placement] = []   # the last part of every placement tried

        def test(parts: list[Placement]) -> bool:
            tried.append(parts[-1])
            return accept(parts)

        placed = m._try(job, test)
        if placed is None:
            shape = m.shapes[job]
            if not tried:
                self.failed.add(shape)
            elif self.deterministic and len(m.chunks[job]) == 1:
                self.refused[shape] = tried
        return placed

    def start(self, job: int, placed: list[Placement]) -> None:
        """Note that ``job`` starts now on ``placed`` (the caller starts it and tells :meth:`GpuManager.started`)."""
        self.starting.append((job, placed))
        self.refused.clear()   # the state changed: refused nodes may take a job now

    def shadow(self, head: int, now: float) -> tuple[float, PlacementState] | None:
        """The head's shadow time and the free resources then; None when it never fits (nothing backfills).

        Running jobs (and the ones this decision starts) are released in order of estimated end, overdue ones
        right after now, ties by start order; the shadow time is the first end after which the head's parts fit at
        once (:func:`fit_together`), and every job estimated to end by then is released.
        """
        m = self.manager
        parts = m.chunks[head]
        ends = sorted([(end, seq) + (placed,) for end, seq, placed in m.running.values()] +
                      [(now + m.estimate(job, placed), m._started + k, placed)
                       for k, (job, placed) in enumerate(self.starting)], key=lambda e: (max(e[0], now), e[1]))
        then = m.state.free_copy()
        shadow = np.inf
        for end, _, placed in ends:
            end = max(end, now)
            if end > shadow:
                break
            for p in placed:
                then.release(p.node, p.gpus, p.pod)
            if shadow == np.inf and fit_together(then, parts):
                shadow = end
        return (shadow, then) if shadow < np.inf else None

    def hold(self, then: PlacementState, head: int, job: int, placed: list[Placement]) -> bool:
        """Whether the head's parts fit ``then`` (resources at the shadow time) with ``placed`` taken.

        If so, and ``placed`` is the whole job (not the first parts of a spread job being placed), they stay taken;
        otherwise ``then`` is left as it was.
        """
        for p in placed:
            then.place(p.node, p.gpus, p.pod)
        fits = fit_together(then, self.manager.chunks[head])
        if not fits or len(placed) < len(self.manager.chunks[job]):
            for p in reversed(placed):
                then.release(p.node, p.gpus, p.pod)
        return fits

    def skip(self, job: int, now: float, shadow: float, then: PlacementState) -> bool:
        """Whether ``job``'s shape failed this decision, or was refused on nodes where it would not end by then."""
        shape = self.shapes[job]
        if shape in self.failed:
            return True
        refused = self.refused.get(shape)
        return refused is not None and all(now + self.estimate(job, [p]) > shadow for p in refused)
