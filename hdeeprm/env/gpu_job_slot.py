"""GPU job slots: the agent picks which queued GPU job starts next; a placement policy places it.

The job-slot action space of RLScheduler (Zhang et al., "RLScheduler: an automated HPC batch job
scheduler using reinforcement learning", SC'20) on HDeepRM's timed GPU replay
(:class:`~hdeeprm.run.gpu_replay.GpuReplay`)::

    import gymnasium, hdeeprm
    env = gymnasium.make("hdeeprm/GpuJobSlot-v0")                           # the "train" scenarios
    env = gymnasium.make("hdeeprm/GpuJobSlot-v0", platform="platforms/dgx_a100.json",
                         workload="philly:derived", nb_jobs=300)   # a registry name, or a path
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from hdeeprm import arguments
from hdeeprm.decision.gpu_manager import DEFAULT_GPU_ORDERING
from hdeeprm.decision.observation import clip_unit
from hdeeprm.env.gpu_placement import gpu_env_inputs
from hdeeprm.env.gpu_scenarios import GpuScenario, chosen_scenario, episode_inputs
from hdeeprm.platform.openb import MILLI, GpuCluster
from hdeeprm.run.gpu_replay import GpuReplay, GpuRunConfig
from hdeeprm.run.loop import as_action
from hdeeprm.workload.gpu_jobs import GpuJobs
from hdeeprm.env.steps import started, truncated as steps_truncated

#: Queued jobs the agent sees and may pick (RLScheduler's MAX_QUEUE_SIZE is 128 on CPU traces; GPU queues are
#: shorter).
DEFAULT_JOB_SLOTS = 32
#: Features of each slot's job, in column order.
SLOT_FEATURES = ("present", "num_gpu", "gpu_milli", "cpu", "memory", "log_duration", "log_waiting", "fits")
#: Features of the last row (the cluster), in the first columns.
CLUSTER_FEATURES = ("allocation_rate", "fragmentation_ratio", "log_queue")
#: Time unit of the reward, s: the return of an episode is minus the jobs' mean waiting time in hours.
WAIT_UNIT = 3600.0
_LOG_MONTH = float(np.log1p(30 * 86400.0))


class GpuJobSlotEnv(gymnasium.Env):
    """Pick one of the first ``K`` queued GPU jobs (in the run's ordering) to start now, or wait.

    ## Action Space

    ``Discrete(K + 1)``: slot ``k < K`` starts the ``k``-th queued job, placed by the run's placement policy
    (``placement``, every part of a spread job, all or nothing); ``K`` waits for the next submission or
    completion. Masked (``info["action_mask"]``, :meth:`action_masks`): empty slots and jobs that fit nowhere
    now; waiting is masked when nothing could happen (no job running, no submission left) and is then
    replaced by the first job that fits (``info["waits_overridden"]``).

    ## Observation Space

    ``Box(0, 1, (K + 1, 8), float32)``: row ``k`` describes slot ``k`` (:data:`SLOT_FEATURES`: 1 when a job is
    there, its GPUs / 8, share per GPU, CPU and memory over the largest node's, ``log1p`` of its duration and
    of its waiting time over ``log1p`` of 30 days, 1 when it fits now); the last row the cluster
    (:data:`CLUSTER_FEATURES`: GPU allocation rate, ATC'23 fragmentation ratio over the idle GPUs, ``log1p``
    of the queue length over ``log1p(10000)``). Rows are a set: a permutation-invariant network (one
    score per job, RLScheduler's kernel) reads them.

    ## Rewards

    Minus the queued jobs' waiting, integrated from this decision to the next, in job-hours over the jobs of
    the episode: an episode's return is minus the mean queueing delay in hours.

    ## Episode End

    ``terminated``: every job completed or was rejected; ``info["metrics"]`` then holds the episode's
    metrics (:meth:`~hdeeprm.run.gpu_replay.GpuReplay.metrics`). ``truncated``: ``max_steps`` decisions.

    Args:
        platform: A GpuCluster, an HDeepRM platform JSON or an openb node list.
        workload: GpuJobs, a Philly table or an openb pod list; with ``platform``, or neither: ``scenario``.
        nb_jobs: Jobs of the window (None: all).
        first_job: First job of the window.
        scenario: Scenario names or split drawn per episode (default ``"train"``).
        slots: ``K``, the queued jobs shown and pickable, in [1, :data:`~hdeeprm.arguments.MAX_SLOTS`] (4096).
        placement: Placement policy of the picked job.
        ordering: Order of the queue the slots show.
        max_steps: Decisions after which an episode is truncated.

    Raises:
        OptionsError: Inconsistent inputs, unknown policy names, a count that is not an integer in its range
            (Python or NumPy integers; never ``bool``, floats or strings), named after the environment.

    ## Version History

    * v0: first version (HDeepRM 0.3).
    """

    metadata = {"render_modes": []}

    @arguments.env_errors
    def __init__(self, platform: str | Path | GpuCluster | None = None, workload: str | Path | GpuJobs | None = None,
                 *, nb_jobs: int | None = None, first_job: int = 0, scenario: str | list[str] | None = None,
                 slots: int = DEFAULT_JOB_SLOTS, placement: str = "best_fit", ordering: str = DEFAULT_GPU_ORDERING,
                 max_steps: int | None = None) -> None:
        self.slots = arguments.count("slots", slots, maximum=arguments.MAX_SLOTS, what=arguments.SLOTS_WHAT)
        self.max_steps = arguments.count("max_steps", max_steps, optional=True)
        self.cluster, self.jobs, self.sampler = gpu_env_inputs(platform, workload, nb_jobs, first_job, scenario)
        self.config = GpuRunConfig(placement=placement, ordering=ordering)
        self.wait = self.slots
        self.action_space = spaces.Discrete(self.slots + 1)
        self.observation_space = spaces.Box(0.0, 1.0, (self.slots + 1, len(SLOT_FEATURES)), np.float32)
        self.replay: GpuReplay | None = None
        self.scenario: GpuScenario | None = None

    # ---------------------------------------------------------------- gym API
    @arguments.env_errors
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a replay (a new scenario when sampling) and run it to the first decision.

        Args:
            seed: Seeds the environment's generator (the scenario draws).
            options: ``{"scenario": name}`` replays that scenario of the environment's pool (when it samples
                scenarios; with a fixed platform and workload it accepts no key), without a draw
                (:func:`~hdeeprm.env.gpu_scenarios.chosen_scenario`). None or ``{}``: a draw, as without.

        Returns:
            ``(observation, info)``; ``info`` has ``action_mask``, ``time`` (s), ``queue``, ``scenario``,
            ``waits_overridden``.

        Raises:
            OptionsError: Another key, or a scenario outside the pool.
        """
        chosen = chosen_scenario(self.sampler, options)
        super().reset(seed=seed)
        self.scenario, cluster, jobs = episode_inputs(self.sampler, self.np_random, self.cluster, self.jobs,
                                                      chosen)
        self.replay = GpuReplay(cluster, jobs, self.config)
        self._capacity = float(max(cluster.nb_gpus, 1) * MILLI)
        self._cpu = float(max(cluster.cpu_milli.max(initial=1), 1))
        self._memory = float(max(cluster.memory_mib.max(initial=1), 1))
        self._nb_jobs = max(len(jobs), 1)
        # the slot features that do not change while a job waits, float32 (J, 6), by job index
        self._fixed = np.empty((len(jobs.duration), 6), dtype=np.float32)
        for column, values in enumerate((1.0, jobs.num_gpu / 8.0, jobs.gpu_milli / MILLI, jobs.cpu_milli / self._cpu,
                                         jobs.memory_mib / self._memory, np.log1p(jobs.duration) / _LOG_MONTH)):
            self._fixed[:, column] = values
        self.steps = self.waits_overridden = 0
        self.done = False
        self._area = 0.0
        self.replay.advance()
        self._next_decision()
        return self._observe(), self._info()

    def step(self, action):
        """Start the job of slot ``action`` now, or wait (``action == K`` or a masked slot).

        Returns:
            ``(observation, reward, terminated, truncated, info)`` (see the class docstring).

        Raises:
            gymnasium.error.ResetNeeded: ``step`` before ``reset``.
            AgentError: ``action`` is not an integer in [0, K].
        """
        started(self.replay)
        action = as_action(action, self.slots + 1)
        if self.done:
            return self._observe(), 0.0, True, False, self._info()
        replay = self.replay
        if action == self.wait or not self._mask[action]:
            if self._mask[self.wait]:
                self._area = self._advance()
                self._next_decision()
            else:   # waiting would wait forever: the first job that fits starts instead
                self.waits_overridden += 1
                self._start(int(np.flatnonzero(self._mask[:self.wait])[0]))
        else:
            self._start(action)
        reward = -self._area / WAIT_UNIT / self._nb_jobs
        self._area = 0.0
        self.steps += 1
        truncated = steps_truncated(self.done, self.steps, self.max_steps)
        if self.done and replay.manager.queue:   # cannot happen: a queued job fits the empty cluster
            raise AssertionError(f"GPU job-slot episode ended with jobs queued: {replay.manager.queue[:5]}")
        return self._observe(), float(reward), self.done, truncated, self._info(final=self.done or truncated)

    def action_masks(self) -> np.ndarray:
        """Slots whose job fits now, then wait, bool (K + 1,) (sb3-contrib MaskablePPO)."""
        return self._mask.copy()

    # --------------------------------------------------------------- internals
    def _start(self, slot: int) -> None:
        """Start the job of ``slot`` now with the run's placement policy, then find the next decision."""
        replay = self.replay
        job = self._visible[slot]
        placed = replay.manager.place(job)
        if placed is not None:
            replay.apply([(job, placed)])
        else:   # a spread job whose first part fits but not every part: it waits for the next event
            self._area += self._advance()
        self._next_decision()

    def _advance(self) -> float:
        """Move the replay to its next event; returns the queue's waiting area until then (job-seconds)."""
        replay = self.replay
        before, queued = replay.now, len(replay.manager.queue)
        replay.record()
        replay.advance()
        return queued * (replay.now - before)

    def _next_decision(self) -> None:
        """Run to the next instant where a shown job fits (accumulating the waiting area), or to the end."""
        replay = self.replay
        while True:
            manager = replay.manager
            self._visible = manager.ordered_queue()[:self.slots]
            fits = manager.first_part_fits(self._visible)
            if any(fits):
                self._mask = np.zeros(self.slots + 1, dtype=bool)
                self._mask[:len(fits)] = fits
                self._mask[self.wait] = replay.running > 0 or replay.events_left
                return
            if not replay.events_left:
                self.done = True
                self._mask = np.zeros(self.slots + 1, dtype=bool)
                self._visible = []
                replay.record()
                return
            self._area += self._advance()

    def _observe(self) -> np.ndarray:
        replay = self.replay
        jobs, state = replay.jobs, replay.manager.state
        rows = np.zeros((self.slots + 1, len(SLOT_FEATURES)), dtype=np.float32)
        shown = len(self._visible)
        if shown:
            job = np.array(self._visible, dtype=np.int64)
            rows[:shown, :6] = self._fixed[job]
            rows[:shown, 6] = np.log1p(replay.now - jobs.submit[job]) / _LOG_MONTH
            rows[:shown, 7] = self._mask[:shown]
        idle = float(state.total_left.sum())
        rows[-1, :3] = (1.0 - idle / self._capacity, replay.fragmented() / idle if idle else 0.0,
                        np.log1p(len(replay.manager.queue)) / np.log1p(10_000))
        return clip_unit(rows, rows)

    def _info(self, final: bool = False) -> dict[str, Any]:
        replay = self.replay
        info = {"action_mask": self._mask.copy(), "time": replay.now, "queue": len(replay.manager.queue),
                "scenario": self.scenario.name if self.scenario is not None else "",
                "waits_overridden": self.waits_overridden}
        if final and self.done:
            info["metrics"] = replay.metrics()
        return info
