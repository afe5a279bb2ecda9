"""Turning what a user's function returned into a :class:`TargetResponse`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from evalkit._model.results import TargetResponse
from evalkit.errors import TargetError

ACCEPTED = "a list of ids (best first), a str of text, or a TargetResponse"

# An output of one of these types; ids may be ints (JSON ids often are) and are kept as str.
TargetOutput = Sequence[str | int] | str | TargetResponse


def one_line(text: str, limit: int = 200) -> str:
    """``text`` on one line (whitespace collapsed), cut to ``limit`` characters."""
    collapsed = " ".join(text.split())
    return collapsed if len(collapsed) <= limit else collapsed[: limit - 3] + "..."


def type_name(value: object) -> str:
    return "None" if value is None else type(value).__name__


def describe_exception(exc: BaseException) -> str:
    """``ValueError: message`` on one line (just the type when the message is empty)."""
    message = one_line(str(exc))
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def to_response(
    value: object,
    *,
    culprit: str,
    latency_ms: float,
    keep_reported_latency: bool,
    raw: Any = None,
    meta: Mapping[str, Any] | None = None,
) -> TargetResponse:
    """Build the response for ``value`` or raise a one-line :class:`TargetError`."""
    base_meta = dict(meta or {})
    if isinstance(value, TargetResponse):
        own_latency = value.latency_ms if keep_reported_latency else 0.0
        return TargetResponse(
            value.ranked_ids if value.has_ids else None,
            text=value.text if value.has_text else None,
            latency_ms=own_latency or latency_ms,
            raw=value.raw if value.raw is not None else raw,
            meta={**base_meta, **value.meta},
        )
    if isinstance(value, str):
        return TargetResponse(text=value, latency_ms=latency_ms, raw=raw, meta=base_meta)
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        ids = [_id_at(value, index, culprit) for index in range(len(value))]
        return TargetResponse(ids, latency_ms=latency_ms, raw=raw, meta=base_meta)
    raise TargetError(f"{culprit} returned {type_name(value)}{_hint(value)}; return {ACCEPTED}")


def _id_at(ids: Sequence[object], index: int, culprit: str) -> str:
    item = ids[index]
    # bool is an int subclass, but True as a document id is always a bug.
    if isinstance(item, int) and not isinstance(item, bool):
        return str(item)
    if isinstance(item, str) and item:
        return item
    shown = one_line(repr(item), 60)
    problem = "an empty string" if item == "" else f"{type_name(item)} {shown}"
    raise TargetError(
        f"{culprit} returned a list whose item {index} is {problem}; "
        "ids must be non-empty str (or int)"
    )


def _hint(value: object) -> str:
    if isinstance(value, bytes | bytearray):
        return " (decode it to str for text)"
    if isinstance(value, Mapping):
        return " (pick the ids out of it, e.g. [r['id'] for r in body['results']])"
    if hasattr(value, "__iter__") and not isinstance(value, Sequence):
        return " (wrap it in list(...))"
    return ""
