"""Backfill slots: the agent names the job a backfilling strategy reserves for; the others backfill around it.

RLScheduler with backfilling (Zhang et al., "RLScheduler: An Automated HPC Batch Job Scheduler Using
Reinforcement Learning", SC'20, https://github.com/DIR-LAB/deep-batch-scheduler) lets its agent pick the job
to run next and, while that job does not fit, lets other jobs start if they do not delay it. This environment
does the same on HDeepRM's engine and decision system: the agent names one of the first ``K`` queued jobs, the
*head*; it starts now when it fits, otherwise it gets the reservation of HDeepRM's EASY (or conservative)
backfilling (:mod:`hdeeprm.decision.backfilling`, the same code as ``+easy_backfilling`` in
``hdeeprm-evaluate``) and the other queued jobs, in a fixed ordering, backfill without delaying it::

    import gymnasium, hdeeprm
    env = gymnasium.make("hdeeprm/HDeepRM-BackfillSlot-v0")            # quickstart inputs
    env = gymnasium.make("hdeeprm/HDeepRM-BackfillSlot-v0", options="examples/evaluation/sdsc_sp2_128.json",
                         commit=False)

An agent that always names the head of an ordering ``o`` replays ``o`` + EASY backfilling job for job when
the backfill ordering is ``o`` too, and ``commit=False`` (with ``commit=True`` as well when ``o`` never
reorders a blocked head, e.g. ``first``): tests/env/test_backfill_slot.py checks it on SDSC-SP2 windows.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from hdeeprm import arguments
from hdeeprm.config.options import Options
from hdeeprm.decision.core_selection import CORE_SELECTIONS
from hdeeprm.decision.observation import clip_unit, job_quantities, queue_normalisers
from hdeeprm.decision.orderings import JOB_ORDERINGS
from hdeeprm.decision.reward import make_reward
from hdeeprm.env.environment import env_episode, env_inputs
from hdeeprm.env.job_slot import DEFAULT_NB_SLOTS, DEFAULT_SLOT_CORE_SELECTION, fitting_jobs
from hdeeprm.errors import OptionsError
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.run.episode import Episode
from hdeeprm.run.loop import as_action
from hdeeprm.workload.model import Job, Workload
from hdeeprm.env.steps import started, truncated as steps_truncated

#: The start strategies whose reservation the named job gets (the first is the default).
BACKFILLINGS: tuple[str, ...] = ("easy_backfilling", "conservative_backfilling")
#: The ordering in which the other queued jobs backfill, unless another is named (FCFS, as EASY's).
DEFAULT_BACKFILL_ORDERING = "first"
#: The per-slot features, in column order.
BACKFILL_SLOT_FEATURES = ("waiting_time", "requested_time", "requested_cores", "requested_area", "can_start_now",
                          "free_cores")


class BackfillSlotEnv(gymnasium.Env):
    """Name the job that starts next or gets the backfilling reservation (RLScheduler with backfilling, SC'20).

    A decision point is an instant at which no named job is waiting for its
    reservation (``commit``) and at least one queued job fits the free cores
    and node memory. The agent names one of the first ``K`` queued jobs (in
    submission order):

    * it fits: it starts now on the cores ``core_selection`` picks, and the
      agent is asked again at the same instant while a queued job fits;
    * it does not fit: the backfilling strategy walks the queue with that job
      first and the others in ``backfill_ordering``: the named job gets the
      reservation (EASY: the earliest time it fits, from the running jobs'
      requested times) and the others start now when they fit without delaying
      it; the simulation then runs to the next event. With ``commit`` the named
      job stays the head at every later event until it starts (the agent is
      not asked meanwhile), as RLScheduler commits to its pick; without, the
      agent names a job again at the next decision point.

    ## Action Space

    ``Discrete(K)``: a slot. Empty slots are masked (``info["action_mask"]``,
    :meth:`action_masks`); naming one names slot 0 instead (counted in
    ``info["empty_named"]``).

    ## Observation Space

    ``Box(0, 1, (K, 6), float32)``, one row per slot (zeros for an empty slot):
    waiting time and requested time, in units of ``normalisers[0]`` seconds;
    requested cores over ``normalisers[1]``; requested area (cores x seconds)
    over their product; 1.0 when the job can start now; the share of the
    platform's cores free now (the same in every row). Clipped to [0, 1].

    ## Rewards

    The options' objective after each action (:mod:`hdeeprm.decision.reward`, as in ``HDeepRM-v0``).

    ## Episode End

    ``terminated``: the workload is drained. ``truncated``: ``max_steps``
    decisions were taken. The final ``info`` holds ``metrics``
    (:func:`hdeeprm.outputs.metrics.summarize`).

    Args:
        options: As :class:`~hdeeprm.env.environment.HDeepRMEnv` (quickstart inputs by default).
        platform, workload: Override the options' (paths or built objects).
        objective: Reward objective (overrides the options').
        core_selection: Core-selection policy placing every job ["high_gflops"].
        nb_slots: K, queued jobs shown, in [1, :data:`~hdeeprm.arguments.MAX_SLOTS`] (4096) [128].
        backfilling: The strategy whose reservation the named job gets, one of :data:`BACKFILLINGS`.
        backfill_ordering: The order in which the other jobs backfill
            (:data:`~hdeeprm.decision.orderings.JOB_ORDERINGS`) ["first"].
        commit: Keep the named job as the head until it starts [True]; a ``bool`` (or NumPy's), never ``"no"``.
        normalisers: ``(seconds, cores)`` scaling the features; None: the 99th percentiles of
            requested time and cores over the workload
            (:func:`~hdeeprm.decision.observation.queue_normalisers`). Give fixed ones when the
            agent is trained on other windows than it is tested on.
        seed: Seed of the workload conversion and default episode seed.
        nb_jobs: Jobs taken from the trace.
        max_steps: Decisions after which an episode is truncated (None = never).
        contention: Contention model name.

    Raises:
        OptionsError: invalid options, inputs, ``nb_slots``, ``commit``, core selection, backfilling,
            ordering or normalisers, named after the environment (:func:`~hdeeprm.arguments.env_errors`).

    ## Version History

    * v0: first version (HDeepRM 0.3).
    """

    metadata = {"render_modes": []}

    @arguments.env_errors
    def __init__(self, options: Options | str | Path | None = None, *,
                 platform: str | Path | ResourceHierarchy | None = None,
                 workload: str | Path | Workload | None = None, objective: str | None = None,
                 core_selection: str = DEFAULT_SLOT_CORE_SELECTION, nb_slots: int = DEFAULT_NB_SLOTS,
                 backfilling: str = BACKFILLINGS[0], backfill_ordering: str = DEFAULT_BACKFILL_ORDERING,
                 commit: bool = True, normalisers: tuple[float, float] | None = None, seed: int | None = None,
                 nb_jobs: int | None = None, max_steps: int | None = None, contention: str | None = None) -> None:
        self.nb_slots = arguments.count("nb_slots", nb_slots, maximum=arguments.MAX_SLOTS, what=arguments.SLOTS_WHAT)
        self.core_selection = CORE_SELECTIONS.check(core_selection)
        if backfilling not in BACKFILLINGS:
            raise OptionsError(f"backfilling must be one of {', '.join(BACKFILLINGS)}, got '{backfilling}'")
        self.backfilling = backfilling
        self.ordering = JOB_ORDERINGS[backfill_ordering]
        self.commit = arguments.flag("commit", commit)
        self.options, self.hierarchy, self.workload = env_inputs(
            options, platform, workload, max_steps, objective=objective, seed=seed, nb_jobs=nb_jobs,
            contention=contention)
        self.max_steps = max_steps
        self.reward_fn = make_reward(self.options.objective)
        quantities = job_quantities(self.workload)
        if normalisers is None:
            normalisers = tuple(float(x) for x in queue_normalisers(self.workload, quantities)[:2])
        normalisers = arguments.sequence("normalisers", normalisers, "a pair (seconds, cores)", length=2)
        seconds, cores = (arguments.real(name, value, positive=True)
                          for name, value in zip(("normalisers[0]", "normalisers[1]"), normalisers, strict=True))
        self.normalisers = (seconds, cores)
        self._time_scale = seconds
        self._static = clip_unit(np.stack([quantities[:, 0] / seconds, quantities[:, 1] / cores,
                                           quantities[:, 0] * quantities[:, 1] / (seconds * cores)], 1))
        self._submit = np.array([job.subtime for job in self.workload.jobs], dtype=np.float64)
        self._res = quantities[:, 1]
        self._needs_mem = quantities[:, 2] > 0.0
        self._has_mem = bool(self._needs_mem.any())
        self._nb_cores = self.hierarchy.nb_cores
        self.action_space = spaces.Discrete(self.nb_slots)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(self.nb_slots, len(BACKFILL_SLOT_FEATURES)),
                                            dtype=np.float32)
        self.episode: Episode | None = None
        self.head: Job | None = None
        self.steps = 0
        self.empty_named = 0
        self._decision = False
        self._fit = np.zeros(0, dtype=bool)

    # ---------------------------------------------------------------- gym API
    @arguments.env_errors
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a new simulation and run it to the first decision point.

        Args:
            seed: Seeds the environment's generator, which seeds the random policies.
            options: None or ``{}``: every episode replays the whole workload, so there is nothing to choose.

        Returns:
            ``(observation, info)``: float32 (K, 6), and a dict with ``action_mask``
            (bool, (K,): the shown jobs), ``time`` (s), ``queue`` (pending jobs), ``jobs_ended``
            and ``empty_named``.

        Raises:
            OptionsError: non-empty ``options`` (:func:`~hdeeprm.arguments.reset_options`).
        """
        arguments.reset_options(options)
        super().reset(seed=seed)
        self.episode = env_episode(self.options, self.hierarchy, self.workload, self.np_random, self.backfilling)
        self.head = None
        self.steps = 0
        self.empty_named = 0
        self._decision = self._next_decision(stay=False)
        return self._observe(), self._info()

    def step(self, action):
        """Name the job in slot ``action``: it starts now, or gets the reservation (class docstring).

        Args:
            action: A slot, int in [0, K).

        Returns:
            ``(observation, reward, terminated, truncated, info)``; see the class docstring.

        Raises:
            gymnasium.error.ResetNeeded: ``step`` before ``reset``.
            AgentError: ``action`` is not an integer in [0, K).
        """
        ep = started(self.episode)
        slot = as_action(action, self.nb_slots)
        if not self._decision:   # the episode had no decision left
            return self._observe(), 0.0, True, False, self._info()
        queue = ep.manager.queue
        if slot >= len(queue):
            slot = 0
            self.empty_named += 1
        self.head = queue[slot]
        self.steps += 1
        self._decision = self._next_decision(stay=True)
        reward = float(self.reward_fn(ep.view))
        terminated = not self._decision
        truncated = steps_truncated(terminated, self.steps, self.max_steps)
        return self._observe(), reward, terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """Which slots hold a job, bool (K,) (sb3-contrib MaskablePPO)."""
        mask = np.zeros(self.nb_slots, dtype=bool)
        if self.episode is not None and self._decision:
            mask[:min(len(self.episode.manager.queue), self.nb_slots)] = True
        return mask

    # --------------------------------------------------------------- internals
    def _serve_head(self) -> bool:
        """Start the head if it fits (True: look at this instant again), else reserve for it and backfill (False)."""
        m = self.episode.manager
        head = self.head
        if m.fits(head) and m.start_ordered([head], self.core_selection):
            self.head = None
            return True
        m.start_ordered([head, *(j for j in self.ordering.order(m.queue, m.rng, m.now) if j is not head)],
                        self.core_selection)
        if not self.commit:
            self.head = None
        return False

    def _next_decision(self, stay: bool) -> bool:
        """Run to the next decision point (from this instant when ``stay``); whether there is one."""
        ep = self.episode
        m = ep.manager
        if not stay and not ep.advance():
            return False
        while True:
            if m.queue:
                if self.head is not None:
                    if self._serve_head():
                        continue
                elif self._fill_fit(m):
                    return True
            if not ep.advance():
                self._fit = np.zeros(0, dtype=bool)
                return False

    def _fill_fit(self, manager) -> bool:
        """Which queued jobs fit now (cores, and node memory for jobs that need it); whether any does."""
        rows = self.episode.view.queue_indices(manager.queue)
        self._fit = fit = fitting_jobs(manager, rows, self._res, self._needs_mem if self._has_mem else None)
        return bool(fit.any())

    def _observe(self) -> np.ndarray:
        obs = np.zeros((self.nb_slots, len(BACKFILL_SLOT_FEATURES)), dtype=np.float32)
        ep = self.episode
        queue = ep.manager.queue
        if queue and self._decision:
            rows = ep.view.queue_indices(queue)[:self.nb_slots]
            n = len(rows)
            clip_unit((ep.engine.now - self._submit.take(rows)) / self._time_scale, obs[:n, 0])
            obs[:n, 1:4] = self._static.take(rows, axis=0)
            obs[:n, 4] = self._fit[:n]
            obs[:n, 5] = ep.manager.resources.nb_free / self._nb_cores
        return obs

    def _info(self) -> dict[str, Any]:
        ep = self.episode
        info = {"time": ep.engine.now, "queue": len(ep.manager.queue), "jobs_ended": ep.jobs_ended,
                "action_mask": self.action_masks(), "empty_named": self.empty_named}
        if not self._decision:
            info["metrics"] = ep.metrics()
        return info
