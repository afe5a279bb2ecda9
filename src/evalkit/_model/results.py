"""Per-case rows and runs: the unit of truth everything else derives from."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Generic, Protocol, TypeVar

from evalkit.errors import MetricError, MissingMetricError, OutputKindError

# Where a repeated run (evalkit/_engine/trials.py) keeps every trial's values in a row's meta:
# ``meta[TRIALS_KEY] == {metric: [v1, ...]}``.  Readers of rows look for it too.
TRIALS_KEY = "trials"
_ONLY_STR = frozenset({str})


class TargetResponse:
    """One response of a system under test: ranked ids, text, or both.

    ``latency_ms`` is the target's time for this case, ``raw`` the unparsed body, ``meta``
    numbers such as cost that aggregates read.  Built as 0.2.0's ``TargetResponse(output,
    latency_ms, raw, meta)`` (``output``: ids best first, or a ``str``) or with
    ``ranked_ids=`` and/or ``text=``.  ``ranked_ids`` of a text-only response, or ``text``
    of an ids-only one, raises :class:`~evalkit.errors.OutputKindError` rather than an
    empty value that would score as zero; ``has_ids``/``has_text`` ask without raising.
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
        ids = None if ranked_ids is None else tuple(ranked_ids)
        if ids is not None and not _ONLY_STR.issuperset(map(type, ids)):
            ids = tuple(str(i) for i in ids)  # str(i) is i for a str: only others pay
        self._ids: tuple[str, ...] | None = ids
        self._text = text
        self.latency_ms = float(latency_ms)
        self.raw = raw
        self.meta: dict[str, Any] = dict(meta or {})

    @classmethod
    def _checked(
        cls,
        ids: list[str] | None,
        text: str | None,
        latency_ms: float,
        meta: dict[str, Any],
    ) -> TargetResponse:
        """A response from parts a reader has already checked (ids all ``str``, text a
        ``str``, at least one given), skipping the constructor's checks."""
        self = cls.__new__(cls)
        self._ids = None if ids is None else tuple(ids)
        self._text = text
        self.latency_ms = latency_ms
        self.raw = None
        self.meta = meta
        return self

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


class Row(Protocol):
    """What statistics, aggregates and checks need from one evaluated case."""

    @property
    def query_id(self) -> str: ...

    @property
    def metrics(self) -> Mapping[str, float]: ...

    @property
    def response(self) -> TargetResponse | None: ...

    @property
    def error(self) -> str | None:
        """Why the case produced no result, or ``None`` when it ran."""
        ...


@dataclass
class QueryResult:
    """One query of a retrieval run (:func:`evalkit.run`)."""

    query_id: str
    retrieved: list[str]
    metrics: dict[str, float]
    latency_ms: float | None = None

    @property
    def response(self) -> TargetResponse:
        """The row seen as a target response, so aggregates work on both paths."""
        return TargetResponse(self.retrieved, latency_ms=self.latency_ms or 0.0)

    @property
    def error(self) -> None:
        """A scored retrieval query never failed (the Row protocol's ``error``)."""
        return None


@dataclass
class CaseResult:
    """A target's response welded to the golden case it answered.

    ``error`` is set (and ``response`` may be ``None``) when the case failed;
    a failed case has no metric values and is never scored as zero.
    """

    case_id: str
    response: TargetResponse | None
    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None

    # A property whose getter is C: every reader asks every row for its id (#27).
    query_id = property(attrgetter("case_id"))

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def retrieved(self) -> list[str]:
        """The ranked ids of the response; empty for a text answer or a failed case (0.2.0)."""
        if self.response is None or not self.response.has_ids:
            return []
        return self.response.ranked_ids

    @classmethod
    def from_response(
        cls, case_id: str, response: TargetResponse, metrics: Mapping[str, float]
    ) -> CaseResult:
        """A successful row: 0.2.0's constructor, argument for argument."""
        return cls(case_id, response, dict(metrics))


R = TypeVar("R", QueryResult, CaseResult)


@dataclass
class RunResult(Generic[R]):
    """A named run: every per-case row, kept.  Aggregates are derived on demand."""

    name: str
    per_query: list[R]

    def __len__(self) -> int:
        return len(self.per_query)

    def ids(self) -> list[str]:
        return [row.query_id for row in self.per_query]

    def metric_names(self) -> list[str]:
        """Per-case metric names present on at least one row, first-seen order."""
        seen: dict[str, None] = {}
        for row in self.per_query:
            for name in row.metrics:
                seen.setdefault(name, None)
        return list(seen)

    def values(self, metric: str) -> dict[str, float]:
        """``{query_id: value}`` for a per-case metric; raises if any row lacks it."""
        try:  # one pass when every row has it (the gate asks 20 times per run)
            return {row.query_id: row.metrics[metric] for row in self.per_query}
        except KeyError:  # so at least one row lacks it
            missing = [row.query_id for row in self.per_query if metric not in row.metrics]
        if len(missing) == len(self.per_query):
            computed = ", ".join(self.metric_names()) or "none"
            raise MissingMetricError(
                f"run {self.name!r}: metric {metric!r} was not computed (computed: {computed})"
            )
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise MissingMetricError(
            f"run {self.name!r}: metric {metric!r} is missing on {len(missing)} of "
            f"{len(self.per_query)} case(s): {shown} (failed cases are never scored as zero)"
        )

    def mean(self, metric: str) -> float:
        """Mean of a per-case metric over every row (aggregates use :meth:`aggregate`)."""
        if not self.per_query:
            raise MetricError(
                f"run {self.name!r} is empty (no rows): the mean of nothing is undefined"
            )
        values = list(self.values(metric).values())
        return math.fsum(values) / len(values)

    def aggregate(self, name: str) -> float:
        """Compute a registered whole-run aggregate over the rows."""
        from evalkit._model.registry import get_metric

        defn = get_metric(name)
        if defn.kind != "aggregate":
            raise MetricError(f"{name!r} is a per-case metric: use mean({name!r})")
        return float(defn.fn(self.per_query))

    def value(self, name: str) -> float:
        """The run's number for ``name``: the mean of a per-case metric or an aggregate."""
        from evalkit._model.registry import get_metric

        computed = any(name in row.metrics for row in self.per_query)
        if not computed and get_metric(name).kind == "aggregate":
            return self.aggregate(name)
        return self.mean(name)


def rows_by_id(rows: Sequence[R], what: str) -> dict[str, R]:
    """Index rows by id, refusing duplicates (pairing by id needs unique ids)."""
    out: dict[str, R] = {}
    for row in rows:
        if row.query_id in out:
            raise MetricError(f"{what}: case id {row.query_id!r} appears more than once")
        out[row.query_id] = row
    return out
