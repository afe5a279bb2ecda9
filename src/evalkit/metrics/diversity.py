"""Diversity aggregates, importable as in paired-evalkit 0.2.0."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from evalkit._model.registry import register_aggregate
from evalkit._model.results import Row
from evalkit.errors import RegistryError
from evalkit.metrics.builtin import item_entropy
from evalkit.metrics.builtin import max_item_share as _share

__all__ = ["POLARITY", "entropy", "max_item_share", "register_diversity_metric"]

# Concentration is bad, spread is good: the two point opposite ways on one run.
POLARITY: Final = {"max_item_share": False, "entropy": True}


def max_item_share(rows: Sequence[Row], top_k: int | None = None) -> float:
    """Largest fraction of queries whose response shows one same item."""
    return _share(rows, top_k)


def entropy(rows: Sequence[Row], top_k: int | None = None) -> float:
    """Shannon entropy of how often each item is shown, normalised to [0, 1]."""
    return item_entropy(rows, top_k)


def register_diversity_metric(base: str, top_k: int) -> str:
    """Register ``f"{base}@{top_k}"`` (base ``max_item_share`` or ``entropy``); returns the name."""
    formulas = {"max_item_share": max_item_share, "entropy": entropy}
    if base not in formulas:
        raise RegistryError(
            f"unknown diversity metric {base!r}; known: {', '.join(sorted(formulas))}"
        )
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise RegistryError(f"{base}: top_k must be a positive integer, got {top_k!r}")
    formula = formulas[base]

    def windowed(rows: Sequence[Row]) -> float:
        return formula(rows, top_k)

    name = f"{base}@{top_k}"
    register_aggregate(name, higher_is_better=POLARITY[base])(windowed)
    return name
