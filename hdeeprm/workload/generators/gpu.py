"""A seeded synthetic GPU workload: Philly-like arrivals, sizes and durations, with GPU constraints.

The model (every default fitted on the Microsoft Philly per-job table, Jeon et al., "Analysis of
Large-Scale Multi-Tenant GPU Clusters for DNN Training Workloads", USENIX ATC 2019, as derived by
the Pollux artifact ``petuum/adaptdl`` ``simulator/traces/philly.csv``: 82,247 jobs over 109 days):

- **arrivals**: a non-homogeneous Poisson process of rate ``rate x hour[h] x weekday[d]``
  (jobs per hour; ``hour`` and ``weekday`` the Philly submission counts per hour of day and per
  day of the week over their mean, :data:`PHILLY_HOUR_FACTORS`, :data:`PHILLY_WEEKDAY_FACTORS`),
  drawn by thinning (Lewis and Shedler, "Simulation of nonhomogeneous Poisson processes by
  thinning", Naval Research Logistics Quarterly, 1979). Time 0 is a Monday 00:00;
- **bursts**: each arrival starts, with probability ``burst_probability``, a burst of
  ``max(1, round(LogNormal(ln burst_median, burst_sigma)))`` more jobs of the same shape, one
  after the other with exponential gaps of mean ``burst_gap`` seconds (the hyper-parameter sweeps of
  multi-tenant DL clusters). Fitted on Philly's runs of submissions less than 60 s apart: 27 % of
  the runs have more than one job, 13.4 jobs on average, 84 at the 99th percentile; 53 % of the gaps
  are below 10 s. The base rate is lowered so that the mean rate stays ``rate``;
- **sizes**: GPUs per job drawn from Philly's empirical distribution (:data:`PHILLY_SIZES`: 93.2 %
  one GPU), not a fixed power law;
- **durations**: log-normal, ``ln d ~ N(mu + slope x log2(gpus), sigma)``, fitted on Philly by
  least squares of the mean log-duration of the sizes 1, 4, 8, 16 and 32 GPUs weighted by the
  square root of their counts, ``sigma`` the residuals' standard deviation (:data:`PHILLY_DURATION`):
  bigger jobs run longer. Philly's 2-GPU jobs (median 21 s against 1,117 s for one GPU) are an
  outlier left out of the fit;
- **GPU memory**: a share ``memory_share`` of the jobs needs ``memory_gb`` GB per GPU;
- **GPU type**: a share ``type_share`` of the jobs is pinned to one of ``types`` (none by default).

Output: an openb pod list (``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
creation_time,deletion_time,scheduled_time``), readable by
:func:`~hdeeprm.workload.gpu_jobs.read_gpu_workload` (``creation_time`` the arrival,
``scheduled_time`` the arrival too, ``deletion_time`` arrival + duration). The memory need is
written as the allowed models: every GPU type of the library (names and aliases) with at least
that memory, joined with ``|``; a job pinned to a type is pinned among the ``types`` that have that
memory (and keeps the memory constraint alone when none has).
"""
from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from hdeeprm.errors import OptionsError
from hdeeprm.platform.gpu_types import load_gpu_library

#: GPUs per job in Philly and their counts (the per-job table).
PHILLY_SIZES = {1: 76627, 2: 1818, 4: 1870, 8: 1643, 12: 7, 16: 199, 24: 7, 32: 67, 64: 6, 128: 3}
#: Philly submissions per hour of day (0..23, the table's clock) over their mean.
PHILLY_HOUR_FACTORS = (1.27, 0.98, 1.12, 1.10, 0.70, 1.15, 1.67, 2.09, 1.11, 1.01, 1.02, 0.87, 0.75, 0.70, 0.64,
                       0.65, 0.88, 0.67, 0.80, 0.73, 1.02, 0.92, 1.13, 1.01)
#: Philly submissions per day of the week (Monday first) over their mean.
PHILLY_WEEKDAY_FACTORS = (0.86, 1.07, 1.14, 1.29, 1.44, 0.61, 0.59)
#: Log-normal duration model fitted on Philly: ``mu`` and ``slope`` (ln s, per doubling of the GPUs), ``sigma``.
PHILLY_DURATION = {"mu": 6.73, "slope": 0.96, "sigma": 2.02}
#: Philly's mean submission rate, jobs per hour (82,247 jobs over 108.9 days).
PHILLY_RATE = 31.47
#: Columns of the pod list the generator writes.
POD_HEADER = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
              "creation_time", "deletion_time", "scheduled_time")
_WEEK = 7 * 24 * 3600.0


@dataclass(frozen=True)
class GpuWorkloadModel:
    """Parameters of the synthetic GPU workload (defaults: fitted on Philly, see the module docstring).

    Attributes:
        rate: Mean arrival rate, jobs per hour.
        hour_factors: Rate factor per hour of day (24 values).
        weekday_factors: Rate factor per day of the week, Monday first (7 values).
        burst_probability: Chance that an arrival starts a burst.
        burst_median: Median number of extra jobs in a burst (log-normal).
        burst_sigma: Log-normal sigma of the extra jobs in a burst.
        burst_gap: Mean gap between the jobs of a burst (s, exponential).
        sizes: GPUs per job -> weight.
        mu, slope, sigma: Log-normal durations, ``ln d ~ N(mu + slope log2 gpus, sigma)`` (d in seconds).
        max_duration: Durations are capped here (s), as Philly's longest jobs (about 60 days).
        memory_share: Share of jobs that need ``memory_gb`` GB per GPU.
        memory_gb: GPU memory those jobs need (GB).
        type_share: Share of jobs pinned to one GPU type of ``types``.
        types: GPU types (library names or aliases) jobs may be pinned to.
        cpu_milli_per_gpu: CPU per GPU in thousandths of a core (0: none, as Philly records).
        memory_mib_per_gpu: Host memory per GPU in MiB (0: none).
    """

    rate: float = PHILLY_RATE
    hour_factors: tuple[float, ...] = PHILLY_HOUR_FACTORS
    weekday_factors: tuple[float, ...] = PHILLY_WEEKDAY_FACTORS
    burst_probability: float = 0.27
    burst_median: float = 7.5
    burst_sigma: float = 1.0
    burst_gap: float = 10.0
    sizes: dict[int, float] = field(default_factory=lambda: dict(PHILLY_SIZES))
    mu: float = PHILLY_DURATION["mu"]
    slope: float = PHILLY_DURATION["slope"]
    sigma: float = PHILLY_DURATION["sigma"]
    max_duration: float = 60 * 86400.0
    memory_share: float = 0.1
    memory_gb: float = 32.0
    type_share: float = 0.0
    types: tuple[str, ...] = ()
    cpu_milli_per_gpu: int = 0
    memory_mib_per_gpu: int = 0

    @property
    def mean_burst(self) -> float:
        """Mean number of extra jobs in a burst (log-normal mean, ignoring the rounding)."""
        return self.burst_median * float(np.exp(self.burst_sigma ** 2 / 2))

    def rate_at(self, t: np.ndarray) -> np.ndarray:
        """Base arrival rate (jobs per second, bursts excluded) at times ``t`` (s since Monday 00:00), float64."""
        hour = (t // 3600).astype(np.int64)
        base = self.rate / 3600.0 / (1.0 + self.burst_probability * self.mean_burst)
        return base * np.asarray(self.hour_factors)[hour % 24] * np.asarray(self.weekday_factors)[(hour // 24) % 7]


def check_model(model: GpuWorkloadModel, nb_jobs: int) -> None:
    """Refuse parameters that cannot produce the asked workload (messages name ``generate``'s flags).

    Args:
        model: The parameters.
        nb_jobs: Jobs to draw.

    Raises:
        OptionsError: A share outside [0, 1]; a rate, burst median or GPU memory that is not a finite
            number > 0; a rate so low that ``nb_jobs`` arrivals would pass
            :data:`~hdeeprm.workload.model.MAX_TIME` (they are expected by ``nb_jobs / rate`` hours, kept
            within a quarter of the bound), bursts included (a burst median so large that the arrivals
            starting bursts are that rare: the bursts, capped at the jobs left, are unbounded otherwise);
            a GPU memory need that no GPU type of the library has (those jobs would be unconstrained); a
            type share without types.
    """
    from hdeeprm.arguments import real
    from hdeeprm.reading import MAX_TIME, MAX_TIME_TEXT

    for flag, value in (("--burst-probability", model.burst_probability), ("--memory-share", model.memory_share),
                        ("--type-share", model.type_share)):
        real(flag, value, minimum=0, maximum=1)
    for flag, value in (("--rate", model.rate), ("--burst-median", model.burst_median),
                        ("--memory-gb", model.memory_gb)):
        real(flag, value, positive=True)
    needed = nb_jobs * 3600.0 / (MAX_TIME / 4)   # jobs per hour; bursts may supply none of the jobs
    if model.rate < needed:
        raise OptionsError(f"--rate {model.rate:g} jobs per hour is too low for {nb_jobs} jobs: their arrivals would "
                           f"pass the time bound ({MAX_TIME_TEXT}); raise --rate to at least {needed:.3g}")
    base = model.rate / (1.0 + model.burst_probability * model.mean_burst)   # arrivals that start a burst, per hour
    if not base >= needed:
        raise OptionsError(f"--burst-median {model.burst_median:g} (--burst-probability {model.burst_probability:g}) "
                           f"leaves {base:.3g} burst-starting arrivals per hour at --rate {model.rate:g}: {nb_jobs} "
                           f"jobs could pass the time bound ({MAX_TIME_TEXT}); lower --burst-median or raise --rate")
    if model.memory_share > 0 and not _memory_spec(model.memory_gb):
        largest = max(load_gpu_library().types.values(), key=lambda gpu: gpu.memory)
        raise OptionsError(f"--memory-gb {model.memory_gb:g}: no GPU type has that much memory (the largest: "
                           f"{largest.name}, {largest.memory:g} GB), so the jobs needing it could run nowhere; lower "
                           "--memory-gb or set --memory-share 0")
    if model.type_share > 0 and not model.types:
        raise OptionsError(f"--type-share {model.type_share:g} needs the GPU types to pin jobs to: give --types")


def _memory_spec(gb: float) -> tuple[str, ...]:
    library = load_gpu_library()
    names = []
    for name, gpu in library.types.items():
        if gpu.memory >= gb:
            names += [name, *gpu.aliases]
    return tuple(names)


def generate_gpu_jobs(nb_jobs: int, model: GpuWorkloadModel = GpuWorkloadModel(), seed: int = 0) -> list[tuple]:
    """Draw ``nb_jobs`` jobs.

    Returns:
        Rows ``(name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, arrival s, duration s)`` by arrival time
        (seconds since Monday 00:00).

    Raises:
        ValueError: A negative job count or a model without positive size weights.
    """
    if nb_jobs < 0:
        raise ValueError(f"nb_jobs must be >= 0, got {nb_jobs}")
    rng = np.random.default_rng(seed)
    sizes = np.array(list(model.sizes), dtype=np.int64)
    weights = np.array(list(model.sizes.values()), dtype=np.float64)
    if not (weights > 0).any():
        raise ValueError("the size distribution needs a positive weight")
    weights /= weights.sum()
    peak = float(model.rate_at(np.arange(0, _WEEK, 3600.0)).max())
    memory_spec = set(_memory_spec(model.memory_gb))
    rows: list[tuple] = []
    t = 0.0
    while len(rows) < nb_jobs:
        t += rng.exponential(1.0 / peak)
        if rng.random() * peak > model.rate_at(np.array([t]))[0]:
            continue   # thinning: keep the candidate with probability rate(t) / peak
        gpus = int(rng.choice(sizes, p=weights))
        spec: set[str] | None = None
        if rng.random() < model.memory_share:
            spec = set(memory_spec)
        if model.types and rng.random() < model.type_share:
            fitting = [t for t in model.types if spec is None or t in spec]   # a pin never breaks the memory need
            if fitting:
                spec = {fitting[int(rng.integers(len(fitting)))]}
        extra = 0
        if rng.random() < model.burst_probability:
            # capped at the jobs still to draw (the rest would be dropped): memory bounded by nb_jobs, the same rows
            size = float(np.exp(rng.normal(np.log(model.burst_median), model.burst_sigma)))
            extra = max(1, round(min(size, max(1, nb_jobs - len(rows) - 1))))
        arrivals = (t + np.concatenate(([0.0], np.cumsum(rng.exponential(model.burst_gap, extra))))).tolist()
        for when in arrivals:
            mean = model.mu + model.slope * np.log2(gpus)
            duration = float(min(max(round(np.exp(rng.normal(mean, model.sigma))), 1.0), model.max_duration))
            rows.append((gpus, "|".join(sorted(spec)) if spec else "", when, duration))
    rows = sorted(rows[:nb_jobs], key=lambda r: r[2])
    return [(f"gpu-job-{i}", model.cpu_milli_per_gpu * g, model.memory_mib_per_gpu * g, g, 1000, spec,
             round(when, 3), d) for i, (g, spec, when, d) in enumerate(rows)]


def write_gpu_pod_list(path: str | Path, rows: Sequence[tuple]) -> int:
    """Write rows of :func:`generate_gpu_jobs` as an openb pod list (see the module docstring); returns the count."""
    from hdeeprm.files import atomic_write

    with atomic_write(path) as f:   # atomic: a full disk or an interrupt never leaves half a pod list
        writer = csv.writer(f, lineterminator="\n")
        writer.writerow(POD_HEADER)
        for name, cpu, memory, gpus, milli, spec, when, duration in rows:
            writer.writerow((name, cpu, memory, gpus, milli, spec, "BE", "Succeeded", f"{when:.3f}",
                             f"{when + duration:.3f}", f"{when:.3f}"))
    return len(rows)
