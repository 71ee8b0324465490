"""The GPU resource model of the event kernel: GPU speed, allocation and power.

The :class:`~hdeeprm.simulation.engine.Engine` (the event kernel: submissions, the heap, same-instant order,
the clock) times every job; a :class:`GpuModel` plugged into it (``Engine(..., gpu=model)``) says how fast a
job runs on the GPUs it was given and what the GPUs draw. The kernel calls it at three points: when the clock
moves (:meth:`GpuModel.advance`, energy integration), when a job starts on GPUs (:meth:`GpuModel.start`,
which returns the job's run-time factor) and when such a job ends (:meth:`GpuModel.end`). The model holds no
queue and takes no decision: which GPUs a job gets is the decision system's business.

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
(the kernel's :class:`~hdeeprm.simulation.kernel.EnergyWindow`, which the CPU model reads its
energy over too). A job's own energy is ``tdp x share x time``
summed over its GPUs (its dynamic power plus its share of the idle power). GPU types with no
published rate or power (openb's undisclosed ``G2``, ``G3``) take those of a **stand-in** type,
the reference type unless the run names another; the result lists the substitutions.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from hdeeprm.errors import OptionsError
from hdeeprm.platform.gpu_types import GpuType, load_gpu_library
from hdeeprm.platform.openb import MILLI, GpuCluster
from hdeeprm.simulation.kernel import EnergyWindow
from hdeeprm.simulation.results import GpuTimeline, GpuUsage
from hdeeprm.summation import left_sum
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


class GpuShare(Protocol):
    """What the model needs of one placement (one node's part of a job): ``node``, ``gpus`` and ``gpu_milli``.

    :class:`~hdeeprm.decision.gpu_manager.Placement` is one (its ``pod.gpu_milli`` read through ``gpu_milli``).
    """

    node: int
    gpus: np.ndarray

    @property
    def gpu_milli(self) -> int:
        """Thousandths of each of ``gpus`` the job holds (1000 = the whole GPU)."""


@dataclass(frozen=True)
class GpuSpeedModel:
    """How fast jobs run on GPUs (the model's parameters; see the module docstring).

    Attributes:
        reference_type: GPU type (library name or alias) the durations are measured on.
        precision: Rate column of the speed model, one of :data:`SPEED_PRECISIONS`.
        stand_in: Type whose rates and power replace missing ones ("" = the reference type).
        throughput: Measured speed of the jobs on a GPU type relative to the reference type (> 0), by type name
            (library name or alias); overrides the rate ratio for those types.
        share_slowdown: Run-time factor (>= 1) of a job holding a fraction of a GPU.
        spread_slowdown: Run-time factor (>= 1) of a job spread over several nodes.
    """

    reference_type: str = DEFAULT_REFERENCE_TYPE
    precision: str = DEFAULT_SPEED_PRECISION
    stand_in: str = ""
    throughput: dict[str, float] = field(default_factory=dict)
    share_slowdown: float = DEFAULT_SHARE_SLOWDOWN
    spread_slowdown: float = DEFAULT_SPREAD_SLOWDOWN


def type_factors(cluster: GpuCluster, speed: GpuSpeedModel) -> tuple[np.ndarray, np.ndarray, np.ndarray,
                                                                     dict[str, str]]:
    """Per GPU model of the cluster: run-time factor, idle power and TDP, with the stand-ins used.

    Args:
        cluster: The GPU cluster.
        speed: The speed model (any object with :class:`GpuSpeedModel`'s attributes).

    Returns:
        ``(slowness, idle, tdp, stand_ins)``: ``rate(ref) / rate(model)``, idle W and TDP W, float64 (M + 1,)
        each (last entry: no GPU, 1.0 / 0 / 0), and the substitutions made (model -> stand-in type).

    Raises:
        OptionsError: An unknown reference or stand-in type, an unknown precision, or a reference / stand-in
            type without that precision's rate or without power figures.
    """
    if speed.precision not in SPEED_PRECISIONS:
        raise OptionsError(f"gpu precision must be one of {', '.join(SPEED_PRECISIONS)}, got {speed.precision!r}")
    library = load_gpu_library()
    try:
        reference = library[speed.reference_type]
        stand_in = library[speed.stand_in] if speed.stand_in else reference
    except Exception as exc:
        raise OptionsError(f"gpu reference_type / stand_in: {exc}") from None
    for what, gpu in (("reference_type", reference), ("stand_in", stand_in)):
        if gpu.peak(speed.precision) is None or gpu.tdp is None or gpu.idle_power is None:
            raise OptionsError(f"gpu {what} {gpu.name!r} has no {speed.precision} rate or no power figures in the "
                               "GPU type library: pick a type that has them")
    ref_rate = reference.peak(speed.precision)
    measured = {}
    for name, ratio in speed.throughput.items():
        if not (isinstance(ratio, (int, float)) and ratio > 0):
            raise OptionsError(f"gpu throughput of {name!r} must be a positive speed ratio, got {ratio!r}")
        try:
            measured[library[name].name] = float(ratio)
        except Exception as exc:
            raise OptionsError(f"gpu throughput: {exc}") from None
    slowness, idle, tdp, stand_ins = [], [], [], {}
    for model, gpu in zip(cluster.models, cluster.gpu_types):
        used: GpuType = gpu
        if gpu.peak(speed.precision) is None or gpu.tdp is None or gpu.idle_power is None:
            used = stand_in
            stand_ins[model] = stand_in.name
        slowness.append(1.0 / measured[gpu.name] if gpu.name in measured else ref_rate / used.peak(speed.precision))
        idle.append(used.idle_power)
        tdp.append(used.tdp)
    return (np.array([*slowness, 1.0]), np.array([*idle, 0.0]), np.array([*tdp, 0.0]), stand_ins)


class GpuModel:
    """GPU allocation, speed and power of one run (plugged into the event kernel; see the module docstring).

    Args:
        cluster: The GPU cluster (nodes, GPU models and counts).
        jobs: The GPU requests of the run's jobs, by job index (the kernel's job indices): a
            :class:`~hdeeprm.workload.gpu_jobs.GpuJobs` or a :class:`GpuDemand`.
        speed: The speed model.

    Attributes:
        slowness, idle, tdp: Per GPU model (and a last "no GPU" entry): run-time factor, idle W, TDP W,
            float64 (M + 1,).
        stand_ins: GPU types without rates or power -> the type used instead.
        speed: Run-time factor of each job (execution = duration x speed), float64 (J,), NaN until it starts.
        job_energy: Joules of each job, float64 (J,), NaN until it starts.
        placements: Where each job's GPUs are (or were), by job index (empty until it starts).
        held: Allocated thousandths of a GPU per GPU model, int64 (M + 1,).
        busy: Jobs on each GPU, int64 (N, max GPUs per node).
        milli: Thousandths of each GPU held by running jobs, int64 (N, max GPUs per node).
        now: Time the energy is integrated up to, in seconds (None before the first event).
        energy: GPU joules from the first event up to :attr:`now`.
        window: The energy window (:class:`~hdeeprm.simulation.kernel.EnergyWindow`): GPU joules at the first
            submission and at the last job end.

    Raises:
        OptionsError: See :func:`type_factors`; a slowdown factor below 1.
    """

    #: Its name among the kernel's resource models (:class:`~hdeeprm.simulation.resource_model.ResourceModel`):
    #: ``Engine.execute_job(..., gpus=placements)`` is ``shares={"gpu": placements}``.
    name = "gpu"

    def __init__(self, cluster: GpuCluster, jobs: GpuJobs | GpuDemand,
                 speed: GpuSpeedModel = GpuSpeedModel()) -> None:
        for name in ("share_slowdown", "spread_slowdown"):
            if not getattr(speed, name) >= 1.0:
                raise OptionsError(f"gpu {name} must be a run-time factor >= 1, got {getattr(speed, name)!r}")
        self.cluster, self.jobs, self.config = cluster, jobs, speed
        self.slowness, self.idle, self.tdp, self.stand_ins = type_factors(cluster, speed)
        n = len(jobs)
        self.speed = np.full(n, np.nan)
        self.job_energy = np.full(n, np.nan)
        self.idle_power = float((self.idle[cluster.gpu_model] * cluster.gpu_count).sum())
        self.held = np.zeros(len(self.slowness), dtype=np.int64)
        self.dynamic = 0.0      # sum over GPUs of (tdp - idle) x allocated share, W
        self.busy = np.zeros(cluster.gpu_count.shape + (max(cluster.max_gpus_per_node, 1),), dtype=np.int64)
        self.milli = np.zeros_like(self.busy)   # thousandths of each GPU held by running jobs
        self._held_by: dict[int, Sequence[GpuShare]] = {}
        self.placements: list[Sequence[GpuShare]] = [()] * n
        self.now: float | None = None
        self.energy = 0.0
        self.window = EnergyWindow()

    def advance(self, t: float) -> None:
        """Move the clock to ``t`` (>= :attr:`now`), integrating the GPU power since :attr:`now`."""
        if self.now is None:
            self.now = t
            return
        self.energy += (self.idle_power + self.dynamic) * (t - self.now)
        self.now = t

    def first_submission(self, t: float) -> None:
        """The first jobs are submitted at ``t`` (the kernel tells it after :meth:`advance`): the window opens."""
        self.window.open(self.energy)

    def fits(self, job: int, placed: Sequence[GpuShare]) -> bool:
        """Whether every GPU of ``placed`` has the share it asks for free now (``ResourceModel``'s fit test).

        The decision system's placement state filters the nodes; this reads the kernel's own record, :attr:`milli`.
        """
        milli = self.milli
        return all(bool((milli[p.node, p.gpus] + p.gpu_milli <= MILLI).all()) for p in placed)

    def factor(self, job: int, placed: Sequence[GpuShare]) -> float:
        """Run-time factor of ``job`` on ``placed``: the slowest GPU's, times the share and spread penalties.

        A job that uses no GPU (an openb CPU-only pod) runs its duration (factor 1) whatever its node's GPUs.
        """
        model = self.cluster.gpu_model
        speed = self.config
        if not self.jobs.num_gpu[job]:
            return 1.0
        factor = float(max(self.slowness[model[p.node]] for p in placed))
        if self.jobs.gpu_milli[job] < MILLI and self.jobs.num_gpu[job]:
            factor *= speed.share_slowdown
        if len({p.node for p in placed}) > 1:
            factor *= speed.spread_slowdown
        return factor

    def start(self, job: int, placed: Sequence[GpuShare], duration: float) -> float:
        """Give ``job`` the GPUs of ``placed`` now.

        Args:
            job: Job index.
            placed: Its placements (node, GPUs, share of each).
            duration: Its run time on the reference type, seconds.

        Returns:
            Its run-time factor (the kernel ends it ``duration x factor`` seconds from now).
        """
        model = self.cluster.gpu_model
        factor = self.factor(job, placed)
        run = duration * factor
        self.speed[job] = factor
        watts = left_sum(self.tdp[model[p.node]] * p.gpu_milli / MILLI * len(p.gpus) for p in placed)
        self.job_energy[job] = watts * run
        for p in placed:
            self.held[model[p.node]] += p.gpu_milli * len(p.gpus)
            self.busy[p.node, p.gpus] += 1
            self.milli[p.node, p.gpus] += p.gpu_milli
        self._held_by[job] = self.placements[job] = placed
        self.refresh()
        return factor

    def end(self, job: int) -> None:
        """Free the GPUs of ``job`` (if it holds any), which ends now (at :attr:`now`): the energy window grows."""
        placed = self._held_by.pop(job, None)
        if placed is not None:   # a job that held no GPU changes no power
            model = self.cluster.gpu_model
            for p in placed:
                self.held[model[p.node]] -= p.gpu_milli * len(p.gpus)
                self.busy[p.node, p.gpus] -= 1
                self.milli[p.node, p.gpus] -= p.gpu_milli
            self.refresh()
        self.window.close(self.energy)

    def usage(self, timeline: GpuTimeline | None = None) -> GpuUsage:
        """This model's part of the run result (:class:`~hdeeprm.simulation.results.GpuUsage`), copied.

        Args:
            timeline: The run's recorded GPU timeline, if any.
        """
        cluster = self.cluster
        offset = np.concatenate(([0], np.cumsum(cluster.gpu_count)[:-1])).astype(np.int64)
        return GpuUsage(cluster=cluster, jobs=self.jobs, config=self.config, placements=list(self.placements),
                        speed=self.speed.copy(), job_energy=self.job_energy.copy(), energy=float(self.spent),
                        stand_ins=dict(self.stand_ins), gpu_offset=offset, timeline=timeline)

    @property
    def spent(self) -> float:
        """GPU joules from the first submission to the last job end so far (the energy window's)."""
        return self.window.joules

    def refresh(self) -> None:
        """Recompute the dynamic GPU power from the allocated shares (after starts and ends)."""
        self.dynamic = float(((self.tdp - self.idle) * self.held).sum()) / MILLI

    def power(self) -> float:
        """GPU power now, W (idle power of every GPU plus the dynamic power of the allocated shares)."""
        return self.idle_power + self.dynamic

    def allocated(self) -> int:
        """Allocated GPU share now, thousandths of a GPU."""
        return int(self.held.sum())

    def busy_gpus(self) -> int:
        """GPUs holding at least one job now."""
        return int((self.busy > 0).sum())


@dataclass(frozen=True)
class GpuDemand:
    """The GPU requests of a workload's jobs, by job index (what :class:`GpuModel` reads of its jobs).

    Attributes:
        num_gpu: GPUs each job asks for, int64 (J,).
        gpu_milli: Thousandths of each of them, int64 (J,).
    """

    num_gpu: np.ndarray
    gpu_milli: np.ndarray

    @classmethod
    def of(cls, jobs: Sequence) -> GpuDemand:
        """The demand of :class:`~hdeeprm.workload.model.Job` objects (their ``num_gpu`` and ``gpu_milli``)."""
        return cls(np.array([j.num_gpu for j in jobs], dtype=np.int64),
                   np.array([j.gpu_milli for j in jobs], dtype=np.int64))

    def __len__(self) -> int:
        return len(self.num_gpu)
