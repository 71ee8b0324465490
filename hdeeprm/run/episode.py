"""One simulation run: the embedded engine driven by the workload manager.

:class:`Episode` is the single place where engine batches meet decisions;
``hdeeprm-launch`` and the Gymnasium environment both use it::

    episode = Episode(hierarchy, workload, actions=options.actions, seed=options.seed)
    while episode.advance():          # runs events until a decision is due
        episode.apply(agent.decide(observation))
    episode.metrics()

The engine's semantics are Batsim 4.2.1's (see :mod:`hdeeprm.simulation.engine`).
"""
from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from hdeeprm.decision.contention import ContentionModel
from hdeeprm.decision.manager import WorkloadManager
from hdeeprm.outputs.metrics import summarize
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.simulation.engine import Engine
from hdeeprm.workload.model import Workload


class Episode:
    """An embedded simulation of ``workload`` on ``hierarchy`` with a workload manager.

    Args:
        hierarchy: The platform (each core one host).
        workload: The jobs to replay.
        actions: The action set (full action indices, see :mod:`hdeeprm.decision.policies`).
        seed: Seed of the random policies.
        record: Keep the machine-state, pstate and energy logs (needed for
            the Batsim-format outputs; off for fast training).
        model: The contention model (HDeepRM's by default).

    Attributes:
        engine: The :class:`~hdeeprm.simulation.engine.Engine`.
        manager: The :class:`~hdeeprm.decision.manager.WorkloadManager`.
        done: True once the engine has no event left.
        jobs_ended: Jobs completed, killed or rejected so far.
    """

    def __init__(self, hierarchy: ResourceHierarchy, workload: Workload, *, actions: Sequence[int],
                 seed: int = 0, record: bool = True, model: ContentionModel | None = None) -> None:
        self.hierarchy = hierarchy
        self.workload = workload
        self.engine = Engine(hierarchy.host_specs(), workload, energy=True, record=record)
        self.manager = WorkloadManager(self.engine, hierarchy, actions=actions, seed=seed, model=model,
                                       has_future_events=self.engine.has_pending_events, jobs=workload.jobs)
        self.done = False
        self.jobs_ended = 0

    def advance(self) -> bool:
        """Run events until a decision is due.

        Returns:
            True when a decision is due (call :meth:`apply`), False when the
            simulation has ended.
        """
        engine, manager = self.engine, self.manager
        while True:
            batch = engine.next_batch()
            if batch is None:
                self.done = True
                return False
            nb_rejected = len(manager.rejected)
            due = manager.on_batch(batch.time, batch.submitted, batch.completed)
            self.jobs_ended += len(batch.completed) + len(manager.rejected) - nb_rejected
            if due:
                return True

    def apply(self, action: int) -> int:
        """Apply an action (position in the action set); returns the jobs started."""
        return self.manager.apply(action)

    def metrics(self) -> dict[str, float | int]:
        """The metrics summary (see :func:`hdeeprm.outputs.metrics.summarize`)."""
        e = self.engine
        out = summarize(self.workload.jobs, e.state, e.start_time, e.finish_time,
                        self.hierarchy.nb_cores, e.consumed_energy())
        out["decisions"] = self.manager.decisions
        out["void_overridden"] = self.manager.void_overridden
        return out

    def write_outputs(self, outdir: str | Path, prefix: str = "out") -> dict[str, float | int]:
        """Write the Batsim-format CSVs, the metrics summary and ``overutilizations.json``.

        Returns:
            The metrics summary written to ``{prefix}_metrics.json``.
        """
        from hdeeprm.outputs.batsim_csv import write_outputs

        outdir = Path(outdir)
        outdir.mkdir(parents=True, exist_ok=True)
        write_outputs(outdir, self.engine.result(), prefix=prefix)
        metrics = self.metrics()
        (outdir / f"{prefix}_metrics.json").write_text(json.dumps(metrics, indent=2) + "\n")
        over = self.manager.state.overutilization_report(self.engine.now)
        (outdir / "overutilizations.json").write_text(json.dumps(over, indent=2) + "\n")
        return metrics
