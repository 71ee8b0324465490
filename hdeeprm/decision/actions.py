"""The action index map: policy pairs <-> action indices (HDeepRM's action space).

An action is a *policy pair* (Herrera et al. 2019): a job-selection policy
(:mod:`hdeeprm.decision.orderings`) that orders the queue and a core-selection
policy (:mod:`hdeeprm.decision.core_selection`) that places each job.

Numbering (a saved model's interface): indices are only ever appended; once an index is
given, it keeps its policy pair.

* **0-35**, the original HDeepRM's 36 pairs: ``6 * job_index + core_index`` over the
  original six job-selection and six core-selection policies
  (:data:`ORIGINAL_JOB_POLICIES`, :data:`ORIGINAL_CORE_POLICIES`);
* **36** = :data:`VOID`: start nothing, wait for the next event;
* **37-119**, the other pairs of the *base generation*, the 17 job-selection policies
  and 7 core selections registered when the numbering was frozen
  (:data:`BASE_JOB_POLICIES`, :data:`BASE_CORE_POLICIES`), listed row by row:
  job-selection policies in base order, and within one, core selections in base
  order, skipping the original 36: ``random-contiguous`` = 37,
  ``first-contiguous`` = 38, ..., ``low_mem_bw-contiguous`` = 42,
  ``longest-random`` = 43, ..., ``unicep-contiguous`` = 105,
  ``smallest_gpu_demand-random`` = 106, ..., ``shortest_gpu_time-contiguous`` = 119
  (:data:`BASE_NB_ACTIONS` = 120 actions, void included);
* **120 and above**, the pairs of every policy registered after the base generation (a
  new ordering in :data:`~hdeeprm.decision.orderings.JOB_ORDERINGS`, a new core
  selection in :data:`~hdeeprm.decision.core_selection.CORE_SELECTIONS`, in HDeepRM's
  source or a user's plugin registered at run time), taken in global registration order
  (:meth:`hdeeprm.registry.Registry.registered`, one count across both registries). A new
  job-selection policy ``J`` appends ``(J, c)`` for every core selection ``c`` known before
  it; a new core selection ``C`` appends ``(j, C)`` for every job-selection policy ``j``
  known before it; "known" policies are listed base first, then the later ones in
  registration order. Each pair is thus numbered once, when the later of its two
  policies is registered, and no registration moves an existing index. For example,
  a core selection ``foo`` registered after today's policies gives ``random-foo`` = 120,
  ``first-foo`` = 121, ..., ``shortest_gpu_time-foo`` = 136; an ordering ``bar``
  registered next gives ``bar-random`` = 137, ..., ``bar-contiguous`` = 143,
  ``bar-foo`` = 144.

Which pairs exist above 119 depends on what the process registered, so a checkpoint
stores its agent's actions by name and refuses an agent whose actions differ
(:mod:`hdeeprm.agents.checkpoint`); the names (``"wfp3-high_gflops"``) are the stable way
to refer to an action. :func:`action_table` gives the current table and
:func:`nb_actions` its size. The module attributes :data:`NB_ACTIONS`,
``JOB_POLICIES``, ``CORE_POLICIES`` and ``EXTENDED_PAIRS`` are computed from the
registries when read (``actions.NB_ACTIONS`` is always current); a name imported with
``from hdeeprm.decision.actions import NB_ACTIONS`` keeps the value of that moment.

The default action space (of the options and of the ``HDeepRM-v0`` environment)
stays the original 37 actions; the other pairs are reached through
``pybatsim.agent.policy_pair``, ``pybatsim.env.actions.selection`` or
:func:`parse_action`. This module is the only place that maps names to indices and
back; options, the environment, the manager and ``probs.json`` all use it.
"""
from __future__ import annotations

from typing import NamedTuple

from hdeeprm.decision.core_selection import CORE_SELECTIONS
from hdeeprm.decision.orderings import JOB_ORDERINGS
from hdeeprm.errors import OptionsError

#: The base generation's job-selection policies (numbered up to 119), in base order.
BASE_JOB_POLICIES: tuple[str, ...] = (
    "random", "first", "shortest", "smallest", "low_mem", "low_mem_bw", "longest", "largest", "saf",
    "f1", "f2", "f3", "f4", "wfp3", "unicep", "smallest_gpu_demand", "shortest_gpu_time")
#: The base generation's core selections (numbered up to 119), in base order.
BASE_CORE_POLICIES: tuple[str, ...] = (
    "random", "high_gflops", "high_cores", "high_mem", "high_mem_bw", "low_power", "contiguous")
#: The original HDeepRM's six job-selection policies (indices 0-35 with :data:`ORIGINAL_CORE_POLICIES`).
ORIGINAL_JOB_POLICIES: tuple[str, ...] = BASE_JOB_POLICIES[:6]
#: The original HDeepRM's six core-selection policies.
ORIGINAL_CORE_POLICIES: tuple[str, ...] = BASE_CORE_POLICIES[:6]
_NJ, _NC = len(ORIGINAL_JOB_POLICIES), len(ORIGINAL_CORE_POLICIES)
#: Index of the void action (36).
VOID = _NJ * _NC
#: Name of the void action.
VOID_NAME = "void"
#: The base generation's pairs, index by index (None at :data:`VOID`).
_BASE_PAIRS: tuple[tuple[str, str] | None, ...] = (
    *((job, core) for job in ORIGINAL_JOB_POLICIES for core in ORIGINAL_CORE_POLICIES), None,
    *((job, core) for job in BASE_JOB_POLICIES for core in BASE_CORE_POLICIES
      if job not in ORIGINAL_JOB_POLICIES or core not in ORIGINAL_CORE_POLICIES))
#: Number of actions of the base generation (120: the 119 pairs and void).
BASE_NB_ACTIONS = len(_BASE_PAIRS)


class _Table(NamedTuple):
    """The action table of one state of the registries."""

    key: tuple                                      # (JOB_ORDERINGS.registered(), CORE_SELECTIONS.registered())
    pairs: tuple[tuple[str, str] | None, ...]       # pair of each index, None at VOID
    names: tuple[str, ...]                          # name of each index
    index: dict[tuple[str, str], int]               # inverse of pairs


_table_cache: _Table | None = None


def _build(key: tuple) -> _Table:
    """The table of the module docstring for registries in the state ``key``."""
    jobs, cores = key
    for base, registered, kind in ((BASE_JOB_POLICIES, jobs, "job-selection"),
                                   (BASE_CORE_POLICIES, cores, "core-selection")):
        names = {name for name, _ in registered}
        missing = [name for name in base if name not in names]
        if missing:
            raise OptionsError(f"the base action table needs the {kind} policy '{missing[0]}', which is not "
                               "registered (base policies are never removed)")
    later = sorted([(number, True, name) for name, number in jobs if name not in BASE_JOB_POLICIES]
                   + [(number, False, name) for name, number in cores if name not in BASE_CORE_POLICIES])
    pairs: list[tuple[str, str] | None] = list(_BASE_PAIRS)
    known_jobs, known_cores = list(BASE_JOB_POLICIES), list(BASE_CORE_POLICIES)
    for _, is_job, name in later:
        if is_job:
            pairs.extend((name, core) for core in known_cores)
            known_jobs.append(name)
        else:
            pairs.extend((job, name) for job in known_jobs)
            known_cores.append(name)
    names = tuple(VOID_NAME if pair is None else "-".join(pair) for pair in pairs)
    return _Table(key, tuple(pairs), names, {pair: i for i, pair in enumerate(pairs) if pair is not None})


def _table() -> _Table:
    """The table of the registries' current state (rebuilt only when a registration changed it)."""
    global _table_cache
    key = (JOB_ORDERINGS.registered(), CORE_SELECTIONS.registered())
    if _table_cache is None or _table_cache.key != key:
        _table_cache = _build(key)
    return _table_cache


def action_table() -> tuple[str, ...]:
    """The current action table: the name of every full action index, in index order.

    Returns:
        ``("random-random", ..., "void", "random-contiguous", ...)``: entry ``i`` is the
        name of action ``i`` (``"job-core"`` for a policy pair, ``"void"`` at :data:`VOID`);
        :data:`BASE_NB_ACTIONS` entries, plus the pairs of the policies registered after the
        base generation (module docstring).

    Raises:
        OptionsError: a base policy is no longer registered.
    """
    return _table().names


def nb_actions() -> int:
    """Number of full action indices now: ``len(action_table())`` (120 with no later registration)."""
    return len(_table().names)


def __getattr__(name: str):
    """``NB_ACTIONS``, ``JOB_POLICIES``, ``CORE_POLICIES`` and ``EXTENDED_PAIRS``, computed when read.

    * ``NB_ACTIONS``: :func:`nb_actions`;
    * ``JOB_POLICIES`` / ``CORE_POLICIES``: the registered job-selection / core-selection
      policies, in registration order;
    * ``EXTENDED_PAIRS``: the policy pairs of indices ``VOID + 1`` on, in index order.

    Raises:
        AttributeError: any other name.
    """
    if name == "NB_ACTIONS":
        return nb_actions()
    if name == "JOB_POLICIES":
        return JOB_ORDERINGS.names()
    if name == "CORE_POLICIES":
        return CORE_SELECTIONS.names()
    if name == "EXTENDED_PAIRS":
        return _table().pairs[VOID + 1:]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names, with those :func:`__getattr__` computes."""
    return sorted([*globals(), "NB_ACTIONS", "JOB_POLICIES", "CORE_POLICIES", "EXTENDED_PAIRS"])


def action_index(job_policy: str, core_policy: str) -> int:
    """Full action index of a policy pair (0-35 for the original pairs, > 36 for the others).

    Args:
        job_policy: A registered job-selection policy (``"wfp3"``).
        core_policy: A registered core selection (``"high_gflops"``).

    Returns:
        The pair's index in :func:`action_table`.

    Raises:
        OptionsError: an unknown policy name (the message lists the valid ones and the closest).
    """
    JOB_ORDERINGS.check(job_policy)
    CORE_SELECTIONS.check(core_policy)
    return _table().index[(job_policy, core_policy)]


def policy_pair(action: int) -> tuple[str, str] | None:
    """The (job-selection policy, core selection) of a full action index; None for :data:`VOID`.

    The inverse of :func:`action_index`.

    Raises:
        OptionsError: ``action`` is not in [0, :func:`nb_actions` - 1].
    """
    pairs = _table().pairs
    if not 0 <= action < len(pairs):
        raise OptionsError(f"actions must be in [0, {len(pairs) - 1}] ({VOID} = void), got {action}")
    return pairs[action]


def action_name(action: int) -> str:
    """Name of a full action index: ``"first-high_gflops"`` style, or ``"void"``.

    Raises:
        OptionsError: ``action`` is not in [0, :func:`nb_actions` - 1].
    """
    pair = policy_pair(action)
    return VOID_NAME if pair is None else "-".join(pair)


def parse_policy_pair(pair: str) -> tuple[str, str]:
    """Split a ``"job-core"`` policy pair such as ``"first-high_gflops"``.

    Returns:
        ``(job_policy, core_policy)``, both registered.

    Raises:
        OptionsError: not of the form job-core, or unknown policies.
    """
    job, sep, core = pair.partition("-")
    if not sep:
        raise OptionsError(f"policy pair must be 'job_policy-core_policy', got '{pair}'")
    action_index(job, core)
    return job, core


def parse_action(action: int | str) -> int:
    """A full action index from an index (0 … nb_actions() - 1) or a name (``"wfp3-high_gflops"``, ``"void"``).

    Raises:
        OptionsError: an index out of range or an unknown name.
    """
    if isinstance(action, str):
        return VOID if action == VOID_NAME else action_index(*parse_policy_pair(action))
    index = int(action)
    total = nb_actions()
    if not 0 <= index < total:
        raise OptionsError(f"actions must be in [0, {total - 1}] ({VOID} = void), got {index}")
    return index


_table()    # the base policies are registered (fail at import otherwise)
