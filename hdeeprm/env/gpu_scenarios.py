"""GPU learning scenarios: workloads + platforms sampled per episode, with a curriculum and held-out tests.

A :class:`GpuScenario` names a platform (a shipped HDeepRM platform JSON, or the openb node list of the
Alibaba GPU trace) and a workload: either the seeded synthetic GPU generator
(:mod:`hdeeprm.workload.generators.gpu`, fitted on Philly, Jeon et al., USENIX ATC 2019) at a load
factor (its arrival rate multiplied), or a window of a real trace (Philly table or openb pod list).
:data:`GPU_SCENARIOS` registers the shipped ones, each with a difficulty (1 easy, 2 medium, 3 hard:
more load and more nodes) and a split: ``train`` scenarios are sampled during training, ``test``
scenarios (other generator seeds and load factors, other trace windows) are held out. ``test-openb`` is a
window of 300 pods (about 49 hours of arrivals, from the 4,001st pod by ``creation_time``) of the openb
default pod list on its own 1,213-node cluster: a cluster size and a workload no training scenario has.

:class:`ScenarioSampler` draws one scenario per episode from a list, uniformly, or as a curriculum
(Bengio et al., "Curriculum learning", ICML 2009): with ``curriculum=True`` episode ``e`` of ``E``
(``curriculum_episodes``) draws among the scenarios of difficulty <= ``1 + floor(3 e / E)``, so the
hard ones enter last. Every draw comes from the generator the environment seeds (``reset(seed=...)``),
so a seeded run picks the same scenarios. ``reset(options={"scenario": name})`` replays one scenario of
the pool instead (:func:`chosen_scenario`): no draw, and the curriculum does not advance, so the
scenarios of the other episodes stay those of default resets.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np

from hdeeprm import arguments
from hdeeprm.config.options import REPOSITORY
from hdeeprm.errors import OptionsError
from hdeeprm.platform.gpu_platform import load_gpu_cluster
from hdeeprm.platform.openb import GpuCluster
from hdeeprm.registry import Registry
from hdeeprm.workload.generators.gpu import GpuWorkloadModel, generate_gpu_jobs
from hdeeprm.workload.datasets import resolve_path
from hdeeprm.workload.gpu_jobs import GpuJobs, gpu_jobs, read_gpu_workload

#: Scenario splits.
SPLITS = ("train", "test")
#: Difficulty levels (1 easy, 2 medium, 3 hard).
DIFFICULTIES = (1, 2, 3)


@dataclass(frozen=True)
class GpuScenario:
    """One learning scenario (see the module docstring).

    Attributes:
        name: Registry name.
        platform: Platform file: a registry name (``openb:node_list_gpu_node``) or a path, relative to the
            repository (``$HDEEPRM_SHARED`` expands).
        nb_jobs: Jobs of an episode.
        load: Arrival-rate factor of the generator (1.0: Philly's mean rate); ignored for a trace.
        seed: Generator seed; ignored for a trace.
        trace: Trace file ("" for the generator), same path rules as ``platform``.
        first_job: First job of the trace window.
        difficulty: 1 easy, 2 medium, 3 hard.
        split: ``train`` or ``test`` (held out).
    """

    name: str
    platform: str
    nb_jobs: int
    load: float = 1.0
    seed: int = 0
    trace: str = ""
    first_job: int = 0
    difficulty: int = 1
    split: str = "train"

    def resolve(self, path: str) -> Path:
        """``path`` as a file: a registry name's (:mod:`hdeeprm.workload.datasets`), else relative to the repository.

        Raises:
            DatasetError: a registry name whose file is not on this machine (the line says how to fetch it).
        """
        return Path(resolve_path(path, REPOSITORY))

    def cluster(self) -> GpuCluster:
        """The scenario's GPU cluster (cached per file)."""
        return _cluster(str(self.resolve(self.platform)))

    def jobs(self) -> GpuJobs:
        """The scenario's jobs (the generator's, times from 0, or the trace window).

        Raises:
            WorkloadError: An unreadable trace or a window past its end.
        """
        if self.trace:
            return _trace(str(self.resolve(self.trace))).window(self.first_job, self.nb_jobs)
        return _generated(self.nb_jobs, self.load, self.seed)


@lru_cache(maxsize=8)
def _cluster(path: str) -> GpuCluster:
    return load_gpu_cluster(path)


@lru_cache(maxsize=4)
def _trace(path: str) -> GpuJobs:
    return read_gpu_workload(path)


@lru_cache(maxsize=16)
def _generated(nb_jobs: int, load: float, seed: int) -> GpuJobs:
    # A generated scenario's jobs are the same every episode (a seeded draw; GpuJobs is never changed): drawn once.
    return generated_jobs(nb_jobs, GpuWorkloadModel(rate=GpuWorkloadModel().rate * load), seed)


def generated_jobs(nb_jobs: int, model: GpuWorkloadModel = GpuWorkloadModel(), seed: int = 0) -> GpuJobs:
    """Jobs of the synthetic GPU generator as :class:`~hdeeprm.workload.gpu_jobs.GpuJobs`, first arrival at 0 s.

    Args:
        nb_jobs: Jobs to draw (>= 1).
        model: Generator parameters.
        seed: Generator seed.

    Returns:
        The jobs (no GPU memory need: the generator's memory constraint travels as allowed types).
    """
    rows = generate_gpu_jobs(nb_jobs, model, seed)
    origin = rows[0][6] if rows else 0.0
    jobs = gpu_jobs([(name, when - origin, d, g, milli, cpu, mem, 0, spec)
                     for name, cpu, mem, g, milli, spec, when, d in rows], source=f"generator(seed={seed})")
    return replace(jobs, clock=float(origin))


#: The shipped scenarios, by name.
GPU_SCENARIOS: Registry[GpuScenario] = Registry("GPU scenario")
_MIXED, _DGX = "platforms/mixed_cpu_gpu.json", "platforms/dgx_a100.json"
#: The Philly table (registry names, :mod:`hdeeprm.workload.datasets`: ``hdeeprm-workload fetch`` gets them).
_PHILLY = "philly:derived"
#: The openb cluster (1,213 GPU nodes) and default pod list of the Alibaba GPU trace v2023 (Weng et al., ATC 2023).
_OPENB_NODES = "openb:node_list_gpu_node"
_OPENB_PODS = "openb:pod_list_default"
for _s in (GpuScenario("easy-gen", _MIXED, 60, load=0.5, seed=1, difficulty=1),
           GpuScenario("easy-gen-b", _MIXED, 60, load=0.7, seed=2, difficulty=1),
           GpuScenario("medium-gen", _DGX, 150, load=5.0, seed=3, difficulty=2),
           GpuScenario("medium-gen-b", _DGX, 150, load=8.0, seed=4, difficulty=2),
           GpuScenario("hard-gen", _DGX, 300, load=25.0, seed=6, difficulty=3),
           GpuScenario("hard-philly", _MIXED, 200, trace=_PHILLY, first_job=20000, difficulty=3),
           GpuScenario("test-easy-gen", _MIXED, 60, load=1.0, seed=101, difficulty=1, split="test"),
           GpuScenario("test-medium-gen", _DGX, 150, load=10.0, seed=105, difficulty=2, split="test"),
           GpuScenario("test-hard-gen", _DGX, 300, load=30.0, seed=106, difficulty=3, split="test"),
           GpuScenario("test-hard-philly", _MIXED, 200, trace=_PHILLY, first_job=60000, difficulty=3, split="test"),
           GpuScenario("test-openb", _OPENB_NODES, 300, trace=_OPENB_PODS, first_job=4000, difficulty=3,
                       split="test")):
    GPU_SCENARIOS.register(_s.name, _s)


def scenarios(names: str | list[str] = "train") -> list[GpuScenario]:
    """Scenarios by split (``"train"``, ``"test"``) or by names.

    Raises:
        OptionsError: An unknown name (with the closest valid one).
    """
    if isinstance(names, str) and names in SPLITS:
        return [s for s in (GPU_SCENARIOS[n] for n in GPU_SCENARIOS.names()) if s.split == names]
    return [GPU_SCENARIOS[GPU_SCENARIOS.check(n)] for n in ([names] if isinstance(names, str) else names)]


class ScenarioSampler:
    """Draws the scenario of each episode (see the module docstring).

    Args:
        pool: Scenarios to draw from (non-empty).
        curriculum: Easy -> hard curriculum instead of uniform draws.
        curriculum_episodes: Episodes after which every difficulty is open (>= 1).

    Raises:
        OptionsError: An empty pool or ``curriculum_episodes`` < 1.
        DatasetError: A scenario's trace or platform is a registry name whose file is not on this machine:
            raised here, when the environment is made, not at the episode that draws it.
    """

    def __init__(self, pool: list[GpuScenario], curriculum: bool = False, curriculum_episodes: int = 30) -> None:
        if not pool:
            raise OptionsError("the scenario pool is empty: name at least one scenario")
        if curriculum_episodes < 1:
            raise OptionsError(f"curriculum_episodes must be >= 1, got {curriculum_episodes!r}")
        for scenario in pool:   # every file there before the first episode (the traces are read when drawn)
            for path in (scenario.platform, scenario.trace):
                if path:
                    scenario.resolve(path)
        self.pool = list(pool)
        self.curriculum = curriculum
        self.curriculum_episodes = curriculum_episodes
        self.episode = 0

    def level(self) -> int:
        """Highest difficulty open at the current episode (3 without a curriculum)."""
        if not self.curriculum:
            return DIFFICULTIES[-1]
        return min(DIFFICULTIES[-1], 1 + (3 * self.episode) // self.curriculum_episodes)

    def named(self, name: object) -> GpuScenario:
        """The pool's scenario ``name`` (reset's ``options["scenario"]``); nothing is drawn, nothing advances.

        Raises:
            OptionsError: ``"scenario must be one of this environment's scenarios (easy-gen, ...), got 'x'"``.
        """
        for scenario in self.pool:
            if scenario.name == name:
                return scenario
        raise OptionsError(f"scenario must be one of this environment's scenarios "
                           f"({', '.join(s.name for s in self.pool)}), got {name!r}")

    def draw(self, rng: np.random.Generator) -> GpuScenario:
        """The next episode's scenario (advances the episode counter)."""
        level = self.level()
        open_ = [s for s in self.pool if s.difficulty <= level] or [min(self.pool, key=lambda s: s.difficulty)]
        self.episode += 1
        return open_[int(rng.integers(len(open_)))]


#: The keys of the GPU environments' ``reset(options=...)`` when they sample scenarios (none with fixed inputs).
RESET_OPTIONS = ("scenario",)


def chosen_scenario(sampler: ScenarioSampler | None, options: object) -> GpuScenario | None:
    """The scenario a GPU environment's ``reset(options=...)`` names, checked before anything is reset.

    Args:
        sampler: The environment's sampler, or None for fixed inputs (then no key is accepted).
        options: reset's ``options``: None, ``{}`` or ``{"scenario": name}`` (:data:`RESET_OPTIONS`).

    Returns:
        The named scenario of the pool (:meth:`ScenarioSampler.named`), or None for a draw.

    Raises:
        OptionsError: Another key, any key with fixed inputs, or a name outside the pool.
    """
    options = arguments.reset_options(options, RESET_OPTIONS if sampler is not None else ())
    return sampler.named(options["scenario"]) if "scenario" in options else None


def episode_inputs(sampler: ScenarioSampler | None, rng: np.random.Generator, cluster: GpuCluster,
                   jobs: GpuJobs, chosen: GpuScenario | None = None) -> tuple[GpuScenario | None, GpuCluster, GpuJobs]:
    """The cluster and jobs of a GPU environment's next episode.

    Args:
        sampler: Draws a scenario per episode, or None for the environment's fixed inputs.
        rng: The environment's generator (``np_random``), seeded by ``reset(seed=...)``.
        cluster, jobs: The fixed inputs, used when ``sampler`` is None.
        chosen: The scenario reset's options name (:func:`chosen_scenario`), replayed without a draw.

    Returns:
        ``(scenario, cluster, jobs)``: the scenario drawn or chosen (None without a sampler) and its inputs.
    """
    if sampler is None:
        return None, cluster, jobs
    scenario = chosen if chosen is not None else sampler.draw(rng)
    return scenario, scenario.cluster(), scenario.jobs()
