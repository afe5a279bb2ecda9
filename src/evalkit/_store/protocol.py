"""The baseline-store contract: what every store answers, and the light artefact checks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol

from evalkit._util import bounded as _bounded
from evalkit.errors import ArtifactError

if TYPE_CHECKING:
    import httpx
    from github.Repository import Repository

    from evalkit._spec.config import BaselineConfig
    from evalkit._store.history import History, PinRecord, PinSpec, TaggedCommit
    from evalkit.github.client import RetryPolicy

BaselineStatus = Literal["found", "missing", "expired"]


@dataclass(frozen=True)
class BaselineFetch:
    """The outcome of asking a store for a baseline."""

    status: BaselineStatus
    path: Path | None  # a local file when found
    source: str  # "artifact", "branch", "file" or "none"
    detail: str  # one human sentence: where it came from, or why there is none
    sha: str | None = None  # the commit the baseline was made from, when known

    @property
    def found(self) -> bool:
        return self.status == "found"


@dataclass(frozen=True)
class Preferred:
    """A commit whose baseline is wanted, with why (for the report)."""

    sha: str
    why: str  # "the merge base (first parent of refs/pull/7/merge)"


@dataclass(frozen=True)
class FetchRequest:
    """What a store is asked for: this config's baseline, preferably of these commits."""

    config_name: str
    dest_dir: Path  # where a downloaded artefact is written
    preferred: Sequence[Preferred] = ()  # best first; then the store's newest
    # The branch whose baselines are wanted (a PR's base branch); None: the default branch.
    branch: str | None = None


@dataclass(frozen=True)
class PromoteRequest:
    """Make ``artefact`` the baseline of ``config_name`` (built from commit ``sha``)."""

    artefact: Path
    config_name: str
    sha: str
    output_dir: Path  # the artifact store leaves its upload folder here


@dataclass(frozen=True)
class PromoteResult:
    """Where a promoted artefact went."""

    source: str
    location: str  # path, or branch:path
    detail: str
    sha: str | None = None
    upload_dir: Path | None = None  # store artifact: the folder for actions/upload-artifact
    # "moved": PRs now default to this promotion; "kept": latest stays at a newer commit
    # (detail says why); "none": the store keeps no latest (artifact: PRs pick by ancestry)
    latest: Literal["moved", "kept", "none"] = "moved"


@dataclass(frozen=True)
class HistoryRequest:
    """Every promotion of ``config_name`` the store still holds, fetched into ``dest_dir``."""

    config_name: str
    dest_dir: Path
    limit: int = 50  # the newest this many (each may be one download)


@dataclass(frozen=True)
class PinRequest:
    """Pin the promotion ``spec`` names as ``config_name``'s reference, until re-pinned."""

    config_name: str
    spec: PinSpec
    dest_dir: Path  # where the history is fetched to choose from
    output_dir: Path  # the artifact store leaves its upload folder here
    resolve_tag: Callable[[str], TaggedCommit | None] | None = None
    now: datetime | None = None  # default: the current time

    def moment(self) -> datetime:
        return self.now or datetime.now(UTC)


@dataclass(frozen=True)
class PinResult:
    """What was pinned, and where the reference now lives."""

    record: PinRecord
    source: str
    location: str
    detail: str
    upload_dir: Path | None = None  # store artifact: upload this folder ...
    upload_name: str | None = None  # ... under this artifact name


@dataclass(frozen=True)
class StoreSettings:
    """What opening a store needs from evalkit.yaml: plain values, not the loaded config."""

    baseline: BaselineConfig  # the ``baseline`` section, every default filled in
    config_name: str
    root: Path  # the config's folder: the local history and the git clone live there
    resolve: Callable[[str], Path]  # a path from evalkit.yaml, relative to its folder


@dataclass(frozen=True)
class GitHubAccess:
    """What the GitHub-backed stores need; the CLI has none (those stores then say so)."""

    repo: Callable[[], Repository]
    repo_facts: Callable[[], tuple[int, str]]  # (repository id, default branch)
    token: str
    retry: RetryPolicy
    http: httpx.Client | None = None  # None: the store opens (and closes) its own


class BaselineStore(Protocol):
    """Where baselines live: fetch one, or promote a candidate to be one."""

    kind: ClassVar[str]  # the ``baseline.store`` value naming this store

    @classmethod
    def open(cls, settings: StoreSettings, access: GitHubAccess | None) -> BaselineStore:
        """The store ``settings.baseline`` (defaults filled in) describes."""
        ...

    def describe(self) -> str:
        """Where this store looks, for messages ("artifact 'evalkit-baseline' …")."""
        ...

    def fetch(self, request: FetchRequest) -> BaselineFetch: ...

    def promote(self, request: PromoteRequest) -> PromoteResult: ...

    def history(self, request: HistoryRequest) -> History:
        """Every promotion the store still holds, oldest first (evalkit history)."""
        ...

    def pin(self, request: PinRequest) -> PinResult:
        """Pin one promotion as the reference (evalkit pin, the Action's mode: pin)."""
        ...

    def fetch_reference(self, request: FetchRequest) -> BaselineFetch:
        """The pinned reference: found, or missing/expired (an answer, never an error)."""
        ...


def artefact_file_names(config_name: str) -> tuple[str, str]:
    """The file names a stored baseline for ``config_name`` may have."""
    return f"{config_name}.json", f"{config_name}.json.gz"


def artefact_document(data: bytes, origin: str) -> Any:
    """The JSON document an artefact's bytes (gzip or plain) hold."""
    raw = _bounded.gunzip_bounded(data, origin) if data[:2] == b"\x1f\x8b" else data
    try:
        return _bounded.loads(raw)
    except ValueError as exc:
        raise ArtifactError(f"{origin}: not valid JSON ({exc})") from None


def check_artefact_bytes(data: bytes, origin: str) -> None:
    """A light sanity check before the gate reads the artefact properly."""
    document = artefact_document(data, origin)
    if not isinstance(document, dict) or "schema_version" not in document:
        raise ArtifactError(
            f"{origin}: not an evalkit run artefact (no schema_version); "
            "promote a baseline written by `evalkit run` or the gate"
        )
