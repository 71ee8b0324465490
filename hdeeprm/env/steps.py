"""Two rules every HDeepRM environment's ``step`` follows: a reset comes first, and ``max_steps`` truncates.

The CPU environments (``HDeepRM-v0``, ``-JobSlot-v0``, ``-BackfillSlot-v0``) and the GPU ones
(``GpuPlacement-v0``, ``GpuJobSlot-v0``, ``GpuProvisioning-v0/v1``) call these, so the error and the
truncation are the same everywhere (Gymnasium's ``step`` API: https://gymnasium.farama.org/api/env/).
"""
from __future__ import annotations

from typing import TypeVar

import gymnasium

_Run = TypeVar("_Run")


def started(run: _Run | None) -> _Run:
    """The environment's running simulation, checked.

    Args:
        run: What ``reset`` built (an episode, a GPU replay), None before the first ``reset``.

    Returns:
        ``run``.

    Raises:
        gymnasium.error.ResetNeeded: ``step`` was called before ``reset``.
    """
    if run is None:
        raise gymnasium.error.ResetNeeded("call reset() before step()")
    return run


def truncated(ended: bool, steps: int, max_steps: int | None) -> bool:
    """Gymnasium's ``truncated``: ``max_steps`` decisions were taken and the episode has not ended.

    Args:
        ended: The episode ended (``terminated``).
        steps: Decisions taken in the episode.
        max_steps: Decisions after which an episode is cut, None for never.
    """
    return not ended and max_steps is not None and steps >= max_steps
