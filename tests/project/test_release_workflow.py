"""The release workflow's guard steps, run with bash as the runner runs them, and the
shape of its two-architecture build (#25).

A tag on a commit that is not on the default branch is refused before anything is
built; an image that cannot be pulled without credentials (or lacks an architecture)
stops the release before the action is published. The scripts are taken from
.github/workflows/release.yml itself; scripts/simulate_release.py runs all of its steps
against a real local registry and engine (docs/action.md, "Simulating a release").
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from fake_registry import REPO, Registry, running

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"

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
QEMU_STEP = "QEMU for the arm64 build and smoke test"
BUILDER_STEP = "A builder that makes multi-platform images"
BASE_STEP = "The pinned base image"
PUSH_STEP = "Build and push the two-architecture image"
PULL_STEP = "Users can pull the image without credentials"
SMOKE_STEP = "Smoke-test both architectures (arm64 under QEMU), pulled anonymously"
ALREADY_STEP = "Refuse a version the action repository already has"
DECIDE_STEP = "Does this release move the major tags (only forward)"
MAJOR_STEP = "Move the major tag to the same index"
PUBLISH_STEP = "Publish the action (released action.yml uses the prebuilt image)"
PLATFORMS = "linux/amd64,linux/arm64"


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


@pytest.mark.parametrize("mode", ["public", "private", "basic"])
def test_publishing_waits_for_an_anonymous_pull(tmp_path: Path, mode: str) -> None:
    """The step's own script, against a registry holding the pushed two-platform index."""
    registry = Registry()
    digest = registry.add_index(["amd64", "arm64"])
    registry.mode = mode
    with running(registry) as host:
        env = {"IMAGE": f"{host}/{REPO}", "DIGEST": digest, "PLATFORMS": PLATFORMS}
        done = run_step(PULL_STEP, ROOT, env)
    if mode == "public":
        assert done.returncode == 0, done.stdout + done.stderr
        assert "anonymous pull ok: linux/arm64" in done.stdout
        return
    assert done.returncode == 1
    assert "make the ghcr.io package public" in done.stdout
    assert "::error title=image not public::" in done.stdout


def test_an_index_without_arm64_is_not_published(tmp_path: Path) -> None:
    registry = Registry()
    digest = registry.add_index(["amd64"])
    with running(registry) as host:
        env = {"IMAGE": f"{host}/{REPO}", "DIGEST": digest, "PLATFORMS": PLATFORMS}
        done = run_step(PULL_STEP, ROOT, env)
    assert done.returncode == 1
    assert "the index has no linux/arm64 image" in done.stderr


def job() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(WORKFLOW.read_text())
    release: dict[str, Any] = doc["jobs"]["release"]
    return release


def step(name: str) -> dict[str, Any]:
    (found,) = [s for s in job()["steps"] if s.get("name") == name]
    assert isinstance(found, dict)
    return found


def test_the_guards_run_before_what_they_guard() -> None:
    names = step_names()
    order = [TAG_STEP, ALREADY_STEP, QEMU_STEP, BUILDER_STEP, BASE_STEP, PUSH_STEP, PULL_STEP]
    order += [SMOKE_STEP, DECIDE_STEP, MAJOR_STEP, PUBLISH_STEP]
    assert [n for n in names if n in order] == order


def test_two_architectures_are_built_pushed_as_one_index_and_each_smoke_tested() -> None:
    assert job()["env"]["PLATFORMS"] == PLATFORMS
    push = step(PUSH_STEP)
    script = " ".join(str(push["run"]).replace("\\\n", " ").split())
    assert 'docker buildx build --platform "$PLATFORMS"' in script
    assert '--build-arg "PYTHON_BASE=$PYTHON_BASE"' in script
    assert "--push ." in script
    assert "--provenance=false --sbom=false" in script  # the index holds the two images only
    assert push["env"]["PYTHON_BASE"] == "${{ steps.base.outputs.image }}"
    smoke = str(step(SMOKE_STEP)["run"])
    assert "for p in ${PLATFORMS//,/ }; do" in smoke
    assert 'DOCKER_CONFIG="$(mktemp -d)" docker pull --platform "$p" "$IMAGE@$DIGEST"' in smoke
    assert '--image "$IMAGE@$DIGEST" --platform "$p"' in smoke
    # One reference, one image in Docker's classic store: found by the simulation.
    assert smoke.rstrip().endswith('docker image rm "$IMAGE@$DIGEST"\ndone')
    # What is published pins the index digest the push recorded, and the major tag is
    # checked to name that same index.
    for name in (PULL_STEP, SMOKE_STEP, MAJOR_STEP, PUBLISH_STEP):
        assert step(name)["env"]["DIGEST"] == "${{ steps.push.outputs.digest }}"
    assert 'release_image.py same-manifest "$IMAGE:$MAJOR" "$DIGEST"' in str(
        step(MAJOR_STEP)["run"]
    )
    assert '--image "docker://$IMAGE@$DIGEST"' in str(step(PUBLISH_STEP)["run"])


def test_the_push_step_records_the_index_digest(tmp_path: Path) -> None:
    """The digest output is what buildx's metadata file says (the index's), by the script."""
    assert 'release_image.py digest "$RUNNER_TEMP/build.json"' in str(step(PUSH_STEP)["run"])
    assert '--metadata-file "$RUNNER_TEMP/build.json"' in str(step(PUSH_STEP)["run"])


def test_every_action_used_is_pinned_by_commit() -> None:
    uses = [str(s["uses"]) for s in job()["steps"] if "uses" in s]
    assert uses
    for ref in uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", ref), ref
