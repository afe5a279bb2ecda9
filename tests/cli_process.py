"""Run the real ``evalkit`` command in a subprocess, as a user's shell would."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def evalkit(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m evalkit ARGS`` in ``cwd``: no colour, wide lines, no inherited debug flag."""
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    full_env.pop("EVALKIT_DEBUG", None)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *map(str, args)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=full_env,
        timeout=120,
        check=False,
    )


def write_files(root: Path, files: dict[str, str]) -> Path:
    """Write a project's files (name -> text) into ``root`` and return ``root``."""
    for name, text in files.items():
        (root / name).write_text(text)
    return root
