"""The Gymnasium environment of HDeepRM: workload management as a sequential decision problem.

``import hdeeprm`` registers ``"hdeeprm/HDeepRM-v0"`` (by a string entry point:
nothing heavy is imported until the environment is made)::

    import gymnasium
    import hdeeprm
    env = gymnasium.make("hdeeprm/HDeepRM-v0")   # the quickstart platform and trace
    env = gymnasium.make("hdeeprm/HDeepRM-v0", options="examples/learning/learning.json")

(Gymnasium 1.x no longer loads the ``gymnasium.envs`` entry point that
``setup.py`` declares; :func:`hdeeprm.register_envs` is what it names, for
older versions and for explicit calls.)
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from hdeeprm import ENV_ID  # noqa: F401  (re-exported: the id HDeepRMEnv is registered under)
from hdeeprm.config.build import build_platform, build_workload
from hdeeprm.config.options import QUICKSTART_PLATFORM, QUICKSTART_WORKLOAD, Options, load_options
from hdeeprm.decision.actions import VOID, parse_action
from hdeeprm.decision.contention import make_contention_model
from hdeeprm.decision.strategies import make_start_strategy
from hdeeprm import arguments
from hdeeprm.decision.observation import make_observer
from hdeeprm.decision.reward import make_reward
from hdeeprm.errors import OptionsError
from hdeeprm.platform.hierarchy import ResourceHierarchy
from hdeeprm.run.episode import Episode
from hdeeprm.run.loop import apply_action
from hdeeprm.workload.datasets import resolve_name
from hdeeprm.workload.model import Workload
from hdeeprm.env.steps import started, truncated as steps_truncated



def _resolve_actions(actions: Sequence[int | str] | None, void: bool | None) -> list[int] | None:
    """Action set from full indices or ``"job-core"`` policy-pair names (+ void)."""
    void = arguments.flag("void", void, optional=True)
    if actions is None:
        return None if void is None else list(range(VOID)) + ([VOID] if void else [])
    actions = arguments.sequence("actions", actions, "a list of action indices or 'job-core' names")
    for i, action in enumerate(actions):
        if not isinstance(action, str):
            arguments.count(f"actions[{i}]", action, 0)
    arguments.distinct("actions", actions, key=parse_action)
    out = [parse_action(a) for a in actions]
    if void and VOID not in out:
        out.append(VOID)
    if not out:
        raise OptionsError("actions must name at least one action, got none")
    return out


def env_episode(options: Options, hierarchy: ResourceHierarchy, workload: Workload, rng: np.random.Generator,
                strategy: str | None = None) -> Episode:
    """A new simulation for one episode of a CPU environment (``HDeepRM-v0``, ``-JobSlot-v0``, ``-BackfillSlot-v0``).

    Args:
        options: The environment's options (actions, contention model, start strategy, clock).
        hierarchy, workload: Its platform and jobs.
        rng: The environment's generator (``np_random``): one draw seeds the episode (its random policies).
        strategy: Start strategy name (default: the options').

    Returns:
        The :class:`~hdeeprm.run.episode.Episode`, not yet advanced, recording no output rows.
    """
    return Episode(hierarchy, workload, actions=options.actions, seed=int(rng.integers(2**31 - 1)), record=False,
                   model=make_contention_model(options.contention),
                   strategy=make_start_strategy(strategy or options.start_strategy), clock=options.clock)


def env_inputs(options: Options | str | Path | None, platform: str | Path | ResourceHierarchy | None,
               workload: str | Path | Workload | None, max_steps: int | None,
               **changes: Any) -> tuple[Options, ResourceHierarchy, Workload]:
    """Options, platform and workload of an environment, from its arguments.

    Args:
        options: :class:`Options`, an options file path, or None (the defaults).
        platform, workload: Paths or built objects overriding the options'; without either
            (here or in the options), the quickstart inputs
            (:data:`~hdeeprm.config.options.QUICKSTART_PLATFORM`, ``QUICKSTART_WORKLOAD``).
        max_steps: Decisions per episode (None = no limit), checked here.
        changes: Option overrides; those that are None are left out.

    Returns:
        The resolved options, the platform and the workload.

    Raises:
        OptionsError: invalid options or inputs, or an argument breaking a rule of
            :mod:`hdeeprm.arguments` (``options`` neither Options nor path, ``max_steps`` or
            ``nb_jobs`` not an integer >= 1, ``seed`` not an integer >= 0, ``queue_sensitivity``
            not a finite number > 0).
    """
    arguments.options_argument(options)
    max_steps = arguments.count("max_steps", max_steps, optional=True)
    for name, minimum in (("nb_jobs", 1), ("seed", 0)):
        if name in changes:
            changes[name] = arguments.count(name, changes[name], minimum, optional=True)
    if changes.get("queue_sensitivity") is not None:
        changes["queue_sensitivity"] = arguments.real("queue_sensitivity", changes["queue_sensitivity"],
                                                      positive=True)
    if options is None:
        options = Options()
    elif not isinstance(options, Options):
        options = load_options(options)
    changes = {name: value for name, value in changes.items() if value is not None}
    if isinstance(platform, (str, Path)):
        changes["platform_file_path"] = resolve_name(platform)   # a registry name's file, or the path
    elif platform is None and not options.platform_file_path:
        changes["platform_file_path"] = str(QUICKSTART_PLATFORM)
    if isinstance(workload, (str, Path)):
        changes["workload_file_path"] = resolve_name(workload)
    elif workload is None and not options.workload_file_path:
        changes["workload_file_path"] = str(QUICKSTART_WORKLOAD)
    options = options.replace(**changes)
    hierarchy = platform if isinstance(platform, ResourceHierarchy) else build_platform(options)
    workload = workload if isinstance(workload, Workload) else build_workload(options, hierarchy)
    return options, hierarchy, workload


class HDeepRMEnv(gymnasium.Env):
    """Workload management on a heterogeneous cluster (HDeepRM, Herrera et al. 2019).

    A trace of jobs is replayed on a platform by the embedded Batsim-compatible
    engine. At every decision point (a batch of same-time events submitted or
    completed a job, the queue is not empty and a core is free) the agent picks
    a *policy pair*: a job-selection policy that orders the queue and a
    core-selection policy that places each job. Queued jobs are started in that
    order until the first that does not fit (``docs/model.rst``, "Decisions").

    ## Action Space

    ``Discrete(n)``: the position in the action set (``options.actions``; by
    default the 36 pairs). Full action index = 6 × job + core:

    =====  ==============  =====  =============
    job    policy          core   policy
    =====  ==============  =====  =============
    0      random          0      random
    1      first           1      high_gflops
    2      shortest        2      high_cores
    3      smallest        3      high_mem
    4      low_mem         4      high_mem_bw
    5      low_mem_bw      5      low_power
    =====  ==============  =====  =============

    36 is the void action (start nothing, wait for the next event) when enabled;
    it is masked (and replaced by the first pair) when waiting would last forever.
    ``info["action_mask"]`` (bool, shape (n,)) tells which actions start at
    least one job now; :meth:`action_masks` returns the same (sb3-contrib's
    MaskablePPO reads it). Pairs with the newer policies (orderings such as
    ``wfp3``, the ``contiguous`` core selection) have full indices from 37 on
    (:mod:`hdeeprm.decision.actions`) and are chosen with ``actions=[...]``
    (e.g. ``"wfp3-high_gflops"``); the default space stays the original one.
    The options' ``start_strategy`` (head-of-line, EASY or conservative
    backfilling) applies to every pair.

    ## Observation Space

    ``Box(0, 1, (size,), float32)``, :mod:`hdeeprm.decision.observation`, read from a
    :class:`~hdeeprm.decision.view.StateView`:

    ======================================  ==========================  ========
    part (type)                             meaning                     range
    ======================================  ==========================  ========
    nb_nodes (normal, small)                free memory / node memory   [0, 1]
    nb_processors (normal, small)           1 − used / offered GB/s     [0, 1]
    3 × nb_cores (normal), per core         speed / G, power / P,       [0, 1]
                                            remaining work fraction
    4 × G (generations), per processor      busy cores, work left,      [0, 1]
                                            free memory, bandwidth
                                            of a processor generation
    20 (all)                                min, p25, median, p75, max  [0, 1]
                                            of requested time (s),
                                            cores, MB, GB/s of pending
                                            jobs / workload p99
    1 (all)                                 queue variation (0.5 = no   [0, 1]
                                            change)
    ======================================  ==========================  ========

    ## Rewards

    After each action, from the state it leads to (:mod:`hdeeprm.decision.reward`):
    ``avg_job_slowdown`` −Σ 1/requested time (1/s) of pending and running jobs;
    ``avg_job_completion`` −(pending + running); ``avg_utilization`` busy cores;
    ``makespan`` Σ current GFLOP/s; ``energy_consumption`` −Σ current W;
    ``edp`` −(P/P_max)·(S_max/S)² (energy-delay product per unit of work).

    ## Starting State

    ``reset`` starts a new simulation of the whole workload at t = 0 (every core
    idle in pstate P3) and runs it to the first decision. The random policies
    are seeded from ``reset(seed=...)`` (else from the environment's generator).

    ## Episode End

    ``terminated``: the workload is drained (no event left). ``truncated``:
    ``max_steps`` decisions were taken (when set). The final ``info`` holds the
    metrics summary (``info["metrics"]``, :func:`hdeeprm.outputs.metrics.summarize`).

    ## Arguments

    Args:
        options: An :class:`~hdeeprm.config.options.Options`, or the path of an options
            file (the ``hdeeprm-launch`` schema), or None. Without a platform and a
            workload (from here or the arguments below), the repository's quickstart
            inputs are used: ``platforms/gaia_mini.json`` (104 cores) and
            ``workloads/lublin_500_100.swf`` (500 jobs).
        platform: HDeepRM platform JSON path or a :class:`ResourceHierarchy`
            (overrides the options').
        workload: SWF / Batsim JSON path or a :class:`Workload` (overrides the options').
        objective: Reward objective (overrides the options'; default avg_job_slowdown).
        observation: ``normal``, ``small`` or ``minimal``.
        actions: Action set: full indices 0…36 or ``"job-core"`` names (``"void"`` for 36).
        void: Append the void action.
        queue_sensitivity: s of the queue variation (> 0).
        contention: Contention model name (``"hdeeprm"`` or ``"none"``, see
            :data:`~hdeeprm.decision.contention.CONTENTION_MODELS`).
        seed: Seed of the workload conversion (SWF) and default episode seed.
        nb_jobs: Jobs taken from the trace.
        max_steps: Decisions after which an episode is truncated (None = never).
        action_mask: Put ``action_mask`` in ``info`` at every step (True). Computing it
            costs about as much as the rest of a step on large queues; agents that do
            not use it may turn it off (:meth:`action_masks` still works).

    Raises:
        OptionsError: invalid or missing options (platform, workload, names), or an argument breaking a
            rule of :mod:`hdeeprm.arguments`, e.g. ``"hdeeprm/HDeepRM-v0: actions[0] must be an integer
            >= 0, got 1.5"``.

    ## Version History

    * v0: first version (HDeepRM 0.3): HDeepRM's observations and rewards, the
      six objectives (``avg_utilization`` and ``edp`` fixed), ``action_mask`` in info.
    """

    metadata = {"render_modes": []}

    @arguments.env_errors
    def __init__(self, options: Options | str | Path | None = None, *,
                 platform: str | Path | ResourceHierarchy | None = None,
                 workload: str | Path | Workload | None = None, objective: str | None = None,
                 observation: str | None = None, actions: Sequence[int | str] | None = None,
                 void: bool | None = None, queue_sensitivity: float | None = None, seed: int | None = None,
                 nb_jobs: int | None = None, max_steps: int | None = None, action_mask: bool = True,
                 contention: str | None = None) -> None:
        options, self.hierarchy, self.workload = env_inputs(
            options, platform, workload, max_steps, objective=objective, observation=observation,
            queue_sensitivity=queue_sensitivity, seed=seed, nb_jobs=nb_jobs, contention=contention,
            actions=_resolve_actions(actions, void))
        self.options = options
        self.max_steps = max_steps
        self.info_action_mask = arguments.flag("action_mask", action_mask)
        self.observer = make_observer(options.observation, self.hierarchy, self.workload,
                                      options.queue_sensitivity)
        self.reward_fn = make_reward(options.objective)
        self.action_space = spaces.Discrete(len(options.actions))
        self.observation_space = spaces.Box(0.0, 1.0, shape=(self.observer.size,), dtype=np.float32)
        self.episode: Episode | None = None
        self.steps = 0
        self._decision = False

    # ---------------------------------------------------------------- gym API
    @arguments.env_errors
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a new simulation and run it to the first decision.

        Args:
            seed: Seeds the environment's generator, which seeds the random policies.
            options: None or ``{}``: every episode replays the whole workload, so there is nothing to choose.

        Returns:
            ``(observation, info)``: float32 (size,), and a dict with ``action_mask``,
            ``time`` (s), ``queue`` (pending jobs) and ``jobs_ended``.

        Raises:
            OptionsError: non-empty ``options`` (``"hdeeprm/HDeepRM-v0: this environment accepts no reset
                options, got {...}"``).
        """
        arguments.reset_options(options)
        super().reset(seed=seed)
        self.episode = env_episode(self.options, self.hierarchy, self.workload, self.np_random)
        self.steps = 0
        self._decision = self.episode.advance()
        return self.observer(self.episode.view), self._info()

    def step(self, action):
        """Apply a policy pair and run the simulation to the next decision.

        Args:
            action: Position in the action set, int in [0, n).

        Returns:
            ``(observation, reward, terminated, truncated, info)``; see the class docstring.

        Raises:
            gymnasium.error.ResetNeeded: ``step`` before ``reset``.
            AgentError: ``action`` is not an integer in [0, n).
        """
        ep = started(self.episode)
        if not self._decision:  # the episode had no decision left (e.g. every job rejected)
            return self.observer(ep.view), 0.0, True, False, self._info()
        reward = apply_action(ep.manager, ep.view, action, self.reward_fn)
        self.steps += 1
        self._decision = ep.advance()
        terminated = not self._decision
        truncated = steps_truncated(terminated, self.steps, self.max_steps)
        return self.observer(ep.view), reward, terminated, truncated, self._info()

    def _info(self) -> dict[str, Any]:
        ep = self.episode
        info = {"time": ep.engine.now, "queue": len(ep.manager.queue), "jobs_ended": ep.jobs_ended}
        if self.info_action_mask:
            info["action_mask"] = ep.manager.action_mask()
        if not self._decision:
            info["metrics"] = ep.metrics()
        return info

    def action_masks(self) -> np.ndarray:
        """Which actions start at least one job now, bool (n,) (sb3-contrib MaskablePPO)."""
        return self.episode.manager.action_mask()
