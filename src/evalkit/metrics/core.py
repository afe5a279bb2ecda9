"""Retrieval metric formulas, shape ``(retrieved, relevant, k) -> float``."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TypeVar

from evalkit._model.relevance import Relevance, as_grades, check_level
from evalkit.errors import MetricError

_M = TypeVar("_M")

__all__ = [
    "hit_rate_at_k",
    "map_at_k",
    "mrr_at_k",
    "ndcg_at_k",
    "precision_at_k",
    "recall_at_k",
]


def _check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise MetricError(f"k must be a positive integer, got {k!r}")
    return k


def ranked_grades(ranked: Sequence[str], grades: Mapping[str, int], missing: _M) -> list[int | _M]:
    """Grade of each ranked id; ``missing`` for unjudged ids and repeats."""
    seen: set[str] = set()
    out: list[int | _M] = []
    for doc in ranked:
        out.append(missing if doc in seen else grades.get(doc, missing))
        seen.add(doc)
    return out


def _prepare(
    retrieved: Sequence[str], relevant: Relevance, k: int, relevance_level: int
) -> tuple[list[int | None], Mapping[str, int], int]:
    _check_k(k)
    level = check_level(relevance_level)
    if isinstance(retrieved, str | bytes) or not isinstance(retrieved, Sequence):
        raise MetricError(
            f"retrieved must be a list of ids, best first, got {type(retrieved).__name__}"
        )
    grades = as_grades(relevant)
    return ranked_grades(retrieved[:k], grades, None), grades, level


def _n_relevant(grades: Mapping[str, int], level: int) -> int:
    return sum(1 for grade in grades.values() if grade >= level)


def _is_rel(grade: int | None, level: int) -> bool:
    return grade is not None and grade >= level


def precision_at_k(
    retrieved: Sequence[str], relevant: Relevance, k: int, *, relevance_level: int = 1
) -> float:
    """Relevant ids in the top k, divided by k (even when fewer were returned)."""
    top, _, level = _prepare(retrieved, relevant, k, relevance_level)
    return sum(1 for g in top if _is_rel(g, level)) / k


def recall_at_k(
    retrieved: Sequence[str], relevant: Relevance, k: int, *, relevance_level: int = 1
) -> float:
    """Share of the relevant judged ids found in the top k.  None relevant: 0.0."""
    top, grades, level = _prepare(retrieved, relevant, k, relevance_level)
    n_rel = _n_relevant(grades, level)
    if n_rel == 0:
        return 0.0
    return sum(1 for g in top if _is_rel(g, level)) / n_rel


def ndcg_at_k(
    retrieved: Sequence[str], relevant: Relevance, k: int, *, relevance_level: int = 1
) -> float:
    """nDCG@k with linear gain: sum of grade / log2(rank + 1), over the ideal ordering.

    The ideal ranking places every judged id with a positive grade best first
    (cut at k).  ``relevance_level`` does not apply (trec_eval's ``ndcg_cut``
    ignores it too).  With a set of ids this is binary nDCG: gain 1 per hit and
    an ideal of ``min(k, |relevant|)`` hits.  No positive grade: 0.0.
    """
    top, grades, _ = _prepare(retrieved, relevant, k, relevance_level)
    dcg = 0.0
    for rank, grade in enumerate(top):
        if grade is not None and grade > 0:
            dcg += grade / math.log2(rank + 2)
    ideal_gains = sorted((g for g in grades.values() if g > 0), reverse=True)[:k]
    ideal = 0.0
    for rank, grade in enumerate(ideal_gains):
        ideal += grade / math.log2(rank + 2)
    return dcg / ideal if ideal > 0.0 else 0.0


def mrr_at_k(
    retrieved: Sequence[str], relevant: Relevance, k: int, *, relevance_level: int = 1
) -> float:
    """Reciprocal rank of the first relevant id within the top k, else 0.0."""
    top, _, level = _prepare(retrieved, relevant, k, relevance_level)
    for rank, grade in enumerate(top, start=1):
        if _is_rel(grade, level):
            return 1.0 / rank
    return 0.0


def map_at_k(
    retrieved: Sequence[str], relevant: Relevance, k: int, *, relevance_level: int = 1
) -> float:
    """Average precision cut at k: mean over *all* relevant judged ids of the
    precision at each one's rank (0 for those not in the top k).  None: 0.0."""
    top, grades, level = _prepare(retrieved, relevant, k, relevance_level)
    n_rel = _n_relevant(grades, level)
    if n_rel == 0:
        return 0.0
    hits = 0
    total = 0.0
    for rank, grade in enumerate(top, start=1):
        if _is_rel(grade, level):
            hits += 1
            total += hits / rank
    return total / n_rel


def hit_rate_at_k(
    retrieved: Sequence[str], relevant: Relevance, k: int, *, relevance_level: int = 1
) -> float:
    """1.0 if any relevant id is in the top k, else 0.0."""
    top, _, level = _prepare(retrieved, relevant, k, relevance_level)
    return 1.0 if any(_is_rel(g, level) for g in top) else 0.0
