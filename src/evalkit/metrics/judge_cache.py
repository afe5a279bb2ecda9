"""The LLM judge's grade cache: one JSON file, shared safely by threads and processes."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from evalkit._model.formats import JUDGE_CACHE_FORMAT, JUDGE_CACHE_VERSION
from evalkit._util.atomic import DiskWriteError, write_text_atomic
from evalkit._util.bounded import loads, read_text
from evalkit.errors import JudgeError

_Signature = tuple[int, int, int]  # (inode, size, mtime_ns): "has the file changed?"
LOCK_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class CachedGrade:
    """One stored grade, with what it cost when it was first paid for."""

    score: int
    reason: str
    model: str
    case_id: str
    input_tokens: int | None = None
    output_tokens: int | None = None

    @cached_property
    def json_text(self) -> str:
        """The entry as one line of JSON, rendered once (rewrites stay cheap)."""
        return json.dumps(asdict(self), sort_keys=True, ensure_ascii=False)


def _fix_hint(path: Path) -> str:
    return (
        f"delete {path} to regrade every case (this calls the API again), "
        "or restore it from a backup or version control"
    )


def _corrupt(path: Path, what: str) -> JudgeError:
    return JudgeError(f"judge cache {path} is corrupt ({what}); {_fix_hint(path)}")


def _optional_int(path: Path, key: str, entry: Mapping[str, Any], field: str) -> int | None:
    value = entry.get(field)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise _corrupt(path, f"entry {key[:12]}: {field} must be an integer, got {value!r}")
    return value


def _parse_entry(path: Path, key: str, entry: object) -> CachedGrade:
    if not isinstance(entry, dict):
        raise _corrupt(path, f"entry {key[:12]} is {type(entry).__name__}, not an object")
    score = entry.get("score")
    if isinstance(score, bool) or not isinstance(score, int):
        raise _corrupt(path, f"entry {key[:12]}: score must be an integer, got {score!r}")
    for field in ("reason", "model", "case_id"):
        if not isinstance(entry.get(field), str):
            raise _corrupt(
                path, f"entry {key[:12]}: {field} must be a string, got {entry.get(field)!r}"
            )
    return CachedGrade(
        score=score,
        reason=entry["reason"],
        model=entry["model"],
        case_id=entry["case_id"],
        input_tokens=_optional_int(path, key, entry, "input_tokens"),
        output_tokens=_optional_int(path, key, entry, "output_tokens"),
    )


def parse_cache_text(path: Path, text: str) -> dict[str, CachedGrade]:
    """Validate a cache file's text and return its entries (raises on any deviation)."""
    try:
        doc = loads(text)
    except ValueError as exc:
        detail = f": {exc.msg}" if isinstance(exc, json.JSONDecodeError) else ""
        raise _corrupt(
            path, f"invalid JSON at line {getattr(exc, 'lineno', '?')}{detail}"
        ) from None
    if not isinstance(doc, dict):
        raise _corrupt(path, f"top level is {type(doc).__name__}, not an object")
    if (
        "format" not in doc
        and doc
        and all(isinstance(v, dict) and "score" in v for v in doc.values())
    ):
        # paired-evalkit 0.2.0 wrote a flat {key: {score, reason}} file at the same
        # default path; its keys hash a different prompt, so none of it can be reused.
        raise JudgeError(
            f"judge cache {path} was written by paired-evalkit 0.2.0: its grades were made "
            "with a different prompt and cache key, so this release cannot reuse them; "
            f"move it aside (e.g. to {path.name}.0.2.0) or delete it to regrade "
            "(this calls the API again)"
        )
    if doc.get("format") != JUDGE_CACHE_FORMAT:
        raise _corrupt(path, f"format is {doc.get('format')!r}, expected {JUDGE_CACHE_FORMAT!r}")
    version = doc.get("version")
    if version != JUDGE_CACHE_VERSION:
        raise JudgeError(
            f"judge cache {path} has version {version!r}, but this evalkit reads version "
            f"{JUDGE_CACHE_VERSION}; use the evalkit that wrote it, or {_fix_hint(path)}"
        )
    entries = doc.get("entries")
    if not isinstance(entries, dict):
        raise _corrupt(path, "'entries' is missing or not an object")
    return {key: _parse_entry(path, key, entry) for key, entry in entries.items()}


def _render(entries: Mapping[str, CachedGrade]) -> str:
    # One entry per line, sorted by key: a cache committed to git diffs and merges
    # readably, and unchanged entries reuse their rendered text.
    lines = ",\n".join(
        f"    {json.dumps(key)}: {entries[key].json_text}" for key in sorted(entries)
    )
    body = f"{{\n{lines}\n  }}" if lines else "{}"
    return (
        f'{{\n  "format": "{JUDGE_CACHE_FORMAT}",\n  "version": {JUDGE_CACHE_VERSION},\n'
        f'  "entries": {body}\n}}\n'
    )


class JudgeCache:
    """Grades by cache key, backed by one JSON file (see the module docstring)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        if self.path.is_dir():
            raise JudgeError(
                f"judge cache path {self.path} is a directory; give a file path such as "
                f"{self.path / 'judge-cache.json'}"
            )
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self._state_lock = threading.Lock()  # guards the fields below
        self._flush_lock = threading.Lock()  # one flusher per process at a time
        self._entries: dict[str, CachedGrade] = {}
        self._pending: dict[str, CachedGrade] = {}
        self._loaded_signature: _Signature | None = None
        self._loaded = False

    # reading ---------------------------------------------------------------------------

    def _signature(self) -> _Signature | None:
        try:
            st = self.path.stat()
        except (FileNotFoundError, NotADirectoryError):  # not there (yet): no grades
            return None
        return (st.st_ino, st.st_size, st.st_mtime_ns)

    def _read_disk(self) -> tuple[dict[str, CachedGrade], _Signature | None]:
        signature = self._signature()
        if signature is None:
            return {}, None
        try:
            text = read_text(self.path, encoding="utf-8-sig")  # a BOM from an editor is fine
        except FileNotFoundError:
            return {}, None
        except (OSError, UnicodeDecodeError) as exc:
            raise JudgeError(
                f"judge cache {self.path} cannot be read ({exc}); {_fix_hint(self.path)}"
            ) from None
        return parse_cache_text(self.path, text), signature

    def _refresh_if_changed(self) -> None:
        """Pick up grades another writer added since we last looked (cheap when unchanged)."""
        with self._state_lock:
            if self._loaded and self._signature() == self._loaded_signature:
                return
        disk, signature = self._read_disk()
        with self._state_lock:
            self._entries = {**disk, **self._entries}
            self._loaded_signature = signature
            self._loaded = True

    def get(self, key: str) -> CachedGrade | None:
        """The stored grade for ``key``; checks the file again on a miss."""
        with self._state_lock:
            found = self._entries.get(key) if self._loaded else None
        if found is not None:
            return found
        self._refresh_if_changed()
        with self._state_lock:
            return self._entries.get(key)

    def __len__(self) -> int:
        self._refresh_if_changed()
        with self._state_lock:
            return len(self._entries)

    # writing ---------------------------------------------------------------------------

    def put(self, key: str, grade: CachedGrade) -> None:
        """Store a grade and persist it before returning."""
        with self._state_lock:
            self._entries[key] = grade
            self._pending[key] = grade
        self._flush()

    def _flush(self) -> None:
        from filelock import FileLock, Timeout

        with self._flush_lock:
            with self._state_lock:
                if not self._pending:
                    return  # another thread's flush already carried our grade
                batch = dict(self._pending)
            try:
                with FileLock(str(self.lock_path), timeout=LOCK_TIMEOUT_S):
                    self._write_merged(batch)
            except Timeout:
                raise JudgeError(
                    f"judge cache {self.path}: could not take the lock {self.lock_path} within "
                    f"{LOCK_TIMEOUT_S:g} s; another evalkit process is writing it "
                    "(if none is running, delete the lock file)"
                ) from None
            except (OSError, DiskWriteError) as exc:
                # The grades stay pending in memory, so the next successful write keeps them.
                reason = exc.reason if isinstance(exc, DiskWriteError) else exc.strerror
                raise JudgeError(
                    f"judge cache {self.path}: could not write {len(batch)} new grade(s) "
                    f"({reason or exc}); check free space and permissions of "
                    f"{self.path.parent}"
                ) from exc
            with self._state_lock:
                for key in batch:
                    self._pending.pop(key, None)

    def _write_merged(self, batch: Mapping[str, CachedGrade]) -> None:
        # Under the file lock: whatever is on disk now (other writers' grades) plus ours.
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._refresh_if_changed()
        with self._state_lock:
            merged = {**self._entries, **batch}
        write_text_atomic(self.path, _render(merged))
        with self._state_lock:
            self._entries = {**merged, **self._entries}
            self._loaded_signature = self._signature()
