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


def git_state(cwd: str | Path | None = None) -> tuple[str | None, bool | None]:
    """``(commit, dirty)`` of the work tree, or ``(None, None)`` outside git."""
    env_sha = os.environ.get("GITHUB_SHA")
    try:
        commit = _run_git(cwd, "rev-parse", "HEAD", check=True)
        status = _run_git(cwd, "status", "--porcelain", "--untracked-files=no", check=True)
    except (OSError, subprocess.SubprocessError):
        # No git binary (the container image), or git refused: read .git directly.
        from evalkit._util.gitdir import head_commit

        return (head_commit(cwd) or env_sha or None), None
    return commit or env_sha, bool(status)


def _run_git(cwd: str | Path | None, *args: str, check: bool, timeout: float = 5) -> str | None:
    """``git ARGS``' output, stripped; None when it refuses (``check``: raise instead)."""
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, check=check
    )
    return done.stdout.strip() if done.returncode == 0 else None


def _git(root: Path, *args: str) -> str | None:
    """``git ARGS`` in ``root``: its output, or None when it refuses (no such tag)."""
    try:
        return _run_git(root, *args, check=False, timeout=10)
    except (OSError, subprocess.SubprocessError):
        raise ConfigError(
            f"cannot resolve a tag here: git is not available in {root}; pin by date or "
            "'N promotions ago' instead"
        ) from None


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
