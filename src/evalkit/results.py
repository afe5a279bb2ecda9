"""Per-case rows and runs: the unit of truth everything else derives from."""

from __future__ import annotations

from evalkit._model.results import (
    TRIALS_KEY,
    CaseResult,
    QueryResult,
    R,
    Row,
    RunResult,
    TargetResponse,
    rows_by_id,
)

__all__ = [
    "CaseResult",
    "QueryResult",
    "R",
    "Row",
    "RunResult",
    "TRIALS_KEY",
    "TargetResponse",
    "rows_by_id",
]
