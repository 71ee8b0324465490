"""What ``hdeeprm-evaluate`` does, as a library: policies compared on windows of a real trace.

A scheduling policy is judged on several stretches of a trace it was not tuned
on, each replayed on an empty cluster (as RLScheduler trains and tests on job
sequences sampled from a trace: D. Zhang, D. Dai, Y. He, F. S. Bao, B. Xie,
"RLScheduler: An Automated HPC Batch Job Scheduler Using Reinforcement
Learning", SC'20).
Here:

* **Windows**: the usable jobs of an SWF trace (those the conversion keeps,
  :mod:`hdeeprm.workload.convert`; within the options' ``first_job`` and
  ``nb_jobs`` when given) are cut into consecutive slots of ``length`` jobs;
  ``nb_windows`` slots are drawn without replacement with the seed, so windows
  never overlap. Each window is its own episode: the jobs of the slot, submit
  times shifted so the first is at 0 s, on an empty cluster. A window's run
  is exactly ``hdeeprm-launch`` with the options of :func:`window_options`
  (``workload.first_job`` and ``nb_jobs`` set to the window, the policy pair and
  start strategy set to the policy's).
* **Split**: with the same seed, ``round(test_fraction x nb_windows)`` windows
  are drawn as test windows, the others are training windows; learning agents
  train on the latter (:func:`train_agent`) and are compared on the former.
* **Policies** (:func:`hdeeprm.run.policies.parse_policies`): a policy pair ``ordering-core_selection``
  with an optional start strategy, ``first-high_gflops+easy_backfilling``; comma
  lists give every combination, ``first,shortest-high_gflops+head_of_line,easy_backfilling``;
  a learning agent ``agent.py[:model.pt][+strategy]``, run greedily (``run``
  ``test``). Names are checked against the registries (job orderings, core
  selections, start strategies), so every registered name works.
* **Determinism**: every run is seeded by the options' seed alone, so the same
  seed gives the same table, and runs spread over processes (``jobs``) give the
  same values as serial runs.

Metrics are the metrics summary of each run (:mod:`hdeeprm.outputs.metrics`),
aggregated by :mod:`hdeeprm.outputs.evaluation`.
"""
from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from hdeeprm.config.build import build_platform, build_workload, check_learning, load_agent
from hdeeprm.config.options import Options
from hdeeprm.config.trace_windows import TraceWindows
from hdeeprm.decision.actions import action_index
from hdeeprm.decision.contention import make_contention_model
from hdeeprm.errors import OptionsError
from hdeeprm.outputs.evaluation import EVALUATION_METRICS
from hdeeprm.files import check_output_folder, lock_folder
from hdeeprm.run.episode import run_episode
from hdeeprm.run.launch import agent_inputs, end_episode, prepare_agent, seeded_torch
from hdeeprm.run.policies import Policy, parse_policies, parse_policy_list
from hdeeprm.run.pool import WorkerPool, worker_pool
from hdeeprm.workload.model import Workload

#: Windows drawn by default.
DEFAULT_NB_WINDOWS = 10
#: Jobs per window by default.
DEFAULT_WINDOW_LENGTH = 1024
#: Share of the windows kept for testing by default.
DEFAULT_TEST_FRACTION = 0.5
#: Which windows the policies are compared on: the test windows, the training ones, or all.
SPLITS: tuple[str, ...] = ("test", "train", "all")
#: The windows compared on by default.
DEFAULT_SPLIT = "test"
#: What the summary after the runs imports (plots): the parent imports it while its workers run.
SUMMARY_MODULES: tuple[str, ...] = ("matplotlib.pyplot",)
#: Keys of a per-window result besides the metrics summary's.
ROW_KEYS: tuple[str, ...] = ("policy", "window", "split", "first_job")

@dataclass(frozen=True)
class Window:
    """A window of consecutive usable jobs of the trace.

    Attributes:
        index: Position among the windows, in trace order (0-based).
        first_job: Usable jobs of the trace before the window (``workload.first_job``).
        nb_jobs: Jobs in the window.
        split: ``"train"`` or ``"test"``.
    """

    index: int
    first_job: int
    nb_jobs: int
    split: str


def make_windows(nb_available: int, nb_windows: int, length: int, *, seed: int,
                 test_fraction: float = DEFAULT_TEST_FRACTION, offset: int = 0) -> list[Window]:
    """Draw non-overlapping windows and split them into training and test windows.

    The ``nb_available`` jobs are cut into ``nb_available // length`` slots of
    ``length`` consecutive jobs; ``nb_windows`` slots are drawn without
    replacement by :func:`numpy.random.default_rng` (``seed``), then
    ``round(test_fraction x nb_windows)`` (halves rounded up) of them are drawn
    as test windows.

    Args:
        nb_available: Usable jobs to cut.
        nb_windows: Windows to draw (>= 1).
        length: Jobs per window (>= 1).
        seed: Seed of both draws.
        test_fraction: Share of test windows, in [0, 1].
        offset: Usable jobs before the first slot (added to ``first_job``).

    Returns:
        The windows in trace order.

    Raises:
        OptionsError: a count or fraction out of range, or not enough jobs for the windows.
    """
    if nb_windows < 1 or length < 1:
        raise OptionsError(f"the number of windows and their length must be >= 1, got {nb_windows} and {length}")
    if not 0.0 <= test_fraction <= 1.0:
        raise OptionsError(f"the test fraction must be in [0, 1], got {test_fraction}")
    nb_slots = nb_available // length
    if nb_windows > nb_slots:
        raise OptionsError(f"{nb_windows} windows of {length} jobs need {nb_windows * length} usable jobs, "
                           f"the trace has {nb_available}: draw fewer or shorter windows")
    rng = np.random.default_rng(seed)
    slots = np.sort(rng.choice(nb_slots, size=nb_windows, replace=False))
    nb_test = int(np.floor(test_fraction * nb_windows + 0.5))
    test = set(rng.permutation(nb_windows)[:nb_test].tolist())
    return [Window(index=i, first_job=offset + int(slot) * length, nb_jobs=length,
                   split="test" if i in test else "train") for i, slot in enumerate(slots.tolist())]


def window_options(options: Options, window: Window, policy: Policy | None = None) -> Options:
    """The options of ``hdeeprm-launch`` that replay ``window`` with ``policy``.

    A policy pair becomes the options' one classic pair
    (``pybatsim.agent.policy_pair``) with its start strategy; a learning agent keeps
    the options' action set and agent settings, in ``run`` ``test``, with its
    start strategy. Without a policy only the window is set.

    Raises:
        OptionsError: unknown names.
    """
    changes: dict = {"first_job": window.first_job, "nb_jobs": window.nb_jobs}
    if policy is not None:
        changes["start_strategy"] = policy.strategy
        if policy.agent is None:
            changes.update(actions=[action_index(policy.job, policy.core)], agent_type="CLASSIC")
        else:
            changes["run"] = "test"
    return options.replace(**changes)


@dataclass
class Plan:
    """The inputs of an evaluation.

    Attributes:
        options: The base options (trace, platform, seed, conversion, agent settings).
        trace: The trace read once, each window converted from it (None with a ``gpu_jobs`` block); pass it
            to :func:`evaluate` and :func:`train_agent`, which then do not read the trace again.
        span: The converted span of the trace the windows are cut from (its report
            counts the records skipped).
        windows: Every window drawn, in trace order.
    """

    options: Options
    span: Workload
    windows: list[Window]
    trace: TraceWindows | None = None

    def selected(self, split: str) -> list[Window]:
        """The windows of ``split`` (one of :data:`SPLITS`).

        Raises:
            OptionsError: an unknown split, or no window in it.
        """
        if split not in SPLITS:
            raise OptionsError(f"the windows must be one of {', '.join(SPLITS)}, got '{split}'")
        out = [w for w in self.windows if split == "all" or w.split == split]
        if not out:
            change = "raise" if split == "test" else "lower"
            raise OptionsError(f"no {split} window among the {len(self.windows)} drawn: {change} the test fraction, "
                               f"draw more windows or compare on all windows")
        return out


def describe_windows(windows: Sequence[Window], split: str, length: int) -> str:
    """``"5 test windows of 1024 jobs"`` (``"10 windows of 1024 jobs"`` for the split ``all``)."""
    return f"{len(windows)} {'' if split == 'all' else split + ' '}windows of {length} jobs"


def plan(options: Options, *, nb_windows: int = DEFAULT_NB_WINDOWS, length: int = DEFAULT_WINDOW_LENGTH,
         test_fraction: float = DEFAULT_TEST_FRACTION) -> Plan:
    """Convert the trace span once and draw the windows with the options' seed.

    Raises:
        OptionsError: the workload is not an SWF trace, or :func:`make_windows`' errors.
        PlatformError, WorkloadError: invalid inputs.
    """
    path = options.workload_file_path
    if path.endswith(".json"):
        raise OptionsError(f"hdeeprm-evaluate cuts windows out of an SWF trace (.swf, .swf.gz), got the "
                           f"Batsim JSON workload {path}: give the trace it was converted from", path=options.source)
    hierarchy = build_platform(options)
    if options.gpu_jobs is not None:   # CPU and GPU jobs merged: the run's own conversion
        trace, span = None, build_workload(options, hierarchy)
    else:
        trace = TraceWindows(options, hierarchy)
        span = trace.workload(options.first_job, options.nb_jobs)   # = build_workload(options, hierarchy)
    windows = make_windows(len(span.jobs), nb_windows, length, seed=options.seed, test_fraction=test_fraction,
                           offset=options.first_job)
    return Plan(options=options, span=span, windows=windows, trace=trace)


class WindowRunner:
    """Runs policies on windows, reading the trace and converting each window and loading each agent once.

    The trace is parsed once per process (:class:`~hdeeprm.config.trace_windows.TraceWindows`), when the runner
    is made (a worker's start), not once per window: a window late in a long trace would otherwise read most of
    it again, in every worker.

    Args:
        options: The base options.
        trace: The options' trace already read (:attr:`Plan.trace`), or None: read here (not with a ``gpu_jobs``
            block, whose windows are converted as a run converts them).
    """

    def __init__(self, options: Options, trace: TraceWindows | None = None) -> None:
        self.options = options
        self.hierarchy = build_platform(options)
        if trace is None and options.gpu_jobs is None:
            trace = TraceWindows(options, self.hierarchy)
        self._trace = trace
        self._workloads: dict[tuple[int, int], Workload] = {}
        self._agents: dict[str, type] = {}

    def workload(self, window: Window) -> Workload:
        """The window's jobs, converted as ``hdeeprm-launch`` converts them (cached)."""
        key = (window.first_job, window.nb_jobs)
        if key not in self._workloads:
            if self._trace is None:   # CPU and GPU jobs merged: the run's own conversion
                self._workloads[key] = build_workload(window_options(self.options, window), self.hierarchy)
            else:
                self._workloads[key] = self._trace.workload(window.first_job, window.nb_jobs)
        return self._workloads[key]

    def agent_class(self, options: Options, path: str | None) -> type:
        """The agent class of a run: the file's (cached per file) or the classic agent."""
        if path is None:
            return load_agent(options, None)
        if path not in self._agents:
            self._agents[path] = load_agent(options, path)
        return self._agents[path]

    def run(self, window: Window, policy: Policy) -> dict:
        """Replay ``window`` with ``policy``, as ``hdeeprm-launch`` would with :func:`window_options`.

        Returns:
            The row: :data:`ROW_KEYS`, then the metrics summary of the run.

        Raises:
            HDeepRMError: invalid inputs, or an agent that misbehaves.
        """
        options = window_options(self.options, window, policy)
        workload = self.workload(window)
        cls = self.agent_class(options, policy.agent)
        with seeded_torch(options.seed):
            agent, observer, reward = prepare_agent(options, self.hierarchy, workload, cls, inmodel=policy.model)
            if getattr(agent, "run", None) == "train":   # an agent that ignored the options' run
                agent.run = "test"
            episode, _ = run_episode(self.hierarchy, workload, options, agent, record=False, observer=observer,
                                     reward=reward, model=make_contention_model(options.contention))
        return {"policy": policy.label, "window": window.index, "split": window.split,
                "first_job": window.first_job, **episode.metrics()}


_WORKER: WindowRunner | None = None


def _init_worker(options: Options) -> None:
    global _WORKER
    _WORKER = WindowRunner(options)


def _run_task(task: tuple[Window, Policy]) -> dict:
    return _WORKER.run(*task)


@contextlib.contextmanager
def evaluation_workers(options: Options, jobs: int) -> Iterator[WorkerPool | None]:
    """``jobs`` worker processes started now for :func:`evaluate` on ``options`` (None for ``jobs`` 1).

    Spawned: the workers start clean (no copy of a parent's torch threads or caches).

    Made before the plan, they import and read the trace while this process plans (see
    :func:`~hdeeprm.run.pool.worker_pool`).

    Raises:
        OptionsError: ``jobs`` < 1.
    """
    if jobs < 1:
        raise OptionsError(f"the number of processes must be >= 1, got {jobs}")
    if jobs == 1:
        yield None
        return
    with worker_pool(jobs, _init_worker, (options,), preload=SUMMARY_MODULES) as pool:
        yield pool


def evaluate(options: Options, policies: Sequence[Policy], windows: Sequence[Window], *, jobs: int = 1,
             progress: bool = False, trace: TraceWindows | None = None, pool: WorkerPool | None = None) -> list[dict]:
    """Run every policy on every window.

    Args:
        options: The base options.
        policies: The policies (:func:`parse_policy_list`).
        windows: The windows to run (e.g. :meth:`Plan.selected`).
        jobs: Processes to spread the runs over (1 = in this process); the values
            do not depend on it.
        progress: Show a progress bar (tqdm) of the runs.
        trace: The options' trace already read (:attr:`Plan.trace`), used in this process (``jobs`` 1);
            worker processes read it once each, in parallel.
        pool: Workers already started for ``options`` (:func:`evaluation_workers`), used instead of ``jobs``.

    Returns:
        One row per (window, policy), windows in order and policies in order within
        each: :data:`ROW_KEYS` then the metrics summary
        (:func:`hdeeprm.outputs.metrics.summarize`, plus ``decisions`` and ``void_overridden``).

    Raises:
        OptionsError: ``jobs`` < 1 (checked by :func:`evaluation_workers`; without ``pool``).
        HDeepRMError: any invalid input or misbehaving agent.
    """
    tasks = [(w, p) for w in windows for p in policies]
    bar = None
    if progress:
        from hdeeprm.run.lifecycle import progress_bar

        bar = progress_bar(len(tasks), "run", "hdeeprm-evaluate")
    try:
        with contextlib.ExitStack() as stack:
            if pool is None:
                pool = stack.enter_context(evaluation_workers(options, jobs))
            if pool is None:
                runner = WindowRunner(options, trace)
                results: Iterator[dict] = (runner.run(*task) for task in tasks)
            else:   # one run per task: the best balance; a worker reads the trace once and converts a window
                # in milliseconds (WindowRunner), so grouping a window's runs on one worker saves nothing
                results = pool.map(_run_task, tasks)
            rows = []
            for row in results:
                rows.append(row)
                if bar is not None:
                    bar.update()
            return rows
    finally:
        if bar is not None:
            bar.close()


def train_agent(options: Options, agent_path: str, windows: Sequence[Window], *, episodes: int,
                outmodel: str | Path, inmodel: str | None = None, progress: bool = False,
                trace: TraceWindows | None = None) -> list[dict]:
    """Train a learning agent on training windows, one episode per window, and save it.

    The training windows are visited in a fresh random order (seeded) on every
    pass; the agent is built as ``hdeeprm-launch`` builds it (``run`` ``train``),
    with an observation builder per window (its normalisation comes from the
    window's jobs) and the options' objective as reward; it updates once per
    episode (:meth:`~hdeeprm.agents.base.Agent.end_episode`).

    Args:
        options: The base options (action set, observation, objective, hidden, lr, gamma, seed).
        agent_path: The agent file.
        windows: Windows of the plan; only those with split ``"train"`` are used.
        episodes: Training episodes (>= 1).
        outmodel: Checkpoint written (atomically) at the end.
        inmodel: Checkpoint to start from, or None.
        progress: Show a progress bar of the episodes.
        trace: The options' trace already read (:attr:`Plan.trace`), or None: read here.

    Returns:
        One row per episode: ``episode``, ``window``, ``first_job``, ``decisions`` (the agent's decisions so far,
        cumulative), ``reward`` (sum), ``loss`` (None when nothing was learnt) and the metrics of
        :data:`EVALUATION_METRICS`.

    Raises:
        OptionsError: no training window, or ``episodes`` < 1.
        HDeepRMError: invalid inputs, an agent without a model, or a misbehaving agent.
    """
    train = [w for w in windows if w.split == "train"]
    if not train:
        raise OptionsError("training needs training windows: lower the test fraction or draw more windows")
    if episodes < 1:
        raise OptionsError(f"the training episodes must be >= 1, got {episodes}")
    options = options.replace(run="train")
    runner = WindowRunner(options, trace)
    cls = runner.agent_class(options, agent_path)
    check_learning(cls, agent_path)
    rng = np.random.default_rng(options.seed)
    order: list[int] = []
    log = []
    decisions = 0
    bar = None
    if progress:
        from hdeeprm.run.lifecycle import progress_bar

        bar = progress_bar(episodes, "episode", "training")
    try:
        with seeded_torch(options.seed):
            first = window_options(options, train[0])
            agent, _, _ = prepare_agent(first, runner.hierarchy, runner.workload(train[0]), cls, inmodel=inmodel,
                                        outmodel=str(outmodel))
            for episode_index in range(episodes):
                if not order:
                    order = rng.permutation(len(train)).tolist()
                window = train[order.pop(0)]
                wopts = window_options(options, window)
                workload = runner.workload(window)
                observer, reward, _ = agent_inputs(wopts, runner.hierarchy, workload, cls)
                episode, total = run_episode(runner.hierarchy, workload, wopts, agent, record=False,
                                             observer=observer, reward=reward,
                                             model=make_contention_model(wopts.contention))
                loss = end_episode(agent)
                metrics = episode.metrics()
                decisions += episode.manager.decisions
                log.append({"episode": episode_index, "window": window.index, "first_job": window.first_job,
                            "decisions": decisions, "reward": total, "loss": loss,
                            **{key: metrics[key] for key, _, _ in EVALUATION_METRICS}})
                if bar is not None:
                    bar.update()
    finally:
        if bar is not None:
            bar.close()
    agent.save_checkpoint(outmodel)
    return log


@dataclass
class EvaluationResult:
    """What :func:`run_evaluation` produced.

    Attributes:
        plan: The windows drawn.
        policies: The policies compared, in table order.
        rows: One row per (window, policy) (:func:`evaluate`).
        summary: One row per policy (:func:`hdeeprm.outputs.evaluation.aggregate`).
        training: One row per training episode (:func:`train_agent`), or empty.
        outdir: The output folder.
    """

    plan: Plan
    policies: list[Policy]
    rows: list[dict]
    summary: list[dict]
    training: list[dict]
    outdir: Path


def run_evaluation(options: Options, specs: Sequence[str], *, nb_windows: int = DEFAULT_NB_WINDOWS,
                   length: int = DEFAULT_WINDOW_LENGTH, test_fraction: float = DEFAULT_TEST_FRACTION,
                   split: str = DEFAULT_SPLIT, jobs: int = 1, outdir: str | Path = "hdeeprm-evaluation",
                   train: str | None = None, train_episodes: int = 0, inmodel: str | None = None,
                   outmodel: str | None = None, quiet: bool = False) -> EvaluationResult:
    """``hdeeprm-evaluate`` as a library: draw windows, optionally train, compare, write the outputs.

    Writes into ``outdir``: ``summary.csv`` (one row per policy, the statistics of
    :mod:`hdeeprm.outputs.evaluation`), ``windows.csv`` (one row per window and
    policy, the whole metrics summary), ``bounded_slowdown.png`` (one box per
    policy), ``run.json`` (resolved options, versions, the span's conversion
    report, the windows and the policies) and, when training,
    ``training.csv`` (one row per episode), ``training.png`` (the learning curves) and the checkpoint.

    Args:
        options: The base options (:func:`hdeeprm.config.options.load_options`).
        specs: Policy specs (:func:`parse_policies`).
        nb_windows, length, test_fraction: See :func:`make_windows`.
        split: The windows compared on, one of :data:`SPLITS`.
        jobs: Processes of the comparison (the values do not depend on it).
        outdir: Output folder, created if needed.
        train: An agent file to train on the training windows first; the trained
            agent is then compared as ``train:outmodel``.
        train_episodes: Training episodes (with ``train``).
        inmodel: Checkpoint the training starts from.
        outmodel: Checkpoint the training writes [``outdir/model.pt``].
        quiet: No progress bars.

    Returns:
        The :class:`EvaluationResult`.

    Raises:
        HDeepRMError: any invalid input (names, files, counts) or misbehaving agent.
    """
    check_output_folder(outdir)
    if options.gpu is not None:
        raise OptionsError("hdeeprm-evaluate compares CPU policies on windows of an SWF trace; options with a 'gpu' "
                           "block are a timed GPU run: run it with hdeeprm-launch (or compare GPU placements with "
                           "hdeeprm-gpu atc23)", path=options.source)
    policies = parse_policy_list(specs, options.start_strategy) if specs or not train else []   # checked first
    if train:   # the agent and -om are checked before any window is drawn or trained on
        from hdeeprm.agents.checkpoint import check_writable

        check_learning(load_agent(options.replace(run="train"), train), train)
        if outmodel:
            check_writable(outmodel)
    most_runs = max(1, nb_windows * (len(policies) + bool(train)))   # no more workers than runs (jobs < 1: refused)
    with evaluation_workers(options, min(jobs, most_runs)) as pool:   # they start while the trace is planned here
        the_plan = plan(options, nb_windows=nb_windows, length=length, test_fraction=test_fraction)
        selected = the_plan.selected(split)
        outdir = Path(outdir)
        with lock_folder(outdir):
            return _run_evaluation(options, policies, the_plan, selected, outdir, nb_windows=nb_windows,
                                   length=length, test_fraction=test_fraction, split=split, jobs=jobs, pool=pool,
                                   train=train, train_episodes=train_episodes, inmodel=inmodel, outmodel=outmodel,
                                   quiet=quiet)


def _run_evaluation(options: Options, policies: list[Policy], the_plan: Plan, selected: list[Window], outdir: Path,
                    *, nb_windows: int, length: int, test_fraction: float, split: str, jobs: int,
                    pool: WorkerPool | None, train: str | None,
                    train_episodes: int, inmodel: str | None, outmodel: str | None,
                    quiet: bool) -> EvaluationResult:
    """:func:`run_evaluation` once the inputs are checked and ``outdir`` locked."""
    from hdeeprm.outputs.evaluation import aggregate, plot_boxes, plot_training, write_csv
    from hdeeprm.run.lifecycle import write_run_info

    training: list[dict] = []
    if train:
        outmodel = str(outmodel or outdir / "model.pt")
        training = train_agent(options, train, the_plan.windows, episodes=train_episodes, outmodel=outmodel,
                               inmodel=inmodel, progress=not quiet, trace=the_plan.trace)
        write_csv(outdir / "training.csv", training)
        plot_training(training, outdir / "training.png")
        policies = [*policies, *parse_policies(f"{train}:{outmodel}", options.start_strategy)]
    rows = evaluate(options, policies, selected, jobs=jobs, progress=not quiet, trace=the_plan.trace, pool=pool)
    labels = [p.label for p in policies]
    summary = aggregate(rows, labels)
    write_csv(outdir / "windows.csv", rows)
    write_csv(outdir / "summary.csv", summary)
    plot_boxes(rows, labels, outdir / "bounded_slowdown.png", title=describe_windows(selected, split, length))
    write_run_info(outdir, options, the_plan.span, {"evaluation": {
        "nb_windows": nb_windows, "window_length": length, "test_fraction": test_fraction, "split": split,
        "windows": [vars(w) for w in the_plan.windows], "policies": [vars(p) for p in policies],
        "trained": {"agent": train, "episodes": train_episodes, "inmodel": inmodel, "outmodel": outmodel}
        if train else None}})
    return EvaluationResult(plan=the_plan, policies=policies, rows=rows, summary=summary, training=training,
                            outdir=outdir)
