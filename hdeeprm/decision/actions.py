"""The action index map: policy pairs <-> action indices (HDeepRM's action space).

An action is a *policy pair* (Herrera et al. 2019): a job-selection policy
(:mod:`hdeeprm.decision.orderings`) that orders the queue and a core-selection
policy (:mod:`hdeeprm.decision.core_selection`) that places each job. Action
index = 6 × job_policy_index + core_policy_index in the registries' orders
(0…35); :data:`VOID` = 36 starts nothing and waits for the next event. The
indices are a saved model's interface: never renumber them.

This module is the only place that maps names to indices and back; options,
the environment, the manager and ``probs.json`` all use it.
"""
from __future__ import annotations

from hdeeprm.decision.core_selection import CORE_SELECTIONS
from hdeeprm.decision.orderings import JOB_ORDERINGS
from hdeeprm.errors import OptionsError

#: Job-selection policies, in action-index order.
JOB_POLICIES: tuple[str, ...] = JOB_ORDERINGS.names()
#: Core-selection policies, in action-index order.
CORE_POLICIES: tuple[str, ...] = CORE_SELECTIONS.names()
#: Index of the void action in the full action space (36).
VOID = len(JOB_POLICIES) * len(CORE_POLICIES)
#: Name of the void action.
VOID_NAME = "void"


def action_index(job_policy: str, core_policy: str) -> int:
    """Index of a policy pair in the full 37-action space.

    Raises:
        OptionsError: an unknown policy name (the message lists the valid ones and the closest).
    """
    return len(CORE_POLICIES) * JOB_ORDERINGS.index(job_policy) + CORE_SELECTIONS.index(core_policy)


def policy_pair(action: int) -> tuple[str, str] | None:
    """The (job policy, core policy) of a full action index; None for :data:`VOID`.

    The inverse of :func:`action_index`.
    """
    if action == VOID:
        return None
    return JOB_POLICIES[action // len(CORE_POLICIES)], CORE_POLICIES[action % len(CORE_POLICIES)]


def action_name(action: int) -> str:
    """Name of a full action index: ``"first-high_gflops"`` style, or ``"void"``."""
    pair = policy_pair(action)
    return VOID_NAME if pair is None else "-".join(pair)


def parse_policy_pair(pair: str) -> tuple[str, str]:
    """Split a ``"job-core"`` policy pair such as ``"first-high_gflops"``.

    Raises:
        OptionsError: not of the form job-core, or unknown policies.
    """
    job, sep, core = pair.partition("-")
    if not sep:
        raise OptionsError(f"policy pair must be 'job_policy-core_policy', got '{pair}'")
    action_index(job, core)
    return job, core


def parse_action(action: int | str) -> int:
    """A full action index from an index (0…36) or a name (``"first-high_gflops"``, ``"void"``).

    Raises:
        OptionsError: an index out of range or an unknown name.
    """
    if isinstance(action, str):
        return VOID if action == VOID_NAME else action_index(*parse_policy_pair(action))
    index = int(action)
    if not 0 <= index <= VOID:
        raise OptionsError(f"actions must be in [0, {VOID}] ({VOID} = void), got {index}")
    return index
