"""The artifact baseline store against the fake GitHub: selection, download, extraction."""

from __future__ import annotations

import json
import secrets
import zipfile
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_github import (  # noqa: F401  (the *_fixture names register fixtures)
    FakeGitHub,
    fake_ghes_fixture,
    fake_github_fixture,
    github_factory_for_tests,
    make_zip,
)

from evalkit._store.protocol import FetchRequest, GitHubAccess, Preferred
from evalkit.errors import ArtifactError
from evalkit.github.artifact_candidates import ArtifactInfo, select_candidates
from evalkit.github.artifact_download import download_archive, safe_extract
from evalkit.github.artifacts import ArtifactStore
from evalkit.github.client import NO_DELAY, GitHubApiError, GitHubPermissionError, RetryPolicy

ARTEFACT = json.dumps({"schema_version": 1, "rows": []}).encode()
BASE_SHA = "b" * 40
NOW = datetime(2024, 6, 1, tzinfo=UTC)


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def access_for(
    fake: FakeGitHub, http: httpx.Client | None, retry: RetryPolicy = NO_DELAY
) -> GitHubAccess:
    repo = github_factory_for_tests(fake.api_url, fake.token).get_repo(fake.full_name)
    return GitHubAccess(
        repo=lambda: repo,
        repo_facts=lambda: (4242, "main"),
        token=fake.token,
        retry=retry,
        http=http,
    )


def store_for(fake: FakeGitHub, http: httpx.Client, **kwargs: object) -> ArtifactStore:
    return ArtifactStore(access_for(fake, http), name="evalkit-baseline", **kwargs)  # type: ignore[arg-type]


def fetch(store: ArtifactStore, tmp_path: Path, prefer_sha: str | None = BASE_SHA) -> Any:
    preferred = [Preferred(prefer_sha, "the PR's base commit")] if prefer_sha else []
    return store.fetch(FetchRequest("evalkit", tmp_path / "out", preferred))


def info(**overrides: object) -> ArtifactInfo:
    base: dict[str, object] = {
        "id": 1,
        "name": "evalkit-baseline",
        "expired": False,
        "created_at": NOW,
        "expires_at": None,
        "size_in_bytes": 10,
        "archive_download_url": "u",
        "run_id": 1,
        "run_head_branch": "main",
        "run_head_sha": "a" * 40,
        "run_head_repository_id": 4242,
        "run_repository_id": 4242,
    }
    base.update(overrides)
    return ArtifactInfo(**base)  # type: ignore[arg-type]


def test_github_artifact_selection_prefers_base_sha_then_newest() -> None:
    older_on_base = info(id=1, run_head_sha=BASE_SHA, created_at=datetime(2024, 1, 1, tzinfo=UTC))
    newest = info(id=2, created_at=datetime(2024, 5, 1, tzinfo=UTC))
    middle = info(id=3, created_at=datetime(2024, 3, 1, tzinfo=UTC))
    pick = select_candidates(
        [newest, older_on_base, middle],
        name="evalkit-baseline",
        repository_id=4242,
        default_branch="main",
        prefer=[BASE_SHA],
        now=NOW,
    )
    assert [a.id for a in pick.candidates] == [1, 2, 3]
    no_pref = select_candidates(
        [newest, older_on_base, middle],
        name="evalkit-baseline",
        repository_id=4242,
        default_branch="main",
        prefer=(),
        now=NOW,
    )
    assert [a.id for a in no_pref.candidates] == [2, 3, 1]


def test_github_artifact_selection_rejects_forks_branches_and_expired() -> None:
    fork = info(id=1, run_head_repository_id=9999)
    branch = info(id=2, run_head_branch="feature")
    expired_flag = info(id=3, expired=True)
    expired_date = info(id=4, expires_at=datetime(2024, 5, 31, tzinfo=UTC))
    no_run = info(id=5, run_id=None)
    pick = select_candidates(
        [fork, branch, expired_flag, expired_date, no_run],
        name="evalkit-baseline",
        repository_id=4242,
        default_branch="main",
        prefer=(),
        now=NOW,
    )
    assert pick.candidates == []
    assert sorted(a.id for a in pick.expired) == [3, 4]
    assert pick.ignored["uploaded by a run of another repository (fork)"] == 1
    assert pick.ignored["built from a branch other than main"] == 1
    assert pick.ignored["no workflow run recorded"] == 1


def test_github_artifact_fetch_follows_redirect_without_forwarding_token(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    fake_github.add_artifact(make_zip({"evalkit.json": ARTEFACT}), head_sha=BASE_SHA)
    result = fetch(store_for(fake_github, http), tmp_path)
    assert result.status == "found"
    assert result.path.read_bytes() == ARTEFACT
    assert result.sha == BASE_SHA
    (download,) = fake_github.api_calls("GET", "/zip")
    assert download.headers["Authorization"] == f"Bearer {fake_github.token}"
    (blob,) = fake_github.blob_requests
    assert "Authorization" not in blob.headers
    assert not any(k.lower() == "authorization" for k in blob.headers)
    assert blob.query == {"sig": ["presigned"]}


def test_github_artifact_fetch_ignores_spoofed_fork_artifact(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    genuine = json.dumps({"schema_version": 1, "who": "main"}).encode()
    spoof = json.dumps({"schema_version": 1, "who": "fork"}).encode()
    fake_github.add_artifact(make_zip({"evalkit.json": genuine}), created_at="2024-01-01T00:00:00Z")
    # Newer, on the PR's base sha, on a branch called main — but built by a fork's run.
    fake_github.add_artifact(
        make_zip({"evalkit.json": spoof}),
        head_sha=BASE_SHA,
        head_repository_id=9999,
        created_at="2024-05-01T00:00:00Z",
    )
    result = fetch(store_for(fake_github, http), tmp_path)
    assert result.path.read_bytes() == genuine
    assert len(fake_github.blob_requests) == 1


def test_github_artifact_fetch_requires_push_event(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    fake_github.add_artifact(make_zip({"evalkit.json": ARTEFACT}), event="workflow_dispatch")
    result = fetch(store_for(fake_github, http), tmp_path)
    assert result.status == "missing"
    assert "workflow_dispatch run, not a push" in result.detail
    assert fake_github.blob_requests == []


def test_github_artifact_fetch_paginates_all_pages(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    fake_github.max_per_page = 2
    good = fake_github.add_artifact(make_zip({"evalkit.json": ARTEFACT}), head_sha=BASE_SHA)
    for _ in range(5):  # newer artifacts from PR branches fill the first pages
        fake_github.add_artifact(make_zip({"evalkit.json": b"{}"}), head_branch="feature")
    result = fetch(store_for(fake_github, http), tmp_path)
    assert result.status == "found"
    assert str(good) in result.detail
    pages = [
        r.query.get("page", ["1"])[0]
        for r in fake_github.api_calls("GET", "/artifacts")
        if not r.path.endswith("/zip")
    ]
    assert pages == ["1", "2", "3"]


def test_github_artifact_expired_baseline_reports_expired(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    fake_github.add_artifact(
        make_zip({"evalkit.json": ARTEFACT}), expired=True, expires_at="2024-04-01T00:00:00Z"
    )
    result = fetch(store_for(fake_github, http), tmp_path)
    assert result.status == "expired"
    assert "expired on 2024-04-01" in result.detail
    assert "baseline-store: branch" in result.detail


def test_github_artifact_gone_on_download_falls_back_to_next(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    older = fake_github.add_artifact(
        make_zip({"evalkit.json": ARTEFACT}), created_at="2024-01-01T00:00:00Z"
    )
    fake_github.add_artifact(
        make_zip({"evalkit.json": ARTEFACT}), gone=True, created_at="2024-05-01T00:00:00Z"
    )
    result = fetch(store_for(fake_github, http), tmp_path, prefer_sha=None)
    assert result.status == "found"
    assert f"#{older}" in result.detail


def test_github_artifact_list_403_is_a_permission_error(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    fake_github.fail("GET", r"/actions/artifacts$", 403, message="Resource not accessible")
    with pytest.raises(GitHubPermissionError, match=r"list artifacts.*HTTP 403.*not accessible"):
        fetch(store_for(fake_github, http), tmp_path)


def test_github_artifact_list_5xx_retries_then_gives_up(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    fake_github.fail("GET", r"/actions/artifacts$", 502, times=3)
    with pytest.raises(GitHubApiError, match=r"HTTP 502.*gave up after 3 attempts"):
        fetch(store_for(fake_github, http), tmp_path)
    assert len(fake_github.api_calls("GET", "/actions/artifacts")) == 3


def test_github_artifact_download_5xx_once_then_succeeds(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    fake_github.add_artifact(make_zip({"evalkit.json": ARTEFACT}))
    fake_github.fail("GET", r"/zip$", 503)
    result = fetch(store_for(fake_github, http), tmp_path)
    assert result.status == "found"
    assert len(fake_github.api_calls("GET", "/zip")) == 2


def test_github_artifact_works_against_ghes_prefix(
    fake_ghes: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    fake_ghes.add_artifact(make_zip({"evalkit.json": ARTEFACT}))
    assert fake_ghes.api_url.endswith("/api/v3")
    result = fetch(store_for(fake_ghes, http), tmp_path)
    assert result.status == "found"
    assert all(r.path.startswith("/api/v3/") for r in fake_ghes.requests)


def test_github_artifact_not_an_artefact_names_the_artifact(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    art = fake_github.add_artifact(make_zip({"evalkit.json": b'{"hello": 1}'}))
    with pytest.raises(ArtifactError, match=rf"artifact 'evalkit-baseline' #{art}.*schema_version"):
        fetch(store_for(fake_github, http), tmp_path)


def test_github_artifact_size_cap_refuses_big_archive(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    noise = secrets.token_hex(5000).encode()  # does not compress below the cap
    fake_github.add_artifact(make_zip({"evalkit.json": noise}))
    with pytest.raises(ArtifactError, match=r"#\d+: \d+ bytes, more than the 1000 cap"):
        fetch(store_for(fake_github, http, max_bytes=1000), tmp_path)


def test_github_download_caps_stream_even_when_size_is_understated(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    art = fake_github.add_artifact(make_zip({"evalkit.json": secrets.token_hex(5000).encode()}))
    url = fake_github.repo_url(f"/actions/artifacts/{art}/zip")
    with pytest.raises(ArtifactError, match="larger than the 500-byte cap|more than the 500"):
        download_archive(
            http, url, fake_github.token, tmp_path / "a.zip", max_bytes=500, retry=NO_DELAY
        )


# -- safe extraction (pure, local files) ----------------------------------------------------


def write_zip(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "a.zip"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("member", "reason"),
    [
        ("../evil.json", "climbs out"),
        ("/etc/evil.json", "absolute"),
        ("a/../../evil.json", "climbs out"),
        ("C:\\evil.json", "Windows-style"),
    ],
)
def test_github_safe_extract_refuses_path_traversal(
    tmp_path: Path, member: str, reason: str
) -> None:
    archive = write_zip(tmp_path, make_zip({member: b"{}"}))
    with pytest.raises(ArtifactError, match=reason):
        safe_extract(archive, tmp_path / "out")
    assert not (tmp_path / "evil.json").exists()
    assert not (tmp_path / "out").exists()  # nothing written before the check


def test_github_safe_extract_refuses_symlinks(tmp_path: Path) -> None:
    archive = write_zip(
        tmp_path, make_zip({"ok.json": b"{}"}, symlinks={"evalkit.json": "/etc/passwd"})
    )
    with pytest.raises(ArtifactError, match="'evalkit.json' is a symbolic link"):
        safe_extract(archive, tmp_path / "out")


def test_github_safe_extract_caps_uncompressed_size(tmp_path: Path) -> None:
    archive = write_zip(tmp_path, make_zip({"bomb.json": b"0" * 100_000}))
    with pytest.raises(ArtifactError, match="more than 1000 bytes"):
        safe_extract(archive, tmp_path / "out", max_total_bytes=1000)


def test_github_safe_extract_counts_bytes_not_headers(tmp_path: Path) -> None:
    """A zip whose header understates a member's size is still stopped by the byte count."""
    archive = write_zip(tmp_path, make_zip({"bomb.json": b"0" * 100_000}))
    with zipfile.ZipFile(archive) as zf:
        info_ = zf.infolist()[0]
    raw = bytearray(archive.read_bytes())
    # Patch the central-directory uncompressed size (offset 24 of the entry) to 10.
    cd = raw.rfind(b"PK\x01\x02")
    raw[cd + 24 : cd + 28] = (10).to_bytes(4, "little")
    archive.write_bytes(bytes(raw))
    assert info_.file_size == 100_000
    with pytest.raises(ArtifactError, match="bomb.json"):
        safe_extract(archive, tmp_path / "out", max_total_bytes=1000)


def test_github_safe_extract_rejects_non_zip(tmp_path: Path) -> None:
    archive = write_zip(tmp_path, b"not a zip")
    with pytest.raises(ArtifactError, match="not a zip archive"):
        safe_extract(archive, tmp_path / "out", origin="artifact 'x' #3")


@pytest.mark.parametrize(
    ("promote_branches", "where"),
    [
        ((), "push runs on the default branch"),
        (("release/*",), "push runs on the default branch and release/*"),
        (("release/*", "stable"), "push runs on the default branch and release/* and stable"),
    ],
)
def test_the_store_says_every_branch_it_takes_baselines_from(
    promote_branches: tuple[str, ...], where: str
) -> None:
    store = ArtifactStore(None, name="evalkit-baseline", promote_branches=promote_branches)
    assert store.describe() == f"artifact 'evalkit-baseline' of {where}"
