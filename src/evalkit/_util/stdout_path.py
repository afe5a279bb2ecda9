"""``-`` as an output path means stdout (the Unix convention; docs/stdout.md).

The one owner of that rule: a command's output flags are checked here, so ``--json -``
never writes a file named ``-``, and two flags cannot both claim stdout.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from evalkit.errors import InputError

STDOUT = "-"


def is_stdout(path: str | os.PathLike[str] | None) -> bool:
    """Whether ``path`` is the ``-`` that asks for stdout."""
    return path is not None and os.fspath(path) == STDOUT


def stdout_flag(outputs: Mapping[str, str | os.PathLike[str] | None]) -> str | None:
    """The one flag (of ``outputs``: flag -> path) whose document goes to stdout, or None.

    stdout holds a single document, so a second ``-`` is refused, naming both flags.
    """
    chosen = [flag for flag, path in outputs.items() if is_stdout(path)]
    if len(chosen) > 1:
        raise InputError(
            f"{chosen[0]} - and {chosen[1]} - both ask for stdout, which holds one "
            f"document: give {chosen[1]} a file name"
        )
    return chosen[0] if chosen else None


def refuse_stdout(flag: str, path: str | os.PathLike[str] | None, why: str) -> None:
    """Refuse ``-`` for an output that must be a file (``why``: what reads it back)."""
    if is_stdout(path):
        raise InputError(f"{flag} - is not stdout here: {why}; name a file")
