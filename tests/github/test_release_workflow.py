"""The release workflow's guard steps, run with bash as the runner runs them (#25).

A tag on a commit that is not on the default branch is refused before anything is
built; an image that cannot be pulled without credentials stops the release before the
action is published. The scripts are taken from .github/workflows/release.yml itself.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
DIGEST = "sha256:" + "a" * 64
IMAGE = "ghcr.io/skbugudi/evalkit-action"

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("git") is None, reason="needs bash and git"
)


def step_names() -> list[str]:
    doc = yaml.safe_load(WORKFLOW.read_text())
    return [str(s.get("name") or s.get("uses")) for s in doc["jobs"]["release"]["steps"]]


def step_script(name: str) -> str:
    doc = yaml.safe_load(WORKFLOW.read_text())
    (step,) = [s for s in doc["jobs"]["release"]["steps"] if s.get("name") == name]
    return str(step["run"])


def run_step(name: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-e", "-c", step_script(name)],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=False,
    )


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


TAG_STEP = "Refuse a tag whose commit is not on the default branch"
PULL_STEP = "Users can pull the image without credentials"


@pytest.fixture(name="clone")
def clone_fixture(tmp_path: Path) -> Path:
    """A checkout as actions/checkout leaves it with fetch-depth 0: origin/main fetched."""
    repo = tmp_path / "clone"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "one")
    git(repo, "commit", "-q", "--allow-empty", "-m", "two")
    git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    return repo


def test_a_tag_on_the_default_branch_is_released(clone: Path) -> None:
    git(clone, "tag", "-a", "-m", "release", "v1.0.0", "HEAD~1")  # an older merged commit
    sha = git(clone, "rev-parse", "v1.0.0^{commit}")
    done = run_step(TAG_STEP, clone, {"GITHUB_SHA": sha, "DEFAULT_BRANCH": "main", "TAG": "v1"})
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_tag_off_the_default_branch_is_refused(clone: Path) -> None:
    git(clone, "checkout", "-q", "-b", "unreviewed")
    git(clone, "commit", "-q", "--allow-empty", "-m", "never merged")
    sha = git(clone, "rev-parse", "HEAD")
    done = run_step(TAG_STEP, clone, {"GITHUB_SHA": sha, "DEFAULT_BRANCH": "main", "TAG": "v9.9.9"})
    assert done.returncode == 1
    assert f"tag v9.9.9 ({sha}) is not on main" in done.stdout
    assert done.stdout.startswith("::error title=release refused::")


def fake_docker(tmp_path: Path, *, public: bool) -> Path:
    """A docker stand-in: ``manifest inspect`` succeeds only for a public image, and only
    when no credentials are configured (an empty DOCKER_CONFIG)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "docker"
    script.write_text(
        "#!/bin/bash\n"
        'echo "$@" >> "$CALLS"\n'
        'if [ -n "$(ls -A "$DOCKER_CONFIG" 2>/dev/null)" ]; then echo "has credentials" >&2; '
        "exit 3; fi\n" + ("exit 0\n" if public else 'echo "denied" >&2; exit 1\n')
    )
    script.chmod(0o755)
    return bin_dir


@pytest.mark.parametrize("public", [True, False])
def test_publishing_waits_for_an_anonymous_pull(tmp_path: Path, public: bool) -> None:
    bin_dir = fake_docker(tmp_path, public=public)
    calls = tmp_path / "calls"
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "IMAGE": IMAGE,
        "DIGEST": DIGEST,
        "CALLS": str(calls),
    }
    done = run_step(PULL_STEP, tmp_path, env)
    assert calls.read_text().split() == ["manifest", "inspect", f"{IMAGE}@{DIGEST}"]
    if public:
        assert done.returncode == 0, done.stdout + done.stderr
        return
    assert done.returncode == 1
    assert "make the ghcr.io package public" in done.stdout
    assert done.stdout.startswith("::error title=image not public::")


def test_the_guards_run_before_what_they_guard() -> None:
    names = step_names()
    assert names.index(TAG_STEP) < names.index("Build")
    assert names.index("Push the image and move the major tag") < names.index(PULL_STEP)
    publish = "Publish the action (released action.yml uses the prebuilt image)"
    assert names.index(PULL_STEP) < names.index(publish)
