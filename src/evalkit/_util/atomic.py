"""Atomic file writes: a crash leaves the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from evalkit.errors import EvalkitError, InputError, RuntimeFailure

# mkstemp creates 0600 files; a replaced file keeps its mode, a new one gets this.
NEW_FILE_MODE = 0o644


def fsync_dir(directory: Path) -> None:
    """Persist a rename in ``directory`` (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # e.g. Windows; the replace is still atomic
        return
    with contextlib.suppress(OSError):
        os.fsync(fd)
    os.close(fd)


def _existing_ancestor(path: Path) -> Path:
    """The nearest ancestor of ``path`` that exists (``.`` for a relative path)."""
    return next((a for a in path.parents if os.path.lexists(a)), Path(path.anchor or "."))


def _blocked(target: Path) -> InputError | None:
    """Why no file can be written at ``target``, or ``None`` when it looks writable."""
    if target.is_dir():
        return InputError(f"{target}: is a folder, not a file; give the path of a file")
    ancestor = _existing_ancestor(target)
    if not ancestor.is_dir():
        return InputError(
            f"{target}: cannot write there: {ancestor} is a file, not a folder; choose another path"
        )
    if not os.access(ancestor, os.W_OK | os.X_OK):
        return InputError(f"{target}: cannot write there: folder {ancestor} is not writable")
    return None


def check_writable(*paths: str | os.PathLike[str] | None) -> None:
    """Refuse, before anything runs, output paths no file can be written at.

    ``-`` (stdout, :mod:`evalkit._util.stdout_path`) is no file, and always writable.
    """
    from evalkit._util.stdout_path import is_stdout

    for path in paths:
        if path is not None and not is_stdout(path):
            problem = _blocked(Path(path))
            if problem is not None:
                raise problem


class DiskWriteError(RuntimeFailure):
    """The path was fine but the write failed (disk full, I/O error): exit 3."""

    def __init__(self, target: Path, reason: str) -> None:
        super().__init__(f"{target}: could not write the file: {reason}; check free space")
        self.reason = reason


_PATH_ERRNOS = frozenset(
    {errno.ENOTDIR, errno.EEXIST, errno.EISDIR, errno.EACCES, errno.EPERM, errno.EROFS}
    | {errno.ENAMETOOLONG, errno.ELOOP, errno.EINVAL, errno.ENOENT}
)


def write_error(target: Path, exc: OSError) -> EvalkitError:
    """The one-line error for a failed write: the path's fault (exit 2) or the disk's (3)."""
    if exc.errno in _PATH_ERRNOS:
        return _blocked(target) or InputError(
            f"{target}: cannot write there: {exc.strerror or exc}"
        )
    return DiskWriteError(target, str(exc.strerror or exc))


@contextmanager
def atomic_file(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file that replaces ``path`` when the block ends without an exception."""
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            mode = target.stat().st_mode & 0o777
        except FileNotFoundError:
            mode = NEW_FILE_MODE
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise write_error(target, exc) from None
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            try:
                yield handle  # an OSError in the block is the write failing (disk full)
                handle.flush()
                os.fsync(handle.fileno())
            except OSError as exc:
                raise write_error(target, exc) from None
        try:
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        except OSError as exc:
            raise write_error(target, exc) from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    fsync_dir(target.parent)


def write_bytes_atomic(path: str | os.PathLike[str], data: bytes) -> Path:
    with atomic_file(path) as handle:
        handle.write(data)
    return Path(path)


def write_text_atomic(path: str | os.PathLike[str], text: str, encoding: str = "utf-8") -> Path:
    """Write text exactly as given (no newline translation)."""
    return write_bytes_atomic(path, text.encode(encoding))
