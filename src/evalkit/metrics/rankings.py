"""Ranked lists of many queries, flattened: the layout scoring works on."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeAlias

from evalkit.errors import MetricError

if TYPE_CHECKING:
    from evalkit._util.arrays import IntArray


QuerySelection: TypeAlias = Literal["both", "qrels", "run"]

UNJUDGED: int = -(2**63)
"""Grade stored for an unjudged id or a repeat (int64's least): below every level, no gain."""


def offsets_of(lengths: Sequence[int]) -> IntArray:
    """``[0, l0, l0 + l1, ...]`` as an int64 array: where each query's positions start."""
    import numpy as np

    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


@dataclass(frozen=True, eq=False)
class Rankings:
    """Ranked lists of many queries, flattened."""

    query_ids: list[str]
    offsets: IntArray
    docnos: list[str]
    distinct: bool = False

    def __post_init__(self) -> None:
        if len(self.offsets) != len(self.query_ids) + 1:
            raise MetricError("Rankings: offsets must have one entry more than query_ids")
        if len(set(self.query_ids)) != len(self.query_ids):
            raise MetricError("Rankings: query ids must be unique")

    @classmethod
    def from_mapping(cls, rankings: Mapping[str, Sequence[str]]) -> Rankings:
        """Flatten ``{query_id: [ids best first]}``."""
        query_ids: list[str] = []
        docnos: list[str] = []
        lengths: list[int] = []
        for qid, ranked in rankings.items():
            if isinstance(ranked, str | bytes) or not isinstance(ranked, Sequence):
                raise MetricError(
                    f"ranking of query {qid!r} must be a list of ids best first, "
                    f"got {type(ranked).__name__}"
                )
            if not set(map(type, ranked)) <= {str}:
                bad = next(d for d in ranked if not isinstance(d, str))
                raise MetricError(
                    f"ranking of query {qid!r}: ids must be strings, got {bad!r} "
                    f"({type(bad).__name__}); an id of another type would never match the qrels"
                )
            query_ids.append(str(qid))
            docnos.extend(ranked)
            lengths.append(len(ranked))
        offsets = offsets_of(lengths)
        return cls(query_ids, offsets, docnos)

    def __len__(self) -> int:
        return len(self.query_ids)

    def ranking(self, index: int) -> list[str]:
        """The ranked ids of the ``index``-th query."""
        return self.docnos[int(self.offsets[index]) : int(self.offsets[index + 1])]

    def as_dict(self) -> dict[str, list[str]]:
        """``{query_id: [ids best first]}``."""
        return {qid: self.ranking(i) for i, qid in enumerate(self.query_ids)}

    def select(self, indices: Sequence[int], extra_empty: Sequence[str] = ()) -> Rankings:
        """The queries at ``indices`` (in that order), then empty rankings for ``extra_empty``."""
        offs = self.offsets.tolist()
        if list(indices) == list(range(len(self.query_ids))) and not extra_empty:
            return self
        docnos: list[str] = []
        lengths: list[int] = []
        for i in indices:
            a, b = offs[i], offs[i + 1]
            docnos.extend(self.docnos[a:b])
            lengths.append(b - a)
        lengths.extend(0 for _ in extra_empty)
        offsets = offsets_of(lengths)
        ids = [self.query_ids[i] for i in indices] + list(extra_empty)
        return Rankings(ids, offsets, docnos, self.distinct)
