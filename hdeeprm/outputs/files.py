"""Writing files so that an interrupted write never leaves a truncated file behind.

:func:`atomic_write` writes to a temporary file beside the destination, named
``.NAME.PID.XXXXXXXX.tmp``, and moves it into place with :func:`os.replace`, which
POSIX makes atomic within one file system (https://pubs.opengroup.org/onlinepubs/9699919799/functions/rename.html):
a reader sees the old file or the new one, never a mix. The file gets the mode an
ordinary ``open`` would give it (0666 minus the umask), not :func:`tempfile.mkstemp`'s
0600. A process killed while writing (``kill -9``) leaves its temporary file; the next
write of the same destination removes such orphans (those whose process is gone).
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO


def _umask() -> int:
    """The process's umask (reading it means setting it: it is set back at once)."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` exists on this host."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:   # it exists, owned by someone else
        return True
    return True


def remove_orphans(path: str | os.PathLike) -> list[Path]:
    """Remove the temporary files that interrupted writes of ``path`` left behind.

    Args:
        path: A destination of :func:`atomic_write`.

    Returns:
        The files removed: ``.NAME.*.tmp`` beside ``path`` whose writing process is gone
        (or that carry no process id, as those of HDeepRM <= 0.3).
    """
    path = Path(path)
    removed = []
    prefix = f".{path.name}."
    with contextlib.suppress(OSError):
        for tmp in path.parent.iterdir():
            name = tmp.name
            if not (name.startswith(prefix) and name.endswith(".tmp")):
                continue
            pid = name[len(prefix):].split(".", 1)[0]
            if pid.isdigit() and _alive(int(pid)):
                continue
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
                removed.append(tmp)
    return removed


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, *, binary: bool = False) -> Iterator[IO]:
    """Open ``path`` for writing so that it is replaced only once the ``with`` block succeeds.

    Args:
        path: Destination file (its folder must exist).
        binary: Yield a binary file instead of a UTF-8 text file.

    Yields:
        The temporary file to write into.

    Raises:
        OSError: The folder cannot be written (naming ``path``, not the temporary file).
    """
    path = Path(path)
    remove_orphans(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:   # name the file asked for, not the temporary one
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
    try:
        with os.fdopen(fd, "wb" if binary else "w", **({} if binary else {"encoding": "utf-8"})) as f:
            yield f
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
