"""Promotions follow the default branch's history, not the order jobs finish in (#25).

Scenarios on the fake GitHub, through the Action: a re-run of an older commit's promote
job, an older push's job finishing last, a re-run of the same job, the cases where GitHub
cannot say how two commits relate, and (artifact store) a tag named like the default
branch.
"""

from __future__ import annotations

import json
from pathlib import Path

from actions_job import Job, make_job, pr_payload, push_payload
from fake_github import (  # noqa: F401  (the *_fixture names register fixtures)
    FakeGitHub,
    fake_github_fixture,
    make_zip,
)
from test_github_action import StubGate
from test_github_history import access_for

from evalkit._store.history import index_loads
from evalkit._store.protocol import HistoryRequest
from evalkit.github.artifacts import ArtifactStore

CONFIG = "evals-evalkit"
STORE = "evalkit-baselines"


def promote_job(fake: FakeGitHub, tmp: Path, sha: str) -> Job:
    """The promote job of the push of ``sha`` (branch store)."""
    job = make_job(fake, tmp, "push", push_payload(fake), mode="promote", baseline_store="branch")
    job.env["GITHUB_SHA"] = sha
    return job


def pr_gate(fake: FakeGitHub, tmp: Path) -> tuple[Job, StubGate]:
    """A PR whose merge base and base.sha have no baseline: the store's newest is used."""
    return make_job(fake, tmp, "pull_request", pr_payload(fake)), StubGate()


def latest_sha(fake: FakeGitHub) -> str:
    return (fake.git.file_at(STORE, f"latest/{CONFIG}.sha") or b"").decode().strip()


def history_shas(fake: FakeGitHub) -> list[str | None]:
    index = fake.git.file_at(STORE, f"history/{CONFIG}.json")
    return [r.sha for r in index_loads(index, "history")]


def test_rerun_of_an_older_commits_promote_job_keeps_latest(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    older, newer = fake_github.git.push(), fake_github.git.push()
    assert promote_job(fake_github, tmp_path / "a", older).run(StubGate()) == 0
    assert promote_job(fake_github, tmp_path / "b", newer).run(StubGate()) == 0
    assert latest_sha(fake_github) == newer

    rerun = promote_job(fake_github, tmp_path / "a2", older)
    assert rerun.run(StubGate()) == 0
    assert latest_sha(fake_github) == newer  # not rolled back
    out = rerun.outputs()
    assert out["baseline-latest"] == "kept"
    assert out["promoted-path"] == f"{STORE}:{older}/{CONFIG}.json"
    assert "The latest baseline was not moved" in rerun.summary()
    assert f"{older[:12]} is an ancestor of {newer[:12]}" in rerun.summary()
    assert "latest baseline kept" in rerun.log()
    assert history_shas(fake_github) == [older, newer]  # replaced, not appended

    # A PR with no exact baseline gets the newer one.
    pr, gate = pr_gate(fake_github, tmp_path / "pr")
    pr.env["INPUT_BASELINE-STORE"] = "branch"
    assert pr.run(gate) == 0
    assert pr.outputs()["baseline-sha"] == newer


def test_older_push_finishing_last_keeps_latest_and_lists_it_first(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    older, newer = fake_github.git.push(), fake_github.git.push()
    assert promote_job(fake_github, tmp_path / "b", newer).run(StubGate()) == 0
    late = promote_job(fake_github, tmp_path / "a", older)
    assert late.run(StubGate()) == 0
    assert latest_sha(fake_github) == newer
    assert late.outputs()["baseline-latest"] == "kept"
    # its exact baseline is there for PRs based on it, and the history stays in order
    assert fake_github.git.file_at(STORE, f"{older}/{CONFIG}.json") is not None
    assert history_shas(fake_github) == [older, newer]


def test_descendant_moves_latest(fake_github: FakeGitHub, tmp_path: Path) -> None:
    older, newer = fake_github.git.push(), fake_github.git.push()
    assert promote_job(fake_github, tmp_path / "a", older).run(StubGate()) == 0
    job = promote_job(fake_github, tmp_path / "b", newer)
    assert job.run(StubGate()) == 0
    assert latest_sha(fake_github) == newer
    assert job.outputs()["baseline-latest"] == "moved"
    compares = fake_github.api_calls("GET", "/compare/")
    assert [c.path.rsplit("/", 1)[1] for c in compares] == [f"{older}...{newer}"]


def test_rerun_of_the_same_promote_job_replaces_its_history_entry(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    first, second = fake_github.git.push(), fake_github.git.push()
    assert promote_job(fake_github, tmp_path / "a", first).run(StubGate()) == 0
    assert promote_job(fake_github, tmp_path / "b", second).run(StubGate()) == 0
    before = json.loads(fake_github.git.file_at(STORE, f"history/{CONFIG}.json") or b"")
    rerun = promote_job(fake_github, tmp_path / "b2", second)
    assert rerun.run(StubGate()) == 0
    assert rerun.outputs()["baseline-latest"] == "moved"
    assert history_shas(fake_github) == [first, second]
    after = json.loads(fake_github.git.file_at(STORE, f"history/{CONFIG}.json") or b"")
    # it keeps the time it first became the baseline
    assert after["promotions"][1]["promoted_at"] == before["promotions"][1]["promoted_at"]


def test_diverged_commit_keeps_latest_and_says_how_to_recover(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    git = fake_github.git
    root = git.push()
    current = git.push()
    git.refs["heads/main"] = root  # a force-push: main is rewritten from root
    rewritten = git.push()
    git.commits[current]["parents"] = [root]
    assert promote_job(fake_github, tmp_path / "a", current).run(StubGate()) == 0
    job = promote_job(fake_github, tmp_path / "b", rewritten)
    assert job.run(StubGate()) == 0
    assert latest_sha(fake_github) == current
    summary = job.summary()
    assert f"{rewritten[:12]} and {current[:12]} have diverged" in summary
    assert f"delete latest/{CONFIG}.sha on {STORE}" in summary


def test_unknown_ancestry_keeps_latest(fake_github: FakeGitHub, tmp_path: Path) -> None:
    older, newer = fake_github.git.push(), fake_github.git.push()
    assert promote_job(fake_github, tmp_path / "a", older).run(StubGate()) == 0
    fake_github.fail("GET", r"/compare/", 502, times=3)  # as many as the client retries
    job = promote_job(fake_github, tmp_path / "b", newer)
    assert job.run(StubGate()) == 0
    assert latest_sha(fake_github) == older
    assert job.outputs()["baseline-latest"] == "kept"
    assert f"cannot tell how {newer[:12]} relates to {older[:12]}" in job.summary()
    assert "HTTP 502" in job.summary()
    assert history_shas(fake_github) == [newer, older]  # latest stays the newest entry


def test_commit_gone_from_github_keeps_latest(fake_github: FakeGitHub, tmp_path: Path) -> None:
    gone = "9" * 40  # latest was promoted from a commit GitHub no longer has
    fake_github.git.commit_files(STORE, {f"latest/{CONFIG}.sha": f"{gone}\n".encode()})
    newer = fake_github.git.push()
    job = promote_job(fake_github, tmp_path / "b", newer)
    assert job.run(StubGate()) == 0
    assert latest_sha(fake_github) == gone
    assert "HTTP 404" in job.summary()


# -- the artifact store: accepted uploads and their order ----------------------------------


def upload(fake: FakeGitHub, sha: str, day: int, **run: object) -> int:
    """The promote job's upload of ``sha``'s baseline, on 2024-05-<day>."""
    doc = {"schema_version": 1, "rows": [], "git": {"commit": sha}, "config_fingerprint": sha}
    return fake.add_artifact(
        make_zip({f"{CONFIG}.json": json.dumps(doc).encode()}),
        head_sha=sha,
        created_at=f"2024-05-{day:02d}T00:00:00Z",
        **run,  # type: ignore[arg-type]
    )


def test_artifact_store_prefers_the_descendant_over_a_newer_upload_of_its_ancestor(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    older, newer = fake_github.git.push(), fake_github.git.push()
    upload(fake_github, older, 1)
    upload(fake_github, newer, 2)
    upload(fake_github, older, 3)  # a re-run of the older commit's promote job
    job, gate = pr_gate(fake_github, tmp_path)
    assert job.run(gate) == 0
    assert job.outputs()["baseline-sha"] == newer


def test_artifact_history_lists_each_commit_once_in_branch_order(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    older, newer = fake_github.git.push(), fake_github.git.push()
    upload(fake_github, older, 1)
    upload(fake_github, newer, 2)
    rerun = upload(fake_github, older, 3)
    store = ArtifactStore(access_for(fake_github), name="evalkit-baseline")
    history = store.history(HistoryRequest(CONFIG, tmp_path / "h"))
    assert [e.sha for e in history.entries] == [older, newer]
    assert history.entries[0].path.name == f"artifact-{rerun}.json"  # its newest upload
    assert "1 an older upload of a commit listed once" in history.detail


def test_artifact_from_a_tag_named_like_the_default_branch_is_refused(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    git = fake_github.git
    merged = git.push()
    upload(fake_github, merged, 1)
    # A collaborator pushes a tag called main on a commit never merged: its push run says
    # head_branch "main", and its workflow uploads a baseline under the same name.
    tagged = git.put_commit("not reviewed", git.put_tree({}), [merged])
    git.refs["tags/main"] = tagged
    upload(fake_github, tagged, 2, on_default_branch=False)
    job, gate = pr_gate(fake_github, tmp_path)
    assert job.run(gate) == 0
    assert job.outputs()["baseline-sha"] == merged
    # the branch's head is compared by sha: "main" would name the tag
    assert not fake_github.api_calls("GET", "/compare/main...")


def test_artifact_store_cannot_check_the_branch_is_exit_3(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    upload(fake_github, fake_github.git.push(), 1)
    fake_github.git.push()  # main moved on: the upload's commit must be compared with it
    fake_github.fail("GET", r"/compare/", 503, times=3)
    job, gate = pr_gate(fake_github, tmp_path)
    assert job.run(gate) == 3
    assert "is on the default branch" in job.log()
    assert gate.requests == []  # never a silent "no baseline"
