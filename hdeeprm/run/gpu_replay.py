"""The timed GPU replay: jobs arrive, queue, are placed on a GpuCluster, run and release their GPUs.

The replay runs on the event kernel, :class:`~hdeeprm.simulation.engine.Engine` (the same submission
stream, heap, same-instant order and clock as the Batsim-exact CPU runs: at every instant, every
submission in workload order, then every job end in start order), with the GPU resource model
:class:`~hdeeprm.simulation.gpu_model.GpuModel` plugged in (speed, allocation, the linear power model;
its docstring gives the models and their sources). At each instant the
:class:`~hdeeprm.decision.gpu_manager.GpuManager` takes one decision, then the state is recorded (one
timeline row per instant). :class:`GpuReplay` holds that loop's state and takes it one instant at a time,
so that the Gymnasium GPU environments decide between the steps (:func:`simulate_gpu` is its plain loop). It is
one of the two implementations of the session contract (:mod:`hdeeprm.run.session`: advance, apply, metrics,
result), :class:`~hdeeprm.run.episode.Episode` being the other.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hdeeprm.decision.gpu_manager import (
    DEFAULT_GPU_ORDERING, DEFAULT_GPU_PLACEMENT, DEFAULT_GPU_START_STRATEGY, GpuManager, Placement)
from hdeeprm.decision.fragmentation import typical_pods
from hdeeprm.decision.gpu_binding import RunTimeEstimate
from hdeeprm.outputs.gpu_outputs import gpu_summary
from hdeeprm.platform.openb import GpuCluster
from hdeeprm.run.session import drive
from hdeeprm.simulation.engine import Engine
from hdeeprm.simulation.results import GpuTimeline, SimulationResult, rejected_mask
from hdeeprm.simulation.gpu_model import GpuModel, GpuSpeedModel
from hdeeprm.workload.gpu_jobs import GpuJobs
from hdeeprm.workload.model import DELAY, Job, Profile, Workload

__all__ = ["GpuRunConfig", "GpuReplay", "simulate_gpu", "kernel_workload", "policy_decision"]


@dataclass(frozen=True)
class GpuRunConfig(GpuSpeedModel):
    """How one timed GPU run decides and times its jobs.

    Its speed model is :class:`~hdeeprm.simulation.gpu_model.GpuSpeedModel`'s attributes (inherited).

    Attributes:
        placement: Node-selection policy, a name of :data:`~hdeeprm.decision.gpu_scoring.GPU_PLACEMENTS`.
        ordering: Queue order, a name of :data:`~hdeeprm.decision.gpu_manager.GPU_ORDERINGS`.
        start_strategy: Which of the ordered queued jobs start, one of
            :data:`~hdeeprm.decision.gpu_manager.GPU_START_STRATEGIES` (``greedy``: every one that fits).
        seed: Seed of the node tie ranks and the ``random`` policy.
    """

    placement: str = DEFAULT_GPU_PLACEMENT
    ordering: str = DEFAULT_GPU_ORDERING
    start_strategy: str = DEFAULT_GPU_START_STRATEGY
    seed: int = 0


def kernel_workload(jobs: GpuJobs) -> Workload:
    """The kernel's view of GPU jobs: one ``delay`` job each (its duration on the reference GPU type), 0 hosts.

    Ids are the job indices, zero-padded to one width, so that Batsim's same-instant submission order (by the
    id string) is the trace order.

    Args:
        jobs: The GPU workload, sorted by submission time.

    Returns:
        A :class:`~hdeeprm.workload.model.Workload` whose job ``i`` is GPU job ``i``.
    """
    width = len(str(max(len(jobs) - 1, 0)))
    submit, duration = jobs.submit.tolist(), jobs.duration.tolist()
    return Workload([Job(i, f"{i:0{width}d}", float(submit[i]), 0, -1.0, Profile(f"gpu{i}", DELAY, float(duration[i])))
                     for i in range(len(jobs))])


class GpuReplay:
    """A timed GPU replay that advances one instant at a time (what :func:`simulate_gpu` loops over).

    Each call of :meth:`advance` moves the kernel to the next instant with an event and takes its submissions
    and completions in; the caller then starts jobs (:meth:`apply`, with placements from :attr:`manager`) and
    records the instant (:meth:`record`, or the next :meth:`advance` does). The Gymnasium environments drive a
    replay this way, taking decisions one job at a time (:meth:`~hdeeprm.decision.gpu_manager.GpuManager.place_on`).

    Args:
        cluster: The GPU cluster.
        jobs: The workload, sorted by submission time.
        config: Policies and speed model.

    Attributes:
        manager: The run's :class:`~hdeeprm.decision.gpu_manager.GpuManager` (queue and placement state).
        model: The GPU resource model plugged into :attr:`engine`.
        engine: The event kernel.
        typical: Typical pods of the fragmentation measure (None without jobs).

    Raises:
        OptionsError: Unknown policy, ordering, type or precision; a slowdown factor below 1.
    """

    def __init__(self, cluster: GpuCluster, jobs: GpuJobs, config: GpuRunConfig = GpuRunConfig()) -> None:
        self.cluster, self.jobs, self.config = cluster, jobs, config
        self.model = GpuModel(cluster, jobs, config)
        n = len(jobs)
        rng = np.random.default_rng(config.seed)
        self.typical = typical_pods(jobs.as_pods(), cluster.models) if n else None
        self.manager = GpuManager(cluster, jobs, config.placement, config.ordering, config.start_strategy, rng,
                                  self.typical, RunTimeEstimate.of(self.model, jobs.duration), speed=config)
        self.kernel_jobs = kernel_workload(jobs)
        self.engine = Engine((), self.kernel_jobs, energy=False, record=False, gpu=self.model)
        self.rows: list[tuple] = []   # the GPU timeline, one row per instant (GpuTimeline.of_rows)
        self.running = 0        # jobs started and not yet ended
        self.next_job = 0       # submissions taken in
        self.now = float(jobs.submit[0]) if n else 0.0
        self._pending = None    # a batch the kernel delivered during wait_until, taken in by the next advance
        self.done = False       # no event left (the session contract, hdeeprm.run.session)
        self._unrecorded = False  # an instant was taken in by advance and not recorded yet

    @property
    def start_time(self) -> np.ndarray:
        """Start time of each job in seconds, float64 (J,), NaN when it has not started."""
        return self.engine.start_time

    @property
    def finish(self) -> np.ndarray:
        """End (or rejection) time of each job in seconds, float64 (J,), NaN before it."""
        return self.engine.finish_time

    @property
    def rejected(self) -> np.ndarray:
        """Whether each job was rejected so far, bool (J,)."""
        return rejected_mask(self.engine.state)

    @property
    def events_left(self) -> bool:
        """Whether a submission or a completion is still to come."""
        return self._pending is not None or self.engine.has_pending_events()

    @property
    def next_time(self) -> float:
        """Time of the next submission or completion in seconds (inf when none is left)."""
        return self.now if self._pending is not None else self.engine.next_event_time()

    def wait_until(self, t: float) -> None:
        """Let time pass to ``t`` (no later than :attr:`next_time`), integrating energy (a decision between events).

        The kernel moves its clock with a call (Batsim's CALL_ME_LATER); the events of ``t`` itself, if any, are
        taken in by the next :meth:`advance`.

        Raises:
            ValueError: ``t`` is before now or after the next event.
        """
        if not self.now <= t <= self.next_time:
            raise ValueError(f"wait_until needs now ({self.now}) <= t <= next event ({self.next_time}), got {t}")
        if t == self.now:
            return
        self.engine.call_me_later(t)
        batch = self.engine.next_batch()
        self.now = t
        if batch.submitted or batch.completed:
            self._pending = batch

    def advance(self) -> bool:
        """Move to the next instant with an event and take its submissions and completions in.

        Returns:
            False (and nothing changes) when no event is left.
        """
        if self._unrecorded:   # the instant being left, after the decisions taken at it
            self.record()
        batch, self._pending = self._pending or self.engine.next_batch(), None
        if batch is None:
            self.done = True
            return False
        self._unrecorded = True
        self.now = batch.time
        manager, engine = self.manager, self.engine
        for job in batch.submitted:
            reason = manager.submit(job.index)
            if reason is not None:
                engine.reject_job(job, reason)
        self.next_job += len(batch.submitted)
        for job in batch.completed:
            manager.release(job.index)
        self.running -= len(batch.completed)
        return True

    def schedule(self) -> None:
        """Take the manager's decision at this instant (its queue order and placement policy) and start the jobs."""
        self.apply(policy_decision(self))

    def apply(self, decided: list[tuple[int, list[Placement]]]) -> int:
        """Start placed jobs now (their resources already taken in the manager's state): the session's apply.

        Args:
            decided: ``(job, placements)`` in start order.

        Returns:
            The number of jobs started.
        """
        jobs, execute, started, now = self.kernel_jobs.jobs, self.engine.execute_job, self.manager.started, self.now
        for job, placed in decided:
            execute(jobs[job], (), placed)
            started(job, placed, now)
        self.running += len(decided)
        return len(decided)

    def decide(self) -> None:
        """Take the manager's decision at this instant and record the instant (:meth:`schedule`, :meth:`record`)."""
        self.schedule()
        self.record()

    def step(self) -> bool:
        """One instant of the plain replay: :meth:`advance`, then :meth:`decide`.

        Returns:
            False (and nothing changes) when no event is left.
        """
        if not self.advance():
            return False
        self.decide()
        return True

    def fragmented(self) -> float:
        """ATC'23 fragmented GPU share of the cluster now, thousandths of a GPU (0 without jobs)."""
        if self.typical is None:
            return 0.0
        return float(self.manager.state.frag.sum()) / self.typical.total

    def record(self) -> None:
        """Append this instant's row to the timeline (after the decisions taken at it).

        :meth:`advance` records the instant it leaves when nobody did.
        """
        self._unrecorded = False
        model = self.model
        self.rows.append((self.now, model.allocated(), model.busy_gpus(), self.fragmented(), model.power(),
                          len(self.manager.queue)))

    def metrics(self) -> dict[str, float | int]:
        """The run's metrics summary (:func:`~hdeeprm.outputs.gpu_outputs.gpu_summary`, ``out_metrics.json``'s)."""
        return gpu_summary(self.result())

    def close(self) -> None:
        """Nothing to release (the session contract: a GPU replay streams no file)."""

    def result(self) -> SimulationResult:
        """The run's :class:`~hdeeprm.simulation.results.SimulationResult`, with its GPU part and timeline.

        Call it when :meth:`advance` returns False (or at any time for a snapshot).
        """
        result = self.engine.result()
        result.gpu = self.model.usage(GpuTimeline.of_rows(self.rows))
        return result


def policy_decision(replay: GpuReplay) -> list[tuple[int, list[Placement]]]:
    """The run's own decision at the replay's instant: its start strategy, queue order and placement policy.

    Returns:
        ``(job, placements)`` to start (:meth:`GpuReplay.apply`), their resources already taken.
    """
    return replay.manager.schedule(replay.now)


def simulate_gpu(cluster: GpuCluster, jobs: GpuJobs, config: GpuRunConfig = GpuRunConfig()) -> SimulationResult:
    """Replay ``jobs`` on ``cluster`` in time (see the module docstring).

    Args:
        cluster: The GPU cluster.
        jobs: The workload, sorted by submission time.
        config: Policies and speed model.

    Returns:
        The :class:`~hdeeprm.simulation.results.SimulationResult` (its ``gpu`` part filled); every job ends
        completed or rejected with its reason.

    Raises:
        OptionsError: Unknown policy, ordering, type or precision; a slowdown factor below 1.
    """
    replay = GpuReplay(cluster, jobs, config)
    drive(replay, policy_decision)
    if replay.manager.queue:   # cannot happen: a queued job fits the empty cluster, and the cluster empties
        raise AssertionError(f"jobs left in the queue: {replay.manager.queue[:5]}")
    return replay.result()
