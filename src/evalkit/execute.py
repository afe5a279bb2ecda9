"""Run a target over a golden set: target × goldens → one row per case."""

from __future__ import annotations

from evalkit._engine.execute import (
    ClientSaturationWarning,
    RowCallback,
    RunOptions,
    evaluate,
    resolve_metrics,
    score_case,
    timed_out,
)

__all__ = [
    "ClientSaturationWarning",
    "RowCallback",
    "RunOptions",
    "evaluate",
    "resolve_metrics",
    "score_case",
    "timed_out",
]
