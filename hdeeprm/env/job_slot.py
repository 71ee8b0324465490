"""A job-slot Gymnasium environment: the agent picks which queued job starts next.

The action space of SchedGym, the environment of RLScheduler (Zhang et al.,
"RLScheduler: An Automated HPC Batch Job Scheduler Using Reinforcement
Learning", SC'20, https://github.com/DIR-LAB/deep-batch-scheduler): the agent
sees the first ``K`` queued jobs (``K`` = 128 there and here) and names one of
them; a core-selection policy of HDeepRM's registry places it. It runs on the
same engine, decision system, objectives and options as ``HDeepRM-v0``
(:mod:`hdeeprm.env.environment`), whose policy-pair action space stays the
default::

    import gymnasium, hdeeprm
    env = gymnasium.make("hdeeprm/HDeepRM-JobSlot-v0")                 # quickstart inputs
    env = gymnasium.make("hdeeprm/HDeepRM-JobSlot-v0", options="examples/learning/kth_window.json")
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from hdeeprm.config.options import Options
from hdeeprm.decision.core_selection import CORE_SELECTIONS
from hdeeprm import arguments
from hdeeprm.env.environment import env_episode, env_inputs
from hdeeprm.decision.observation import clip_unit, clip_unit_one, job_quantities, queue_normalisers
from hdeeprm.decision.reward import make_reward
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.run.episode import Episode
from hdeeprm.run.loop import as_action
from hdeeprm.workload.model import Workload
from hdeeprm.env.steps import started, truncated as steps_truncated

#: Queued jobs shown to the agent (SchedGym's ``MAX_QUEUE_SIZE``).
DEFAULT_NB_SLOTS = 128
#: Core-selection policy that places the chosen job unless another is named.
DEFAULT_SLOT_CORE_SELECTION = "high_gflops"
#: Queues up to this long get their mask job by job (NumPy's per-call cost dominates below).
_SHORT_QUEUE = 8
#: The per-slot features, in column order.
SLOT_FEATURES = ("waiting_time", "requested_time", "requested_cores", "requested_memory", "can_start_now")


def fitting_jobs(manager, rows: np.ndarray, cores: np.ndarray, needs_memory: np.ndarray | None,
                 out: np.ndarray | None = None) -> np.ndarray:
    """Which of the first queued jobs could start now, at once (the job-slot environments' masks).

    The free cores decide for every job (one NumPy comparison); a job with a memory demand then also
    needs it on the nodes, which the manager's own test (:meth:`~hdeeprm.decision.manager.WorkloadManager.fits`)
    decides, job by job.

    Args:
        manager: The workload manager (its queue, in submission order, and its free cores).
        rows: Job indices of the first ``n`` queued jobs, intp (n,).
        cores: Cores requested by every job of the workload, by job index (nb_jobs,).
        needs_memory: Whether each job of the workload asks for memory, bool (nb_jobs,); None when none does.
        out: Where to write, bool (n,); None: a new array.

    Returns:
        bool (n,): ``out``, True for the queued jobs that fit now.
    """
    out = np.less_equal(cores.take(rows), manager.resources.nb_free, out=out)
    if needs_memory is not None:
        queue = manager.queue
        for i in np.flatnonzero(out & needs_memory.take(rows)).tolist():
            out[i] = manager.fits(queue[i])
    return out


class JobSlotEnv(gymnasium.Env):
    """Pick the next job among the first ``K`` queued ones (SchedGym's action space, SC'20).

    A decision point is an instant at which at least one of the first ``K``
    queued jobs (in submission order) fits the free cores and node memory. The
    agent names a slot; the job there starts at once on the cores that
    ``core_selection`` picks. The environment then stays at the same instant
    while another shown job fits, and otherwise runs the simulation to the next
    such instant.

    ## Action Space

    ``Discrete(K)``: a slot. Slots that are empty or whose job cannot start now
    are masked (``info["action_mask"]``, :meth:`action_masks` for sb3-contrib's
    MaskablePPO). A masked slot is a *wait*: nothing starts and the simulation
    runs to the next decision point; when waiting would last forever (nothing
    runs and no event is left), the first job that fits starts instead
    (counted in ``info["waits_overridden"]``).

    ## Observation Space

    ``Box(0, 1, (K, 5), float32)``, one row per slot (zeros for an empty slot):
    waiting time ``now - submit`` and requested time, both divided by the 99th
    percentile of requested times over the workload; requested cores and
    memory (MB per core), each divided by its workload 99th percentile
    (:func:`hdeeprm.decision.observation.queue_normalisers`, the scaling of
    HDeepRM's queue observation); 1.0 when the job can start now. Values are
    clipped to [0, 1].

    ## Rewards

    The options' objective after each action (:mod:`hdeeprm.decision.reward`, as in
    ``HDeepRM-v0``).

    ## Episode End

    ``terminated``: the workload is drained. ``truncated``: ``max_steps``
    decisions were taken. The final ``info`` holds ``metrics``
    (:func:`hdeeprm.outputs.metrics.summarize`).

    Args:
        options: As :class:`~hdeeprm.env.environment.HDeepRMEnv` (quickstart inputs by default).
        platform, workload: Override the options' (paths or built objects).
        objective: Reward objective (overrides the options').
        core_selection: Core-selection policy placing the chosen job
            (:data:`~hdeeprm.decision.core_selection.CORE_SELECTIONS`) ["high_gflops"].
        nb_slots: K, queued jobs shown, in [1, :data:`~hdeeprm.arguments.MAX_SLOTS`] (4096) [128].
        seed: Seed of the workload conversion and default episode seed.
        nb_jobs: Jobs taken from the trace.
        max_steps: Decisions after which an episode is truncated (None = never).
        contention: Contention model name.

    Raises:
        OptionsError: invalid options, inputs, ``nb_slots`` or core selection, named after the environment
            (:func:`~hdeeprm.arguments.env_errors`).

    ## Version History

    * v0: first version (HDeepRM 0.3).
    """

    metadata = {"render_modes": []}

    @arguments.env_errors
    def __init__(self, options: Options | str | Path | None = None, *,
                 platform: str | Path | ResourceHierarchy | None = None,
                 workload: str | Path | Workload | None = None, objective: str | None = None,
                 core_selection: str = DEFAULT_SLOT_CORE_SELECTION, nb_slots: int = DEFAULT_NB_SLOTS,
                 seed: int | None = None, nb_jobs: int | None = None, max_steps: int | None = None,
                 contention: str | None = None) -> None:
        nb_slots = arguments.count("nb_slots", nb_slots, maximum=arguments.MAX_SLOTS, what=arguments.SLOTS_WHAT)
        self.core_selection = CORE_SELECTIONS.check(core_selection)
        self.options, self.hierarchy, self.workload = env_inputs(
            options, platform, workload, max_steps, objective=objective, seed=seed, nb_jobs=nb_jobs,
            contention=contention)
        self.nb_slots = nb_slots
        self.max_steps = max_steps
        self.reward_fn = make_reward(self.options.objective)
        quantities = job_quantities(self.workload)
        scale = queue_normalisers(self.workload, quantities)   # s, cores, MB, GB/s
        self._time_scale = float(scale[0])
        #: Per job: requested time, cores, memory, each scaled and clipped (float32, (nb_jobs, 3)).
        self._static = clip_unit(quantities[:, :3] / scale[:3])
        self._submit = np.array([job.subtime for job in self.workload.jobs], dtype=np.float64)
        self._static_of, self._submit_of = [tuple(row) for row in self._static.tolist()], self._submit.tolist()
        self._res = quantities[:, 1]   # cores and memory per core of every job, for the mask
        self._needs_mem = quantities[:, 2] > 0.0
        self._has_mem = bool(self._needs_mem.any())
        self.action_space = spaces.Discrete(nb_slots)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(nb_slots, len(SLOT_FEATURES)), dtype=np.float32)
        self.episode: Episode | None = None
        self.steps = 0
        self.waits_overridden = 0
        self._decision = False
        self._mask = np.zeros(nb_slots, dtype=bool)

    # ---------------------------------------------------------------- gym API
    @arguments.env_errors
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a new simulation and run it to the first decision point.

        Args:
            seed: Seeds the environment's generator, which seeds the random core selection.
            options: None or ``{}``: every episode replays the whole workload, so there is nothing to choose.

        Returns:
            ``(observation, info)``: float32 (K, 5), and a dict with ``action_mask``
            (bool, (K,)), ``time`` (s), ``queue`` (pending jobs) and ``jobs_ended``.

        Raises:
            OptionsError: non-empty ``options`` (:func:`~hdeeprm.arguments.reset_options`).
        """
        arguments.reset_options(options)
        super().reset(seed=seed)
        self.episode = env_episode(self.options, self.hierarchy, self.workload, self.np_random)
        self.steps = 0
        self.waits_overridden = 0
        self._decision = self._next_decision(self.episode.advance())
        return self._observe(), self._info()

    def step(self, action):
        """Start the job in slot ``action`` (or wait when that slot is masked).

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
        if not self._decision:  # the episode had no decision left (e.g. every job rejected)
            return self._observe(), 0.0, True, False, self._info()
        manager = ep.manager
        if not self._mask[slot] and manager.waiting_is_forever():
            slot = int(np.argmax(self._mask))
            self.waits_overridden += 1
        if self._mask[slot]:
            manager.start_queued(slot, self.core_selection)
            due = True   # stay at this instant while a shown job still fits
        else:
            manager.wait()
            due = ep.advance()
        reward = float(self.reward_fn(ep.view))
        self.steps += 1
        self._decision = self._next_decision(due)
        terminated = not self._decision
        truncated = steps_truncated(terminated, self.steps, self.max_steps)
        return self._observe(), reward, terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """Which slots hold a job that can start now, bool (K,) (sb3-contrib MaskablePPO)."""
        return self._mask.copy()

    # --------------------------------------------------------------- internals
    def _next_decision(self, due: bool) -> bool:
        """From a state where ``due`` says whether events were just taken in, run to a decision point."""
        ep = self.episode
        manager = ep.manager
        while due:
            if manager.queue and self._fill_mask(manager):
                return True
            due = ep.advance()
        self._mask[:] = False
        return False

    def _fill_mask(self, manager) -> bool:
        """Write which shown jobs fit now into the mask (``manager.fits``; at once on long queues); whether any does."""
        queue, mask = manager.queue, self._mask
        if len(queue) <= _SHORT_QUEUE:   # job by job: cheaper than the array calls on a few jobs
            fits = list(map(manager.fits, queue[:self.nb_slots]))
            n = len(fits)
            mask[:n] = fits
            mask[n:] = False
            return any(fits)
        rows = self.episode.view.queue_indices(queue)[:self.nb_slots]
        n = len(rows)
        fit = mask[:n]
        fitting_jobs(manager, rows, self._res, self._needs_mem if self._has_mem else None, out=fit)
        mask[n:] = False
        return bool(fit.any())

    def _observe(self) -> np.ndarray:
        obs = np.zeros((self.nb_slots, len(SLOT_FEATURES)), dtype=np.float32)
        ep = self.episode
        queue = ep.manager.queue
        if 0 < len(queue) <= _SHORT_QUEUE:   # row by row: the same float64 sums and clip, cheaper on a few jobs
            now, scale, submit, static, mask = ep.engine.now, self._time_scale, self._submit_of, self._static_of, \
                self._mask
            shown = queue[:self.nb_slots]
            obs[:len(shown)] = [(clip_unit_one((now - submit[job.index]) / scale), *static[job.index], mask[k])
                                for k, job in enumerate(shown)]
        elif queue:
            rows = ep.view.queue_indices(queue)[:self.nb_slots]
            n = len(rows)
            wait = ep.engine.now - self._submit.take(rows)
            wait /= self._time_scale
            clip_unit(wait, obs[:n, 0])
            obs[:n, 1:4] = self._static.take(rows, axis=0)
            obs[:n, 4] = self._mask[:n]
        return obs

    def _info(self) -> dict[str, Any]:
        ep = self.episode
        info = {"time": ep.engine.now, "queue": len(ep.manager.queue), "jobs_ended": ep.jobs_ended,
                "action_mask": self._mask.copy(), "waits_overridden": self.waits_overridden}
        if not self._decision:
            info["metrics"] = ep.metrics()
        return info
