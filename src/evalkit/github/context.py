"""What GitHub Actions tells a step about the run: environment plus the event payload."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit._util import bounded as _bounded
from evalkit.errors import ConfigError

DEFAULT_API_URL = "https://api.github.com"

PR_EVENTS = frozenset({"pull_request", "pull_request_target"})


@dataclass(frozen=True)
class PullRequestInfo:
    """The slice of a ``pull_request`` payload the gate needs."""

    number: int
    base_sha: str
    head_sha: str
    base_ref: str  # the base branch: its promotions are the PR's baseline (promote_branches)
    head_repo_full_name: str | None  # None when the fork was deleted
    head_repo_id: int | None


@dataclass(frozen=True)
class WorkflowRunInfo:
    """The slice of a ``workflow_run`` payload the fork-comment companion trusts."""

    id: int
    event: str
    head_sha: str
    conclusion: str | None


@dataclass(frozen=True)
class GitHubContext:
    """Everything about the current run that evalkit uses."""

    repository: str  # "owner/name"
    repository_id: int | None
    api_url: str  # https://api.github.com, or https://HOST/api/v3 on GHES
    server_url: str
    event_name: str
    sha: str
    ref: str
    workspace: Path
    default_branch: str | None
    run_id: str | None
    pull_request: PullRequestInfo | None
    workflow_run: WorkflowRunInfo | None

    @property
    def is_fork_pull_request(self) -> bool:
        """True when the PR comes from another repository (its token is read-only).

        A deleted head repository counts as a fork: we cannot show it is not one.
        """
        pr = self.pull_request
        if pr is None:
            return False
        if pr.head_repo_full_name is None:
            return True
        if self.repository_id is not None and pr.head_repo_id is not None:
            return pr.head_repo_id != self.repository_id
        return pr.head_repo_full_name.lower() != self.repository.lower()

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> GitHubContext:
        """Build the context from the runner's variables and ``$GITHUB_EVENT_PATH``."""
        repository = env.get("GITHUB_REPOSITORY", "").strip()
        if "/" not in repository:
            raise ConfigError(
                "GITHUB_REPOSITORY is not set to 'owner/name': evalkit's action mode must run "
                "inside GitHub Actions (for a local run use `evalkit gate`)"
            )
        payload = _load_event(env)
        repo_payload = _as_dict(payload.get("repository"))
        repository_id = int_or_none(env.get("GITHUB_REPOSITORY_ID")) or int_or_none(
            repo_payload.get("id")
        )
        return cls(
            repository=repository,
            repository_id=repository_id,
            api_url=(env.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
            server_url=(env.get("GITHUB_SERVER_URL") or "https://github.com").rstrip("/"),
            event_name=env.get("GITHUB_EVENT_NAME", ""),
            sha=env.get("GITHUB_SHA", ""),
            ref=env.get("GITHUB_REF", ""),
            workspace=Path(env.get("GITHUB_WORKSPACE") or "."),
            default_branch=str_or_none(repo_payload.get("default_branch")),
            run_id=env.get("GITHUB_RUN_ID") or None,
            pull_request=_pull_request(env.get("GITHUB_EVENT_NAME", ""), payload),
            workflow_run=_workflow_run(payload),
        )


def _load_event(env: Mapping[str, str]) -> dict[str, Any]:
    path_text = env.get("GITHUB_EVENT_PATH", "").strip()
    if not path_text:
        return {}
    path = Path(path_text)
    try:
        payload = _bounded.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"GITHUB_EVENT_PATH names {path}, which does not exist") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: the event payload is not readable JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise ConfigError(f"{path}: the event payload is not a JSON object")
    return payload


def _as_dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


def int_or_none(value: object) -> int | None:
    """An id from a payload: an int, or digits (an env variable); anything else is None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value)
    return None


def _pull_request(event_name: str, payload: Mapping[str, Any]) -> PullRequestInfo | None:
    if event_name not in PR_EVENTS:
        return None
    pr = _as_dict(payload.get("pull_request"))
    number = int_or_none(pr.get("number")) or int_or_none(payload.get("number"))
    if number is None:
        raise ConfigError(
            f"the {event_name} event payload has no pull_request.number; "
            "is GITHUB_EVENT_PATH pointing at the right file?"
        )
    base = _as_dict(pr.get("base"))
    head = _as_dict(pr.get("head"))
    head_repo = _as_dict(head.get("repo"))
    return PullRequestInfo(
        number=number,
        base_sha=str(base.get("sha") or ""),
        head_sha=str(head.get("sha") or ""),
        base_ref=str(base.get("ref") or ""),
        head_repo_full_name=str_or_none(head_repo.get("full_name")),
        head_repo_id=int_or_none(head_repo.get("id")),
    )


def _workflow_run(payload: Mapping[str, Any]) -> WorkflowRunInfo | None:
    run = payload.get("workflow_run")
    if not isinstance(run, dict):
        return None
    run_id = int_or_none(run.get("id"))
    head_sha = run.get("head_sha")
    if run_id is None or not isinstance(head_sha, str):
        return None
    return WorkflowRunInfo(
        id=run_id,
        event=str(run.get("event") or ""),
        head_sha=head_sha,
        conclusion=str_or_none(run.get("conclusion")),
    )
