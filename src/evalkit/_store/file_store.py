"""The stores that need no network: a baseline kept as a plain file, and no store at all."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

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
    check_artefact_bytes,
)
from evalkit._util.atomic import write_bytes_atomic
from evalkit.errors import ConfigError, InputError

if TYPE_CHECKING:
    from evalkit._store.history import History, LocalHistory

__all__ = ["FileStore", "NoStore"]


class FileStore:
    """A baseline kept as a plain file (committed, or restored by a cache step)."""

    kind: ClassVar[str] = "file"

    def __init__(self, path: Path, *, history: LocalHistory) -> None:
        self.path = path
        self.log = history  # evalkit.yaml's folder and config name decide it (open)

    @classmethod
    def open(cls, settings: StoreSettings, access: GitHubAccess | None) -> FileStore:  # noqa: ARG003
        from evalkit._store.history import LOCAL_HISTORY_DIR, LocalHistory

        path = settings.baseline.path
        assert path is not None  # BaselineConfig: store file needs a path
        name = settings.config_name
        keep = settings.baseline.keep_promotions
        log = LocalHistory(settings.root / LOCAL_HISTORY_DIR / name, name, keep=keep)
        return cls(settings.resolve(path), history=log)

    def describe(self) -> str:
        return f"file {self.path}"

    def fetch(self, request: FetchRequest | None = None) -> BaselineFetch:  # noqa: ARG002
        if not self.path.is_file():
            what = "is a folder" if self.path.is_dir() else "does not exist"
            where = str(self.path)
            if not self.path.is_absolute():
                where += f" ({self.path.absolute()})"
            raise InputError(
                f"baseline.path: the baseline file {where} {what}; make it with `evalkit "
                "promote RUN` (a run of the code to compare against), fix the path, or remove "
                "the baseline setting to run without a baseline"
            )
        check_artefact_bytes(self.path.read_bytes(), str(self.path))
        return BaselineFetch(
            status="found", path=self.path, source="file", detail=f"baseline file {self.path}"
        )

    def promote(self, request: PromoteRequest) -> PromoteResult:
        artefact = request.artefact
        data = artefact.read_bytes()
        if artefact.resolve() != self.path.resolve():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes_atomic(self.path, data)
        self.keep(data, request.sha or None)
        return PromoteResult(
            source="file", location=str(self.path), detail=f"baseline written to {self.path}"
        )

    def keep(self, data: bytes, sha: str | None = None, now: datetime | None = None) -> None:
        """Add the baseline just promoted, ``data`` (the bytes written, never a re-read
        of the file, which a promotion racing this one may have replaced), to the history."""
        from evalkit._store.history import artefact_facts

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
    def open(cls, settings: StoreSettings, access: GitHubAccess | None) -> NoStore:  # noqa: ARG003
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
        from evalkit._store.history import History

        return History((), "none", "baseline.store is none: no promotion is kept")

    def pin(self, request: PinRequest) -> PinResult:  # noqa: ARG002
        raise ConfigError("pinning a reference needs a baseline store (artifact, branch or file)")

    def fetch_reference(self, request: FetchRequest) -> BaselineFetch:  # noqa: ARG002
        return BaselineFetch("missing", None, "none", "baseline.store is none: no reference")
