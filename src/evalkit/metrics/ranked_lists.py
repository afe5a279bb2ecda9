"""The built-in retrieval families over one query's plain lists of grades, without numpy.

:mod:`evalkit.metrics.batch` scores many queries with numpy; importing numpy costs more
than scoring a 10^5-line TREC run file, so the file path (:mod:`evalkit._spec.trec_plain`)
scores here instead, one query at a time.  Each value is the double batch computes: the
same operation on the same operands, and every sum added in rank order from 0.0 as
batch's ``bincount`` adds.  (Floats are added with ``reduce(add, ..., 0.0)``, never ``sum()``:
from Python 3.12 ``sum()`` compensates, which batch does not.)
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from functools import reduce
from itertools import compress, count, islice, repeat
from operator import add, truediv
from typing import Literal, TypeAlias

from evalkit.metrics import core

__all__ = ["BUILTIN_FAMILIES", "PlainKind", "QueryGrades", "builtin_kind", "plain_kind"]

PlainKind: TypeAlias = Literal["precision", "recall", "hit_rate", "mrr", "map", "ndcg"]

_KINDS: dict[Callable[..., float], PlainKind] = {
    core.precision_at_k: "precision",
    core.recall_at_k: "recall",
    core.hit_rate_at_k: "hit_rate",
    core.mrr_at_k: "mrr",
    core.map_at_k: "map",
    core.ndcg_at_k: "ndcg",
}

# The built-in families by name, as :func:`evalkit.metrics.builtin.register_builtins`
# registers them, each over the formula of the same name (tests/test_trec_plain.py).
BUILTIN_FAMILIES: dict[str, PlainKind] = {
    "precision": "precision",
    "recall": "recall",
    "hit_rate": "hit_rate",
    "mrr": "mrr",
    "map": "map",
    "ndcg": "ndcg",
}

_positive = (0).__lt__  # grade > 0: a gain (UNJUDGED, int64's least, is none)
_plus_one = (1.0).__add__
# _DISCOUNT[r] == log2(r + 2.0): the discount of 0-based rank r, as batch's np.log2 gives it.
_DISCOUNT: list[float] = []


def plain_kind(fn: Callable[..., float]) -> PlainKind | None:
    """Which built-in formula a family function is; ``None`` for any other function."""
    return _KINDS.get(fn)


def builtin_kind(spec: str) -> tuple[PlainKind, int] | None:
    """The family and k of ``spec`` when it is a built-in family's ``name@k`` spelt as the
    registry names it (k in ASCII digits, no leading zero); ``None`` for anything else."""
    base, sep, k_text = spec.partition("@")
    kind = BUILTIN_FAMILIES.get(base) if sep else None
    if kind is None or not (k_text.isascii() and k_text.isdigit()) or k_text.startswith("0"):
        return None
    return kind, int(k_text)


def _discounts(n: int) -> list[float]:
    if len(_DISCOUNT) < n:
        _DISCOUNT.extend(math.log2(r + 2.0) for r in range(len(_DISCOUNT), n))
    return _DISCOUNT


def _dcg(gains: Sequence[int]) -> float:
    disc = _discounts(len(gains))
    ranks = list(compress(count(), map(_positive, gains)))
    return reduce(
        add, map(truediv, map(gains.__getitem__, ranks), map(disc.__getitem__, ranks)), 0.0
    )


class QueryGrades:
    """One query: the grade at each ranked position, best first, and its judged grades.

    ``ranked`` holds ``UNJUDGED`` (:data:`evalkit.metrics.rankings.UNJUDGED`) for an
    unjudged id; the ids are distinct (a TREC run repeats none).
    """

    __slots__ = ("_hits", "_n_relevant", "judged", "level", "ranked")

    def __init__(self, ranked: list[int], judged: Mapping[int, int], level: int) -> None:
        self.ranked = ranked
        self.judged = judged  # grade -> how many ids are judged so (a Counter of the qrels)
        self.level = level
        self._hits: list[int] | None = None
        self._n_relevant: int | None = None

    @property
    def hits(self) -> list[int]:
        """0-based ranks of the relevant ids (grade >= level), best first."""
        if self._hits is None:
            self._hits = list(compress(count(), map(self.level.__le__, self.ranked)))
        return self._hits

    @property
    def n_relevant(self) -> int:
        """Judged ids with grade >= level: the recall and MAP denominator."""
        if self._n_relevant is None:
            self._n_relevant = sum(n for grade, n in self.judged.items() if grade >= self.level)
        return self._n_relevant

    def _hits_within(self, k: int) -> int:
        return bisect_left(self.hits, k)  # hits are ascending ranks

    def _ideal_dcg(self, k: int) -> float:
        """DCG@k of every positive judged grade, best first."""
        ideal: list[int] = []
        for grade in sorted(filter(_positive, self.judged), reverse=True):
            ideal += repeat(grade, min(self.judged[grade], k - len(ideal)))
            if len(ideal) >= k:
                break
        return _dcg(ideal)

    def value(self, kind: PlainKind, k: int) -> float:
        """The family's value at ``k`` (batch's ``_precision``, ``_recall``... exactly)."""
        if kind == "precision":
            return self._hits_within(k) / k
        if kind == "recall":
            n_rel = self.n_relevant
            return self._hits_within(k) / n_rel if n_rel > 0 else 0.0
        if kind == "hit_rate":
            return 1.0 if self._hits_within(k) > 0 else 0.0
        if kind == "mrr":
            hits = self.hits
            return 1.0 / (hits[0] + 1.0) if hits and hits[0] < k else 0.0
        if kind == "map":
            n_rel = self.n_relevant
            if n_rel <= 0:
                return 0.0
            # The n-th hit (1-based) at 0-based rank r adds n / (r + 1.0), in rank order.
            ranks = map(_plus_one, islice(self.hits, self._hits_within(k)))
            return reduce(add, map(truediv, count(1), ranks), 0.0) / n_rel
        ideal = self._ideal_dcg(k)
        return _dcg(list(islice(self.ranked, k))) / ideal if ideal > 0 else 0.0
