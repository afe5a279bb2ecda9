"""Where a run came from, as git tells it: the one module that runs ``git`` for evalkit."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from evalkit.errors import ConfigError

if TYPE_CHECKING:
    from evalkit._store.history import TaggedCommit

__all__ = ["git_state", "git_tag_resolver"]


def git_state(cwd: str | Path | None = None) -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` of the work tree, or ``(None, None)`` outside git."""
    env_sha = os.environ.get("GITHUB_SHA")
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout.strip()
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=5,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        # No git binary (the container image), or git refused: read .git directly.
        from evalkit._util.gitdir import head_commit

        return (head_commit(cwd) or env_sha or None), None
    return commit or env_sha, bool(status.strip())


def _git(root: Path, *args: str) -> str | None:
    """``git ARGS`` in ``root``: its output, or None when it refuses (no such tag)."""
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError):
        raise ConfigError(
            f"cannot resolve a tag here: git is not available in {root}; pin by date or "
            "'N promotions ago' instead"
        ) from None
    return done.stdout.strip() if done.returncode == 0 else None


def git_tag_resolver(root: Path) -> Callable[[str], TaggedCommit | None]:
    """Resolve a tag with the local git repository (``evalkit pin v1.2``)."""
    from evalkit._store.history import TaggedCommit, parse_time

    def resolve(tag: str) -> TaggedCommit | None:
        # refs/tags/… : never read as an option, never a branch of the same name
        sha = _git(root, "rev-parse", "--verify", "--quiet", f"refs/tags/{tag}^{{commit}}")
        if not sha:
            return None
        return TaggedCommit(sha, parse_time(_git(root, "show", "-s", "--format=%cI", sha)))

    return resolve
