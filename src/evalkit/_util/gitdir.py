"""The commit checked out, read from ``.git`` itself (the container image has no git)."""

from __future__ import annotations

import re
from pathlib import Path

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def _git_dir(start: Path) -> Path | None:
    for folder in (start, *start.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return dot_git
        if dot_git.is_file():
            text = dot_git.read_text(encoding="utf-8", errors="replace").strip()
            if text.startswith("gitdir:"):
                target = Path(text.removeprefix("gitdir:").strip())
                return target if target.is_absolute() else (folder / target)
            return None
    return None


def _common_dir(git_dir: Path) -> Path:
    # A linked worktree keeps its refs in the main repository ("commondir").
    common = git_dir / "commondir"
    if common.is_file():
        target = Path(common.read_text(encoding="utf-8").strip())
        return target if target.is_absolute() else (git_dir / target)
    return git_dir


def _resolve_ref(git_dir: Path, ref: str) -> str | None:
    for base in dict.fromkeys((git_dir, _common_dir(git_dir))):
        loose = base / ref
        if loose.is_file():
            value = loose.read_text(encoding="utf-8").strip()
            return value if _SHA.match(value) else None
        packed = base / "packed-refs"
        if packed.is_file():
            for line in packed.read_text(encoding="utf-8").splitlines():
                parts = line.split()
                if len(parts) == 2 and parts[1] == ref and _SHA.match(parts[0]):
                    return parts[0]
    return None


def head_commit(start: str | Path | None = None) -> str | None:
    """The sha HEAD points at, or None (no repository, unborn branch, unreadable)."""
    try:
        git_dir = _git_dir(Path(start or ".").resolve())
        if git_dir is None:
            return None
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if _SHA.match(head):
            return head
        if head.startswith("ref:"):
            return _resolve_ref(git_dir, head.removeprefix("ref:").strip())
    except (OSError, UnicodeDecodeError):
        return None
    return None
