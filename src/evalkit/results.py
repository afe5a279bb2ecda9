"""Per-case rows and runs: the unit of truth everything else derives from."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

from evalkit.errors import MetricError, MissingMetricError
from evalkit.targets.base import TargetResponse


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

    @property
    def query_id(self) -> str:
        return self.case_id

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
        missing = [row.query_id for row in self.per_query if metric not in row.metrics]
        if missing and len(missing) == len(self.per_query):
            computed = ", ".join(self.metric_names()) or "none"
            raise MissingMetricError(
                f"run {self.name!r}: metric {metric!r} was not computed (computed: {computed})"
            )
        if missing:
            shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
            raise MissingMetricError(
                f"run {self.name!r}: metric {metric!r} is missing on {len(missing)} of "
                f"{len(self.per_query)} case(s): {shown} (failed cases are never scored as zero)"
            )
        return {row.query_id: row.metrics[metric] for row in self.per_query}

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
        from evalkit.registry import get_metric

        defn = get_metric(name)
        if defn.kind != "aggregate":
            raise MetricError(f"{name!r} is a per-case metric: use mean({name!r})")
        return float(defn.fn(self.per_query))

    def value(self, name: str) -> float:
        """The run's number for ``name``: the mean of a per-case metric or an aggregate."""
        from evalkit.registry import get_metric

        if any(name in row.metrics for row in self.per_query):
            return self.mean(name)
        if get_metric(name).kind == "aggregate":
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
