"""A run file's rankings, as read: :class:`TrecRun`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeAlias

from evalkit.metrics.rankings import Rankings

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    FloatArray: TypeAlias = npt.NDArray[np.float64]
else:
    # A name for annotations: at run time a string, so that defining it imports no numpy.
    FloatArray = "numpy.typing.NDArray[numpy.float64]"


def _no_scores() -> FloatArray:
    import numpy as np

    return np.zeros(0, dtype=np.float64)


@dataclass(frozen=True, eq=False)
class TrecRun(Rankings):
    """A run file's rankings in trec_eval's order, with their scores.

    ``query_ids`` keep the order of first appearance in the file; ``docnos`` and
    ``scores`` are ranked within each query.  No query repeats a document.
    ``tag`` is the run tag of the last line (trec_eval keeps that one).
    """

    scores: FloatArray = field(default_factory=_no_scores)
    tag: str | None = None
    source: str | None = None

    def scored(self, index: int) -> list[tuple[str, float]]:
        """``[(doc_id, score), ...]`` of the ``index``-th query, best first."""
        a, b = int(self.offsets[index]), int(self.offsets[index + 1])
        return list(zip(self.docnos[a:b], self.scores[a:b].tolist(), strict=True))
