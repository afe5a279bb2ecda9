"""Declaring slices: the config's ``slices:`` dimensions checked against the goldens at load.

A dimension no case carries is a typo or a forgotten field, never "every case is in no
slice": it is refused with the config's line and the closest field the cases do carry.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from evalkit._model.golden_cases import GoldenSet
from evalkit._util.suggest import did_you_mean
from evalkit.errors import ConfigError, GoldenError

__all__ = ["declare_slices"]


def _fields(context: Mapping[str, Any], prefix: str = "") -> Iterable[str]:
    for key, value in context.items():
        name = f"{prefix}{key}"
        yield name
        if isinstance(value, Mapping):
            yield from _fields(value, f"{name}.")


def declare_slices(goldens: GoldenSet, dimensions: Iterable[str], where: str) -> GoldenSet:
    """``goldens`` with ``dimensions`` declared as slices; ``where`` is the config's
    ``file:line`` of ``slices:``.  Raises :class:`ConfigError` for a dimension no case
    has, :class:`GoldenError` (naming the case) for a value that cannot label a slice."""
    dims = list(dimensions)
    if not dims:
        return goldens
    present: set[str] = set()
    for case in goldens:
        present.update(_fields(case.context))
    source = goldens.source or "the goldens"
    for dim in dims:
        if dim not in present:
            known = ", ".join(sorted(present)[:12]) or "none"
            raise ConfigError(
                f"{where}: slices: no case in {source} has a field {dim!r}"
                f"{did_you_mean(dim, sorted(present))} (the cases' fields: {known})"
            )
    try:
        return goldens.with_slices(dims)
    except GoldenError as exc:
        raise GoldenError(f"{exc} (declared as a slice dimension at {where})") from None
