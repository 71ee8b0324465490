"""How much the commands say: ``-v``/``-vv``/``--log-level`` on every command, with the standard :mod:`logging`.

The package logs on the ``hdeeprm`` logger and its children (``logging.getLogger(__name__)``; a
:class:`logging.NullHandler` on ``hdeeprm``, so a library user sees nothing unless they configure
logging). A command prints those records on stderr as ``prog: level: message`` while it runs
(:func:`stderr_logging`, used by :func:`hdeeprm.cli.guarded`), from the level its command line chose:

* default: ``warning`` (what the commands always printed: warnings and errors);
* ``-v``: ``info`` (a run's inputs and each episode's figures), ``-vv``: ``debug``;
* ``--log-level NAME``: ``debug``, ``info``, ``warning``, ``error`` or ``critical`` (any case); ``error``
  silences the warnings.

``-v`` and ``--log-level`` exclude each other. ``hdeeprm-batsim`` keeps Batsim's own ``-v/--verbosity``
and takes ``--log-level`` only (:func:`add_verbosity_arguments` with ``short=False``).
"""
from __future__ import annotations

import argparse
import contextlib
import logging
import sys
from collections.abc import Iterator

#: The names ``--log-level`` takes, quietest last.
LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error", "critical")
#: The level of a command line without ``-v`` or ``--log-level``: warnings (what the commands always printed).
DEFAULT_LEVEL = logging.WARNING
#: The level of ``-v`` given once; twice or more is :data:`logging.DEBUG`.
VERBOSE_LEVEL = logging.INFO


def add_verbosity_arguments(parser: argparse.ArgumentParser, *, short: bool = True) -> None:
    """Add ``-v/--verbose`` (repeatable) and ``--log-level NAME`` to a command's parser (one excluding the other).

    Call it once the parser's subcommands are added: they take the flags too (``hdeeprm-gpu atc23 ... -v`` as
    ``hdeeprm-gpu -v atc23 ...``).

    Args:
        parser: The command's parser; ``args.verbose`` (int, the ``-v`` count, absent without ``short``) and
            ``args.log_level`` (a name of :data:`LEVELS`, or None) are read by :func:`log_level`.
        short: Whether to add ``-v/--verbose``; False for ``hdeeprm-batsim``, whose ``-v`` is Batsim's
            ``--verbosity``.
    """
    _add_flags(parser, short, {"verbose": 0, "log_level": None})
    for action in parser._actions:   # the subcommands' parsers: their flags must not reset the command's
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):   # a parser once, aliases or not
                _add_flags(sub, short, {"verbose": argparse.SUPPRESS, "log_level": argparse.SUPPRESS})


def _add_flags(parser: argparse.ArgumentParser, short: bool, defaults: dict) -> None:
    """The flags of :func:`add_verbosity_arguments` on one parser, with these defaults."""
    group = parser.add_mutually_exclusive_group()
    if short:
        group.add_argument("-v", "--verbose", action="count", default=defaults["verbose"],
                           help="say more on stderr: -v what the command does (info), -vv debugging details (debug)")
    group.add_argument("--log-level", type=str.lower, choices=LEVELS, default=defaults["log_level"], metavar="LEVEL",
                       help=f"messages shown on stderr, from this level up: {', '.join(LEVELS)} (default warning; "
                            "error hides the warnings)")


def log_level(args: argparse.Namespace) -> int:
    """The :mod:`logging` level a command line chose with :func:`add_verbosity_arguments`' flags.

    Args:
        args: The parsed command line (flags not added: :data:`DEFAULT_LEVEL`).

    Returns:
        ``--log-level``'s level when given, else :data:`DEFAULT_LEVEL` (no ``-v``), :data:`VERBOSE_LEVEL`
        (``-v``) or :data:`logging.DEBUG` (``-vv`` and more).
    """
    name = getattr(args, "log_level", None)
    if name:
        return logging.getLevelNamesMapping()[name.upper()]
    return {0: DEFAULT_LEVEL, 1: VERBOSE_LEVEL}.get(getattr(args, "verbose", 0), logging.DEBUG)


class _StderrHandler(logging.Handler):
    """Prints the ``hdeeprm`` logger's records as ``prog: level: message`` on the current stderr."""

    def __init__(self, prog: str) -> None:
        super().__init__()
        self.prog = prog

    def emit(self, record: logging.LogRecord) -> None:
        """Print one record (``sys.stderr`` is looked up now, so redirections are followed)."""
        print(f"{self.prog}: {record.levelname.lower()}: {record.getMessage()}", file=sys.stderr)


@contextlib.contextmanager
def stderr_logging(prog: str, level: int = DEFAULT_LEVEL) -> Iterator[None]:
    """Print the ``hdeeprm`` logger's records from ``level`` up on stderr as ``prog: level: message``.

    The logger's level, handlers and propagation are put back on exit, so a command called in-process
    (a test, a notebook) leaves logging as it found it.

    Args:
        prog: The command's name, first on each line, e.g. ``"hdeeprm-launch"``.
        level: A :mod:`logging` level (:func:`log_level`).

    Yields:
        Nothing; the records are printed while the block runs.
    """
    logger = logging.getLogger("hdeeprm")
    handler, before = _StderrHandler(prog), (logger.level, logger.propagate)
    logger.addHandler(handler)
    logger.setLevel(level)
    logger.propagate = False
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(before[0])
        logger.propagate = before[1]
