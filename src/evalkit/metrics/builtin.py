"""The metrics every evalkit import registers."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from itertools import chain

from evalkit._model.registry import (
    NON_NEGATIVE,
    UNIT,
    Bounds,
    MetricDef,
    define,
    register_concrete_family_metric,
    register_family,
)
from evalkit._model.results import Row
from evalkit.errors import MetricError
from evalkit.metrics.core import (
    hit_rate_at_k,
    map_at_k,
    mrr_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
)
from evalkit.metrics.retrieval import DEFAULT_KS

NDCG_KS = (10,)
PERCENTILES = (50, 95, 99)
SHARE_KS = (1, 3, 10)


def nearest_rank(values: Sequence[float], p: float) -> float:
    """The p-th percentile by nearest rank: the ceil(p/100 · n)-th smallest value."""
    if not values:
        raise MetricError("a percentile of no values is undefined")
    if not 0 < p <= 100:
        raise ValueError(f"percentile must be in (0, 100], got {p}")
    ordered = sorted(values)
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return float(ordered[rank - 1])


def _responded(rows: Sequence[Row], metric: str) -> list[Row]:
    if not rows:
        raise MetricError(f"{metric}: the run has no rows, so the aggregate is undefined")
    answered = [r for r in rows if r.response is not None]
    if not answered:
        raise MetricError(f"{metric}: every case failed, so there is nothing to aggregate")
    return answered


def _latencies(rows: Sequence[Row], metric: str) -> list[float]:
    out: list[float] = []
    unmeasured: list[str] = []
    for row in _responded(rows, metric):
        assert row.response is not None
        # A retrieval row read from a TREC run has no latency: it is unknown, not 0 ms.
        if getattr(row, "latency_ms", 0.0) is None:
            unmeasured.append(row.query_id)
        out.append(row.response.latency_ms)
    if unmeasured:
        shown = ", ".join(unmeasured[:5]) + (" ..." if len(unmeasured) > 5 else "")
        raise MetricError(
            f"{metric}: {len(unmeasured)} case(s) have no recorded latency ({shown}); "
            "a latency that was not measured cannot count as 0 ms"
        )
    return out


def _item_sets(rows: Sequence[Row], metric: str, k: int | None) -> list[set[str]]:
    out: list[set[str]] = []
    for row in _responded(rows, metric):
        assert row.response is not None
        ids = row.response.ranked_ids
        out.append(set(ids if k is None else ids[:k]))
    return out


def max_item_share(rows: Sequence[Row], k: int | None = None) -> float:
    """Largest share of queries that show one same item (ids deduped per response)."""
    name = "max_item_share" if k is None else f"max_item_share@{k}"
    sets = _item_sets(rows, name, k)
    # A response listed anything exactly when its first item exists.
    whole = sets if k is None else _item_sets(rows, name, 1)
    answered = sum(1 for items in whole if items)
    counts: Counter[str] = Counter(chain.from_iterable(sets))
    if not counts:
        return 0.0
    return max(counts.values()) / answered


def item_entropy(rows: Sequence[Row], k: int | None = None) -> float:
    """Shannon entropy of how often each item is shown, divided by log(#items)."""
    sets = _item_sets(rows, "entropy" if k is None else f"entropy@{k}", k)
    counts: Counter[str] = Counter()
    for items in sets:
        counts.update(items)
    if len(counts) <= 1:
        return 0.0
    total = sum(counts.values())
    h = -math.fsum((c / total) * math.log(c / total) for c in counts.values())
    return min(1.0, max(0.0, h / math.log(len(counts))))


def latency_percentile(rows: Sequence[Row], p: int) -> float:
    """Nearest-rank ``p``-th percentile of the rows' latencies (``latency_p{p}``)."""
    return nearest_rank(_latencies(rows, f"latency_p{p}"), p)


def latency_mean(rows: Sequence[Row]) -> float:
    values = _latencies(rows, "latency_mean")
    return math.fsum(values) / len(values)


def _builtin_aggregate(
    name: str,
    fn: Callable[[Sequence[Row]], float],
    *,
    higher_is_better: bool,
    bounds: Bounds,
    version: str = "1",
) -> None:
    define(
        MetricDef(
            name, "aggregate", fn, higher_is_better, version=version, builtin=True, bounds=bounds
        )
    )


def register_builtins() -> None:
    """Register the built-in metrics: once, at the registry's first use
    (:mod:`evalkit._model.builtin_hook`, deferred by the package root)."""
    # Every family is a share or a normalised gain: each value lies in [0, 1].
    register_family("recall", recall_at_k, higher_is_better=True, builtin=True, bounds=UNIT)
    # nDCG's gains are the grades themselves: relevance_level does not change it
    register_family(
        "ndcg", ndcg_at_k, higher_is_better=True, builtin=True, parameters={}, bounds=UNIT
    )
    # trec_eval-equal families (P_k, recip_rank cut at k, map_cut_k, success_k):
    # every name@k resolves on both paths; no concrete names are listed.
    for name, fn in (
        ("precision", precision_at_k),
        ("mrr", mrr_at_k),
        ("map", map_at_k),
        ("hit_rate", hit_rate_at_k),
    ):
        register_family(
            name, fn, higher_is_better=True, builtin=True, replaceable=True, bounds=UNIT
        )
    for k in DEFAULT_KS:
        register_concrete_family_metric("recall", k)
    for k in NDCG_KS:
        register_concrete_family_metric("ndcg", k)
    for p in PERCENTILES:
        percentile = partial(latency_percentile, p=p)
        _builtin_aggregate(f"latency_p{p}", percentile, higher_is_better=False, bounds=NON_NEGATIVE)
    _builtin_aggregate("latency_mean", latency_mean, higher_is_better=False, bounds=NON_NEGATIVE)
    for top in (None, *SHARE_KS):
        name = "max_item_share" if top is None else f"max_item_share@{top}"
        share = partial(max_item_share, k=top)
        # v2: queries answered with nothing left out of the denominator (0.2.0's definition).
        _builtin_aggregate(name, share, higher_is_better=False, version="2", bounds=UNIT)
    _builtin_aggregate("entropy", item_entropy, higher_is_better=True, bounds=UNIT)
    from evalkit.metrics.answers import register_answer_builtins

    register_answer_builtins()
