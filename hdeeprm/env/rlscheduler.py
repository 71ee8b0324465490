"""RLScheduler's SchedGym as a Gymnasium environment: commit to one of the first 128 queued jobs.

RLScheduler (Zhang et al., SC'20; https://github.com/DIR-LAB/deep-batch-scheduler, commit
cd433e3, ``HPCSimPickJobs.py``) trains its agent in ``HPCEnv``: the agent names one of
the first 128 queued jobs and the scheduler *commits* to it. This environment has the
same semantics on HDeepRM's replay of their loop (:class:`~hdeeprm.run.rlscheduler.RLSScheduler`,
the loop :func:`~hdeeprm.run.rlscheduler.replay` runs their heuristics with), so an agent
and their heuristics are judged by one rule::

    import gymnasium, hdeeprm
    env = gymnasium.make("hdeeprm/RLScheduler-v0")     # the shipped Lublin-model trace, 128-job sequences
    env = gymnasium.make("hdeeprm/RLScheduler-v0", trace="SDSC-SP2-1998-4.2-cln.swf.gz",
                         length=256, first_jobs=10000, backfilling=True)    # their SDSC-SP2 training
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from hdeeprm import arguments
from hdeeprm.decision.rlscheduler import rls_keys
from hdeeprm.errors import OptionsError
from hdeeprm.run.loop import as_action
from hdeeprm.run.rlscheduler import RLSScheduler, replay
from hdeeprm.workload.datasets import resolve_name
from hdeeprm.workload.rlscheduler import RLSTrace, check_window_draw, draw_start, gym_random_state, read_rlscheduler_swf

#: Queued jobs shown to the agent (their ``MAX_QUEUE_SIZE``, l. 21).
RLS_SLOTS = 128
#: Per-slot features in column order (their ``build_observation``, l. 626-677).
RLS_FEATURES = ("waiting_time", "requested_time", "requested_processors", "requested_memory", "user", "group",
                "executable", "can_start_now")
#: Their ``MAX_WAIT_TIME`` (l. 24): the waiting time's normaliser, seconds.
MAX_WAIT_TIME = 12 * 60 * 60
#: Their upper bound of a normalised feature (``1.0 - 1e-5``) and their "cannot start now" value.
_TOP, _LOW = 1.0 - 1e-5, 1e-5
#: Their row of an empty slot (l. 686).
EMPTY_SLOT = (0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0)
#: Default trace: the shipped Lublin-model workload (500 jobs on 100 processors).
DEFAULT_TRACE = Path(__file__).resolve().parents[2] / "workloads" / "lublin_500_100.swf"
#: Default sequence length: their 256 needs more than the shipped trace's 500 jobs (starts are drawn in
#: ``[length, jobs - length - 1)``); pass ``length=RLS_SEQUENCE_LENGTH`` with a longer trace for their protocol.
DEFAULT_LENGTH = 128
#: The keys ``reset(options=...)`` honours.
RESET_OPTIONS = ("start",)
#: Draws after which a trajectory filter that keeps no sequence is refused.
_MAX_DRAWS = 10000


def _static_features(trace: RLSTrace) -> np.ndarray:
    """Columns 1-6 of every kept job (their l. 639-671), float32 (n, 6), clipped to [0, 1 - 1e-5].

    The requested time of a cancelled job without a request is -1 in their reading; its
    feature (-1 / max run time) is clipped to 0 here, to stay in the observation space.
    Unknown extra fields (-1) are 1, as theirs; a field whose maximum is <= 0 is 1 too (theirs divides by 0).
    """
    cols = [np.clip(trace.request / max(trace.maxima["run"], 1.0), 0.0, _TOP),
            np.minimum(trace.procs / trace.max_procs, _TOP)]
    for name in ("request_memory", "user", "group", "executable"):
        value, top = trace.extra[name], trace.maxima[name]
        unknown = (value == -1) | (top <= 0)
        cols.append(np.where(unknown, 1.0, np.clip(value / max(top, 1e-300), 0.0, _TOP)))
    return np.stack(cols, axis=1).astype(np.float32)


class RLSchedulerEnv(gymnasium.Env):
    """Commit to one of the first 128 queued jobs (RLScheduler's SchedGym, SC'20).

    An episode is one sequence of ``length`` consecutive jobs of the trace, from a start
    drawn as their ``HPCEnv.reset`` draws it (l. 298-301: ``randint(length, limit - length - 1)``,
    ``limit`` = ``first_jobs`` or the trace's kept jobs, with the generator of
    :func:`~hdeeprm.workload.rlscheduler.gym_random_state` seeded by ``reset(seed=...)``),
    or from ``starts`` in turn, or ``reset(options={"start": s})``. It begins with the
    first job queued on an idle machine.

    ## Action Space

    ``Discrete(128)``: a slot. The scheduler commits to its job (:meth:`RLSScheduler.commit
    <hdeeprm.run.rlscheduler.RLSScheduler.commit>`): it starts now if it fits; otherwise
    the clock runs event by event until it fits, nothing else starting (``backfilling``
    False) or with their greedy backfilling around it (True). Empty slots are masked
    (``info["action_mask"]``, :meth:`action_masks`); an empty slot names slot 0's job
    instead (counted in ``info["masked_actions"]``; their env would skip time).

    ## Observation Space

    ``Box(0, 1, (128, 8), float32)``, one row per slot, their ``build_observation``
    (l. 529-691): waiting time ``now - submit`` / 12 h; requested time / the trace's
    longest run time; processors / the machine's; requested memory, user, group and
    executable numbers, each / its maximum over the trace (1 when unknown); 1 - 1e-5
    when the job fits now, else 1e-5; values capped at 1 - 1e-5. Slots hold the queue in
    submission order; when more than 128 jobs wait, their selection: the queue sorted
    by requested time (ties: submit time, trace order) and by processors (ties: submit
    time, requested time, trace order, as their chained stable sorts give), interleaved
    without repeats. An empty slot is
    ``(0, 1, 1, 1, 1, 1, 1, 0)``.

    ## Rewards

    After each step, minus the bounded slowdowns of the jobs it started (the committed
    job and any backfilled), divided by ``length``: an episode's rewards sum to minus
    its mean bounded slowdown, their ``rwd`` (l. 906), paid as the jobs start.

    ## Episode End

    ``terminated`` once every job of the sequence has started (never truncated). The
    final ``info`` holds ``metrics``: ``mean_bounded_slowdown`` and ``utilization``
    of :meth:`RLSScheduler.result <hdeeprm.run.rlscheduler.RLSScheduler.result>`, the
    figures :func:`~hdeeprm.run.rlscheduler.replay` gives their heuristics.

    Args:
        trace: An SWF trace read their way (path, registry name, or an already read trace) [the shipped
            ``workloads/lublin_500_100.swf``].
        length: Jobs per sequence, in [1, the trace's kept jobs] [128; theirs is 256, ``RLS_SEQUENCE_LENGTH``].
        backfilling: Their ``--backfil 1`` (a ``bool``).
        first_jobs: Their ``batch_job_slice``: draw from the first N kept jobs, in [0, the trace's kept
            jobs] (0 = all).
        starts: Fixed sequence starts (kept-job indices, integers in [0, kept jobs - ``length``]), used in
            turn instead of drawing.
        sjf_filter: ``(low, high)``: keep a drawn sequence only when ``rls_sjf``'s mean
            bounded slowdown on it (same backfilling) is strictly between them, their
            trajectory filtering (``build_sjf``, l. 286-296, with 10 and 150).

    Counts are Python or NumPy integers, never ``bool``, floats or strings (:mod:`hdeeprm.arguments`).

    Raises:
        OptionsError: a bad argument or window, or a filter no drawn sequence passes, named after the
            environment (``"hdeeprm/RLScheduler-v0: starts[0] must be an integer in [0, 372] (...), got 1.5"``).
        WorkloadError: a malformed trace (the reader's one-line message).

    ## Version History

    * v0: first version (HDeepRM 0.3).
    """

    metadata = {"render_modes": []}

    @arguments.env_errors
    def __init__(self, trace: str | os.PathLike | RLSTrace | None = None, *, length: int = DEFAULT_LENGTH,
                 backfilling: bool = False, first_jobs: int = 0, starts: list[int] | None = None,
                 sjf_filter: tuple[float, float] | None = None) -> None:
        self.length = arguments.count("length", length)
        self.backfilling = bool(arguments.flag("backfilling", backfilling))
        first_jobs = arguments.count("first_jobs", first_jobs, minimum=0)
        if starts is not None:
            starts = arguments.sequence("starts", starts, "a list of integers")
        if sjf_filter is not None:
            low, high = arguments.sequence("sjf_filter", sjf_filter, "a pair (low, high)", length=2)
            sjf_filter = (arguments.real("sjf_filter low", low), arguments.real("sjf_filter high", high))
            if not sjf_filter[0] < sjf_filter[1]:
                raise OptionsError(f"sjf_filter must be (low, high) with low < high, got {sjf_filter}")
        self.trace = (trace if isinstance(trace, RLSTrace)   # a path, or a registry name (rlscheduler:lublin_256)
                      else read_rlscheduler_swf(resolve_name(trace or DEFAULT_TRACE)))
        kept = len(self.trace)
        arguments.count("length", self.length, maximum=kept, what="kept jobs of the trace")
        arguments.count("first_jobs", first_jobs, 0, maximum=kept, what="kept jobs of the trace")
        self.limit = first_jobs or kept
        self.starts = None
        if starts is not None:
            self.starts = [self._start(f"starts[{i}]", s) for i, s in enumerate(starts)]
            if not self.starts:
                raise OptionsError("starts must hold at least one window start, got []")
        else:
            check_window_draw(self.limit, self.length)
        self.sjf_filter = sjf_filter
        self._sjf_cache: dict[int, float] = {}
        self._static = _static_features(self.trace)
        self._nodes = self.trace.nodes
        self._empty = np.tile(np.asarray(EMPTY_SLOT, dtype=np.float32), (RLS_SLOTS, 1))
        self.action_space = spaces.Discrete(RLS_SLOTS)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(RLS_SLOTS, len(RLS_FEATURES)), dtype=np.float32)
        self.sim: RLSScheduler | None = None
        self.shown = np.zeros(0, dtype=np.int64)
        self.masked_actions = 0
        self._draw: np.random.RandomState | None = None
        self._turn = 0

    # ---------------------------------------------------------------- gym API
    @arguments.env_errors
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        """Start a sequence: ``options["start"]``, the next of ``starts``, or one drawn their way.

        Args:
            seed: Seeds their draw of sequence starts (:func:`~hdeeprm.workload.rlscheduler.gym_random_state`).
            options: :data:`RESET_OPTIONS`: ``{"start": s}`` replays the sequence from kept job ``s`` (an
                integer in [0, kept jobs - ``length``]); it neither draws nor takes a turn of ``starts``,
                so the episodes of default resets stay the same. None or ``{}``: as without.

        Returns:
            ``(observation, info)``: float32 (128, 8), and a dict with ``action_mask`` (bool, (128,)),
            ``time`` (s since the sequence's first submission), ``queue`` (jobs waiting), ``started`` (jobs
            started), ``start`` (the sequence's first kept-job index) and ``masked_actions``.

        Raises:
            OptionsError: an explicit start that is not an integer of the trace's windows, or another key.
        """
        options = arguments.reset_options(options, RESET_OPTIONS)
        start = self._start("start", options["start"]) if "start" in options else None
        super().reset(seed=seed)
        if seed is not None or self._draw is None:
            self._draw = gym_random_state(seed if seed is not None else int(self.np_random.integers(2**31 - 1)))
        if start is None and self.starts is not None:
            start = self.starts[self._turn % len(self.starts)]
            self._turn += 1
        elif start is None:
            start = self._drawn_start()
        self.sim = RLSScheduler(self.trace, start, self.length, self.backfilling)
        self.masked_actions = 0
        return self._observe(), self._info()

    def step(self, action):
        """Commit to the job in slot ``action`` (slot 0's when that slot is empty).

        Returns:
            ``(observation, reward, terminated, truncated, info)``; see the class docstring.

        Raises:
            gymnasium.error.ResetNeeded: ``step`` before ``reset`` or after the end.
            AgentError: ``action`` is not an integer in [0, 128).
        """
        sim = self.sim
        if sim is None or sim.done:
            raise gymnasium.error.ResetNeeded("call reset() before step() (and after an episode ends)")
        slot = as_action(action, RLS_SLOTS)
        if slot >= len(self.shown):
            self.masked_actions += 1
            slot = 0
        before = len(sim.started)
        sim.commit(int(self.shown[slot]))
        reward = -float(sim.bounded_slowdowns(sim.started[before:]).sum()) / self.length
        return self._observe(), reward, sim.done, False, self._info()

    def action_masks(self) -> np.ndarray:
        """Which slots hold a job, bool (128,) (sb3-contrib MaskablePPO)."""
        mask = np.zeros(RLS_SLOTS, dtype=bool)
        mask[:len(self.shown)] = True
        return mask

    # --------------------------------------------------------------- internals
    def _start(self, name: str, value: Any) -> int:
        """A window start given by the user (``starts`` or reset's ``start``), checked as an integer of the trace."""
        last = len(self.trace) - self.length
        return arguments.count(name, value, 0, maximum=last,
                               what=f"windows of {self.length} jobs among {len(self.trace)} kept jobs")

    def _drawn_start(self) -> int:
        for _ in range(_MAX_DRAWS):
            start = draw_start(self._draw, self.limit, self.length)
            if self.sjf_filter is None:
                return start
            if start not in self._sjf_cache:
                self._sjf_cache[start] = replay(self.trace, start, self.length, "rls_sjf",
                                                self.backfilling).bounded_slowdown
            if self.sjf_filter[0] < self._sjf_cache[start] < self.sjf_filter[1]:
                return start
        raise OptionsError(f"sjf_filter {self.sjf_filter}: none of {_MAX_DRAWS} drawn sequences has rls_sjf's "
                           f"mean bounded slowdown in that range; widen it")

    def _visible(self, queue: np.ndarray) -> np.ndarray:
        """Their choice of 128 among a longer queue (l. 548-607): SJF and smallest orders, interleaved."""
        g = queue + self.sim.start
        tr = self.trace
        by_time = queue[np.lexsort((queue, tr.submit[g], tr.request[g]))]
        by_size = queue[np.lexsort((queue, tr.request[g], tr.submit[g], tr.procs[g]))]
        shown: dict[int, None] = {}
        for a, b in zip(by_time.tolist(), by_size.tolist(), strict=True):
            shown.setdefault(a)
            if len(shown) < RLS_SLOTS:
                shown.setdefault(b)
            if len(shown) >= RLS_SLOTS:
                break
        return np.fromiter(shown, dtype=np.int64, count=len(shown))

    def _observe(self) -> np.ndarray:
        obs = self._empty.copy()
        sim = self.sim
        queue = np.flatnonzero(sim.queued)
        if len(queue) > RLS_SLOTS:
            queue = self._visible(queue)
        self.shown = queue
        n = len(queue)
        if n:
            g = queue + sim.start
            obs[:n, 0] = np.minimum((sim.now - self.trace.submit[g]) / MAX_WAIT_TIME, _TOP)
            obs[:n, 1:7] = self._static[g]
            obs[:n, 7] = np.where(self._nodes[g] <= sim.free, _TOP, _LOW)
        return obs

    def _info(self) -> dict[str, Any]:
        sim = self.sim
        info: dict[str, Any] = {"action_mask": self.action_masks(), "time": sim.now - sim.submit[0],
                                "queue": sim.nb_queued, "started": len(sim.started), "start": sim.start,
                                "masked_actions": self.masked_actions}
        if sim.done:
            result = sim.result()
            info["metrics"] = {"mean_bounded_slowdown": result.bounded_slowdown, "utilization": result.utilization}
        return info

    def heuristic_slot(self, key: str) -> int | None:
        """The slot of the job ``key``'s sorted queue would commit to, or None when it is not shown.

        Args:
            key: A name of :data:`~hdeeprm.decision.rlscheduler.RLS_KEYS`.

        Raises:
            OptionsError: an unknown key.
        """
        sim = self.sim
        queue = np.flatnonzero(sim.queued)
        g = queue + sim.start
        keys = rls_keys(key, self.trace.submit[g], self.trace.procs[g], self.trace.request[g])
        head = int(queue[min(range(len(queue)), key=lambda i: (keys[i], i))])
        slots = np.flatnonzero(self.shown == head)
        return int(slots[0]) if len(slots) else None
