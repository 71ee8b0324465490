"""What the event kernel hands out: a :class:`Batch` per instant, one :class:`SimulationResult` per run.

A run with GPUs (a timed GPU replay or a mixed CPU+GPU run) carries the GPU model's part in
:attr:`SimulationResult.gpu` (:class:`GpuUsage`, with its :class:`GpuTimeline`): one result type for every
resource.

Both are plain containers: :class:`~hdeeprm.simulation.engine.Engine` fills them, the decision
system reads batches (:mod:`hdeeprm.decision`, :mod:`hdeeprm.simulation.batsim.server`) and
the Batsim-format writers read results (:mod:`hdeeprm.outputs.batsim_csv`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hdeeprm.platform.openb import GpuCluster
from hdeeprm.workload.model import Job, JobState, Workload


def rejected_mask(states: list[JobState]) -> np.ndarray:
    """Whether each job was rejected (REJECT_JOB), bool (len(states),), from the jobs' states."""
    return np.fromiter((s is JobState.REJECTED for s in states), dtype=bool, count=len(states))


@dataclass(slots=True)
class Batch:
    """All events of one simulated instant, delivered together (Batsim ideal-network order).

    The order of the events inside a batch is the one of ``docs/engine.rst``, "Same-instant
    event order".

    Attributes:
        time: The instant, in seconds since the start of the simulation.
        submitted: Jobs submitted at this instant (JOB_SUBMITTED), ordered by the string
            ``f"{workload.name}!{job.id}"``.
        completed: Jobs that ended at this instant, in the order they were started: normal
            ends, walltime kills, and jobs killed by ``Engine.kill_job`` (JOB_COMPLETED, or
            JOB_KILLED for the latter).
        requested_call: True when a CALL_ME_LATER for this instant fired (REQUESTED_CALL).
        killed: The jobs of ``completed`` that were ended by ``Engine.kill_job`` (Batsim
            reports them with JOB_KILLED instead of JOB_COMPLETED).
        nb_requested_calls: How many CALL_ME_LATER fired at this instant (one REQUESTED_CALL
            each in Batsim).
        pstate_changes: ``(hosts, pstate)`` acknowledgements of the SET_RESOURCE_STATE
            requests of the previous batch (RESOURCE_STATE_CHANGED); filled only when the
            engine was built with ``ack_pstates=True``.
    """

    time: float
    submitted: list[Job]
    completed: list[Job]
    requested_call: bool
    killed: list[Job] = field(default_factory=list)
    nb_requested_calls: int = 0
    pstate_changes: list[tuple[tuple[int, ...], int]] = field(default_factory=list)


@dataclass(slots=True)
class SimulationResult:
    """Everything the Batsim-format output writers need, copied out of an engine.

    Built by :meth:`~hdeeprm.simulation.engine.Engine.result`; the files it feeds are described
    in ``docs/engine.rst``, "Output files".

    Attributes:
        workload: The simulated workload (jobs are indexed by ``job.index``).
        host_names: Host names by host id, length nb_hosts.
        energy: Whether energy was simulated (Batsim's ``-E``).
        state: Final (or current) :class:`JobState` of each job, by job index.
        start_time: Start time of each job in seconds, float64 (nb_jobs,), NaN if never started.
        finish_time: End time of each job in seconds (rejection time for rejected jobs),
            float64 (nb_jobs,), NaN if not finished.
        allocation: Host ids of each job, by job index (None if never started).
        consumed_energy: Energy of each job's hosts between its start and finish, in joules,
            float64 (nb_jobs,), NaN without energy or when not finished.
        reasons: Rejection reason by job index (REJECT_JOB).
        completion_order: Job indices in the order they reached a final state (rows of
            ``out_jobs.csv``).
        first_submission_energy: Cumulated platform energy (J) at the first submission (NaN
            before it, or without energy).
        last_completion_energy: Cumulated platform energy (J) at the last job end (NaN before
            it, or without energy).
        nb_grouped_switches: Number of SET_RESOURCE_STATE requests (``set_pstate`` calls, or
            entries of a ``set_pstates`` mapping).
        nb_machine_switches: Number of host pstate switches (hosts summed over the calls).
        initial_pstates: Pstate of each host at t = 0, int (nb_hosts,).
        machine_states: ``(time s, nb_idle, nb_computing)`` after every job start, job end and
            pstate switch (empty with ``record=False``).
        pstate_changes: ``(time s, host ids, new pstate)`` rows of ``out_pstate_changes.csv``
            after the initial pstates (empty with ``record=False``).
        energy_log: ``(time s, cumulated energy J, event type 's'|'e'|'p', wattmin W)`` rows
            of ``out_consumed_energy.csv`` (empty with ``record=False`` or without energy).
        host_busy: Seconds each host ran a job that has ended, summed in the order the jobs
            ended, float64 (nb_hosts,).
        host_last_end: End time (s) of the last ended job on each host, -inf for a host that
            ran none, float64 (nb_hosts,).
        scheduling_time: Wall-clock seconds spent outside ``Engine.next_batch`` (in the
            decision system) between the first and the last call.
        simulation_time: Wall-clock seconds from the first ``Engine.next_batch`` call to the
            end of the simulation (or to ``Engine.result``).
        gpu: The GPU model's part (placements, speed, energy, timeline) of a run with GPUs, or None.
    """

    workload: Workload
    host_names: tuple[str, ...]
    energy: bool
    state: list[JobState]
    start_time: np.ndarray
    finish_time: np.ndarray
    allocation: list[tuple[int, ...] | None]
    consumed_energy: np.ndarray
    reasons: dict[int, str]
    completion_order: list[int]
    first_submission_energy: float
    last_completion_energy: float
    nb_grouped_switches: int
    nb_machine_switches: int
    initial_pstates: np.ndarray
    machine_states: list[tuple[float, int, int]]
    pstate_changes: list[tuple[float, tuple[int, ...], int]]
    energy_log: list[tuple[float, float, str, float]]
    host_busy: np.ndarray
    host_last_end: np.ndarray
    scheduling_time: float
    simulation_time: float
    gpu: GpuUsage | None = None

    @property
    def rejected(self) -> np.ndarray:
        """Whether each job was rejected (REJECT_JOB), bool (nb_jobs,)."""
        return rejected_mask(self.state)


@dataclass(slots=True)
class GpuTimeline:
    """The GPU state after every recorded instant of a run (T instants; ``out_gpu_timeline.csv``).

    Attributes:
        times: Instants, seconds, float64 (T,).
        allocated: GPU share allocated, thousandths of a GPU, int64 (T,).
        busy_gpus: GPUs holding at least one job, int64 (T,).
        fragmented: ATC'23 fragmented GPU share (Weng et al., ATC 2023), thousandths of a GPU, float64 (T,).
        power: GPU power, W, float64 (T,).
        queued: Jobs waiting, int64 (T,).
    """

    times: np.ndarray
    allocated: np.ndarray
    busy_gpus: np.ndarray
    fragmented: np.ndarray
    power: np.ndarray
    queued: np.ndarray

    @classmethod
    def of_rows(cls, rows: list[tuple]) -> GpuTimeline:
        """The timeline of ``(time, allocated, busy GPUs, fragmented, power, queued)`` rows, in time order."""
        table = np.array(rows, dtype=np.float64).reshape(-1, 6)
        return cls(table[:, 0], table[:, 1].astype(np.int64), table[:, 2].astype(np.int64), table[:, 3],
                   table[:, 4], table[:, 5].astype(np.int64))


@dataclass(slots=True)
class GpuUsage:
    """The GPU model's part of a :class:`SimulationResult` (J jobs, by the kernel's job index).

    Filled by :meth:`~hdeeprm.simulation.gpu_model.GpuModel.usage` for every run with a GPU model: the timed
    GPU replay (:mod:`hdeeprm.run.gpu_replay`) and the mixed CPU+GPU runs (:class:`~hdeeprm.run.episode.Episode`).

    Attributes:
        cluster: The GPU cluster.
        jobs: The jobs' GPU requests (a :class:`~hdeeprm.workload.gpu_jobs.GpuJobs` in a GPU replay, with its
            trace ids and submission times; a :class:`~hdeeprm.simulation.gpu_model.GpuDemand` in a mixed run).
        config: The speed model (a GPU replay's ``GpuRunConfig``, which adds its policies).
        placements: Where each job's GPUs were (empty for a job that held none): ``Placement`` records
            (:class:`~hdeeprm.decision.gpu_manager.Placement`: node, GPUs, share).
        speed: Run-time factor applied to each job (execution = duration x speed), float64 (J,), NaN if it held
            no GPU.
        job_energy: GPU joules of each job, float64 (J,), NaN if it held no GPU.
        energy: GPU joules from the first submission to the last job end (Batsim's ``consumed_joules`` window).
        stand_ins: GPU types without rates or power -> the type used instead.
        gpu_offset: Global id of each node's first GPU (node-major numbering), int64 (N,).
        timeline: The state after every instant (a GPU replay records it), or None.
    """

    cluster: GpuCluster
    jobs: Any
    config: Any
    placements: list[list[Any]]
    speed: np.ndarray
    job_energy: np.ndarray
    energy: float
    stand_ins: dict[str, str]
    gpu_offset: np.ndarray
    timeline: GpuTimeline | None = None

    def gpu_ids(self, job: int) -> list[int]:
        """Global ids of the GPUs job ``job`` held (node-major numbering), in placement order."""
        return [int(self.gpu_offset[p.node] + g) for p in self.placements[job] for g in p.gpus]
