"""Small evalkit projects in a temporary folder, and `python -m evalkit` run inside them."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path


def answer_target(answers: Mapping[str, str]) -> str:
    """Source of a module whose ``make_target()`` answers each case id with fixed text."""
    return (
        "from evalkit import CallableTarget\n\n"
        f"ANSWERS = {dict(answers)!r}\n\n\n"
        "def make_target():\n"
        '    return CallableTarget(lambda case: ANSWERS[case.id], name="qa-bot")\n'
    )


def run_evalkit(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m evalkit ARGS`` in ``cwd``, plain output, never raising on exit codes."""
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *args],
        cwd=cwd,
        env={**os.environ, "NO_COLOR": "1", "COLUMNS": "200", **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
