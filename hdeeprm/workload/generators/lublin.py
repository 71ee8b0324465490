"""Synthetic rigid-job workloads from the Lublin & Feitelson model.

Model: U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers: modeling
the characteristics of rigid jobs", J. Parallel Distrib. Comput. 63(11), pp. 1105-1122,
2003 (the "Lublin 99" model of the Parallel Workloads Archive). The parameter values
below are the published ones (the paper and its public C reference implementation,
``m_lublin99.c``); the code is written from the model's description.

By default one set of parameters describes all jobs (the "whole sample" fit); with
``job_types=True`` each job is *batch* or *interactive*, each type with its own
parameters and its own arrival stream, the two streams merged in time order.

* **Size** (processors): serial with probability ``serial_prob``; otherwise
  ``x`` ~ two-stage uniform (``U(ulow, umed)`` with probability ``uprob``, else
  ``U(umed, uhi)``), rounded to an integer with probability
  ``pow2_prob / (1 - serial_prob)`` (a power-of-two job), and
  size = round(2 ** x), at most round(2 ** uhi).
* **Run time** (seconds): ln(run time) ~ hyper-gamma: ``Gamma(a1, b1)`` with probability
  ``p = clip(pa * size + pb, 0, 1)``, else ``Gamma(a2, b2)`` (shape, scale), redrawn
  while above 12 (run times below e**12 = 162,754 s), run time = max(1, floor(e ** x)).
  The negative ``pa`` makes larger jobs longer.
* **Arrivals**: ln(inter-arrival "points") ~ ``Gamma(aarr * arar, barr)`` (redrawn
  while above 13), spent across the 48 half-hour buckets of the day, each bucket
  costing a weight proportional to the ``Gamma(anum, bnum)`` probability of that
  bucket, so that more jobs arrive at busy hours (the daily cycle). The cycle starts
  at bucket 11 as in the reference code; the trace starts at midnight.

Adaptation to the machine size (the reference code is tuned for 128 nodes and asks
users to "set the number-of-nodes' parameters to fit your system"): batch
``uhi = log2(nb_cores)``, ``umed = uhi - 2``; interactive ``uhi = log2(nb_cores) - 1.5``,
``umed = uhi - 2.5`` (the 128-node values 7, 5, 5.5, 3), each clamped so that
``ulow <= umed <= uhi``. The run-time and arrival parameters are not scaled.

Simplifications, said here: run times are at least 1 s (a zero run time would make a
zero walltime); the weekly cycle and user/session structure are not modelled (neither
are they in the reference code); no requested times are produced (field 9 is -1, the
converter then uses the run time as a perfect estimate).
"""
from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace

import numpy as np

from hdeeprm.errors import OptionsError
from hdeeprm.workload.swf import SWFHeader, SWFRecord, write_swf

#: Queue number (SWF field 15) given to interactive jobs.
INTERACTIVE = 0
#: Queue number (SWF field 15) given to batch jobs.
BATCH = 1

_BUCKETS = 48                       # half hours in a day
_SECONDS_PER_BUCKET = 86400 // _BUCKETS
_CYCLE_START = 11                   # first bucket of the fitted daily cycle
_MAX_LOG_RUN_TIME = 12.0            # run times below e**12 s
_MAX_LOG_INTERARRIVAL = 13.0        # inter-arrival points below e**13


@dataclass(frozen=True)
class LublinParameters:
    """Parameters of one job type of the Lublin & Feitelson model.

    Attributes:
        serial_prob: Probability of a serial (1-processor) job.
        pow2_prob: Probability of a power-of-two parallel job.
        ulow, umed, uhi, uprob: Two-stage uniform of log2(size): ``U(ulow, umed)`` with
            probability ``uprob``, else ``U(umed, uhi)``.
        a1, b1, a2, b2: Shapes and scales of the two gammas of ln(run time in s).
        pa, pb: Probability of the first gamma = ``pa * size + pb`` (clipped to [0, 1]).
        aarr, barr: Shape and scale of ln(inter-arrival points) at rush hours.
        anum, bnum: Shape and scale of the gamma giving the daily arrival cycle (in
            half-hour buckets).
        arar: Arrive-rush-to-all ratio, multiplies ``aarr``.
    """

    serial_prob: float
    pow2_prob: float
    ulow: float
    umed: float
    uhi: float
    uprob: float
    a1: float
    b1: float
    a2: float
    b2: float
    pa: float
    pb: float
    aarr: float
    barr: float
    anum: float
    bnum: float
    arar: float


#: Queue number (SWF field 15) of jobs generated without job types.
UNKNOWN_QUEUE = -1

#: Batch jobs, fitted for a 128-node machine (Lublin & Feitelson 2003).
BATCH_PARAMETERS = LublinParameters(
    serial_prob=0.2927, pow2_prob=0.6686, ulow=1.2, umed=5.0, uhi=7.0, uprob=0.875,
    a1=6.57, b1=0.823, a2=639.1, b2=0.0156, pa=-0.003, pb=0.6986,
    aarr=6.0415, barr=0.8531, anum=6.1271, bnum=5.2740, arar=1.0519)
#: Interactive jobs, fitted for a 128-node machine (Lublin & Feitelson 2003).
INTERACTIVE_PARAMETERS = LublinParameters(
    serial_prob=0.1541, pow2_prob=0.625, ulow=1.0, umed=3.0, uhi=5.5, uprob=0.705,
    a1=3.8351, b1=0.6605, a2=7.073, b2=0.6856, pa=-0.0118, pb=0.9156,
    aarr=6.5510, barr=0.6621, anum=8.9186, bnum=3.6680, arar=0.9797)


#: Whole sample, no job types ("typeless" parameters of the reference code), 128 nodes.
WHOLE_PARAMETERS = LublinParameters(
    serial_prob=0.244, pow2_prob=0.576, ulow=0.8, umed=4.5, uhi=7.0, uprob=0.86,
    a1=4.2, b1=0.94, a2=312.0, b2=0.03, pa=-0.0054, pb=0.78,
    aarr=10.2303, barr=0.4871, anum=8.1737, bnum=3.9631, arar=1.0225)

#: log2 of the machine size the published parameters were fitted for (128 nodes).
FITTED_LOG2_SIZE = 7.0


def scale_to_machine(params: LublinParameters, nb_cores: int) -> LublinParameters:
    """Adapt the size parameters of a job type to a machine of ``nb_cores`` processors.

    ``uhi`` keeps its distance to log2 of the machine size (0 for batch and whole-sample
    jobs, -1.5 for interactive ones) and ``umed`` its distance to ``uhi``; both are then
    clamped so that ``0 <= ulow <= umed <= uhi``.

    Args:
        params: Parameters fitted for 128 processors.
        nb_cores: Processors of the target machine (>= 1).

    Returns:
        The parameters with ``ulow``, ``umed``, ``uhi`` adapted; the others unchanged.
    """
    uhi = max(math.log2(nb_cores) + params.uhi - FITTED_LOG2_SIZE, 0.0)
    ulow = min(params.ulow, uhi)
    umed = min(max(uhi - (params.uhi - params.umed), ulow), uhi)
    return replace(params, ulow=ulow, umed=umed, uhi=uhi)


def _gamma_cdf(x: float, shape: float, scale: float) -> float:
    """Regularized lower incomplete gamma P(shape, x / scale), by its power series."""
    z = x / scale
    if z <= 0:
        return 0.0
    term = total = 1.0 / shape
    n = 0
    while abs(term) > 1e-16 * abs(total) and n < 10_000:
        n += 1
        term *= z / (shape + n)
        total += term
    return min(1.0, total * math.exp(-z + shape * math.log(z) - math.lgamma(shape)))


def daily_weights(params: LublinParameters) -> np.ndarray:
    """Arrival cost of each half-hour bucket of the day (the daily cycle).

    Args:
        params: Uses ``anum`` and ``bnum``.

    Returns:
        Shape ``(48,)``, float64, bucket 0 = 00:00-00:30; mean 1. A bucket with a
        larger weight costs more points, i.e. receives more jobs per second.
    """
    weights = np.zeros(_BUCKETS)
    for i in range(_CYCLE_START, _BUCKETS + _CYCLE_START):
        weights[(i - 1) % _BUCKETS] = (_gamma_cdf(i + 0.5, params.anum, params.bnum)
                                       - _gamma_cdf(i - 0.5, params.anum, params.bnum))
    return weights / weights.mean()


class _ArrivalStream:
    """Arrival times of one job type (seconds from midnight of day 0)."""

    def __init__(self, params: LublinParameters, rng: np.random.Generator) -> None:
        self.weights = daily_weights(params)
        self.shape = params.aarr * params.arar
        self.scale = params.barr
        self.rng = rng
        self.bucket = 0
        self.points = 0.0
        self.remainder = 0.0
        self.time = 0.0

    def advance(self) -> float:
        """Move to the next arrival and return its time in seconds."""
        draw = self.rng.gamma(self.shape, self.scale)
        while draw > _MAX_LOG_INTERARRIVAL:
            draw = self.rng.gamma(self.shape, self.scale)
        self.points += math.exp(draw) / _SECONDS_PER_BUCKET
        elapsed = 0.0
        while self.points > self.weights[self.bucket]:
            self.points -= self.weights[self.bucket]
            self.bucket = (self.bucket + 1) % _BUCKETS
            elapsed += _SECONDS_PER_BUCKET
        new_remainder = self.points / self.weights[self.bucket]
        elapsed += _SECONDS_PER_BUCKET * (new_remainder - self.remainder)
        self.remainder = new_remainder
        self.time += elapsed
        return self.time


def _size(params: LublinParameters, rng: np.random.Generator) -> int:
    u = rng.random()
    if u <= params.serial_prob:
        return 1
    if rng.random() <= params.uprob:
        x = rng.uniform(params.ulow, params.umed)
    else:
        x = rng.uniform(params.umed, params.uhi)
    if u <= params.serial_prob + params.pow2_prob:
        x = math.floor(x + 0.5)
    return min(int(2.0 ** x + 0.5), int(2.0 ** params.uhi + 0.5))


def _run_time(params: LublinParameters, size: int, rng: np.random.Generator) -> int:
    p = min(max(params.pa * size + params.pb, 0.0), 1.0)
    shape, scale = (params.a1, params.b1) if rng.random() <= p else (params.a2, params.b2)
    x = rng.gamma(shape, scale)
    while x > _MAX_LOG_RUN_TIME:
        x = rng.gamma(shape, scale)
    return max(1, int(math.exp(x)))


def iter_lublin(nb_jobs: int, nb_cores: int, *, seed: int = 0,
                job_types: bool = False) -> Iterator[SWFRecord]:
    """Generate jobs of the Lublin & Feitelson model as SWF records.

    Args:
        nb_jobs: Number of jobs (>= 0).
        nb_cores: Processors of the machine (>= 1); sizes are at most this.
        seed: Seed of the :class:`numpy.random.Generator`; same seed, same jobs.
        job_types: True for the two-type model (batch and interactive jobs, each with its
            parameters and arrival stream); False (default) for the whole-sample
            parameters, one stream, as the reference code's typeless mode (the trace
            ``lublin_256.swf`` of the shared traces looks like it).

    Yields:
        Records numbered 1..nb_jobs in submission order: field 2 submit time (integer
        seconds from the start), 4 run time (s), 5 and 8 size, 11 status 1, 15 queue
        :data:`BATCH` or :data:`INTERACTIVE` (-1 without job types); every other field -1 (unknown).

    Raises:
        OptionsError: ``nb_jobs`` < 0 or ``nb_cores`` < 1.
    """
    if nb_jobs < 0:
        raise OptionsError(f"nb_jobs must be >= 0, got {nb_jobs}")
    if nb_cores < 1:
        raise OptionsError(f"nb_cores must be >= 1, got {nb_cores}")
    return _generate(nb_jobs, nb_cores, seed, job_types)


def _generate(nb_jobs: int, nb_cores: int, seed: int, job_types: bool) -> Iterator[SWFRecord]:
    rng = np.random.default_rng(seed)
    if job_types:
        types = [(BATCH, scale_to_machine(BATCH_PARAMETERS, nb_cores)),
                 (INTERACTIVE, scale_to_machine(INTERACTIVE_PARAMETERS, nb_cores))]
    else:
        types = [(UNKNOWN_QUEUE, scale_to_machine(WHOLE_PARAMETERS, nb_cores))]
    streams = [_ArrivalStream(params, rng) for _, params in types]
    next_times = [stream.advance() for stream in streams]
    for number in range(1, nb_jobs + 1):
        k = min(range(len(types)), key=next_times.__getitem__)
        queue, params = types[k]
        submit = next_times[k]
        next_times[k] = streams[k].advance()
        size = _size(params, rng)
        run = _run_time(params, size, rng)
        yield SWFRecord(number, int(submit), -1, run, size, -1, -1, size, -1, -1, 1,
                        -1, -1, -1, queue, -1, -1, -1)


def lublin_header(nb_jobs: int, nb_cores: int, seed: int, job_types: bool = False) -> SWFHeader:
    """The SWF header of a generated trace (version, sizes, generator and seed).

    Args:
        nb_jobs: Number of jobs of the trace.
        nb_cores: Processors of the machine.
        seed: Seed used.
        job_types: As in :func:`iter_lublin`.

    Returns:
        A header with ``Version``, ``Computer``, ``MaxJobs``, ``MaxRecords``,
        ``MaxNodes``, ``MaxProcs``, ``MaxQueues``, ``Queue`` and a ``Note`` naming the
        model, the generator and the seed.
    """
    return SWFHeader.from_fields({
        "Version": "2.2",
        "Computer": f"synthetic machine of {nb_cores} processors",
        "Acknowledge": "Uri Lublin and Dror G. Feitelson (model)",
        "Information": "U. Lublin, D. G. Feitelson, J. Parallel Distrib. Comput. 63(11), 2003",
        "Conversion": f"hdeeprm.workload.generators.lublin (seed {seed})",
        "MaxJobs": nb_jobs,
        "MaxRecords": nb_jobs,
        "Preemption": "No",
        "MaxNodes": nb_cores,
        "MaxProcs": nb_cores,
        **({"MaxQueues": 2, "Queue": "0 interactive\n1 batch"} if job_types else {}),
        "Note": (("batch and interactive job types\n" if job_types else
                  "whole-sample parameters (no job types)\n") +
                 "requested time (field 9) is unknown: the model has no user estimates\n"
                 "submit times are seconds from midnight of the first day"),
    }, comments=[""])


def generate_lublin_swf(path: str | os.PathLike, nb_jobs: int, nb_cores: int, *, seed: int = 0,
                        job_types: bool = False) -> int:
    """Write a generated Lublin & Feitelson trace as an SWF file (``.gz`` compresses).

    Args:
        path: Output file.
        nb_jobs: Number of jobs.
        nb_cores: Processors of the machine.
        seed: Seed; the same arguments give a byte-identical file.
        job_types: As in :func:`iter_lublin`.

    Returns:
        The number of jobs written.

    Raises:
        OptionsError: ``nb_jobs`` < 0 or ``nb_cores`` < 1.
    """
    records = iter_lublin(nb_jobs, nb_cores, seed=seed, job_types=job_types)
    header = lublin_header(nb_jobs, nb_cores, seed, job_types)
    return write_swf(path, records, header)
