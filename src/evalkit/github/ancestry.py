"""How two commits relate, from GitHub's compare API (``GET /compare/{base}...{head}``).

Promotions and baselines must follow the default branch's history, not the order in
which jobs happen to finish: a re-run of an old commit's promote job finishes last, and
a tag named like the default branch produces a ``push`` run that says ``head_branch:
main``. Both are told apart only by asking how the commits relate. Callers pass commit
shas, never names: in git a tag shadows the branch of the same name, so ``main`` could
mean the tag.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from evalkit.github.client import RetryPolicy, call_github
from evalkit.github.errors import GitHubApiError

if TYPE_CHECKING:
    from github.Repository import Repository

Relation = Literal["ahead", "behind", "identical", "diverged", "unknown"]


@dataclass(frozen=True)
class Ancestry:
    """Where ``head`` stands relative to ``base``.

    ``ahead``: head descends from base; ``behind``: head is an ancestor of base;
    ``unknown``: GitHub could not say (a commit gone, no common history, an API error:
    ``error`` and ``status`` tell which).
    """

    status: Relation
    ahead_by: int | None = None
    behind_by: int | None = None
    error: str = ""
    error_status: int | None = None

    @property
    def contains_head(self) -> bool:
        """Whether ``head`` is in ``base``'s history (reachable from it)."""
        return self.status in ("identical", "behind")


def compare_commits(repo: Repository, base: str, head: str, *, retry: RetryPolicy) -> Ancestry:
    """How commit ``head`` relates to commit ``base``; never raises for a GitHub failure."""
    if base == head:
        return Ancestry("identical", 0, 0)

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
    ahead, behind = data.get("ahead_by"), data.get("behind_by")
    return Ancestry(
        cast(Relation, relation),
        ahead if isinstance(ahead, int) else None,
        behind if isinstance(behind, int) else None,
    )


__all__ = ["Ancestry", "Relation", "compare_commits"]
