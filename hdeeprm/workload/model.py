"""Typed workload objects shared by every part of HDeepRM.

These are the plain objects the parsers produce (SWF conversion, Batsim JSON
workloads) and the simulators, the workload manager and the output writers
consume. They follow Batsim's workload vocabulary (``subtime``, ``res``,
``walltime``, ``profile``), see https://batsim.readthedocs.io/en/latest/input-workload.html.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field

#: Profile type of a job that only waits (Batsim ``delay``); it computes nothing.
DELAY = "delay"
#: Profile type of a computation-only parallel task: every allocated host
#: computes ``cpu`` FLOP, all hosts progressing in lockstep (Batsim
#: ``parallel_homogeneous`` with ``com`` = 0).
PARALLEL_HOMOGENEOUS = "parallel_homogeneous"


@dataclass(frozen=True, slots=True)
class Profile:
    """What a job does once started.

    Attributes:
        name: Profile name, unique inside its workload.
        type: :data:`DELAY` or :data:`PARALLEL_HOMOGENEOUS`.
        delay: Duration in seconds (``delay`` profiles only, else 0.0).
        cpu: FLOP executed on *each* allocated host (``parallel_homogeneous`` only, else 0.0).
        com: Bytes exchanged between each pair of hosts; always 0.0 for the
            computation-only model the embedded engine implements.
    """

    name: str
    type: str
    delay: float = 0.0
    cpu: float = 0.0
    com: float = 0.0


class JobState(enum.Enum):
    """Life cycle of a job, named after Batsim's final states.

    Allowed transitions: NOT_SUBMITTED -> SUBMITTED -> RUNNING -> one of the
    COMPLETED_* states, or SUBMITTED -> REJECTED.
    """

    NOT_SUBMITTED = "NOT_SUBMITTED"
    SUBMITTED = "SUBMITTED"
    RUNNING = "RUNNING"
    COMPLETED_SUCCESSFULLY = "COMPLETED_SUCCESSFULLY"
    COMPLETED_WALLTIME_REACHED = "COMPLETED_WALLTIME_REACHED"
    COMPLETED_KILLED = "COMPLETED_KILLED"
    REJECTED = "REJECTED"

    @property
    def is_final(self) -> bool:
        """True for the states a job never leaves."""
        return self in _FINAL_STATES


_FINAL_STATES = frozenset({JobState.COMPLETED_SUCCESSFULLY, JobState.COMPLETED_WALLTIME_REACHED,
                           JobState.COMPLETED_KILLED, JobState.REJECTED})


@dataclass(slots=True, eq=False)
class Job:
    """One job of a workload, as submitted to the decision system.

    Attributes:
        index: Position of the job in its :class:`Workload` (0-based); the
            simulators key their arrays by it.
        id: Job identifier without the workload prefix (Batsim's ``id``),
            e.g. ``"42"``; the full Batsim id is ``f"{workload}!{id}"``.
        subtime: Submission time in seconds since the start of the simulation.
        res: Number of requested resources (cores, i.e. Batsim hosts), >= 1.
        walltime: Requested time in seconds (SWF field 9, Batsim ``walltime``);
            the job is killed when it exceeds it. ``-1.0`` means no walltime.
        profile: The :class:`Profile` the job executes.
        mem: Memory requested per core in MB (0 = none); the node memory is a
            hard limit in the heterogeneity layer.
        mem_bw: Memory bandwidth requested per core in GB/s (0 = none); the
            processor bandwidth is a soft limit.
        swf_id: SWF job number (field 1) the job came from, or -1.
        requested_time: The run-time estimate the scheduler sees, in seconds
            (equal to ``walltime`` when the job has one).
        num_gpu: GPUs requested on the node of its cores (0 = none; platforms whose nodes carry GPUs,
            :mod:`hdeeprm.decision.gpu_binding`).
        gpu_milli: Thousandths of each of those GPUs (1000 = a whole GPU, less = a share of one).
    """

    index: int
    id: str
    subtime: float
    res: int
    walltime: float
    profile: Profile
    mem: float = 0.0
    mem_bw: float = 0.0
    swf_id: int = -1
    requested_time: float = -1.0
    num_gpu: int = 0
    gpu_milli: int = 0


@dataclass(slots=True)
class Workload:
    """A set of jobs and their profiles, ready to simulate.

    Attributes:
        jobs: Jobs sorted by ``subtime`` (stable), ``jobs[i].index == i``.
        name: Workload name, Batsim's ``w0`` by default (job ids are ``name!id``).
        nb_res: Number of resources the workload was made for (Batsim ``nb_res``).
        reference_speed: FLOP/s of the reference core used to turn trace seconds
            into FLOP (0.0 when unknown).
        report: Counts of SWF jobs skipped or altered, by reason (empty for
            workloads read from Batsim JSON).
        source: Path of the file the workload came from, for messages.
    """

    jobs: list[Job]
    name: str = "w0"
    nb_res: int = 0
    reference_speed: float = 0.0
    report: dict[str, int] = field(default_factory=dict)
    source: str = ""

    @property
    def profiles(self) -> dict[str, Profile]:
        """The distinct profiles used by the jobs, by name (insertion ordered)."""
        out: dict[str, Profile] = {}
        for job in self.jobs:
            out.setdefault(job.profile.name, job.profile)
        return out

    def __len__(self) -> int:
        return len(self.jobs)
