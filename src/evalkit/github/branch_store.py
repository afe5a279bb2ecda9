"""The branch baseline store: artefacts committed to a dedicated branch, which never expire."""

from __future__ import annotations

import base64
import functools
import subprocess
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from evalkit._spec.config import DEFAULT_BASELINE_BRANCH
from evalkit._store.history import (
    History,
    HistoryEntry,
    PinRecord,
    PromotionRecord,
    artefact_facts,
    index_dumps,
    index_loads,
    make_entry,
    no_reference,
    promotion_stem,
    pruned,
    reference_found,
    select_pinned,
    with_promotion,
)
from evalkit._store.protocol import (
    BaselineFetch,
    FetchRequest,
    GitHubAccess,
    HistoryRequest,
    PinRequest,
    PinResult,
    PromoteRequest,
    PromoteResult,
    StoreSettings,
    artefact_file_names,
    check_artefact_bytes,
)
from evalkit._util.atomic import write_bytes_atomic
from evalkit.errors import ArtifactError, ConfigError
from evalkit.github.ancestry import Ancestry, compare_commits
from evalkit.github.client import DEFAULT_RETRY, GitHubApiError, call_github

if TYPE_CHECKING:
    from github.Repository import Repository

# A function of the parent commit (None: the branch does not exist yet) giving the files
# one commit writes: the history index must be extended from the commit it replaces.
TreeBuilder = Callable[[str | None], list[Any]]

RACE_ATTEMPTS = 5


def _file(path: str, **blob: Any) -> Any:
    """A file of a commit's tree: ``sha=`` of a blob (None: deleted) or its ``content=``."""
    from github import InputGitTreeElement

    return InputGitTreeElement(path, "100644", "blob", **blob)


class LocalBranch:
    """The store branch as the local clone has it (``origin/<branch>``, else ``<branch>``)."""

    def __init__(self, root: Path, branch: str) -> None:
        self.root = root
        self.branch = branch

    def _git(self, *args: str) -> bytes | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=self.root, capture_output=True, timeout=30, check=False
            )
        except (OSError, subprocess.SubprocessError):
            return None  # no git here: as if the branch were not fetched
        return done.stdout if done.returncode == 0 else None

    @functools.cached_property
    def rev(self) -> str | None:
        """The ref read from, or None when the clone has no copy of the branch."""
        for ref in (f"refs/remotes/origin/{self.branch}", f"refs/heads/{self.branch}"):
            if self._git("rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"):
                return ref.removeprefix("refs/remotes/").removeprefix("refs/heads/")
        return None

    def read(self, path: str) -> bytes | None:
        rev = self.rev
        return self._git("cat-file", "blob", f"{rev}:{path}") if rev else None


class BranchStore:
    """Read and write baselines on a dedicated branch of the repository."""

    kind: ClassVar[str] = "branch"

    def __init__(
        self,
        access: GitHubAccess | None,
        *,
        branch: str = DEFAULT_BASELINE_BRANCH,
        race_attempts: int = RACE_ATTEMPTS,
        sleep: Callable[[float], None] | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
        git_root: Path | None = None,
        keep: int | None = None,
    ) -> None:
        self._access = access
        self._keep = keep  # baseline.keep_promotions: older promotions leave the branch
        # Without GitHub (the CLI), history and the reference are read from a fetched copy
        # of the store branch in the local clone, when there is one.
        self._local = LocalBranch(git_root, branch) if access is None and git_root else None
        self.branch = branch
        self._retry = access.retry if access else DEFAULT_RETRY
        self._race_attempts = race_attempts
        self._sleep = sleep or self._retry.sleep
        self._now = now
        self._ancestry: dict[str, Ancestry] = {}  # latest's commit -> how ours relates to it

    @classmethod
    def open(cls, settings: StoreSettings, access: GitHubAccess | None) -> BranchStore:
        return cls(
            access,
            branch=settings.baseline.branch,
            git_root=settings.root,
            keep=settings.baseline.keep_promotions,
        )

    @property
    def _repo(self) -> Repository:
        assert self._access is not None
        return self._access.repo()

    def describe(self) -> str:
        return f"branch {self.branch}"

    # -- reading -------------------------------------------------------------------

    def _read(self, path: str, ref: str | None = None) -> bytes | None:
        """The file's bytes on the store branch (or at commit ``ref``), None if absent."""
        if self._access is None:
            return self._local.read(path) if self._local else None
        at = ref or self.branch
        try:
            content: Any = call_github(
                f"read {path} on branch {self.branch}",
                lambda: self._repo.get_contents(path, ref=at),
                retry=self._retry,
            )
        except GitHubApiError as exc:
            if exc.status == 404:
                return None
            raise
        if isinstance(content, list):
            return None  # a directory where a file should be
        raw = content.raw_data
        if raw.get("encoding") == "base64" and raw.get("content"):
            return base64.b64decode(str(raw["content"]))
        # Files over 1 MB come back without content; the blob endpoint serves up to 100 MB.
        blob_sha = str(raw["sha"])
        blob: Any = call_github(
            f"read blob {blob_sha[:12]} ({path})",
            lambda: self._repo.get_git_blob(blob_sha).raw_data,
            retry=self._retry,
        )
        return base64.b64decode(str(blob["content"]))

    def fetch(self, request: FetchRequest) -> BaselineFetch:
        config_name = request.config_name
        if self._access is None:
            return BaselineFetch(
                status="missing",
                path=None,
                source="branch",
                detail=(
                    f"baseline.store is branch ({self.describe()}, latest/{config_name}.json), "
                    "which only the GitHub Action reads (its mode: promote commits one on a push "
                    "to the default branch); pass --baseline PATH to compare with a local run "
                    "file"
                ),
            )
        wanted = {p.sha: p.why for p in request.preferred}
        for folder in [*wanted, "latest"]:
            found = self._read_artefact(folder, config_name)
            if found is None:
                continue
            origin = f"branch {self.branch}:{found[0]}"
            check_artefact_bytes(found[1], origin)
            sha = folder if folder in wanted else self._latest_sha(config_name)
            why = wanted.get(sha or "", "")
            final = self._keep_copy(found, request.dest_dir, f"baseline-{config_name}")
            return BaselineFetch(
                status="found",
                path=final,
                source="branch",
                sha=sha,
                detail=f"{origin}{f' ({why})' if why else ''}",
            )
        return BaselineFetch(
            status="missing",
            path=None,
            source="branch",
            detail=(
                f"store branch: branch {self.branch} has no latest/{config_name}.json (or the "
                "branch does not exist yet); run the workflow with mode: promote on the default "
                "branch first"
            ),
        )

    # -- writing -------------------------------------------------------------------

    def promote(self, request: PromoteRequest) -> PromoteResult:
        """Commit the artefact as ``latest`` and ``<sha>`` for its config, in one commit."""
        artefact, config_name, sha = request.artefact, request.config_name, request.sha
        data = artefact.read_bytes()
        check_artefact_bytes(data, str(artefact))
        _, fingerprint = artefact_facts(data, str(artefact))
        file_name = f"{config_name}.json.gz" if data[:2] == b"\x1f\x8b" else f"{config_name}.json"
        blob = self._blob(data, file_name)
        promoted_at = self._now()
        kept_at = (
            f"{sha}/{file_name}"
            if sha
            else f"promotions/{promotion_stem(None, promoted_at)}/{file_name}"
        )
        kept = _file(kept_at, sha=blob.sha)
        latest = [
            _file(f"latest/{file_name}", sha=blob.sha),
            _file(f"latest/{config_name}.sha", content=sha + "\n"),
        ]
        record = PromotionRecord(kept_at, sha or None, promoted_at, fingerprint)
        held: list[str | None] = [None]  # why latest stays, decided from the commit replaced

        def build(parent: str | None) -> list[Any]:
            current = self._latest_sha(config_name, parent) if parent else None
            held[0] = self._keeps_latest(current, sha, config_name)
            index_path = self._index_path(config_name)
            records = index_loads(
                self._read(index_path, parent) if parent else None,
                f"branch {self.branch}:{index_path}",
            )
            records = with_promotion(records, record, latest_sha=current if held[0] else None)
            records, dropped = pruned(records, self._keep)
            index = index_dumps(config_name, records).decode("utf-8")
            moved = [] if held[0] else latest
            # sha None deletes the file from the tree (the branch's history still has it)
            gone = [
                _file(old.file, sha=None)
                for old in dropped
                if old.file != kept_at and parent and self._read(old.file, parent) is not None
            ]
            return [*moved, kept, *gone, _file(index_path, content=index)]

        message = f"evalkit: baseline {config_name} from {sha[:12] or 'unknown commit'}"
        commit_sha = self._commit(build, message)
        # latest kept: the promotion lives at <sha>/ only, and the detail says why
        where = kept_at if held[0] else f"latest/{file_name}"
        return PromoteResult(
            source="branch",
            location=f"{self.branch}:{where}",
            sha=sha or None,
            detail=f"committed {commit_sha[:12]} to {self.branch} ({where})"
            + (f"; {held[0]}" if held[0] else ""),
            latest="kept" if held[0] else "moved",
        )

    def _blob(self, data: bytes, path: str) -> Any:
        return call_github(
            f"create blob for {path} on {self.branch}",
            lambda: self._repo.create_git_blob(base64.b64encode(data).decode("ascii"), "base64"),
            retry=self._retry,
        )

    def _latest_sha(self, config_name: str, ref: str | None = None) -> str | None:
        """The commit ``latest`` was promoted from (as of store commit ``ref``)."""
        data = self._read(f"latest/{config_name}.sha", ref)
        text = data.decode("utf-8", "replace").strip() if data else ""
        return text or None

    def _read_artefact(self, folder: str, config_name: str) -> tuple[str, bytes] | None:
        """``folder/<config>.json`` (or ``.json.gz``) on the store branch: path and bytes."""
        for name in artefact_file_names(config_name):
            data = self._read(f"{folder}/{name}")
            if data is not None:
                return f"{folder}/{name}", data
        return None

    @staticmethod
    def _keep_copy(found: tuple[str, bytes], dest_dir: Path, stem: str) -> Path:
        """Write ``found`` as ``dest_dir/<stem>.json[.gz]`` (the suffix it has)."""
        final = dest_dir / f"{stem}{'.json.gz' if found[0].endswith('.gz') else '.json'}"
        write_bytes_atomic(final, found[1])
        return final

    def _keeps_latest(self, current: str | None, sha: str, config_name: str) -> str | None:
        """Why ``latest`` must stay at ``current`` rather than move to ``sha``, or None."""
        if current is None or current == sha:
            return None
        stays = (
            f"latest stays at {current[:12]}; PRs whose base is {sha[:12] or 'this commit'} "
            f"still use {sha[:12] or 'it'}/"
        )
        if not sha:
            return f"the promoted commit is unknown, so {stays}"
        if current not in self._ancestry:
            assert self._access is not None
            self._ancestry[current] = compare_commits(self._repo, current, sha, retry=self._retry)
        ancestry = self._ancestry[current]
        if ancestry.status == "ahead":
            return None
        fix = (
            f"; if the default branch was rewritten, delete latest/{config_name}.sha on "
            f"{self.branch} and the next promotion moves latest"
        )
        if ancestry.status == "behind":
            return f"{sha[:12]} is an ancestor of {current[:12]}: {stays}"
        if ancestry.status == "diverged":
            return f"{sha[:12]} and {current[:12]} have diverged: {stays}{fix}"
        return (
            f"cannot tell how {sha[:12]} relates to {current[:12]} ({ancestry.error}): {stays}{fix}"
        )

    def _commit(self, build: TreeBuilder, message: str) -> str:
        """One commit on the store branch, retried when another job moved the branch."""
        for attempt in range(1, self._race_attempts + 1):
            try:
                return self._commit_once(build, message)
            except GitHubApiError as exc:
                if exc.status not in (409, 422):
                    raise
                if attempt < self._race_attempts:
                    # Another job moved (or created) the branch between our read and write.
                    self._sleep(self._retry.delay(attempt))
                    continue
                raise GitHubApiError(
                    f"could not update branch {self.branch} after {attempt} attempts: "
                    f"other jobs kept moving it ({exc})",
                    status=exc.status,
                ) from None
        raise AssertionError("unreachable: the loop returns or raises")

    # -- history and the pinned reference ---------------------------------------------

    @staticmethod
    def _index_path(config_name: str) -> str:
        return f"history/{config_name}.json"

    def _without_access(self, what: str) -> str:
        return (
            f"baseline.store is branch ({self.describe()}), whose {what} only the GitHub "
            "Action reads"
        )

    def _fetch_hint(self) -> str:
        return (
            f" (or a local copy: `git fetch origin {self.branch}` makes "
            f"origin/{self.branch} readable here)"
        )

    def _where(self) -> str:
        rev = self._local.rev if self._access is None and self._local else None
        return f"{self.branch} (local {rev})" if rev else self.branch

    def history(self, request: HistoryRequest) -> History:
        """Every promotion in the branch's index (newest ``limit``), fetched locally."""
        config_name = request.config_name
        if self._access is None and not (self._local and self._local.rev):
            return History((), "branch", self._without_access("history") + self._fetch_hint())
        index_path = self._index_path(config_name)
        records = index_loads(self._read(index_path), f"branch {self.branch}:{index_path}")
        folder = request.dest_dir / f"history-{config_name}"
        entries: list[HistoryEntry] = []
        lost = 0
        for record in records[-request.limit :] if request.limit else records:
            data = self._read(record.file)
            if data is None:
                lost += 1
                continue
            suffix = ".json.gz" if record.file.endswith(".gz") else ".json"
            stem = promotion_stem(record.sha, record.promoted_at or datetime.fromtimestamp(0, UTC))
            path = folder / f"{stem}{suffix}"
            write_bytes_atomic(path, data)
            entries.append(record.entry(path))
        older = (
            len(records) - request.limit if request.limit and len(records) > request.limit else 0
        )
        if not records:
            legacy = self._legacy_latest(config_name, folder)
            if legacy is not None:
                return History(
                    (legacy,),
                    "branch",
                    f"branch {self.branch} has no {index_path} (promoted before evalkit kept "
                    "a history): only latest is listed; the next promotion starts the history",
                )
        parts = [f"{len(entries)} promotion(s) from branch {self._where()}:{index_path}"]
        if older:
            parts.append(f"{older} older one(s) not fetched (limit {request.limit})")
        if lost:
            parts.append(f"{lost} listed but deleted from the branch")
        return History(tuple(entries), "branch", "; ".join(parts), lost)

    def _legacy_latest(self, config_name: str, folder: Path) -> HistoryEntry | None:
        found = self._read_artefact("latest", config_name)
        if found is None:
            return None
        sha = self._latest_sha(config_name)
        _, fingerprint = artefact_facts(found[1], f"branch {self.branch}:{found[0]}")
        path = self._keep_copy(found, folder, f"latest-{config_name}")
        return make_entry(path, sha=sha, promoted_at=None, config_fingerprint=fingerprint)

    def pin(self, request: PinRequest) -> PinResult:
        """Commit a copy of the chosen promotion and its pin record under ``reference/``."""
        if self._access is None:
            raise ConfigError(
                f"{self._without_access('history')}: pin it with the Action's mode: pin"
            )
        config_name = request.config_name
        index_path = self._index_path(config_name)
        records = index_loads(self._read(index_path), f"branch {self.branch}:{index_path}")
        if records:
            # Choose from the index, then read only the chosen promotion.
            listed = [r.entry(Path(r.file)) for r in records]
            chosen, why = select_pinned(listed, request.spec, request.resolve_tag)
            where = chosen.path.as_posix()
            kept = self._read(where)
            if kept is None:
                raise ArtifactError(
                    f"branch {self.branch}:{where} is listed in {index_path} but was deleted; "
                    "pin another promotion"
                )
            data = kept
        else:
            history = self.history(HistoryRequest(config_name, request.dest_dir, limit=0))
            chosen, why = select_pinned(history.entries, request.spec, request.resolve_tag)
            data = chosen.path.read_bytes()
        record = PinRecord.of(chosen, request.spec, why, request.moment())
        name = f"{config_name}.json.gz" if data[:2] == b"\x1f\x8b" else f"{config_name}.json"
        other = f"{config_name}.json" if name.endswith(".gz") else f"{config_name}.json.gz"
        blob = self._blob(data, f"reference/{name}")
        elements = [
            _file(f"reference/{name}", sha=blob.sha),
            _file(f"reference/{config_name}.pin.json", content=record.to_json()),
        ]

        def build(parent: str | None) -> list[Any]:
            # a reference of the other compression must not outlive a re-pin
            stale = parent is not None and self._read(f"reference/{other}", parent) is not None
            gone = [_file(f"reference/{other}", sha=None)]
            return [*elements, *(gone if stale else [])]

        commit_sha = self._commit(build, f"evalkit: pin {config_name} reference to {why}")
        location = f"{self.branch}:reference/{name}"
        return PinResult(
            record,
            "branch",
            location,
            f"committed {commit_sha[:12]} to {self.branch}: reference {record.describe()}",
        )

    def fetch_reference(self, request: FetchRequest) -> BaselineFetch:
        config_name = request.config_name
        if self._access is None and not (self._local and self._local.rev):
            return BaselineFetch(
                "missing",
                None,
                "branch",
                self._without_access("pinned reference")
                + self._fetch_hint()
                + "; pass --reference PATH to compare with a local file",
            )
        pin_path = f"reference/{config_name}.pin.json"
        where = f"branch {self.branch}:reference/{config_name}.json"
        pin = self._read(pin_path)
        if pin is None:
            return no_reference("branch", where, "the Action's mode: pin")
        record = PinRecord.from_json(pin, f"branch {self.branch}:{pin_path}")
        found = self._read_artefact("reference", config_name)
        if found is None:
            return no_reference(
                "branch", f"{where} is gone though {pin_path} exists", "the Action's mode: pin"
            )
        origin = f"branch {self.branch}:{found[0]}"
        check_artefact_bytes(found[1], origin)
        final = self._keep_copy(found, request.dest_dir, f"reference-{config_name}")
        return reference_found(final, record, "branch", origin)

    def _loaded_ref(self, ref_name: str) -> Any:
        # PyGithub builds the ref lazily; touching .object fetches it now (so a missing
        # branch is a 404 here) and swaps in the canonical /git/refs/ URL that edit() needs.
        ref = self._repo.get_git_ref(ref_name)
        _ = ref.object.sha
        return ref

    def _commit_once(self, build: TreeBuilder, message: str) -> str:
        ref_name = f"heads/{self.branch}"
        try:
            ref: Any = call_github(
                f"read ref {ref_name}", lambda: self._loaded_ref(ref_name), retry=self._retry
            )
        except GitHubApiError as exc:
            if exc.status != 404:
                raise
            ref = None
        from github.GithubObject import NotSet

        # None: the branch does not exist yet, and this commit starts it
        parent_sha = None if ref is None else str(ref.object.sha)
        elements = build(parent_sha)
        parents: list[Any] = []
        if parent_sha is not None:
            parents.append(
                call_github(
                    f"read commit {parent_sha[:12]}",
                    lambda: self._repo.get_git_commit(parent_sha),
                    retry=self._retry,
                )
            )
        base_tree = parents[0].tree if parents else NotSet
        tree: Any = call_github(
            "create tree",
            lambda: self._repo.create_git_tree(elements, base_tree=base_tree),
            retry=self._retry,
        )
        commit: Any = call_github(
            "create commit",
            lambda: self._repo.create_git_commit(message, tree, parents),
            retry=self._retry,
        )
        if ref is None:
            call_github(
                f"create branch {self.branch}",
                lambda: self._repo.create_git_ref(f"refs/{ref_name}", commit.sha),
                retry=self._retry,
            )
        else:
            call_github(
                f"move branch {self.branch}",
                lambda: ref.edit(commit.sha, force=False),
                retry=self._retry,
            )
        return str(commit.sha)
