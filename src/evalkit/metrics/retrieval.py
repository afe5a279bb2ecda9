"""Retrieval metrics on the target path, built from the ``metrics.core`` formulas."""

from __future__ import annotations

from typing import Final

from evalkit._model.registry import (
    RetrievalFn,
    register_concrete_family_metric,
    register_family,
)

__all__ = ["DEFAULT_KS", "register_retrieval_metric"]

# The k of every ``recall@k`` registered by name out of the box (builtin.py registers
# them); any other k resolves through the family all the same.
DEFAULT_KS: Final = (1, 3, 5, 10, 20)


def register_retrieval_metric(
    name: str,
    fn: RetrievalFn,
    k: int,
    *,
    higher_is_better: bool,
    version: str | None = None,
    bounds: tuple[float | None, float | None] | None = None,
) -> str:
    """Register ``f"{name}@{k}"`` as a per-case metric computing ``fn(ids, relevant, k)``."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        from evalkit.errors import RegistryError

        raise RegistryError(f"retrieval metric {name!r}: k must be a positive integer, got {k!r}")
    register_family(name, fn, higher_is_better=higher_is_better, version=version, bounds=bounds)
    return register_concrete_family_metric(name, k).name
