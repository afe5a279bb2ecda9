"""The branch baseline store: artefacts committed to a dedicated branch, which never expire.

Layout of the branch (default ``evalkit-baselines``, created on first promotion as an
orphan branch so it shares no history with the code)::

    latest/<config>.json        the baseline a PR is compared with by default
    latest/<config>.sha         the default-branch commit it was made from
    <sha>/<config>.json         one per promoted commit, so a PR can use its exact base

One promotion is one commit made through the Git Data API (blob -> tree -> commit ->
ref), so ``latest`` and ``<sha>`` always change together. Two jobs promoting at once
race on the ref update; the loser gets 409/422, re-reads the branch head and tries
again, a bounded number of times.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar

from evalkit.config import DEFAULT_BASELINE_BRANCH, LoadedConfig
from evalkit.github.baseline import (
    BaselineFetch,
    FetchRequest,
    GitHubAccess,
    PromoteRequest,
    PromoteResult,
    check_artefact_bytes,
    write_atomic,
)
from evalkit.github.client import DEFAULT_RETRY, call_github, status_of
from evalkit.github.errors import GitHubApiError

if TYPE_CHECKING:
    from github.Repository import Repository

DEFAULT_BRANCH_STORE = DEFAULT_BASELINE_BRANCH
RACE_ATTEMPTS = 5


class BranchStore:
    """Read and write baselines on a dedicated branch of the repository."""

    kind: ClassVar[str] = "branch"

    def __init__(
        self,
        access: GitHubAccess | None,
        *,
        branch: str = DEFAULT_BRANCH_STORE,
        race_attempts: int = RACE_ATTEMPTS,
        sleep: Callable[[float], None] | None = None,
    ) -> None:
        self._access = access
        self.branch = branch
        self._retry = access.retry if access else DEFAULT_RETRY
        self._race_attempts = race_attempts
        self._sleep = sleep or self._retry.sleep

    @classmethod
    def open(cls, config: LoadedConfig, access: GitHubAccess | None) -> BranchStore:
        return cls(access, branch=config.baseline.branch)

    @property
    def _repo(self) -> Repository:
        assert self._access is not None
        return self._access.repo()

    def describe(self) -> str:
        return f"branch {self.branch}"

    # -- reading -------------------------------------------------------------------

    def _read(self, path: str) -> bytes | None:
        """The file's bytes on the store branch, or None if it (or the branch) is absent."""
        try:
            content: Any = call_github(
                f"read {path} on branch {self.branch}",
                lambda: self._repo.get_contents(path, ref=self.branch),
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
                    "which only the GitHub Action reads; pass --baseline PATH to compare with "
                    "a local file"
                ),
            )
        candidates: list[tuple[str, str | None, str]] = []
        for preferred in request.preferred:
            candidates += [
                (f"{preferred.sha}/{config_name}.json", preferred.sha, preferred.why),
                (f"{preferred.sha}/{config_name}.json.gz", preferred.sha, preferred.why),
            ]
        candidates += [
            (f"latest/{config_name}.json", None, ""),
            (f"latest/{config_name}.json.gz", None, ""),
        ]
        wanted = {p.sha: p.why for p in request.preferred}
        for path, sha, why in candidates:
            data = self._read(path)
            if data is None:
                continue
            origin = f"branch {self.branch}:{path}"
            check_artefact_bytes(data, origin)
            if sha is None:
                sha_bytes = self._read(f"latest/{config_name}.sha")
                sha = sha_bytes.decode("utf-8", "replace").strip() if sha_bytes else None
                why = wanted.get(sha or "", "")
            suffix = ".json.gz" if path.endswith(".gz") else ".json"
            final = request.dest_dir / f"baseline-{config_name}{suffix}"
            write_atomic(final, data)
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
        from github import InputGitTreeElement

        artefact, config_name, sha = request.artefact, request.config_name, request.sha
        data = artefact.read_bytes()
        check_artefact_bytes(data, str(artefact))
        file_name = f"{config_name}.json.gz" if data[:2] == b"\x1f\x8b" else f"{config_name}.json"
        blob: Any = call_github(
            f"create blob for {file_name} on {self.branch}",
            lambda: self._repo.create_git_blob(base64.b64encode(data).decode("ascii"), "base64"),
            retry=self._retry,
        )
        elements = [
            InputGitTreeElement(f"latest/{file_name}", "100644", "blob", sha=blob.sha),
            InputGitTreeElement(f"latest/{config_name}.sha", "100644", "blob", content=sha + "\n"),
        ]
        if sha:
            elements.append(
                InputGitTreeElement(f"{sha}/{file_name}", "100644", "blob", sha=blob.sha)
            )
        message = f"evalkit: baseline {config_name} from {sha[:12] or 'unknown commit'}"
        for attempt in range(1, self._race_attempts + 1):
            try:
                commit_sha = self._commit_once(elements, message)
            except GitHubApiError as exc:
                if status_of(exc) in (409, 422) and attempt < self._race_attempts:
                    # Another job moved (or created) the branch between our read and write.
                    self._sleep(self._retry.delay(attempt))
                    continue
                if status_of(exc) in (409, 422):
                    raise GitHubApiError(
                        f"could not update branch {self.branch} after {attempt} attempts: "
                        f"other jobs kept moving it ({exc})",
                        status=exc.status,
                    ) from None
                raise
            return PromoteResult(
                source="branch",
                location=f"{self.branch}:latest/{file_name}",
                sha=sha or None,
                detail=f"committed {commit_sha[:12]} to {self.branch} (latest/{file_name})",
            )
        raise AssertionError("unreachable: the loop returns or raises")

    def _loaded_ref(self, ref_name: str) -> Any:
        # PyGithub builds the ref lazily; touching .object fetches it now (so a missing
        # branch is a 404 here) and swaps in the canonical /git/refs/ URL that edit() needs.
        ref = self._repo.get_git_ref(ref_name)
        _ = ref.object.sha
        return ref

    def _commit_once(self, elements: list[Any], message: str) -> str:
        ref_name = f"heads/{self.branch}"
        try:
            ref: Any = call_github(
                f"read ref {ref_name}", lambda: self._loaded_ref(ref_name), retry=self._retry
            )
        except GitHubApiError as exc:
            if exc.status != 404:
                raise
            ref = None
        if ref is None:
            tree: Any = call_github(
                "create tree", lambda: self._repo.create_git_tree(elements), retry=self._retry
            )
            commit: Any = call_github(
                "create commit",
                lambda: self._repo.create_git_commit(message, tree, []),
                retry=self._retry,
            )
            call_github(
                f"create branch {self.branch}",
                lambda: self._repo.create_git_ref(f"refs/{ref_name}", commit.sha),
                retry=self._retry,
            )
            return str(commit.sha)
        parent_sha = str(ref.object.sha)
        parent: Any = call_github(
            f"read commit {parent_sha[:12]}",
            lambda: self._repo.get_git_commit(parent_sha),
            retry=self._retry,
        )
        tree = call_github(
            "create tree",
            lambda: self._repo.create_git_tree(elements, base_tree=parent.tree),
            retry=self._retry,
        )
        commit = call_github(
            "create commit",
            lambda: self._repo.create_git_commit(message, tree, [parent]),
            retry=self._retry,
        )
        call_github(
            f"move branch {self.branch}",
            lambda: ref.edit(commit.sha, force=False),
            retry=self._retry,
        )
        return str(commit.sha)


__all__ = ["DEFAULT_BRANCH_STORE", "RACE_ATTEMPTS", "BranchStore"]
