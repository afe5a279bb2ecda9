"""Fitting a markdown document into a size budget without cutting anything in half."""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import accumulate

from evalkit.report.summary import more_not_shown


def size(text: str) -> int:
    return len(text.encode("utf-8"))


@dataclass
class Rows:
    """Whole lines (each ending in a newline) that may be cut from the end."""

    rows: list[str]
    priority: int
    unit: str = "cases"
    opening: str = ""  # always emitted
    head: str = ""  # emitted only with at least one row (a table's header lines)
    closing: str = ""  # always emitted
    floor: int = 10  # rows kept before any more important part gets its full share
    soft: int = 1_000_000  # rows shown before any less important part grows past its floor
    shown: int = -1
    # Rows there are in all, when only the first of them were formatted (no more fit).
    total: int = -1
    _prefix: list[int] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.shown < 0:
            self.shown = len(self.rows)
        if self.total < len(self.rows):
            self.total = len(self.rows)
        self._prefix = [0, *accumulate(size(r) for r in self.rows)]

    def note(self, k: int) -> str:
        omitted = self.total - k
        return f"\n{more_not_shown(omitted, self.unit)}\n" if omitted else ""

    def size(self, k: int | None = None) -> int:
        k = self.shown if k is None else k
        body = size(self.head) + self._prefix[k] if k else 0
        # opening/closing are measured each time: callers may wrap them after creation.
        return size(self.opening) + size(self.closing) + body + size(self.note(k))

    def text(self) -> str:
        k = self.shown
        body = self.head + "".join(self.rows[:k]) if k else ""
        return self.opening + body + self.note(k) + self.closing


@dataclass
class Section:
    """Parts that go together, replaced by ``dropped_note`` when there is no room."""

    parts: list[str | Rows]
    priority: int
    dropped_note: str = ""
    dropped: bool = False

    def size(self) -> int:
        return size(self.dropped_note) if self.dropped else sum(map(_size, self.parts))

    def text(self) -> str:
        return self.dropped_note if self.dropped else render(self.parts)


Part = str | Rows | Section


def _size(part: Part) -> int:
    return size(part) if isinstance(part, str) else part.size()


def render(doc: list[Part] | list[str | Rows]) -> str:
    return "".join(p if isinstance(p, str) else p.text() for p in doc)


def _all_rows(doc: list[Part]) -> list[tuple[Rows, Section | None]]:
    out: list[tuple[Rows, Section | None]] = []
    for part in doc:
        if isinstance(part, Rows):
            out.append((part, None))
        elif isinstance(part, Section):
            out.extend((p, part) for p in part.parts if isinstance(p, Rows))
    return out


def _grow(group: list[Rows], room: int, *, soft: bool) -> None:
    """Raise every row count in ``group`` to one shared cap, as high as ``room`` allows."""
    limits = [min(len(r.rows), r.soft) if soft else len(r.rows) for r in group]

    def counts(cap: int) -> list[int]:
        return [max(r.shown, min(lim, cap)) for r, lim in zip(group, limits, strict=True)]

    def cost(cap: int) -> int:
        return sum(r.size(k) for r, k in zip(group, counts(cap), strict=True))

    lo, hi = 0, max(limits)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if cost(mid) <= room:
            lo = mid
        else:
            hi = mid - 1
    for r, k in zip(group, counts(lo), strict=True):
        r.shown = k


def fit(doc: list[Part], budget: int) -> int:
    """Shorten/drop parts until the document fits ``budget`` bytes; returns its size."""
    rows = _all_rows(doc)
    sections = [p for p in doc if isinstance(p, Section)]
    priorities = sorted({r.priority for r, _ in rows} | {s.priority for s in sections})

    def live(priority: int) -> list[Rows]:
        return [r for r, s in rows if r.priority == priority and not (s and s.dropped)]

    def total() -> int:
        return sum(_size(p) for p in doc)

    for r, _ in rows:
        r.shown = min(r.floor, len(r.rows))
    for priority in priorities:
        if total() <= budget:
            break
        for r in live(priority):
            r.shown = 0
        # Drop later sections first: earlier ones are the more important of a priority.
        for section in reversed([s for s in sections if s.priority == priority]):
            if total() <= budget:
                break
            section.dropped = True
    for soft in (True, False):
        for priority in reversed(priorities):
            group = live(priority)
            if group:
                _grow(group, budget - (total() - sum(r.size() for r in group)), soft=soft)
    return total()
