"""The stores that need no network: a baseline kept as a plain file, and no store at all."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import ClassVar

from evalkit._store import history as _history
from evalkit._store.history import History, HistoryEntry, PinRecord, PromotionRecord
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

#: The promotions of one config, beside ``evalkit.yaml`` (``.evalkit/`` is git-ignored).
LOCAL_HISTORY_DIR = Path(".evalkit") / "history"


class FileStore:
    """A baseline kept as a plain file (committed, or restored by a cache step), and its
    history under ``root`` (``.evalkit/history/<config>/`` beside evalkit.yaml)."""

    kind: ClassVar[str] = "file"
    INDEX = "index.json"
    REFERENCE = "reference.json"
    PIN = "reference.pin.json"
    LOCK = "index.json.lock"
    # Another promotion holds the lock for a copy and two small writes: a minute is ages.
    LOCK_TIMEOUT_S = 60.0

    def __init__(
        self, path: Path, root: Path, config_name: str, *, keep: int | None = None
    ) -> None:
        self.path = path
        self.root = root
        self.config_name = config_name
        self.keep_promotions = keep  # the newest N stay, older are deleted (None: all)

    @classmethod
    def open(cls, settings: StoreSettings, access: GitHubAccess | None) -> FileStore:  # noqa: ARG003
        path = settings.baseline.path
        assert path is not None  # BaselineConfig: store file needs a path
        name = settings.config_name
        root = settings.root / LOCAL_HISTORY_DIR / name
        return cls(settings.resolve(path), root, name, keep=settings.baseline.keep_promotions)

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
        commit, fingerprint = _history.artefact_facts(data, str(self.path))
        sha, now = sha or commit, now or datetime.now(UTC)
        suffix = ".json.gz" if data[:2] == b"\x1f\x8b" else ".json"
        name = _history.promotion_stem(sha, now) + suffix
        record = PromotionRecord(name, sha, now, fingerprint)
        with self._locked():
            write_bytes_atomic(self.root / name, data)
            records, dropped = _history.pruned([*self._records(), record], self.keep_promotions)
            write_bytes_atomic(
                self.root / self.INDEX, _history.index_dumps(self.config_name, records)
            )
            # After the index no longer lists them: a crash in between leaves a file too many.
            for old in dropped:
                if old.file != name:
                    (self.root / old.file).unlink(missing_ok=True)

    def _records(self) -> list[PromotionRecord]:
        index = self.root / self.INDEX
        return _history.index_loads(index.read_bytes() if index.is_file() else None, str(index))

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the history's lock file: two promotions (or pins) at once would each read
        the index, add their own entry and write it back, and one entry would be lost."""
        from filelock import FileLock, Timeout

        self.root.mkdir(parents=True, exist_ok=True)
        lock = self.root / self.LOCK
        try:
            with FileLock(str(lock), timeout=self.LOCK_TIMEOUT_S):
                yield
        except Timeout:
            raise InputError(
                f"{lock}: another evalkit promote or pin has held this lock for "
                f"{self.LOCK_TIMEOUT_S:g} s; wait for it, or delete the file if none is running"
            ) from None

    def history(self, request: HistoryRequest | None = None) -> History:  # noqa: ARG002
        kept: list[HistoryEntry] = []
        lost = 0
        for record in self._records():
            path = self.root / record.file
            if path.is_file():
                kept.append(record.entry(path))
            else:
                lost += 1
        gone = f"; {lost} promotion(s) listed there were deleted" if lost else ""
        return History(
            tuple(kept), "file", f"{len(kept)} promotion(s) kept in {self.root}{gone}", lost
        )

    def pin(self, request: PinRequest) -> PinResult:
        with self._locked():  # a promotion may not prune the chosen file meanwhile
            chosen, why = _history.select_pinned(
                self.history().entries, request.spec, request.resolve_tag
            )
            record = PinRecord.of(chosen, request.spec, why, request.moment())
            write_bytes_atomic(self.root / self.REFERENCE, chosen.path.read_bytes())
            write_bytes_atomic(self.root / self.PIN, record.to_json().encode("utf-8"))
        where = self.root / self.REFERENCE
        return PinResult(record, "file", str(where), f"reference {where}: {record.describe()}")

    def fetch_reference(self, request: FetchRequest | None = None) -> BaselineFetch:  # noqa: ARG002
        pin, reference = self.root / self.PIN, self.root / self.REFERENCE
        if not pin.is_file() or not reference.is_file():
            return _history.no_reference(
                "file", str(reference), "`evalkit pin` (e.g. '3 promotions ago')"
            )
        record = PinRecord.from_json(pin.read_bytes(), str(pin))
        return _history.reference_found(reference, record, "file", str(reference))


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
        return History((), "none", "baseline.store is none: no promotion is kept")

    def pin(self, request: PinRequest) -> PinResult:  # noqa: ARG002
        raise ConfigError("pinning a reference needs a baseline store (artifact, branch or file)")

    def fetch_reference(self, request: FetchRequest) -> BaselineFetch:  # noqa: ARG002
        return BaselineFetch("missing", None, "none", "baseline.store is none: no reference")
