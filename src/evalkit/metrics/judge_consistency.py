"""Judge self-consistency: the same answer graded twice by the same judge."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

from evalkit.errors import MetricError
from evalkit.metrics.agreement import agreement

if TYPE_CHECKING:
    from evalkit._model.results import Row


def regrading(metrics: Sequence[str], *, on: bool = True) -> AbstractContextManager[None]:
    """Within the block, every LLM judge among ``metrics`` grades each case twice."""
    from evalkit._model.registry import get_metric
    from evalkit.metrics.judge_base import judges_set

    fns = []
    for name in metrics if on else ():
        try:
            fns.append(get_metric(name).fn)
        except MetricError:
            continue  # evaluate() reports the unknown name
    return judges_set(fns, "regrade", lambda: True)


def _grade(meta: object, key: str) -> float | None:
    value = meta.get(key) if isinstance(meta, dict) else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def regrade_pairs(rows: Sequence[Row], metric: str) -> tuple[list[float], list[float]]:
    """(first grades, second grades) of the rows graded twice by ``metric``'s judge."""
    from evalkit.metrics.judge_base import REGRADE_SUFFIX

    first: list[float] = []
    second: list[float] = []
    for row in rows:
        response = row.response
        if response is None or row.error is not None:
            continue
        a = _grade(response.meta, f"{metric}_score")
        b = _grade(response.meta, f"{metric}{REGRADE_SUFFIX}_score")
        if a is not None and b is not None:
            first.append(a)
            second.append(b)
    return first, second


def consistency_notes(
    rows: Sequence[Row],
    judge_metrics: Sequence[str],
    *,
    seed: int = 0,
    n_resamples: int = 2000,
) -> list[str]:
    """One report line per judge whose cases were graded twice (none otherwise)."""
    notes: list[str] = []
    for metric in judge_metrics:
        first, second = regrade_pairs(rows, metric)
        if not first:
            continue
        same = sum(a == b for a, b in zip(first, second, strict=True))
        label = (
            f"{metric}: judge self-consistency (the first trial's answer graded twice, "
            f"{same} of {len(first)} grade(s) identical): "
        )
        try:
            result = agreement(first, second, n_resamples=n_resamples, seed=seed)
        except MetricError as exc:
            notes.append(f"{label}κ and ρ not computed ({exc})")
            continue
        notes.append(label + result.line(what="agreement of the two grades"))
    return notes
