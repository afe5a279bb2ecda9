"""The major tags users pin (``:v1``, ``@v1``) only move forward (#48).

The release workflow's own steps, run with bash as the runner runs them, against an
action repository that is a local bare repository (git's ``insteadOf`` stands in for
github.com) and the registry of fake_registry.py. Both downgrade paths the simulation
covers (scripts/simulate_release.py, scenario ``downgrade``) are played here in seconds:
a patch on an older line (1.4.1 after 1.5.0) moves neither tag and says so in the job
summary, and a re-run of an already published release is refused before it builds.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import pytest
import yaml
from fake_registry import REPO, Registry, running

from helpers.scripts import load_script

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"
TOKEN = "test-action-repo-token"
ACTION_REPO = "skbugudi/evalkit-action"
ALREADY_STEP = "Refuse a version the action repository already has"
DECIDE_STEP = "Does this release move the major tags (only forward)"
MAJOR_STEP = "Move the major tag to the same index"
PUBLISH_STEP = "Publish the action (released action.yml uses the prebuilt image)"

major: ModuleType = load_script("scripts/release_major.py")
image_tool: ModuleType = load_script("scripts/release_image.py")

pytestmark = pytest.mark.skipif(
    shutil.which("bash") is None or shutil.which("git") is None, reason="needs bash and git"
)


def step_script(name: str) -> str:
    doc = yaml.safe_load(WORKFLOW.read_text())
    (found,) = [s for s in doc["jobs"]["release"]["steps"] if s.get("name") == name]
    return str(found["run"])


@dataclass
class Release:
    """One release job's world: the action repository, the registry, its runner files."""

    tmp: Path
    action_repo: Path
    host: str
    registry: Registry

    def git(self, *args: str) -> str:
        done = subprocess.run(
            ["git", "--git-dir", str(self.action_repo), *args],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip()

    def ref(self, name: str) -> str | None:
        found = self.git("for-each-ref", "--format=%(objectname)", name)
        return found or None

    def run(self, name: str, version: str, **env: str) -> subprocess.CompletedProcess[str]:
        temp = self.tmp / f"runner-{version}"
        temp.mkdir(exist_ok=True)
        for file in ("output", "summary"):
            (temp / file).touch()
        full = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
            "GIT_CONFIG_GLOBAL": str(self.tmp / "gitconfig"),
            "GIT_CONFIG_NOSYSTEM": "1",
            "RUNNER_TEMP": str(temp),
            "GITHUB_OUTPUT": str(temp / "output"),
            "GITHUB_STEP_SUMMARY": str(temp / "summary"),
            "IMAGE": f"{self.host}/{REPO}",
            "REGISTRY": self.host,
            "ACTION_REPO": ACTION_REPO,
            "ACTION_REPO_TOKEN": TOKEN,
            "VERSION": version,
            "MAJOR": f"v{version.split('.')[0]}",
            "SOURCE_SHA": "0" * 40,
            **env,
        }
        return subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step_script(name)],
            cwd=ROOT,
            env=full,
            capture_output=True,
            text=True,
            check=False,
        )

    def outputs(self, version: str) -> dict[str, str]:
        text = (self.tmp / f"runner-{version}" / "output").read_text()
        return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)

    def summary(self, version: str) -> str:
        return (self.tmp / f"runner-{version}" / "summary").read_text()

    def release(self, version: str) -> dict[str, str]:
        """The job's steps from the guard on, the image pushed as :VERSION (the move of
        :vX in the registry is docker's; here the registry's tag moves when it should)."""
        digest = self.registry.add_index(["amd64", "arm64"], tag=version)
        already = self.run(ALREADY_STEP, version)
        assert already.returncode == 0, already.stdout + already.stderr
        decided = self.run(DECIDE_STEP, version)
        assert decided.returncode == 0, decided.stdout + decided.stderr
        outputs = self.outputs(version)
        if outputs["move"] == "true":
            self.registry.manifests[f"v{version.split('.')[0]}"] = self.registry.manifests[digest]
        else:
            moved = self.run(MAJOR_STEP, version, MOVE="false", DIGEST=digest)
            assert moved.returncode == 0, moved.stdout + moved.stderr
            assert "stays where it is" in moved.stdout
        moves = {"MOVE": outputs["move"], "LEASE": outputs["lease"]}
        published = self.run(PUBLISH_STEP, version, DIGEST=digest, **moves)
        assert published.returncode == 0, published.stdout + published.stderr
        return outputs


@pytest.fixture(name="world")
def world_fixture(tmp_path: Path) -> Iterator[Release]:
    action_repo = tmp_path / "action.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(action_repo)], check=True)
    remote = f"https://x-access-token:{TOKEN}@github.com/{ACTION_REPO}.git"
    (tmp_path / "gitconfig").write_text(f'[url "file://{action_repo}"]\n\tinsteadOf = {remote}\n')
    registry = Registry()
    with running(registry) as host:
        yield Release(tmp_path, action_repo, host, registry)


def test_a_newer_release_moves_main_and_the_major_tags(world: Release) -> None:
    first = world.release("1.5.0")
    assert first == {"move": "true", "lease": ""}  # the first release of v1
    assert (
        world.ref("refs/tags/v1") == world.ref("refs/tags/v1.5.0") == world.ref("refs/heads/main")
    )
    second = world.release("1.6.0")
    assert second == {"move": "true", "lease": world.ref("refs/tags/v1.5.0")}
    assert (
        world.ref("refs/tags/v1") == world.ref("refs/tags/v1.6.0") == world.ref("refs/heads/main")
    )


def test_a_patch_on_an_older_line_moves_neither_major_tag(world: Release) -> None:
    world.release("1.5.0")
    before = {ref: world.ref(ref) for ref in ("refs/tags/v1", "refs/heads/main")}
    assert None not in before.values()
    image_before = world.registry.manifests["v1"]
    assert world.release("1.4.1")["move"] == "false"
    assert {ref: world.ref(ref) for ref in before} == before
    assert world.registry.manifests["v1"] == image_before
    assert world.ref("refs/tags/v1.4.1") is not None  # published, under its own tag only
    summary = world.summary("1.4.1")
    assert "### v1 not moved" in summary
    assert "v1.4.1 is older than v1.5.0" in summary
    assert "pin @v1.4.1" in summary


def test_a_rerun_of_a_published_releases_job_is_refused_before_it_builds(world: Release) -> None:
    world.release("1.5.0")
    world.release("1.2.0")
    again = world.run(ALREADY_STEP, "1.2.0")
    assert again.returncode == 1
    assert "::error title=release refused::v1.2.0 is already published" in again.stdout
    assert "re-push" in again.stdout
    assert "v1.2.0 is already published" in world.summary("1.2.0")


def test_an_unreadable_action_repository_stops_the_release(world: Release) -> None:
    shutil.rmtree(world.action_repo)
    done = world.run(ALREADY_STEP, "1.5.0")
    assert done.returncode == 1
    assert "could not list the tags" in done.stdout


def test_the_major_tag_moves_only_from_where_it_was_read(world: Release) -> None:
    world.release("1.5.0")
    lease = world.ref("refs/tags/v1")
    world.release("1.6.0")  # moved on since the 1.7.0 job read v1
    digest = world.registry.add_index(["amd64", "arm64"], tag="1.7.0")
    env = {"MOVE": "true", "LEASE": str(lease), "DIGEST": digest}
    before = {ref: world.ref(ref) for ref in ("refs/tags/v1", "refs/heads/main")}
    done = world.run(PUBLISH_STEP, "1.7.0", **env)
    assert done.returncode != 0
    # atomic: not main, not v1.7.0, not v1
    assert {ref: world.ref(ref) for ref in before} == before
    assert world.ref("refs/tags/v1.7.0") is None


# ------------------------------------------------------------------- the decision's parts


def ls_remote(**refs: str) -> str:
    return "".join(f"{sha}\trefs/tags/{name}\n" for name, sha in refs.items())


def test_the_repository_release_is_the_version_tag_on_the_major_tags_commit() -> None:
    text = ls_remote(v1="b" * 40, **{"v1.4.0": "a" * 40, "v1.5.0": "b" * 40})
    assert major.repository_release(text, "v1") == ((1, 5, 0), "b" * 40)
    assert major.repository_release(text, "v2") == (None, "")
    annotated = "t1\trefs/tags/v1\nc9\trefs/tags/v1^{}\nc9\trefs/tags/v1.9.0\n"
    assert major.repository_release(annotated, "v1") == ((1, 9, 0), "t1")
    with pytest.raises(major.Refused, match="no vX.Y.Z tag names"):
        major.repository_release(ls_remote(v1="c" * 40, **{"v1.0.0": "d" * 40}), "v1")


@pytest.mark.parametrize(
    ("version", "image", "repository", "moves"),
    [
        ((1, 4, 1), (1, 5, 0), (1, 5, 0), False),
        ((1, 4, 1), None, (1, 5, 0), False),
        ((1, 4, 1), (1, 5, 0), None, False),
        ((1, 5, 0), (1, 5, 0), (1, 4, 0), True),  # a re-run after :v1 moved, @v1 did not
        ((1, 10, 0), (1, 9, 0), (1, 9, 0), True),  # numbers, not text
        ((1, 0, 0), None, None, True),
    ],
)
def test_the_tags_move_only_to_a_release_at_least_as_new_as_either(
    version: tuple[int, int, int],
    image: tuple[int, int, int] | None,
    repository: tuple[int, int, int] | None,
    moves: bool,
) -> None:
    assert major.decide(version, image, repository)[0] is moves


def test_the_image_major_tag_is_read_as_the_release_on_its_index() -> None:
    registry = Registry()
    older = registry.add_index(["amd64", "arm64"], tag="1.4.0")
    newer = registry.add_index(["amd64"], tag="1.5.0")
    registry.add_index(["arm64"], tag="2.0.0")
    with running(registry) as host:
        image = f"{host}/{REPO}"
        assert image_tool.major_version(f"{image}:v1") == ""  # no :v1 yet
        registry.manifests["v1"] = registry.manifests[newer]
        assert image_tool.major_version(f"{image}:v1") == "1.5.0"
        registry.manifests["v1"] = registry.manifests[older]
        assert image_tool.major_version(f"{image}:v1") == "1.4.0"
        registry.manifests["v1"] = registry.manifests[registry.add_index(["amd64", "x"])]
        with pytest.raises(image_tool.Broken, match="which no X.Y.Z tag names"):
            image_tool.major_version(f"{image}:v1")
