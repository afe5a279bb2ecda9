"""What a target is, and what it returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from evalkit.errors import MetricError

if TYPE_CHECKING:
    from evalkit.goldens import GoldenCase


class TargetResponse:
    """One response of a system under test: ranked ids, text, or both.

    ``latency_ms`` is the time the target took for this case, ``raw`` keeps the
    unparsed body for debugging, ``meta`` carries numbers such as cost that
    aggregates read.  Asking for ``ranked_ids`` of a text-only response raises
    rather than returning an empty ranking that would score as zero.
    """

    __slots__ = ("_ids", "latency_ms", "meta", "raw", "text")

    def __init__(
        self,
        ranked_ids: Sequence[str] | None = None,
        *,
        text: str | None = None,
        latency_ms: float = 0.0,
        raw: Any = None,
        meta: Mapping[str, Any] | None = None,
    ) -> None:
        if ranked_ids is None and text is None:
            raise ValueError("a TargetResponse needs ranked_ids, text, or both")
        if isinstance(ranked_ids, str):
            raise TypeError("ranked_ids must be a sequence of ids, not a single string")
        self._ids: tuple[str, ...] | None = (
            None if ranked_ids is None else tuple(str(i) for i in ranked_ids)
        )
        self.text = text
        self.latency_ms = float(latency_ms)
        self.raw = raw
        self.meta: dict[str, Any] = dict(meta or {})

    @property
    def has_ids(self) -> bool:
        return self._ids is not None

    @property
    def ranked_ids(self) -> list[str]:
        """Ids best first.  Raises :class:`MetricError` for a text-only response."""
        if self._ids is None:
            raise MetricError(
                "this response carries text, not ranked ids: a retrieval metric "
                "needs a target whose extract returns a list of ids"
            )
        return list(self._ids)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TargetResponse):
            return NotImplemented
        return (
            self._ids == other._ids
            and self.text == other.text
            and self.latency_ms == other.latency_ms
            and self.raw == other.raw
            and self.meta == other.meta
        )

    __hash__ = None  # type: ignore[assignment]  # mutable meta: not hashable

    def __repr__(self) -> str:
        parts = []
        if self._ids is not None:
            parts.append(f"ranked_ids={list(self._ids)!r}")
        if self.text is not None:
            shown = self.text if len(self.text) <= 60 else self.text[:57] + "..."
            parts.append(f"text={shown!r}")
        parts.append(f"latency_ms={self.latency_ms:.1f}")
        if self.meta:
            parts.append(f"meta={self.meta!r}")
        return f"TargetResponse({', '.join(parts)})"


@runtime_checkable
class Target(Protocol):
    """Anything with a ``name`` that turns a golden case into a response."""

    name: str

    def invoke(self, case: GoldenCase) -> TargetResponse: ...
