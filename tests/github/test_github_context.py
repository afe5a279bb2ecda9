"""GitHubContext from the runner's environment and the event payload."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from evalkit.errors import ConfigError
from evalkit.github.context import GitHubContext


def pr_event(*, head_repo: dict[str, Any] | None, number: int = 7) -> dict[str, Any]:
    return {
        "number": number,
        "pull_request": {
            "number": number,
            "base": {"sha": "b" * 40, "ref": "main", "repo": {"id": 4242}},
            "head": {"sha": "c" * 40, "ref": "feature", "repo": head_repo},
        },
        "repository": {"id": 4242, "full_name": "octo/widgets", "default_branch": "main"},
    }


def env_for(tmp_path: Path, event_name: str, payload: dict[str, Any]) -> dict[str, str]:
    event = tmp_path / "event.json"
    event.write_text(json.dumps(payload))
    return {
        "GITHUB_REPOSITORY": "octo/widgets",
        "GITHUB_EVENT_NAME": event_name,
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_SHA": "d" * 40,
        "GITHUB_REF": "refs/pull/7/merge",
        "GITHUB_WORKSPACE": str(tmp_path),
    }


def test_github_context_reads_pull_request_payload(tmp_path: Path) -> None:
    same_repo = {"id": 4242, "full_name": "octo/widgets"}
    ctx = GitHubContext.from_env(env_for(tmp_path, "pull_request", pr_event(head_repo=same_repo)))
    assert ctx.pull_request is not None
    assert (ctx.pull_request.number, ctx.pull_request.base_sha) == (7, "b" * 40)
    assert ctx.pull_request.head_sha == "c" * 40
    assert ctx.repository_id == 4242
    assert ctx.default_branch == "main"
    assert ctx.api_url == "https://api.github.com"
    assert not ctx.is_fork_pull_request


def test_github_context_detects_fork_and_deleted_fork(tmp_path: Path) -> None:
    fork = {"id": 9999, "full_name": "mallory/widgets"}
    ctx = GitHubContext.from_env(env_for(tmp_path, "pull_request", pr_event(head_repo=fork)))
    assert ctx.is_fork_pull_request
    gone = GitHubContext.from_env(env_for(tmp_path, "pull_request", pr_event(head_repo=None)))
    assert gone.is_fork_pull_request


def test_github_context_uses_ghes_api_url_and_repository_id_env(tmp_path: Path) -> None:
    env = env_for(tmp_path, "push", {"repository": {"default_branch": "trunk"}})
    env |= {
        "GITHUB_API_URL": "https://ghe.example.com/api/v3/",
        "GITHUB_REPOSITORY_ID": "77",
        "GITHUB_REF": "refs/heads/trunk",
        "GITHUB_EVENT_NAME": "push",
    }
    ctx = GitHubContext.from_env(env)
    assert ctx.api_url == "https://ghe.example.com/api/v3"
    assert ctx.repository_id == 77
    assert ctx.pull_request is None


def test_github_context_reads_workflow_run_payload(tmp_path: Path) -> None:
    payload = {
        "workflow_run": {
            "id": 55,
            "event": "pull_request",
            "head_sha": "e" * 40,
            "head_branch": "main",
            "head_repository": {"full_name": "mallory/widgets"},
            "conclusion": "failure",
        }
    }
    ctx = GitHubContext.from_env(env_for(tmp_path, "workflow_run", payload))
    assert ctx.workflow_run is not None
    assert (ctx.workflow_run.id, ctx.workflow_run.event) == (55, "pull_request")
    assert (ctx.workflow_run.head_sha, ctx.workflow_run.conclusion) == ("e" * 40, "failure")


def test_github_context_outside_actions_names_the_variable() -> None:
    with pytest.raises(ConfigError, match="GITHUB_REPOSITORY"):
        GitHubContext.from_env({})


def test_github_context_missing_event_file_names_the_path(tmp_path: Path) -> None:
    env = {"GITHUB_REPOSITORY": "o/r", "GITHUB_EVENT_PATH": str(tmp_path / "nope.json")}
    with pytest.raises(ConfigError, match=r"nope\.json"):
        GitHubContext.from_env(env)


def test_github_context_broken_event_json_names_the_file(tmp_path: Path) -> None:
    bad = tmp_path / "event.json"
    bad.write_text("{not json")
    env = {"GITHUB_REPOSITORY": "o/r", "GITHUB_EVENT_PATH": str(bad)}
    with pytest.raises(ConfigError, match=r"event\.json.*not readable JSON"):
        GitHubContext.from_env(env)


def test_github_context_pr_event_without_number_is_refused(tmp_path: Path) -> None:
    env = env_for(tmp_path, "pull_request", {"pull_request": {}})
    with pytest.raises(ConfigError, match=r"pull_request\.number"):
        GitHubContext.from_env(env)
