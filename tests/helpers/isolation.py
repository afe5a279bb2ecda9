"""Running a parent of isolated targets (``isolate-target``) from the tests.

Under root the children run as another user (``nobody`` when root owns the working
directory), who must be able to execute the interpreter and read the project: this
machine's dev venv links to a Python under /root (mode 0700), so a root run uses the
system Python of the same minor version with this tree's packages on PYTHONPATH, and the
project lives in a folder every user can read.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SYSTEM_PYTHON = Path("/usr/bin/python3")


def parent_python() -> tuple[str, dict[str, str]]:
    """The interpreter for a parent process, and what its environment needs."""
    if os.geteuid() != 0:
        return sys.executable, {}
    probe = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import sys; print(tuple(sys.version_info[:2]))"],
        capture_output=True,
        text=True,
        check=False,
    )
    if probe.returncode != 0 or probe.stdout.strip() != str(tuple(sys.version_info[:2])):
        pytest.skip(f"as root this needs {SYSTEM_PYTHON} of Python {sys.version_info[:2]}")
    site = next(p for p in sys.path if p.endswith("site-packages"))
    return str(SYSTEM_PYTHON), {"PYTHONPATH": os.pathsep.join([str(ROOT / "src"), site])}


@contextmanager
def readable_folder() -> Iterator[Path]:
    """A fresh folder that every user can enter (call :func:`make_readable` on what is
    written in it), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="evalkit-isolated-"))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def make_readable(folder: Path) -> None:
    """Every folder and file under ``folder`` readable (and folders enterable) by all."""
    for path in (folder, *folder.rglob("*")):
        path.chmod(0o755 if path.is_dir() else 0o644)
