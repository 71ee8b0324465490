# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled small-job path of :class:`~hdeeprm.decision.contention.ResourceState`.

A job of up to :data:`~hdeeprm.simulation.runs.RUNS` cores (nearly every job of the real
traces) starts or ends through :meth:`SmallJobKernel.load`: the same marks, sums, over-utilization
records and pstate switches as ``ResourceState._load`` and its helpers (``_load_processor``,
``_load_processors``, ``_load_whole_processors``, ``_settle``, ``_take_memory``, ``_record_one``), which
stay the pure-Python fallback when this extension is not built. Both give the same result to the last
bit: the sums are made in the same order with the same operations (IEEE 754 double), as
``tests/decision/test_contention_kernel.py`` checks on real traces.

The contention rules are the two of :mod:`hdeeprm.decision.contention_models` that it knows (the
original HDeepRM's, ``hdeeprm``, and ``none``); ResourceState uses the fallback for any other model.
"""
from libc.math cimport NAN

import numpy as np

cdef enum:
    NB_PSTATES = 4   # pstates a known contention model gives (P0..P3)


cdef class SmallJobKernel:
    """Start and end small jobs on a :class:`~hdeeprm.decision.contention.ResourceState`'s arrays.

    It keeps views of the state's arrays (``core_free``, ``core_job``, ``core_pstate``,
    ``node_free_mem``, ``processor_busy``, ``processor_used_bw`` and the over-utilization and
    last-pstate arrays), so the state must hold its per-processor values in arrays, not lists.

    Args:
        state: The ResourceState (its array mode).
        no_contention: True for the ``none`` model (busy cores always P0), False for ``hdeeprm``'s
            (busy cores P1 while the processor's requested bandwidth exceeds its own).
        max_cores: The most cores one :meth:`load` call may hold.
    """

    cdef long long[::1] proc_of, node_of, first, count, busy, run, idle, events, core_pstate, core_job, cores
    cdef double[::1] used, cap, free_mem, seconds, since
    cdef unsigned char[::1] over, core_free, mine
    cdef long long[:, ::1] out
    cdef long long nb_out[NB_PSTATES]
    cdef bint no_contention
    cdef Py_ssize_t max_cores

    def __init__(self, state, bint no_contention, Py_ssize_t max_cores):
        h = state.hierarchy
        self.proc_of = np.ascontiguousarray(h.core_processor, dtype=np.int64)
        self.node_of = np.ascontiguousarray(h.processor_node, dtype=np.int64)
        self.first = np.ascontiguousarray(h.processor_first_core, dtype=np.int64)
        self.count = np.ascontiguousarray(h.processor_n_cores, dtype=np.int64)
        self.cap = np.ascontiguousarray(h.processor_mem_bw, dtype=np.float64)
        self.core_free = state.core_free.view(np.uint8)
        self.core_job = state.core_job
        self.core_pstate = state.core_pstate
        self.free_mem = state.node_free_mem
        self.busy = state.processor_busy
        self.used = state.processor_used_bw
        self.run = state._run_np
        self.idle = state._idle_np
        self.over = state._over.view(np.uint8)
        self.events = state._over_events
        self.seconds = state._over_seconds
        self.since = state._over_since
        self.mine = np.zeros(h.nb_cores, dtype=np.uint8)
        self.out = np.empty((NB_PSTATES, max(h.nb_cores, 1)), dtype=np.int64)
        self.cores = np.empty(max(max_cores, 1), dtype=np.int64)
        self.no_contention = no_contention
        self.max_cores = max_cores

    def load(self, list cores, int sign, double mem, double mem_bw, double now, long long job):
        """Start (``sign`` 1) or end (``sign`` -1) a job on ``cores``; ``ResourceState._load``'s result.

        Args:
            cores: The job's distinct core ids (at least one, at most ``max_cores``).
            sign: 1 when the job starts, -1 when it ends.
            mem: The job's memory per core, MB.
            mem_bw: The job's memory bandwidth per core, GB/s.
            now: Current time, seconds (for the over-utilization record).
            job: The job's index (written into ``core_job`` on a start).

        Returns:
            ``{pstate: core ids}`` of the cores whose pstate changes, pstates ascending, ids ascending.

        Raises:
            ValueError: More cores than ``max_cores``, or none.
            IndexError: A core id out of ``[0, nb_cores)`` (nothing is changed).
        """
        cdef Py_ssize_t n = len(cores), i, j, s, e
        cdef long long c, p, p0, b, lo, hi
        cdef unsigned char free_now = sign < 0
        cdef long long job_now = -1 if sign < 0 else job
        cdef double v, d_mem = (-sign) * mem, d_bw = sign * mem_bw
        if n == 0 or n > self.max_cores:
            raise ValueError(f"a small job holds 1 to {self.max_cores} cores, not {n}")
        for i in range(n):   # checked before anything changes (the arrays are read unchecked below)
            c = cores[i]
            if c < 0 or c >= self.mine.shape[0]:
                raise IndexError(f"core {c} is out of range: the platform has {self.mine.shape[0]} cores")
        for i in range(NB_PSTATES):
            self.nb_out[i] = 0
        # The cores, ascending (they mostly come ascending: an insertion sort is then one pass); marked.
        for i in range(n):
            c = cores[i]
            j = i
            while j > 0 and self.cores[j - 1] > c:
                self.cores[j] = self.cores[j - 1]
                j -= 1
            self.cores[j] = c
            self.core_free[c] = free_now
            self.core_job[c] = job_now
            self.mine[c] = 1
        lo, hi = self.cores[0], self.cores[n - 1]
        c = cores[0]
        p0 = self.proc_of[c]
        if lo >= self.first[p0] and hi < self.first[p0] + self.count[p0]:   # ResourceState._load_processor
            b = self.busy[p0] + sign * n
            self.busy[p0] = b
            if mem > 0.0:
                self.free_mem[self.node_of[p0]] -= (sign * n) * mem
            if mem_bw > 0.0:
                self.used[p0] = self.used[p0] + (sign * n) * mem_bw if b else 0.0
            self._settle(p0, b, 0, n, sign, now)
        else:   # _load_processors and _load_whole_processors: processors ascending (cores are, in order)
            if mem > 0.0:
                for i in range(n):
                    self.free_mem[self.node_of[self.proc_of[self.cores[i]]]] += d_mem
            s = 0
            while s < n:
                p = self.proc_of[self.cores[s]]
                e = s + 1
                while e < n and self.proc_of[self.cores[e]] == p:
                    e += 1
                b = self.busy[p] + sign * (e - s)
                self.busy[p] = b
                if mem_bw > 0.0:
                    v = self.used[p]
                    for i in range(s, e):
                        v += d_bw
                    self.used[p] = v if b else 0.0
                self._settle(p, b, s, e, sign, now)
                s = e
        for i in range(n):
            self.mine[self.cores[i]] = 0
        return self._changes()

    cdef void _settle(self, long long p, long long b, Py_ssize_t s, Py_ssize_t e, int sign, double now):
        """ResourceState._settle: processor ``p`` now has ``b`` busy cores; the job's are ``cores[s:e]``."""
        cdef double u = self.used[p], cap = self.cap[p]
        cdef unsigned char over = b > 0 and u > cap
        cdef long long run, idle, old_run, old_idle, before, after, c, start, end
        cdef Py_ssize_t i
        cdef bint skip_mine
        if over != self.over[p]:   # ResourceState._record_one
            self.over[p] = over
            if over:
                self.since[p] = now
                self.events[p] += 1
            else:
                self.seconds[p] += now - self.since[p]
                self.since[p] = NAN
        # contention_models: ContentionModel.pstates / NoContention.pstates
        if self.no_contention:
            run, idle = 0, (2 if b else 3)
        elif b == 0:
            run, idle = 0, 3
        else:
            run, idle = (1 if u > cap else 0), 2
        old_run, old_idle = self.run[p], self.idle[p]
        self.run[p], self.idle[p] = run, idle
        if sign > 0:
            before, after = old_idle, run
        else:
            before, after = old_run, idle
        if e - s == self.count[p]:   # the job takes or frees the whole processor
            if after != before:
                for i in range(s, e):
                    self._add(after, self.cores[i])
            return
        start = self.first[p]
        end = start + self.count[p]
        if run != old_run:
            skip_mine = sign > 0 and after == before
            for c in range(start, end):
                if not self.core_free[c] and not (skip_mine and self.mine[c]):
                    self._add(run, c)
        if idle != old_idle:
            skip_mine = sign < 0 and after == before
            for c in range(start, end):
                if self.core_free[c] and not (skip_mine and self.mine[c]):
                    self._add(idle, c)
        if after != before and not ((sign > 0 and run != old_run) or (sign < 0 and idle != old_idle)):
            for i in range(s, e):
                self._add(after, self.cores[i])

    cdef inline void _add(self, long long pstate, long long c):
        self.out[pstate, self.nb_out[pstate]] = c
        self.nb_out[pstate] += 1

    cdef dict _changes(self):
        """The switches gathered, each pstate's cores sorted and written into ``core_pstate``."""
        cdef dict changes = {}
        cdef list listed
        cdef long long ps, c
        cdef Py_ssize_t m, i, j
        for ps in range(NB_PSTATES):
            m = self.nb_out[ps]
            if m == 0:
                continue
            for i in range(1, m):   # insertion sort: the cores come nearly sorted
                c = self.out[ps, i]
                j = i
                while j > 0 and self.out[ps, j - 1] > c:
                    self.out[ps, j] = self.out[ps, j - 1]
                    j -= 1
                self.out[ps, j] = c
            listed = []
            for i in range(m):
                c = self.out[ps, i]
                self.core_pstate[c] = ps
                listed.append(c)
            changes[ps] = listed
        return changes
