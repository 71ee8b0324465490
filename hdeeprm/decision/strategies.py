"""Start strategies: which of the ordered queued jobs a decision starts.

A decision orders the queue with its job-selection policy, then a start
strategy walks that order and asks the core selection to place jobs. Every
strategy combines with any ordering and any core selection:

=============================  ================================================================
name                           what a decision starts
=============================  ================================================================
``head_of_line`` (default)     jobs in order until the first that does not fit, which blocks
                               the rest (the original HDeepRM's, Herrera et al. 2019)
``greedy``                     every job of the order that fits now, none waiting for another
                               (no reservation: how the Kubernetes scheduler treats pending pods,
                               the default of GPU runs)
``easy_backfilling``           head of line, then EASY backfilling (Lifka, "The ANL/IBM SP
                               scheduling system", JSSPP 1995): one reservation for the
                               blocked head, computed from requested times; a later job starts
                               now if it does not delay that reservation
``conservative_backfilling``   a reservation for every queued job, in order (Mu'alem and
                               Feitelson, "Utilization, predictability, workloads, and user
                               runtime estimates in scheduling the IBM SP2 with backfilling",
                               IEEE TPDS 12(6), 2001); a job starts now if its reservation is now
``commit_head``                jobs in order until the first that does not fit, which stays the
                               head, whatever arrives, until it starts (RLScheduler's scheduler,
                               Zhang et al. SC'20; :mod:`hdeeprm.decision.commit_head`)
=============================  ================================================================

The base class and the strategies without reservation live in
:mod:`hdeeprm.decision.start_strategy`, the backfilling ones in
:mod:`hdeeprm.decision.backfilling`; this module is their registry. GPU runs take
the same names (:class:`~hdeeprm.decision.gpu_manager.GpuManager`).
"""
from __future__ import annotations

from hdeeprm.decision.backfilling import ConservativeBackfilling, EasyBackfilling
from hdeeprm.decision.commit_head import CommitHead
from hdeeprm.decision.start_strategy import Greedy, HeadOfLine, StartStrategy
from hdeeprm.registry import Registry

__all__ = ["START_STRATEGIES", "DEFAULT_START_STRATEGY", "make_start_strategy", "StartStrategy", "HeadOfLine",
           "Greedy", "EasyBackfilling", "ConservativeBackfilling", "CommitHead"]


#: The start strategies by name; ``head_of_line`` is the default.
START_STRATEGIES: Registry[type[StartStrategy]] = Registry("start strategy")
START_STRATEGIES.register(HeadOfLine.name, HeadOfLine)
START_STRATEGIES.register(EasyBackfilling.name, EasyBackfilling)
START_STRATEGIES.register(ConservativeBackfilling.name, ConservativeBackfilling)
START_STRATEGIES.register(Greedy.name, Greedy)
START_STRATEGIES.register(CommitHead.name, CommitHead)
#: The strategy used when none is named (the original HDeepRM's).
DEFAULT_START_STRATEGY = HeadOfLine.name


def make_start_strategy(name: str) -> StartStrategy:
    """A fresh start strategy of the given name (see :data:`START_STRATEGIES`).

    Raises:
        OptionsError: an unknown name (lists the valid ones and the closest).
    """
    return START_STRATEGIES[name]()
