"""GPU provisioning under a budget: the agent scales the active GPU nodes; jobs must not wait past an SLA.

The autoscaling problem of the OpenEnv-style GPU provisioning environments, on HDeepRM's timed GPU
replay (:class:`~hdeeprm.run.gpu_replay.GpuReplay`; the jobs are placed by the run's placement
policy, ``best_fit`` by default, on the active nodes only)::

    import gymnasium, hdeeprm
    env = gymnasium.make("hdeeprm/GpuProvisioning-v1", task="medium")

``hdeeprm/GpuProvisioning-v1`` (:class:`GpuProvisioningEnvV1`) credits spending below the budget in its
grader, sees the clock and has a reward that is its grader spread over the steps; ``-v0``
(:class:`GpuProvisioningEnv`) keeps the first contract. :data:`PROVISIONING_HEURISTICS` are the classic
policies to compare agents with: always hold, always scale down, and the reactive autoscaler.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from hdeeprm import arguments
from hdeeprm.decision.observation import clip_unit
from hdeeprm.env.gpu_placement import gpu_env_inputs
from hdeeprm.env.gpu_scenarios import chosen_scenario, episode_inputs
from hdeeprm.platform.openb import MILLI
from hdeeprm.registry import Registry
from hdeeprm.run.loop import as_action
from hdeeprm.run.gpu_replay import GpuReplay, GpuRunConfig
from hdeeprm.env.steps import started, truncated as steps_truncated

#: Tasks -> scenario of :data:`~hdeeprm.env.gpu_scenarios.GPU_SCENARIOS` (load factor and cluster size grow).
PROVISIONING_TASKS = {"easy": "easy-gen", "medium": "medium-gen", "hard": "hard-gen"}
#: Price of one GPU-hour, USD (AWS EC2 p3.2xlarge on-demand, one V100 16 GB, us-east-1, aws.amazon.com/ec2/pricing).
DEFAULT_GPU_HOUR_PRICE = 3.06
#: Seconds between two scaling decisions.
DEFAULT_STEP_SECONDS = 900.0
#: Queueing delay the SLA allows, s.
DEFAULT_SLA_SECONDS = 1800.0
#: Weight of the cost in the reward (the SLA term has 1 - alpha).
DEFAULT_COST_WEIGHT = 0.5
#: Budget, as the share of the cluster's GPUs that may be paid for on average.
DEFAULT_BUDGET_SHARE = 0.5
#: Actions: switch one node off, hold, switch one node on.
ACTIONS = ("scale_down", "hold", "scale_up")
#: Observation, in order.
OBSERVATION = ("active_gpus", "busy_gpus", "queued_demand", "log_queue", "oldest_wait", "late_jobs", "spent",
               "arrivals")
#: Observation of v1, in order: v0's, then the hour of the day and the time of the week as angles.
OBSERVATION_V1 = OBSERVATION + ("blocked_jobs", "day_sin", "day_cos", "week_sin", "week_cos")


def grade(waits: np.ndarray, spent: float, budget: float, sla: float, budget_credit: bool = False) -> float:
    """Deterministic score in [0, 1] of a finished provisioning episode.

    ``score = (sla_score + cost_score) / 2``: ``sla_score`` the share of jobs whose queueing delay stayed
    within ``sla`` (a job never started counts as late). ``cost_score`` (HDeepRM's definition):

    - v0 (``budget_credit=False``): ``clip(2 - spent / budget, 0, 1)``, 1 anywhere within the budget, 0 at
      twice it: spending less than the budget earns nothing;
    - v1 (``budget_credit=True``): ``clip(1 - spent / (2 budget), 0, 1)``, linear in the money spent: 1 for
      spending nothing, 1/2 at the budget, 0 at twice it; every dollar saved counts the same.

    Args:
        waits: Queueing delay of every job in seconds, float64 (J,), NaN or inf for a job never started.
        spent, budget: Money spent and the episode's budget, USD.
        sla: Allowed queueing delay, s.
        budget_credit: The v1 cost score.

    Returns:
        The score.
    """
    sla_score = float(np.mean(np.nan_to_num(waits, nan=np.inf) <= sla)) if len(waits) else 1.0
    if budget <= 0:
        cost_score = 0.0
    elif budget_credit:
        cost_score = float(np.clip(1.0 - spent / (2.0 * budget), 0.0, 1.0))
    else:
        cost_score = float(np.clip(2.0 - spent / budget, 0.0, 1.0))
    return 0.5 * (sla_score + cost_score)


class GpuProvisioningEnv(gymnasium.Env):
    """Scale the number of active GPU nodes every ``step_seconds`` under a budget and a queueing SLA.

    ## Action Space

    ``Discrete(3)``: :data:`ACTIONS`. ``scale_up`` switches on the first inactive GPU node (in node
    order); ``scale_down`` stops placing on the active GPU node with the fewest allocated GPUs (the last
    one on ties); a node stays paid for while it still runs jobs. At least one GPU node stays active;
    CPU-only nodes are always on and cost nothing.

    ## Observation Space

    ``Box(0, 1, (8,), float32)`` (:data:`OBSERVATION`): paid GPUs and allocated GPUs over the cluster's,
    queued GPU demand over the cluster's GPUs, ``log1p`` queue length over ``log1p(1000)``, the oldest
    queued job's wait over twice the SLA, the share of queued jobs past the SLA, money spent over the
    episode budget so far, and the step's arrivals over 100. Clipped to [0, 1].

    ## Rewards

    ``r = -alpha C / B - (1 - alpha) L``: ``C`` the money paid during the step (paid GPUs x step hours x
    ``gpu_hour_price``), ``B`` the budget of one step (``budget_share`` x GPUs x step hours x price), ``L``
    the mean number of queued jobs past the SLA during the step (job-seconds beyond ``sla_seconds``
    over the step length). ``alpha`` = ``cost_weight``.

    ## Episode End

    ``terminated``: every job completed or was rejected (jobs that fit no active node keep the episode
    going until the agent scales up); ``info["score"]`` is then :func:`grade` (a
    deterministic score in [0, 1]) and ``info["metrics"]`` the replay's summary. ``truncated``:
    ``max_steps`` decisions (the score counts the jobs not yet started as late).

    Args:
        platform, workload, nb_jobs, first_job: Fixed inputs (as :class:`~hdeeprm.env.gpu_placement.GpuPlacementEnv`).
        task: ``easy``, ``medium`` or ``hard`` (:data:`PROVISIONING_TASKS`), or scenario names or a split.
        curriculum: Easy -> hard curriculum over the scenarios.
        step_seconds, sla_seconds, gpu_hour_price, budget_share, cost_weight: See above.
        initial_share: Share of the GPU nodes active at the start [0.5].
        placement: Placement policy of the jobs.
        max_steps: Steps after which an episode is truncated.

    Raises:
        OptionsError: Inconsistent inputs, an unknown task or non-positive parameters, named after the
            environment (:func:`~hdeeprm.arguments.env_errors`).

    ## Version History

    * v0: first version (HDeepRM 0.3).
    """

    metadata = {"render_modes": []}
    #: The grader's cost score (:func:`grade`): False in v0.
    budget_credit = False

    @arguments.env_errors
    def __init__(self, platform=None, workload=None, *, nb_jobs: int | None = None, first_job: int = 0,
                 task: str | list[str] | None = "easy", curriculum: bool = False,
                 step_seconds: float = DEFAULT_STEP_SECONDS, sla_seconds: float = DEFAULT_SLA_SECONDS,
                 gpu_hour_price: float = DEFAULT_GPU_HOUR_PRICE, budget_share: float = DEFAULT_BUDGET_SHARE,
                 cost_weight: float = DEFAULT_COST_WEIGHT, initial_share: float = 0.5, placement: str = "best_fit",
                 max_steps: int | None = None) -> None:
        step_seconds, sla_seconds, gpu_hour_price, budget_share = (
            arguments.real(name, value, positive=True) for name, value in (
                ("step_seconds", step_seconds), ("sla_seconds", sla_seconds), ("gpu_hour_price", gpu_hour_price),
                ("budget_share", budget_share)))
        cost_weight = arguments.real("cost_weight", cost_weight, minimum=0, maximum=1)
        initial_share = arguments.real("initial_share", initial_share, minimum=0, maximum=1)
        curriculum = arguments.flag("curriculum", curriculum)
        max_steps = arguments.count("max_steps", max_steps, optional=True)
        scenario = None
        if platform is None:
            scenario = PROVISIONING_TASKS.get(task, task) if isinstance(task, str) else task
        self.cluster, self.jobs, self.sampler = gpu_env_inputs(platform, workload, nb_jobs, first_job, scenario)
        if self.sampler is not None:
            self.sampler.curriculum = curriculum
        self.step_seconds, self.sla = float(step_seconds), float(sla_seconds)
        self.price, self.budget_share, self.alpha = float(gpu_hour_price), float(budget_share), float(cost_weight)
        self.initial_share = float(initial_share)
        self.config = GpuRunConfig(placement=placement)
        self.max_steps = max_steps
        self.action_space = spaces.Discrete(len(ACTIONS))
        self.observation_space = spaces.Box(0.0, 1.0, (len(OBSERVATION),), np.float32)
        self.replay: GpuReplay | None = None
        self.scenario = None

    @arguments.env_errors
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a replay with ``initial_share`` of the GPU nodes active and run it to the first step's end.

        Args:
            seed: Seeds the environment's generator (the scenario draws).
            options: ``{"scenario": name}`` replays that scenario of the environment's pool (when it samples
                scenarios; with a fixed platform and workload it accepts no key), without a draw
                (:func:`~hdeeprm.env.gpu_scenarios.chosen_scenario`). None or ``{}``: a draw, as without.

        Returns:
            ``(observation, info)``; ``info`` has ``time``, ``active_gpus``, ``paid_gpus``, ``spent``, ``scenario``.

        Raises:
            OptionsError: Another key, or a scenario outside the pool.
        """
        chosen = chosen_scenario(self.sampler, options)
        super().reset(seed=seed)
        self.scenario, cluster, jobs = episode_inputs(self.sampler, self.np_random, self.cluster, self.jobs,
                                                      chosen)
        self.replay = GpuReplay(cluster, jobs, self.config)
        self.gpu_nodes = np.flatnonzero(cluster.gpu_count > 0)
        active = np.ones(cluster.nb_nodes, dtype=bool)
        on = max(1, int(round(self.initial_share * len(self.gpu_nodes))))
        active[self.gpu_nodes[on:]] = False
        self.replay.manager.state.active = active
        self.total_gpus = max(cluster.nb_gpus, 1)
        self.step_budget = self.budget_share * self.total_gpus * self.step_seconds / 3600.0 * self.price
        self.spent = self.budget = 0.0
        self.steps = 0
        self.done = False
        self._late_area = 0.0
        self._arrivals = 0
        self.replay.step()
        self.t_next = self.replay.now + self.step_seconds
        return self._observe(), self._info()

    def _paid_gpus(self) -> int:
        """GPUs paid for now: those of active nodes and of inactive nodes still running jobs."""
        state = self.replay.manager.state
        used = state.total_left < self.replay.cluster.gpu_count * 1000
        return int(self.replay.cluster.gpu_count[state.active | used].sum())

    def step(self, action):
        """Scale, then run the replay for one step of ``step_seconds``.

        Returns:
            ``(observation, reward, terminated, truncated, info)`` (see the class docstring).

        Raises:
            gymnasium.error.ResetNeeded: ``step`` before ``reset``.
            AgentError: ``action`` is not 0, 1 or 2.
        """
        started(self.replay)
        action = as_action(action, len(ACTIONS))
        if self.done:
            return self._observe(), 0.0, True, False, self._info()
        replay, state = self.replay, self.replay.manager.state
        on = state.active[self.gpu_nodes]
        if ACTIONS[action] == "scale_up" and not on.all():
            state.active[self.gpu_nodes[np.argmin(on)]] = True
        elif ACTIONS[action] == "scale_down" and on.sum() > 1:
            candidates = self.gpu_nodes[on]
            allocated = replay.cluster.gpu_count[candidates] * 1000 - state.total_left[candidates]
            state.active[candidates[::-1][np.argmin(allocated[::-1])]] = False
        if ACTIONS[action] == "scale_up":   # new capacity takes waiting jobs at once
            replay.decide()
        cost = late = 0.0
        crossed = 0
        end = self.t_next
        self._arrivals = 0
        while True:
            t = min(replay.next_time, end)
            cost += self._paid_gpus() * (t - replay.now) / 3600.0 * self.price
            late += self._late_seconds(replay.now, t)
            crossed += self._crossing(replay.now, t)
            if t >= end:
                replay.wait_until(end)
                break
            before = replay.next_job
            replay.step()
            self._arrivals += replay.next_job - before
            if not replay.events_left and not replay.manager.queue:
                break
        self.spent += cost
        self.budget += self.step_budget
        self.t_next = end + self.step_seconds
        self.steps += 1
        self.done = not replay.events_left and not replay.manager.queue
        reward = self._reward(cost, late, crossed)
        truncated = steps_truncated(self.done, self.steps, self.max_steps)
        return self._observe(), float(reward), self.done, truncated, self._info(final=self.done or truncated)

    def _reward(self, cost: float, late: float, crossed: int) -> float:
        """Reward of a step: money paid (USD), job-seconds past the SLA, jobs that crossed it (v0 ignores them)."""
        return -self.alpha * cost / self.step_budget - (1 - self.alpha) * late / self.step_seconds

    def _crossing(self, t0: float, t1: float) -> int:
        """Queued jobs whose wait passes the SLA in [t0, t1) (the queue is the same all along; each job once)."""
        queue = self.replay.manager.queue
        if not queue or t1 <= t0:
            return 0
        due = self.replay.jobs.submit[queue] + self.sla
        return int(((due >= t0) & (due < t1)).sum())

    def _late_seconds(self, t0: float, t1: float) -> float:
        """Job-seconds the queued jobs spend beyond the SLA between ``t0`` and ``t1``."""
        queue = self.replay.manager.queue
        if not queue or t1 <= t0:
            return 0.0
        due = self.replay.jobs.submit[queue] + self.sla
        return float(np.clip(t1 - np.maximum(due, t0), 0.0, None).sum())

    def score(self) -> float:
        """:func:`grade` of the episode so far (jobs not started count as late)."""
        replay = self.replay
        waits = (replay.start_time - replay.jobs.submit)[~replay.rejected]
        return grade(waits, self.spent, self.budget, self.sla, self.budget_credit)

    def _observe(self) -> np.ndarray:
        replay = self.replay
        state = replay.manager.state
        queue = replay.manager.queue
        waits = replay.now - replay.jobs.submit[queue] if queue else np.zeros(0)
        gpus = replay.cluster.gpu_count
        obs = np.array([
            self._paid_gpus() / self.total_gpus,
            float((gpus * 1000 - state.total_left).sum()) / 1000 / self.total_gpus,
            float(replay.jobs.gpu_request[queue].sum()) / 1000 / self.total_gpus if queue else 0.0,
            np.log1p(len(queue)) / np.log1p(1000),
            float(waits.max()) / (2 * self.sla) if len(waits) else 0.0,
            float((waits > self.sla).mean()) if len(waits) else 0.0,
            self.spent / self.budget if self.budget else 0.0,
            self._arrivals / 100.0], dtype=np.float32)
        return clip_unit(obs, obs)

    def _info(self, final: bool = False) -> dict[str, Any]:
        state = self.replay.manager.state
        info = {"time": self.replay.now, "active_gpus": int(self.replay.cluster.gpu_count[state.active].sum()),
                "paid_gpus": self._paid_gpus(), "spent": self.spent, "budget": self.budget,
                "scenario": self.scenario.name if self.scenario else ""}
        if final:
            info["score"] = self.score()
        if self.done:
            info["metrics"] = self.replay.metrics()
        return info


class GpuProvisioningEnvV1(GpuProvisioningEnv):
    """``hdeeprm/GpuProvisioning-v1``: v0's actions and dynamics, a grader crediting spending below the budget.

    Arguments, actions and episode end as :class:`GpuProvisioningEnv`; ``cost_weight`` is unused.

    ## Observation Space

    ``Box(0, 1, (13,), float32)`` (:data:`OBSERVATION_V1`): v0's 8 values, the share of queued jobs that fit
    no active node now (the demand only more nodes or completions can serve), then ``(1 + sin)/2`` and
    ``(1 + cos)/2`` of the angle of the hour of the day and of the time of the week, from the workload's
    clock (seconds since a Monday 00:00 at submission time 0: Philly's arrivals follow daily and weekly
    cycles, Jeon et al., USENIX ATC 2019, and so does the GPU generator fitted on them; openb lists have
    no calendar, their clock starts at 0).

    ## Rewards

    The grader spread over the steps: ``r = -C / (4 b T) - l / (2 J)``, ``C`` the money paid during the
    step, ``b`` the budget of one step, ``l`` the jobs whose queueing delay passed ``sla_seconds`` during
    the step (each job once), ``J`` the jobs that can run (not rejected) and ``T = max(1, span /
    step_seconds)`` the expected number of steps (``span`` from the first submission to the latest
    ``submission + duration``, the shortest the episode can last on reference GPUs). An
    episode of ``T`` steps sums to ``score - 1``, ``score`` the grader (:func:`grade` with
    ``budget_credit=True``): the return and the evaluation metric agree, up to the jobs counted late at
    truncation and the episode's real length, whatever the scenario's size.

    ## Grader

    ``info["score"]``: :func:`grade` with ``budget_credit=True`` (see there): half the share of jobs within
    the SLA, half ``1 - spent / (2 budget)``.

    ## Version History

    * v1: the grader credits spending below the budget linearly; the blocked jobs and the clock are
      observed; the reward is the grader (HDeepRM 0.3).
    """

    budget_credit = True

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.observation_space = spaces.Box(0.0, 1.0, (len(OBSERVATION_V1),), np.float32)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """As :meth:`GpuProvisioningEnv.reset`, with the v1 observation."""
        self._steps_expected = self._runnable = 1.0
        obs, info = super().reset(seed=seed, options=options)
        jobs = self.replay.jobs
        self._runnable = float(max(1, sum(reason is None for reason in self.replay.manager.reasons)))
        span = float((jobs.submit + jobs.duration).max() - jobs.submit[0]) if len(jobs) else 0.0
        self._steps_expected = max(1.0, span / self.step_seconds)
        return obs, info

    def _reward(self, cost: float, late: float, crossed: int) -> float:
        return -cost / (4.0 * self.step_budget * self._steps_expected) - crossed / (2.0 * self._runnable)

    def _observe(self) -> np.ndarray:
        t = float(self.replay.jobs.clock) + self.replay.now
        day, week = 2 * np.pi * t / 86400.0, 2 * np.pi * t / (7 * 86400.0)
        clock = (1.0 + np.array([np.sin(day), np.cos(day), np.sin(week), np.cos(week)])) / 2.0
        manager = self.replay.manager
        queue = manager.queue
        blocked = manager.first_part_fits(queue).count(False) / len(queue) if queue else 0.0
        return clip_unit(np.concatenate([super()._observe(), [blocked], clock]))


def hold_policy(env: GpuProvisioningEnv) -> int:
    """Always hold: the initial active nodes all episode long (the provisioning envs' ``hold`` action)."""
    return ACTIONS.index("hold")


def minimal_policy(env: GpuProvisioningEnv) -> int:
    """Always scale down: one GPU node left on (nodes still running jobs stay paid for until they finish)."""
    return ACTIONS.index("scale_down")


def reactive_autoscaler(env: GpuProvisioningEnv) -> int:
    """Reactive autoscaling: scale up while jobs wait, down when an active GPU node is idle and none waits.

    The rule of Kubernetes' Cluster Autoscaler (``kubernetes/autoscaler``, cluster-autoscaler FAQ: a
    scale-up when pods are pending, a scale-down of unneeded nodes), with "unneeded" taken as "no GPU
    allocated" and one node per step, the provisioning envs' action.

    Args:
        env: A provisioning environment after ``reset``.

    Returns:
        An action index of :data:`ACTIONS`.
    """
    replay = env.replay
    state = replay.manager.state
    on = state.active[env.gpu_nodes]
    if replay.manager.queue:
        return ACTIONS.index("scale_up" if not on.all() else "hold")
    nodes = env.gpu_nodes[on]
    idle = state.total_left[nodes] == replay.cluster.gpu_count[nodes] * MILLI
    return ACTIONS.index("scale_down" if idle.any() and len(nodes) > 1 else "hold")


#: Classic provisioning policies (env -> action), the baselines of learned agents.
PROVISIONING_HEURISTICS: Registry[Callable[[GpuProvisioningEnv], int]] = Registry("provisioning heuristic")
PROVISIONING_HEURISTICS.register("hold", hold_policy)
PROVISIONING_HEURISTICS.register("minimal", minimal_policy)
PROVISIONING_HEURISTICS.register("reactive", reactive_autoscaler)
