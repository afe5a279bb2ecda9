"""The branch baseline store over the Git Data and Contents APIs of the fake GitHub."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_github import (  # noqa: F401  (the *_fixture names register fixtures)
    FakeGitHub,
    fake_github_fixture,
    github_factory_for_tests,
)

from evalkit._store.protocol import (
    BaselineFetch,
    FetchRequest,
    GitHubAccess,
    Preferred,
    PromoteRequest,
    PromoteResult,
)
from evalkit.errors import ArtifactError
from evalkit.github.branch_store import BranchStore
from evalkit.github.client import NO_DELAY, GitHubApiError

SHA1 = "1" * 40
SHA2 = "2" * 40


def artefact(tmp_path: Path, tag: str) -> Path:
    path = tmp_path / f"{tag}.json"
    path.write_text(json.dumps({"schema_version": 1, "tag": tag}))
    return path


def store_for(fake: FakeGitHub, **kwargs: object) -> BranchStore:
    for code in (SHA1, SHA2):  # the default branch's history: SHA2 follows SHA1
        fake.git.push("main", code)
    repo = github_factory_for_tests(fake.api_url, fake.token).get_repo(fake.full_name)
    access = GitHubAccess(
        repo=lambda: repo,
        repo_facts=lambda: (fake.repo_id, "main"),
        token=fake.token,
        retry=NO_DELAY,
    )
    return BranchStore(access, sleep=lambda _s: None, **kwargs)  # type: ignore[arg-type]


def promote(store: BranchStore, artefact: Path, *, config_name: str, sha: str) -> PromoteResult:
    return store.promote(PromoteRequest(artefact, config_name, sha, artefact.parent))


def fetch(
    store: BranchStore, *, config_name: str, prefer_sha: str | None, dest_dir: Path
) -> BaselineFetch:
    preferred = [Preferred(prefer_sha, "the PR's base commit")] if prefer_sha else []
    return store.fetch(FetchRequest(config_name, dest_dir, preferred))


def test_github_branch_store_promote_creates_orphan_branch(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    result = promote(
        store_for(fake_github), artefact(tmp_path, "v1"), config_name="evalkit", sha=SHA1
    )
    assert result.location == "evalkit-baselines:latest/evalkit.json"
    git = fake_github.git
    head = git.refs["heads/evalkit-baselines"]
    assert git.commits[head]["parents"] == []
    assert json.loads(git.file_at("evalkit-baselines", "latest/evalkit.json") or b"")["tag"] == "v1"
    assert git.file_at("evalkit-baselines", f"{SHA1}/evalkit.json") is not None
    assert git.file_at("evalkit-baselines", "latest/evalkit.sha") == (SHA1 + "\n").encode()


def test_github_branch_store_second_promotion_keeps_history(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    store = store_for(fake_github)
    promote(store, artefact(tmp_path, "v1"), config_name="evalkit", sha=SHA1)
    promote(store, artefact(tmp_path, "v2"), config_name="evalkit", sha=SHA2)
    git = fake_github.git
    assert json.loads(git.file_at("evalkit-baselines", "latest/evalkit.json") or b"")["tag"] == "v2"
    assert (
        json.loads(git.file_at("evalkit-baselines", f"{SHA1}/evalkit.json") or b"")["tag"] == "v1"
    )
    head = git.refs["heads/evalkit-baselines"]
    assert len(git.commits[head]["parents"]) == 1


def test_github_branch_store_retries_when_another_job_moves_the_branch(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    store = store_for(fake_github)
    promote(store, artefact(tmp_path, "v1"), config_name="evalkit", sha=SHA1)
    # Another job (another config) commits between our read of the ref and our update.
    fake_github.before(
        "PATCH",
        r"/git/refs/heads/evalkit-baselines$",
        lambda: fake_github.git.commit_files("evalkit-baselines", {"latest/other.json": b"{}"}),
    )
    promote(store, artefact(tmp_path, "v2"), config_name="evalkit", sha=SHA2)
    git = fake_github.git
    patches = [r for r in fake_github.api_calls("PATCH") if "/git/refs/" in r.path]
    assert [r.status for r in patches] == [422, 200]
    assert git.file_at("evalkit-baselines", "latest/other.json") == b"{}"  # not clobbered
    assert json.loads(git.file_at("evalkit-baselines", "latest/evalkit.json") or b"")["tag"] == "v2"


def test_github_branch_store_409_race_is_bounded(fake_github: FakeGitHub, tmp_path: Path) -> None:
    store = store_for(fake_github, race_attempts=3)
    promote(store, artefact(tmp_path, "v1"), config_name="evalkit", sha=SHA1)
    fake_github.fail(
        "PATCH", r"/git/refs/heads/evalkit-baselines$", 409, times=10, message="Conflict"
    )
    with pytest.raises(GitHubApiError, match=r"evalkit-baselines after 3 attempts"):
        promote(store, artefact(tmp_path, "v2"), config_name="evalkit", sha=SHA2)
    assert len(list(fake_github.api_calls("PATCH"))) == 3


def test_github_branch_store_concurrent_branch_creation(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    # The branch does not exist when we look, but another job creates it first.
    fake_github.before(
        "POST",
        r"/git/refs$",
        lambda: fake_github.git.commit_files("evalkit-baselines", {"latest/rag.json": b"{}"}),
    )
    promote(store_for(fake_github), artefact(tmp_path, "v1"), config_name="evalkit", sha=SHA1)
    git = fake_github.git
    assert git.file_at("evalkit-baselines", "latest/rag.json") == b"{}"
    assert git.file_at("evalkit-baselines", "latest/evalkit.json") is not None


def test_github_branch_store_fetch_prefers_base_sha(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    store = store_for(fake_github)
    promote(store, artefact(tmp_path, "v1"), config_name="evalkit", sha=SHA1)
    promote(store, artefact(tmp_path, "v2"), config_name="evalkit", sha=SHA2)
    exact = fetch(store, config_name="evalkit", prefer_sha=SHA1, dest_dir=tmp_path / "a")
    assert exact.found
    assert exact.sha == SHA1
    assert "base commit" in exact.detail
    assert json.loads(exact.path.read_text())["tag"] == "v1"  # type: ignore[union-attr]
    latest = fetch(store, config_name="evalkit", prefer_sha="f" * 40, dest_dir=tmp_path / "b")
    assert latest.found
    assert latest.sha == SHA2
    assert json.loads(latest.path.read_text())["tag"] == "v2"  # type: ignore[union-attr]


def test_github_branch_store_missing_branch_is_no_baseline(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    result = fetch(
        store_for(fake_github), config_name="evalkit", prefer_sha=None, dest_dir=tmp_path
    )
    assert result.status == "missing"
    assert "evalkit-baselines has no latest/evalkit.json" in result.detail


def test_github_branch_store_large_file_read_through_blob_api(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    fake_github.contents_inline_limit = 10  # as GitHub does above 1 MB
    store = store_for(fake_github)
    promote(store, artefact(tmp_path, "big"), config_name="evalkit", sha=SHA1)
    result = fetch(store, config_name="evalkit", prefer_sha=None, dest_dir=tmp_path / "o")
    assert json.loads(result.path.read_text())["tag"] == "big"  # type: ignore[union-attr]
    assert fake_github.api_calls("GET", "/git/blobs/")


def test_github_branch_store_rejects_non_artefact(fake_github: FakeGitHub, tmp_path: Path) -> None:
    fake_github.git.commit_files("evalkit-baselines", {"latest/evalkit.json": b"<html>"})
    with pytest.raises(ArtifactError, match=r"branch evalkit-baselines:latest/evalkit.json"):
        fetch(store_for(fake_github), config_name="evalkit", prefer_sha=None, dest_dir=tmp_path)


def test_github_branch_store_403_on_write_names_the_step(
    fake_github: FakeGitHub, tmp_path: Path
) -> None:
    fake_github.fail("POST", r"/git/blobs$", 403, message="Resource not accessible")
    with pytest.raises(GitHubApiError, match=r"create blob for evalkit.json.*403"):
        promote(store_for(fake_github), artefact(tmp_path, "v1"), config_name="evalkit", sha=SHA1)
