"""RLScheduler's evaluation protocol: its replay of a window, its metrics, its table.

RLScheduler (Zhang et al., SC'20; https://github.com/DIR-LAB/deep-batch-scheduler,
commit cd433e3) judges its heuristics with ``HPCEnv.schedule_curr_sequence_reset``
(``HPCSimPickJobs.py`` l. 455-505) on windows drawn by ``reset_for_test`` (l. 331-362);
``make_table_script.py`` and ``compare-make-table.py`` print the means over 10 windows
of 1,024 jobs (seed 1) that their README's table shows. :func:`replay` follows that
loop event for event:

1. **Commit to the head** (l. 464-482): sort the queue by the key, take the first
   job; if it does not fit, advance the clock (below) until it does, *without
   re-sorting* (jobs arriving meanwhile wait behind it); start it at the current
   time, then sort again. HDeepRM's engine has the same rule as the
   ``commit_head`` start strategy (:mod:`hdeeprm.decision.commit_head`).
2. **Events**, one at a time (l. 739-757): the next arrival if its submit time is
   <= the earliest end of a running job (arrivals first on ties), else that job's
   end (running jobs ordered by real end, ties in their list order); the clock is
   ``max(now, event time)``. When the queue is empty, arrivals are taken one at a
   time (l. 760-787): a job arriving alone into an empty queue is the next head.
3. **Backfilling** (``--backfil 1``; l. 385-430), their greedy variant: when the
   head is blocked, its *shadow time* is computed once, from requested times
   (running jobs by estimated end ``start + r``, until the freed processors hold
   the head); then before every event, every queued job in FCFS order that fits
   now and whose ``now + r < shadow`` starts. Unlike EASY: no job ending after the
   shadow time backfills (EASY lets it use nodes the head leaves free); the shadow
   time is not recomputed when running jobs overrun their estimates (once it has
   passed, nothing backfills until the head starts); candidates go in FCFS order
   whatever the heuristic; the pass runs after every single event.
4. **Metrics** (l. 432-453, 789-816): bounded slowdown ``max(1, (wait + run) /
   max(run, 10))`` averaged over the window's jobs; utilisation ``sum(run x n) /
   ((t_end - s_first) x MaxProcs)`` with ``t_end`` the clock when the last job
   starts (their "resource utilisation", printed negated by their code; positive here).
   The machine counts whole nodes only (``cluster.py`` ``SimpleCluster``).
"""
from __future__ import annotations

import bisect
import heapq
import math
from dataclasses import dataclass

import numpy as np

from hdeeprm.decision.rlscheduler import RLS_KEYS, rls_keys
from hdeeprm.errors import SimulationError
from hdeeprm.outputs.metrics import bounded_slowdown
from hdeeprm.summation import left_sum
from hdeeprm.workload.rlscheduler import RLSTrace, explicit_starts


@dataclass(frozen=True)
class ReplayResult:
    """One window replayed the RLScheduler way.

    Attributes:
        start: Index of the window's first job among the kept jobs.
        starts: Start time of each job of the window, absolute seconds, float64 (length,).
        order: Window positions in the order the jobs started, int64 (length,).
        bounded_slowdown: Their mean bounded slowdown of the window.
        utilization: Their utilisation of the window (0..1, see the module docstring).
    """

    start: int
    starts: np.ndarray
    order: np.ndarray
    bounded_slowdown: float
    utilization: float


class RLSScheduler:
    """RLScheduler's scheduling loop over one window, one commitment at a time (module docstring).

    The rule is written once, in :meth:`commit`: whoever chooses, a heuristic's sorted
    queue (:func:`replay`) or an agent (:class:`~hdeeprm.env.rlscheduler.RLSchedulerEnv`,
    their ``HPCEnv.schedule``, l. 856-881), names a queued job and the scheduler commits
    to it: it starts now if it fits, else events are taken until it does, with their
    greedy backfilling around it when ``backfilling``; then, when the queue is empty,
    arrivals are taken until one job waits.

    Args:
        trace: The trace read by :func:`~hdeeprm.workload.rlscheduler.read_rlscheduler_swf`.
        start: Index of the window's first job among the kept jobs.
        length: Jobs in the window.
        backfilling: Their ``--backfil 1``.

    Attributes:
        now: The clock, absolute trace seconds.
        free: Free nodes.
        queued: Whether each window job waits, bool (length,); queued jobs in window order are
            their FCFS queue (submit times follow job order).
        nb_queued: Jobs waiting.
        arrived: Jobs submitted so far (window positions ``< arrived``).
        started: Window positions in start order.
        begin: Start time of each job, NaN until it starts (list of float, length).
        done: Every job started.

    Raises:
        OptionsError: a window outside the trace.
    """

    def __init__(self, trace: RLSTrace, start: int, length: int, backfilling: bool = False) -> None:
        explicit_starts([start], len(trace), length)
        window = slice(start, start + length)
        self.trace, self.start, self.length, self.backfilling = trace, start, length, backfilling
        self.submit = trace.submit[window].tolist()
        self.run = trace.run[window].tolist()
        self.request = trace.request[window].tolist()
        self.nodes = trace.nodes[window].tolist()
        self.procs = trace.procs[window].tolist()
        self._request = np.asarray(self.request, dtype=np.float64)
        self._nodes = np.asarray(self.nodes, dtype=np.int64)
        self.begin = [math.nan] * length
        self.started: list[int] = []
        self.queued = np.zeros(length, dtype=bool)
        self.queued[0] = True
        self.nb_queued = 1
        self.running: list[tuple[float, int, int]] = []   # (real end, sequence, job), sorted: their list order
        self._seq = 0
        self.free = trace.max_nodes
        self.now = float(self.submit[0])
        self.arrived = 1
        self.done = False

    def _launch(self, j: int) -> None:
        self.begin[j] = self.now
        self.started.append(j)
        self.free -= self.nodes[j]
        bisect.insort_right(self.running, (self.now + self.run[j], self._seq, j))   # append, then their stable sort
        self._seq += 1

    def _event(self) -> None:
        """One event: the next arrival if not after the next end (or nothing runs), else that end (l. 745-757)."""
        running = self.running
        end = running[0][0] if running else math.inf
        nxt = self.arrived
        if nxt < self.length and self.submit[nxt] <= end:
            self.now = max(self.now, self.submit[nxt])
            self.queued[nxt] = True
            self.nb_queued += 1
            self.arrived += 1
        else:
            self.now = max(self.now, end)
            self.free += self.nodes[running.pop(0)[2]]

    def _shadow(self, head: int) -> float:
        """Their shadow time of a blocked ``head``, from estimated ends (l. 389-397)."""
        by_estimate = sorted(self.running, key=lambda e: self.begin[e[2]] + self.request[e[2]])
        self.running = sorted(by_estimate, key=lambda e: e[0])
        free_procs = self.free * self.trace.procs_per_node
        shadow = self.now
        for _, _, j in by_estimate:
            free_procs += self.nodes[j] * self.trace.procs_per_node
            shadow = self.begin[j] + self.request[j]
            if free_procs >= self.procs[head]:
                break
        return shadow

    def commit(self, head: int) -> None:
        """Commit to queued job ``head`` (window position): run to its start, start it, refill an empty queue.

        Raises:
            SimulationError: ``head`` is not waiting, or every job has started.
        """
        if self.done or not (0 <= head < self.length) or not self.queued[head]:
            raise SimulationError(f"job {head} of the window is not waiting: commit to a queued job")
        self.queued[head] = False          # never fits while blocked: out of the backfilling passes
        self.nb_queued -= 1
        nodes = self.nodes
        if nodes[head] > self.free:
            if self.backfilling:
                shadow = self._shadow(head)
                while nodes[head] > self.free:
                    fits = self.queued & (self._request + self.now < shadow) & (self._nodes <= self.free)
                    for j in np.flatnonzero(fits).tolist():
                        if nodes[j] <= self.free:
                            self.queued[j] = False
                            self.nb_queued -= 1
                            self._launch(j)
                    self._event()
            else:
                while nodes[head] > self.free:
                    self._event()
        self._launch(head)
        if not self.nb_queued:
            if self.arrived >= self.length:
                self.done = True
            while not self.nb_queued and not self.done:   # l. 770-787: one arrival into the empty queue
                self._event()

    def bounded_slowdowns(self, jobs: list[int]) -> np.ndarray:
        """Their bounded slowdown of started ``jobs`` (window positions), float64 (len(jobs),)."""
        idx = np.asarray(jobs, dtype=np.int64)
        run = self.trace.run[self.start + idx]
        wait = np.asarray(self.begin, dtype=np.float64)[idx] - self.trace.submit[self.start + idx]
        # HPCSimPickJobs.py l. 795-797: max(1, (wait + run) / max(run, 10)), HDeepRM's bounded slowdown, τ = 10 s
        return bounded_slowdown(wait + run, run)

    def result(self) -> ReplayResult:
        """The window's start times and their metrics (call when :attr:`done`)."""
        length = self.length
        starts = np.asarray(self.begin, dtype=np.float64)
        bsld = self.bounded_slowdowns(list(range(length))).tolist() if self.done else []
        started = self.started
        mean_bsld = float(left_sum(bsld[j] / length for j in started)) if self.done else math.nan
        span = (self.now - self.submit[0]) * self.trace.max_procs
        util = float(left_sum(self.run[j] * self.procs[j] / span for j in started)) if span > 0 else math.nan
        return ReplayResult(start=self.start, starts=starts, order=np.asarray(started, dtype=np.int64),
                            bounded_slowdown=mean_bsld, utilization=util)


def replay(trace: RLSTrace, start: int, length: int, key: str, backfilling: bool = False) -> ReplayResult:
    """Replay ``length`` jobs from ``start`` as RLScheduler's heuristic loop does (module docstring).

    The chooser of :class:`RLSScheduler` is the head of the queue sorted by the key (l. 464-465):
    a heap of the arrived jobs, where jobs started meanwhile (backfilled) are skipped.

    Args:
        trace: The trace read by :func:`~hdeeprm.workload.rlscheduler.read_rlscheduler_swf`.
        start: Index of the first job of the window among the kept jobs.
        length: Jobs in the window.
        key: A name of :data:`~hdeeprm.decision.rlscheduler.RLS_KEYS`.
        backfilling: Their ``--backfil 1``.

    Returns:
        The start times and their metrics.

    Raises:
        OptionsError: an unknown key or a window outside the trace.
    """
    explicit_starts([start], len(trace), length)
    window = slice(start, start + length)
    keys = rls_keys(key, trace.submit[window], trace.procs[window], trace.request[window])
    sim = RLSScheduler(trace, start, length, backfilling)
    heap: list[tuple] = []
    seen = 0
    while not sim.done:
        for j in range(seen, sim.arrived):
            heapq.heappush(heap, (*keys[j], j))
        seen = sim.arrived
        head = heapq.heappop(heap)[-1]
        while not sim.queued[head]:           # started by backfilling since it was pushed
            head = heapq.heappop(heap)[-1]
        sim.commit(head)
    return sim.result()


#: Defaults of their table (``make_table_script.py`` l. 3-5, 16 and 20): 10 windows of 1,024 jobs, seed 1.
RLS_NB_WINDOWS = 10
RLS_WINDOW_LENGTH = 1024
RLS_SEED = 1
#: The policy suffix of their backfilling (``--backfil 1``).
BACKFILLING = "backfilling"


@dataclass(frozen=True)
class RLSPolicy:
    """One heuristic of the RLScheduler protocol.

    Attributes:
        label: ``key`` or ``key+backfilling``.
        key: A name of :data:`~hdeeprm.decision.rlscheduler.RLS_KEYS`.
        backfilling: Their greedy backfilling.
    """

    label: str
    key: str
    backfilling: bool


def parse_rls_policies(specs: list[str]) -> list[RLSPolicy]:
    """Policies of the RLScheduler protocol: ``key[,key...][+backfilling]``, or ``all``.

    ``all`` is the ten cells of their table's rows: every key, without then with
    backfilling.

    Raises:
        OptionsError: no spec, an unknown key or suffix (with the valid names), a policy given twice.
    """
    from hdeeprm.errors import OptionsError
    from hdeeprm.registry import suggest

    if not specs:
        raise OptionsError(f"no policy to evaluate: give RLScheduler heuristics, e.g. -p rls_f1 rls_f1+{BACKFILLING}"
                           f" or -p all")
    out: list[RLSPolicy] = []
    for spec in specs:
        if spec.strip() == "all":
            parts = [(k, bf) for bf in (False, True) for k in RLS_KEYS]
        else:
            keys, plus, suffix = spec.strip().partition("+")
            if plus and suffix != BACKFILLING:
                raise OptionsError(f"policy '{spec}': the RLScheduler protocol's only suffix is '+{BACKFILLING}', "
                                   f"got '+{suffix}'")
            parts = []
            for key in keys.split(","):
                key = key.strip()
                if key not in RLS_KEYS:
                    raise OptionsError(f"policy '{spec}': unknown RLScheduler heuristic '{key}' "
                                       f"({suggest(key, list(RLS_KEYS))})")
                parts.append((key, bool(plus)))
        for key, bf in parts:
            label = f"{key}+{BACKFILLING}" if bf else key
            if any(p.label == label for p in out):
                raise OptionsError(f"policy '{label}' is given twice")
            out.append(RLSPolicy(label=label, key=key, backfilling=bf))
    return out


@dataclass
class RLSEvaluation:
    """What :func:`run_rlscheduler_evaluation` produced.

    Attributes:
        trace: The trace as read.
        starts: Window start indices (kept jobs), in draw order.
        length: Jobs per window.
        rows: One row per (window, policy): ``policy``, ``window``, ``start``, ``first_job_id``,
            ``bounded_slowdown``, ``utilization``.
        summary: One row per policy: ``policy``, then mean and std over the windows of both metrics.
    """

    trace: RLSTrace
    starts: list[int]
    length: int
    rows: list[dict]
    summary: list[dict]


def run_rlscheduler_evaluation(trace_path: str, specs: list[str], *, nb_windows: int = RLS_NB_WINDOWS,
                               length: int = RLS_WINDOW_LENGTH, seed: int = RLS_SEED, first_jobs: int = 0,
                               starts: list[int] | None = None, outdir: str | None = None) -> RLSEvaluation:
    """``hdeeprm-evaluate --protocol rlscheduler`` as a library.

    Args:
        trace_path: An SWF trace, read with RLScheduler's rules.
        specs: Policies (:func:`parse_rls_policies`).
        nb_windows, length, seed, first_jobs: Their ``--iter``, ``--len``, ``--seed`` and
            ``--batch_job_slice`` (see :func:`~hdeeprm.workload.rlscheduler.sample_starts`).
        starts: Explicit window starts (kept-job indices) instead of the draw.
        outdir: If given, ``summary.csv`` and ``windows.csv`` are written there.

    Returns:
        The :class:`RLSEvaluation`.

    Raises:
        HDeepRMError: a bad trace, policy or window count.
    """
    from pathlib import Path

    from hdeeprm.outputs.evaluation import write_csv
    from hdeeprm.workload.rlscheduler import explicit_starts, read_rlscheduler_swf, sample_starts

    policies = parse_rls_policies(specs)
    trace = read_rlscheduler_swf(trace_path)
    if starts:
        chosen = explicit_starts(starts, len(trace), length)
    else:
        chosen = sample_starts(len(trace), length, nb_windows, seed, first_jobs)
    rows = []
    for w, start in enumerate(chosen):
        for p in policies:
            r = replay(trace, start, length, p.key, p.backfilling)
            rows.append({"policy": p.label, "window": w, "start": start, "first_job_id": int(trace.job_id[start]),
                         "bounded_slowdown": r.bounded_slowdown, "utilization": r.utilization})
    summary = []
    for p in policies:
        mine = [row for row in rows if row["policy"] == p.label]
        entry: dict = {"policy": p.label}
        for metric in ("bounded_slowdown", "utilization"):
            values = np.array([row[metric] for row in mine])
            entry[f"{metric}_mean"] = float(np.mean(values))
            entry[f"{metric}_std"] = float(np.std(values))
        summary.append(entry)
    if outdir is not None:
        out = Path(outdir)
        out.mkdir(parents=True, exist_ok=True)
        write_csv(out / "windows.csv", rows)
        write_csv(out / "summary.csv", summary)
    return RLSEvaluation(trace=trace, starts=chosen, length=length, rows=rows, summary=summary)


def format_rls_table(summary: list[dict]) -> str:
    """Their table's two metrics per policy: mean bounded slowdown (2 decimals) and utilisation (3)."""
    width = max(len(s["policy"]) for s in summary)
    lines = [f"{'policy':<{width}}  {'bounded slowdown':>16}  {'utilization':>11}"]
    lines += [f"{s['policy']:<{width}}  {s['bounded_slowdown_mean']:>16.2f}  {s['utilization_mean']:>11.3f}"
              for s in summary]
    return "\n".join(lines)


__all__ = ["RLS_KEYS", "ReplayResult", "RLSScheduler", "replay", "RLSPolicy", "parse_rls_policies", "RLSEvaluation",
           "run_rlscheduler_evaluation", "format_rls_table"]
