"""Small hand-made platforms and a recording simulator for decision-system tests."""
from __future__ import annotations

import numpy as np

from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.workload.model import PARALLEL_HOMOGENEOUS, Job, Profile


def small_hierarchy() -> ResourceHierarchy:
    """Two nodes, three processors, eight cores.

    node 0 (8 GB): proc 0 = cores 0-1, 4.0 GFLOP/s, 20 W/core, 32 GB/s;
                   proc 1 = cores 2-3, 4.4 GFLOP/s, 25 W/core, 32 GB/s
    node 1 (16 GB): proc 2 = cores 4-7, 2.0 GFLOP/s, 5 W/core, 40 GB/s
    """
    return ResourceHierarchy(
        core_processor=np.array([0, 0, 1, 1, 2, 2, 2, 2]),
        processor_node=np.array([0, 0, 1]),
        processor_n_cores=np.array([2, 2, 4]),
        processor_speed=np.array([4.0e9, 4.4e9, 2.0e9]),
        processor_power=np.array([20.0, 25.0, 5.0]),
        processor_mem_bw=np.array([32.0, 32.0, 40.0]),
        processor_type=["A", "B", "C"],
        node_cluster=np.array([0, 0]),
        node_memory=np.array([8 * 1024.0, 16 * 1024.0]),
        node_type=["n0", "n1"],
        cluster_id=["c"],
    )


def job(index: int, res: int = 1, *, subtime: float = 0.0, walltime: float = 100.0, mem: float = 0.0,
        mem_bw: float = 0.0, cpu: float = 4.0e9) -> Job:
    """A parallel_homogeneous job computing ``cpu`` FLOP per core."""
    return Job(index=index, id=str(index), subtime=subtime, res=res, walltime=walltime,
               profile=Profile(f"p{index}", PARALLEL_HOMOGENEOUS, cpu=cpu), mem=mem, mem_bw=mem_bw,
               requested_time=walltime)


class RecordingSimulator:
    """A SimulatorPort that records the commands it receives, in order."""

    def __init__(self) -> None:
        self.commands: list[tuple] = []
        self.now = 0.0

    def execute_job(self, job, hosts):
        self.commands.append(("EXECUTE_JOB", job.id, tuple(hosts)))

    def reject_job(self, job, reason):
        self.commands.append(("REJECT_JOB", job.id, reason))

    def kill_job(self, job):
        self.commands.append(("KILL_JOB", job.id))

    def set_pstate(self, hosts, pstate):
        self.commands.append(("SET_RESOURCE_STATE", tuple(hosts), pstate))

    def call_me_later(self, when):
        self.commands.append(("CALL_ME_LATER", when))

    def progress(self, job):
        return 0.0
