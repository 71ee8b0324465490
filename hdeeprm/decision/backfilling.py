"""Backfilling start strategies: EASY (Lifka 1995) and conservative (Mu'alem and Feitelson 2001).

Both estimate when running jobs end from their requested times: a job started at
``t0`` is expected to end at ``t0 + r`` (``r`` = requested time in seconds, SWF
field 9 / Batsim ``walltime``); a job already running past its estimate (possible
when walltimes are not enforced) is expected to end right after now (the next
float). Ties between equal estimated ends go to the job started first. On a
platform whose nodes carry GPUs, ``r`` of a job given GPUs is the binder's
estimate on those GPUs (:meth:`~hdeeprm.decision.gpu_binding.GpuBinder.run_time`:
by default the requested time times the GPUs' run-time factor, as the timed GPU
replay estimates); EASY takes a backfill candidate's on the GPUs its placement
picked. Conservative backfilling reserves queued jobs (and plans the decision's
own starts) with their requested times: its profile counts cores only, the GPUs
a queued job would get are unknown; from the next decision on, a started job's
end is its estimate on its GPUs.

**EASY backfilling** (:class:`EasyBackfilling`; Lifka, "The ANL/IBM SP scheduling
system", JSSPP 1995; Mu'alem and Feitelson, IEEE TPDS 12(6), 2001). One pass, the loop
of :func:`hdeeprm.decision.easy.easy_backfill` (written once for the cores and the GPU
replay) over this module's view of the cores (``_CoreView``):

1. head of line: jobs start in the decision's order until the first that does
   not fit, the *head*;
2. when at least one more job waits, the head gets a reservation at the *shadow
   time*: the earliest estimated end of a running job at which the head would fit,
   releasing the running jobs in order of estimated end;
3. every later job, in order, starts now when it fits now and does not delay
   that reservation: it ends (by its estimate) before the shadow time, or the
   head still fits at the shadow time with this job's cores taken.

"Fits" counts free cores and, for jobs with a memory demand, the node memory
(the same rule as the manager's), a GPU job's GPUs on the node of its cores, and
the job's shares of the resource models the manager schedules beside the cores
(``WorkloadManager(models=...)``, e.g. a licence count: the head's reservation
waits until the running jobs ending by then give back enough of them, and a job
that would still hold its share at the shadow time backfills only if the head
still gets its own); cores are chosen by the decision's core selection. The view's
shortcuts skip, before choosing its cores, a job needing more cores than are free, one
that would run past the shadow time (by the least estimate its GPUs could give) needing
more than the cores spare then, and a GPU job whose shape found no cores in this pass.

*PyBatsim-compatible geometry.* When every policy pair of the action set uses the
``contiguous`` core selection (on a platform without GPUs and with no resource
model beside the cores: PyBatsim's geometry knows cores alone; otherwise the
rules above apply with ``contiguous`` placing each job), the strategy is PyBatsim 3.2.1's ``easyBackfill``
scheduler (https://gitlab.inria.fr/batsim/pybatsim, ``schedulers/easyBackfill.py``)
rule for rule, so that it reproduces its Batsim runs job for job:

* jobs take ranges of consecutive cores from PyBatsim's list of free spaces
  (:mod:`hdeeprm.decision.free_spaces`: which space, which end of it); a range
  whose nodes lack the job's memory counts as not fitting (PyBatsim has no
  memory);
* the reservation is a range of consecutive cores: running jobs are released in
  order of estimated end until the space their cores merge into holds the head;
  the head's range in that space and that job's estimated end (the shadow time)
  make the reservation;
* a later job backfills into the first free space (list order) that holds it and
  whose length (the time it stays free, ``shadow - now`` over the reservation)
  is at least its requested time;
* a scheduling pass runs after **each event** of a batch, as PyBatsim's
  ``onJobSubmission`` and ``onJobCompletion`` handlers do: after each
  JOB_SUBMITTED the pass sees the jobs submitted so far, and a job whose
  JOB_COMPLETED comes later in the batch still holds its cores. One decision of
  the manager (one policy pair) thus runs one pass per event of its batch.

**Conservative backfilling** (:class:`ConservativeBackfilling`; Mu'alem and
Feitelson, IEEE TPDS 12(6), 2001; the loop of
:func:`hdeeprm.decision.conservative.conservative_backfill`, written once for the cores
and the GPU replay, over this module's free-core profile, ``_CoreProfileView``): the
free-core profile over time is built from the running jobs' estimated ends; every
queued job, in the decision's order, gets the earliest reservation where enough
cores stay free for its requested time, and starts now when that reservation is
now (and its core selection can place it; otherwise it is reserved at the next
time the profile allows). The profile counts cores only;
memory, GPUs and the shares of resource models are checked when a job starts.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from hdeeprm.decision.conservative import conservative_backfill
from hdeeprm.decision.core_selection import RANDOM_CORE_SELECTIONS
from hdeeprm.decision.easy import easy_backfill
from hdeeprm.decision.free_spaces import FreeSpaces, Space
from hdeeprm.decision.gpu_scoring import draws_random
from hdeeprm.decision.start_strategy import StartStrategy
from hdeeprm.workload.model import Job

#: The core selection whose action sets make EASY follow PyBatsim's free-space geometry.
CONTIGUOUS = "contiguous"
Place = Callable[..., bool]


class _Backfilling(StartStrategy):
    """Bookkeeping shared by the backfilling strategies: running jobs and their estimated ends."""

    def bind(self, manager) -> None:
        """Remember the manager (its clock, resource state and core selection)."""
        self.manager = manager
        #: job index -> (estimated end s, start sequence number, job, cores)
        self.running: dict[int, tuple[float, int, Job, np.ndarray]] = {}
        self._seq = 0

    def on_batch(self, now: float, submitted: Sequence[Job], ended: Sequence[tuple[Job, object]]) -> None:
        """Forget the jobs that ended."""
        for job, _ in ended:
            self.running.pop(job.index, None)

    def _select(self, job: Job) -> np.ndarray | None:
        m = self.manager
        return m.select(job, m.core_policy)

    def _start(self, job: Job, cores: np.ndarray, place: Place) -> None:
        place(job, cores)
        self.running[job.index] = (self.manager.now + self._run_time(job), self._seq, job, np.asarray(cores))
        self._seq += 1

    def _run_time(self, job: Job) -> float:
        """Estimated run time of a job just started, seconds: its requested time, or on its GPUs its binder's."""
        binder = self.manager.gpus
        if binder is None or not job.num_gpu:
            return job.requested_time
        return binder.run_time(job, binder.held.get(job.index))

    def _by_end(self) -> list[tuple[float, int, Job, np.ndarray]]:
        """Running jobs by estimated end (overdue ones: right after now), then start order."""
        now = self.manager.now
        soon = math.nextafter(now, math.inf)
        return sorted(((end if end >= now else soon, seq, job, cores)
                       for end, seq, job, cores in self.running.values()), key=lambda e: (e[0], e[1]))

    def _fits(self, job: Job, free: np.ndarray, mem: np.ndarray | None, gpus=None, models=()) -> bool:
        """Whether ``job`` fits on the ``free`` cores (bool, (nb_cores,)) with node memory ``mem`` (MB).

        A job asking for GPUs also needs them on the node of its cores, in GPU state ``gpus``; its shares of the
        resource models, in their what-if states (``models``: ``[model, share, state]`` of each it needs).
        """
        if int(np.count_nonzero(free)) < job.res:
            return False
        if models and not all(model.fits_in(state, share) for model, share, state in models):
            return False
        if gpus is not None:
            return self.manager.gpus.fits(job, gpus, free, mem)
        if mem is None:
            return True
        h = self.manager.hierarchy
        free_per_node = np.bincount(h.core_node[free], minlength=h.nb_nodes)
        return int(np.minimum(np.floor(mem / job.mem), free_per_node).sum()) >= job.res

    @staticmethod
    def _move(models: list, job: Job, sign: int) -> None:
        """Give back (``sign`` +1) or take (-1) ``job``'s shares in the what-if states of ``models`` (see _fits)."""
        for entry in models:
            share = entry[0].demand(job)
            if share is not None:
                entry[2] = entry[0].moved(entry[2], share, sign)

    def _fit_time(self, head: Job, hold: tuple[Job, np.ndarray] | None = None, state: list | None = None
                  ) -> tuple[float, int]:
        """When ``head`` fits, with ``hold``'s cores kept busy throughout.

        Args:
            head: The job.
            hold: A job about to start and its cores, kept busy, or None.
            state: A list to receive, when given, the free cores, node memory (MB) and GPU state (None without a GPU
                head) at that time: every running job estimated to end by then gone (what ``_at`` gives).

        Returns:
            The earliest estimated time in seconds (``math.inf`` if never) and the number of
            free cores then.
        """
        st, h, binder = self.manager.resources, self.manager.hierarchy, self.manager.gpus
        free = st.core_free.copy()
        mem = st.node_free_mem.copy() if head.mem > 0.0 else None
        mem_then = mem if mem is not None or state is None else st.node_free_mem.copy()
        gpus = binder.what_if() if head.num_gpu and binder is not None else None
        # the resource models the head needs a share of: (model, its share, what-if state)
        models = [[m, share, m.free_now()] for m in self.manager.models if (share := m.demand(head)) is not None]
        if hold is not None:
            job, cores = hold
            free[cores] = False
            if mem is not None and job.mem > 0.0:
                np.subtract.at(mem, h.core_node[cores], job.mem)
            if gpus is not None:
                binder.move(gpus, job, cores, binder.pending(job) if job.num_gpu else None, -1)
            if models:
                self._move(models, job, -1)
        now = self.manager.now
        when = now if self._fits(head, free, mem, gpus, models) else math.inf
        for end, _, job, cores in self._by_end():
            if end > when:
                break
            free[cores] = True   # every job ending by then, for the count of free cores then
            if mem_then is not None and job.mem > 0.0:
                np.add.at(mem_then, h.core_node[cores], job.mem)
            if gpus is not None:
                binder.move(gpus, job, cores, binder.held.get(job.index), +1)
            if models:
                self._move(models, job, +1)
            if when == math.inf and self._fits(head, free, mem, gpus, models):
                when = end
        if state is not None:
            state[:] = free, mem_then, gpus
        return when, (int(np.count_nonzero(free)) if when < math.inf else 0)


class EasyBackfilling(_Backfilling):
    """EASY backfilling (see the module docstring); PyBatsim's with ``contiguous`` action sets."""

    name = "easy_backfilling"
    replays = True

    @staticmethod
    def start_replay(replay, now: float) -> list:
        """EASY over the GPU replay's reservation view (:func:`~hdeeprm.decision.easy.easy_backfill`)."""
        return easy_backfill(replay.easy_view(), replay.ordered_queue(), now)

    def bind(self, manager) -> None:
        """Choose the geometry from the manager's action set (PyBatsim's when all pairs are contiguous)."""
        super().bind(manager)
        cores = {pair[1] for pair in manager.pairs if pair is not None}
        # PyBatsim's geometry knows cores only: not with GPUs bound to the cores or resource models beside them
        pybatsim = cores == {CONTIGUOUS} and manager.gpus is None and not manager.models
        self.spaces = FreeSpaces(manager.hierarchy.nb_cores) if pybatsim else None
        self._events: list[tuple[Job, np.ndarray | None]] = []

    def on_batch(self, now: float, submitted: Sequence[Job], ended: Sequence[tuple[Job, object]]) -> None:
        """Forget ended jobs; with PyBatsim's geometry, keep the events for the per-event passes."""
        if self.spaces is None:
            super().on_batch(now, submitted, ended)
            return
        for job, cores in self._events:   # a batch without a decision: apply its events now
            if cores is not None:
                self._end(job, cores)
        self._events = [(job, None) for job in submitted] + [(job, np.asarray(c)) for job, c in ended]

    def start(self, ordered: Sequence[Job], place: Place) -> list[Job]:
        """One EASY pass, or with PyBatsim's geometry one pass per event of the batch."""
        if self.spaces is None:
            return [job for job, _ in easy_backfill(_CoreView(self, place), list(ordered), self.manager.now)]
        events, self._events = self._events, []
        new = {job.index for job, cores in events if cores is None}
        seen = {job.index for job in ordered} - new
        started: list[Job] = []
        done: set[int] = set()
        for job, cores in events or [(None, None)]:
            if job is not None and cores is None:
                seen.add(job.index)
            elif job is not None:
                self._end(job, cores)
            waiting = [j for j in ordered if j.index in seen and j.index not in done]
            for j in self._rectangle_pass(waiting, place):
                started.append(j)
                done.add(j.index)
        return started

    # ------------------------------------------------------------ any core selection
    def _still_fits(self, head: Job, then: tuple, job: Job, cores: np.ndarray) -> bool:
        """Whether ``head`` still fits at the shadow time with ``job`` (about to start on ``cores``) held then.

        When it does, ``job``'s resources stay taken in ``then``.
        """
        free, mem, gpus = then
        h, binder = self.manager.hierarchy, self.manager.gpus
        share = binder.pending(job) if job.num_gpu else None
        free[cores] = False
        if job.mem > 0.0:
            np.subtract.at(mem, h.core_node[cores], job.mem)
        binder.move(gpus, job, cores, share, -1)
        if self._fits(head, free, mem if head.mem > 0.0 else None, gpus):
            return True
        free[cores] = True
        if job.mem > 0.0:
            np.add.at(mem, h.core_node[cores], job.mem)
        binder.move(gpus, job, cores, share, +1)
        return False

    # ---------------------------------------------------- PyBatsim's free-space geometry
    def _end(self, job: Job, cores: np.ndarray) -> None:
        self.running.pop(job.index, None)
        self.spaces.release_cores(cores)

    def _take(self, space: Space, job: Job, place: Place) -> bool:
        first, last = self.spaces.peek(space, job.res)
        cores = np.arange(first, last + 1, dtype=np.int64)
        if job.mem > 0.0 and not self._fits_memory(job, cores):
            return False
        self.spaces.take(space, job.res)
        self._start(job, cores, place)
        return True

    def _fits_memory(self, job: Job, cores: np.ndarray) -> bool:
        st, h = self.manager.resources, self.manager.hierarchy
        need = np.bincount(h.core_node[cores], minlength=h.nb_nodes) * job.mem
        return bool((need <= st.node_free_mem).all())

    def _rectangle_pass(self, waiting: list[Job], place: Place) -> list[Job]:
        started = []
        for job in waiting:
            space = self.spaces.first_fit(job.res)
            if space is None or not self._take(space, job, place):
                break
            started.append(job)
        if len(waiting) - len(started) < 2:
            return started
        head = waiting[len(started)]
        reservation = self._reservation(head)
        if reservation is None:
            return started
        (first, last), shadow = reservation
        marks = self.spaces.reserve(first, last, shadow - self.manager.now)
        for job in waiting[len(started) + 1:]:
            space = self.spaces.first_fit(job.res, job.requested_time)
            if space is not None and self._take(space, job, place):
                started.append(job)
        self.spaces.unreserve(marks)
        return started

    def _reservation(self, head: Job) -> tuple[tuple[int, int], float] | None:
        """The head's future range and the shadow time, releasing running jobs by estimated end."""
        future = self.spaces.copy()
        for end, _, _, cores in self._by_end():
            for space in future.release_cores(cores):
                if head.res <= space.size:
                    return future.take(space, head.res), end
        return None


class _Then:
    """EASY's what-if resources at the shadow time on the cores' side (see :class:`_CoreView`)."""

    __slots__ = ("shadow", "spare", "state")

    def __init__(self, shadow: float, spare: int, state: tuple | None) -> None:
        self.shadow = shadow   # the shadow time, s
        self.spare = spare     # cores free then beyond the head's, less those of the jobs backfilled past it
        self.state = state     # free cores, node memory and GPU state then (a GPU head only), or None


def _gpu_shape(job: Job) -> tuple:
    """What a GPU job asks for, as the pass's memos of failed and refused shapes key it: cores, memory, GPUs, share."""
    return job.res, job.mem, job.num_gpu, job.gpu_milli


class _CoreView:
    """The cores' side of EASY's reservation view (:class:`~hdeeprm.decision.easy.ReservationView`), one pass.

    Its shortcuts: a job needing more cores than are free now, or still running at the shadow time (by the least
    estimate it could get) and needing more than the spare cores then, is skipped before its cores are chosen; a GPU
    job shape that found no cores is skipped for the rest of the pass (resources only shrink within a pass). Without
    a GPU head or resource models, the spare core count alone says whether the head still fits.

    A GPU job shape whose cores and GPUs were found but refused (the head would be delayed) is, until a job starts,
    refused again for every job of that shape that runs at least as long: with a core selection and a GPU placement
    that draw no random numbers and no resource models, the same shape gets the same cores and GPUs on the same
    state, so the same test with a later (or equal) end. Such jobs are skipped before their cores are chosen.
    """

    def __init__(self, strategy: EasyBackfilling, place: Place) -> None:
        self.strategy, self.manager, self._place = strategy, strategy.manager, place
        self.failed: set[tuple] = set()   # GPU job shapes that did not fit now
        self.refused: dict[tuple, float] = {}   # GPU job shape -> shortest duration refused since the last start
        binder = self.manager.gpus
        self._repeatable = (binder is not None and not self.manager.models and not draws_random(binder.policy)
                            and self.manager.core_policy not in RANDOM_CORE_SELECTIONS)

    def place(self, job: Job, accept) -> np.ndarray | None:
        """The cores the decision's core selection picks for ``job`` (None: it does not fit), if ``accept``s them."""
        cores = self.strategy._select(job)
        if accept is None:
            return cores
        if cores is None:
            if job.num_gpu:
                self.failed.add(_gpu_shape(job))
            return None
        if accept(cores):
            return cores
        if job.num_gpu and self._repeatable:
            shape, duration = _gpu_shape(job), self.manager.gpus.duration(job)
            self.refused[shape] = min(duration, self.refused.get(shape, math.inf))
        return None

    def start(self, job: Job, cores: np.ndarray) -> None:
        """Start ``job`` on ``cores`` now."""
        self.refused.clear()   # the state changed: a refused shape may get other cores and GPUs now
        self.strategy._start(job, cores, self._place)

    def shadow(self, head: Job, now: float) -> tuple[float, _Then]:
        """The head's shadow time (``math.inf``: never; every job that fits then backfills) and what is free then."""
        m = self.manager
        # A head asking for GPUs: the resources free at the shadow time, kept up to date as jobs backfill past it
        # (equivalent to _fit_time(head, hold) <= shadow, without releasing the running jobs anew for each job),
        # taken from the releases that found the shadow time.
        state = [] if head.num_gpu and m.gpus is not None and not m.models else None
        shadow, free_then = self.strategy._fit_time(head, state=state)
        return shadow, _Then(shadow, free_then - head.res, tuple(state) if state and shadow < math.inf else None)

    def estimate(self, job: Job, cores: np.ndarray) -> float:
        """``job``'s estimated run time, s: on the GPUs its selection picked, or its requested time."""
        binder = self.manager.gpus
        if binder is not None and job.num_gpu:
            return binder.run_time(job, binder.pending(job))
        return job.requested_time

    def hold(self, then: _Then, head: Job, job: Job, cores: np.ndarray) -> bool:
        """Whether ``head`` still fits at the shadow time with ``job`` held on ``cores``; if so, held in ``then``."""
        if job.res > then.spare:
            return False
        if then.state is not None:
            fits = self.strategy._still_fits(head, then.state, job, cores)
        else:   # cores alone: the spare count said it; else release the running jobs again with it held
            fits = (head.mem <= 0.0 and not head.num_gpu and not self.manager.models) or \
                self.strategy._fit_time(head, (job, cores))[0] <= then.shadow
        if fits:
            then.spare -= job.res
        return fits

    def skip(self, job: Job, now: float, shadow: float, then: _Then) -> bool:
        """Whether ``job`` surely cannot backfill: too few cores free now or spare then, or its shape failed."""
        if job.res > self.manager.resources.nb_free:
            return True
        binder = self.manager.gpus
        if job.res > then.spare and now + (binder.least_run_time(job) if binder is not None and job.num_gpu
                                           else job.requested_time) > shadow:
            return True   # it would still hold its cores at the shadow time, leaving the head too few
        if not job.num_gpu:
            return False
        shape = _gpu_shape(job)
        return shape in self.failed or (shape in self.refused and binder.duration(job) >= self.refused[shape])


class ConservativeBackfilling(_Backfilling):
    """Conservative backfilling: a reservation for every queued job (see the module docstring)."""

    name = "conservative_backfilling"
    replays = True

    @staticmethod
    def start_replay(replay, now: float) -> list:
        """Conservative backfilling over the GPU replay's kept plan (:mod:`~hdeeprm.decision.conservative`)."""
        return conservative_backfill(replay.reservations, replay.ordered_queue(), now)

    def start(self, ordered: Sequence[Job], place: Place) -> list[Job]:
        """Reserve every job in order; start those whose reservation is now.

        The loop of :func:`~hdeeprm.decision.conservative.conservative_backfill` over the free cores
        (:class:`_CoreProfileView`).
        """
        view = _CoreProfileView(self, place)
        return [job for job, _ in conservative_backfill(view, ordered, self.manager.now)]


class _CoreProfileView(_CoreView):
    """The cores' side of conservative backfilling's profile (:class:`~hdeeprm.decision.conservative.ProfileView`).

    Built for one decision: the free-core :class:`_Profile` from the running jobs' estimated ends, planned anew at
    every decision. A job's reservation is the earliest instant from which enough cores stay free for its requested
    time (slots are times, s); at now its cores are chosen by the decision's core selection, and when that fails it
    is reserved at the next instant the profile allows. Its shortcut: the decision stops once no job left needs as
    few cores as are free now (further reservations would start nothing now).
    """

    def open(self, now: float) -> list:
        """Build the free-core profile at ``now``: running jobs release their cores at their estimated ends."""
        times = [now]
        free = [self.manager.resources.nb_free]
        for end, _, job, _ in self.strategy._by_end():
            if end > times[-1]:
                times.append(end)
                free.append(free[-1])
            free[-1] += job.res
        self.profile = _Profile(np.asarray(times, dtype=np.float64), np.asarray(free, dtype=np.int64))
        return []

    def waiting(self, ordered: Sequence[Job]):
        """The jobs in order, until the smallest core count left exceeds the cores free now."""
        smallest_left = np.minimum.accumulate([job.res for job in reversed(ordered)])[::-1].tolist()
        profile = self.profile
        for k, job in enumerate(ordered):
            if smallest_left[k] > profile.free[0]:
                return
            yield job

    def candidates(self, job: Job, now: float):
        """``(time s, time s)`` of the earliest instant from which ``job``'s cores stay free for its requested time.

        When that is now, then the earliest after now (tried when its core selection fails); none when it never fits.
        """
        duration = max(job.requested_time, 0.0)
        t = self.profile.earliest(job.res, duration)
        if t == math.inf:
            return
        yield t, t
        if t == now:
            t = self.profile.earliest(job.res, duration, after=now)
            if t < math.inf:
                yield t, t

    def respects(self, job: Job, slot: float) -> None:
        """None: the candidate times already leave every earlier reservation its cores."""
        return None

    def plan(self, job: Job, slot: float, accept) -> int:
        """``job``'s core count: the profile counts cores, which ones is decided when it starts."""
        return job.res

    def reserve(self, job: Job, slot: float, placement) -> None:
        """Take ``job``'s cores from ``slot`` (s) for its requested time."""
        self.profile.reserve(slot, max(job.requested_time, 0.0), job.res)

    def keep(self, job: Job, when: float, placement) -> None:
        """Nothing: the profile is planned anew at every decision."""


class _Profile:
    """Free cores over time: ``free[i]`` cores on ``[times[i], times[i + 1])``, the last one to infinity."""

    def __init__(self, times: np.ndarray, free: np.ndarray) -> None:
        self.times, self.free = times, free

    def earliest(self, nb: int, duration: float, after: float | None = None) -> float:
        """Earliest breakpoint (> ``after`` if given) from which ``nb`` cores stay free for ``duration`` s."""
        bad = self.free < nb
        k = bad.size
        idx = np.where(bad, np.arange(k), k)
        next_bad = np.minimum.accumulate(idx[::-1])[::-1]
        ends = np.concatenate((self.times, (math.inf,)))[next_bad]
        ok = ~bad & (ends >= self.times + duration)
        if after is not None:
            ok &= self.times > after
        hits = np.flatnonzero(ok)
        return float(self.times[hits[0]]) if hits.size else math.inf

    def _split(self, t: float) -> int:
        i = int(np.searchsorted(self.times, t))
        if i < self.times.size and self.times[i] == t:
            return i
        self.times = np.concatenate((self.times[:i], (t,), self.times[i:]))
        self.free = np.concatenate((self.free[:i], self.free[i - 1:]))   # the split segment, twice
        return i

    def reserve(self, start: float, duration: float, nb: int) -> None:
        """Take ``nb`` cores on ``[start, start + duration)``."""
        if duration <= 0.0:
            return
        i = self._split(start)
        j = self._split(start + duration)
        self.free[i:j] -= nb
