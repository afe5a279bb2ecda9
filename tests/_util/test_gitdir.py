"""The commit read from .git without the git binary (the container image has none)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evalkit._util.gitdir import head_commit

A, B = "a" * 40, "b" * 40


def test_gitdir_detached_loose_and_packed_refs(tmp_path: Path) -> None:
    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text(f"{A}\n")
    assert head_commit(tmp_path) == A
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    assert head_commit(tmp_path) is None  # an unborn branch
    (git / "packed-refs").write_text(f"# pack-refs with: peeled\n{B} refs/heads/main\n")
    assert head_commit(tmp_path / "sub" / "dir") == B  # found from a subfolder
    (git / "refs" / "heads" / "main").write_text(f"{A}\n")
    assert head_commit(tmp_path) == A  # a loose ref wins over packed-refs


def test_gitdir_linked_worktree_reads_the_common_refs(tmp_path: Path) -> None:
    main_git = tmp_path / "main" / ".git"
    wt_git = main_git / "worktrees" / "wt"
    wt_git.mkdir(parents=True)
    (main_git / "packed-refs").write_text(f"{B} refs/heads/feature\n")
    (wt_git / "HEAD").write_text("ref: refs/heads/feature\n")
    (wt_git / "commondir").write_text("../..\n")
    checkout = tmp_path / "wt"
    checkout.mkdir()
    (checkout / ".git").write_text(f"gitdir: {wt_git}\n")
    assert head_commit(checkout) == B


def test_gitdir_outside_a_repository_is_none(tmp_path: Path) -> None:
    (tmp_path / ".git").write_text("garbage\n")
    assert head_commit(tmp_path) is None


def test_git_state_without_the_git_binary_reads_dot_git(tmp_path: Path) -> None:
    if shutil.which("git") is None:
        pytest.skip("needs git to make the repository")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "f").write_text("x")
    run = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*run, "add", "f"], check=True)
    subprocess.run([*run, "commit", "-qm", "c"], check=True)
    subprocess.run([*run, "pack-refs", "--all"], check=True)
    sha = subprocess.run(
        [*run, "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    env = {k: v for k, v in os.environ.items() if k != "GITHUB_SHA"}
    env["PATH"] = str(tmp_path / "no-git-here")  # git cannot be found
    out = subprocess.run(
        [sys.executable, "-c", "from evalkit._app.provenance import git_state; print(git_state())"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == repr((sha, None))
