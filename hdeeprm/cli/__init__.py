"""HDeepRM's console scripts, one module each.

Every command's ``main`` is wrapped by :func:`command` (Ctrl-C at any moment, argument parsing
included, ends with ``prog: interrupted`` and exit 130; SIGTERM takes the same path and ends with
``prog: terminated`` and exit 143) and runs its work through :func:`guarded`
(errors become one line and an exit code). Importing this package also makes an interrupt that
no ``main`` could catch (while the interpreter imports a command, or after ``main`` returned) end
with ``interrupted`` instead of a traceback (:func:`_interrupt_hook`).

The other modules:

* :mod:`~hdeeprm.cli.batsim`: ``hdeeprm-batsim``: the embedded engine behind Batsim's command line and
  protocol.
* :mod:`~hdeeprm.cli.check`: ``hdeeprm-check options.json [-cw workload.json]`` or ``hdeeprm-check OUTDIR``:
  check before (or after) a run.
* :mod:`~hdeeprm.cli.evaluate`: ``hdeeprm-evaluate``: compare policies (and trained agents) on windows of a
  real trace.
* :mod:`~hdeeprm.cli.gpu`: ``hdeeprm-gpu``: GPU types, GPU clusters and the ATC'23 placement experiment.
* :mod:`~hdeeprm.cli.launch`: ``hdeeprm-launch``: run a workload on a platform with an agent.
* :mod:`~hdeeprm.cli.platform`: ``hdeeprm-platform``: inspect an HDeepRM platform and export it to SimGrid
  XML.
* :mod:`~hdeeprm.cli.serve`: ``hdeeprm-serve``: serve a registered HDeepRM environment over HTTP and WebSocket
  (OpenEnv, uvicorn).
* :mod:`~hdeeprm.cli.sweep`: ``hdeeprm-sweep``: a grid of ``hdeeprm-launch`` runs, one summary table.
* :mod:`~hdeeprm.cli.verbosity`: ``-v``/``-vv``/``--log-level`` of every command, and the ``hdeeprm`` logger's
  records on stderr while a command runs.
* :mod:`~hdeeprm.cli.visual`: ``hdeeprm-visual``: plot an ``hdeeprm-launch`` output folder into PNG files.
* :mod:`~hdeeprm.cli.workload`: ``hdeeprm-workload``: convert SWF traces, show workload statistics, generate
  traces.
"""
from __future__ import annotations

import argparse
import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable, Sequence

from hdeeprm.cli.verbosity import DEFAULT_LEVEL, stderr_logging
from hdeeprm.errors import AgentError, HDeepRMError, InputError
from hdeeprm.run import stop

#: Exit code of bad input (an :class:`~hdeeprm.errors.InputError`, an unreadable file), as argparse's.
EXIT_BAD_INPUT = 2
#: Exit code of an :class:`~hdeeprm.errors.AgentError`: the user's agent file cannot be loaded,
#: or the agent raised or returned something that is not an action.
EXIT_AGENT = 3
#: Exit code of an interrupted command (128 + SIGINT, as shells report Ctrl-C).
EXIT_INTERRUPTED = 130
#: Exit code of a command stopped by SIGTERM (128 + SIGTERM, as shells report it).
EXIT_TERMINATED = 143


def guarded(prog: str, action: Callable[[], int | None], *, failure_code: int = 2,
            level: int = DEFAULT_LEVEL) -> int:
    """Run a command's ``action`` and map what it raises to a message and an exit code.

    Only the command-line front ends call this; the library raises and never exits.

    Args:
        prog: Command name used in messages, e.g. ``"hdeeprm-launch"``.
        action: The command's work; returns an exit code (None = 0).
        failure_code: Exit code of an :class:`HDeepRMError` that is not bad input
            (e.g. a simulation or protocol failure); bad input always gives 2.
        level: The :mod:`logging` level the command line chose (:func:`~hdeeprm.cli.verbosity.log_level`:
            ``-v``, ``--log-level``); default warnings.

    While ``action`` runs, the records of the ``hdeeprm`` logger from ``level`` up (by default its
    warnings: an interrupted run's saved model, an empty selection, ...) are printed on stderr as
    ``prog: warning: ...`` (:func:`~hdeeprm.cli.verbosity.stderr_logging`).

    Returns:
        The exit code: ``action``'s, :data:`EXIT_BAD_INPUT` (2) for bad input (an
        :class:`InputError` or an unreadable file), :data:`EXIT_AGENT` (3) for an
        :class:`AgentError` (its message first, then the agent's own frames when it raised),
        ``failure_code`` for other HDeepRM errors, :data:`EXIT_INTERRUPTED` (130) when interrupted
        (:data:`EXIT_TERMINATED`, 143, by SIGTERM).
    """
    try:
        with stderr_logging(prog, level):
            return action() or 0
    except InputError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except AgentError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        if exc.user_traceback:
            print(exc.user_traceback, end="", file=sys.stderr)
        return EXIT_AGENT
    except HDeepRMError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return failure_code
    except OSError as exc:
        what = exc.strerror or str(exc) or type(exc).__name__
        where = f": {exc.filename}" if exc.filename else ""
        print(f"{prog}: error: {what}{where}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return _interrupted(prog)


def add_run_arguments(parser: argparse.ArgumentParser, default_outdir: str, *, quiet: str, jobs: str | None = None,
                      outdir: str = "") -> None:
    """Add the flags every command that runs simulations shares: ``-o/--outdir``, ``-q/--quiet`` and ``-j/--jobs``.

    Args:
        parser: The command's parser; ``args.outdir`` (str), ``args.quiet`` (bool) and, with ``jobs``,
            ``args.jobs`` (int, default 1).
        default_outdir: The output folder when none is given.
        quiet: What ``-q`` silences, e.g. ``"no progress bar"``.
        jobs: Help of ``-j`` (what the processes run), or None for a command without workers.
        outdir: More help for ``-o`` (e.g. what happens to the folder's previous contents).
    """
    parser.add_argument("-o", "--outdir", default=default_outdir, metavar="OUTDIR",
                        help=f"output folder (default ./{default_outdir}){outdir}")
    parser.add_argument("-q", "--quiet", action="store_true", help=quiet)
    if jobs is not None:
        parser.add_argument("-j", "--jobs", type=int, default=1, help=f"{jobs} (default 1)")


def add_library_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the type library flags shared by ``hdeeprm-launch`` and ``hdeeprm-check``.

    ``--library types.json`` (processor/node type libraries of a platform JSON) and
    ``--gpu-library gpus.json`` (GPU type libraries, for GPU runs), both repeatable, later files
    overriding earlier ones, as ``hdeeprm-platform`` takes them.

    Args:
        parser: The command's parser; ``args.library`` and ``args.gpu_library`` are lists (default empty).
    """
    parser.add_argument("--library", action="append", default=[], metavar="types.json",
                        help="extra type library JSON for the platform (repeatable; later files override earlier "
                             "ones), as hdeeprm-platform --library")
    parser.add_argument("--gpu-library", action="append", default=[], metavar="gpus.json",
                        help="extra GPU type library JSON for a GPU run's platform (repeatable), as "
                             "hdeeprm-platform summary --gpu-library")


def _interrupted(prog: str) -> int:
    """Say that ``prog`` was interrupted (a second Ctrl-C while saying it is ignored); return its exit code.

    Returns:
        :data:`EXIT_INTERRUPTED` (130) after Ctrl-C, :data:`EXIT_TERMINATED` (143) after
        SIGTERM (``prog: terminated``).
    """
    sigterm = stop.terminated()
    with contextlib.suppress(KeyboardInterrupt, OSError):
        print(f"{prog}: {'terminated' if sigterm else 'interrupted'}", file=sys.stderr, flush=True)
    return EXIT_TERMINATED if sigterm else EXIT_INTERRUPTED


def command(prog: str) -> Callable[[Callable[..., int]], Callable[..., int]]:
    """Decorate a command's ``main(argv=None) -> int`` so that Ctrl-C never gives a traceback.

    The one wrapper of every console script: a :class:`KeyboardInterrupt` raised anywhere in
    ``main`` (while parsing the arguments, importing NumPy, running, writing, or cleaning up after
    a first interrupt) ends with ``prog: interrupted`` on stderr and exit code
    :data:`EXIT_INTERRUPTED` (130).

    Called without ``argv`` (a console script: the process ends with ``main``), SIGTERM takes
    the same path (:func:`hdeeprm.run.stop.on_sigterm`: the workers stopped, the run's folder
    marked interrupted), ending with ``prog: terminated`` and exit code 143; and SIGINT is
    ignored once ``main`` has returned, so that a Ctrl-C while the interpreter shuts down
    does not kill the process silently with the work done.

    Args:
        prog: Command name used in the message, e.g. ``"hdeeprm-launch"``.

    Returns:
        The decorator.
    """
    def decorate(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def wrapped(argv: Sequence[str] | None = None) -> int:
            whole_process = argv is None and threading.current_thread() is threading.main_thread()
            try:
                if whole_process:
                    signal.signal(signal.SIGTERM, stop.on_sigterm)
                code = main(argv)
            except KeyboardInterrupt:
                code = _interrupted(prog)
            if whole_process:
                # the process's own command line: it ends now, and a Ctrl-C while the interpreter shuts
                # down (its SIGINT handler reset) would kill it silently; the work is done, so ignore it
                signal.signal(signal.SIGINT, signal.SIG_IGN)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)   # the work is done: a SIGTERM now just ends it
            return code
        return wrapped
    return decorate


def _interrupt_hook(kind, value, tb, previous=sys.excepthook) -> None:
    """``sys.excepthook``: an uncaught Ctrl-C prints ``prog: interrupted``, anything else as before.

    Python then ends the process by SIGINT, which shells report as 130.
    """
    if issubclass(kind, KeyboardInterrupt):
        name = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
        spec = getattr(sys.modules.get("__main__"), "__spec__", None)
        if spec is not None and spec.name.startswith(f"{__name__}."):   # python -m hdeeprm.cli.launch
            name = "hdeeprm-" + spec.name.rsplit(".", 1)[1]
        _interrupted(name if name.startswith("hdeeprm-") else "hdeeprm")
        return
    previous(kind, value, tb)


if sys.excepthook is sys.__excepthook__:
    sys.excepthook = _interrupt_hook
