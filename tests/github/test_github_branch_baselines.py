"""Baselines per base branch (docs/baselines-per-branch.md), against the fake GitHub.

A release branch and a stacked pull request each gate against their own base branch's
latest promoted baseline, found by merge-base ancestry as the default branch's is; a base
branch that does not promote, or has no baseline yet, falls back to the default branch's;
and every spoof the default branch refuses (a fork's run, a pull_request run, a tag named
like the branch) is refused on every promoting branch.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from actions_job import Job, make_job, pr_payload, push_payload
from fake_github import (  # noqa: F401  (the *_fixture names register fixtures)
    FakeGitHub,
    fake_github_fixture,
    make_zip,
)
from test_github_action import ARTEFACT, StubGate

CONFIG = "evals-evalkit"
RELEASE = "release/1.x"


def upload(fake: FakeGitHub, sha: str, branch: str, created: str, **kwargs: object) -> int:
    """A baseline artifact uploaded by a push run of ``sha`` on ``branch``."""
    return fake.add_artifact(
        make_zip({f"{CONFIG}.json": ARTEFACT}),
        head_sha=sha,
        head_branch=branch,
        created_at=created,
        on_default_branch=False,  # the commit's branch history is built by the test
        **kwargs,  # type: ignore[arg-type]
    )


def cut(fake: FakeGitHub, branch: str, start: str) -> None:
    """``git branch BRANCH START``: the new branch's history begins at ``start``."""
    fake.git.refs[f"heads/{branch}"] = start


def promoted_main_and(fake: FakeGitHub, branch: str) -> str:
    """main's first commit, promoted, and ``branch`` cut from it; returns that commit."""
    m1 = fake.git.push("main")
    upload(fake, m1, "main", "2024-05-01T00:00:00Z")
    cut(fake, branch, m1)
    return m1


def pr_into(
    fake: FakeGitHub, tmp: Path, base: str, promote_branches: str = ""
) -> tuple[Job, StubGate]:
    """A PR into ``base`` whose merge ref's first parent is ``base``'s tip."""
    git = fake.git
    tree = git.put_tree({})
    tip = git.refs[f"heads/{base}"]
    head = git.put_commit("pr head", tree, [tip])
    merge = git.put_commit("Merge", tree, [tip, head])
    payload = pr_payload(fake)
    payload["pull_request"]["base"].update({"ref": base, "sha": tip})
    job = make_job(fake, tmp, "pull_request", payload)
    job.env["GITHUB_SHA"] = merge
    job.env["INPUT_PROMOTE-BRANCHES"] = promote_branches
    return job, StubGate()


@pytest.fixture
def release(fake_github: FakeGitHub) -> dict[str, str]:
    """main: m1 - m2 - m3, with baselines at m1 and m3 (the newest); release/1.x cut at
    m1, then r1 - r2 on it, with baselines at r1 and r2."""
    git = fake_github.git
    m1 = promoted_main_and(fake_github, RELEASE)
    r1 = git.push(RELEASE)
    upload(fake_github, r1, RELEASE, "2024-05-02T00:00:00Z")
    git.push("main")
    r2 = git.push(RELEASE)
    upload(fake_github, r2, RELEASE, "2024-05-03T00:00:00Z")
    m3 = git.push("main")
    upload(fake_github, m3, "main", "2024-05-04T00:00:00Z")
    return {"m1": m1, "m3": m3, "r1": r1, "r2": r2}


def test_a_pr_into_a_promoting_release_branch_gets_that_branchs_baseline(
    fake_github: FakeGitHub, tmp_path: Path, release: dict[str, str]
) -> None:
    job, gate = pr_into(fake_github, tmp_path, RELEASE, promote_branches="release/*")
    assert job.run(gate) == 0
    out = job.outputs()
    assert (out["baseline-sha"], out["baseline-merge-base"]) == (release["r2"], "true")
    detail = gate.requests[0].baseline_detail
    assert f"on {RELEASE} at {release['r2'][:12]}" in detail


def test_the_release_branchs_older_baseline_when_the_merge_base_has_none(
    fake_github: FakeGitHub, tmp_path: Path, release: dict[str, str]
) -> None:
    fake_github.git.push(RELEASE)  # the tip moved on without a promotion
    job, gate = pr_into(fake_github, tmp_path, RELEASE, promote_branches="release/*")
    assert job.run(gate) == 0
    out = job.outputs()
    # nearest the branch's head among its own promotions: r2, never main's newer m3
    assert (out["baseline-sha"], out["baseline-merge-base"]) == (release["r2"], "false")


def test_a_base_branch_that_does_not_promote_falls_back_to_the_default_branch(
    fake_github: FakeGitHub, tmp_path: Path, release: dict[str, str]
) -> None:
    job, gate = pr_into(fake_github, tmp_path, RELEASE)  # no promote-branches
    assert job.run(gate) == 0
    assert job.outputs()["baseline-sha"] == release["m3"]
    detail = gate.requests[0].baseline_detail
    assert f"the base branch {RELEASE} promotes no baselines" in detail
    assert "so main's is used" in detail


def test_a_new_release_branch_without_a_baseline_uses_the_default_branchs(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    m1 = promoted_main_and(fake_github, "release/2.x")
    job, gate = pr_into(fake_github, tmp_path, "release/2.x", promote_branches="release/*")
    assert job.run(gate) == 0
    assert job.outputs()["baseline-sha"] == m1
    assert "release/2.x has no baseline yet" in gate.requests[0].baseline_detail


def test_a_stacked_pr_gates_against_the_branch_below_it(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """PR 2 (feature-b into feature-a) against feature-a's promotion, not main's."""
    git = fake_github.git
    promoted_main_and(fake_github, "feature-a")
    a1 = git.push("feature-a")
    upload(fake_github, a1, "feature-a", "2024-05-02T00:00:00Z")
    m2 = git.push("main")
    upload(fake_github, m2, "main", "2024-05-03T00:00:00Z")  # newer, on main
    job, gate = pr_into(fake_github, tmp_path, "feature-a", promote_branches="feature-*")
    assert job.run(gate) == 0
    out = job.outputs()
    assert (out["baseline-sha"], out["baseline-merge-base"]) == (a1, "true")


@pytest.mark.parametrize(
    "spoof",
    [
        {"head_repository_id": 9999},  # a fork's branch called release/1.x
        {"event": "pull_request"},  # a PR's run, not a push
        {"tag": True},  # a tag called release/1.x on a commit never on the branch
    ],
    ids=["fork", "pull_request-run", "tag-named-like-the-branch"],
)
def test_every_spoof_refused_on_main_is_refused_on_a_promoting_branch(
    fake_github: FakeGitHub, tmp_path: Path, release: dict[str, str], spoof: dict[str, object]
) -> None:
    git = fake_github.git
    rogue = git.put_commit("not reviewed", git.put_tree({}), [release["r2"]])
    if spoof.pop("tag", False):
        git.refs[f"tags/{RELEASE}"] = rogue
    # the newest upload, a child of the last promotion: it would win if trusted
    upload(fake_github, rogue, RELEASE, "2024-06-01T00:00:00Z", **spoof)
    git.push(RELEASE)  # the merge base has no promotion: the nearest trusted one is taken
    job, gate = pr_into(fake_github, tmp_path, RELEASE, promote_branches="release/*")
    assert job.run(gate) == 0
    assert job.outputs()["baseline-sha"] == release["r2"]


def promote_push(
    fake: FakeGitHub, tmp: Path, branch: str, promote_branches: str, store: str = "artifact"
) -> Job:
    job = make_job(fake, tmp, "push", push_payload(fake), mode="promote", baseline_store=store)
    job.env["INPUT_PROMOTE-BRANCHES"] = promote_branches
    job.env["GITHUB_REF"] = f"refs/heads/{branch}"
    job.env["GITHUB_SHA"] = fake.git.push(branch)
    return job


def test_a_push_to_a_promoting_branch_promotes(fake_github: FakeGitHub, tmp_path: Path) -> None:
    fake_github.git.push("main")
    cut(fake_github, RELEASE, fake_github.git.refs["heads/main"])
    job = promote_push(fake_github, tmp_path, RELEASE, "release/*, hotfix")
    assert job.run(StubGate()) == 0
    assert job.outputs()["baseline-path"] == ".evalkit/action/baseline"


def test_a_push_to_another_branch_is_refused(fake_github: FakeGitHub, tmp_path: Path) -> None:
    fake_github.git.push("main")
    cut(fake_github, "feature-x", fake_github.git.refs["heads/main"])
    job = promote_push(fake_github, tmp_path, "feature-x", "release/*")
    gate = StubGate()
    assert job.run(gate) == 2
    assert "mode: promote runs only on a push to main or release/*" in job.log().replace("%3A", ":")
    assert gate.requests == []


def test_the_branch_store_keeps_the_default_branchs_baselines_only(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    fake_github.git.push("main")
    cut(fake_github, RELEASE, fake_github.git.refs["heads/main"])
    job = promote_push(fake_github, tmp_path, RELEASE, "release/*", store="branch")
    assert job.run(StubGate()) == 2
    assert "promote_branches needs store: artifact" in job.log().replace("%3A", ":")


def test_which_branches_promote_is_one_rule() -> None:
    from evalkit._spec.config import BaselineConfig

    config = BaselineConfig(promote_branches=["release/*", "stable"])
    promoting = {
        b
        for b in ("main", "release/1.x", "stable", "stable2", "Release/1.x", "x")
        if config.promotes(b, "main")
    }
    assert promoting == {"main", "release/1.x", "stable"}
    assert BaselineConfig().promotes("main", "main")
    assert not BaselineConfig().promotes("release/1.x", "main")
    with pytest.raises(ValueError, match="without surrounding spaces"):
        BaselineConfig(promote_branches=[" release/*"])
