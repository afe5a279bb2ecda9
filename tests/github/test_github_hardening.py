"""The GitHub client under rate limits, and the artifact download against hostile answers.

Rate limits are waits, bounded; downloads refuse plain-http and foreign redirects, ask
again once for an expired signed URL, and never inflate a gzip bomb.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from fake_github import (  # noqa: F401  (the *_fixture names register fixtures)
    FakeGitHub,
    fake_github_fixture,
    github_factory_for_tests,
    make_zip,
)

from evalkit._store.protocol import FetchRequest, GitHubAccess, check_artefact_bytes
from evalkit._util.bounded import gunzip_bounded
from evalkit._util.limits import MAX_ARTEFACT_BYTES
from evalkit.errors import ArtifactError
from evalkit.github.artifact_download import download_archive, redirect_problem
from evalkit.github.artifacts import ArtifactStore
from evalkit.github.client import (
    GitHubApiError,
    GitHubPermissionError,
    RetryPolicy,
    call_github,
    rate_limit_delay,
)

ARTEFACT = json.dumps({"schema_version": 1, "rows": []}).encode()
NOW = 1_700_000_000.0


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=10) as client:
        yield client


def recording_retry(max_wait: float = 120.0) -> tuple[RetryPolicy, list[float]]:
    slept: list[float] = []
    policy = RetryPolicy(
        attempts=3, base_delay=0.0, max_rate_wait=max_wait, sleep=slept.append, clock=lambda: NOW
    )
    return policy, slept


def list_artifacts(fake: FakeGitHub, retry: RetryPolicy) -> object:
    repo = github_factory_for_tests(fake.api_url, fake.token).get_repo(fake.full_name)
    return call_github(
        "list artifacts", lambda: list(repo.get_artifacts(name="evalkit-baseline")), retry=retry
    )


# -- rate limits ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("status", "headers", "message", "want"),
    [
        (429, {"Retry-After": "7"}, "", 7.0),
        (403, {"retry-after": "3"}, "You have exceeded a secondary rate limit", 3.0),
        (403, {}, "You have exceeded a secondary rate limit", 60.0),
        (403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 30)}, "", 31.0),
        (429, {}, "", 60.0),
        (403, {}, "Resource not accessible by integration", None),  # a real permission error
        (404, {"Retry-After": "5"}, "", None),
        (500, {}, "rate limit", None),
    ],
)
def test_github_rate_limit_delay_reads_github_headers(
    status: int, headers: dict[str, str], message: str, want: float | None
) -> None:
    assert rate_limit_delay(status, headers, message, NOW) == want


def test_github_secondary_rate_limit_403_is_waited_out_not_a_permission_error(
    fake_github: FakeGitHub,
) -> None:
    fake_github.fail(
        "GET",
        r"/actions/artifacts$",
        403,
        times=2,
        message="You have exceeded a secondary rate limit",
        headers={"Retry-After": "4"},
    )
    retry, slept = recording_retry()
    assert list_artifacts(fake_github, retry) == []
    assert slept == [4.0, 4.0]
    assert len(fake_github.api_calls("GET", "/actions/artifacts")) == 3


def test_github_429_is_retried_after_ratelimit_reset(fake_github: FakeGitHub) -> None:
    reset = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(NOW) + 9)}
    fake_github.fail("GET", r"/actions/artifacts$", 429, headers=reset)
    retry, slept = recording_retry()
    assert list_artifacts(fake_github, retry) == []
    assert slept == [10.0]


def test_github_rate_limit_wait_is_bounded(fake_github: FakeGitHub) -> None:
    fake_github.fail("GET", r"/actions/artifacts$", 429, times=10, headers={"Retry-After": "50"})
    retry, slept = recording_retry(max_wait=120.0)
    with pytest.raises(GitHubApiError, match=r"rate limited.*wait 50 s.*120 s") as caught:
        list_artifacts(fake_github, retry)
    assert not isinstance(caught.value, GitHubPermissionError)
    assert slept == [50.0, 50.0]  # a third wait would pass the budget


def test_github_plain_403_is_still_a_permission_error(fake_github: FakeGitHub) -> None:
    fake_github.fail("GET", r"/actions/artifacts$", 403, message="Resource not accessible")
    retry, slept = recording_retry()
    with pytest.raises(GitHubPermissionError):
        list_artifacts(fake_github, retry)
    assert slept == []


def test_github_download_rate_limit_on_the_api_hop_is_waited_out(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    art = fake_github.add_artifact(make_zip({"evalkit.json": ARTEFACT}))
    fake_github.fail("GET", r"/zip$", 429, headers={"Retry-After": "2"})
    retry, slept = recording_retry()
    url = fake_github.repo_url(f"/actions/artifacts/{art}/zip")
    download_archive(http, url, fake_github.token, tmp_path / "a.zip", retry=retry)
    assert slept == [2.0]
    assert (tmp_path / "a.zip").read_bytes() == fake_github.archives[art]


# -- redirects --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("api", "target", "problem"),
    [
        ("https://api.github.com", "https://productionresultssa1.blob.core.windows.net/x", None),
        ("https://api.github.com", "https://pipelines.actions.githubusercontent.com/x", None),
        ("https://api.github.com", "http://productionresultssa1.blob.core.windows.net/x", "http"),
        ("https://api.github.com", "https://evil.example/x", "unexpected host"),
        ("https://api.github.com", "https://blob.core.windows.net.evil.example/x", "unexpected"),
        ("https://ghes.corp/api/v3", "https://minio.corp/bucket/x", None),  # admin's storage
        ("https://ghes.corp/api/v3", "http://minio.corp/bucket/x", "http"),
        ("http://127.0.0.1:8080", "http://127.0.0.2:9090/blob/1", None),  # a plain-http API
        ("https://api.github.com", "ftp://x/y", "non-HTTP"),
    ],
)
def test_github_download_redirect_policy(api: str, target: str, problem: str | None) -> None:
    found = redirect_problem(api, target)
    if problem is None:
        assert found is None
    else:
        assert found is not None
        assert problem in found


def test_github_download_refuses_an_https_to_http_downgrade(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    art = fake_github.add_artifact(make_zip({"evalkit.json": ARTEFACT}))
    url = fake_github.repo_url(f"/actions/artifacts/{art}/zip")
    # As if the API were https: the fake's http blob host is then a downgrade.
    with pytest.raises(GitHubApiError, match="plain http"):
        download_archive(
            http, url, fake_github.token, tmp_path / "a.zip", api_url="https://api.github.com"
        )
    assert fake_github.blob_requests == []


def test_github_download_reasks_once_for_an_expired_signed_url(
    fake_github: FakeGitHub, http: httpx.Client, tmp_path: Path
) -> None:
    art = fake_github.add_artifact(make_zip({"evalkit.json": ARTEFACT}))
    url = fake_github.repo_url(f"/actions/artifacts/{art}/zip")
    fake_github.expired_blob_answers = 1
    retry, _ = recording_retry()
    download_archive(http, url, fake_github.token, tmp_path / "a.zip", retry=retry)
    assert len(fake_github.api_calls("GET", "/zip")) == 2  # a fresh 302, a fresh signature
    assert [r.status for r in fake_github.blob_requests] == [403, 200]
    fake_github.expired_blob_answers = 2
    with pytest.raises(GitHubApiError, match="refused the signed URL"):
        download_archive(http, url, fake_github.token, tmp_path / "b.zip", retry=retry)


# -- gzip bombs -------------------------------------------------------------------------------


def test_github_gzip_is_bounded_before_it_is_inflated() -> None:
    bomb = gzip.compress(b"0" * (5 * 1024 * 1024))
    with pytest.raises(ArtifactError, match="decompresses to more than 1000 bytes"):
        gunzip_bounded(bomb, "bomb.json.gz", limit=1000)
    assert gunzip_bounded(gzip.compress(ARTEFACT), "ok") == ARTEFACT
    with pytest.raises(ArtifactError, match="truncated"):
        gunzip_bounded(gzip.compress(ARTEFACT)[:-12], "cut")
    check_artefact_bytes(gzip.compress(ARTEFACT), "ok.json.gz")
    assert MAX_ARTEFACT_BYTES > 1000


def test_github_artifact_store_offline_names_store_and_artifact(tmp_path: Path) -> None:
    result = ArtifactStore(None, name="nightly").fetch(FetchRequest("search", tmp_path))
    assert result.status == "missing"
    assert "baseline.store is artifact" in result.detail
    assert "'nightly'" in result.detail


def test_github_access_is_what_the_stores_need(fake_github: FakeGitHub, tmp_path: Path) -> None:
    repo = github_factory_for_tests(fake_github.api_url, fake_github.token).get_repo(
        fake_github.full_name
    )
    retry, _ = recording_retry()
    access = GitHubAccess(
        repo=lambda: repo, repo_facts=lambda: (fake_github.repo_id, "main"), token="t", retry=retry
    )
    missing = ArtifactStore(access, name="evalkit-baseline").fetch(FetchRequest("x", tmp_path))
    assert missing.status == "missing"
    assert "store artifact: no artifact 'evalkit-baseline'" in missing.detail


def test_github_client_an_unreachable_api_is_retried_then_one_line() -> None:
    import socket

    from evalkit.github.client import default_github_factory

    with socket.socket() as sock:  # a loopback port nothing listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    github = default_github_factory(f"http://127.0.0.1:{port}", "t")
    waits: list[float] = []
    retry = RetryPolicy(attempts=3, base_delay=0.5, sleep=waits.append)
    with pytest.raises(GitHubApiError, match=r"cannot reach GitHub \(ConnectionError\) after 3"):
        call_github("get repository o/r", lambda: github.get_repo("o/r").raw_data, retry=retry)
    assert waits == [0.5, 1.0]  # the transport failures were retried, with backoff
    with pytest.raises(ValueError, match="not ours"):  # anything else is not retried
        call_github("x", lambda: (_ for _ in ()).throw(ValueError("not ours")), retry=retry)
    assert waits == [0.5, 1.0]
