"""Selective GPU placement: the agent picks a node for the job at the head of the queue, or skips it.

The environment of selective scheduling against GPU fragmentation (a pod may be held back when every
placement would fragment the cluster) on HDeepRM's timed GPU replay
(:class:`~hdeeprm.run.gpu_replay.GpuReplay`, the engine of ``hdeeprm-launch``'s GPU runs)::

    import gymnasium, hdeeprm
    env = gymnasium.make("hdeeprm/GpuPlacement-v0")                          # the "train" scenarios
    env = gymnasium.make("hdeeprm/GpuPlacement-v0", platform="platforms/dgx_a100.json",
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
from hdeeprm.env.gpu_scenarios import GpuScenario, ScenarioSampler, chosen_scenario, episode_inputs, scenarios
from hdeeprm.errors import OptionsError
from hdeeprm.platform.gpu_platform import load_gpu_cluster
from hdeeprm.platform.openb import MILLI, GpuCluster
from hdeeprm.reading import MAX_GPUS_PER_NODE
from hdeeprm.run.loop import as_action
from hdeeprm.run.gpu_replay import GpuReplay, GpuRunConfig
from hdeeprm.workload.datasets import resolve_path
from hdeeprm.workload.gpu_jobs import GpuJobs, read_gpu_workload
from hdeeprm.env.steps import started, truncated as steps_truncated

#: Per-GPU free-share columns of a node's features (the 8 GPUs of the largest openb and DGX nodes).
DEFAULT_GPU_SLOTS = 8
#: Most nodes of the node axis (``max_nodes``): 54 times the openb cluster's 1,213; an observation of at most
#: 65,536 x 72 float32 values (18 MiB).
MAX_NODES = 65_536
#: Per-node features after the per-GPU free shares, in column order.
NODE_FEATURES = ("gpus", "free_gpu_share", "free_cpu", "free_memory", "gpu_type", "speed", "fragmentation", "fits")
#: Job features, in column order.
JOB_FEATURES = ("num_gpu", "gpu_milli", "cpu", "memory", "log_duration", "log_waiting", "log_queue",
                "allocation_rate", "fragmentation_ratio")
#: Weight of the fragmentation growth in the reward (beta).
DEFAULT_FRAG_WEIGHT = 1.0
#: Weight of the queued GPU demand in the reward (omega).
DEFAULT_WAIT_WEIGHT = 1.0
#: Time unit of the waiting term of the reward, s (one hour: the penalty is in GPU-hours over the capacity).
WAIT_UNIT = 3600.0


def _path(path: str | Path) -> str:
    return resolve_path(path)   # a registry name's file, or the path ($HDEEPRM_SHARED, ~ expanded)


def gpu_env_inputs(platform: str | Path | GpuCluster | None, workload: str | Path | GpuJobs | None,
                   nb_jobs: int | None, first_job: int, scenario: str | list[str] | None
                   ) -> tuple[GpuCluster | None, GpuJobs | None, ScenarioSampler | None]:
    """Fixed inputs (platform and workload given) or a scenario sampler (see :mod:`hdeeprm.env.gpu_scenarios`).

    Raises:
        OptionsError: Only one of platform and workload, or both with a scenario; ``nb_jobs`` not an
            integer >= 1 or None, ``first_job`` not an integer >= 0.
    """
    nb_jobs = arguments.count("nb_jobs", nb_jobs, optional=True)
    first_job = arguments.count("first_job", first_job, 0)
    if (platform is None) != (workload is None):
        raise OptionsError("give both platform and workload, or neither (then scenarios are sampled)")
    if platform is None:
        return None, None, ScenarioSampler(scenarios(scenario or "train"))
    if scenario is not None:
        raise OptionsError("give either scenario or platform and workload, not both")
    cluster = platform if isinstance(platform, GpuCluster) else load_gpu_cluster(_path(platform))
    jobs = workload if isinstance(workload, GpuJobs) else read_gpu_workload(_path(workload))
    return cluster, jobs.window(first_job, nb_jobs), None


class GpuPlacementEnv(gymnasium.Env):
    """Place the head job of the GPU queue on a node, or skip it (selective scheduling).

    A decision is taken for each queued job, in the queue order (``ordering``), that fits at least one
    node now; jobs that fit nowhere wait without a decision. The job goes on the chosen node (a shared
    GPU: the fitting GPU with the least free share; whole GPUs: the first free ones). After every
    queued job was offered once at an instant, the replay runs to the next submission or completion.

    ## Action Space

    ``Discrete(N + 1)``: a node, or ``N`` = **skip** (the job goes back to the queue and is offered again
    at the next instant with an event). Nodes where the job does not fit are masked
    (``info["action_mask"]``, bool (N + 1,), :meth:`action_masks` for sb3-contrib's MaskablePPO; skip
    is always allowed); a masked node counts as a skip. Skipping the last job offered at an instant
    when nothing runs and no submission is left would leave the queue waiting forever: that skip is
    **overridden**, the job placed by the run's placement policy (``placement``, default ``best_fit``;
    every part of a spread job), counted in ``info["skips_overridden"]``; so is a node choice whose
    other parts of a spread job fit nowhere at that moment. No job is dropped: one whose parts cannot fit
    the empty cluster together is rejected at submission (:class:`~hdeeprm.decision.gpu_manager.GpuManager`).

    ## Observation Space

    ``Dict(nodes=Box(0, 1, (N, S + 8)), job=Box(0, 1, (9,)))``, float32. Per node: the free share of
    its first ``S`` GPUs (``gpu_slots``), largest first, zero padded; then :data:`NODE_FEATURES`: GPUs /
    ``S``, free GPU share over the node's GPUs, free CPU and memory over the node's, GPU model index
    (``(m + 1) / (M + 1)``, 0 without GPU), speed over the reference type / 4, the node's ATC'23
    fragmentation over its GPU share, and 1.0 when the job fits. Job (:data:`JOB_FEATURES`): GPUs /
    ``S``, share per GPU, CPU and memory over the largest node's, ``log1p`` of its duration, waiting time
    and queue length over ``log1p`` of 30 days, 30 days and 10,000 jobs, and the cluster's GPU allocation
    rate and fragmentation ratio. Values are clipped to [0, 1]. A network that treats nodes as a set
    (:mod:`examples.agents.gpu_attention`) works on any cluster size.

    ## Rewards

    ``r = dA - beta dF - omega Q``: ``dA`` the GPU share the action placed over the cluster's (the GPU
    allocation rate gained), ``dF`` the growth of the ATC'23 fragmented GPU share (Weng et al., ATC'23,
    :mod:`hdeeprm.decision.fragmentation`) caused by the placement, over the cluster's GPU share, and ``Q``
    the integral, from this decision to the next, of the queued GPU demand over the capacity, in hours
    (:data:`WAIT_UNIT`). ``beta`` = ``frag_weight`` [1], ``omega`` = ``wait_weight`` [1]. A skip gains
    no allocation and pays the waiting of the jobs it holds back.

    ## Episode End

    ``terminated``: every job completed or was rejected; ``info["metrics"]`` then holds mean job
    completion time, mean queueing delay, time-averaged GPU allocation rate and fragmentation ratio.
    ``truncated``: ``max_steps`` decisions.

    Args:
        platform: A GpuCluster, an HDeepRM platform JSON or an openb node list: a path (``$HDEEPRM_SHARED``
            expands) or a registry name (``openb:node_list_gpu_node``, :mod:`hdeeprm.workload.datasets`).
        workload: GpuJobs, a Philly table or an openb pod list; with ``platform``, or neither: ``scenario``.
        nb_jobs: Jobs of the window (None: all).
        first_job: First job of the window.
        scenario: Scenario names or split drawn per episode (default ``"train"``,
            :data:`~hdeeprm.env.gpu_scenarios.GPU_SCENARIOS`).
        curriculum: Easy -> hard curriculum over the scenarios.
        curriculum_episodes: Episodes until every difficulty is open.
        max_nodes: Pad the node axis to this many nodes (masked) so scenarios of different sizes share
            one space, at most :data:`MAX_NODES` (None: the platform's node count, or the largest scenario's).
        gpu_slots: ``S``, per-GPU columns, in [1, :data:`~hdeeprm.reading.MAX_GPUS_PER_NODE`] (64, the GPUs
            a node can have).
        placement: Policy of overridden skips (and of the other parts of spread jobs).
        ordering: Queue order.
        frag_weight, wait_weight: ``beta`` and ``omega`` of the reward.
        max_steps: Decisions after which an episode is truncated.

    Counts are Python or NumPy integers (never ``bool``, floats or strings), switches ``bool``
    (:mod:`hdeeprm.arguments`).

    Raises:
        OptionsError: Inconsistent inputs or weights, unknown policy names, named after the environment
            (``"hdeeprm/GpuPlacement-v0: gpu_slots must be an integer in [1, 64] (GPUs of one node), got 65"``).

    ## Version History

    * v0: first version (HDeepRM 0.3).
    """

    metadata = {"render_modes": []}

    @arguments.env_errors
    def __init__(self, platform: str | Path | GpuCluster | None = None, workload: str | Path | GpuJobs | None = None,
                 *, nb_jobs: int | None = None, first_job: int = 0, scenario: str | list[str] | None = None,
                 curriculum: bool = False, curriculum_episodes: int = 30, max_nodes: int | None = None,
                 gpu_slots: int = DEFAULT_GPU_SLOTS, placement: str = "best_fit", ordering: str = DEFAULT_GPU_ORDERING,
                 frag_weight: float = DEFAULT_FRAG_WEIGHT, wait_weight: float = DEFAULT_WAIT_WEIGHT,
                 max_steps: int | None = None) -> None:
        frag_weight = arguments.real("frag_weight", frag_weight, minimum=0)
        wait_weight = arguments.real("wait_weight", wait_weight, minimum=0)
        curriculum = arguments.flag("curriculum", curriculum)
        curriculum_episodes = arguments.count("curriculum_episodes", curriculum_episodes)
        max_nodes = arguments.count("max_nodes", max_nodes, optional=True, maximum=MAX_NODES, what="nodes")
        gpu_slots = arguments.count("gpu_slots", gpu_slots, maximum=MAX_GPUS_PER_NODE, what="GPUs of one node")
        max_steps = arguments.count("max_steps", max_steps, optional=True)
        self.cluster, self.jobs, self.sampler = gpu_env_inputs(platform, workload, nb_jobs, first_job, scenario)
        if self.sampler is not None:
            self.sampler.curriculum, self.sampler.curriculum_episodes = curriculum, curriculum_episodes
            sizes = [s.cluster().nb_nodes for s in self.sampler.pool]
            max_nodes = max_nodes or max(sizes)
            if max_nodes < max(sizes):
                raise OptionsError(f"max_nodes {max_nodes} is below the largest scenario's {max(sizes)} nodes")
        self.nb_nodes = max_nodes or self.cluster.nb_nodes
        if self.cluster is not None and self.nb_nodes < self.cluster.nb_nodes:
            raise OptionsError(f"max_nodes {self.nb_nodes} is below the platform's {self.cluster.nb_nodes} nodes")
        self.config = GpuRunConfig(placement=placement, ordering=ordering)
        self.gpu_slots = gpu_slots
        self.frag_weight, self.wait_weight = float(frag_weight), float(wait_weight)
        self.max_steps = max_steps
        self.skip = self.nb_nodes
        self.action_space = spaces.Discrete(self.nb_nodes + 1)
        self.observation_space = spaces.Dict({
            "nodes": spaces.Box(0.0, 1.0, (self.nb_nodes, gpu_slots + len(NODE_FEATURES)), np.float32),
            "job": spaces.Box(0.0, 1.0, (len(JOB_FEATURES),), np.float32)})
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
            ``(observation, info)`` (see the class docstring); ``info`` has ``action_mask``, ``time`` (s),
            ``job`` (index of the job to place, -1 when none), ``queue``, ``scenario``, ``skips_overridden``.

        Raises:
            OptionsError: Another key, or a scenario outside the pool.
        """
        chosen = chosen_scenario(self.sampler, options)
        super().reset(seed=seed)
        self.scenario, cluster, jobs = episode_inputs(self.sampler, self.np_random, self.cluster, self.jobs,
                                                      chosen)
        self.replay = GpuReplay(cluster, jobs, self.config)
        self._static(cluster, jobs)
        self.steps = self.skips_overridden = 0
        self.offered: set[int] = set()
        self.head = -1
        self.done = False
        self._wait_area = 0.0
        self._next_decision(advance=True)
        return self._observe(), self._info()

    def step(self, action):
        """Place the offered job on node ``action``, or skip it (``action == N`` or a masked node).

        Returns:
            ``(observation, reward, terminated, truncated, info)`` (see the class docstring).

        Raises:
            gymnasium.error.ResetNeeded: ``step`` before ``reset``.
            AgentError: ``action`` is not an integer in [0, N].
        """
        started(self.replay)
        action = as_action(action, self.nb_nodes + 1)
        if self.done:
            return self._observe(), 0.0, True, False, self._info()
        replay, job = self.replay, self.head
        gain = frag_gain = 0.0
        node = action if action < self.skip and self._mask[action] else None
        stuck = not replay.running and replay.next_job >= len(replay.jobs) and all(
            j == job or j in self.offered for j in replay.manager.queue)
        before = replay.fragmented()
        placed = replay.manager.place_on(job, node) if node is not None else None
        if placed is None and stuck:   # a skip (or a spread job's parts not fitting) that would wait forever
            placed = replay.manager.place(job)
            self.skips_overridden += 1
        if placed is not None:
            replay.apply([(job, placed)])
            gain = float(self._share[job]) / self._capacity
            frag_gain = (replay.fragmented() - before) / self._capacity
        self.offered.add(job)
        self._wait_area = 0.0
        self._next_decision(advance=False)
        if self.done and replay.manager.queue:   # cannot happen: an overridden job fits the empty cluster
            raise AssertionError(f"GPU placement episode ended with jobs queued: {replay.manager.queue[:5]}")
        reward = gain - self.frag_weight * frag_gain - self.wait_weight * self._wait_area
        self.steps += 1
        truncated = steps_truncated(self.done, self.steps, self.max_steps)
        return self._observe(), float(reward), self.done, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        """Nodes the offered job fits, then skip (always True), bool (N + 1,) (sb3-contrib MaskablePPO)."""
        return self._mask.copy()

    # --------------------------------------------------------------- internals
    def _static(self, cluster: GpuCluster, jobs: GpuJobs) -> None:
        """Per-run constants of the observation and reward."""
        n = cluster.nb_nodes
        self._capacity = float(max(cluster.nb_gpus, 1) * MILLI)
        self._share = jobs.gpu_request.astype(np.float64)
        self._mask = np.zeros(self.nb_nodes + 1, dtype=bool)
        gpus = np.maximum(cluster.gpu_count, 1).astype(np.float64)
        self._node_gpus = gpus
        self._cpu_cap = np.maximum(cluster.cpu_milli, 1).astype(np.float64)
        self._mem_cap = np.maximum(cluster.memory_mib, 1).astype(np.float64)
        fixed = np.zeros((n, 3), dtype=np.float32)
        fixed[:, 0] = cluster.gpu_count / self.gpu_slots
        nb_models = len(cluster.models)
        fixed[:, 1] = np.where(cluster.gpu_model >= 0, (cluster.gpu_model + 1) / (nb_models + 1), 0.0)
        speed = 1.0 / self.replay.model.slowness[cluster.gpu_model]
        fixed[:, 2] = np.where(cluster.gpu_count > 0, speed / 4.0, 0.0)
        self._fixed = clip_unit(fixed)
        largest_cpu, largest_mem = float(self._cpu_cap.max()), float(self._mem_cap.max())
        day = np.log1p(30 * 86400.0)
        static = np.stack([jobs.num_gpu / self.gpu_slots, jobs.gpu_milli / MILLI, jobs.cpu_milli / largest_cpu,
                           jobs.memory_mib / largest_mem, np.log1p(jobs.duration) / day], axis=1)
        self._job_static = clip_unit(static)
        self._log_month = day

    def policy_node(self, job: int) -> int:
        """The node the run's placement policy picks for queued ``job`` (overridden skips; a baseline agent)."""
        from hdeeprm.decision.gpu_choices import select_node

        manager = self.replay.manager
        chosen = select_node(manager.state, manager.chunks[job][0], manager.policy, manager.rank, manager.rng)
        return int(chosen[0])

    def _next_decision(self, advance: bool) -> None:
        """Run to the next job that fits somewhere (accumulating the waiting term), or to the end."""
        replay = self.replay
        while True:
            if not advance:
                for job in replay.manager.ordered_queue():
                    if job not in self.offered:
                        mask = replay.manager.fitting_mask(job)
                        if mask.any():
                            self.head = job
                            self._mask[:] = False
                            self._mask[:len(mask)] = mask
                            self._mask[self.skip] = True
                            return
                        self.offered.add(job)
                replay.record()
            before = replay.now
            queued = float(self._share[replay.manager.queue].sum()) if replay.manager.queue else 0.0
            if not replay.advance():
                self.done, self.head = True, -1
                self._mask[:] = False
                return
            self._wait_area += queued / self._capacity * (replay.now - before) / WAIT_UNIT
            self.offered = set()
            advance = False

    def _observe(self) -> dict[str, np.ndarray]:
        replay = self.replay
        state = replay.manager.state
        n = replay.cluster.nb_nodes
        nodes = np.zeros((self.nb_nodes, self.gpu_slots + len(NODE_FEATURES)), dtype=np.float32)
        left = -np.sort(-state.gpu_left, axis=1)[:, :self.gpu_slots] / MILLI
        s = self.gpu_slots
        nodes[:n, :left.shape[1]] = left
        nodes[:n, s] = self._fixed[:, 0]
        nodes[:n, s + 1] = state.total_left / (self._node_gpus * MILLI)
        nodes[:n, s + 2] = state.cpu_left / self._cpu_cap
        nodes[:n, s + 3] = state.memory_left / self._mem_cap
        nodes[:n, s + 4:s + 6] = self._fixed[:, 1:]
        if state.frag is not None:
            nodes[:n, s + 6] = state.frag / replay.typical.total / (self._node_gpus * MILLI)
        nodes[:n, s + 7] = self._mask[:n]
        job = np.zeros(len(JOB_FEATURES), dtype=np.float32)
        if self.head >= 0:
            job[:5] = self._job_static[self.head]
            job[5] = np.log1p(replay.now - replay.jobs.submit[self.head]) / self._log_month
        job[6] = np.log1p(len(replay.manager.queue)) / np.log1p(10_000)
        job[7] = 1.0 - state.total_left.sum() / self._capacity
        idle = float(state.total_left.sum())
        job[8] = replay.fragmented() / idle if idle else 0.0
        return {"nodes": clip_unit(nodes, nodes), "job": clip_unit(job, job)}

    def _info(self) -> dict[str, Any]:
        replay = self.replay
        info = {"action_mask": self._mask.copy(), "time": replay.now, "job": self.head,
                "queue": len(replay.manager.queue), "skips_overridden": self.skips_overridden,
                "scenario": self.scenario.name if self.scenario else ""}
        if self.done:
            info["metrics"] = replay.metrics()
        return info

