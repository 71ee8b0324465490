# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The compiled queue statistics of a decision: the observation's order statistics and the queue heads.

Every step of an environment observes the queue (:meth:`~hdeeprm.decision.observation.Observer.queue_values`:
20 order statistics of the pending jobs' quantities) and masks the actions (the first job of each
job-selection policy, :meth:`~hdeeprm.decision.orderings.QueueHeads.positions`). With NumPy each is about ten
small calls; :class:`QueueStats` and :class:`QueueArgmin` do the same work in C around the one NumPy call that
pays off (the sort), with the same float32 operations in the same order and NumPy's argmin rule (the first
minimum, a NaN before any number), so both paths give the same bits. The Python code of those methods stays
the fallback when this extension is not built (``tests/decision/test_queue_kernel.py`` compares them).
"""
import numpy as np

from libc.math cimport isnan


cdef class QueueStats:
    """The order statistics of :meth:`Observer.queue_values <hdeeprm.decision.observation.Observer.queue_values>`.

    Args:
        scaled_t: The observer's scaled quantities, float32 (q, nb_jobs) (copied job by job).
        positions: ``positions(n)``: the observer's ``(lower, upper, weight)`` flat gather indices and float32
            weights of the percentiles in a sorted (q, n) array (``upper`` None when every percentile falls on an
            element), asked once per queue length.
    """

    cdef const float[:, ::1] scaled   # job by job: (nb_jobs, q), a job's values in one cache line
    cdef object positions, buf
    cdef dict plans

    def __init__(self, scaled_t, positions):
        self.scaled = np.ascontiguousarray(np.asarray(scaled_t, dtype=np.float32).T)
        self.positions = positions
        self.plans = {}
        self.buf = np.empty((self.scaled.shape[1], 64), dtype=np.float32)

    cdef tuple _plan(self, Py_ssize_t n):
        plan = self.plans.get(n)
        if plan is None:
            lower, upper, w = self.positions(n)
            plan = self.plans[n] = (lower.tolist(), None if upper is None else upper.tolist(),
                                    None if w is None else w.tolist())
        return plan

    def fill(self, const Py_ssize_t[::1] idx, float[::1] out):
        """Write the order statistics of the jobs ``idx`` (2 or more) into the start of ``out`` (float32).

        The same values as the NumPy path: the quantities gathered and sorted (by NumPy, NaN last), the
        percentiles interpolated in float32 (``lower + (upper - lower) * weight``), clipped at 1 with NaN kept.
        """
        cdef const float[:, ::1] scaled = self.scaled
        cdef Py_ssize_t n = idx.shape[0], q = scaled.shape[1], r, k, j, lo, hi
        cdef float[:, ::1] buf
        cdef list lower, upper, weights
        cdef float a, d
        if self.buf.shape[1] < n:
            self.buf = np.empty((q, 2 * n), dtype=np.float32)
        buf = self.buf
        for k in range(n):
            j = idx[k]
            for r in range(q):
                buf[r, k] = scaled[j, r]
        self.buf[:, :n].sort(axis=1)
        lower, upper, weights = self._plan(n)
        for j in range(len(lower)):
            lo = lower[j]
            a = buf[lo // n, lo % n]
            if upper is not None:
                hi = upper[j]
                d = buf[hi // n, hi % n] - a
                d = d * <float> weights[j]
                a = a + d
            out[j] = a if (a <= 1.0 or isnan(a)) else 1.0


cdef class QueueArgmin:
    """The first minimum of each column over the queued jobs' rows (``table.take(idx, 0).argmin(0)``).

    Args:
        table: float64 (nb_jobs, nb_columns), C-contiguous (kept, read only): the QueueHeads' key table, at most
            32 columns.

    Raises:
        ValueError: more than 32 columns.
    """

    cdef const double[:, ::1] table

    def __init__(self, table):
        self.table = table
        if self.table.shape[1] > 32:
            raise ValueError(f"QueueArgmin: at most 32 columns, got {self.table.shape[1]}")

    def firsts(self, const Py_ssize_t[::1] idx, list columns):
        """Position in ``idx`` (non-empty) of the first minimum of each column of ``columns``, NumPy's argmin rule
        (a NaN is the minimum, its first one; else the first of the smallest values), 0 for a None column.

        Args:
            idx: Job indices (rows of the table), intp (n,), n >= 1.
            columns: A column index, or None (0 is answered), per position asked.

        Returns:
            A list of ints, one per entry of ``columns``.
        """
        cdef const double[:, ::1] table = self.table
        cdef Py_ssize_t n = idx.shape[0], m = table.shape[1], k, row
        cdef Py_ssize_t c
        cdef double v
        cdef double[32] best
        cdef Py_ssize_t[32] pos
        cdef bint[32] nan
        if n < 1:
            raise ValueError("QueueArgmin.firsts: no job")
        row = idx[0]
        for c in range(m):
            best[c] = table[row, c]
            pos[c] = 0
            nan[c] = isnan(best[c])
        for k in range(1, n):
            row = idx[k]
            for c in range(m):
                if nan[c]:
                    continue
                v = table[row, c]
                if isnan(v):
                    nan[c] = True
                    pos[c] = k
                elif v < best[c]:
                    best[c] = v
                    pos[c] = k
        out = []
        for col in columns:
            if col is None:
                out.append(0)
            else:
                c = col
                if not 0 <= c < m:
                    raise IndexError(f"column {c} of a table of {m}")
                out.append(pos[c])
        return out
