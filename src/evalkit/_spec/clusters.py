"""Declaring clusters: the config's ``clusters:`` field checked against the goldens at load.

A field no case carries is a typo or a forgotten field, never "every case is its own
cluster" (which is what declaring nothing means): it is refused with the config's line
and the closest field the cases do carry.
"""

from __future__ import annotations

from evalkit._model.golden_cases import GoldenSet
from evalkit._spec.slices import require_fields
from evalkit.errors import GoldenError

__all__ = ["declare_clusters"]


def declare_clusters(goldens: GoldenSet, name: str | None, where: str) -> GoldenSet:
    """``goldens`` with ``name`` declared as the cluster field; ``where`` is the config's
    ``file:line`` of ``clusters:``.  Raises :class:`ConfigError` for a field no case has,
    :class:`GoldenError` (naming the case) for a value that cannot name a cluster."""
    if name is None:
        return goldens
    require_fields(goldens, [name], where, "clusters")
    try:
        return goldens.with_clusters(name)
    except GoldenError as exc:
        raise GoldenError(f"{exc} (declared as the cluster field at {where})") from None
