"""The retrieval path: ``run(name, retriever, queries, qrels, metrics)``."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, MutableMapping, Sequence
from typing import Any

from evalkit._model import registry
from evalkit._model.golden_cases import GoldenCase
from evalkit._model.relevance import as_grades, call_retrieval_fn, check_level
from evalkit._model.results import QueryResult, RunResult, TargetResponse
from evalkit.errors import MetricError, RegistryError, UnknownMetricError

# 0.2.0's names for the two callables run() takes: a retriever gets a query
# object (anything with ``.id``) and returns ids best first; a runner metric is
# ``(retrieved, relevant, k) -> float``.
Retriever = Callable[[Any], Sequence[str]]
MetricFn = registry.RetrievalFn

DEFAULT_METRICS: tuple[str, ...] = ("recall@1", "recall@5", "recall@10", "ndcg@10")


class _MetricsTable(MutableMapping[str, registry.RetrievalFn]):
    """``runner.METRICS``: a dict-like face on the registry's retrieval families."""

    def __getitem__(self, name: str) -> registry.RetrievalFn:
        try:
            return registry.families()[name].fn
        except KeyError:
            raise UnknownMetricError(
                f"no retrieval metric family {name!r}; known: {', '.join(self)}"
            ) from None

    def __setitem__(self, name: str, fn: registry.RetrievalFn) -> None:
        # Polarity is unknown here; polarity() will ask for it before gating.
        registry.register_family(name, fn, higher_is_better=None)

    def __delitem__(self, name: str) -> None:
        fam = registry.families().get(name)
        if fam is None:
            raise UnknownMetricError(f"no retrieval metric family {name!r}")
        raise RegistryError(
            f"retrieval family {name!r} cannot be removed: stored results may depend on it "
            "(use evalkit.registry.isolated() to scope experimental registrations)"
        )

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(registry.families()))

    def __len__(self) -> int:
        return len(registry.families())

    def __repr__(self) -> str:
        return f"METRICS({', '.join(self)})"


METRICS: MutableMapping[str, registry.RetrievalFn] = _MetricsTable()


def _query_text(query: Any) -> str:
    for attr in ("text", "query", "question"):
        value = getattr(query, attr, None)
        if isinstance(value, str) and value.strip():
            return value
    return str(getattr(query, "id", query))


def run(
    name: str,
    retriever: Callable[[Any], Sequence[str]],
    queries: Iterable[Any],
    qrels: Mapping[str, Iterable[str] | Mapping[str, int]],
    metrics: Sequence[str] = DEFAULT_METRICS,
    *,
    relevance_level: int = 1,
) -> RunResult[QueryResult]:
    """Run ``retriever`` on every query and score each one.

    ``queries`` are any objects with an ``id``; the retriever receives the
    object itself and returns ids best first.  ``qrels`` maps query ids to
    their relevant ids.  Every query must be judged: a query missing from
    ``qrels`` raises (naming it) instead of scoring 0.0.  Each row keeps the
    ranking, the metric values and the retriever's wall-clock latency.

    Graded qrels (``{query_id: {doc_id: grade}}``) work too: a set means grade
    1, and an id counts as relevant when its grade is ``>= relevance_level``
    (nDCG uses the raw grades as gains).
    """
    level = check_level(relevance_level)
    defs = registry.resolve_query_metrics(metrics)
    items = list(queries)
    if not items:
        raise MetricError(f"run {name!r}: no queries to run")
    ids: list[str] = []
    for q in items:
        qid = getattr(q, "id", None)
        if qid is None:
            raise MetricError(f"run {name!r}: query {q!r} has no .id attribute")
        ids.append(str(qid))
    dupes = sorted({i for i in ids if ids.count(i) > 1}) if len(set(ids)) != len(ids) else []
    if dupes:
        raise MetricError(f"run {name!r}: duplicate query ids: {', '.join(dupes[:10])}")
    missing = [qid for qid in ids if qid not in qrels]
    if missing:
        shown = ", ".join(missing[:10]) + (
            f" (+{len(missing) - 10} more)" if len(missing) > 10 else ""
        )
        raise MetricError(
            f"run {name!r}: {len(missing)} quer{'y is' if len(missing) == 1 else 'ies are'} "
            f"missing from qrels: {shown}. Unjudged queries would score 0.0 and look like a "
            "worse system; judge them or drop them from the query list"
        )

    rows: list[QueryResult] = []
    for qid, q in zip(ids, items, strict=True):
        started = time.perf_counter()
        got = retriever(q)
        latency_ms = (time.perf_counter() - started) * 1000.0
        if isinstance(got, str) or not isinstance(got, Sequence):
            raise MetricError(
                f"run {name!r}: retriever returned {type(got).__name__} for query {qid!r}; "
                "it must return a list of ids, best first"
            )
        retrieved = [str(doc) for doc in got]
        judged = qrels[qid]
        relevant: dict[str, int] | frozenset[str] = (
            dict(judged)
            if isinstance(judged, Mapping)
            else frozenset(str(doc) for doc in as_grades(judged, query_id=qid))
        )
        scores: dict[str, float] = {}
        for defn in defs:
            if defn.family is not None and defn.k is not None:
                fam = registry.families()[defn.family]
                scores[defn.name] = call_retrieval_fn(
                    fam.fn, retrieved, relevant, defn.k, relevance_level=level
                )
            else:
                case = (
                    GoldenCase(id=qid, query=_query_text(q), grades=relevant)
                    if isinstance(relevant, Mapping)
                    else GoldenCase(id=qid, query=_query_text(q), relevant=relevant)
                )
                response = TargetResponse(retrieved, latency_ms=latency_ms)
                scores[defn.name] = float(defn.fn(response, case))
        rows.append(QueryResult(qid, retrieved, scores, latency_ms=latency_ms))
    return RunResult(name, rows)
