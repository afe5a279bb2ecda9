"""What a target is, and what it returns."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from evalkit.errors import OutputKindError, TargetError

if TYPE_CHECKING:
    from evalkit.goldens import GoldenCase


class TargetResponse:
    """One response of a system under test: ranked ids, text, or both.

    ``latency_ms`` is the time the target took for this case, ``raw`` keeps the
    unparsed body for debugging, ``meta`` carries numbers such as cost that
    aggregates read.

    Two ways to build one, both supported:

    * ``TargetResponse(output, latency_ms, raw, meta)`` as in paired-evalkit
      0.2.0, where ``output`` is a list of ids (best first) or a ``str`` of text;
    * ``TargetResponse(ranked_ids=[...], text="...", latency_ms=...)``, which can
      also carry both kinds at once.

    Asking for ``ranked_ids`` of a text-only response, or ``text`` of an
    ids-only one, raises :class:`~evalkit.errors.OutputKindError` (a
    ``TargetError`` and a ``MetricError``) rather than returning an empty value
    that would score as zero.  ``has_ids`` / ``has_text`` ask without raising.
    """

    __slots__ = ("_ids", "_text", "latency_ms", "meta", "raw")

    def __init__(
        self,
        output: Sequence[str] | str | None = None,
        latency_ms: float = 0.0,
        raw: Any = None,
        meta: Mapping[str, Any] | None = None,
        *,
        ranked_ids: Sequence[str] | None = None,
        text: str | None = None,
    ) -> None:
        if output is not None:
            if isinstance(output, str):
                if text is not None:
                    raise ValueError("TargetResponse: give the text once, as output= or text=")
                text = output
            else:
                if ranked_ids is not None:
                    raise ValueError("TargetResponse: give the ids once, as output= or ranked_ids=")
                ranked_ids = output
        if ranked_ids is None and text is None:
            raise ValueError(
                "a TargetResponse needs output (ids or text), or ranked_ids, text, or both"
            )
        if isinstance(ranked_ids, str):
            raise TypeError("ranked_ids must be a sequence of ids, not a single string")
        if text is not None and not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        self._ids: tuple[str, ...] | None = (
            None if ranked_ids is None else tuple(str(i) for i in ranked_ids)
        )
        self._text = text
        self.latency_ms = float(latency_ms)
        self.raw = raw
        self.meta: dict[str, Any] = dict(meta or {})

    @property
    def has_ids(self) -> bool:
        return self._ids is not None

    @property
    def has_text(self) -> bool:
        return self._text is not None

    @property
    def ranked_ids(self) -> list[str]:
        """Ids best first.  Raises :class:`OutputKindError` for a text-only response."""
        if self._ids is None:
            raise OutputKindError(
                "this response carries text, not ranked ids (a retrieval metric expected "
                "a ranked list of ids, got text): use a target whose extract returns a "
                "list of ids, or a metric that scores text"
            )
        return list(self._ids)

    @property
    def text(self) -> str:
        """The text answer.  Raises :class:`OutputKindError` for an ids-only response."""
        if self._text is None:
            raise OutputKindError(
                "expected a text output, got a ranked list of ids: use a target that "
                "returns text, or a metric that scores rankings"
            )
        return self._text

    @property
    def output(self) -> list[str] | str:
        """The response as 0.2.0 exposed it: the ids when there are any, else the text."""
        return list(self._ids) if self._ids is not None else self.text

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TargetResponse):
            return NotImplemented
        return (
            self._ids == other._ids
            and self._text == other._text
            and self.latency_ms == other.latency_ms
            and self.raw == other.raw
            and self.meta == other.meta
        )

    __hash__ = None  # type: ignore[assignment]  # mutable meta: not hashable

    def __repr__(self) -> str:
        parts = []
        if self._ids is not None:
            parts.append(f"ranked_ids={list(self._ids)!r}")
        if self._text is not None:
            shown = self._text if len(self._text) <= 60 else self._text[:57] + "..."
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


__all__ = ["Target", "TargetError", "TargetResponse"]
