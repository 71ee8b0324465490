"""Training an agent's weights by the cross-entropy method on whole training windows.

:func:`train_cem` judges each weight vector by the figure the agent is compared on, the mean over the training
windows of a metric of the metrics summary (by default the mean bounded slowdown), with the agent acting greedily
(``run`` ``test``), so every evaluation is deterministic. The search is
:func:`hdeeprm.agents.evolution.cross_entropy_method`; the weights kept are the best evaluated on the training
windows (test windows are never run), saved as an ordinary checkpoint that ``hdeeprm-launch -im`` and
``hdeeprm-evaluate`` load.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from hdeeprm.config.options import Options
from hdeeprm.config.trace_windows import TraceWindows
from hdeeprm.decision.contention import make_contention_model
from hdeeprm.errors import OptionsError
from hdeeprm.run.episode import run_episode
from hdeeprm.run.evaluate import Window, WindowRunner, window_options
from hdeeprm.run.launch import agent_inputs, prepare_agent, seeded_torch


def train_cem(options: Options, agent_path: str, windows: Sequence[Window], *, outmodel: str | Path,
              trace: TraceWindows | None = None, metric: str = "mean_bounded_slowdown", std: float = 0.5,
              population: int = 16, elite: int = 4, generations: int = 50, cpu_minutes: float | None = None,
              on_generation=None, objective: Callable[[list[dict]], float] | None = None) -> list[dict]:
    """Search the weights of a learning agent with the cross-entropy method; save the best.

    Args:
        options: The base options (action set, observation, seed, start strategy); the agent is built as
            ``hdeeprm-launch`` builds it, in ``run`` ``test`` (greedy). ``options.seed`` seeds the search.
        agent_path: The agent file; its class must be a :class:`torch.nn.Module` learning agent (e.g. a
            :class:`~hdeeprm.agents.evolution.LinearPolicyAgent`): all its parameters are searched.
        windows: Windows of the plan; only those with split ``"train"`` are run.
        outmodel: Checkpoint written (atomically) at the end, with the best weights.
        trace: The options' trace already read, or None: read here.
        metric: The key of the metrics summary minimised, averaged over the training windows.
        std, population, elite, generations: Of :func:`~hdeeprm.agents.evolution.cross_entropy_method`.
        cpu_minutes: Stop after the generation that passes this process CPU time, or None.
        on_generation: Called with each generation's row, or None.
        objective: The figure minimised, from the metrics summaries of the training windows (in window order),
            or None: the mean of ``metric`` over them (a window where it is undefined counts +inf).

    Returns:
        One row per generation (see :class:`~hdeeprm.agents.evolution.CEMState`), fitness in ``metric``'s unit.

    Raises:
        OptionsError: no training window, or an agent without searchable weights.
        HDeepRMError: invalid inputs or a misbehaving agent.
    """
    import torch

    from hdeeprm.agents.evolution import cross_entropy_method

    train = [w for w in windows if w.split == "train"]
    if not train:
        raise OptionsError("training needs training windows: lower the test fraction or draw more windows")
    options = options.replace(run="test")
    runner = WindowRunner(options, trace)
    cls = runner.agent_class(options, agent_path)
    runs = []
    for window in train:   # each window's observer normalises by its own jobs
        wopts = window_options(options, window)
        workload = runner.workload(window)
        runs.append((wopts, workload, agent_inputs(wopts, runner.hierarchy, workload, cls)[0]))
    with seeded_torch(options.seed):
        agent = prepare_agent(runs[0][0], runner.hierarchy, runs[0][1], cls)[0]
    if not isinstance(agent, torch.nn.Module) or not list(agent.parameters()):
        raise OptionsError(f"{agent_path}: the cross-entropy method searches a torch.nn.Module agent's "
                           f"parameters; {type(agent).__name__} has none")
    params = list(agent.parameters())
    vector_to_parameters = torch.nn.utils.vector_to_parameters

    def fitness(x: np.ndarray) -> float:
        with torch.no_grad():
            vector_to_parameters(torch.as_tensor(x, dtype=torch.float32), params)
        summaries = []
        for wopts, workload, observer in runs:
            episode, _ = run_episode(runner.hierarchy, workload, wopts, agent, record=False, observer=observer,
                                     model=make_contention_model(wopts.contention))
            agent.clear()
            summaries.append(episode.metrics())
        if objective is not None:
            return float(objective(summaries))
        values = [s[metric] for s in summaries]
        return sum(float("inf") if v is None else float(v) for v in values) / len(values)

    start = torch.nn.utils.parameters_to_vector(params).detach().double().numpy()
    state = cross_entropy_method(fitness, start, std=std, population=population, elite=elite,
                                 generations=generations, cpu_seconds=None if cpu_minutes is None else cpu_minutes * 60,
                                 seed=options.seed, on_generation=on_generation)
    with torch.no_grad():
        vector_to_parameters(torch.as_tensor(state.best, dtype=torch.float32), params)
    agent.save_checkpoint(outmodel)
    return state.history
