"""Job orderings (job-selection policies): the order in which a decision tries queued jobs.

Each ordering sorts the pending jobs by one ascending key, stably, so ties keep
submission order. Notation: ``r`` requested time in seconds (SWF field 9, the
user's estimate; :attr:`~hdeeprm.workload.model.Job.requested_time`), ``n``
requested cores (SWF field 8), ``s`` submission time in seconds, ``w = now - s``
the waiting time at the decision's instant ``now``.

HDeepRM's six (Herrera et al., "HDeepRM: Deep Reinforcement Learning for
Workload Management in Heterogeneous Clusters", 2019; the original HDeepRM's
``workload_manager.py``), action indices 0-35 (:mod:`hdeeprm.decision.actions`):

==============  ===========================================  ====================
name            key (ascending)                              job attribute
==============  ===========================================  ====================
``random``      a fresh random permutation at each decision  —
``first``       submission order (FCFS)                      queue order
``shortest``    requested time ``r`` (SJF)                   ``requested_time``
``smallest``    requested cores ``n``                        ``res``
``low_mem``     memory per core (MB)                         ``mem``
``low_mem_bw``  memory bandwidth per core (GB/s)             ``mem_bw``
==============  ===========================================  ====================

The classic priority functions of the batch-scheduling literature, action
indices above 36:

============  ==================================  ================================================
name          key (ascending)                     source
============  ==================================  ================================================
``longest``   ``-r`` (LJF)                        Feitelson et al., "Parallel job scheduling: a
                                                  status report", JSSPP 2004 (longest job first)
``largest``   ``-n``                              ibid. (largest job first)
``saf``       ``r * n``                           ibid. (smallest requested area first)
``f1``        ``log10(r) * n + 870 log10(s)``     Carastan-Santos and de Camargo, "Obtaining
                                                  dynamic scheduling policies with simulation and
                                                  machine learning", SC'17 (F1)
``f2``        ``sqrt(r) * n + 25600 log10(s)``    ibid. (F2)
``f3``        ``r * n + 6860000 log10(s)``        ibid. (F3)
``f4``        ``r * sqrt(n) + 530000 log10(s)``   ibid. (F4)
``wfp3``      ``-(w / r)**3 * n``                 Tang et al., "Fault-aware, utility-based job
                                                  scheduling on Blue Gene/P systems", IEEE
                                                  Cluster 2009 (WFP3 utility)
``unicep``    ``-w / (log2(n) * r)``              ibid. (UNICEP utility)
============  ==================================  ================================================

F1-F4 clamp ``s`` and ``r`` to at least 1 s, so that a job submitted at t = 0
or with a zero estimate keeps a finite key (the published functions assume
s, r >= 1). WFP3 and UNICEP are the published utilities with the sign flipped
(highest utility first); they depend on ``now`` and are evaluated at the
decision's instant; a job without an estimate (``r <= 0``) counts as ``r = 1`` s.
UNICEP's utility is infinite for one-core jobs (``log2(1) = 0``): they come
first, among themselves by ``w / r`` (the limit order), then the others.

Every ordering is registered once in :data:`JOB_ORDERINGS`, in action-index
order; the sort key of a policy is written only here and read by the queue
ordering and by the action mask (:class:`QueueHeads`).
"""
from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from hdeeprm.compiled import RemadeOnCopy
from hdeeprm.registry import Registry
from hdeeprm.workload.gpu_jobs import GpuJobs
from hdeeprm.workload.model import Job

try:   # the compiled queue heads (queue_kernel.pyx), built by the install when a C compiler is there
    from hdeeprm.decision.queue_kernel import QueueArgmin
except ImportError:   # not built: NumPy's argmin (same positions)
    QueueArgmin = None

_index_of = operator.attrgetter("index")
#: ``score(job, now) -> sort key`` (ascending; a float, or a tuple of floats).
Score = Callable[[Job, float], object]


@dataclass(frozen=True, slots=True)
class GpuJobView:
    """What an ordering's ``score`` reads of one job of a GPU trace (the attributes of a ``Job`` it uses).

    A GPU trace has no user estimate: the requested time is the job's duration (what the replay's estimates use).

    Attributes:
        index: Job index in the trace.
        subtime: Submission time, seconds.
        requested_time: Duration on the reference GPU type, seconds.
        num_gpu: GPUs asked for.
        gpu_milli: Thousandths of each GPU asked for.
    """

    index: int
    subtime: float
    requested_time: float
    num_gpu: int
    gpu_milli: int


@dataclass(frozen=True)
class JobOrdering:
    """One job-selection policy.

    Attributes:
        name: Registered name.
        key: Job attribute sorted ascending (stable), or None for the queue's own
            (submission) order, for ``random``, or when ``score`` is given.
        random: A fresh random permutation of the queue at each decision.
        score: ``score(job, now)``, the ascending sort key computed from the job and
            the decision's instant ``now`` (seconds), or None.
        gpu: Whether the timed GPU replay's queue (:class:`~hdeeprm.decision.gpu_manager.GpuManager`) offers it:
            the same rule over a GPU trace, :meth:`gpu_keys` (the submission order, or ``score`` of each job's
            :class:`GpuJobView`).
    """

    name: str
    key: str | None = None
    random: bool = False
    score: Score | None = None
    gpu: bool = False

    def gpu_keys(self, jobs: GpuJobs) -> np.ndarray:
        """The ascending sort key of every job of a GPU trace (ties by submission order), float64 (J,).

        The same rule as :meth:`order`: the submission time for the queue's own order, else ``score`` of each job
        at ``now`` = 0 (a key that depends on the decision's instant is not offered to GPU runs).

        Raises:
            ValueError: An ordering the GPU replay does not offer (``gpu`` False).
        """
        if not self.gpu:
            raise ValueError(f"job ordering {self.name!r} is not offered to GPU runs")
        if self.score is None:
            return jobs.submit.astype(np.float64)
        score, n = self.score, len(jobs)
        views = map(GpuJobView, range(n), jobs.submit.tolist(), jobs.duration.tolist(), jobs.num_gpu.tolist(),
                    jobs.gpu_milli.tolist())
        return np.fromiter((score(view, 0.0) for view in views), dtype=np.float64, count=n)

    def order(self, queue: list[Job], rng: np.random.Generator, now: float = 0.0) -> list[Job]:
        """The queue in this policy's order.

        Args:
            queue: Pending jobs in submission order (not modified).
            rng: Generator of the ``random`` permutation.
            now: The decision's instant in seconds (for waiting-time keys).

        Returns:
            ``queue`` itself for the submission order, else a new list.
        """
        if self.random:
            return [queue[i] for i in rng.permutation(len(queue)).tolist()]
        if self.score is not None:
            score = self.score
            return sorted(queue, key=lambda job: score(job, now))
        if self.key is None:
            return queue
        return sorted(queue, key=operator.attrgetter(self.key))


def _estimate(job: Job) -> float:
    """Requested time in seconds, at least 1 s (WFP3, UNICEP and F1-F4 divide by it or take its log)."""
    return max(job.requested_time, 1.0)


def _area(job: Job, now: float) -> float:
    return job.requested_time * job.res


def _f1(job: Job, now: float) -> float:
    return math.log10(_estimate(job)) * job.res + 870.0 * math.log10(max(job.subtime, 1.0))


def _f2(job: Job, now: float) -> float:
    return math.sqrt(_estimate(job)) * job.res + 25600.0 * math.log10(max(job.subtime, 1.0))


def _f3(job: Job, now: float) -> float:
    return _estimate(job) * job.res + 6860000.0 * math.log10(max(job.subtime, 1.0))


def _f4(job: Job, now: float) -> float:
    return _estimate(job) * math.sqrt(job.res) + 530000.0 * math.log10(max(job.subtime, 1.0))


def _wfp3(job: Job, now: float) -> float:
    return -((now - job.subtime) / _estimate(job)) ** 3 * job.res


def _unicep(job: Job, now: float) -> tuple[int, float]:
    ratio = (now - job.subtime) / _estimate(job)
    if job.res <= 1:    # log2(1) = 0: infinite utility, ranked among themselves by w / r
        return 0, -ratio
    return 1, -ratio / math.log2(job.res)


#: The job-selection policies, in action-index order (the first six are the original's).
JOB_ORDERINGS: Registry[JobOrdering] = Registry("job-selection policy")
for _ordering in (JobOrdering("random", random=True),
                  JobOrdering("first", gpu=True),
                  JobOrdering("shortest", "requested_time"), JobOrdering("smallest", "res"),
                  JobOrdering("low_mem", "mem"), JobOrdering("low_mem_bw", "mem_bw"),
                  JobOrdering("longest", score=lambda job, now: -job.requested_time),
                  JobOrdering("largest", score=lambda job, now: -job.res),
                  JobOrdering("saf", score=_area),
                  JobOrdering("f1", score=_f1), JobOrdering("f2", score=_f2),
                  JobOrdering("f3", score=_f3), JobOrdering("f4", score=_f4),
                  JobOrdering("wfp3", score=_wfp3), JobOrdering("unicep", score=_unicep),
                  # GPU demand and GPU time (thousandths of a GPU, x requested time): what a job holds of the
                  # GPUs; jobs asking for none come first, in submission order
                  JobOrdering("smallest_gpu_demand", score=lambda job, now: job.num_gpu * job.gpu_milli, gpu=True),
                  JobOrdering("shortest_gpu_time",
                              score=lambda job, now: job.num_gpu * job.gpu_milli * job.requested_time, gpu=True)):
    JOB_ORDERINGS.register(_ordering.name, _ordering)

#: Job attributes the keyed orderings sort by (columns of :class:`QueueHeads`' table).
KEY_COLUMNS: tuple[str, ...] = tuple(JOB_ORDERINGS[n].key for n in JOB_ORDERINGS if JOB_ORDERINGS[n].key)
#: Columns whose lexicographic minimum stands for the ``random`` policy's head in the mask:
#: the smallest job (cores, then memory), the one most likely to fit.
_RANDOM_HEAD = (KEY_COLUMNS.index("res"), KEY_COLUMNS.index("mem"))
_KEYS = operator.attrgetter(*KEY_COLUMNS)


class QueueIndex:
    """Job indices of the manager's queue, cached between calls (callable).

    The manager only appends to its queue list, deletes from it or replaces it by a new list
    (:class:`~hdeeprm.decision.manager.WorkloadManager`), and a job is queued once. So when the list is
    the one seen before, its first job is the one seen at a position ``k < 8`` and the job seen last is
    now at its old position minus ``k``, the first ``k`` jobs were started (deleted at the head), no
    other was deleted, and the rest only gained jobs at its end: the cached indices are shifted and only
    the new jobs are read. Anything else rebuilds. The same list with the same length and the same last job
    is unchanged (a job appended after it would have replaced it as the last, and a deletion alone shortens
    it): its cached indices are returned as they are, which is what most calls of one decision find.
    """

    #: Jobs started from the head of the queue that a call follows without rebuilding.
    MAX_HEAD_DELETIONS = 8

    def __init__(self) -> None:
        self._list = self._last = None
        self._n = 0
        self._buf = np.empty(64, dtype=np.intp)
        self._view = self._buf[:0]   # buf[:n] of the last call

    def __call__(self, queue: Sequence[Job]) -> np.ndarray:
        """Indices of the jobs of ``queue`` (non-empty), intp, shape (len(queue),) (a view, do not keep)."""
        n, cached, buf = len(queue), self._n, self._buf
        if queue is self._list and n == cached and queue[n - 1] is self._last:
            return self._view
        kept = -1
        if queue is self._list and cached:
            start = queue[0].index
            head = buf[:min(cached, self.MAX_HEAD_DELETIONS)].tolist()
            if start in head:
                kept = cached - head.index(start)
                if n < kept or queue[kept - 1] is not self._last:
                    kept = -1
        if kept < 0:   # rebuild
            if n > buf.size:
                self._buf = buf = np.empty(2 * n, dtype=np.intp)
            buf[:n] = list(map(_index_of, queue))
            self._list = queue
        else:
            if kept < cached:
                buf[:kept] = buf[cached - kept:cached]
            if n > kept:
                if n > buf.size:
                    self._buf = buf = np.resize(buf, 2 * n)
                buf[kept:n] = list(map(_index_of, queue[kept:]))
        self._n = n
        self._last = queue[n - 1]
        self._view = view = buf[:n]
        return view


class QueueHeads(RemadeOnCopy):
    """The first job each job-selection policy would try, for the action mask.

    Args:
        jobs: All jobs of the workload, by index, when known in advance: their keys are
            tabulated once (float64, (nb_jobs, len(KEY_COLUMNS) + 1), the last column the rank of
            (cores, memory) that stands for ``random``), and a call gathers the queue's rows and
            takes one argmin per column; None reads the keys of the queued jobs at each call.
        policies: The policies asked about (default: every registered one), in the order of
            :attr:`names`; the ``score`` policies cost one key per queued job at each call.
        index: The queue's job-index cache to read (shared with the observations and rewards), or None (its own).

    Attributes:
        names: The policies asked about, without repeats, in the order :meth:`positions` answers.
    """

    def __init__(self, jobs: Sequence[Job] | None = None, policies: Sequence[str] | None = None,
                 index: QueueIndex | None = None) -> None:
        self._table = None
        if jobs is not None:
            keys = self._keys(jobs)
            res, mem = _RANDOM_HEAD
            # Rank of (cores, memory), equal pairs equal ranks: the first minimum over a queue is the
            # first job of the lexicographic order, as np.lexsort over the queue gives it.
            order = np.lexsort((keys[:, mem], keys[:, res]))
            pairs = keys[order][:, [res, mem]]
            new = np.ones(len(order), dtype=bool)
            new[1:] = (pairs[1:] != pairs[:-1]).any(axis=1)
            rank = np.empty(len(order), dtype=np.float64)
            rank[order] = np.cumsum(new)
            self._table = np.ascontiguousarray(np.column_stack((keys, rank)))
        self._argmin = self._compile()
        self.names = JOB_ORDERINGS.names() if policies is None else tuple(dict.fromkeys(policies))
        # column per policy: -1 = queue order, -2 = random, -3 = score.
        self._plan = [(name, -3 if o.score is not None else -2 if o.random else
                       (-1 if o.key is None else KEY_COLUMNS.index(o.key)))
                      for name, o in ((n, JOB_ORDERINGS[n]) for n in self.names)]
        # the tabulated path: table column per policy (random: the rank column), None for the others
        self._columns = [len(KEY_COLUMNS) if col == -2 else (col if col >= 0 else None) for _, col in self._plan]
        self._scored = any(col == -3 for _, col in self._plan)
        self._index = QueueIndex() if index is None else index
        #: The keyed policies whose tabulated column has no NaN, by name (their table column): the first minimum
        #: there is the first job of their stable sort (:meth:`JobOrdering.order`), see :meth:`first`.
        self.sorted_heads = {} if self._table is None else {
            name: col for name, col in self._plan if col >= 0 and not np.isnan(self._table[:, col]).any()}

    _COMPILED = "_argmin"

    def _compile(self):
        """The compiled argmin over this table (None without a table, or when it is not built)."""
        return None if self._table is None or QueueArgmin is None else QueueArgmin(self._table)

    @staticmethod
    def _keys(jobs: Sequence[Job]) -> np.ndarray:
        return np.array(list(map(_KEYS, jobs)), dtype=np.float64).reshape(len(jobs), len(KEY_COLUMNS))

    def positions(self, queue: Sequence[Job], now: float = 0.0) -> list[int]:
        """Queue position of each policy's first job, in the order of :attr:`names` (``random``: the smallest).

        Args:
            queue: Pending jobs in submission order, non-empty.
            now: The decision's instant in seconds (for waiting-time keys).

        Returns:
            One position in ``queue`` per policy; ties go to the earliest submitted job.
        """
        if self._table is None:
            heads = self(queue, now)
            return [heads[name] for name in self.names]
        if self._argmin is not None:
            out = self._argmin.firsts(self._index(queue), self._columns)
        else:
            firsts = self._table.take(self._index(queue), axis=0).argmin(axis=0).tolist()
            out = [0 if col is None else firsts[col] for col in self._columns]
        if self._scored:
            for k, (name, col) in enumerate(self._plan):
                if col == -3:
                    score = JOB_ORDERINGS[name].score
                    out[k] = min(range(len(queue)), key=lambda i: score(queue[i], now))
        return out

    def first(self, queue: Sequence[Job], name: str) -> int:
        """Queue position of the first job of policy ``name``, one of :attr:`sorted_heads` (its column alone).

        Args:
            queue: Pending jobs in submission order, non-empty.
            name: A key of :attr:`sorted_heads`.

        Returns:
            The position of the first minimum of the policy's key: the first job of its stable sort.
        """
        col = self.sorted_heads[name]
        if self._argmin is not None:
            return self._argmin.firsts(self._index(queue), [col])[0]
        return int(self._table[self._index(queue), col].argmin())

    def __call__(self, queue: Sequence[Job], now: float = 0.0) -> dict[str, int]:
        """Queue position of each policy's first job (``random``: the smallest job).

        Args:
            queue: Pending jobs in submission order, non-empty.
            now: The decision's instant in seconds (for waiting-time keys).

        Returns:
            ``{policy name: position in queue}``; ties go to the earliest submitted job.
        """
        if self._table is not None:
            return dict(zip(self.names, self.positions(queue, now)))
        keys = self._keys(queue)
        firsts = keys.argmin(axis=0).tolist()   # first minimum per column: submission order breaks ties
        heads = {}
        for name, col in self._plan:
            if col >= 0:
                heads[name] = firsts[col]
            elif col == -1:
                heads[name] = 0
            elif col == -3:
                score = JOB_ORDERINGS[name].score
                heads[name] = min(range(len(queue)), key=lambda i: score(queue[i], now))
            else:
                res, mem = _RANDOM_HEAD
                heads[name] = int(np.lexsort((keys[:, mem], keys[:, res]))[0])
        return heads
