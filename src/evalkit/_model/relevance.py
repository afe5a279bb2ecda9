"""What "relevant" means: binary sets, graded judgments, and the relevance level."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any, TypeAlias

from evalkit.errors import MetricError

Grades: TypeAlias = Mapping[str, int]
Relevance: TypeAlias = Collection[str] | Mapping[str, int]
"""One query's judgments: a collection of relevant ids (grade 1) or id -> grade."""


def check_level(relevance_level: object) -> int:
    """Validate a relevance level: a positive int (trec_eval's ``-l``, default 1)."""
    if isinstance(relevance_level, bool) or not isinstance(relevance_level, int):
        raise MetricError(f"relevance_level must be an integer, got {relevance_level!r}")
    if relevance_level < 1:
        raise MetricError(
            f"relevance_level must be >= 1, got {relevance_level}: grade 0 means judged "
            "not relevant, and negative grades are never relevant"
        )
    return relevance_level


def as_grades(relevant: Iterable[str] | Grades, *, query_id: str | None = None) -> Grades:
    """The judgments as ``{id: grade}``; a plain collection means grade 1 for each id."""
    if isinstance(relevant, Mapping):
        return relevant
    if isinstance(relevant, str | bytes):
        where = f" for query {query_id!r}" if query_id is not None else ""
        raise MetricError(
            f"relevant ids{where} must be a set of ids or an {{id: grade}} mapping, "
            f"not the single string {relevant!r}"
        )
    return dict.fromkeys(relevant, 1)


def relevant_ids(relevant: Relevance, relevance_level: int = 1) -> frozenset[str]:
    """The ids that count as relevant at ``relevance_level`` (binarised judgments)."""
    grades = as_grades(relevant)
    return frozenset(doc for doc, grade in grades.items() if grade >= relevance_level)


@functools.lru_cache(maxsize=512)
def accepts_relevance_level(fn: Callable[..., Any]) -> bool:
    """True when ``fn`` takes a ``relevance_level`` keyword (so it understands grades)."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    param = params.get("relevance_level")
    return param is not None and param.kind in (
        inspect.Parameter.KEYWORD_ONLY,
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
    )


def call_retrieval_fn(
    fn: Callable[..., float],
    retrieved: Sequence[str],
    relevant: Relevance,
    k: int,
    *,
    relevance_level: int = 1,
) -> float:
    """Call a ``(retrieved, relevant, k)`` family function with graded-aware dispatch."""
    if accepts_relevance_level(fn):
        return float(fn(retrieved, relevant, k, relevance_level=relevance_level))
    if isinstance(relevant, Mapping) or relevance_level != 1:
        return float(fn(retrieved, relevant_ids(relevant, relevance_level), k))
    return float(fn(retrieved, relevant, k))
