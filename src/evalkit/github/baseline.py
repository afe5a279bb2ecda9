"""The baseline-store contract, the light artefact checks, and the local-file store.

Every store (:data:`evalkit.github.stores.STORES` maps ``baseline.store`` to its class)
implements :class:`BaselineStore`: ``fetch`` answers "where is the baseline artefact for
config X?" with a :class:`BaselineFetch`, ``promote`` makes a candidate the baseline.
``missing`` and ``expired`` are answers, not errors, and only for a store that has
legitimately never been promoted (an artifact or branch store): the gate turns them
into the ``no-baseline`` verdict (blocking only with ``require_baseline``). A GitHub
failure is *not* an answer and raises, because treating an outage as "no baseline"
would wave a regression through; so does a configured baseline *file* that does not
exist (a typo in ``baseline.path`` must not read as "never promoted").
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Literal, Protocol

from evalkit import _bounded
from evalkit._atomic import write_bytes_atomic
from evalkit.errors import ArtifactError, ConfigError, InputError

if TYPE_CHECKING:
    import httpx
    from github.Repository import Repository

    from evalkit.artifact import RunArtifact
    from evalkit.config import LoadedConfig
    from evalkit.github.client import RetryPolicy
    from evalkit.history import History, LocalHistory, PinRecord, PinSpec, TaggedCommit

BaselineStatus = Literal["found", "missing", "expired"]

# The largest artefact we accept from a store (compressed or not); far above any real
# eval, far below what would hurt the runner.
MAX_ARTEFACT_BYTES = 200 * 1024 * 1024

_CONFIG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$")


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
    def open(cls, config: LoadedConfig, access: GitHubAccess | None) -> BaselineStore:
        """The store ``config``'s ``baseline`` section (defaults filled in) describes."""
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


def validate_config_name(name: str) -> str:
    """A config name is used in file names and comment markers: keep it plain."""
    if not _CONFIG_NAME.match(name):
        raise ConfigError(
            f"config name {name!r} must be 1-100 characters of letters, digits, '.', '_' or "
            "'-', starting with a letter or digit; set the config-name input"
        )
    return name


def artefact_file_names(config_name: str) -> tuple[str, str]:
    """The file names a stored baseline for ``config_name`` may have."""
    return f"{config_name}.json", f"{config_name}.json.gz"


def check_artefact_bytes(data: bytes, origin: str) -> None:
    """A light sanity check before the gate reads the artefact properly.

    The gate's reader validates the schema; this only catches "that is not an evalkit
    artefact at all" early, with a message naming where the bytes came from.
    """
    raw = gunzip_bounded(data, origin) if data[:2] == b"\x1f\x8b" else data
    try:
        document = _bounded.loads(raw)
    except ValueError as exc:
        raise ArtifactError(f"{origin}: not valid JSON ({exc})") from None
    if not isinstance(document, dict) or "schema_version" not in document:
        raise ArtifactError(
            f"{origin}: not an evalkit run artefact (no schema_version); "
            "promote a baseline written by `evalkit run` or the gate"
        )


def gunzip_bounded(data: bytes, origin: str, limit: int = MAX_ARTEFACT_BYTES) -> bytes:
    """Decompress gzip ``data`` but stop past ``limit`` bytes: a gzip bomb never expands.

    (``gzip.decompress`` would inflate the whole thing first and check the size after.)
    """
    try:
        return _bounded.gunzip(data, origin, limit)
    except _bounded.InputTooLarge:
        raise ArtifactError(f"{origin}: decompresses to more than {limit} bytes") from None
    except zlib.error as exc:
        raise ArtifactError(f"{origin}: not a readable gzip file ({exc})") from None
    except EOFError:
        raise ArtifactError(f"{origin}: not a readable gzip file (truncated)") from None


def refuse_other_config(baseline: RunArtifact, config_name: str, origin: str) -> None:
    """A baseline recorded for another config is refused, never compared.

    Two configs (or a matrix) sharing one artifact name or branch would otherwise gate
    one config against the other's numbers. Artefacts that recorded no config name
    (written before evalkit kept it) are accepted.
    """
    recorded = baseline.config_name
    if recorded is not None and recorded != config_name:
        raise InputError(
            f"{origin}: this baseline is config {recorded!r}, not {config_name!r}; give each "
            "config its own artifact name (baseline.name) or promote one for "
            f"{config_name!r}"
        )


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temp file in the same directory and a rename."""
    write_bytes_atomic(path, data)


class FileStore:
    """A baseline kept as a plain file (committed, or restored by a cache step).

    The file is configuration, not a store that may be empty: if it is not there, the
    path is wrong (exit 2 naming the key), never "no baseline".
    """

    kind: ClassVar[str] = "file"

    def __init__(
        self,
        path: Path,
        *,
        key: str = "baseline.path",
        history: LocalHistory | None = None,
    ) -> None:
        from evalkit.history import LOCAL_HISTORY_DIR, LocalHistory

        self.path = path
        self.key = key  # the setting that named the file, for the error message
        # evalkit.yaml's folder and config name decide it (open); a bare file its own folder.
        self.log = history or LocalHistory(path.parent / LOCAL_HISTORY_DIR / path.stem, path.stem)

    @classmethod
    def open(cls, config: LoadedConfig, access: GitHubAccess | None) -> FileStore:  # noqa: ARG003
        from evalkit.history import LOCAL_HISTORY_DIR, LocalHistory

        path = config.baseline.path
        assert path is not None  # BaselineConfig: store file needs a path
        log = LocalHistory(config.root / LOCAL_HISTORY_DIR / config.name, config.name)
        return cls(config.resolve(path), key="baseline.path", history=log)

    def describe(self) -> str:
        return f"file {self.path}"

    def fetch(self, request: FetchRequest | None = None) -> BaselineFetch:  # noqa: ARG002
        if not self.path.is_file():
            what = "is a folder" if self.path.is_dir() else "does not exist"
            where = str(self.path)
            if not self.path.is_absolute():
                where += f" ({self.path.absolute()})"
            raise InputError(
                f"{self.key}: the baseline file {where} {what}; make it with `evalkit "
                "promote RUN` (a run of the code to compare against), fix the path, or remove "
                "the baseline setting to run without a baseline"
            )
        check_artefact_bytes(self.path.read_bytes(), str(self.path))
        return BaselineFetch(
            status="found", path=self.path, source="file", detail=f"baseline file {self.path}"
        )

    def promote(self, request: PromoteRequest) -> PromoteResult:
        artefact = request.artefact
        if artefact.resolve() != self.path.resolve():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(self.path, artefact.read_bytes())
        self.keep(request.sha or None)
        return PromoteResult(
            source="file", location=str(self.path), detail=f"baseline written to {self.path}"
        )

    def keep(self, sha: str | None = None, now: datetime | None = None) -> None:
        """Add the baseline file as it is now to the history (after every promotion)."""
        from evalkit.history import artefact_facts

        data = self.path.read_bytes()
        commit, fingerprint = artefact_facts(data, str(self.path))
        self.log.record(
            data,
            sha=sha or commit,
            config_fingerprint=fingerprint,
            now=now or datetime.now(UTC),
        )

    def history(self, request: HistoryRequest | None = None) -> History:  # noqa: ARG002
        return self.log.history()

    def pin(self, request: PinRequest) -> PinResult:
        record = self.log.pin(request.spec, resolve_tag=request.resolve_tag, now=request.moment())
        where = self.log.root / self.log.REFERENCE
        return PinResult(record, "file", str(where), f"reference {where}: {record.describe()}")

    def fetch_reference(self, request: FetchRequest | None = None) -> BaselineFetch:  # noqa: ARG002
        return self.log.fetch_reference()


class NoStore:
    """``baseline.store: none``: never a baseline (vs_baseline checks say no-baseline)."""

    kind: ClassVar[str] = "none"

    @classmethod
    def open(cls, config: LoadedConfig, access: GitHubAccess | None) -> NoStore:  # noqa: ARG003
        return cls()

    def describe(self) -> str:
        return "no store (baseline.store is none)"

    def fetch(self, request: FetchRequest) -> BaselineFetch:  # noqa: ARG002
        return BaselineFetch(
            "missing",
            None,
            "none",
            "baseline.store is none; pass --baseline PATH to compare with a run file, or keep "
            "one with baseline: {path: baseline.json} and `evalkit promote RUN`",
        )

    def promote(self, request: PromoteRequest) -> PromoteResult:  # noqa: ARG002
        raise ConfigError("mode: promote needs a baseline store (artifact, branch or file)")

    def history(self, request: HistoryRequest) -> History:  # noqa: ARG002
        from evalkit.history import History

        return History((), "none", "baseline.store is none: no promotion is kept")

    def pin(self, request: PinRequest) -> PinResult:  # noqa: ARG002
        raise ConfigError("pinning a reference needs a baseline store (artifact, branch or file)")

    def fetch_reference(self, request: FetchRequest) -> BaselineFetch:  # noqa: ARG002
        return BaselineFetch("missing", None, "none", "baseline.store is none: no reference")


__all__ = [
    "MAX_ARTEFACT_BYTES",
    "BaselineFetch",
    "BaselineStatus",
    "BaselineStore",
    "FetchRequest",
    "FileStore",
    "GitHubAccess",
    "HistoryRequest",
    "NoStore",
    "PinRequest",
    "PinResult",
    "Preferred",
    "PromoteRequest",
    "PromoteResult",
    "artefact_file_names",
    "check_artefact_bytes",
    "gunzip_bounded",
    "refuse_other_config",
    "validate_config_name",
    "write_atomic",
]
