"""Client metrics, registered the way a paired-evalkit 0.2.0 project registers them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from evalkit import register_aggregate, register_metric


@register_metric("first_hit", higher_is_better=True)
def first_hit(response: Any, case: Any) -> float:
    """1.0 when the top-ranked book is one the case lists as relevant."""
    ranked = response.ranked_ids
    return 1.0 if ranked and ranked[0] in case.relevant else 0.0


@register_aggregate("empty_rate", higher_is_better=False)
def empty_rate(rows: Sequence[Any]) -> float:
    """Share of cases whose response listed no book at all."""
    return sum(1 for row in rows if not row.response.ranked_ids) / len(rows)
