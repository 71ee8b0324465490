"""One simulation run: the embedded engine driven by the workload manager.

:class:`Episode` is the single place where engine batches meet decisions;
``hdeeprm-launch`` and the Gymnasium environment both use it::

    episode = Episode(hierarchy, workload, actions=options.actions, seed=options.seed)
    while episode.advance():          # runs events until a decision is due
        decide(episode.manager, episode.view, agent, observer, reward)   # hdeeprm.run.loop
    episode.metrics()

The engine's semantics are Batsim 4.2.1's (see :mod:`hdeeprm.simulation.engine`).
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from hdeeprm.decision.contention import ContentionModel
from hdeeprm.decision.gpu_binding import (DEFAULT_BINDING_PLACEMENT, DEFAULT_GPU_ESTIMATE, GPU_ESTIMATES, GpuBinder,
                                          RunTimeEstimate)
from hdeeprm.decision.manager import WorkloadManager
from hdeeprm.decision.strategies import StartStrategy, make_start_strategy
from hdeeprm.decision.view import StateView
from hdeeprm.jsontext import encode_json
from hdeeprm.outputs.metrics import summarize, summarize_kinds, undefined_reasons, zero_runtime_jobs
from hdeeprm.run.loop import Observer, RewardFn, decide
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.errors import OptionsError
from hdeeprm.platform.openb import GpuCluster
from hdeeprm.simulation.engine import Engine, SimulationResult
from hdeeprm.simulation.gpu_model import GpuDemand, GpuModel, GpuSpeedModel
from hdeeprm.simulation.kernel import DEFAULT_CLOCK, consumed_joules
from hdeeprm.simulation.recording import Recorder
from hdeeprm.simulation.results import GpuTimeline
from hdeeprm.workload.model import Workload

if TYPE_CHECKING:
    from hdeeprm.agents.base import Agent
    from hdeeprm.config.options import Options
    from hdeeprm.simulation.resource_model import SchedulableModel


_HOSTS: list = [None, None]   # the last hierarchy and its host specs (an environment's resets share them)


def _host_specs(hierarchy: ResourceHierarchy) -> list:
    """``hierarchy.host_specs()``, built once for the hierarchy of consecutive episodes (specs are read-only)."""
    if _HOSTS[0] is not hierarchy:
        _HOSTS[:] = [hierarchy, hierarchy.host_specs()]
    return list(_HOSTS[1])


def _gpu_cells(gpu_model: GpuModel):
    """``job -> the GPU cells of its out_jobs.csv row`` (streamed rows), from the model's placements.

    The cells are :func:`~hdeeprm.outputs.batsim_csv.gpu_job_cells`'s, read from the placements as the jobs start.
    """
    from hdeeprm.outputs.batsim_csv import gpu_job_cells

    live = gpu_model.usage()
    live.placements = gpu_model.placements   # the model's own list, not a copy: each job's GPUs once it starts

    def cells(job) -> str:
        return gpu_job_cells(live, job.index)
    return cells


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
        strategy: The start strategy (head-of-line by default).
        stream_to: With ``record``, write the Batsim-format CSVs into this folder as the jobs
            end (:class:`~hdeeprm.outputs.stream.CsvStream`, bounded memory) instead of keeping
            their rows; :meth:`write_outputs` must then be given the same folder, and
            :meth:`close` closes the files if the run is abandoned.
        prefix: File name prefix of the streamed files.
        gpus: The GPUs of the platform's nodes (:class:`~hdeeprm.platform.openb.GpuCluster`, one node per node of
            ``hierarchy``), or None. With them, jobs asking for GPUs (``num_gpu``) get cores and GPUs on one node
            (:mod:`hdeeprm.decision.gpu_binding`) and run at the GPUs' speed, and the energy counts the GPUs'
            (:mod:`hdeeprm.simulation.gpu_model`).
        gpu_placement: GPU placement policy that scores the nodes of such jobs.
        gpu_speed: How fast such jobs run on the GPUs (reference type, precision, penalties); also the speed
            order of the ``high_gflops`` placement.
        gpu_estimate: How backfilling estimates the run time of such jobs, a name of
            :data:`~hdeeprm.decision.gpu_binding.GPU_ESTIMATES` (``"scaled"``: requested time x the GPUs' run-time
            factor, as the timed GPU replay; ``"requested"``: the requested time).
        clock: The engine's clock model (:data:`~hdeeprm.simulation.kernel.CLOCKS`; "batsim" = Batsim's
            6-decimal protocol clock, docs/engine.rst, "Protocol clock").
        models: Resource models beside the cores and GPUs, each held by the engine and scheduled by the manager
            (:class:`~hdeeprm.simulation.resource_model.SchedulableModel`: a licence count, a burst buffer).

    Attributes:
        engine: The :class:`~hdeeprm.simulation.engine.Engine`.
        manager: The :class:`~hdeeprm.decision.manager.WorkloadManager`.
        view: The :class:`~hdeeprm.decision.view.StateView` observations and rewards read.
        done: True once the engine has no event left.
        jobs_ended: Jobs completed, killed or rejected so far.
        gpu_rows: With GPUs and ``record``: the GPU state after every instant (its batch and the decision
            taken at it), ``(time s, allocated GPU share in thousandths, busy GPUs, fragmented share (NaN: not
            measured), GPU power W, queued jobs asking for GPUs)`` rows (``out_gpu_timeline.csv``); else None.

    Raises:
        OptionsError: An unknown ``gpu_estimate``; see :class:`~hdeeprm.simulation.gpu_model.GpuModel`.
    """

    def __init__(self, hierarchy: ResourceHierarchy, workload: Workload, *, actions: Sequence[int],
                 seed: int = 0, record: bool = True, model: ContentionModel | None = None,
                 strategy: StartStrategy | None = None, stream_to: str | Path | None = None,
                 prefix: str = "out", gpus: GpuCluster | None = None,
                 gpu_placement: str = DEFAULT_BINDING_PLACEMENT, gpu_speed: GpuSpeedModel = GpuSpeedModel(),
                 gpu_estimate: str = DEFAULT_GPU_ESTIMATE, clock: str = DEFAULT_CLOCK,
                 models: Sequence[SchedulableModel] = ()) -> None:
        if gpu_estimate not in GPU_ESTIMATES:
            raise OptionsError(f"gpu_jobs.estimate must be one of {', '.join(GPU_ESTIMATES)}, got {gpu_estimate!r}")
        self.hierarchy = hierarchy
        self.workload = workload
        hosts = _host_specs(hierarchy)
        self._stream: dict | None = None
        recorder = Recorder
        gpu_model = self.gpu_model = None if gpus is None else GpuModel(gpus, GpuDemand.of(workload.jobs), gpu_speed)
        if record and stream_to is not None:
            from hdeeprm.outputs.stream import CsvStream

            initial = np.array([h.initial_pstate for h in hosts], dtype=np.intp)
            files = self._stream = CsvStream.open(stream_to, prefix, initial, energy=True,
                                                  gpu_columns=gpu_model is not None)
            self._stream_to = (Path(stream_to), prefix)
            cells = None if gpu_model is None else _gpu_cells(gpu_model)

            def recorder(nb_hosts, account):
                return CsvStream(nb_hosts, account, files, workload.name, cells)
        self.engine = Engine(hosts, workload, energy=True, record=record, recorder=recorder, gpu=gpu_model,
                             clock=clock, models=models)
        estimate = None
        if gpu_model is not None and gpu_estimate == "scaled":
            estimate = RunTimeEstimate.of(gpu_model, [job.requested_time for job in workload.jobs])
        binder = None if gpus is None else GpuBinder(gpus, hierarchy.core_node, gpu_placement,
                                                     np.random.default_rng(seed), estimate, gpu_speed)
        self.gpu_rows: list[tuple] | None = [] if record and gpu_model is not None else None
        self._instant: float | None = None   # the instant taken in last, not yet in gpu_rows
        self.manager = WorkloadManager(self.engine, hierarchy, actions=actions, seed=seed, model=model,
                                       strategy=strategy, has_future_events=self.engine.has_pending_events,
                                       jobs=workload.jobs, gpus=binder, models=models)
        self.view = StateView(self.manager, workload, self.engine.progress)
        self.done = False
        self.jobs_ended = 0

    def advance(self) -> bool:
        """Run events until a decision is due.

        Returns:
            True when a decision is due (call :meth:`apply`), False when the
            simulation has ended.
        """
        engine, manager, rows = self.engine, self.manager, self.gpu_rows
        while True:
            if rows is not None and self._instant is not None:
                rows.append(self._gpu_row(self._instant))   # the instant being left, after its decision
            batch = engine.next_batch()
            if batch is None:
                self._instant = None
                self.done = True
                return False
            self._instant = batch.time
            nb_rejected = len(manager.rejected)
            due = manager.on_batch(batch.time, batch.submitted, batch.completed)
            self.jobs_ended += len(batch.completed) + len(manager.rejected) - nb_rejected
            if due:
                return True

    def _gpu_row(self, t: float) -> tuple:
        """The :attr:`gpu_rows` row of instant ``t`` (the state now)."""
        model = self.gpu_model
        queued = sum(1 for job in self.manager.queue if job.num_gpu)
        return (t, model.allocated(), model.busy_gpus(), math.nan, model.power(), queued)

    def apply(self, action: int) -> int:
        """Apply an action (position in the action set); returns the jobs started."""
        return self.manager.apply(action)

    def close(self) -> None:
        """Close the streamed files (if any); what was written so far stays on disk."""
        if self._stream is not None:
            from hdeeprm.outputs.stream import CsvStream

            CsvStream.close_files(self._stream)

    def metrics(self) -> dict[str, float | int]:
        """The metrics summary (see :func:`hdeeprm.outputs.metrics.summarize`).

        ``energy`` is Batsim's ``consumed_joules``: from the first submission to the last job end.
        """
        return self._metrics(self.result())

    def result(self) -> SimulationResult:
        """The run's :class:`~hdeeprm.simulation.results.SimulationResult` now (its GPU part on a mixed platform)."""
        result = self.engine.result()
        if self.gpu_model is not None:
            rows = self.gpu_rows
            if rows is not None and self._instant is not None:   # a snapshot between a batch and its decision
                rows = [*rows, self._gpu_row(self._instant)]
            result.gpu = self.gpu_model.usage(None if rows is None else GpuTimeline.of_rows(rows))
        return result

    def _metrics(self, result: SimulationResult) -> dict[str, float | int]:
        """:meth:`metrics` from a snapshot already taken."""
        energy = consumed_joules(result.first_submission_energy, result.last_completion_energy)
        if result.gpu is None:
            return decision_metrics(self.manager, self.workload, result.state, result.start_time,
                                    result.finish_time, energy)
        gpu_energy = result.gpu.energy   # from the first submission to the last job end, as the cores'
        metrics = decision_metrics(self.manager, self.workload, result.state, result.start_time, result.finish_time,
                                   energy + gpu_energy)
        return {**metrics, "cpu_energy": energy, "gpu_energy": gpu_energy,   # then each kind of job's figures
                **summarize_kinds(self.workload.jobs, result.state, result.start_time, result.finish_time)}

    def write_outputs(self, outdir: str | Path, prefix: str = "out") -> dict[str, float | int]:
        """Write the Batsim-format CSVs, the metrics summary and ``overutilizations.json``.

        With GPUs: ``out_jobs.csv`` has the GPU columns (:data:`~hdeeprm.outputs.batsim_csv.GPU_JOB_COLUMNS`) and
        ``{prefix}_gpu_timeline.csv`` the GPU state after every instant (:attr:`gpu_rows`, the GPU replay's columns,
        :func:`~hdeeprm.outputs.gpu_outputs.write_gpu_timeline_csv`).

        Returns:
            The metrics summary written to ``{prefix}_metrics.json``.
        """
        from hdeeprm.outputs.batsim_csv import write_outputs

        outdir = Path(outdir)
        outdir.mkdir(parents=True, exist_ok=True)
        result = self.result()   # one snapshot for the CSVs and the summary
        streamed = self._stream is not None
        if streamed:
            if self._stream_to != (outdir, prefix):
                raise OptionsError(f"the outputs were streamed to {self._stream_to[0]} with prefix "
                                   f"'{self._stream_to[1]}': write them there, not to {outdir} ('{prefix}')")
            self.close()
        write_outputs(outdir, result, prefix=prefix, streamed=streamed)
        if result.gpu is not None and result.gpu.timeline is not None:
            from hdeeprm.outputs.gpu_outputs import write_gpu_timeline_csv

            write_gpu_timeline_csv(outdir / f"{prefix}_gpu_timeline.csv", result)
        metrics = self._metrics(result)
        write_decision_outputs(outdir, metrics, self.manager, self.engine.now, prefix=prefix,
                               zero_runtime=zero_runtime_jobs(result.state, result.start_time, result.finish_time))
        return metrics


def decision_metrics(manager: WorkloadManager, workload: Workload, state, start, finish,
                     energy: float) -> dict[str, float | int]:
    """The metrics summary of a finished simulation, whichever simulator ran it.

    Args:
        manager: The decision system that scheduled it (its counters are added).
        workload: The jobs, in id order.
        state, start, finish: Per job: final :class:`~hdeeprm.workload.model.JobState`, starting
            and finish times (s, NaN when the job never ran), each of length ``len(workload.jobs)``.
        energy: Batsim's ``consumed_joules`` (J).

    Returns:
        :func:`hdeeprm.outputs.metrics.summarize`'s dict plus ``decisions`` and ``void_overridden``.
    """
    out = summarize(workload.jobs, state, start, finish, manager.hierarchy.nb_cores, energy)
    out["decisions"] = manager.decisions
    out["void_overridden"] = manager.void_overridden
    return out


def write_decision_outputs(outdir: Path, metrics: dict, manager: WorkloadManager, end: float,
                           prefix: str = "out", zero_runtime: int | None = None) -> None:
    """Write HDeepRM's own outputs beside Batsim's: ``{prefix}_metrics.json`` and ``overutilizations.json``.

    Args:
        outdir: The run's output folder.
        metrics: The summary of :func:`decision_metrics`.
        manager: The decision system (its memory-bandwidth over-subscription record).
        end: Simulated time the record is closed at (s).
        zero_runtime: The jobs that ran 0 s (their slowdown is written ``null``, and why:
            :func:`~hdeeprm.outputs.metrics.undefined_reasons`), when known.
    """
    text = encode_json(metrics, reasons=undefined_reasons(metrics, zero_runtime))
    (outdir / f"{prefix}_metrics.json").write_text(text + "\n")
    over = manager.resources.overutilization_report(end)
    (outdir / "overutilizations.json").write_text(encode_json(over) + "\n")


def run_episode(hierarchy: ResourceHierarchy, workload: Workload, options: Options, agent: Agent, *,
                record: bool = True, observer: Observer | None = None, reward: RewardFn | None = None,
                progress=None, model: ContentionModel | None = None,
                stream_to: str | Path | None = None, gpus: GpuCluster | None = None) -> tuple[Episode, float]:
    """Simulate ``workload`` once on the embedded engine with ``agent`` deciding.

    Args:
        hierarchy: The platform.
        workload: The jobs.
        options: The run's options (``actions``, ``seed`` and ``start_strategy`` are used).
        agent: Decides at every decision point (:func:`hdeeprm.run.loop.decide`).
        record: Keep the logs needed by the Batsim-format outputs.
        observer: Builds the agent's observation (float32, (observation_size,)), or None.
        reward: The objective given to ``agent.rewarded`` after each action, or None.
        progress: A tqdm-like bar updated with the number of jobs ended, or None.
        model: The contention model (HDeepRM's by default).
        stream_to: Stream the Batsim-format CSVs into this folder as jobs end (see
            :class:`Episode`; then call ``episode.write_outputs`` with it).
        gpus: The GPUs of the platform's nodes for the GPU jobs of ``options.gpu_jobs`` (placement, reference
            type and estimate from that block), or None.

    Returns:
        The finished :class:`Episode` and the sum of its rewards (0.0 without ``reward``).

    Raises:
        AgentError: the agent returned something that is not an action of the set.
    """
    block = options.gpu_jobs or {}
    speed = GpuSpeedModel(**{k: block[k] for k in ("reference_type",) if k in block})
    episode = Episode(hierarchy, workload, actions=options.actions, seed=options.seed, record=record, model=model,
                      strategy=make_start_strategy(options.start_strategy), stream_to=stream_to, gpus=gpus,
                      gpu_placement=block.get("placement", DEFAULT_BINDING_PLACEMENT), gpu_speed=speed,
                      gpu_estimate=block.get("estimate", DEFAULT_GPU_ESTIMATE), clock=options.clock)
    manager, view = episode.manager, episode.view
    total, shown = 0.0, 0
    try:
        while episode.advance():
            value = decide(manager, view, agent, observer, reward)
            if value is not None:
                total += value
            if progress is not None and episode.jobs_ended - shown >= 256:
                progress.update(episode.jobs_ended - shown)
                shown = episode.jobs_ended
    except BaseException:
        episode.close()
        raise
    if progress is not None:
        progress.update(episode.jobs_ended - shown)
    return episode, total
