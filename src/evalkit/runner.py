"""The retrieval path: ``run(name, retriever, queries, qrels, metrics)``.

The public path (a face that only re-exports): the code lives in
:mod:`evalkit._engine.runner`, and nothing inside evalkit imports this module.
"""

from __future__ import annotations

from evalkit._engine.runner import (
    DEFAULT_METRICS,
    METRICS,
    MetricFn,
    QueryResult,
    Retriever,
    RunResult,
    run,
)

__all__ = [
    "DEFAULT_METRICS",
    "METRICS",
    "MetricFn",
    "QueryResult",
    "Retriever",
    "RunResult",
    "run",
]
