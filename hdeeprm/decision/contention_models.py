"""Contention models: the pstates of a processor's busy and idle cores given its load.

The rule of the original HDeepRM (Herrera et al. 2019; the project's ``docs/model.rst``,
"Heterogeneity layer"): busy cores compute in P0, or in P1 while the bandwidth their jobs
request exceeds the processor's; idle cores of a processor with a busy core sit in P2, and
every core of a fully idle processor in P3. :class:`~hdeeprm.decision.contention.ResourceState`
asks the model for every processor whose load changes. Models are registered by name in
:data:`CONTENTION_MODELS` (``hdeeprm``, the default, and ``none``) and chosen with the options'
``contention`` key, the environment's ``contention`` argument or :func:`register_contention_model`.
"""
from __future__ import annotations

import numpy as np

from hdeeprm.errors import OptionsError
from hdeeprm.platform.hierarchy import P0, P1, P2, P3
from hdeeprm.registry import Registry


class ContentionModel:
    """Maps the load of a processor to the pstates of its cores.

    Subclass and override :meth:`pstates` to plug in another model;
    :class:`ResourceState` calls it for every processor whose load changed.
    """

    def pstates(self, busy_cores: int, used_bw: float, mem_bw: float) -> tuple[int, int]:
        """Pstates of the busy and of the idle cores of one processor.

        Args:
            busy_cores: Cores of the processor running a job.
            used_bw: Bandwidth its busy cores request, GB/s.
            mem_bw: Bandwidth the processor offers, GB/s.

        Returns:
            ``(pstate of its busy cores, pstate of its idle cores)``: P0 or P1 (P1 when
            ``used_bw > mem_bw``), and P2 or P3 (P3 when no core is busy).
        """
        if busy_cores == 0:
            return P0, P3
        return (P1 if used_bw > mem_bw else P0), P2

    def pstates_many(self, busy_cores: np.ndarray, used_bw: np.ndarray,
                     mem_bw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`pstates` for many processors at once (shapes (k,) in, (k,) int64 out).

        Subclasses that override :meth:`pstates` only are served by a loop over it.
        """
        if type(self).pstates is not ContentionModel.pstates:
            pairs = [self.pstates(int(b), float(u), float(m)) for b, u, m in zip(busy_cores, used_bw, mem_bw)]
            run, idle = zip(*pairs)
            return np.asarray(run, dtype=np.int64), np.asarray(idle, dtype=np.int64)
        active = busy_cores > 0
        return np.where(active & (used_bw > mem_bw), P1, P0), np.where(active, P2, P3)


class NoContention(ContentionModel):
    """Busy cores always compute at full speed (P0): memory bandwidth is never a limit.

    A baseline to measure what bandwidth contention costs a policy; memory stays a hard
    limit and idle cores still sit in P2 / P3.
    """

    def pstates(self, busy_cores: int, used_bw: float, mem_bw: float) -> tuple[int, int]:
        """``(P0, P2)`` when a core is busy, else ``(P0, P3)``."""
        return P0, (P2 if busy_cores else P3)

    def pstates_many(self, busy_cores: np.ndarray, used_bw: np.ndarray,
                     mem_bw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`pstates` for many processors (shapes (k,) in, (k,) int64 out)."""
        return np.full(busy_cores.shape, P0, dtype=np.int64), np.where(busy_cores > 0, P2, P3)


#: Contention models by name (classes, instantiated once per run).
CONTENTION_MODELS: Registry[type[ContentionModel]] = Registry("contention model")
CONTENTION_MODELS.register("hdeeprm", ContentionModel)
CONTENTION_MODELS.register("none", NoContention)
#: The model used when none is named (the original HDeepRM's).
DEFAULT_CONTENTION_MODEL = "hdeeprm"


def register_contention_model(name: str, model: type[ContentionModel]) -> None:
    """Make a user's :class:`ContentionModel` subclass selectable by ``name``.

    Raises:
        OptionsError: ``name`` is taken, or ``model`` is not a ContentionModel subclass.
    """
    if not (isinstance(model, type) and issubclass(model, ContentionModel)):
        raise OptionsError(f"contention model '{name}' must be a ContentionModel subclass, got {model!r}")
    CONTENTION_MODELS.register(name, model)


def make_contention_model(name: str) -> ContentionModel:
    """A new instance of the model registered as ``name``.

    Raises:
        OptionsError: unknown name (lists the valid ones and the closest).
    """
    return CONTENTION_MODELS[name]()
