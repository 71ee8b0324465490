"""Rewards: the objective an agent optimises (HDeepRM's definitions; ``docs/model.rst``, "Rewards").

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
:func:`hdeeprm.decision.observation.requested_times`) do not enter the slowdown sum.

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

from hdeeprm.decision.view import StateView
from hdeeprm.decision.observation import requested_times
from hdeeprm.platform.hierarchy import N_PSTATES, P1, PSTATE_POWER_FACTORS, PSTATE_SPEED_FACTORS
from hdeeprm.registry import Registry
from hdeeprm.summation import left_sum

#: Reward objectives: name -> name of the :class:`Reward` method computing it.
OBJECTIVES: Registry[str] = Registry("objective")
for _name in ("avg_job_slowdown", "avg_job_completion", "avg_utilization", "makespan",
              "energy_consumption", "edp"):
    OBJECTIVES.register(_name, "_" + _name)
#: The objective used when none is named (the original HDeepRM's).
DEFAULT_OBJECTIVE = "avg_job_slowdown"


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
    """``reward(view) -> float`` for one objective (callable, see the module docstring).

    Per-platform and per-workload tables are built on first use and kept for
    the same hierarchy / workload objects.

    Args:
        objective: One of :data:`OBJECTIVES`.

    Raises:
        OptionsError: unknown objective (lists the valid ones and the closest match).
    """

    def __init__(self, objective: str) -> None:
        self._fn: Callable = getattr(self, OBJECTIVES[objective])
        self.objective = objective
        self._hier = None
        self._tables: _Tables | None = None
        self._wl = None
        self._inv_rt = np.zeros(0)
        self._inv_rt_list: list[float] = []

    def __call__(self, view: StateView) -> float:
        """The reward of ``view``'s current state (float, unit per objective)."""
        return self._fn(view)

    def _platform(self, view: StateView) -> _Tables:
        if view.hierarchy is not self._hier:
            self._hier = view.hierarchy
            self._tables = _Tables(view.hierarchy)
        return self._tables

    def _avg_job_slowdown(self, view: StateView) -> float:
        if view.workload is not self._wl:
            self._wl = view.workload
            rt = requested_times(view.workload)
            self._inv_rt = np.where(rt > 0.0, 1.0 / np.where(rt > 0.0, rt, 1.0), 0.0)
            self._inv_rt_list = self._inv_rt.tolist()
        queue = view.queue
        total = float(self._inv_rt.take(view.queue_indices(queue)).sum()) if queue else 0.0
        # then each running job's, added one after the other in the running jobs' order
        return -left_sum(map(self._inv_rt_list.__getitem__, view.running), total)

    def _avg_job_completion(self, view: StateView) -> float:
        return -float(len(view.queue) + len(view.running))

    def _avg_utilization(self, view: StateView) -> float:
        st = view.resources
        return float(view.hierarchy.nb_cores - st.nb_free)

    def _makespan(self, view: StateView) -> float:
        return self._platform(view).speed(view.resources.core_pstate)

    def _energy_consumption(self, view: StateView) -> float:
        return -self._platform(view).power_sum(view.resources.core_pstate)

    def _edp(self, view: StateView) -> float:
        t = self._platform(view)
        pstate = view.resources.core_pstate
        speed = max(t.speed(pstate), t.floor_speed)
        return -(t.power_sum(pstate) / t.max_power) * (t.max_speed / speed) ** 2


def make_reward(objective: str) -> Reward:
    """The reward function ``reward(view) -> float`` of ``objective`` (see :class:`Reward`).

    Raises:
        OptionsError: unknown objective.
    """
    return Reward(objective)
