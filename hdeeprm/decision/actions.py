"""The action index map: policy pairs <-> action indices (HDeepRM's action space).

An action is a *policy pair* (Herrera et al. 2019): a job-selection policy
(:mod:`hdeeprm.decision.orderings`) that orders the queue and a core-selection
policy (:mod:`hdeeprm.decision.core_selection`) that places each job.

Numbering (a saved model's interface: never renumbered):

* **0-35**, the original HDeepRM's 36 pairs: ``6 * job_index + core_index`` over the
  original six job-selection and six core-selection policies
  (:data:`ORIGINAL_JOB_POLICIES`, :data:`ORIGINAL_CORE_POLICIES`);
* **36** = :data:`VOID`: start nothing, wait for the next event;
* **37 and above**, every other pair of the registries (orderings such as ``wfp3``
  added after the original, core selections such as ``contiguous``), listed row by
  row: job-selection policies in registration order, and within one, core-selection
  policies in registration order, skipping the original 36. With the 15 orderings
  and 7 core selections registered today: ``random-contiguous`` = 37,
  ``first-contiguous`` = 38, ..., ``low_mem_bw-contiguous`` = 42,
  ``longest-random`` = 43, ..., ``unicep-contiguous`` = 105 (:data:`NB_ACTIONS` = 106).
  These indices stay as long as no policy is registered in between; the names
  (``"wfp3-high_gflops"``) are the stable way to refer to them.

The default action space (of the options and of the ``HDeepRM-v0`` environment)
stays the original 37 actions; the other pairs are reached through
``pybatsim.agent.policy_pair``, ``pybatsim.env.actions.selection`` or
:func:`parse_action`. This module is the only place that maps names to indices and
back; options, the environment, the manager and ``probs.json`` all use it.
"""
from __future__ import annotations

from hdeeprm.decision.core_selection import CORE_SELECTIONS
from hdeeprm.decision.orderings import JOB_ORDERINGS
from hdeeprm.errors import OptionsError

#: Job-selection policies, in action-index order.
JOB_POLICIES: tuple[str, ...] = JOB_ORDERINGS.names()
#: Core-selection policies, in action-index order.
CORE_POLICIES: tuple[str, ...] = CORE_SELECTIONS.names()
#: The original HDeepRM's six job-selection policies (indices 0-35 with :data:`ORIGINAL_CORE_POLICIES`).
ORIGINAL_JOB_POLICIES: tuple[str, ...] = JOB_POLICIES[:6]
#: The original HDeepRM's six core-selection policies.
ORIGINAL_CORE_POLICIES: tuple[str, ...] = CORE_POLICIES[:6]
_NJ, _NC = len(ORIGINAL_JOB_POLICIES), len(ORIGINAL_CORE_POLICIES)
#: Index of the void action (36).
VOID = _NJ * _NC
#: Name of the void action.
VOID_NAME = "void"
#: The pairs numbered from ``VOID + 1`` on, in index order (see the module docstring).
EXTENDED_PAIRS: tuple[tuple[str, str], ...] = tuple(
    (job, core) for j, job in enumerate(JOB_POLICIES) for c, core in enumerate(CORE_POLICIES)
    if j >= _NJ or c >= _NC)
_EXTENDED_INDEX = {pair: VOID + 1 + k for k, pair in enumerate(EXTENDED_PAIRS)}
#: Number of full action indices (the original 37 plus :data:`EXTENDED_PAIRS`).
NB_ACTIONS = VOID + 1 + len(EXTENDED_PAIRS)


def action_index(job_policy: str, core_policy: str) -> int:
    """Full action index of a policy pair (0-35 for the original pairs, > 36 for the others).

    Raises:
        OptionsError: an unknown policy name (the message lists the valid ones and the closest).
    """
    j, c = JOB_ORDERINGS.index(job_policy), CORE_SELECTIONS.index(core_policy)
    if j < _NJ and c < _NC:
        return _NC * j + c
    return _EXTENDED_INDEX[(job_policy, core_policy)]


def policy_pair(action: int) -> tuple[str, str] | None:
    """The (job policy, core policy) of a full action index; None for :data:`VOID`.

    The inverse of :func:`action_index`.
    """
    if action == VOID:
        return None
    if action > VOID:
        return EXTENDED_PAIRS[action - VOID - 1]
    return ORIGINAL_JOB_POLICIES[action // _NC], ORIGINAL_CORE_POLICIES[action % _NC]


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
    """A full action index from an index (0 … NB_ACTIONS - 1) or a name (``"wfp3-high_gflops"``, ``"void"``).

    Raises:
        OptionsError: an index out of range or an unknown name.
    """
    if isinstance(action, str):
        return VOID if action == VOID_NAME else action_index(*parse_policy_pair(action))
    index = int(action)
    if not 0 <= index < NB_ACTIONS:
        raise OptionsError(f"actions must be in [0, {NB_ACTIONS - 1}] ({VOID} = void), got {index}")
    return index
