"""The timed GPU replay: jobs arrive, queue, are placed on a GpuCluster, run and release their GPUs.

A discrete-event loop over job submissions and completions. At every instant where something
happens, the batch is handled in Batsim's order (every submission, in workload order, then every
completion, in start order), then the :class:`~hdeeprm.decision.gpu_manager.GpuManager` takes one
decision, then the state is recorded (one timeline row per instant). :class:`GpuReplay` holds that
loop's state and takes it one instant at a time, so that the Gymnasium GPU environments decide
between the steps (:func:`simulate_gpu` is its plain loop).

**Speed model.** A job's ``duration`` is its run time on the run's *reference* GPU type. On a GPU
of type ``t`` it runs ``rate(ref) / rate(t)`` times as long, ``rate`` the type's peak dense rate
at the run's precision (FP32 by default) from the GPU type library (vendor datasheets): the
"rate ratio" default of a per-type throughput table such as Gavel's (Narayanan et al., OSDI 2020,
who measure 0.4-5x between P100 and V100 depending on the model; give ``precision`` to change the
column), or a per-workload **throughput table** (``throughput``: GPU type -> jobs' speed relative to
the reference type, e.g. measured as in Gavel) that overrides the ratio for the types it names. A
job spread over several GPU types runs at the pace of its slowest GPU; a job that uses no GPU runs its
``duration`` (factor 1) whatever its node's GPUs. Two documented
penalty factors multiply the time: ``share_slowdown`` for a job that holds a fraction of a GPU
(time-slicing or MPS interference; Xiao et al., "Gandiva", OSDI 2018, measure co-located training
jobs) and ``spread_slowdown`` for a job spread over several nodes (lost locality; Jeon et al.,
ATC 2019, on Philly). Both default to 1.0 (no penalty): the openb trace defines a
pod's ``gpu_milli`` as the share it needs (the ATC'23 simulator models no interference) and the
published slowdowns depend on the model trained, so a user sets the factors they measured. The
factor is fixed when the job starts (no re-timing when neighbours come and go).

**Energy** (the linear utilisation power model of Fan, Weber and Barroso, "Power provisioning
for a warehouse-sized computer", ISCA 2007, applied per GPU): every GPU draws ``idle + (tdp - idle) x u``, ``u`` its
utilisation, taken as the share of it allocated to running jobs (a job uses what it holds). The
integral runs from the first submission to the last completion, as Batsim's ``consumed_joules``
(:func:`~hdeeprm.outputs.metrics.consumed_joules`). A job's own energy is ``tdp x share x time``
summed over its GPUs (its dynamic power plus its share of the idle power). GPU types with no
published rate or power (openb's undisclosed ``G2``, ``G3``) take those of a **stand-in** type,
the reference type unless the run names another; the result lists the substitutions.
"""
from __future__ import annotations

import heapq
import time
from dataclasses import dataclass, field

import numpy as np

from hdeeprm.decision.gpu_manager import DEFAULT_GPU_ORDERING, DEFAULT_GPU_PLACEMENT, GpuManager, Placement
from hdeeprm.errors import OptionsError
from hdeeprm.outputs.gpu_metrics import typical_pods
from hdeeprm.platform.gpu_types import GpuType, load_gpu_library
from hdeeprm.platform.openb import MILLI, GpuCluster
from hdeeprm.workload.gpu_jobs import GpuJobs

#: Reference GPU type of job durations when a run names none (a V100 16 GB: a datacenter training GPU of the
#: traces' era; the Philly table does not say which GPUs its jobs ran on).
DEFAULT_REFERENCE_TYPE = "V100 SXM2 16GB"
#: Precisions of the speed model (columns of the GPU type library).
SPEED_PRECISIONS = ("fp64", "fp32", "tf32", "fp16")
#: Rate column of the speed model when a run names none.
DEFAULT_SPEED_PRECISION = "fp32"
#: Run-time factor of a job holding a fraction of one GPU (see the module docstring).
DEFAULT_SHARE_SLOWDOWN = 1.0
#: Run-time factor of a job spread over several nodes (see the module docstring).
DEFAULT_SPREAD_SLOWDOWN = 1.0


@dataclass(frozen=True)
class GpuRunConfig:
    """How one timed GPU run decides and times its jobs.

    Attributes:
        placement: Node-selection policy, a name of :data:`~hdeeprm.decision.gpu_placement.GPU_PLACEMENTS`.
        ordering: Queue order, a name of :data:`~hdeeprm.decision.gpu_manager.GPU_ORDERINGS`.
        blocking: Head-of-line blocking (False: every queued job is tried at each decision).
        reference_type: GPU type (library name or alias) the durations are measured on.
        precision: Rate column of the speed model, one of :data:`SPEED_PRECISIONS`.
        stand_in: Type whose rates and power replace missing ones ("" = the reference type).
        throughput: Measured speed of the jobs on a GPU type relative to the reference type (> 0), by type name
            (library name or alias); overrides the rate ratio for those types.
        share_slowdown: Run-time factor (>= 1) of a job holding a fraction of a GPU.
        spread_slowdown: Run-time factor (>= 1) of a job spread over several nodes.
        seed: Seed of the node tie ranks and the ``random`` policy.
    """

    placement: str = DEFAULT_GPU_PLACEMENT
    ordering: str = DEFAULT_GPU_ORDERING
    blocking: bool = False
    reference_type: str = DEFAULT_REFERENCE_TYPE
    precision: str = DEFAULT_SPEED_PRECISION
    stand_in: str = ""
    throughput: dict[str, float] = field(default_factory=dict)
    share_slowdown: float = DEFAULT_SHARE_SLOWDOWN
    spread_slowdown: float = DEFAULT_SPREAD_SLOWDOWN
    seed: int = 0


@dataclass
class GpuRunResult:
    """What a timed GPU run produced (J jobs, T recorded instants).

    Attributes:
        cluster, jobs, config: The inputs.
        start, finish: Start and end time of each job in seconds, float64 (J,); NaN when it never ran (a
            rejected job's ``finish`` is its rejection time).
        rejected: Whether each job was rejected, bool (J,).
        reasons: Rejection reason by job.
        placements: Where each job ran (empty when rejected).
        speed: Run-time factor applied to each job (execution = duration x speed), float64 (J,), NaN if rejected.
        job_energy: Joules of each job (see the module docstring), float64 (J,), NaN if rejected.
        completion_order: Jobs in the order they reached their final state.
        times: Instants of the timeline, float64 (T,).
        allocated: GPU share allocated after each instant, thousandths of a GPU, int64 (T,).
        busy_gpus: GPUs holding at least one job after each instant, int64 (T,).
        fragmented: ATC'23 fragmented GPU share after each instant, thousandths of a GPU, float64 (T,).
        power: GPU power after each instant in W, float64 (T,).
        queued: Jobs waiting after each instant, int64 (T,).
        energy: GPU joules from the first submission to the last completion.
        stand_ins: GPU types without rates or power -> the type used instead.
        gpu_offset: Global id of each node's first GPU, int64 (N,).
        scheduling_time: Wall-clock seconds spent in the manager's decisions.
        simulation_time: Wall-clock seconds of the whole replay.
    """

    cluster: GpuCluster
    jobs: GpuJobs
    config: GpuRunConfig
    start: np.ndarray
    finish: np.ndarray
    rejected: np.ndarray
    reasons: dict[int, str]
    placements: list[list[Placement]]
    speed: np.ndarray
    job_energy: np.ndarray
    completion_order: list[int]
    times: np.ndarray
    allocated: np.ndarray
    busy_gpus: np.ndarray
    fragmented: np.ndarray
    power: np.ndarray
    queued: np.ndarray
    energy: float
    stand_ins: dict[str, str] = field(default_factory=dict)
    gpu_offset: np.ndarray | None = None
    scheduling_time: float = 0.0
    simulation_time: float = 0.0

    def gpu_ids(self, job: int) -> list[int]:
        """Global ids of the GPUs job ``job`` held (node-major numbering)."""
        return [int(self.gpu_offset[p.node] + g) for p in self.placements[job] for g in p.gpus]


def type_factors(cluster: GpuCluster, config: GpuRunConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                      dict[str, str]]:
    """Per GPU model of the cluster: run-time factor, idle power and TDP, with the stand-ins used.

    Returns:
        ``(slowness, idle, tdp, stand_ins)``: ``rate(ref) / rate(model)``, idle W and TDP W, float64 (M + 1,)
        each (last entry: no GPU, 1.0 / 0 / 0), and the substitutions made (model -> stand-in type).

    Raises:
        OptionsError: An unknown reference or stand-in type, an unknown precision, or a reference / stand-in
            type without that precision's rate or without power figures.
    """
    if config.precision not in SPEED_PRECISIONS:
        raise OptionsError(f"gpu precision must be one of {', '.join(SPEED_PRECISIONS)}, got {config.precision!r}")
    library = load_gpu_library()
    try:
        reference = library[config.reference_type]
        stand_in = library[config.stand_in] if config.stand_in else reference
    except Exception as exc:
        raise OptionsError(f"gpu reference_type / stand_in: {exc}") from None
    for what, gpu in (("reference_type", reference), ("stand_in", stand_in)):
        if gpu.peak(config.precision) is None or gpu.tdp is None or gpu.idle_power is None:
            raise OptionsError(f"gpu {what} {gpu.name!r} has no {config.precision} rate or no power figures in the "
                               "GPU type library: pick a type that has them")
    ref_rate = reference.peak(config.precision)
    measured = {}
    for name, speed in config.throughput.items():
        if not (isinstance(speed, (int, float)) and speed > 0):
            raise OptionsError(f"gpu throughput of {name!r} must be a positive speed ratio, got {speed!r}")
        try:
            measured[library[name].name] = float(speed)
        except Exception as exc:
            raise OptionsError(f"gpu throughput: {exc}") from None
    slowness, idle, tdp, stand_ins = [], [], [], {}
    for model, gpu in zip(cluster.models, cluster.gpu_types):
        used: GpuType = gpu
        if gpu.peak(config.precision) is None or gpu.tdp is None or gpu.idle_power is None:
            used = stand_in
            stand_ins[model] = stand_in.name
        slowness.append(1.0 / measured[gpu.name] if gpu.name in measured else ref_rate / used.peak(config.precision))
        idle.append(used.idle_power)
        tdp.append(used.tdp)
    return (np.array([*slowness, 1.0]), np.array([*idle, 0.0]), np.array([*tdp, 0.0]), stand_ins)


class GpuReplay:
    """A timed GPU replay that advances one instant at a time (what :func:`simulate_gpu` loops over).

    Each call of :meth:`advance` moves to the next instant with an event and takes its submissions and
    completions in; the caller then starts jobs (:meth:`start`, with placements from :attr:`manager`) and
    records the instant (:meth:`record`). The Gymnasium environments drive a replay this way, taking
    decisions one job at a time (:meth:`~hdeeprm.decision.gpu_manager.GpuManager.place_on`).

    Args:
        cluster: The GPU cluster.
        jobs: The workload, sorted by submission time.
        config: Policies and speed model.

    Attributes:
        manager: The run's :class:`~hdeeprm.decision.gpu_manager.GpuManager` (queue and placement state).
        now: Current simulated time in seconds.
        typical: Typical pods of the fragmentation measure (None without jobs).

    Raises:
        OptionsError: Unknown policy, ordering, type or precision; a slowdown factor below 1.
    """

    def __init__(self, cluster: GpuCluster, jobs: GpuJobs, config: GpuRunConfig = GpuRunConfig()) -> None:
        for name in ("share_slowdown", "spread_slowdown"):
            if not getattr(config, name) >= 1.0:
                raise OptionsError(f"gpu {name} must be a run-time factor >= 1, got {getattr(config, name)!r}")
        self.wall = time.perf_counter()
        self.cluster, self.jobs, self.config = cluster, jobs, config
        self.slowness, self.idle, self.tdp, self.stand_ins = type_factors(cluster, config)
        n = len(jobs)
        rng = np.random.default_rng(config.seed)
        self.typical = typical_pods(jobs.as_pods(), cluster.models) if n else None
        self.manager = GpuManager(cluster, jobs, config.placement, config.ordering, config.blocking, rng, self.typical)
        self.start_time = np.full(n, np.nan)
        self.finish = np.full(n, np.nan)
        self.speed = np.full(n, np.nan)
        self.job_energy = np.full(n, np.nan)
        self.rejected = np.zeros(n, dtype=bool)
        self.reasons: dict[int, str] = {}
        self.placements: list[list[Placement]] = [[] for _ in range(n)]
        self.order: list[int] = []
        self.rows: list[tuple] = []
        self.idle_power = float((self.idle[cluster.gpu_model] * cluster.gpu_count).sum())
        self.held = np.zeros(len(self.slowness), dtype=np.int64)   # allocated thousandths of a GPU per model
        self.dynamic = 0.0      # sum over GPUs of (tdp - idle) x allocated share, W
        self.energy = 0.0
        self.busy = np.zeros(cluster.gpu_count.shape + (max(cluster.max_gpus_per_node, 1),), dtype=np.int64)
        self.running: list[tuple[float, int, int]] = []   # (finish, start sequence, job)
        self.sequence = 0
        self.next_job = 0
        self.now = float(jobs.submit[0]) if n else 0.0
        self.spent = 0.0        # joules at the last completion
        self.deciding = 0.0     # wall-clock seconds in decisions

    @property
    def events_left(self) -> bool:
        """Whether a submission or a completion is still to come."""
        return self.next_job < len(self.jobs) or bool(self.running)

    @property
    def next_time(self) -> float:
        """Time of the next submission or completion in seconds (inf when none is left)."""
        n = len(self.jobs)
        return min(float(self.jobs.submit[self.next_job]) if self.next_job < n else np.inf,
                   self.running[0][0] if self.running else np.inf)

    def wait_until(self, t: float) -> None:
        """Let time pass to ``t`` (no later than :attr:`next_time`), integrating energy (a decision between events).

        Raises:
            ValueError: ``t`` is before now or after the next event.
        """
        if not self.now <= t <= self.next_time:
            raise ValueError(f"wait_until needs now ({self.now}) <= t <= next event ({self.next_time}), got {t}")
        self.energy += (self.idle_power + self.dynamic) * (t - self.now)
        self.now = t

    def advance(self) -> bool:
        """Move to the next instant with an event and take its submissions and completions in.

        Returns:
            False (and nothing changes) when no event is left.
        """
        if not self.events_left:
            return False
        jobs, manager, model = self.jobs, self.manager, self.cluster.gpu_model
        n, running = len(jobs), self.running
        t = min(float(jobs.submit[self.next_job]) if self.next_job < n else np.inf,
                running[0][0] if running else np.inf)
        self.energy += (self.idle_power + self.dynamic) * (t - self.now)
        self.now = t
        while self.next_job < n and jobs.submit[self.next_job] == t:
            job = self.next_job
            reason = manager.submit(job)
            if reason is not None:
                self.rejected[job], self.reasons[job], self.finish[job] = True, reason, t
                self.order.append(job)
            self.next_job += 1
        while running and running[0][0] == t:
            _, _, job = heapq.heappop(running)
            manager.release(self.placements[job])
            for p in self.placements[job]:
                self.held[model[p.node]] -= p.pod.gpu_milli * len(p.gpus)
                self.busy[p.node, p.gpus] -= 1
            self.order.append(job)
            self.spent = self.energy
        return True

    def schedule(self) -> None:
        """Take the manager's decision at this instant (its queue order and placement policy) and start the jobs."""
        tic = time.perf_counter()
        decided = self.manager.schedule()
        self.deciding += time.perf_counter() - tic
        self.start(decided)

    def start(self, decided: list[tuple[int, list[Placement]]]) -> None:
        """Start placed jobs now (their resources already taken in the manager's state).

        Args:
            decided: ``(job, placements)`` in start order.
        """
        jobs, config, model, t = self.jobs, self.config, self.cluster.gpu_model, self.now
        for job, placed in decided:
            nodes = {p.node for p in placed}
            factor = float(max(self.slowness[model[p.node]] for p in placed)) if jobs.num_gpu[job] else 1.0
            if jobs.gpu_milli[job] < MILLI and jobs.num_gpu[job]:
                factor *= config.share_slowdown
            if len(nodes) > 1:
                factor *= config.spread_slowdown
            run = float(jobs.duration[job]) * factor
            self.start_time[job], self.finish[job], self.speed[job] = t, t + run, factor
            self.placements[job] = placed
            self.job_energy[job] = sum(self.tdp[model[p.node]] * p.pod.gpu_milli / MILLI * len(p.gpus)
                                       for p in placed) * run
            for p in placed:
                self.held[model[p.node]] += p.pod.gpu_milli * len(p.gpus)
                self.busy[p.node, p.gpus] += 1
            heapq.heappush(self.running, (t + run, self.sequence, job))
            self.sequence += 1
        self.dynamic = float(((self.tdp - self.idle) * self.held).sum()) / MILLI

    def fragmented(self) -> float:
        """ATC'23 fragmented GPU share of the cluster now, thousandths of a GPU (0 without jobs)."""
        if self.typical is None:
            return 0.0
        return float(self.manager.state.frag.sum()) / self.typical.total

    def record(self) -> None:
        """Append this instant's row to the timeline (after the decisions taken at it)."""
        self.dynamic = float(((self.tdp - self.idle) * self.held).sum()) / MILLI
        self.rows.append((self.now, int(self.held.sum()), int((self.busy > 0).sum()), self.fragmented(),
                          self.idle_power + self.dynamic, len(self.manager.queue)))

    def result(self) -> GpuRunResult:
        """The run's :class:`GpuRunResult` (call when :meth:`advance` returns False)."""
        table = np.array(self.rows, dtype=np.float64).reshape(-1, 6)
        cluster = self.cluster
        offset = np.concatenate(([0], np.cumsum(cluster.gpu_count)[:-1])).astype(np.int64)
        return GpuRunResult(cluster=cluster, jobs=self.jobs, config=self.config, start=self.start_time,
                            finish=self.finish, rejected=self.rejected, reasons=self.reasons,
                            placements=self.placements, speed=self.speed, job_energy=self.job_energy,
                            completion_order=self.order, times=table[:, 0], allocated=table[:, 1].astype(np.int64),
                            busy_gpus=table[:, 2].astype(np.int64), fragmented=table[:, 3], power=table[:, 4],
                            queued=table[:, 5].astype(np.int64), energy=float(self.spent),
                            stand_ins=self.stand_ins, gpu_offset=offset, scheduling_time=self.deciding,
                            simulation_time=time.perf_counter() - self.wall)


def simulate_gpu(cluster: GpuCluster, jobs: GpuJobs, config: GpuRunConfig = GpuRunConfig()) -> GpuRunResult:
    """Replay ``jobs`` on ``cluster`` in time (see the module docstring).

    Args:
        cluster: The GPU cluster.
        jobs: The workload, sorted by submission time.
        config: Policies and speed model.

    Returns:
        The :class:`GpuRunResult`; every job ends completed or rejected with its reason.

    Raises:
        OptionsError: Unknown policy, ordering, type or precision; a slowdown factor below 1.
    """
    replay = GpuReplay(cluster, jobs, config)
    while replay.advance():
        replay.schedule()
        replay.record()
    if replay.manager.queue:   # cannot happen: a queued job fits the empty cluster, and the cluster empties
        raise AssertionError(f"jobs left in the queue: {replay.manager.queue[:5]}")
    return replay.result()
