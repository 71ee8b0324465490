"""The heterogeneity layer's dynamic state: memory, bandwidth and pstates.

HDeepRM's contention model (the original HDeepRM, Herrera et al. 2019;
the project's ``docs/model.rst``, "Heterogeneity layer"):

* **Memory** is a hard per-node limit: a core is a candidate for a job only if
  its node still has ``job.mem`` MB free; each allocated core takes
  ``job.mem`` MB from its node until the job ends.
* **Memory bandwidth** is a soft per-processor limit: each busy core takes
  ``job.mem_bw`` GB/s from its processor; while the sum exceeds the
  processor's bandwidth every busy core of that processor runs in pstate P1
  (0.75 G) instead of P0 (G).
* Idle cores of a processor with at least one busy core are in P2; every core
  of a fully idle processor is in P3 (the initial state).

The model is a replaceable component: a
:class:`~hdeeprm.decision.contention_models.ContentionModel` decides the pstate of the
cores of one processor (:mod:`hdeeprm.decision.contention_models`, re-exported here);
:class:`ResourceState` keeps the bookkeeping and reports the pstate switches the
simulator must apply.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import compress

import numpy as np

from hdeeprm.compiled import RemadeOnCopy, path_name
from hdeeprm.decision.contention_models import (CONTENTION_MODELS, DEFAULT_CONTENTION_MODEL, ContentionModel,
                                                NoContention, make_contention_model, register_contention_model)
from hdeeprm.platform.hierarchy import P3, ResourceHierarchy
from hdeeprm.simulation.runs import ARRAYS_ABOVE, RUNS, HostRuns
from hdeeprm.workload.model import Job

try:   # the compiled small-job path (contention_kernel.pyx), built by the install when a C compiler is there
    from hdeeprm.decision.contention_kernel import SmallJobKernel
except ImportError:   # not built: the pure-Python path below, which gives the same results
    SmallJobKernel = None

#: The contention models the compiled kernel knows, by their exact class: True for "none" (no contention).
KERNEL_MODELS = {ContentionModel: False, NoContention: True}


def bookkeeping_path() -> str:
    """Which small-job path this install runs (benchmarks print it beside their figures)."""
    return path_name(SmallJobKernel, "contention_kernel")


#: Pstate switches of more cores than this are written into ``core_pstate`` with NumPy.
MANY_SET = 24
#: ResourceState's memoryviews of its arrays in its array mode: view -> array attribute.
_VIEWS = {"_over_v": "_over", "_events_v": "_over_events", "_seconds_v": "_over_seconds", "_since_v": "_over_since",
          "_run": "_run_np", "_idle": "_idle_np", "_free": "core_free", "_busy": "processor_busy",
          "_used": "processor_used_bw"}


class ResourceState(RemadeOnCopy):
    """Free cores, node memory, processor bandwidth and core pstates over time.

    Args:
        hierarchy: The static platform description.
        model: The contention model; :class:`ContentionModel` (HDeepRM's) by default.

    Attributes:
        core_free: bool, shape (nb_cores,): no job runs on the core.
        core_job: int64, shape (nb_cores,): index of the job on the core, -1 if free.
        core_pstate: int64, shape (nb_cores,): current pstate (P0..P3).
        node_free_mem: float64, shape (nb_nodes,): free memory per node in MB.
        processor_busy: int64, shape (nb_processors,): busy cores per processor.
        processor_used_bw: float64, shape (nb_processors,): requested bandwidth per processor, GB/s.
        nb_free: number of free cores.
        overutilization: per processor, [number of times it became over-subscribed,
            seconds spent over-subscribed], float64, shape (nb_processors, 2) (a property).
    """

    def __init__(self, hierarchy: ResourceHierarchy, model: ContentionModel | None = None) -> None:
        self.hierarchy = h = hierarchy
        self.model = model or ContentionModel()
        self.core_free = np.ones(h.nb_cores, dtype=bool)
        self.core_job = np.full(h.nb_cores, -1, dtype=np.int64)
        self.core_pstate = np.full(h.nb_cores, P3, dtype=np.int64)
        self.node_free_mem = np.asarray(h.node_memory, dtype=np.float64).copy()
        self.processor_busy = np.zeros(h.nb_processors, dtype=np.int64)
        self.processor_used_bw = np.zeros(h.nb_processors, dtype=np.float64)
        self.nb_free = h.nb_cores
        n = h.nb_processors
        run0, idle0 = self.model.pstates(0, 0.0, 1.0)
        compiled = self._compiled()
        # The small-job path reads and writes the per-core and per-processor state one by one: lists (the
        # fastest) on a platform of up to ARRAYS_ABOVE cores, kept in step with core_free, processor_busy
        # and processor_used_bw; above, memoryviews of those arrays (a little slower one by one, but
        # nothing to keep in step when a large job changes thousands of cores at once); the compiled kernel's.
        self._arrays = compiled or h.nb_cores > ARRAYS_ABOVE
        if self._arrays:
            # Over-utilization per processor: whether one is open, events, seconds, start of the open one
            # (NaN: none open); the pstates the model gave the busy and the idle cores at the last update.
            self._over, self._over_events = np.zeros(n, dtype=bool), np.zeros(n, dtype=np.int64)
            self._over_seconds, self._over_since = np.zeros(n), np.full(n, math.nan)
            self._run_np, self._idle_np = np.full(n, run0, dtype=np.int64), np.full(n, idle0, dtype=np.int64)
            self._over_v, self._events_v = memoryview(self._over), memoryview(self._over_events)
            self._seconds_v, self._since_v = memoryview(self._over_seconds), memoryview(self._over_since)
            self._run, self._idle = memoryview(self._run_np), memoryview(self._idle_np)
            self._free = memoryview(self.core_free)
            self._busy, self._used = memoryview(self.processor_busy), memoryview(self.processor_used_bw)
        else:
            self._over_v, self._events_v, self._seconds_v, self._since_v = [False] * n, [0] * n, [0.0] * n, \
                [math.nan] * n
            self._run, self._idle = [run0] * n, [idle0] * n
            self._free: list[bool] = [True] * h.nb_cores
            self._busy, self._used = [0] * n, [0.0] * n
        self._node: list[int] = np.asarray(h.processor_node).tolist()
        self._proc_of: list[int] = np.asarray(h.core_processor).tolist()
        self._first: list[int] = np.asarray(h.processor_first_core).tolist()
        self._count: list[int] = np.asarray(h.processor_n_cores).tolist()
        self._mem_bw: list[float] = np.asarray(h.processor_mem_bw, dtype=np.float64).tolist()
        self._first_np = np.asarray(h.processor_first_core, dtype=np.int64)
        self._count_np = np.asarray(h.processor_n_cores, dtype=np.int64)
        self._mem_bw_np = np.asarray(h.processor_mem_bw, dtype=np.float64)
        self._empty_processors = bool((self._count_np == 0).any())
        # Every processor holds one core (the IBM SP2 platforms): a job's processors are its cores' own.
        self._one_core_each = all(n == 1 for n in self._count)
        #: The compiled small-job path, or None (not built, or a contention model it does not know).
        self.kernel = self._compile()

    _COMPILED = "kernel"

    def _compiled(self) -> bool:   # the compiled kernel is built and knows this state's contention model
        return SmallJobKernel is not None and type(self.model) in KERNEL_MODELS

    def _compile(self):   # the compiled kernel over this state's arrays (it needs the array mode)
        return SmallJobKernel(self, KERNEL_MODELS[type(self.model)], RUNS) if self._arrays and self._compiled() \
            else None

    def __getstate__(self) -> dict:
        """For copy.deepcopy and pickle: the arrays, without their memoryviews and the kernel (remade on load)."""
        state = super().__getstate__()
        for view in _VIEWS if self._arrays else ():
            del state[view]
        return state

    def __setstate__(self, state: dict) -> None:
        if state["_arrays"]:   # the memoryviews again, over the copy's own arrays, before its kernel
            state = {**state, **{view: memoryview(state[array]) for view, array in _VIEWS.items()}}
        super().__setstate__(state)

    def candidates(self, mem: float) -> np.ndarray:
        """Cores a job needing ``mem`` MB per core may take now, bool, shape (nb_cores,)."""
        if mem <= 0.0:
            return self.core_free
        return self.core_free & (self.node_free_mem[self.hierarchy.core_node] >= mem)

    def allocate(self, job: Job, cores: np.ndarray | HostRuns, now: float) -> dict[int, list[int] | HostRuns]:
        """Mark ``cores`` busy with ``job`` and return the pstate switches this causes.

        Args:
            job: The job being started.
            cores: Core ids, int, shape (job.res,), or a :class:`~hdeeprm.simulation.runs.HostRuns` of them;
                they must be candidates.
            now: Current time in seconds (for the over-utilization record).

        Returns:
            ``{pstate: core ids}`` of cores whose pstate changes, pstates ascending, ids ascending: a list, or
            a :class:`~hdeeprm.simulation.runs.HostRuns` above :data:`~hdeeprm.simulation.runs.RUNS` cores.
        """
        if len(cores) > RUNS:   # a large job: by the runs of its cores (see _load_runs)
            runs = cores if type(cores) is HostRuns else HostRuns.of(cores)
            self._mark_runs(runs, False, job.index)
            self.nb_free -= len(runs)
            return self._load_runs(job, runs, 1, now)
        cl = cores.tolist()
        self.nb_free -= len(cl)
        if self.kernel is not None:
            return self.kernel.load(cl, 1, job.mem, job.mem_bw, now, job.index)
        self._mark(cores, cl, False, job.index)
        return self._load(job, cl, cores, 1, now)

    def release(self, job: Job, cores: Sequence[int] | HostRuns, now: float) -> dict[int, list[int] | HostRuns]:
        """Free the cores of a finished ``job``; returns the pstate switches this causes (as :meth:`allocate`)."""
        if len(cores) > RUNS:
            runs = cores if type(cores) is HostRuns else HostRuns.of(np.asarray(cores, dtype=np.int64))
            self._mark_runs(runs, True, -1)
            self.nb_free += len(runs)
            return self._load_runs(job, runs, -1, now)
        cl = cores.tolist() if type(cores) is np.ndarray else list(cores)
        self.nb_free += len(cl)
        if self.kernel is not None:
            return self.kernel.load(cl, -1, job.mem, job.mem_bw, now, job.index)
        cores = np.asarray(cl, dtype=np.int64)
        self._mark(cores, cl, True, -1)
        return self._load(job, cl, cores, -1, now)

    def _mark(self, cores: np.ndarray, cl: list[int], free: bool, job: int) -> None:
        """Set the free flag and the job index of ``cores`` (``cl`` = the same as a list)."""
        n = len(cl)
        if n > 2:
            lo = min(cl)
            if max(cl) - lo + 1 == n:   # distinct cores: one run, by slices
                self.core_free[lo:lo + n] = free
                self.core_job[lo:lo + n] = job
                if not self._arrays:
                    self._free[lo:lo + n] = [free] * n
                return
        self.core_free[cores] = free
        self.core_job[cores] = job
        if not self._arrays:
            flags = self._free
            for c in cl:
                flags[c] = free

    def _mark_runs(self, runs: HostRuns, free: bool, job: int) -> None:
        """:meth:`_mark` of a large core set, by slices over its runs."""
        core_free, core_job = self.core_free, self.core_job
        for a, b in zip(runs.starts, runs.stops):
            core_free[a:b] = free
            core_job[a:b] = job
            if not self._arrays:
                self._free[a:b] = [free] * (b - a)

    def _load(self, job: Job, cl: list[int], cores: np.ndarray, sign: int,
              now: float) -> dict[int, list[int]]:
        """Add (sign 1) or remove (sign -1) ``job``'s memory and bandwidth on its cores.

        Plain Python over the job's processors for a job of up to
        :data:`~hdeeprm.simulation.runs.RUNS` cores (most are), where NumPy's per-call cost would
        dominate; only cores whose pstate really changes are visited (see :meth:`_settle`). Larger
        jobs go by :meth:`_load_runs`.

        Args:
            job: The job.
            cl: Its core ids (list).
            cores: The same, int64 array.
            sign: 1 (start) or -1 (end).
            now: Current time (s).

        Returns:
            The pstate switches this causes, ``{pstate: sorted core ids}``, pstates ascending.
        """
        proc_of = self._proc_of
        p0 = proc_of[cl[0]]
        changes: dict[int, list[int]] = {}
        first = self._first[p0]
        if min(cl) >= first and max(cl) < first + self._count[p0]:   # processors hold consecutive cores
            self._load_processor(job, p0, cl, sign, now, changes)
        elif self._one_core_each:
            self._load_whole_processors(job, cl, sign, now, changes)
        else:
            per_proc: dict[int, list[int]] = {}
            for c in cl:
                p = proc_of[c]
                mine = per_proc.get(p)
                if mine is None:
                    per_proc[p] = [c]
                else:
                    mine.append(c)
            self._load_processors(job, per_proc, sign, now, changes)
        core_pstate = self.core_pstate
        for ps, cs in changes.items():
            cs.sort()
            if cs[-1] - cs[0] + 1 == len(cs) > 2:   # distinct cores: one run, one slice
                core_pstate[cs[0]:cs[-1] + 1] = ps
            elif len(cs) > MANY_SET:
                core_pstate[cs] = ps
            else:   # a loop beats NumPy's fancy indexing on a few cores
                for c in cs:
                    core_pstate[c] = ps
        if len(changes) > 1:
            return dict(sorted(changes.items()))
        return changes

    def _load_runs(self, job: Job, runs: HostRuns, sign: int, now: float) -> dict[int, list[int] | HostRuns]:
        """:meth:`_load` of a large job, by the runs of its cores: NumPy over its processors.

        The job's cores on each processor come from the runs (processors hold consecutive cores,
        in processor order); memory and bandwidth are added core by core (``numpy.add.at``, as
        :meth:`_load_processors`); a processor the job holds whole switches all its cores at once
        (they were all in one pstate), the processors it shares are looked at core by core.

        Returns:
            As :meth:`_load`, each pstate's cores ascending: a :class:`~hdeeprm.simulation.runs.HostRuns`
            above :data:`~hdeeprm.simulation.runs.RUNS` cores, else a list.
        """
        h = self.hierarchy
        first_np, count_np, first_l, count_l, proc_of = self._first_np, self._count_np, self._first, self._count, \
            self._proc_of
        spans, parts = [], []   # per run: its processors (first, last + 1) and the job's cores on each
        for a, b in zip(runs.starts, runs.stops):
            pa, pb = proc_of[a], proc_of[b - 1]
            mine = count_np[pa:pb + 1].copy()
            if pa == pb:
                mine[0] = b - a
            else:
                mine[0], mine[-1] = first_l[pa] + count_l[pa] - a, b - first_l[pb]
            spans.append((pa, pb + 1))
            parts.append(mine)
        if len(spans) == 1:   # one run: its processors are a slice
            (pa, pb), mine = spans[0], parts[0]
            idx, procs = slice(pa, pb), np.arange(pa, pb)
        else:
            procs, mine = np.concatenate([np.arange(pa, pb) for pa, pb in spans]), np.concatenate(parts)
            if not all(spans[r][0] < spans[r + 1][0] for r in range(len(spans) - 1)):   # runs not ascending
                order = np.argsort(procs, kind="stable")
                procs, mine = procs[order], mine[order]
            same = procs[1:] == procs[:-1]   # a processor holding cores of several runs
            if same.any():
                head = np.flatnonzero(np.concatenate(([True], ~same)))
                mine, procs = np.add.reduceat(mine, head), procs[head]
            idx = procs
        if self._empty_processors:   # a processor without cores, inside a run's range
            keep = mine > 0
            procs, mine = procs[keep], mine[keep]
            idx = procs
        self.processor_busy[idx] += sign * mine
        nb_busy = self.processor_busy[idx]
        if job.mem > 0.0:
            np.add.at(self.node_free_mem, h.processor_node[np.repeat(procs, mine)], -sign * job.mem)
        if job.mem_bw > 0.0:
            np.add.at(self.processor_used_bw, np.repeat(procs, mine), sign * job.mem_bw)
            # Bandwidth sums come back to zero exactly only up to rounding.
            self.processor_used_bw[procs[nb_busy == 0]] = 0.0
        used, cap = self.processor_used_bw[idx], self._mem_bw_np[idx]
        self._record_many(procs, (nb_busy > 0) & (used > cap), now)
        run, idle = self.model.pstates_many(nb_busy, used, cap)
        if self._arrays:
            self._run_np[idx], self._idle_np[idx] = run, idle
        else:
            self._keep_lists(procs, run, idle, nb_busy, used)
        count, first = count_np[idx], first_np[idx]
        full = mine == count   # processors the job holds whole: their cores go from one pstate to `after`
        after = run if sign > 0 else idle
        moved = np.flatnonzero(full & (after != self.core_pstate[first]))
        a, b, ps = first[moved], first[moved] + count[moved], after[moved]
        part = np.flatnonzero(~full)
        if part.size:   # processors shared with other jobs or free cores: core by core
            cores = np.concatenate([np.arange(f, f + c) for f, c in zip(first[part].tolist(), count[part].tolist())])
            wanted = np.where(self.core_free[cores], np.repeat(idle[part], count[part]),
                              np.repeat(run[part], count[part]))
            differ = wanted != self.core_pstate[cores]
            cores = cores[differ]
            a, b, ps = np.concatenate((a, cores)), np.concatenate((b, cores + 1)), np.concatenate((ps, wanted[differ]))
        return self._switches(a, b, ps)

    def _keep_lists(self, procs: np.ndarray, run: np.ndarray, idle: np.ndarray, nb_busy: np.ndarray,
                    used: np.ndarray) -> None:
        """Write the per-processor lists of ``procs`` (ascending), by slices over their runs."""
        cut = (np.flatnonzero(np.diff(procs) != 1) + 1).tolist()
        firsts, cut = procs[[0, *cut]].tolist(), [0, *cut, procs.size]
        run, idle, nb_busy, used = run.tolist(), idle.tolist(), nb_busy.tolist(), used.tolist()
        for r, p in enumerate(firsts):
            s, e = cut[r], cut[r + 1]
            q = p + e - s
            self._run[p:q], self._idle[p:q], self._busy[p:q], self._used[p:q] = run[s:e], idle[s:e], nb_busy[s:e], \
                used[s:e]

    def _switches(self, a: np.ndarray, b: np.ndarray, ps: np.ndarray) -> dict[int, list[int] | HostRuns]:
        """Apply the ranges of cores ``[a, b)`` whose pstate becomes ``ps`` to :attr:`core_pstate`.

        Returns:
            ``{pstate: cores}`` as :meth:`_load_runs` returns it.
        """
        changes: dict[int, list[int] | HostRuns] = {}
        if not a.size:
            return changes
        order = np.argsort(a)
        a, b, ps = a[order], b[order], ps[order]
        core_pstate = self.core_pstate
        present = np.flatnonzero(np.bincount(ps)).tolist()   # pstates present, ascending
        for p in present:
            if len(present) == 1:
                pa, pb = a, b
            else:
                mine = ps == p
                pa, pb = a[mine], b[mine]
            split = np.flatnonzero(pa[1:] != pb[:-1]) + 1   # adjacent ranges make one run
            starts, stops = pa[[0, *split.tolist()]].tolist(), pb[[*(split - 1).tolist(), pb.size - 1]].tolist()
            for s, e in zip(starts, stops):
                core_pstate[s:e] = p
            n = int((pb - pa).sum())
            if n > RUNS:
                changes[p] = HostRuns(starts, stops)
            else:
                changes[p] = [c for s, e in zip(starts, stops) for c in range(s, e)]
        return changes

    def _load_processor(self, job: Job, p: int, cores: list[int], sign: int, now: float,
                        changes: dict[int, list[int]]) -> None:
        """:meth:`_load` for a job whose ``cores`` are all on processor ``p``."""
        k = len(cores)
        busy = self._busy[p] + sign * k
        self.processor_busy[p] = self._busy[p] = busy
        if job.mem > 0.0:
            self.node_free_mem[self._node[p]] -= sign * k * job.mem
        if job.mem_bw > 0.0:
            # Bandwidth sums come back to zero exactly only up to rounding.
            self.processor_used_bw[p] = self._used[p] = self._used[p] + sign * k * job.mem_bw if busy else 0.0
        self._settle(p, busy, cores, sign, now, changes)

    def _load_processors(self, job: Job, per_proc: dict[int, list[int]], sign: int, now: float,
                         changes: dict[int, list[int]]) -> None:
        """:meth:`_load` for a job spread over several processors (``{processor: its cores}``).

        Memory and bandwidth are added core by core (as ``numpy.add.at`` over the job's cores
        would), which keeps the sums of earlier versions to the last bit.
        """
        mem, bw = job.mem, job.mem_bw
        if mem > 0.0:
            self._take_memory(-sign * mem, ((p, len(cs)) for p, cs in per_proc.items()))
        busy_of, used_of, busy_list, used_list = self.processor_busy, self.processor_used_bw, self._busy, self._used
        d = sign * bw
        settle = self._settle
        for p in sorted(per_proc):
            cs = per_proc[p]
            busy = busy_list[p] + sign * len(cs)
            busy_of[p] = busy_list[p] = busy
            if bw > 0.0:
                v = used_list[p]
                for _ in cs:
                    v += d
                # Bandwidth sums come back to zero exactly only up to rounding.
                used_of[p] = used_list[p] = v if busy else 0.0
            settle(p, busy, cs, sign, now, changes)

    def _take_memory(self, d: float, counts) -> None:
        """Add ``d`` MB to a node's free memory once per core of the job there, core by core.

        ``counts`` gives ``(processor, cores of the job on it)``; the additions are repeated, not
        multiplied, which keeps the sums of earlier versions (``numpy.add.at`` over the cores) to the bit.
        """
        per_node: dict[int, int] = {}
        node_of = self._node
        for p, k in counts:
            node = node_of[p]
            per_node[node] = per_node.get(node, 0) + k
        free_mem = self.node_free_mem
        for node, k in per_node.items():
            v = float(free_mem[node])
            for _ in range(k):
                v += d
            free_mem[node] = v

    def _load_whole_processors(self, job: Job, cl: list[int], sign: int, now: float,
                               changes: dict[int, list[int]]) -> None:
        """:meth:`_load_processors` when every processor holds one core: the job takes or frees whole processors.

        The same sums, records and switches as :meth:`_load_processors` followed by :meth:`_settle`'s
        whole-processor case, in one loop over the job's processors (no dict of cores per processor,
        no :meth:`_settle` call per processor).
        """
        proc_of = self._proc_of
        procs = sorted([proc_of[c] for c in cl])
        mem, bw = job.mem, job.mem_bw
        if mem > 0.0:
            self._take_memory(-sign * mem, ((p, 1) for p in procs))
        busy_of, used_of, busy_list, used_list = self.processor_busy, self.processor_used_bw, self._busy, self._used
        run_of, idle_of, over_of, cap_of, first_of = self._run, self._idle, self._over_v, self._mem_bw, self._first
        pstates, record = self.model.pstates, self._record_one
        d = sign * bw
        starting = sign > 0
        for p in procs:
            busy = busy_list[p] + sign
            busy_of[p] = busy_list[p] = busy
            if bw > 0.0:
                # Bandwidth sums come back to zero exactly only up to rounding.
                used = used_of[p] = used_list[p] = used_list[p] + d if busy else 0.0
            else:
                used = used_list[p]
            cap = cap_of[p]
            over = busy > 0 and used > cap
            if over != over_of[p]:
                record(p, over, now)
            run, idle = pstates(busy, used, cap)
            if starting:
                before, after = idle_of[p], run
            else:
                before, after = run_of[p], idle
            run_of[p] = run
            idle_of[p] = idle
            if after != before:   # _add, inlined: one core
                listed = changes.get(after)
                if listed is None:
                    changes[after] = [first_of[p]]
                else:
                    listed.append(first_of[p])

    def _settle(self, p: int, nb_busy: int, mine: list[int], sign: int, now: float,
                changes: dict[int, list[int]]) -> None:
        """Record processor ``p``'s over-utilization and add its pstate switches to ``changes``.

        ``mine`` are the cores of ``p`` the job just took (sign 1) or freed (sign -1); every
        other busy core of ``p`` was in the model's previous pstate for busy cores, every other
        idle core in its previous pstate for idle cores. Only cores whose pstate changes are
        listed (unsorted).
        """
        used, cap = self._used[p], self._mem_bw[p]
        over = nb_busy > 0 and used > cap
        if over != self._over_v[p]:
            self._record_one(p, over, now)
        run, idle = self.model.pstates(nb_busy, used, cap)
        old_run, old_idle = self._run[p], self._idle[p]
        self._run[p], self._idle[p] = run, idle
        # Pstates of the cores ``mine`` before and after; the other cores keep their side.
        before, after = (old_idle, run) if sign > 0 else (old_run, idle)
        if len(mine) == self._count[p]:   # the job takes or frees the whole processor: no other core
            if after != before:
                self._add(changes, after, mine)
            return
        start = self._first[p]
        end = start + self._count[p]
        cores = range(start, end)
        if run != old_run:
            free = self._free
            busy_cores = [c for c in cores if not free[c]]
            if sign > 0 and after == before:
                mine_set = set(mine)
                busy_cores = [c for c in busy_cores if c not in mine_set]
            self._add(changes, run, busy_cores)
        if idle != old_idle:
            free_cores = list(compress(cores, self._free[start:end]))
            if sign < 0 and after == before:
                mine_set = set(mine)
                free_cores = [c for c in free_cores if c not in mine_set]
            self._add(changes, idle, free_cores)
        if after != before and not ((sign > 0 and run != old_run) or (sign < 0 and idle != old_idle)):
            self._add(changes, after, mine)

    @staticmethod
    def _add(changes: dict[int, list[int]], pstate: int, cores: list[int]) -> None:
        if not cores:
            return
        listed = changes.get(pstate)
        if listed is None:
            changes[pstate] = list(cores)
        else:
            listed.extend(cores)

    def _record_many(self, procs: np.ndarray, over: np.ndarray, now: float) -> None:
        """:meth:`_record_one` for processors ``procs`` (distinct), now over-subscribed or not (``over``)."""
        if not self._arrays:
            for p, o in zip(procs.tolist(), over.tolist()):
                self._record_one(p, o, now)
            return
        changed = over != self._over[procs]
        if not changed.any():
            return
        procs, over = procs[changed], over[changed]
        self._over[procs] = over
        opened, closed = procs[over], procs[~over]
        self._over_since[opened] = now
        self._over_events[opened] += 1
        self._over_seconds[closed] += now - self._over_since[closed]
        self._over_since[closed] = math.nan

    def _record_one(self, p: int, over: bool, now: float) -> None:
        if over == self._over_v[p]:
            return
        self._over_v[p] = over
        if over:
            self._since_v[p] = now
            self._events_v[p] += 1
        else:
            self._seconds_v[p] += now - self._since_v[p]
            self._since_v[p] = math.nan

    @property
    def overutilization(self) -> np.ndarray:
        """Over-utilization so far, float64, shape (nb_processors, 2) (a new array).

        Per processor: [times it became over-subscribed, seconds spent over-subscribed in the
        periods already closed].
        """
        return np.column_stack((np.array(self._events_v, dtype=np.float64),
                                np.array(self._seconds_v, dtype=np.float64)))

    def overutilization_report(self, now: float) -> dict:
        """Memory-bandwidth over-utilization per processor, for ``overutilizations.json``.

        Args:
            now: End of the simulation in seconds (open over-subscriptions are closed there).

        Returns:
            ``{"total_events": int, "total_seconds": float, "processors": {id: {"type",
            "events", "seconds"}}}`` listing only processors that were ever over-subscribed.
        """
        h = self.hierarchy
        over = self.overutilization
        seconds = over[:, 1].copy()
        since = np.array(self._since_v, dtype=np.float64)
        open_ = ~np.isnan(since)
        seconds[open_] += now - since[open_]
        procs = {}
        for p in np.flatnonzero(over[:, 0] > 0).tolist():
            procs[str(p)] = {"type": h.processor_type[p], "events": int(over[p, 0]),
                             "seconds": float(seconds[p])}
        return {"total_events": int(over[:, 0].sum()),
                "total_seconds": float(seconds.sum()), "processors": procs}


__all__ = ["ContentionModel", "NoContention", "CONTENTION_MODELS", "DEFAULT_CONTENTION_MODEL",
           "register_contention_model", "make_contention_model", "ResourceState", "bookkeeping_path"]
