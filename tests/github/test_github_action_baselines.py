"""Which baseline a PR gets, and what the job says about it, against the fake GitHub.

The merge ref's first parent is the preferred baseline commit, then the event's
``base.sha``, then the newest; another config's baseline is refused; a bad input still
writes outputs; the companion shows the trusted run conclusion; the sticky comment is
matched by the token's own identity.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from actions_job import BASE_SHA, HEAD_SHA, Job, make_job, pr_payload, push_payload
from fake_github import (  # noqa: F401  (the *_fixture names register fixtures)
    FakeGitHub,
    fake_github_fixture,
    github_factory_for_tests,
    make_zip,
)
from test_github_action import ARTEFACT, StubGate, fork_bundle

from evalkit.action.run import post_comment_from_dir
from evalkit.github.client import NO_DELAY
from evalkit.github.comment import marker_for

CONFIG = "evals-evalkit"


def merge_ref(fake: FakeGitHub, base_tip: str) -> str:
    """A refs/pull/7/merge commit in the fake's object store: parents [base tip, PR head]."""
    git = fake.git
    tree = git.put_tree({})
    git.push("main", BASE_SHA)  # the event's base.sha, then the tip merged on top of it
    tip = git.push()
    head = git.put_commit("pr head", tree, [])
    assert base_tip == "tip"
    merge = git.put_commit("Merge", tree, [tip, head])
    return f"{tip} {merge}"


def pr_job(fake: FakeGitHub, tmp_path: Path, merge_sha: str | None = None) -> Job:
    job = make_job(fake, tmp_path, "pull_request", pr_payload(fake))
    if merge_sha is not None:
        job.env["GITHUB_SHA"] = merge_sha
    return job


def seed(fake: FakeGitHub, sha: str, *, created: str, name: str = CONFIG) -> int:
    return fake.add_artifact(make_zip({f"{name}.json": ARTEFACT}), head_sha=sha, created_at=created)


def test_action_prefers_the_merge_base_over_a_stale_base_sha(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    tip, merge = merge_ref(fake_github, "tip").split()
    seed(fake_github, BASE_SHA, created="2024-05-03T00:00:00Z")  # newest, but the stale base
    on_tip = seed(fake_github, tip, created="2024-05-01T00:00:00Z")
    job = pr_job(fake_github, tmp_path, merge)
    gate = StubGate()
    assert job.run(gate) == 0
    out = job.outputs()
    assert (out["baseline-sha"], out["baseline-merge-base"]) == (tip, "true")
    detail = gate.requests[0].baseline_detail
    assert f"#{on_tip}" in detail
    assert "the merge base: first parent of refs/pull/7/merge" in detail
    assert f"the baseline is from {tip[:12]}, the merge base" in detail
    assert fake_github.api_calls("GET", f"/git/commits/{merge}")


def test_action_falls_back_to_base_sha_and_says_it_is_not_the_merge_base(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    tip, merge = merge_ref(fake_github, "tip").split()
    seed(fake_github, "e" * 40, created="2024-05-03T00:00:00Z")  # newest of all
    seed(fake_github, BASE_SHA, created="2024-05-01T00:00:00Z")
    job = pr_job(fake_github, tmp_path, merge)
    gate = StubGate()
    assert job.run(gate) == 0
    out = job.outputs()
    assert (out["baseline-sha"], out["baseline-merge-base"]) == (BASE_SHA, "false")
    detail = gate.requests[0].baseline_detail
    assert "pull_request.base.sha, behind the merge base" in detail
    assert f"NOT the merge base {tip[:12]}" in detail


def test_action_newest_when_neither_commit_has_a_baseline(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    _tip, merge = merge_ref(fake_github, "tip").split()
    seed(fake_github, "e" * 40, created="2024-05-01T00:00:00Z")
    seed(fake_github, "f" * 40, created="2024-05-03T00:00:00Z")
    job = pr_job(fake_github, tmp_path, merge)
    assert job.run(StubGate()) == 0
    assert (job.outputs()["baseline-sha"], job.outputs()["baseline-merge-base"]) == (
        "f" * 40,
        "false",
    )


def test_action_unreadable_merge_commit_falls_back_to_base_sha(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    seed(fake_github, BASE_SHA, created="2024-05-01T00:00:00Z")
    seed(fake_github, "f" * 40, created="2024-05-03T00:00:00Z")
    job = pr_job(fake_github, tmp_path)  # GITHUB_SHA is not in the fake's object store: 404
    assert job.run(StubGate()) == 0
    out = job.outputs()
    assert (out["baseline-sha"], out["baseline-merge-base"]) == (BASE_SHA, "unknown")
    assert "preferring the event's base.sha" in job.log()


def test_action_branch_store_prefers_merge_base_too(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    tip, merge = merge_ref(fake_github, "tip").split()
    fake_github.git.commit_files(
        "evalkit-baselines",
        {
            f"{tip}/{CONFIG}.json": ARTEFACT,
            f"{BASE_SHA}/{CONFIG}.json": ARTEFACT,
            f"latest/{CONFIG}.json": ARTEFACT,
            f"latest/{CONFIG}.sha": b"f" * 40,
        },
    )
    job = make_job(
        fake_github, tmp_path, "pull_request", pr_payload(fake_github), baseline_store="branch"
    )
    job.env["GITHUB_SHA"] = merge
    assert job.run(StubGate()) == 0
    out = job.outputs()
    assert (out["baseline-source"], out["baseline-sha"]) == ("branch", tip)
    assert out["baseline-merge-base"] == "true"


# -- another config's baseline -------------------------------------------------------------


def test_action_artifact_of_another_config_is_never_picked(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    # Same artifact name, another config's file: passed over (no "the only .json" fallback).
    seed(fake_github, BASE_SHA, created="2024-05-01T00:00:00Z", name="other-config")
    job = pr_job(fake_github, tmp_path)
    with_log = job.run(StubGate())
    assert with_log == 2
    assert "expected one file named evals-evalkit.json" in job.log()
    assert job.outputs()["baseline-status"] == "error"


def test_action_corrupt_newest_artifact_falls_back_to_the_next(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    good = seed(fake_github, "e" * 40, created="2024-05-01T00:00:00Z")
    fake_github.add_artifact(
        b"PK\x03\x04 definitely not a zip", head_sha="f" * 40, created_at="2024-05-03T00:00:00Z"
    )
    job = pr_job(fake_github, tmp_path)
    gate = StubGate()
    assert job.run(gate) == 0
    assert job.outputs()["baseline-sha"] == "e" * 40
    assert f"#{good}" in gate.requests[0].baseline_detail
    assert "not a zip archive" in gate.requests[0].baseline_detail


# -- outputs on bad input ------------------------------------------------------------------


def test_action_bad_input_still_writes_verdict_exit_code_and_summary(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    job = make_job(fake_github, tmp_path, "pull_request", pr_payload(fake_github), mode="bogus")
    assert job.run(StubGate()) == 2
    out = job.outputs()
    assert (out["verdict"], out["exit-code"]) == ("error", "2")
    assert "### evalkit: error (exit 2)" in job.summary()
    assert "::error" in job.log()


# -- the companion shows the trusted conclusion --------------------------------------------


@pytest.mark.parametrize(("conclusion", "word"), [("failure", "FAILED"), ("success", "passed")])
def test_action_companion_shows_the_trusted_run_conclusion(
    fake_github: FakeGitHub, tmp_path: Path, conclusion: str, word: str
) -> None:
    bundle = fork_bundle(fake_github, tmp_path)
    # The fork's job claims a pass, whatever really happened.
    body = bundle / "comment.md"
    body.write_text(body.read_text().replace("### evalkit: fail", "### evalkit: PASS"))
    fake_github.add_pull(7, head_sha=HEAD_SHA)
    payload = {
        "workflow_run": {
            "id": 99,
            "event": "pull_request",
            "head_sha": HEAD_SHA,
            "head_branch": "feature",
            "head_repository": {"full_name": "mallory/widgets"},
            "conclusion": conclusion,
        },
        "repository": push_payload(fake_github)["repository"],
    }
    env = make_job(fake_github, tmp_path / "companion", "workflow_run", payload).env
    stdout = io.StringIO()
    code = post_comment_from_dir(
        bundle, env, github_factory=github_factory_for_tests, stdout=stdout, retry=NO_DELAY
    )
    assert code == 0, stdout.getvalue()
    (posted,) = fake_github.comment_bodies(7)
    first_lines = posted.splitlines()[:3]
    assert posted.startswith(marker_for(CONFIG) + "\n")
    assert any(f"gate run 99 for this fork PR {word}" in line for line in first_lines), posted
    assert f"workflow_run.conclusion: `{conclusion}`" in posted


# -- our own comment, by identity ------------------------------------------------------------


def test_action_comment_matches_the_tokens_own_user(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    fake_github.token_user = "ci-user"  # a personal token: GET /user answers
    fake_github.add_comment(
        7, f"{marker_for(CONFIG)}\nold", login="github-actions[bot]", kind="Bot"
    )
    ours = fake_github.add_comment(7, f"{marker_for(CONFIG)}\nmine", login="ci-user")
    job = pr_job(fake_github, tmp_path)
    assert job.run(StubGate()) == 0
    assert job.outputs()["comment"] == "updated"
    assert str(ours["id"]) in job.outputs()["comment-url"]
    assert fake_github.comment_bodies(7)[0].endswith("old")  # another identity's: untouched


def test_action_comment_with_job_token_is_github_actions_bot(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    fake_github.add_comment(
        7, f"{marker_for(CONFIG)}\nother bot", login="renovate[bot]", kind="Bot"
    )
    job = pr_job(fake_github, tmp_path)
    assert job.run(StubGate()) == 0
    assert job.outputs()["comment"] == "created"
    assert len(fake_github.comment_bodies(7)) == 2
    assert [r.status for r in fake_github.api_calls("GET", "/user")] == [403]


def test_action_comment_when_get_user_keeps_failing_is_the_bot_with_a_warning(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    """#25: a 5xx on GET /user (after the client's retries) must not cost the comment."""
    ours = fake_github.add_comment(
        7, f"{marker_for(CONFIG)}\nold", login="github-actions[bot]", kind="Bot"
    )
    fake_github.fail("GET", r"^/user$", 502, times=3)
    job = pr_job(fake_github, tmp_path)
    assert job.run(StubGate()) == 0
    assert job.outputs()["comment"] == "updated"
    assert str(ours["id"]) in job.outputs()["comment-url"]
    assert [r.status for r in fake_github.api_calls("GET", "/user")] == [502, 502, 502]
    log = job.log().replace("%3A", ":")
    assert "::warning" in log
    assert "HTTP 502" in log
    assert "comment-author" in log


def test_action_artifact_promote_leaves_upload_folder(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    job = make_job(fake_github, tmp_path, "push", push_payload(fake_github), mode="promote")
    assert job.run(StubGate()) == 0
    out = job.outputs()
    assert out["baseline-path"] == ".evalkit/action/baseline"
    promoted = job.workspace / out["promoted-path"]
    assert json.loads(promoted.read_text())["from"] == "candidate"


def test_action_warns_when_output_dir_is_outside_the_workspace(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    job = make_job(
        fake_github,
        tmp_path,
        "push",
        push_payload(fake_github),
        mode="promote",
        output_dir=str(outside),
    )
    assert job.run(StubGate()) == 0
    assert "output-dir outside the workspace" in job.log()
    inside = make_job(
        fake_github, tmp_path / "b", "push", push_payload(fake_github), mode="promote"
    )
    assert inside.run(StubGate()) == 0
    assert "outside the workspace" not in inside.log()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root")
def test_action_as_root_hands_its_files_to_the_workspace_owner(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    job = make_job(fake_github, tmp_path, "push", push_payload(fake_github), mode="promote")
    os.chown(job.workspace, 1001, 1001)  # the runner user owns the checkout
    assert job.run(StubGate()) == 0
    written = [job.workspace / ".evalkit", *(job.workspace / ".evalkit").rglob("*")]
    assert len(written) > 3
    assert {p.lstat().st_uid for p in written} == {1001}
    assert (job.workspace / "evals" / "evalkit.yaml").stat().st_uid == 0  # not ours: untouched
