"""What the embedded engine hands out: a :class:`Batch` per instant, a :class:`SimulationResult`.

Both are plain containers: :class:`~hdeeprm.simulation.engine.Engine` fills them, the decision
system reads batches (:mod:`hdeeprm.decision`, :mod:`hdeeprm.simulation.batsim.server`) and
the Batsim-format writers read results (:mod:`hdeeprm.outputs.batsim_csv`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from hdeeprm.platform.openb import GpuCluster
from hdeeprm.workload.gpu_jobs import GpuJobs
from hdeeprm.workload.model import Job, JobState, Workload


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


@dataclass
class GpuRunResult:
    """What a timed GPU run produced (J jobs, T recorded instants).

    Attributes:
        cluster, jobs, config: The inputs (``config``: the run's ``GpuRunConfig``, :mod:`hdeeprm.run.gpu_replay`).
        start, finish: Start and end time of each job in seconds, float64 (J,); NaN when it never ran (a
            rejected job's ``finish`` is its rejection time).
        rejected: Whether each job was rejected, bool (J,).
        reasons: Rejection reason by job.
        placements: Where each job ran (empty when rejected): ``Placement`` records
            (:class:`~hdeeprm.decision.gpu_manager.Placement`: node, GPUs, request).
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
    config: Any
    start: np.ndarray
    finish: np.ndarray
    rejected: np.ndarray
    reasons: dict[int, str]
    placements: list[list[Any]]
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
