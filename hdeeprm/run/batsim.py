"""Run HDeepRM's decision system against a real Batsim (``hdeeprm-launch --simulator batsim``).

The launcher writes the SimGrid XML platform (one host per core, names that
sort in core order) and the Batsim JSON workload into the output folder,
starts the ``batsim`` binary on a free loopback port and runs the same
:class:`~hdeeprm.decision.manager.WorkloadManager` as a PyBatsim scheduler
(:mod:`hdeeprm.simulation.batsim.pybatsim_adapter`). Batsim writes its own
``out_*.csv`` there; HDeepRM adds ``out_metrics.json`` and
``overutilizations.json``.
"""
from __future__ import annotations

import csv
import math
from pathlib import Path

import numpy as np

from hdeeprm.agents.base import Agent
from hdeeprm.config.options import Options
from hdeeprm.decision.contention import make_contention_model
from hdeeprm.decision.strategies import make_start_strategy
from hdeeprm.decision.manager import WorkloadManager
from hdeeprm.decision.view import StateView
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.outputs.metrics import zero_runtime_jobs
from hdeeprm.run.episode import decision_metrics, write_decision_outputs
from hdeeprm.run.loop import Observer, RewardFn, decide
from hdeeprm.workload.model import JobState, Workload


def run_on_batsim(hierarchy: ResourceHierarchy, workload: Workload, options: Options, agent: Agent, *,
                  outdir: str | Path, batsim: str = "batsim", observer: Observer | None = None,
                  reward: RewardFn | None = None) -> dict:
    """Simulate with a real Batsim binary; returns the metrics summary.

    Args:
        hierarchy: The platform.
        workload: The jobs.
        options: The run's options (action set, seed, contention model).
        agent: Decides at every decision point.
        outdir: Output folder (inputs for Batsim are written there too).
        batsim: Name or path of the ``batsim`` binary (or a stand-in such as ``hdeeprm-batsim``).
        observer: Builds the agent's observation, or None.
        reward: The objective given to the agent after each action, or None.

    Raises:
        HDeepRMError: no binary found, PyBatsim missing, or Batsim failed (quoting its log).
    """
    from hdeeprm.platform import write_simgrid_platform
    from hdeeprm.simulation.batsim.pybatsim_adapter import run_with_batsim
    from hdeeprm.workload.batsim_json import write_batsim_workload

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    platform_xml = outdir / "platform.xml"
    workload_json = outdir / "workload.json"
    write_simgrid_platform(hierarchy, platform_xml)
    write_batsim_workload(workload, workload_json, nb_res=hierarchy.nb_cores)
    managers: list[WorkloadManager] = []

    def on_batch_factory(port):
        manager = WorkloadManager(port, hierarchy, actions=options.actions, seed=options.seed,
                                  model=make_contention_model(options.contention),
                                  strategy=make_start_strategy(options.start_strategy),
                                  has_future_events=port.has_pending_events, jobs=workload.jobs)
        managers.append(manager)
        view = StateView(manager, workload, port.progress)

        def on_batch(now, submitted, completed):
            if manager.on_batch(now, submitted, completed):
                decide(manager, view, agent, observer, reward)
        return on_batch

    run = run_with_batsim(workload, platform_xml, workload_json, on_batch_factory, batsim=batsim,
                          outdir=outdir, energy=True, hosts=hierarchy.host_specs())
    sched = run.scheduler
    n = len(workload.jobs)
    start = np.full(n, np.nan)
    finish = np.full(n, np.nan)
    states = [JobState.REJECTED] * n
    for i, s in sched.final_state.items():
        states[i] = JobState(s) if s in JobState.__members__ else JobState.COMPLETED_KILLED
    for i, t in sched.start_time.items():
        start[i] = t
    for i, t in sched.finish_time.items():
        finish[i] = t
    energy = _consumed_joules(run.outdir)
    metrics = decision_metrics(managers[0], workload, states, start, finish, energy)
    write_decision_outputs(outdir, metrics, managers[0], float(np.nanmax(finish)) if n else 0.0,
                           zero_runtime=zero_runtime_jobs(states, start, finish))
    return metrics


def _consumed_joules(outdir: Path) -> float:
    path = outdir / "out_schedule.csv"
    if not path.exists():
        return math.nan
    with open(path, newline="") as f:
        row = next(csv.DictReader(f), {})
    return float(row.get("consumed_joules", "nan"))
