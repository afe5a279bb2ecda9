"""Built-in aggregates and the retrieval formulas, on cases whose answers are known by hand."""

from __future__ import annotations

import math

import pytest

from evalkit import CaseResult, MetricError, RunResult, TargetResponse
from evalkit.metrics.builtin import item_entropy, max_item_share, nearest_rank
from evalkit.metrics.core import ndcg_at_k, recall_at_k


def rows_with_latency(latencies: list[float]) -> list[CaseResult]:
    return [
        CaseResult(f"c{i}", TargetResponse(["x"], latency_ms=ms)) for i, ms in enumerate(latencies)
    ]


def rows_with_ids(rankings: list[list[str]]) -> list[CaseResult]:
    return [CaseResult(f"c{i}", TargetResponse(ids)) for i, ids in enumerate(rankings)]


def agg(name: str, rows: list[CaseResult]) -> float:
    return RunResult("r", rows).aggregate(name)


# --------------------------------------------------------------------------- percentiles


def test_nearest_rank_p95_of_twenty_is_not_the_maximum() -> None:
    values = [float(v) for v in range(1, 21)]  # 1..20
    # ceil(0.95 * 20) = 19th smallest; the floor(n*p) form would return 20 (the max).
    assert nearest_rank(values, 95) == 19.0
    assert agg("latency_p95", rows_with_latency(values)) == 19.0


def test_nearest_rank_known_values() -> None:
    values = [15.0, 20.0, 35.0, 40.0, 50.0]
    assert nearest_rank(values, 50) == 35.0  # ceil(2.5) = 3rd
    assert nearest_rank(values, 30) == 20.0  # ceil(1.5) = 2nd
    assert nearest_rank(values, 100) == 50.0
    assert nearest_rank(values, 1) == 15.0


def test_latency_p50_p99_mean() -> None:
    rows = rows_with_latency([10.0, 30.0, 20.0, 40.0])
    assert agg("latency_p50", rows) == 20.0
    assert agg("latency_p99", rows) == 40.0
    assert agg("latency_mean", rows) == 25.0


def test_latency_one_row() -> None:
    rows = rows_with_latency([7.5])
    for name in ["latency_p50", "latency_p95", "latency_p99", "latency_mean"]:
        assert agg(name, rows) == 7.5


def test_latency_no_rows_raises() -> None:
    with pytest.raises(MetricError, match="latency_p95: the run has no rows"):
        agg("latency_p95", [])


def test_latency_ignores_failed_cases_but_refuses_all_failed() -> None:
    rows = [*rows_with_latency([5.0]), CaseResult("bad", None, error="boom")]
    assert agg("latency_mean", rows) == 5.0
    with pytest.raises(MetricError, match="every case failed"):
        agg("latency_mean", [CaseResult("bad", None, error="boom")])


def test_percentile_bounds() -> None:
    with pytest.raises(ValueError, match="percentile"):
        nearest_rank([1.0], 0)
    with pytest.raises(MetricError):
        nearest_rank([], 50)


# --------------------------------------------------------------------------- max_item_share


def test_max_item_share_counts_queries_not_slots() -> None:
    # 100 queries x 3 items; "hot" appears in 40 of them -> 0.40, not 40/300.
    rankings = [["hot", f"a{i}", f"b{i}"] for i in range(40)]
    rankings += [[f"c{i}", f"d{i}", f"e{i}"] for i in range(60)]
    assert agg("max_item_share", rows_with_ids(rankings)) == pytest.approx(0.40)


def test_max_item_share_dedupes_within_a_response() -> None:
    rankings = [["x", "x", "x"], ["y"]]
    assert agg("max_item_share", rows_with_ids(rankings)) == 0.5


def test_max_item_share_at_k_uses_top_k_only() -> None:
    rankings = [["a", "hot"], ["b", "hot"], ["c", "d"]]
    assert agg("max_item_share@1", rows_with_ids(rankings)) == pytest.approx(1 / 3)
    assert agg("max_item_share@3", rows_with_ids(rankings)) == pytest.approx(2 / 3)


def test_max_item_share_one_item_everywhere_is_one() -> None:
    assert agg("max_item_share", rows_with_ids([["only"], ["only"]])) == 1.0


def test_max_item_share_empty_responses_is_zero() -> None:
    assert agg("max_item_share", rows_with_ids([[], []])) == 0.0


def test_max_item_share_leaves_unanswered_queries_out() -> None:
    # Two of four queries showed "hero", two showed nothing: everyone who saw
    # anything saw hero.  Counting the empty answers would halve the share and let
    # a target that fails to answer look diverse.
    rankings: list[list[str]] = [["hero"], ["hero", "x"], [], []]
    assert agg("max_item_share", rows_with_ids(rankings)) == 1.0
    assert agg("max_item_share@1", rows_with_ids([["a", "hero"], ["b", "hero"], []])) == 0.5


def test_max_item_share_no_rows_raises() -> None:
    with pytest.raises(MetricError, match="max_item_share: the run has no rows"):
        max_item_share([])


def test_max_item_share_of_text_only_responses_raises() -> None:
    rows = [CaseResult("c", TargetResponse(text="hello"))]
    with pytest.raises(MetricError, match="text, not ranked ids"):
        agg("max_item_share", rows)


# --------------------------------------------------------------------------- entropy


def test_entropy_uniform_is_one() -> None:
    assert agg("entropy", rows_with_ids([["a"], ["b"], ["c"], ["d"]])) == pytest.approx(1.0)


def test_entropy_one_distinct_item_is_zero() -> None:
    assert agg("entropy", rows_with_ids([["a"], ["a"], ["a"]])) == 0.0


def test_entropy_empty_responses_is_zero() -> None:
    assert agg("entropy", rows_with_ids([[], []])) == 0.0


def test_entropy_known_value() -> None:
    # counts a:2, b:1, c:1 -> H = -(.5 ln .5 + 2 * .25 ln .25) ; normalised by ln 3
    rows = rows_with_ids([["a", "b"], ["a", "c"]])
    h = -(0.5 * math.log(0.5) + 2 * 0.25 * math.log(0.25))
    assert item_entropy(rows) == pytest.approx(h / math.log(3))


def test_entropy_is_catalogue_size_independent_when_uniform() -> None:
    small = rows_with_ids([[f"i{j}"] for j in range(3)])
    large = rows_with_ids([[f"i{j}"] for j in range(300)])
    assert item_entropy(small) == pytest.approx(item_entropy(large)) == pytest.approx(1.0)


def test_entropy_no_rows_raises() -> None:
    with pytest.raises(MetricError, match="entropy: the run has no rows"):
        item_entropy([])


# --------------------------------------------------------------------------- formulas


def test_recall_known_values() -> None:
    assert recall_at_k(["a", "b", "c"], {"a", "c", "z"}, 3) == pytest.approx(2 / 3)
    assert recall_at_k(["a", "b", "c"], {"c"}, 2) == 0.0
    assert recall_at_k([], {"a"}, 10) == 0.0
    assert recall_at_k(["a"], set(), 10) == 0.0


def test_recall_duplicate_hits_count_once() -> None:
    assert recall_at_k(["a", "a", "a"], {"a", "b"}, 3) == 0.5


def test_ndcg_known_values() -> None:
    assert ndcg_at_k(["a"], {"a"}, 10) == 1.0
    # relevant at rank 2 only: (1/log2 3) / 1
    assert ndcg_at_k(["x", "a"], {"a"}, 10) == pytest.approx(1 / math.log2(3))
    # two relevant, found at ranks 1 and 3: (1 + 1/2) / (1 + 1/log2 3)
    expected = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["a", "x", "b"], {"a", "b"}, 10) == pytest.approx(expected)
    assert ndcg_at_k(["x"], {"a"}, 10) == 0.0
    assert ndcg_at_k(["a"], set(), 10) == 0.0


def test_formula_rejects_bad_k() -> None:
    with pytest.raises(ValueError, match="k must be a positive integer"):
        recall_at_k(["a"], {"a"}, 0)


def test_target_response_text_only_refuses_ids() -> None:
    r = TargetResponse(text="an answer")
    assert not r.has_ids
    with pytest.raises(MetricError, match="text, not ranked ids"):
        _ = r.ranked_ids


def test_target_response_needs_something() -> None:
    with pytest.raises(ValueError, match="ranked_ids, text, or both"):
        TargetResponse()
    with pytest.raises(TypeError, match="not a single string"):
        TargetResponse(ranked_ids="abc")
    # Positionally, a str is 0.2.0's text output.
    assert TargetResponse("abc").text == "abc"
