"""The policies of ``hdeeprm-evaluate``: policy pairs with a start strategy, and learning agents.

A spec is a policy pair ``ordering-core_selection`` with an optional start strategy,
``first-high_gflops+easy_backfilling``; comma lists give every combination,
``first,shortest-high_gflops+head_of_line,easy_backfilling``; or a learning agent
``agent.py[:model.pt][+strategy]``, run greedily (``run`` ``test``). Names are checked
against the registries (job orderings, core selections, start strategies), so every
registered name works.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import product
from pathlib import Path

from hdeeprm.decision.actions import parse_policy_pair
from hdeeprm.decision.strategies import DEFAULT_START_STRATEGY, START_STRATEGIES
from hdeeprm.errors import OptionsError

_AGENT_SPEC = re.compile(r"(?P<agent>.+?\.py)(?::(?P<model>[^+]+))?(?:\+(?P<strategy>[^+]+))?")


@dataclass(frozen=True)
class Policy:
    """One policy of an evaluation.

    Attributes:
        label: Name in the table: ``job-core`` or ``agent.py[:model.pt]``, plus
            ``+strategy`` when the strategy is not the default (``head_of_line``).
        strategy: Start strategy, a name of :data:`~hdeeprm.decision.strategies.START_STRATEGIES`.
        job: Job ordering (policy pairs), else None.
        core: Core selection (policy pairs), else None.
        agent: Agent file (learning agents), else None.
        model: Checkpoint loaded into the agent, or None (an untrained agent).
    """

    label: str
    strategy: str
    job: str | None = None
    core: str | None = None
    agent: str | None = None
    model: str | None = None


def _names(text: str, what: str, spec: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if not all(names):
        raise OptionsError(f"policy '{spec}' has an empty {what} name")
    return names


def parse_policies(spec: str, default_strategy: str = DEFAULT_START_STRATEGY) -> list[Policy]:
    """The policies of one command-line spec (see the module docstring for the forms).

    Args:
        spec: ``ordering-core[+strategy]`` (comma lists allowed in each part) or
            ``agent.py[:model.pt][+strategy]``.
        default_strategy: Start strategy when the spec names none (the options').

    Returns:
        One policy, or every combination of the comma lists (orderings, then core
        selections, then strategies vary slowest to fastest).

    Raises:
        OptionsError: an unknown name (with the valid ones and the closest), a
            malformed spec, or a missing agent or model file; the message quotes the spec.
    """
    agent = _AGENT_SPEC.fullmatch(spec.strip())
    if agent:
        strategy = agent["strategy"] or default_strategy
        _check_strategy(strategy, spec)
        for what, path in (("agent file", agent["agent"]), ("model file", agent["model"])):
            if path is not None and not Path(path).is_file():
                raise OptionsError(f"policy '{spec}': {what} not found ({path})")
        label = _label(agent["agent"] + (f":{agent['model']}" if agent["model"] else ""), strategy)
        return [Policy(label=label, strategy=strategy, agent=agent["agent"], model=agent["model"])]
    pairs, plus, strategies = spec.strip().partition("+")
    jobs_text, dash, cores_text = pairs.partition("-")
    if not dash or "+" in strategies or (plus and not strategies):
        raise OptionsError(f"policy '{spec}' must be 'ordering-core_selection[+start_strategy]' "
                           f"(e.g. 'first-high_gflops+easy_backfilling') or 'agent.py[:model.pt][+start_strategy]'")
    names = _names(strategies, "start strategy", spec) if plus else [default_strategy]
    out = []
    for job, core, strategy in product(_names(jobs_text, "ordering", spec), _names(cores_text, "core selection", spec),
                                       names):
        try:
            parse_policy_pair(f"{job}-{core}")
        except OptionsError as exc:
            raise OptionsError(f"policy '{spec}': {exc}") from None
        _check_strategy(strategy, spec)
        out.append(Policy(label=_label(f"{job}-{core}", strategy), strategy=strategy, job=job, core=core))
    return out


def _label(name: str, strategy: str) -> str:
    """``name``, with ``+strategy`` when the strategy is not the default."""
    return name if strategy == DEFAULT_START_STRATEGY else f"{name}+{strategy}"


def _check_strategy(name: str, spec: str) -> None:
    try:
        START_STRATEGIES.check(name)
    except OptionsError as exc:
        raise OptionsError(f"policy '{spec}': {exc}") from None


def parse_policy_list(specs: Sequence[str], default_strategy: str = DEFAULT_START_STRATEGY) -> list[Policy]:
    """All policies of several specs, in order (see :func:`parse_policies`).

    Raises:
        OptionsError: no spec, a bad spec, or one policy given twice.
    """
    if not specs:
        raise OptionsError("no policy to evaluate: give at least one, e.g. -p first-high_gflops")
    out: list[Policy] = []
    for spec in specs:
        for policy in parse_policies(spec, default_strategy):
            if any(p.label == policy.label for p in out):
                raise OptionsError(f"policy '{policy.label}' is given twice")
            out.append(policy)
    return out
