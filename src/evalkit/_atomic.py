"""Atomic file writes: a crash leaves the old file or the new one, never half of one.

Every file evalkit writes for someone to read later (artefacts, checkpoints, the
judge cache, reports, TREC files, baselines) goes through here: a temp file in the
same folder, flushed and fsync'd, then ``os.replace``, then the folder fsync'd so
the rename itself survives a power loss.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

# mkstemp creates 0600 files; a replaced file keeps its mode, a new one gets this.
NEW_FILE_MODE = 0o644


def fsync_dir(directory: Path) -> None:
    """Persist a rename in ``directory`` (a no-op where folders cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # e.g. Windows; the replace is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


@contextmanager
def atomic_file(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """A binary file that replaces ``path`` when the block ends without an exception."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = target.stat().st_mode & 0o777
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
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
