"""Errors of the GitHub layer, hung under the package's exception tree."""

from __future__ import annotations

from evalkit.errors import RuntimeFailure


class GitHubApiError(RuntimeFailure):
    """A GitHub REST call failed after any retries; ``status`` is the HTTP status or None."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class GitHubPermissionError(GitHubApiError):
    """GitHub refused the token (401/403/404 on a resource the token should see)."""


__all__ = ["GitHubApiError", "GitHubPermissionError"]
