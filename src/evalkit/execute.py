"""Run a target over a golden set: target × goldens → one row per case.

The public path (a face that only re-exports): the code lives in
:mod:`evalkit._engine.execute`, and nothing inside evalkit imports this module.
"""

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
