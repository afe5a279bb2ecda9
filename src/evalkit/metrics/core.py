"""Retrieval metric formulas, shape ``(retrieved, relevant, k) -> float``.

Pure functions over plain ids, so they can be checked by hand.  Binary
relevance: an id is relevant iff it is in ``relevant``.  Duplicate ids in a
ranking count once, at their first position, so a system cannot raise its own
score by repeating a hit.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence


def _first_k_unique(retrieved: Sequence[str], k: int) -> list[str]:
    seen: set[str] = set()
    out: list[str] = []
    for doc in retrieved[:k]:
        if doc not in seen:
            seen.add(doc)
            out.append(doc)
    return out


def _check_k(k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")


def recall_at_k(retrieved: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Share of the relevant ids found in the top k.  No relevant ids: 0.0."""
    _check_k(k)
    if not relevant:
        return 0.0
    hits = sum(1 for doc in _first_k_unique(retrieved, k) if doc in relevant)
    return hits / len(relevant)


def precision_at_k(retrieved: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Relevant ids in the top k, divided by k (even when fewer were returned)."""
    _check_k(k)
    hits = sum(1 for doc in _first_k_unique(retrieved, k) if doc in relevant)
    return hits / k


def ndcg_at_k(retrieved: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Binary nDCG: gain 1 per relevant id at rank r, discounted by log2(r + 1).

    The ideal ranking puts min(k, |relevant|) relevant ids first.  No relevant
    ids: 0.0.
    """
    _check_k(k)
    if not relevant:
        return 0.0
    dcg = sum(
        1.0 / math.log2(rank + 2)
        for rank, doc in enumerate(retrieved[:k])
        if doc in relevant and doc not in retrieved[:rank]
    )
    ideal = sum(1.0 / math.log2(rank + 2) for rank in range(min(k, len(relevant))))
    return dcg / ideal


def mrr_at_k(retrieved: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Reciprocal rank of the first relevant id within the top k, else 0.0."""
    _check_k(k)
    for rank, doc in enumerate(retrieved[:k], start=1):
        if doc in relevant:
            return 1.0 / rank
    return 0.0


def hit_rate_at_k(retrieved: Sequence[str], relevant: Collection[str], k: int) -> float:
    """1.0 if any relevant id is in the top k, else 0.0."""
    _check_k(k)
    return 1.0 if any(doc in relevant for doc in retrieved[:k]) else 0.0
