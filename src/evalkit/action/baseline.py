"""Which baseline a PR wants, and the reference its drift checks want, from the Action's store."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from evalkit._store.protocol import BaselineFetch, BaselineStore, Preferred
from evalkit.action.session import ActionRun
from evalkit.github.client import call_github
from evalkit.github.errors import GitHubApiError


def _merge_base(run: ActionRun) -> str | None:
    """The first parent of the PR's merge commit: the base commit the candidate was built on."""
    ctx = run.ctx
    if not (ctx.sha and ctx.ref.startswith("refs/pull/") and ctx.ref.endswith("/merge")):
        return None
    try:
        raw: dict[str, Any] = call_github(
            f"read the merge commit {ctx.sha[:12]} of {ctx.ref}",
            lambda: run.repo().get_git_commit(ctx.sha).raw_data,
            retry=run.retry,
        )
    except GitHubApiError as exc:
        run.console.notice(f"{exc}; preferring the event's base.sha")
        return None
    parents = [p.get("sha") for p in raw.get("parents") or [] if isinstance(p, dict)]
    if len(parents) < 2 or not isinstance(parents[0], str):
        return None  # not a merge commit: nothing to learn from it
    return parents[0]


def preferred_commits(run: ActionRun) -> list[Preferred]:
    """Whose baseline a PR wants, best first: the merge base, then the event's base.sha."""
    pr = run.ctx.pull_request
    if pr is None:
        return []
    preferred: list[Preferred] = []
    merge_base = _merge_base(run)
    if merge_base:
        preferred.append(Preferred(merge_base, f"the merge base: first parent of {run.ctx.ref}"))
    if pr.base_sha and pr.base_sha != merge_base:
        lag = f", behind the merge base {merge_base[:12]}" if merge_base else ""
        preferred.append(Preferred(pr.base_sha, f"the event's pull_request.base.sha{lag}"))
    return preferred


def merge_base_relation(baseline: BaselineFetch, preferred: Sequence[Preferred]) -> tuple[str, str]:
    """Is the baseline from the commit the merge ref was built on (true / false / unknown),
    and the store's sentence on the baseline saying so."""
    merge_base = next((p.sha for p in preferred if p.why.startswith("the merge base")), None)
    if merge_base is None or not baseline.found:
        return "unknown", baseline.detail
    said = f"{baseline.detail}; the baseline is from {(baseline.sha or 'an unknown commit')[:12]}"
    if baseline.sha == merge_base:
        return "true", f"{said}, the merge base"
    return "false", (
        f"{said}, NOT the merge base {merge_base[:12]} (none was promoted for it yet), so "
        "base-branch changes since then count as the PR's"
    )


def fetch_for_action(
    store: BaselineStore, checks_path: Path, config_name: str, dest_dir: Path
) -> BaselineFetch | None:
    """The Action's reference fetch: the store's pinned reference, when a check needs it.

    A checks file that does not load is left for the gate to report (None here).
    """
    from evalkit._spec.checks import load_checks_file
    from evalkit._store.protocol import FetchRequest
    from evalkit.errors import CheckError
    from evalkit.gate.reference import wants_reference

    try:
        checks = load_checks_file(checks_path).checks
    except CheckError:
        return None
    if not wants_reference(checks):
        return None
    dest_dir.mkdir(parents=True, exist_ok=True)
    return store.fetch_reference(FetchRequest(config_name, dest_dir))


__all__ = ["fetch_for_action", "merge_base_relation", "preferred_commits"]
