"""Errors raised by HDeepRM.

Every error a user can cause (a bad trace line, an unknown processor type, a
wrong option) is an :class:`HDeepRMError` subclass whose message names the
file, the line and the field when they are known, in the form
"``X`` must be Y, got Z (file:line)". Only the command-line front ends turn
these errors into exit codes; library code never calls :func:`sys.exit`.
"""
from __future__ import annotations


class HDeepRMError(Exception):
    """Base class of every error HDeepRM raises on purpose."""


class InputError(HDeepRMError):
    """An input file is malformed.

    Args:
        message: What is wrong, e.g. "field 5 (allocated processors) must be an integer, got 'x'".
        path: The file being read, if any.
        line: The 1-based line number in ``path``, if known.
        field: The name of the offending field, if known.
    """

    def __init__(self, message: str, path: str | None = None, line: int | None = None,
                 field: str | None = None) -> None:
        self.path = path
        self.line = line
        self.field = field
        where = ""
        if path is not None:
            where = f" ({path}" + (f":{line}" if line is not None else "") + ")"
        super().__init__(message + where)


class WorkloadError(InputError):
    """A workload (SWF trace or Batsim JSON workload) is malformed or unusable."""


class PlatformError(InputError):
    """A platform description (HDeepRM JSON, type library or SimGrid XML) is malformed."""


class OptionsError(InputError):
    """An options file or a command-line option is invalid."""


class AgentError(HDeepRMError):
    """A user agent file cannot be loaded or an agent misbehaves (e.g. an out-of-range action).

    Args:
        message: What failed, e.g. "agent.py:12: MyAgent.decide() raised ValueError: boom".
        user_traceback: The frames of the user's code that raised (formatted as Python
            prints them, "" when none): front ends print them after the message.
    """

    def __init__(self, message: str, user_traceback: str = "") -> None:
        self.user_traceback = user_traceback
        super().__init__(message)


class ProtocolError(HDeepRMError):
    """A Batsim protocol message is malformed or asks for something unsupported."""


class SimulationError(HDeepRMError):
    """The decision system asked the simulator for something impossible.

    For example starting a job on a host that is already busy, or starting a
    job that was never submitted.
    """
