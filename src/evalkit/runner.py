"""The retrieval path: ``run(name, retriever, queries, qrels, metrics)``."""

from __future__ import annotations

from evalkit._engine.runner import DEFAULT_METRICS, METRICS, MetricFn, Retriever, run
from evalkit._model.results import QueryResult, RunResult

__all__ = [
    "DEFAULT_METRICS",
    "METRICS",
    "MetricFn",
    "QueryResult",
    "Retriever",
    "RunResult",
    "run",
]
