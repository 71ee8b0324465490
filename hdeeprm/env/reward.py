"""Rewards: the objective an agent optimises (HDeepRM's definitions, DESIGN section 6).

A reward is computed right after each action, from the state it leads to
(pending jobs, running jobs, core pstates). Higher is better for every
objective.

======================  ====================================================  ==================
objective               reward                                                unit
======================  ====================================================  ==================
``avg_job_slowdown``    −Σ 1 / requested time, over pending and running jobs  1/s
``avg_job_completion``  −(pending jobs + running jobs)                        jobs
``avg_utilization``     number of busy cores                                  cores
``makespan``            Σ current speed of all cores                          GFLOP/s
``energy_consumption``  −Σ current power of all cores                         W
``edp``                 −(ΣP / ΣP_max) · (ΣG_max / max(ΣS, S_floor))²         unitless
======================  ====================================================  ==================

Current speed and power of a core are its G and P times the factors of its
pstate, from :mod:`hdeeprm.platform.hierarchy` (the table the engine's energy uses).
Jobs with an unknown requested time (see
:func:`hdeeprm.env.observation.requested_times`) do not enter the slowdown sum.

**edp** (energy-delay product). For work W done at aggregate speed S with
power P, energy is E = P·W/S and delay D = W/S, so EDP = P·W²/S²: at each
instant the platform's contribution to the EDP of the work it is doing is
proportional to P/S². The reward is its negative, with P scaled by the power
of all cores in P0 (ΣP_max) and S by their peak speed (ΣG_max). When nothing
computes (S = 0) S is replaced by S_floor, the slowest speed a computing core
can have (0.75 × the smallest G, pstate P1), which is the worst a state with a
job could score; an idle platform is therefore never rewarded over a busy one.
The value is in [−(ΣG_max / S_floor)², 0].

The original HDeepRM crashed on ``avg_utilization`` and ``edp``; both work here.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from hdeeprm.errors import OptionsError
from hdeeprm.env.observation import SHARED_QUEUE_INDEX, requested_times
from hdeeprm.config.options import OBJECTIVES
from hdeeprm.decision.policies import suggest
from hdeeprm.platform.hierarchy import P1, PSTATE_POWER_FACTORS, PSTATE_SPEED_FACTORS, N_PSTATES



class _Tables:
    """Per-platform sums used by the pstate-based rewards (built once per hierarchy)."""

    def __init__(self, hierarchy) -> None:
        speed = np.asarray(hierarchy.core_speed, dtype=np.float64)
        power = np.asarray(hierarchy.core_power, dtype=np.float64)
        self.speed_gflops = speed / 1e9
        self.power = power
        self.speed_f = np.asarray(PSTATE_SPEED_FACTORS, dtype=np.float64)
        self.power_f = np.asarray(PSTATE_POWER_FACTORS, dtype=np.float64)
        self.max_power = float(power.sum()) or 1.0
        self.max_speed = float(speed.sum()) / 1e9 or 1.0
        self.floor_speed = (PSTATE_SPEED_FACTORS[P1] * float(speed.min()) / 1e9) if speed.size else 1.0
        if self.floor_speed <= 0.0:
            self.floor_speed = 1.0

    def speed(self, pstate: np.ndarray) -> float:
        """Σ current speed, GFLOP/s."""
        return float(np.bincount(pstate, weights=self.speed_gflops, minlength=N_PSTATES) @ self.speed_f)

    def power_sum(self, pstate: np.ndarray) -> float:
        """Σ current power, W."""
        return float(np.bincount(pstate, weights=self.power, minlength=N_PSTATES) @ self.power_f)


class Reward:
    """``reward(episode) -> float`` for one objective (callable, see the module docstring).

    Per-platform and per-workload tables are built on first use and kept for
    the same hierarchy / workload objects.

    Args:
        objective: One of :data:`OBJECTIVES`.

    Raises:
        OptionsError: unknown objective (lists the valid ones and the closest match).
    """

    def __init__(self, objective: str) -> None:
        if objective not in OBJECTIVES:
            raise OptionsError(f"unknown objective '{objective}' ({suggest(objective, OBJECTIVES)})")
        self.objective = objective
        self._fn: Callable = getattr(self, "_" + objective)
        self._hier = None
        self._tables: _Tables | None = None
        self._wl = None
        self._inv_rt = np.zeros(0)
        self._inv_rt_list: list[float] = []
        self._queue_indices = SHARED_QUEUE_INDEX

    def __call__(self, episode) -> float:
        """The reward of ``episode``'s current state (float, unit per objective)."""
        return self._fn(episode)

    def _platform(self, episode) -> _Tables:
        if episode.hierarchy is not self._hier:
            self._hier = episode.hierarchy
            self._tables = _Tables(episode.hierarchy)
        return self._tables

    def _avg_job_slowdown(self, episode) -> float:
        if episode.workload is not self._wl:
            self._wl = episode.workload
            rt = requested_times(episode.workload)
            self._inv_rt = np.where(rt > 0.0, 1.0 / np.where(rt > 0.0, rt, 1.0), 0.0)
            self._inv_rt_list = self._inv_rt.tolist()
        m = episode.manager
        total = float(self._inv_rt.take(self._queue_indices(m.queue)).sum()) if m.queue else 0.0
        inv = self._inv_rt_list
        for i in m.running:
            total += inv[i]
        return -total

    def _avg_job_completion(self, episode) -> float:
        m = episode.manager
        return -float(len(m.queue) + len(m.running))

    def _avg_utilization(self, episode) -> float:
        st = episode.manager.state
        return float(episode.hierarchy.nb_cores - st.nb_free)

    def _makespan(self, episode) -> float:
        return self._platform(episode).speed(episode.manager.state.core_pstate)

    def _energy_consumption(self, episode) -> float:
        return -self._platform(episode).power_sum(episode.manager.state.core_pstate)

    def _edp(self, episode) -> float:
        t = self._platform(episode)
        pstate = episode.manager.state.core_pstate
        speed = max(t.speed(pstate), t.floor_speed)
        return -(t.power_sum(pstate) / t.max_power) * (t.max_speed / speed) ** 2


def make_reward(objective: str) -> Reward:
    """The reward function ``reward(episode) -> float`` of ``objective`` (see :class:`Reward`).

    Raises:
        OptionsError: unknown objective.
    """
    return Reward(objective)
