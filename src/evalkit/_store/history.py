"""Promotion history and the pinned reference baseline."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalkit._model.formats import HISTORY_INDEX_VERSION
from evalkit._spec.artifact import encode_json_lines
from evalkit._util import bounded as _bounded
from evalkit.errors import ArtifactError, InputError

if TYPE_CHECKING:
    from evalkit._store.protocol import BaselineFetch

PinKind = Literal["ago", "date", "tag"]

_AGO = re.compile(r"^\s*(?:~|-)?(\d{1,6})(?:\s*(?:promotions?\s+)?ago)?\s*$", re.IGNORECASE)
_DATE = re.compile(r"^\s*(?:date:)?(\d{4}-\d{2}-\d{2})\s*$", re.IGNORECASE)
_TAG_PREFIX = re.compile(r"^\s*(?:tag|release):\s*", re.IGNORECASE)
_TAG_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/+-]{0,199}$")


@dataclass(frozen=True)
class HistoryEntry:
    """One promotion: where its artefact is now, and what it was made from."""

    sha: str | None  # the commit the promoted run was built from, when known
    promoted_at: datetime | None  # when it became the baseline (UTC), when known
    config_fingerprint: str | None  # the run's config fingerprint, when it recorded one
    path: Path  # a local file holding that promotion's run artefact
    label: str  # e.g. "a1b2c3d 2026-11-30", for tables and plots


def entry_label(sha: str | None, promoted_at: datetime | None) -> str:
    """``"a1b2c3d 2026-11-30"``: a short commit and the promotion day, for tables and plots."""
    commit = sha[:7] if sha else "no-commit"
    day = promoted_at.astimezone(UTC).date().isoformat() if promoted_at else "undated"
    return f"{commit} {day}"


def make_entry(
    path: Path,
    *,
    sha: str | None,
    promoted_at: datetime | None,
    config_fingerprint: str | None,
) -> HistoryEntry:
    return HistoryEntry(sha, promoted_at, config_fingerprint, path, entry_label(sha, promoted_at))


@dataclass(frozen=True)
class History:
    """A store's promotions of one config, oldest first, and what the store could not keep."""

    entries: tuple[HistoryEntry, ...]
    source: str  # "file", "branch", "artifact" or "none"
    detail: str  # one sentence: where they came from, and what was lost to retention
    lost: int = 0  # promotions the store knows of but no longer holds (artifact retention)


# ----------------------------------------------------------------------------- pinning


@dataclass(frozen=True)
class PinSpec:
    """What to pin: the promotion N steps back, the one in effect on a day, or a tag's."""

    kind: PinKind
    ago: int = 0
    day: date | None = None
    tag: str | None = None

    def describe(self) -> str:
        if self.kind == "ago":
            return "the latest promotion" if self.ago == 0 else f"{self.ago} promotion(s) ago"
        if self.kind == "date":
            assert self.day is not None
            return f"the baseline in effect on {self.day.isoformat()}"
        return f"the promotion of tag {self.tag}"

    def text(self) -> str:
        """The spec as :func:`parse_pin` reads it back (stored in the pin record)."""
        if self.kind == "ago":
            return f"{self.ago} promotions ago"
        if self.kind == "date":
            assert self.day is not None
            return self.day.isoformat()
        return f"tag:{self.tag}"


def parse_pin(text: str, *, where: str = "pin") -> PinSpec:
    """``"3 promotions ago"`` / ``"~3"`` / ``"3"``, ``"2026-11-30"``, ``"v1.2"`` / ``"tag:v1.2"``.

    A bare word is a tag (a GitHub release is its tag); a number is "promotions ago".
    """
    if not isinstance(text, str) or not text.strip():
        raise InputError(
            f"{where}: empty; give a tag or release (v1.2), a date (2026-11-30) or "
            "'N promotions ago' (0 is the latest)"
        )
    ago = _AGO.match(text)
    if ago:
        return PinSpec("ago", ago=int(ago.group(1)))
    day = _DATE.match(text)
    if day:
        try:
            return PinSpec("date", day=date.fromisoformat(day.group(1)))
        except ValueError:
            raise InputError(f"{where}: {text.strip()!r} is not a calendar date") from None
    tag = _TAG_PREFIX.sub("", text).strip()
    if not _TAG_NAME.match(tag) or ".." in tag:
        raise InputError(
            f"{where}: {text.strip()!r} is neither a tag/release name, a date (YYYY-MM-DD) "
            "nor 'N promotions ago'"
        )
    return PinSpec("tag", tag=tag)


@dataclass(frozen=True)
class TaggedCommit:
    """What a tag points at: its commit and that commit's time (for "in effect then")."""

    sha: str
    committed_at: datetime | None


def select_pinned(
    entries: Sequence[HistoryEntry],
    spec: PinSpec,
    resolve_tag: Callable[[str], TaggedCommit | None] | None = None,
) -> tuple[HistoryEntry, str]:
    """The promotion ``spec`` names among ``entries`` (oldest first), with why it was chosen."""
    if not entries:
        raise InputError(
            "nothing to pin: no promotion is recorded yet; promote a baseline first "
            "(`evalkit promote`, or the Action's mode: promote)"
        )
    newest_first = list(reversed(entries))
    if spec.kind == "ago":
        if spec.ago >= len(newest_first):
            raise InputError(
                f"cannot pin {spec.ago} promotions ago: only {len(entries)} promotion(s) are "
                f"kept (the oldest is {entries[0].label}); pin 0-{len(entries) - 1} promotions ago"
            )
        return newest_first[spec.ago], spec.describe()
    if spec.kind == "date":
        assert spec.day is not None
        end = datetime.combine(spec.day + timedelta(days=1), time(0), tzinfo=UTC)
        chosen = _in_effect_at(newest_first, end)
        if chosen is None:
            raise InputError(
                f"no promotion on or before {spec.day.isoformat()}: the oldest kept is "
                f"{entries[0].label}"
            )
        assert chosen.promoted_at is not None  # only a dated promotion is in effect
        when = chosen.promoted_at.isoformat(timespec="seconds")
        return chosen, f"{spec.describe()} (promoted {when})"
    assert spec.tag is not None
    if resolve_tag is None:
        raise InputError(f"cannot resolve tag {spec.tag!r} here: no git repository to ask")
    tagged = resolve_tag(spec.tag)
    if tagged is None:
        raise InputError(f"tag or release {spec.tag!r} does not exist")
    for entry in newest_first:
        if entry.sha and entry.sha == tagged.sha:
            return entry, f"{spec.describe()} ({tagged.sha[:12]})"
    if tagged.committed_at is not None:
        chosen = _in_effect_at(newest_first, tagged.committed_at, inclusive=True)
        if chosen is not None:
            return chosen, (
                f"the baseline in effect when tag {spec.tag} was made ({tagged.sha[:12]} "
                "was not promoted itself)"
            )
    raise InputError(
        f"no promotion matches tag {spec.tag!r} (commit {tagged.sha[:12]}): none was built "
        f"from it or promoted before it; the oldest kept is {entries[0].label}"
    )


def _in_effect_at(
    newest_first: Sequence[HistoryEntry], moment: datetime, *, inclusive: bool = False
) -> HistoryEntry | None:
    for entry in newest_first:
        at = entry.promoted_at
        if at is not None and (at <= moment if inclusive else at < moment):
            return entry
    return None


@dataclass(frozen=True)
class PinRecord:
    """A pinned reference as stored beside its copy: what was asked, what it resolved to."""

    spec: str  # PinSpec.text()
    why: str  # how the promotion was chosen
    sha: str | None
    promoted_at: datetime | None
    config_fingerprint: str | None
    pinned_at: datetime

    def to_json(self) -> str:
        return json.dumps(_json_fields(self), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str | bytes, origin: str) -> PinRecord:
        try:
            doc: Any = json.loads(text)
        except ValueError as exc:
            raise ArtifactError(
                f"{origin}: not valid JSON ({exc}); pin the reference again"
            ) from None
        if not isinstance(doc, dict) or not isinstance(doc.get("spec"), str):
            raise ArtifactError(f"{origin}: not an evalkit pin record; pin the reference again")
        pinned = parse_time(doc.get("pinned_at")) or datetime.fromtimestamp(0, UTC)
        return cls(doc["spec"], str(doc.get("why") or ""), *_facts(doc), pinned_at=pinned)

    @classmethod
    def of(cls, entry: HistoryEntry, spec: PinSpec, why: str, now: datetime) -> PinRecord:
        return cls(spec.text(), why, entry.sha, entry.promoted_at, entry.config_fingerprint, now)

    def describe(self) -> str:
        commit = self.sha[:12] if self.sha else "an unknown commit"
        promoted = _iso(self.promoted_at) or "an unknown time"
        return f"{commit} promoted {promoted}, pinned {_iso(self.pinned_at)} as {self.why}"


# ----------------------------------------------------------------------------- the index


@dataclass(frozen=True)
class PromotionRecord:
    """One promotion as a store's index records it (``file`` is relative to the store)."""

    file: str
    sha: str | None
    promoted_at: datetime | None
    config_fingerprint: str | None

    def entry(self, path: Path) -> HistoryEntry:
        return make_entry(
            path,
            sha=self.sha,
            promoted_at=self.promoted_at,
            config_fingerprint=self.config_fingerprint,
        )


def with_promotion(
    records: Sequence[PromotionRecord], record: PromotionRecord, *, latest_sha: str | None
) -> list[PromotionRecord]:
    """The index (oldest first) once ``record`` is promoted."""
    listed = list(records)
    if record.sha:
        for i, old in enumerate(listed):
            if old.sha == record.sha:
                listed[i] = replace(record, promoted_at=old.promoted_at or record.promoted_at)
                return listed
    if latest_sha and latest_sha != record.sha:
        for i in range(len(listed) - 1, -1, -1):
            if listed[i].sha == latest_sha:
                return [*listed[:i], record, *listed[i:]]
    return [*listed, record]


def pruned(
    records: Sequence[PromotionRecord], keep: int | None
) -> tuple[list[PromotionRecord], list[PromotionRecord]]:
    """``(kept, dropped)``: the newest ``keep`` promotions of an index (oldest first)."""
    listed = list(records)
    if keep is None or len(listed) <= keep:
        return listed, []
    return listed[-keep:], listed[:-keep]


def index_dumps(config_name: str, records: Sequence[PromotionRecord]) -> bytes:
    """The history index a store keeps (oldest promotion first)."""
    doc = {
        "evalkit_history": HISTORY_INDEX_VERSION,
        "config": config_name,
        "promotions": [_json_fields(r) for r in records],
    }
    # One promotion per line through json's C encoder (indent= would run the pure-Python
    # one): a long history still diffs line by line in the store's branch.
    return encode_json_lines(doc, "promotions").encode("utf-8")


def index_loads(data: bytes | None, origin: str) -> list[PromotionRecord]:
    """Read :func:`index_dumps`'s output; no index (None) is an empty history."""
    if data is None:
        return []
    try:
        doc: Any = _bounded.loads(data)
    except ValueError as exc:
        raise ArtifactError(f"{origin}: the history index is not valid JSON ({exc})") from None
    promotions = doc.get("promotions") if isinstance(doc, dict) else None
    if not isinstance(promotions, list) or doc.get("evalkit_history") != HISTORY_INDEX_VERSION:
        raise ArtifactError(
            f"{origin}: not an evalkit history index (version {HISTORY_INDEX_VERSION}); "
            "move it away and promote again to start a new history"
        )
    records = []
    for i, item in enumerate(promotions):
        if not isinstance(item, dict) or not isinstance(item.get("file"), str):
            raise ArtifactError(f"{origin}: promotions[{i}] has no 'file'")
        records.append(PromotionRecord(item["file"], *_facts(item)))
    return records


def promotion_stem(sha: str | None, promoted_at: datetime) -> str:
    """``20261130T101500Z-a1b2c3d4e5f6``: sortable, one per promotion."""
    stamp = promoted_at.astimezone(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    return f"{stamp}-{sha[:12] if sha else 'no-commit'}"


def artefact_facts(data: bytes, origin: str) -> tuple[str | None, str | None]:
    """``(git commit, config fingerprint)`` an artefact recorded (gzip or plain JSON)."""
    from evalkit._store.protocol import artefact_document

    doc = artefact_document(data, origin)
    if not isinstance(doc, dict):
        raise ArtifactError(f"{origin}: not an evalkit run artefact")
    git = doc.get("git")
    commit = git.get("commit") if isinstance(git, dict) else None
    return _opt_str(commit), _opt_str(doc.get("config_fingerprint"))


def reference_found(path: Path, record: PinRecord, source: str, where: str) -> BaselineFetch:
    from evalkit._store.protocol import BaselineFetch

    return BaselineFetch(
        status="found",
        path=path,
        source=source,
        sha=record.sha,
        detail=f"{where}: {record.describe()}",
    )


def no_reference(source: str, where: str, how: str) -> BaselineFetch:
    from evalkit._store.protocol import BaselineFetch

    return BaselineFetch(
        status="missing",
        path=None,
        source=source,
        detail=f"no reference pinned ({where}); pin one with {how}",
    )


def _iso(moment: datetime | None) -> str | None:
    return moment.astimezone(UTC).isoformat(timespec="seconds") if moment else None


def _json_fields(record: PinRecord | PromotionRecord) -> dict[str, Any]:
    """The record's fields as JSON values, in field order (times as ISO text)."""
    fields = asdict(record).items()
    return {k: _iso(v) if isinstance(v, datetime) else v for k, v in fields}


def _facts(doc: dict[str, Any]) -> tuple[str | None, datetime | None, str | None]:
    """``(sha, promoted_at, config_fingerprint)`` as a stored record holds them."""
    promoted_at = parse_time(doc.get("promoted_at"))
    return _opt_str(doc.get("sha")), promoted_at, _opt_str(doc.get("config_fingerprint"))


def _opt_str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


def parse_time(value: object) -> datetime | None:
    """An ISO time (``Z`` accepted) as an aware UTC datetime, or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
