"""RLScheduler's job priority keys, as its code computes them.

RLScheduler (Zhang et al., SC'20; https://github.com/DIR-LAB/deep-batch-scheduler,
commit cd433e3, ``HPCSimPickJobs.py``) compares its agent with five heuristics whose
keys differ from the published functions HDeepRM's orderings implement
(:mod:`hdeeprm.decision.orderings`: ``first``, ``shortest``, ``f1``, ``wfp3``,
``unicep``). The queue is sorted ascending by the key (Python's stable sort):

================  ==========================================================  ==========
name              key (ascending), ``s`` absolute submit time, ``n``          their line
                  processors, ``r`` requested time (-1 possible)
================  ==========================================================  ==========
``rls_fcfs``      ``s``                                                       l. 230-232
``rls_sjf``       ``(r, s)``                                                  l. 202-207
``rls_f1``        ``log10(r or 0.1) * n + 870 * log10(s or 0.1)`` (``x or     l. 171-176
                  0.1``: 0.1 when ``x <= 0``)
``rls_wfp3``      ``-(w / r)**3 * n`` with ``w = -1 - s``                     l. 215-220
``rls_unicep``    ``-(w + 1e-15) / (log2(n + 1e-15) * r)``, ``w = -1 - s``    l. 222-228
================  ==========================================================  ==========

The quirks, kept on purpose: F1 takes the absolute trace submit time (a window
late in a trace has ``log10(s)`` near 7-8), not the time since the window's start;
WFP3's and UNICEP's waiting time is ``job.scheduled_time - job.submit_time`` with
``scheduled_time`` still -1 for a queued job, so it is the constant ``-1 - s``,
not ``now - s``: both keys never change while a job waits. None of the five keys
depends on the clock, so the order of two queued jobs never changes.

Ties: the replay (:mod:`hdeeprm.run.rlscheduler`) breaks equal keys by trace
order, which is what their stable sorts give when submit times follow job numbers
(checked when reading, :func:`hdeeprm.workload.rlscheduler.read_rlscheduler_swf`).
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

#: ``key(submit, procs, request) -> tuple of float64 arrays`` compared lexicographically.
Key = Callable[[np.ndarray, np.ndarray, np.ndarray], tuple[np.ndarray, ...]]


def _fcfs(s: np.ndarray, n: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, ...]:
    return (s.astype(np.float64),)


def _sjf(s: np.ndarray, n: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, ...]:
    return r.astype(np.float64), s.astype(np.float64)


def _f1(s: np.ndarray, n: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, ...]:
    rr = np.where(r > 0, r, 0.1).astype(np.float64)
    ss = np.where(s > 0, s, 0.1).astype(np.float64)
    return (np.log10(rr) * n + 870 * np.log10(ss),)


def _waiting(s: np.ndarray) -> np.ndarray:
    """Their waiting time of a queued job: ``scheduled_time (-1) - submit_time``."""
    return (-1 - s).astype(np.float64)


def _wfp3(s: np.ndarray, n: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, ...]:
    with np.errstate(divide="ignore", invalid="ignore"):
        return (-np.power(_waiting(s) / r, 3) * n,)


def _unicep(s: np.ndarray, n: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, ...]:
    with np.errstate(divide="ignore", invalid="ignore"):
        return (-(_waiting(s) + 1e-15) / (np.log2(n + 1e-15) * r),)


#: RLScheduler's heuristics by name, in the column order of their README's table.
RLS_KEYS: dict[str, Key] = {"rls_fcfs": _fcfs, "rls_wfp3": _wfp3, "rls_unicep": _unicep, "rls_sjf": _sjf,
                            "rls_f1": _f1}
#: Their README's column title of each key.
RLS_TITLES: dict[str, str] = {"rls_fcfs": "FCFS", "rls_wfp3": "WFP3", "rls_unicep": "UNI", "rls_sjf": "SJF",
                              "rls_f1": "F1"}


def rls_keys(name: str, submit: np.ndarray, procs: np.ndarray, request: np.ndarray) -> list[tuple[float, ...]]:
    """One sort key per job, as Python tuples of floats (for a heap or ``sorted``).

    Args:
        name: A name of :data:`RLS_KEYS`.
        submit: Absolute submit times, seconds (k,).
        procs: Processors (k,).
        request: Requested times, seconds (k,).

    Returns:
        ``k`` tuples, compared lexicographically (ascending = first).

    Raises:
        OptionsError: an unknown name (lists the valid ones).
    """
    from hdeeprm.errors import OptionsError
    from hdeeprm.registry import suggest

    if name not in RLS_KEYS:
        raise OptionsError(f"unknown RLScheduler heuristic '{name}' ({suggest(name, list(RLS_KEYS))})")
    columns = RLS_KEYS[name](np.asarray(submit), np.asarray(procs), np.asarray(request))
    return list(zip(*(c.tolist() for c in columns), strict=True))
