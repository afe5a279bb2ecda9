"""Which Actions artifacts may be a baseline: listed, selected and accepted.

The security-relevant part: a fork can upload an artifact of the same name, so only
this repository's push runs of the wanted branch count (docs/design/code-notes.md).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Generator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from evalkit._store.history import parse_time
from evalkit._store.protocol import GitHubAccess
from evalkit.github.ancestry import Ancestry, compare_commits
from evalkit.github.client import GitHubApiError, call_github
from evalkit.github.context import int_or_none, str_or_none

# How many candidate runs we are willing to look up to find a push run.
MAX_RUN_LOOKUPS = 20
# How many accepted uploads past the preferred commits are ordered by ancestry.
NEAREST_WINDOW = 5


@dataclass(frozen=True)
class ArtifactInfo:
    """One entry of ``GET /repos/{owner}/{repo}/actions/artifacts``."""

    id: int
    name: str
    expired: bool
    created_at: datetime | None
    expires_at: datetime | None
    size_in_bytes: int
    archive_download_url: str
    run_id: int | None
    run_head_branch: str | None
    run_head_sha: str | None
    run_head_repository_id: int | None
    run_repository_id: int | None

    @classmethod
    def from_api(cls, data: Mapping[str, Any]) -> ArtifactInfo:
        run = data.get("workflow_run") or {}
        return cls(
            id=int(data["id"]),
            name=str(data["name"]),
            expired=bool(data.get("expired")),
            created_at=parse_time(data.get("created_at")),
            expires_at=parse_time(data.get("expires_at")),
            size_in_bytes=int(data.get("size_in_bytes") or 0),
            archive_download_url=str(data["archive_download_url"]),
            run_id=int_or_none(run.get("id")),
            run_head_branch=str_or_none(run.get("head_branch")),
            run_head_sha=str_or_none(run.get("head_sha")),
            run_head_repository_id=int_or_none(run.get("head_repository_id")),
            run_repository_id=int_or_none(run.get("repository_id")),
        )

    def is_expired(self, now: datetime) -> bool:
        return self.expired or (self.expires_at is not None and self.expires_at <= now)


@dataclass
class Selection:
    """The artifacts worth trying, best first, and why the others were passed over."""

    candidates: list[ArtifactInfo] = field(default_factory=list)
    expired: list[ArtifactInfo] = field(default_factory=list)
    ignored: Counter[str] = field(default_factory=Counter)

    def expired_on(self, unknown: str = "an unknown date") -> str:
        """The day the newest expired artifact expired."""
        expires = self.expired[0].expires_at
        return expires.date().isoformat() if expires else unknown


def select_candidates(
    artifacts: Sequence[ArtifactInfo],
    *,
    name: str,
    repository_id: int,
    default_branch: str,
    prefer: Sequence[str] = (),
    now: datetime,
) -> Selection:
    """Filter to ``default_branch`` (the branch whose baselines are wanted) of this
    repository; order: preferred commits, then newest.

    The ``push`` event is checked later (it needs one request per run).
    """
    selection = Selection()
    for artifact in artifacts:
        if artifact.name != name:
            selection.ignored["another name"] += 1
        elif artifact.run_id is None:
            selection.ignored["no workflow run recorded"] += 1
        elif artifact.run_head_repository_id != repository_id or (
            artifact.run_repository_id is not None and artifact.run_repository_id != repository_id
        ):
            selection.ignored["uploaded by a run of another repository (fork)"] += 1
        elif artifact.run_head_branch != default_branch:
            selection.ignored[f"built from a branch other than {default_branch}"] += 1
        elif artifact.is_expired(now):
            selection.expired.append(artifact)
        else:
            selection.candidates.append(artifact)

    def newest_first(a: ArtifactInfo) -> tuple[float, int]:
        created = a.created_at.timestamp() if a.created_at else 0.0
        return (-created, -a.id)

    selection.candidates.sort(key=newest_first)
    rank = {sha: i for i, sha in reversed(list(enumerate(prefer)))}
    # Stable sort: artifacts of the first preferred commit, then the next, then the rest,
    # each group still newest first.
    selection.candidates.sort(key=lambda a: rank.get(a.run_head_sha or "", len(rank)))
    selection.expired.sort(key=newest_first)
    return selection


class ArtifactFinder:
    """Lists a repository's artifacts and says which were made by one promoting branch."""

    def __init__(self, access: GitHubAccess, now: Callable[[], datetime]) -> None:
        self._access = access
        self._now = now
        # The branch the current listing is of (the default one, or a PR's base branch).
        self._branch: str | None = None
        # That branch's head, read once per listing and after it (so every listed
        # upload's commit was pushed before it), and each commit's place behind it.
        self._branch_head: str | None = None
        self._ancestry: dict[str, Ancestry] = {}

    def list_artifacts(self, name: str) -> list[ArtifactInfo]:
        """Every artifact named ``name``, across all pages."""
        repo = self._access.repo()
        return call_github(
            f"list artifacts named {name!r}",
            lambda: [ArtifactInfo.from_api(a.raw_data) for a in repo.get_artifacts(name=name)],
            retry=self._access.retry,
        )

    def run_event(self, run_id: int) -> str:
        repo = self._access.repo()
        data = call_github(
            f"get workflow run {run_id}",
            lambda: repo.get_workflow_run(run_id).raw_data,
            retry=self._access.retry,
        )
        return str(data.get("event") or "")

    def select(
        self, name: str, prefer: Sequence[str], branch: str | None = None
    ) -> tuple[Selection, str]:
        """The candidates named ``name`` built on ``branch`` (default: the default branch),
        the preferred commits' first, and that branch's name."""
        repository_id, default_branch = self._access.repo_facts()
        self._branch = branch or default_branch
        self._branch_head, self._ancestry = None, {}  # read anew after this listing
        selection = select_candidates(
            self.list_artifacts(name),
            name=name,
            repository_id=repository_id,
            default_branch=self._branch,
            prefer=prefer,
            now=self._now(),
        )
        return selection, self._branch

    def accepted(
        self, selection: Selection, events: Sequence[str], max_lookups: int
    ) -> Generator[ArtifactInfo]:
        """The candidates, in order, made by an ``events`` run of a commit of the branch."""
        ignored = selection.ignored
        for lookups, artifact in enumerate(selection.candidates):
            if lookups >= max_lookups:
                ignored["not examined (too many candidates)"] += 1
                continue
            assert artifact.run_id is not None  # select_candidates guarantees it
            event = self.run_event(artifact.run_id)
            if event not in events:
                ignored[f"made by a {event or 'unknown'} run, not a {' or '.join(events)}"] += 1
                continue
            if not self.on_branch(artifact.run_head_sha).contains_head:
                # head_branch is only a name: a tag called like the branch makes a push
                # run with the same head_branch, from a commit never merged there.
                ignored[
                    f"built from a commit not on {self.branch_words()} (a tag of its name?)"
                ] += 1
                continue
            yield artifact

    def made_by(
        self,
        selection: Selection,
        events: Sequence[str],
        max_lookups: int,
        prefer: Collection[str] = (),
    ) -> Generator[ArtifactInfo]:
        """The accepted candidates: the preferred commits' first, then nearest the head.

        After the preferred commits, the newest upload is not necessarily the newest
        baseline: a re-run of an old commit's promote job uploads last. So among the next
        ``NEAREST_WINDOW`` accepted ones, the commit fewest commits behind the branch's
        head goes first (a descendant is always fewer behind than its ancestor).
        """
        accepted = self.accepted(selection, events, max_lookups)
        window: list[ArtifactInfo] = []
        for artifact in accepted:
            if artifact.run_head_sha in prefer:
                yield artifact  # select_candidates put every preferred one first
                continue
            window.append(artifact)
            if len(window) >= NEAREST_WINDOW:
                break
        window.sort(key=self.behind_by)  # stable: the newest upload first among equals
        yield from window
        yield from accepted

    def in_branch_order(self, selection: Selection, max_lookups: int) -> list[ArtifactInfo]:
        """The accepted promotions oldest first along the branch, one per commit.

        A commit uploaded twice (a re-run of its promote job) counts once, its newest upload.
        """
        newest: dict[str | None, ArtifactInfo] = {}
        for artifact in self.accepted(selection, ("push",), max_lookups):
            if artifact.run_head_sha in newest:
                selection.ignored["an older upload of a commit listed once"] += 1
                continue
            newest[artifact.run_head_sha] = artifact
        return sorted(
            newest.values(),
            key=lambda a: (-self.behind_by(a), a.created_at or datetime.min.replace(tzinfo=UTC)),
        )

    def behind_by(self, artifact: ArtifactInfo) -> int:
        return self.on_branch(artifact.run_head_sha).behind_by or 0

    def branch_words(self) -> str:
        """``the default branch``, or ``the branch release/1.x`` (a PR's base branch)."""
        default_branch = self._access.repo_facts()[1]
        if self._branch in (None, default_branch):
            return "the default branch"
        return f"the branch {self._branch}"

    def on_branch(self, sha: str | None) -> Ancestry:
        """How commit ``sha`` relates to the listed branch's head (cached per commit).

        Commits gone from GitHub or from another history count as not on the branch; any
        other failure is GitHub's (exit 3), never read as "no baseline".
        """
        if not sha:
            return Ancestry("unknown", error="the run recorded no commit")
        if sha not in self._ancestry:
            repo = self._access.repo()
            if self._branch_head is None:
                branch = self._branch or self._access.repo_facts()[1]
                self._branch_head = call_github(
                    f"read the head of {branch}",
                    lambda: str(repo.get_git_ref(f"heads/{branch}").object.sha),
                    retry=self._access.retry,
                )
            head = self._branch_head
            ancestry = compare_commits(repo, head, sha, retry=self._access.retry)
            if ancestry.status == "unknown" and ancestry.error_status not in (404, 422):
                raise GitHubApiError(
                    f"{ancestry.error} (needed to tell whether {sha[:12]} is on "
                    f"{self.branch_words()}; the token needs 'contents: read')",
                    status=ancestry.error_status,
                )
            self._ancestry[sha] = ancestry
        return self._ancestry[sha]
