"""The REST client: a PyGithub ``Github`` built one way, and one bounded retry policy."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from evalkit._util.retry_after import WaitBudget, retry_after_seconds
from evalkit.errors import RuntimeFailure

if TYPE_CHECKING:
    from github import Github

T = TypeVar("T")

GithubFactory = Callable[[str, str], "Github"]
"""(api_url, token) -> a configured ``github.Github``."""

USER_AGENT = "evalkit-action"


class GitHubApiError(RuntimeFailure):
    """A GitHub REST call failed after any retries; ``status`` is the HTTP status or None."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class GitHubPermissionError(GitHubApiError):
    """GitHub refused the token (401/403/404 on a resource the token should see)."""


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a failing GitHub call is retried."""

    attempts: int = 3
    base_delay: float = 1.0  # seconds; doubles per attempt
    max_rate_wait: float = 120.0
    sleep: Callable[[float], None] = field(default=time.sleep, compare=False, repr=False)
    clock: Callable[[], float] = field(default=time.time, compare=False, repr=False)

    def delay(self, attempt: int) -> float:
        return float(self.base_delay * 2.0 ** (attempt - 1))

    def rate_limit_budget(self) -> WaitBudget:
        """The rate-limit waits of one call: bounded in total seconds and in count."""
        return WaitBudget(
            self.max_rate_wait,
            sleep=self.sleep,
            max_waits=MAX_RATE_LIMIT_RETRIES,
            who="GitHub API",
        )


# GitHub's advice for a secondary rate limit without Retry-After: wait at least a minute.
SECONDARY_LIMIT_WAIT = 60.0
MAX_RATE_LIMIT_RETRIES = 5


def rate_limit_delay(
    status: int | None, headers: Mapping[str, str] | None, message: str, now: float
) -> float | None:
    """Seconds GitHub asks us to wait when this response is a rate limit, else None."""
    if status not in (403, 429):
        return None
    lower = {str(k).lower(): str(v) for k, v in (headers or {}).items()}
    if "retry-after" in lower:
        asked = retry_after_seconds(lower, now=lambda: now)
        return SECONDARY_LIMIT_WAIT if asked is None else asked
    if lower.get("x-ratelimit-remaining", "").strip() == "0":
        try:
            return max(0.0, float(lower.get("x-ratelimit-reset", "")) - now) + 1.0
        except ValueError:
            return SECONDARY_LIMIT_WAIT
    if status == 429 or "rate limit" in message.lower():
        return SECONDARY_LIMIT_WAIT
    return None


def rate_limit_refusal(what: str, delay: float, budget: WaitBudget) -> str:
    """Why a GitHub call that is rate limited was not waited out any longer."""
    return (
        f"GitHub API: {what} is rate limited; GitHub asks to wait {delay:.0f} s more, "
        f"beyond the {budget.total_s:.0f} s evalkit waits per call (waited "
        f"{budget.spent_s:.0f} s); re-run the job later or lower the job's API use"
    )


DEFAULT_RETRY = RetryPolicy()
NO_DELAY = RetryPolicy(attempts=3, base_delay=0.0, sleep=lambda _seconds: None)


def default_github_factory(api_url: str, token: str, *, write_delay: float = 0.25) -> Github:
    """A lazy PyGithub client for ``api_url`` (github.com or GHES ``https://HOST/api/v3``)."""
    from github import Auth, Github

    return Github(
        base_url=api_url,
        auth=Auth.Token(token) if token else None,
        user_agent=USER_AGENT,
        timeout=30,
        retry=None,
        seconds_between_requests=0,
        # GitHub asks integrators to pace mutating calls; we make a handful per run.
        seconds_between_writes=write_delay,
        per_page=100,
        lazy=True,
    )


def _message_of(exc: Any) -> str:
    data = getattr(exc, "data", None)
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return str(data["message"])
    return str(exc).strip() or type(exc).__name__


def call_github(
    what: str,
    fn: Callable[[], T],
    *,
    retry: RetryPolicy = DEFAULT_RETRY,
) -> T:
    """Run one GitHub call, retrying 5xx/transport failures and waiting out rate limits."""
    import requests

    from github import GithubException

    attempt = 0
    budget = retry.rate_limit_budget()
    sleep = retry.sleep
    while True:
        attempt += 1
        try:
            return fn()
        except GithubException as exc:
            status = exc.status
            delay = rate_limit_delay(status, exc.headers, _message_of(exc), retry.clock())
            if delay is not None:
                if budget.wait(delay):
                    attempt -= 1  # a rate-limit wait is not a failed attempt
                    continue
                refusal = rate_limit_refusal(what, delay, budget)
                raise GitHubApiError(refusal, status=status) from None
            retriable = status is not None and status >= 500
            if retriable and attempt < retry.attempts:
                sleep(retry.delay(attempt))
                continue
            message = f"GitHub API: {what} failed with HTTP {status}: {_message_of(exc)}"
            if retriable:
                message += f" (gave up after {attempt} attempts)"
            error_type = GitHubPermissionError if status in (401, 403) else GitHubApiError
            raise error_type(message, status=status) from None
        except requests.RequestException as exc:
            if attempt < retry.attempts:
                sleep(retry.delay(attempt))
                continue
            raise GitHubApiError(
                f"GitHub API: {what} failed: cannot reach GitHub ({type(exc).__name__}) "
                f"after {attempt} attempts",
                status=None,
            ) from None
