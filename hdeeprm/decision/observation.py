"""Observations of the workload manager's state (HDeepRM's definitions; ``docs/model.rst``, "Observations").

An observation is a float32 vector in [0, 1] built from a
:class:`~hdeeprm.decision.view.StateView`: the heterogeneity layer (node
memory, processor bandwidth, core pstates), the running jobs' progress and
the queue of pending jobs. Three types from the original HDeepRM
(Herrera et al. 2019), and a compact one of this project's:

``normal``
    ``[node free memory fraction] * nb_nodes``,
    ``[processor remaining bandwidth fraction] * nb_processors``,
    ``[speed / G, power / P, remaining work fraction] * nb_cores`` (interleaved
    core by core), then the 21 queue values.
``small``
    ``normal`` without the per-core values.
``minimal``
    the 21 queue values only.
``generations``
    per processor generation (the platform's processors grouped by nominal speed and power, slowest first;
    :func:`processor_generations`), four values: the busy fraction of its cores, the mean remaining work
    fraction of its cores (free cores count 0), and over its processors the mean free memory fraction of
    their nodes and the mean remaining bandwidth fraction; then the 21 queue values. A compact, platform-size-free
    summary of the heterogeneity layer (``4 G + 21`` values for G generations), this project's, not the
    original HDeepRM's.

The **21 queue values**: for the requested time (s), the requested cores, the
memory per core (MB) and the memory bandwidth per core (GB/s) of the pending
jobs, in that order, the minimum, 25th percentile, median, 75th percentile and
maximum (numpy's default "linear" percentile method), each divided by the 99th
percentile of that quantity over the whole workload and clipped to [0, 1]
(20 values); then the **queue variation** with sensitivity ``s``:

* 1.0 when the queue was empty at the previous decision and now is not;
* 0.5 when it was and is empty (no change); 0.0 when it emptied;
* else ``clip(((now − before) / min(now, before) + s) / (2 s), 0, 1)``,

where *before* is the queue length at the previous decision
(:attr:`StateView.queue_before <hdeeprm.decision.view.StateView.queue_before>`). With an empty queue the 20 order
statistics are 0.

Speed and power factors per pstate come from :mod:`hdeeprm.platform.hierarchy`
(:data:`~hdeeprm.platform.hierarchy.PSTATE_SPEED_FACTORS`,
:data:`~hdeeprm.platform.hierarchy.PSTATE_POWER_FACTORS`), the same table the engine
uses for energy. A requested time that is unknown (≤ 0 and no walltime) counts
as 0 s; a 99th percentile of 0 (e.g. no job requests memory) leaves that
quantity unscaled, so its values are all 0.
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from hdeeprm.compiled import RemadeOnCopy
from hdeeprm.decision.view import StateView
from hdeeprm.errors import OptionsError
from hdeeprm.platform.hierarchy import PSTATE_POWER_FACTORS, PSTATE_SPEED_FACTORS, ResourceHierarchy
from hdeeprm.registry import Registry
from hdeeprm.workload.model import Workload

try:   # the compiled order statistics (queue_kernel.pyx), built by the install when a C compiler is there
    from hdeeprm.decision.queue_kernel import QueueStats
except ImportError:   # not built: the NumPy path (same values)
    QueueStats = None

#: Number of queue values at the end of every observation.
N_QUEUE_VALUES = 21
#: Percentiles of the pending jobs' quantities in the queue values, as fractions.
QUEUE_QUANTILES = (0.0, 0.25, 0.5, 0.75, 1.0)
#: Percentile of a quantity over the workload that scales its queue values.
NORMALISER_PERCENTILE = 99.0

#: Observation types: name -> the parts before the queue values ("resources": node memory
#: and processor bandwidth fractions; "cores": the per-core values).
OBSERVATIONS: Registry[tuple[str, ...]] = Registry("observation type")
OBSERVATIONS.register("normal", ("resources", "cores"))
OBSERVATIONS.register("small", ("resources",))
OBSERVATIONS.register("minimal", ())
OBSERVATIONS.register("generations", ("generations",))
#: The observation type used when none is named.
DEFAULT_OBSERVATION = "normal"
#: Sensitivity s of the queue variation when none is given (the original HDeepRM's).
DEFAULT_QUEUE_SENSITIVITY = 0.05
#: Per pstate: (speed factor, power factor), float32, the first two per-core values of the ``normal`` observation.
_SPEED_POWER = np.column_stack((PSTATE_SPEED_FACTORS, PSTATE_POWER_FACTORS)).astype(np.float32)


def requested_times(workload: Workload) -> np.ndarray:
    """The requested time the scheduler sees for every job, in seconds.

    ``job.requested_time`` (SWF field 9) when positive, else the walltime when
    positive, else 0 (unknown).

    Returns:
        float64, shape (nb_jobs,), by job index.
    """
    return job_quantities(workload)[:, 0].copy()


_QUANTITIES = operator.attrgetter("requested_time", "walltime", "res", "mem", "mem_bw")


def job_quantities(workload: Workload) -> np.ndarray:
    """Requested time (s, :func:`requested_times`), cores, memory (MB) and bandwidth (GB/s) per core of every job.

    Returns:
        float64, shape (nb_jobs, 4), by job index.
    """
    raw = np.array(list(map(_QUANTITIES, workload.jobs)), dtype=np.float64).reshape(len(workload.jobs), 5)
    requested, walltime = raw[:, 0], raw[:, 1]
    q = np.empty((len(workload.jobs), 4), dtype=np.float64)
    # requested time unless <= 0 (NaN stays), then the walltime when > 0, else 0
    q[:, 0] = np.where(requested <= 0.0, np.where(walltime > 0.0, walltime, 0.0), requested)
    q[:, 1:] = raw[:, 2:]
    return q


def queue_normalisers(workload: Workload, quantities: np.ndarray | None = None) -> np.ndarray:
    """99th percentile over the workload of each queue quantity (1.0 where it is 0).

    Args:
        workload: The jobs.
        quantities: ``job_quantities(workload)`` when already computed, or None.

    Returns:
        float64, shape (4,): seconds, cores, MB, GB/s.
    """
    q = job_quantities(workload) if quantities is None else quantities
    if q.shape[0] == 0:
        return np.ones(4)
    p = np.percentile(q, NORMALISER_PERCENTILE, axis=0)
    return np.where(p > 0.0, p, 1.0)


def queue_variation(now: int, before: int, sensitivity: float) -> float:
    """The queue-variation observation (see the module docstring).

    Args:
        now: Pending jobs now.
        before: Pending jobs at the previous decision.
        sensitivity: s > 0; a relative change of ±s maps to 1 / 0.

    Returns:
        A value in [0, 1]; 0.5 means no change.
    """
    if before == 0:
        return 1.0 if now > 0 else 0.5
    if now == 0:
        return 0.0
    v = ((now - before) / min(now, before) + sensitivity) / (2.0 * sensitivity)
    return 0.0 if v < 0.0 else (1.0 if v > 1.0 else v)


class Observer(RemadeOnCopy):
    """Builds the observation of a :class:`~hdeeprm.decision.view.StateView` (callable).

    The per-workload scaling (99th percentiles) and the per-platform tables are
    computed once here; a call costs one sort of the queue's (n, 4) quantities.

    Args:
        kind: ``"normal"``, ``"small"`` or ``"minimal"``.
        hierarchy: The platform.
        workload: The workload (its jobs' indices key the quantity table).
        queue_sensitivity: s of the queue variation, > 0.

    Attributes:
        size: Length of the observation vector.
        kind: The observation type.

    Raises:
        OptionsError: unknown ``kind`` (lists the valid ones) or ``queue_sensitivity`` ≤ 0.
    """

    def __init__(self, kind: str, hierarchy: ResourceHierarchy, workload: Workload,
                 queue_sensitivity: float = DEFAULT_QUEUE_SENSITIVITY) -> None:
        parts = OBSERVATIONS[kind]
        if not queue_sensitivity > 0.0:
            raise OptionsError(f"queue_sensitivity must be > 0, got {queue_sensitivity}")
        self.kind = kind
        self.hierarchy = h = hierarchy
        self.sensitivity = float(queue_sensitivity)
        # Quantities are >= 0, so after scaling only the upper clip at 1 is needed.
        # float32 like the observation, so no cast is needed when writing it.
        quantities = job_quantities(workload)
        self._scaled_t = np.ascontiguousarray((quantities / queue_normalisers(workload, quantities)).T,
                                              dtype=np.float32)
        nb_res = 0
        self._generations = "generations" in parts
        if "resources" in parts or self._generations:
            mem = np.asarray(h.node_memory, dtype=np.float64)
            bw = np.asarray(h.processor_mem_bw, dtype=np.float64)
            self._inv_mem = np.where(np.isfinite(mem) & (mem > 0), 1.0 / np.where(mem > 0, mem, 1.0), 0.0)
            self._mem_unbounded = ~(np.isfinite(mem) & (mem > 0))
            self._inv_bw = np.where(np.isfinite(bw) & (bw > 0), 1.0 / np.where(bw > 0, bw, 1.0), 0.0)
            self._bw_unbounded = ~(np.isfinite(bw) & (bw > 0))
            self._any_mem_unbounded = bool(self._mem_unbounded.any())
            self._any_bw_unbounded = bool(self._bw_unbounded.any())
            values = np.empty(h.nb_nodes + h.nb_processors)
            self._fractions = (values, values[:h.nb_nodes], values[h.nb_nodes:])
            nb_res = 0 if self._generations else values.size
        self._cores = "cores" in parts
        if self._cores or self._generations:
            # remaining work fraction by job index, written for the running jobs at each call; the extra
            # last entry stays 0 for the free cores (job -1 in ResourceState.core_job)
            self._left = np.zeros(len(workload.jobs) + 1, dtype=np.float64)
        if self._cores:
            nb_res += 3 * h.nb_cores
        if self._generations:
            self._core_gen, self._proc_gen, nb_gen = processor_generations(h)
            self._core_count = np.bincount(self._core_gen, minlength=nb_gen).astype(np.float64)
            self._proc_count = np.bincount(self._proc_gen, minlength=nb_gen).astype(np.float64)
            nb_res = 4 * nb_gen
        self._n_res = nb_res
        self.size = nb_res + N_QUEUE_VALUES
        self._stats = self._compile()

    _COMPILED = "_stats"

    def _compile(self):
        """The compiled order statistics on this observer's table, or None (not built: the NumPy path)."""
        return None if QueueStats is None else QueueStats(self._scaled_t, percentile_positions)

    def __setstate__(self, state: dict) -> None:
        """After copy.deepcopy or pickle: the memory and bandwidth parts are views of the one buffer again.

        NumPy copies each view on its own, which would leave the buffer that is clipped into the
        observation unwritten (a deep-copied environment would observe stale fractions).
        """
        super().__setstate__(state)   # the compiled statistics too
        if "_fractions" in state:
            values, n = self._fractions[0], self.hierarchy.nb_nodes
            self._fractions = (values, values[:n], values[n:])

    def queue_values(self, view: StateView, out: np.ndarray) -> None:
        """Write the 21 queue values of ``view``'s queue into ``out`` (float32, shape (21,))."""
        queue, before = view.queue, view.queue_before
        n = len(queue)
        if n == 0:
            out[:20] = 0.0
        elif n == 1:
            out[:20].reshape(4, 5)[:] = self._scaled_t[:, queue[0].index, None]
            np.minimum(out[:20], np.float32(1.0), out=out[:20])
        elif self._stats is not None:
            self._stats.fill(view.queue_indices(queue), out)
        else:
            v = self._scaled_t.take(view.queue_indices(queue), axis=1)
            v.sort(axis=1)
            flat = v.ravel()
            lower, upper, w = percentile_positions(n)
            stats = flat.take(lower)
            if upper is not None:
                d = flat.take(upper)
                d -= stats
                d *= w
                stats += d
            np.minimum(stats, np.float32(1.0), out=out[:20])
        out[20] = queue_variation(n, before, self.sensitivity)

    def __call__(self, view: StateView) -> np.ndarray:
        """The observation of ``view`` now.

        Args:
            view: The decision system's state.

        Returns:
            float32, shape (size,), every value in [0, 1].
        """
        out = np.empty(self.size, dtype=np.float32)
        if self._generations:
            self._generation_values(view, out)
        elif self._n_res:
            self._resources(view, out)
        self.queue_values(view, out[self._n_res:])
        return out

    def _resource_fractions(self, view: StateView) -> np.ndarray:
        """Free memory fraction per node, then remaining bandwidth fraction per processor, float64, unclipped."""
        st = view.resources
        values, mem, bw = self._fractions   # one float64 buffer, clipped into the observation at once
        np.multiply(st.node_free_mem, self._inv_mem, out=mem)
        if self._any_mem_unbounded:
            mem[self._mem_unbounded] = 1.0
        np.multiply(st.processor_used_bw, self._inv_bw, out=bw)
        np.subtract(1.0, bw, out=bw)
        if self._any_bw_unbounded:
            bw[self._bw_unbounded] = 1.0
        return values

    def _work_left(self, view: StateView) -> np.ndarray | None:
        """Remaining work fraction of each core's job (free cores 0), float64 (nb_cores,); None when none runs."""
        running = view.running
        if not running:
            return None
        progress, left = view.progress, self._left
        left[list(running)] = [1.0 - progress(job) for job, _ in running.values()]
        return left.take(view.resources.core_job)   # a free core's -1 reads the last entry, 0

    def _resources(self, view: StateView, out: np.ndarray) -> None:
        h = self.hierarchy
        nn, npr = h.nb_nodes, h.nb_processors
        clip_unit(self._resource_fractions(view), out[:nn + npr])
        if not self._cores:
            return
        cores = out[nn + npr:nn + npr + 3 * h.nb_cores].reshape(h.nb_cores, 3)
        cores[:, :2] = _SPEED_POWER.take(view.resources.core_pstate, axis=0)
        left = self._work_left(view)
        cores[:, 2] = 0.0 if left is None else left

    def _generation_values(self, view: StateView, out: np.ndarray) -> None:
        st, nb = view.resources, self._core_count.size
        left = self._work_left(view)
        values = np.zeros((4, nb))
        values[0] = np.bincount(self._core_gen, weights=st.core_job >= 0, minlength=nb) / self._core_count
        if left is not None:
            values[1] = np.bincount(self._core_gen, weights=left, minlength=nb) / self._core_count
        # each node's and processor's fraction clipped as the normal observation clips it, then averaged over the
        # generation's processors (a node's memory counts once per processor it holds)
        fractions = clip_unit(self._resource_fractions(view), np.empty(self._fractions[0].size))
        nn = self.hierarchy.nb_nodes
        values[2] = np.bincount(self._proc_gen, weights=fractions[:nn].take(self.hierarchy.processor_node),
                                minlength=nb) / self._proc_count
        values[3] = np.bincount(self._proc_gen, weights=fractions[nn:], minlength=nb) / self._proc_count
        clip_unit(values.T.ravel(), out[:4 * nb])


def processor_generations(hierarchy: ResourceHierarchy) -> tuple[np.ndarray, np.ndarray, int]:
    """The platform's processor generations: processors grouped by nominal (speed, power), slowest first.

    Args:
        hierarchy: The platform.

    Returns:
        ``(core_generation, processor_generation, nb_generations)``: int64 arrays of shapes (nb_cores,) and
        (nb_processors,), and the number of generations.
    """
    keys = np.column_stack((hierarchy.processor_speed, hierarchy.processor_power))
    _, generation = np.unique(keys, axis=0, return_inverse=True)
    generation = generation.reshape(-1).astype(np.int64)
    return generation[hierarchy.core_processor], generation, int(generation.max(initial=-1)) + 1


@functools.lru_cache(maxsize=None)
def percentile_positions(n: int) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """Flat gather indices and weights of :data:`QUEUE_QUANTILES` in a sorted (4, n) array.

    NumPy's "linear" percentile method: position q (n - 1), interpolated between its floor and the next element.

    Args:
        n: Queue length, >= 1.

    Returns:
        ``(lower, upper, weight)`` of shape (20,), in output order (quantity-major): intp, intp and float32 (the
        weight of ``upper``); ``upper`` and ``weight`` are None when every quantile falls on an element. Cached:
        do not modify them.
    """
    x = np.asarray(QUEUE_QUANTILES) * (n - 1)
    lo = np.floor(x).astype(np.intp)
    w = x - lo
    rows = (np.arange(4)[:, None] * n)
    lower = (rows + lo).ravel()
    if np.any(w > 0.0):
        upper = (rows + np.minimum(lo + 1, n - 1)).ravel()
        return lower, upper, np.tile(w, 4).astype(np.float32)
    return lower, None, None


def clip_unit(values: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Clip ``values`` into [0, 1], NaN becoming 0: every environment's observations stay in their Box.

    Two NaN-ignoring ufunc calls (:func:`numpy.fmax` then :func:`numpy.fmin`; np.clip's Python wrapper
    costs more here, and keeps NaN).

    Args:
        values: Any float array.
        out: Where to write (float32 for an observation); None: a new float32 array.

    Returns:
        ``out``: ``values`` clipped to [0, 1], NaN and -inf as 0, +inf as 1.
    """
    if out is None:
        out = np.empty(np.shape(values), dtype=np.float32)
    np.fmax(values, 0.0, out=out)
    np.fmin(out, 1.0, out=out)
    return out


def clip_unit_one(value: float) -> float:
    """:func:`clip_unit` of one Python float: in [0, 1], NaN and -inf as 0, +inf as 1 (the same value)."""
    if value != value or value < 0.0:
        return 0.0
    return 1.0 if value > 1.0 else value


def make_observer(kind: str, hierarchy: ResourceHierarchy, workload: Workload,
                  queue_sensitivity: float = DEFAULT_QUEUE_SENSITIVITY) -> Observer:
    """The observation builder ``observer(view) -> np.ndarray`` (float32, shape (observer.size,)).

    See :class:`Observer` and the module docstring.

    Raises:
        OptionsError: unknown ``kind`` or ``queue_sensitivity`` ≤ 0.
    """
    return Observer(kind, hierarchy, workload, queue_sensitivity)
