"""Writing files so that an interrupted write never leaves a truncated file behind.

:func:`atomic_write` writes to a temporary file beside the destination, named
``.NAME.PID.XXXXXXXX.tmp``, and moves it into place with :func:`os.replace`, which
POSIX makes atomic within one file system (https://pubs.opengroup.org/onlinepubs/9699919799/functions/rename.html):
a reader sees the old file or the new one, never a mix. The file gets the mode an
ordinary ``open`` would give it (0666 minus the umask), not :func:`tempfile.mkstemp`'s
0600. A process killed while writing (``kill -9``) leaves its temporary file; the next
write of the same destination removes such orphans (those whose process is gone).

:func:`lock_folder` makes an output folder one run's: an exclusive :func:`fcntl.flock` on
``FOLDER/.hdeeprm.lock`` (which holds the owner's process id), released by the kernel when
the process ends however it ends (``kill -9`` included), so a dead run never blocks the next one.
"""
from __future__ import annotations

import contextlib
import errno
import io
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from hdeeprm.errors import OptionsError

#: The lock file of an output folder (:func:`lock_folder`).
LOCK_FILE = ".hdeeprm.lock"


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


def remove_folder_orphans(folder: str | os.PathLike) -> list[Path]:
    """Remove the temporary files of :func:`atomic_write` in ``folder`` whose writing process is gone.

    Args:
        folder: A folder (nothing happens when it does not exist).

    Returns:
        The files removed (``.NAME.PID.XXXXXXXX.tmp`` of dead processes).
    """
    removed: list[Path] = []
    with contextlib.suppress(OSError):
        for tmp in Path(folder).iterdir():
            name = tmp.name
            if name.startswith(".") and name.endswith(".tmp") and name.count(".") >= 4:
                removed += remove_orphans(tmp.parent / name[1:].rsplit(".", 3)[0])
    return removed


class FolderLock:
    """The exclusive lock of an output folder, held by this process until :meth:`release`.

    Attributes:
        path: The lock file (``FOLDER/.hdeeprm.lock``).
    """

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self._fd: int | None = fd

    def release(self) -> None:
        """Remove the lock file and release the lock (idempotent)."""
        if self._fd is None:
            return
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == os.fstat(self._fd).st_ino:
                self.path.unlink()
        os.close(self._fd)
        self._fd = None

    def __enter__(self) -> FolderLock:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def check_output_folder(folder: str | os.PathLike, option: str = "-o") -> None:
    """Refuse, before any work, an output folder that cannot be one or that another live run holds.

    Args:
        folder: The output folder (it need not exist).
        option: The option that named it, for the message.

    Raises:
        OptionsError: ``"-o PATH: must be a directory, got a file"``, ``"-o PATH: PARENT is a file, not a
            folder"`` or ``"-o PATH: in use by another run (pid N): ..."``.
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise OptionsError(f"{option} {folder}: must be a directory, got a file")
    _check_parents(folder, option)
    pid = folder_owner(folder)
    if pid is not None:
        raise OptionsError(f"{option} {folder}: in use by another run (pid {pid}): wait for it to end or "
                           "choose another folder")


def check_output_file(path: str | os.PathLike, option: str = "-o") -> None:
    """Refuse, before any work, an output file that names a folder or sits under a file.

    Args:
        path: The file to write (it need not exist).
        option: The option that named it, for the message.

    Raises:
        OptionsError: ``"-o PATH: must be a file, got a directory"``, ``"-o PATH: PARENT is a file, not a
            directory"`` or ``"-o PATH: the folder PARENT does not exist: create it first"``.
    """
    path = Path(path)
    if path.is_dir():
        raise OptionsError(f"{option} {path}: must be a file, got a directory")
    _check_parents(path, option)
    if not path.parent.is_dir():
        raise OptionsError(f"{option} {path}: the folder {path.parent} does not exist: create it first")


def _check_parents(path: Path, option: str) -> None:
    """Raise when the nearest existing ancestor of ``path`` is not a folder."""
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise OptionsError(f"{option} {path}: {parent} is a file, not a directory")
            return


def folder_owner(folder: str | os.PathLike) -> str | None:
    """The process id of the other live process that holds ``folder``'s lock (:func:`lock_folder`), if any.

    Args:
        folder: A folder (it need not exist).

    Returns:
        The owner's process id as written in the lock file (``"unknown"`` when unreadable), or None
        when no other process holds the lock (no lock file, a dead owner's file, or this process's).
    """
    import fcntl

    try:
        fd = os.open(Path(folder) / LOCK_FILE, os.O_RDONLY)
    except OSError:
        return None
    try:
        owner = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "unknown"
        if owner == str(os.getpid()):
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            return owner if exc.errno in (errno.EAGAIN, errno.EACCES) else None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def lock_folder(folder: str | os.PathLike, option: str = "-o") -> FolderLock:
    """Take ``folder`` (created if needed) for this process, or refuse when another run holds it.

    The lock is an exclusive, non-blocking :func:`fcntl.flock` on ``FOLDER/.hdeeprm.lock``, which
    then holds this process's id; the kernel drops it when the process ends (even by ``kill -9``),
    so a lock file left by a dead run is taken over, never obeyed.

    Args:
        folder: The output folder.
        option: The command-line option that named it, for the message.

    Returns:
        The :class:`FolderLock` (release it, or use it as a context manager).

    Raises:
        OptionsError: ``"-o FOLDER: in use by another run (pid N): wait for it to end or choose another
            folder"``.
        OSError: The folder or the lock file cannot be created.
    """
    import fcntl

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / LOCK_FILE
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            owner = b""
            with contextlib.suppress(OSError):
                owner = os.pread(fd, 32, 0)
            os.close(fd)
            if exc.errno not in (errno.EAGAIN, errno.EACCES):
                raise
            pid = owner.decode("ascii", "replace").strip() or "unknown"
            raise OptionsError(f"{option} {folder}: in use by another run (pid {pid}): wait for it to end or "
                               "choose another folder") from None
        try:   # the file may have been removed by its previous owner between open and flock: retry
            same = os.stat(path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)
    return FolderLock(path, fd)


class _NamedFileIO(io.FileIO):
    """A raw file whose failed writes name it (a buffered file's write errors carry no file name)."""

    def write(self, data) -> int | None:
        """Write ``data``; an :class:`OSError` without a file name gets this file's."""
        try:
            return super().write(data)
        except OSError as exc:
            if exc.filename is not None or exc.errno is None:
                raise
            raise OSError(exc.errno, exc.strerror, self.name) from exc


def open_for_writing(path: str | os.PathLike, *, buffering: int = -1, encoding: str = "utf-8",
                     newline: str | None = None) -> io.TextIOWrapper:
    """``open(path, "w", ...)`` whose write errors name the file (``No space left on device: PATH``).

    For files written in place over a long time (the streamed Batsim CSVs): the buffered layers are
    Python's own, only the raw write (once per full buffer) goes through a Python method.

    Args:
        path: The file, created or truncated.
        buffering: Buffer size in bytes (-1: :data:`io.DEFAULT_BUFFER_SIZE`).
        encoding, newline: As :func:`open`'s.

    Returns:
        The open text file.

    Raises:
        OSError: The file cannot be created (naming it, as :func:`open`).
    """
    raw = _NamedFileIO(os.fspath(path), "w")
    try:
        buffered = io.BufferedWriter(raw, buffer_size=io.DEFAULT_BUFFER_SIZE if buffering < 0 else buffering)
        return io.TextIOWrapper(buffered, encoding=encoding, newline=newline)
    except BaseException:
        raw.close()
        raise


@contextlib.contextmanager
def naming(path: str | os.PathLike) -> Iterator[None]:
    """Give the :class:`OSError` raised in the block that name no file (a failed ``write``) ``path``'s name.

    So that a full disk reads ``No space left on device: PATH``, not a bare strerror.

    Args:
        path: The file (or folder) being written in the block.

    Raises:
        OSError: As raised, with ``filename`` set to ``path`` when it had none.
    """
    try:
        yield
    except OSError as exc:
        if exc.filename is not None or exc.errno is None:
            raise
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from exc


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike, *, binary: bool = False, newline: str | None = None) -> Iterator[IO]:
    """Open ``path`` for writing so that it is replaced only once the ``with`` block succeeds.

    Every file that must never be seen empty or cut short goes through here (``run.json``, the
    evaluation's and the sweep's CSV and Parquet summaries, checkpoints, converted workloads): when the
    block fails (a full disk: ``OSError(ENOSPC)``), the previous file stays as it was, or there is none.

    Args:
        path: Destination file (its folder must exist).
        binary: Yield a binary file instead of a UTF-8 text file.
        newline: As :func:`open`'s, for a text file (``""`` for the :mod:`csv` module).

    Yields:
        The temporary file to write into.

    Raises:
        OSError: The folder cannot be written, or the disk is full (naming ``path``, not the temporary file).
    """
    path = Path(path)
    remove_orphans(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.{os.getpid()}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:   # name the file asked for, not the temporary one
        raise OSError(exc.errno, exc.strerror, os.fspath(path)) from None
    try:
        text = {} if binary else {"encoding": "utf-8", "newline": newline}
        with naming(path), os.fdopen(fd, "wb" if binary else "w", **text) as f:
            yield f
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
