"""HDeepRM's console scripts, one module each; :func:`guarded` turns errors into exit codes."""
from __future__ import annotations

import sys
from collections.abc import Callable

from hdeeprm.errors import HDeepRMError, InputError


def guarded(prog: str, action: Callable[[], int | None], *, failure_code: int = 2) -> int:
    """Run a command's ``action`` and map what it raises to a message and an exit code.

    Only the command-line front ends call this; the library raises and never exits.

    Args:
        prog: Command name used in messages, e.g. ``"hdeeprm-launch"``.
        action: The command's work; returns an exit code (None = 0).
        failure_code: Exit code of an :class:`HDeepRMError` that is not bad input
            (e.g. a simulation or protocol failure); bad input always gives 2.

    Returns:
        The exit code: ``action``'s, 2 for bad input (an :class:`InputError` or an
        unreadable file), ``failure_code`` for other HDeepRM errors, 130 when interrupted.
    """
    try:
        return action() or 0
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    except HDeepRMError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return failure_code
    except OSError as exc:
        print(f"{prog}: error: {exc.strerror}: {exc.filename}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{prog}: interrupted", file=sys.stderr)
        return 130
