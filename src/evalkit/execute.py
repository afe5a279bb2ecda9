"""Run a target over a golden set: target × goldens → one row per case."""

from __future__ import annotations

from evalkit._engine.client_load import ClientSaturationWarning
from evalkit._engine.execute import RowCallback, RunOptions, evaluate, score_case, timed_out
from evalkit._model.registry import resolve_metrics

__all__ = [
    "ClientSaturationWarning",
    "RowCallback",
    "RunOptions",
    "evaluate",
    "resolve_metrics",
    "score_case",
    "timed_out",
]
