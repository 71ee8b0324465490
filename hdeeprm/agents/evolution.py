"""Learning by search over an agent's weights: the cross-entropy method, and the linear policy it trains.

* :class:`LinearPolicyAgent`: a policy pair per decision chosen by a linear score of the observation (one row of
  weights per action); it starts as the first action of its set, so a run of the untrained agent is the
  heuristic put first (an imitation start).
* :func:`cross_entropy_method`: the cross-entropy method with a diagonal Gaussian and a decaying extra noise
  (Rubinstein 1999; the noisy variant of Szita and Lőrincz, "Learning Tetris using the noisy cross-entropy
  method", Neural Computation 18(12), 2006). It needs only a fitness per weight vector, here the mean bounded
  slowdown of whole windows (:func:`hdeeprm.run.evolve.train_cem`): the figure an agent is judged on, not a
  per-decision proxy.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch
from torch import nn

from hdeeprm.agents.learning import PolicyLearningAgent
from hdeeprm.errors import OptionsError


class LinearPolicyAgent(PolicyLearningAgent):
    """A linear policy: the action with the highest ``W x + b`` (``test``), or a sample of its softmax (``train``).

    ``W`` (action_size, observation_size) starts at 0 and ``b`` at 1 for the first action of the set and 0 for the
    others, so the untrained agent always takes the first action: order the action set with the heuristic to
    start from first. Meant for the compact observations (``"generations"``, ``"minimal"``): a few dozen inputs,
    so that :func:`cross_entropy_method` can search all the weights.

    Args:
        See :class:`~hdeeprm.agents.learning.PolicyLearningAgent` (``hidden`` is unused).
    """

    def build_policy(self) -> nn.Module:
        """One linear layer, observation (observation_size,) → scores (action_size,), started at the first action."""
        layer = nn.Linear(self.observation_size, self.action_size)
        with torch.no_grad():
            layer.weight.zero_()
            layer.bias.zero_()
            layer.bias[0] = 1.0
        return layer

    def decide(self, observation: np.ndarray) -> int:
        """The highest score's action (``test``, in NumPy on the layer's own memory), or a sample (``train``)."""
        if self.training_run:
            return super().decide(observation)
        layer = self.policy_net
        scores = layer.weight.detach().numpy() @ np.asarray(observation, dtype=np.float32)
        scores += layer.bias.detach().numpy()
        p = np.exp(scores - scores.max())
        p /= p.sum()
        self.probs.append(p.tolist())
        return int(np.argmax(scores))


@dataclass
class CEMState:
    """The search distribution and the best weights seen.

    Attributes:
        mean: float64, shape (dim,): the Gaussian's mean.
        std: float64, shape (dim,): its standard deviations (before the extra noise).
        best: float64, shape (dim,): the weights of the best fitness evaluated so far.
        best_fitness: That fitness (lower is better), +inf before any.
        history: One row per generation: ``generation``, ``best`` (of the generation), ``elite_mean``,
            ``best_so_far``, ``evaluations``, ``cpu_seconds`` (since the start).
    """

    mean: np.ndarray
    std: np.ndarray
    best: np.ndarray
    best_fitness: float = float("inf")
    history: list[dict[str, Any]] = field(default_factory=list)


def cross_entropy_method(fitness: Callable[[np.ndarray], float], mean: np.ndarray, *, std: float = 0.5,
                         population: int = 16, elite: int = 4, generations: int = 50, extra_noise: float = 0.3,
                         noise_decay: int = 60, smoothing: float = 0.7, cpu_seconds: float | None = None, seed: int = 0,
                         on_generation: Callable[[dict[str, Any]], None] | None = None) -> CEMState:
    """Minimise ``fitness`` over weight vectors with the noisy cross-entropy method.

    Each generation draws ``population`` vectors from N(mean, diag(std² + noise)), the first being the mean itself
    (so the distribution's centre is always evaluated), evaluates them, and moves mean and variance towards those
    of the ``elite`` lowest: ``mean ← α · elite mean + (1 − α) · mean``, the same for the variances, α =
    ``smoothing``. The extra variance ``noise = extra_noise² · max(0, 1 − t / noise_decay)`` at generation t
    keeps the search from collapsing early (Szita and Lőrincz 2006). The defaults were chosen on quadratics of 4
    and 136 weights (the CPU room agent's size), where the plain method (α = 1, noise 0.1 over 20 generations)
    froze a weight before reaching it.

    Args:
        fitness: Weight vector (float64, shape (dim,)) → a float, lower is better; deterministic for a fair search.
        mean: The start, float64, shape (dim,).
        std: The start's standard deviation for every weight.
        population: Vectors per generation (>= 2).
        elite: Vectors the distribution is refitted to (1 <= elite <= population).
        generations: The most generations.
        extra_noise: Standard deviation of the decaying extra noise.
        noise_decay: Generations over which the extra noise falls to 0.
        smoothing: α in (0, 1], the step towards the elite's mean and variance.
        cpu_seconds: Stop after the generation that passes this process CPU time, or None.
        seed: Seed of the draws (NumPy's default generator).
        on_generation: Called with each generation's history row, or None.

    Returns:
        The final :class:`CEMState`; ``best`` holds the best vector evaluated (the one to keep).

    Raises:
        OptionsError: a size out of range.
    """
    if population < 2 or not 1 <= elite <= population or generations < 1 or not 0.0 < smoothing <= 1.0:
        raise OptionsError(f"the cross-entropy method needs population >= 2 (got {population}), 1 <= elite <= "
                           f"population (got {elite}), generations >= 1 (got {generations}) and 0 < smoothing <= 1 "
                           f"(got {smoothing})")
    rng = np.random.default_rng(seed)
    mean = np.asarray(mean, dtype=np.float64).copy()
    state = CEMState(mean=mean, std=np.full(mean.shape, float(std)), best=mean.copy())
    start = time.process_time()
    evaluations = 0
    for t in range(generations):
        noise = extra_noise ** 2 * max(0.0, 1.0 - t / noise_decay)
        scale = np.sqrt(state.std ** 2 + noise)
        draws = state.mean + scale * rng.standard_normal((population, mean.size))
        draws[0] = state.mean
        values = np.array([fitness(x) for x in draws])
        evaluations += population
        order = np.argsort(values, kind="stable")
        chosen = draws[order[:elite]]
        if values[order[0]] < state.best_fitness:
            state.best_fitness, state.best = float(values[order[0]]), draws[order[0]].copy()
        state.mean = smoothing * chosen.mean(axis=0) + (1.0 - smoothing) * state.mean
        state.std = np.sqrt(smoothing * chosen.var(axis=0) + (1.0 - smoothing) * state.std ** 2)
        row = {"generation": t, "best": float(values[order[0]]), "elite_mean": float(values[order[:elite]].mean()),
               "best_so_far": state.best_fitness, "evaluations": evaluations,
               "cpu_seconds": time.process_time() - start}
        state.history.append(row)
        if on_generation is not None:
            on_generation(row)
        if cpu_seconds is not None and row["cpu_seconds"] >= cpu_seconds:
            break
    return state
