"""Score many ranked lists at once: the vectorised twin of :mod:`evalkit.metrics.core`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence, Sized
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from evalkit._model import registry
from evalkit._model.golden_cases import GoldenCase
from evalkit._model.relevance import Grades, Relevance, as_grades, call_retrieval_fn, check_level
from evalkit._model.results import QueryResult, RunResult, TargetResponse
from evalkit._util.arrays import FloatArray, IntArray
from evalkit._util.bounded import paused_gc
from evalkit.errors import MetricError
from evalkit.metrics import core
from evalkit.metrics.rankings import UNJUDGED, QuerySelection, Rankings

# re-exported for evalkit._spec and evalkit._app, which still import them from here
__all__ = ["UNJUDGED", "QuerySelection", "paused_gc"]


_INT_TYPES = frozenset({int, np.int64, np.int32, np.int16, np.int8})


def _check_grades(query_ids: Sequence[str], judgments: Sequence[Grades]) -> None:
    """Ids must be strings and grades integers (bools, floats refused, naming the first)."""
    kinds = set(map(type, (g for grades in judgments for g in grades.values())))
    id_kinds = set(map(type, (d for grades in judgments for d in grades)))
    if kinds <= _INT_TYPES and id_kinds <= {str}:
        return
    for qid, grades in zip(query_ids, judgments, strict=True):
        for doc, grade in grades.items():
            if not isinstance(doc, str):
                raise MetricError(
                    f"qrels for query {qid!r}: id {doc!r} is a {type(doc).__name__}; ids "
                    "must be strings, or they would never match a ranked id"
                )
            if type(grade) not in _INT_TYPES:
                raise MetricError(
                    f"qrels for query {qid!r}: grade of {doc!r} is {grade!r}; "
                    "grades must be integers (a set of ids means grade 1)"
                )


@dataclass(eq=False)
class RankedGrades:
    """Judged rankings of many queries, ready for vectorised scoring.

    Built once per (rankings, qrels, level); every metric reuses it.
    """

    rankings: Rankings
    judgments: Sequence[Grades]
    relevance_level: int = 1
    # Each query's judged grades without their ids, where only those are kept (a TREC
    # file graded as its qrels were read: evalkit._spec.trec_read.grade_run); the
    # grades of the ranked ids are then given too, and ``judgments`` are not read.
    judged_grades: Sequence[IntArray] | None = None
    _by_k: dict[str, FloatArray] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        check_level(self.relevance_level)
        if len(self.judgments) != len(self.rankings):
            raise MetricError("RankedGrades: one judgment mapping per ranking is required")
        if self.judged_grades is not None and len(self.judged_grades) != len(self.rankings):
            raise MetricError("RankedGrades: one array of judged grades per ranking is required")

    @property
    def n_queries(self) -> int:
        return len(self.rankings)

    @cached_property
    def grades(self) -> IntArray:
        """The judged grade at every ranked position (``UNJUDGED`` if none)."""
        offs = self.rankings.offsets.tolist()
        docs = self.rankings.docnos
        check_repeats = not self.rankings.distinct
        flat: list[int] = []
        extend = flat.extend
        for i, grades in enumerate(self.judgments):
            a, b = offs[i], offs[i + 1]
            ranked = docs[a:b]
            if check_repeats and len(set(ranked)) != b - a:
                extend(core.ranked_grades(ranked, grades, UNJUDGED))
            else:
                extend(map(grades.get, ranked, repeat(UNJUDGED, b - a)))
        return _int64(flat)

    def _locate(self, mask: npt.NDArray[np.bool_]) -> tuple[IntArray, IntArray]:
        """Query index and 0-based rank of each position where ``mask`` holds."""
        where = np.flatnonzero(mask)
        offsets = self.rankings.offsets
        query = np.searchsorted(offsets, where, side="right") - 1
        return query, where - offsets[query]

    @cached_property
    def relevant_hits(self) -> tuple[IntArray, IntArray]:
        """(query index, rank) of every ranked relevant id (grade >= level)."""
        return self._locate(self.grades >= self.relevance_level)

    def hits_within(self, k: int) -> tuple[IntArray, IntArray]:
        """:attr:`relevant_hits` ranked in the top k."""
        q, pos = self.relevant_hits
        keep = pos < k
        return q[keep], pos[keep]

    @cached_property
    def gains(self) -> tuple[IntArray, IntArray, IntArray]:
        """(query index, rank, grade) of every ranked id with a positive grade."""
        positive = self.grades > 0
        return (*self._locate(positive), self.grades[positive])

    @cached_property
    def _judged(self) -> tuple[IntArray, IntArray]:
        """Every judged grade, flat, with its query index."""
        if self.judged_grades is not None:
            judged: Sequence[Sized] = self.judged_grades
            flat = np.concatenate([np.zeros(0, dtype=np.int64), *self.judged_grades])
        else:
            judged = self.judgments
            flat = _int64([v for g in self.judgments for v in g.values()])
        return flat, np.repeat(np.arange(self.n_queries), [len(g) for g in judged])

    @cached_property
    def n_relevant(self) -> FloatArray:
        """Judged ids with grade >= level, per query (the recall/MAP denominator)."""
        flat, qidx = self._judged
        return _sum_by_query(qidx[flat >= self.relevance_level], None, self.n_queries)

    def _get(self, key: str, build: Callable[[], FloatArray]) -> FloatArray:
        if key not in self._by_k:
            self._by_k[key] = build()
        return self._by_k[key]

    def ideal_dcg(self, k: int) -> FloatArray:
        """DCG@k of the ideal ranking: every positive grade, best first."""

        def build() -> FloatArray:
            flat, qidx = self._judged
            keep = flat > 0
            gains, q = flat[keep], qidx[keep]
            order = np.lexsort((-gains, q))
            gains, q = gains[order], q[order]
            starts = np.searchsorted(q, np.arange(self.n_queries))
            pos = np.arange(len(q)) - starts[q]
            cut = pos < k
            disc = gains[cut] / np.log2(pos[cut] + 2.0)
            return _sum_by_query(q[cut], disc, self.n_queries)

        return self._get(f"idcg@{k}", build)

    def _hits(self, k: int) -> FloatArray:
        return self._get(
            f"hits@{k}", lambda: _sum_by_query(self.hits_within(k)[0], None, self.n_queries)
        )


def _int64(values: list[int]) -> IntArray:
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        raise MetricError("qrels: a grade does not fit in a 64-bit integer") from None


def _sum_by_query(
    query_index: IntArray, weights: npt.NDArray[np.floating] | None, n_queries: int
) -> FloatArray:
    """Per-query sums (counts without weights), added in rank order like trec_eval."""
    sums = np.bincount(query_index, weights=weights, minlength=n_queries)
    return sums.astype(np.float64, copy=False)


def _safe_div(num: FloatArray, den: FloatArray) -> FloatArray:
    out = np.zeros_like(num)
    np.divide(num, den, out=out, where=den > 0)
    return out


def _first_of_each_query(q: IntArray) -> npt.NDArray[np.bool_]:
    first = np.ones(len(q), dtype=bool)
    first[1:] = q[1:] != q[:-1]
    return first


def _mrr(rg: RankedGrades, k: int) -> FloatArray:
    q, pos = rg.hits_within(k)
    first = _first_of_each_query(q)
    out = np.zeros(rg.n_queries, dtype=np.float64)
    out[q[first]] = 1.0 / (pos[first] + 1.0)
    return out


def _map(rg: RankedGrades, k: int) -> FloatArray:
    q, pos = rg.hits_within(k)
    # The i-th hit of a query (1-based) at rank r adds precision i / r.
    starts = np.flatnonzero(_first_of_each_query(q))
    counts = np.diff(np.append(starts, len(q)))
    nth_hit = np.arange(1, len(q) + 1) - np.repeat(starts, counts)
    total = _sum_by_query(q, nth_hit / (pos + 1.0), rg.n_queries)
    return _safe_div(total, rg.n_relevant)


def _ndcg(rg: RankedGrades, k: int) -> FloatArray:
    q, pos, grade = rg.gains
    keep = pos < k
    discounted = grade[keep] / np.log2(pos[keep] + 2.0)
    dcg = _sum_by_query(q[keep], discounted, rg.n_queries)
    return _safe_div(dcg, rg.ideal_dcg(k))


BatchFn: TypeAlias = Callable[[RankedGrades, int], FloatArray]

_BATCH: dict[Callable[..., float], BatchFn] = {
    core.precision_at_k: lambda rg, k: rg._hits(k) / k,
    core.recall_at_k: lambda rg, k: _safe_div(rg._hits(k), rg.n_relevant),
    core.ndcg_at_k: _ndcg,
    core.mrr_at_k: _mrr,
    core.map_at_k: _map,
    core.hit_rate_at_k: lambda rg, k: (rg._hits(k) > 0).astype(np.float64),
}


def is_builtin_formula(fn: Callable[..., float]) -> bool:
    """Whether ``fn`` is one of the built-in family formulas scored here vectorised."""
    return fn in _BATCH


def batch_metric(rg: RankedGrades, fn: Callable[..., float], k: int) -> FloatArray:
    """Per-query values of the family function ``fn`` at ``k``, one per ranking."""
    core._check_k(k)
    fast = _BATCH.get(fn)
    if fast is not None:
        return fast(rg, k)
    out = np.empty(rg.n_queries, dtype=np.float64)
    for i, grades in enumerate(rg.judgments):
        out[i] = call_retrieval_fn(
            fn, rg.rankings.ranking(i), grades, k, relevance_level=rg.relevance_level
        )
    return out


def _shown(ids: Iterable[str], limit: int = 5) -> str:
    items = list(ids)
    text = ", ".join(repr(i) for i in items[:limit])
    return text + (f" (+{len(items) - limit} more)" if len(items) > limit else "")


def _choose_queries(
    name: str, rankings: Rankings, qrels: Mapping[str, Relevance], queries: QuerySelection
) -> Rankings:
    ids = rankings.query_ids
    if queries == "run":
        missing = [q for q in ids if q not in qrels]
        if missing:
            raise MetricError(
                f"run {name!r}: {len(missing)} ranked "
                f"quer{'y is' if len(missing) == 1 else 'ies are'} missing from qrels: "
                f"{_shown(missing)}; judge them, or pass queries='both' "
                "to score only judged queries as trec_eval does"
            )
        return rankings
    if queries not in ("both", "qrels"):
        raise MetricError(f"queries must be 'both', 'qrels' or 'run', got {queries!r}")
    keep = [i for i, q in enumerate(ids) if q in qrels]
    extra: list[str] = []
    if queries == "qrels":
        ranked = set(ids)
        extra = [str(q) for q in qrels if q not in ranked]
    if not keep and not extra:
        raise MetricError(
            f"run {name!r}: no ranked query is judged (run: {_shown(ids) or 'no queries'}; "
            f"qrels: {_shown(qrels) or 'no queries'}); check that both use the same query ids"
        )
    return rankings.select(keep, extra)


def score_rankings(
    name: str,
    rankings: Rankings | Mapping[str, Sequence[str]],
    qrels: Mapping[str, Relevance],
    metrics: Sequence[str],
    *,
    relevance_level: int = 1,
    queries: QuerySelection = "both",
    _grades: IntArray | None = None,
    _checked_qrels: bool = False,
    _judged: Mapping[str, IntArray] | None = None,
) -> RunResult[QueryResult]:
    """Score existing rankings against qrels, one :class:`QueryResult` per query."""
    level = check_level(relevance_level)
    defs = registry.resolve_query_metrics(metrics)
    with paused_gc():
        flat = rankings if isinstance(rankings, Rankings) else Rankings.from_mapping(rankings)
        chosen = _choose_queries(name, flat, qrels, queries)
        judgments = [as_grades(qrels[qid], query_id=qid) for qid in chosen.query_ids]
        if not _checked_qrels:
            _check_grades(chosen.query_ids, judgments)
        judged = None if _judged is None else [_judged[qid] for qid in chosen.query_ids]
        rg = RankedGrades(chosen, judgments, level, judged)
        if _grades is not None:
            rg.grades = _select_grades(flat, chosen, _grades)
        columns: list[list[float]] = []
        for defn in defs:
            if defn.family is not None and defn.k is not None:
                fam = registry.families()[defn.family]
                columns.append(batch_metric(rg, fam.fn, defn.k).tolist())
            else:
                columns.append(_case_metric_column(defn, chosen, judgments))
        names = [d.name for d in defs]
        rows = [
            QueryResult(
                qid, chosen.ranking(i), dict(zip(names, (c[i] for c in columns), strict=True))
            )
            for i, qid in enumerate(chosen.query_ids)
        ]
        return RunResult(name, rows)


def _select_grades(flat: Rankings, chosen: Rankings, grades: IntArray) -> IntArray:
    """The precomputed grades of the queries ``chosen`` kept from ``flat``."""
    if chosen is flat:
        return grades
    index = {qid: i for i, qid in enumerate(flat.query_ids)}
    offs = flat.offsets.tolist()
    parts = [
        grades[offs[index[qid]] : offs[index[qid] + 1]] for qid in chosen.query_ids if qid in index
    ]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def _case_metric_column(
    defn: registry.MetricDef, rankings: Rankings, judgments: Sequence[Grades]
) -> list[float]:
    # A case metric sees the golden as the gate path does: grades, with the ids
    # graded >= 1 as ``relevant`` (GoldenCase's own rule); the level does not apply.
    out: list[float] = []
    for i, (qid, grades) in enumerate(zip(rankings.query_ids, judgments, strict=True)):
        case = GoldenCase(id=qid, query=qid, grades=dict(grades))
        out.append(float(defn.fn(TargetResponse(rankings.ranking(i)), case)))
    return out
