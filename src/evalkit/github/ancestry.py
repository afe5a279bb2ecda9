"""How two commits relate, from GitHub's compare API (``GET /compare/{base}...{head}``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from evalkit.github.client import GitHubApiError, RetryPolicy, call_github

if TYPE_CHECKING:
    from github.Repository import Repository

Relation = Literal["ahead", "behind", "identical", "diverged", "unknown"]


@dataclass(frozen=True)
class Ancestry:
    """Where ``head`` stands relative to ``base``."""

    status: Relation
    behind_by: int | None = None  # how many commits ``head`` is behind ``base``
    error: str = ""
    error_status: int | None = None

    @property
    def contains_head(self) -> bool:
        """Whether ``head`` is in ``base``'s history (reachable from it)."""
        return self.status in ("identical", "behind")


def compare_commits(repo: Repository, base: str, head: str, *, retry: RetryPolicy) -> Ancestry:
    """How commit ``head`` relates to commit ``base``; never raises for a GitHub failure."""
    if base == head:
        return Ancestry("identical", 0)

    def status() -> Any:
        # One commit per page: only the status and counts are read, not the commit list.
        return repo.compare(base, head, comparison_commits_per_page=1).raw_data

    try:
        data = call_github(f"compare {base[:12]}...{head[:12]}", status, retry=retry)
    except GitHubApiError as exc:
        return Ancestry("unknown", error=str(exc), error_status=exc.status)
    relation = str(data.get("status") or "")
    if relation not in ("ahead", "behind", "identical", "diverged"):
        return Ancestry("unknown", error=f"compare answered status {relation!r}")
    behind = data.get("behind_by")
    return Ancestry(cast(Relation, relation), behind if isinstance(behind, int) else None)
