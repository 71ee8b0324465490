"""Registries of names: one place per kind of named thing, with closest-match suggestions.

Job orderings, core selections, start strategies, contention models,
objectives, observation types and agent types are each kept in a
:class:`Registry`. Options, the Gymnasium environment, the launcher and the
command-line tools all validate names through these registries, so a name is
written once and an unknown name always gets the same message, e.g.
``unknown objective 'makspan' (valid: avg_job_slowdown, ..., edp; did you mean
'makespan'?)``. The design follows Gymnasium's ``registration.py``
(https://gymnasium.farama.org/api/registry/), with :mod:`difflib` for the
suggestion.
"""
from __future__ import annotations

import difflib
import itertools
from collections.abc import Iterator, Sequence
from typing import Generic, TypeVar

from hdeeprm.errors import OptionsError

T = TypeVar("T")

#: Numbers every registration of every :class:`Registry`, in the order they happen (see
#: :meth:`Registry.registered`).
_REGISTRATIONS = itertools.count()


def suggest(name: str, valid: Sequence[str]) -> str:
    """Text listing the ``valid`` names and the closest match to ``name``.

    Args:
        name: The unknown name.
        valid: The names accepted.

    Returns:
        ``"valid: a, b, c; did you mean 'b'?"`` (the hint only when :func:`difflib.get_close_matches`
        finds one).
    """
    close = difflib.get_close_matches(name, list(valid), n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    return f"valid: {', '.join(valid)}{hint}"


class Registry(Generic[T]):
    """Named entries of one kind, in registration order (which is their index order).

    Args:
        kind: What the entries are, for messages (e.g. ``"job-selection policy"``).

    Example::

        OBJECTIVES = Registry("objective")
        OBJECTIVES.register("makespan", make_makespan_reward)
        OBJECTIVES["makespan"]      # the entry
        OBJECTIVES.names()          # ('makespan',)
    """

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._numbers: dict[str, int] = {}
        self._aliases: dict[str, str] = {}

    def register(self, name: str, entry: T) -> T:
        """Add ``entry`` under ``name`` and return it.

        Raises:
            OptionsError: ``name`` is already registered (names are never silently replaced).
        """
        if name in self._entries:
            raise OptionsError(f"{self.kind} '{name}' is already registered")
        self._entries[name] = entry
        self._numbers[name] = next(_REGISTRATIONS)
        return entry

    def alias(self, alias: str, name: str) -> None:
        """Accept ``alias`` as another spelling of registered ``name`` (e.g. a term of another tool).

        An alias is not a name: :meth:`names` and iteration leave it out, and :meth:`check` returns the name.

        Raises:
            OptionsError: ``name`` is not registered, or ``alias`` is a name or an alias already.
        """
        self.check(name)
        if alias in self._entries or alias in self._aliases:
            raise OptionsError(f"{self.kind} '{alias}' is already registered")
        self._aliases[alias] = name

    def check(self, name: str) -> str:
        """Return the registered name ``name`` spells (itself, or the name an alias stands for).

        Raises:
            OptionsError: ``unknown <kind> '<name>' (valid: ...; did you mean '...'?)``.
        """
        if isinstance(name, str) and name in self._aliases:
            return self._aliases[name]
        if not isinstance(name, str) or name not in self._entries:
            raise OptionsError(f"unknown {self.kind} '{name}' ({suggest(str(name), self.names())})")
        return name

    def __getitem__(self, name: str) -> T:
        """The entry registered under ``name`` (raises :class:`OptionsError` as :meth:`check`)."""
        return self._entries[self.check(name)]

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is registered (as a name or an alias)."""
        return name in self._entries or name in self._aliases

    def __iter__(self) -> Iterator[str]:
        """The names, in registration order."""
        return iter(self._entries)

    def __len__(self) -> int:
        """Number of entries."""
        return len(self._entries)

    def names(self) -> tuple[str, ...]:
        """The names, in registration order."""
        return tuple(self._entries)

    def spellings(self) -> tuple[str, ...]:
        """Every spelling :meth:`check` accepts: the names in registration order, then the aliases."""
        return tuple(self._entries) + tuple(self._aliases)

    def index(self, name: str) -> int:
        """Position of ``name`` in registration order (raises :class:`OptionsError` as :meth:`check`)."""
        return self.names().index(self.check(name))

    def registered(self) -> tuple[tuple[str, int], ...]:
        """Each name with its registration number, in registration order.

        Registration numbers count the registrations of *all* registries of the process, in
        the order they happened, so they tell which of two names of two registries was
        registered first (:mod:`hdeeprm.decision.actions` numbers the policy pairs of names
        registered after its base generation in that global order).

        Returns:
            ``((name, number), ...)``, numbers increasing.
        """
        return tuple((name, self._numbers[name]) for name in self._entries)
