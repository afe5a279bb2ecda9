"""Promotions follow the default branch's history, not the order jobs finish in (#25).

Scenarios on the fake GitHub, through the Action's promote mode: a re-run of an older
commit's promote job, an older push's job finishing last, a re-run of the same job,
and the cases where GitHub cannot say how two commits relate.
"""

from __future__ import annotations

import json
from pathlib import Path

from actions_job import Job, make_job, pr_payload, push_payload
from fake_github import (  # noqa: F401  (the *_fixture names register fixtures)
    FakeGitHub,
    fake_github_fixture,
)
from test_github_action import StubGate

from evalkit.history import index_loads

CONFIG = "evals-evalkit"
STORE = "evalkit-baselines"


def promote_job(fake: FakeGitHub, tmp: Path, sha: str) -> Job:
    """The promote job of the push of ``sha`` (branch store)."""
    job = make_job(fake, tmp, "push", push_payload(fake), mode="promote", baseline_store="branch")
    job.env["GITHUB_SHA"] = sha
    return job


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
    pr = make_job(fake_github, tmp_path / "pr", "pull_request", pr_payload(fake_github))
    pr.env["INPUT_BASELINE-STORE"] = "branch"
    gate = StubGate()
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
