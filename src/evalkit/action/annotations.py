"""``::error`` annotations for the failing checks, on their lines of the checks file."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from evalkit.action.contract import FailingCheck
from evalkit.github.outputs import MAX_ERROR_ANNOTATIONS, Annotation, relative_to_workspace


def find_check_line(checks_path: Path, check_id: str) -> int | None:
    """The 1-based line of ``id: <check_id>`` in the checks file, for the annotation."""
    pattern = re.compile(
        r"^\s*(?:-\s*)?id\s*:\s*(['\"]?)" + re.escape(check_id) + r"\1\s*(?:#.*)?$"
    )
    try:
        lines = checks_path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for number, line in enumerate(lines, start=1):
        if pattern.match(line):
            return number
    return None


def failing_check_annotations(
    failing: Sequence[FailingCheck], checks_path: Path | None, workspace: Path
) -> list[Annotation]:
    """At most ten ``::error`` annotations (the runner drops the rest) on the checks file."""
    file = relative_to_workspace(checks_path, workspace) if checks_path else None

    def one(check: FailingCheck) -> Annotation:
        line = find_check_line(checks_path, check.id) if checks_path else None
        return Annotation(
            "error",
            f"{check.id}: {check.message}",
            title=f"evalkit check {check.id} failed",
            file=file,
            line=line,
        )

    if len(failing) <= MAX_ERROR_ANNOTATIONS:
        return [one(c) for c in failing]
    shown = [one(c) for c in failing[: MAX_ERROR_ANNOTATIONS - 1]]
    rest = failing[MAX_ERROR_ANNOTATIONS - 1 :]
    shown.append(
        Annotation(
            "error",
            f"{len(rest)} more failing check(s): " + ", ".join(c.id for c in rest),
            title="evalkit: more checks failed",
            file=file,
        )
    )
    return shown


__all__ = ["failing_check_annotations", "find_check_line"]
