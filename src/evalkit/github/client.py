"""The REST client: a PyGithub ``Github`` built one way, and one bounded retry policy.

PyGithub's own retry is switched off (``retry=None``): its default retries a 5xx up to
ten times with backoff, which turns a GitHub outage into a step that hangs for minutes.
Instead every call goes through :func:`call_github`, which retries 5xx and transport
failures a few times and then raises one readable :class:`GitHubApiError`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from evalkit.github.errors import GitHubApiError, GitHubPermissionError

if TYPE_CHECKING:
    from github import Github

T = TypeVar("T")

GithubFactory = Callable[[str, str], "Github"]
"""(api_url, token) -> a configured ``github.Github``."""

USER_AGENT = "evalkit-action"


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a failing GitHub call is retried (5xx, transport)."""

    attempts: int = 3
    base_delay: float = 1.0  # seconds; doubles per attempt

    def delay(self, attempt: int) -> float:
        return float(self.base_delay * 2.0 ** (attempt - 1))


DEFAULT_RETRY = RetryPolicy()
NO_DELAY = RetryPolicy(attempts=3, base_delay=0.0)


def default_github_factory(api_url: str, token: str, *, write_delay: float = 0.25) -> Github:
    """A lazy PyGithub client for ``api_url`` (github.com or GHES ``https://HOST/api/v3``).

    Lazy: ``get_repo``/``get_issue`` build objects without a request, so a run makes only
    the calls it needs (and needs only the permissions those calls need).
    """
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


def status_of(exc: BaseException) -> int | None:
    """The HTTP status of a PyGithub or evalkit GitHub error, else None."""
    if isinstance(exc, GitHubApiError):
        return exc.status
    from github import GithubException

    if isinstance(exc, GithubException):
        return exc.status
    return None


def _message_of(exc: Any) -> str:
    data = getattr(exc, "data", None)
    if isinstance(data, dict) and isinstance(data.get("message"), str):
        return str(data["message"])
    return str(exc).strip() or type(exc).__name__


def _is_transport_error(exc: BaseException) -> bool:
    import requests

    return isinstance(exc, requests.RequestException)


def call_github(
    what: str,
    fn: Callable[[], T],
    *,
    retry: RetryPolicy = DEFAULT_RETRY,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run one GitHub call, retrying 5xx/transport failures; raise GitHubApiError on failure.

    ``what`` names the call for the message ("list artifacts named 'x'").
    """
    from github import GithubException

    attempt = 0
    while True:
        attempt += 1
        try:
            return fn()
        except GithubException as exc:
            status = exc.status
            retriable = status is not None and status >= 500
            if retriable and attempt < retry.attempts:
                sleep(retry.delay(attempt))
                continue
            message = f"GitHub API: {what} failed with HTTP {status}: {_message_of(exc)}"
            if retriable:
                message += f" (gave up after {attempt} attempts)"
            error_type = GitHubPermissionError if status in (401, 403) else GitHubApiError
            raise error_type(message, status=status) from None
        except Exception as exc:
            if not _is_transport_error(exc):
                raise
            if attempt < retry.attempts:
                sleep(retry.delay(attempt))
                continue
            raise GitHubApiError(
                f"GitHub API: {what} failed: cannot reach GitHub ({type(exc).__name__}) "
                f"after {attempt} attempts",
                status=None,
            ) from None


__all__ = [
    "DEFAULT_RETRY",
    "NO_DELAY",
    "GithubFactory",
    "RetryPolicy",
    "call_github",
    "default_github_factory",
    "status_of",
]
