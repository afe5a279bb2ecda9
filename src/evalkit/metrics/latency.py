"""Latency aggregates, importable as in paired-evalkit 0.2.0."""

from __future__ import annotations

from collections.abc import Sequence

from evalkit._model.results import Row
from evalkit.errors import MetricError
from evalkit.metrics.builtin import latency_mean, latency_percentile, nearest_rank

__all__ = ["latency_mean", "latency_p50", "latency_p95", "latency_p99", "percentile"]


def percentile(sorted_values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile: ``p`` in [0, 100]; p0 is the minimum, p100 the maximum.

    No values raises :class:`MetricError` (0.2.0 returned 0.0, a number that
    would pass any latency ceiling without a single measurement).
    """
    if isinstance(p, bool) or not 0 <= p <= 100:
        raise MetricError(f"percentile must be in [0, 100], got {p}")
    if not sorted_values:
        raise MetricError("a percentile of no values is undefined")
    if p == 0:
        return float(min(sorted_values))
    return nearest_rank(sorted_values, p)


def latency_p50(rows: Sequence[Row]) -> float:
    return latency_percentile(rows, 50)


def latency_p95(rows: Sequence[Row]) -> float:
    return latency_percentile(rows, 95)


def latency_p99(rows: Sequence[Row]) -> float:
    return latency_percentile(rows, 99)
