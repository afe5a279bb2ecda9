from __future__ import annotations

import random

import pytest

from evalkit import DEFAULT_METRICS, MetricError, QueryResult, RunResult, UnknownMetricError, run


class Q:
    def __init__(self, qid: str, text: str = "") -> None:
        self.id = qid
        self.text = text


QRELS = {"q1": {"a"}, "q2": {"b", "c"}, "q3": {"z"}}


def ranker(q: Q) -> list[str]:
    return {"q1": ["a", "x"], "q2": ["c", "x", "b"], "q3": ["x", "y"]}[q.id]


def test_run_scores_every_query_and_keeps_rows() -> None:
    result = run("sys", ranker, [Q("q1"), Q("q2"), Q("q3")], QRELS, ["recall@1", "recall@3"])
    assert isinstance(result, RunResult)
    assert result.name == "sys"
    assert len(result) == 3
    assert [r.query_id for r in result.per_query] == ["q1", "q2", "q3"]
    assert result.per_query[1].retrieved == ["c", "x", "b"]
    assert result.per_query[1].metrics == {"recall@1": 0.5, "recall@3": 1.0}
    assert result.mean("recall@3") == pytest.approx((1 + 1 + 0) / 3)


def test_run_records_latency_per_query() -> None:
    result = run("sys", ranker, [Q("q1")], QRELS, ["recall@1"])
    row = result.per_query[0]
    assert row.latency_ms is not None
    assert row.latency_ms >= 0


def test_default_metrics() -> None:
    result = run("sys", ranker, [Q("q1")], QRELS)
    assert set(result.per_query[0].metrics) == set(DEFAULT_METRICS)


def test_missing_qrels_raises_naming_queries() -> None:
    with pytest.raises(MetricError, match=r"2 queries are missing from qrels: q4, q5"):
        run("sys", ranker, [Q("q1"), Q("q4"), Q("q5")], QRELS, ["recall@1"])


def test_missing_qrels_checked_before_any_call() -> None:
    calls: list[str] = []

    def spy(q: Q) -> list[str]:
        calls.append(q.id)
        return []

    with pytest.raises(MetricError, match="q9"):
        run("sys", spy, [Q("q1"), Q("q9")], QRELS, ["recall@1"])
    assert calls == []


def test_missing_qrels_lists_at_most_ten() -> None:
    queries = [Q(f"m{i}") for i in range(15)]
    with pytest.raises(MetricError, match=r"\(\+5 more\)"):
        run("sys", ranker, queries, QRELS, ["recall@1"])


def test_unknown_metric_lists_known_names() -> None:
    with pytest.raises(UnknownMetricError, match="unknown metric 'precison@5'.*recall@k"):
        run("sys", ranker, [Q("q1")], QRELS, ["precison@5"])


def test_malformed_spec_lists_known_names() -> None:
    for bad in ["recall@", "recall@ten", "recall@0"]:
        with pytest.raises(MetricError, match="malformed.*known: .*ndcg@k"):
            run("sys", ranker, [Q("q1")], QRELS, [bad])


def test_metrics_as_a_bare_string_is_refused() -> None:
    with pytest.raises(MetricError, match="list of spec strings"):
        run("sys", ranker, [Q("q1")], QRELS, "recall@1")


def test_aggregate_in_run_metrics_points_to_aggregate() -> None:
    with pytest.raises(MetricError, match="aggregate.*result.aggregate"):
        run("sys", ranker, [Q("q1")], QRELS, ["latency_p95"])


def test_any_k_resolves_through_the_family() -> None:
    result = run("sys", ranker, [Q("q2")], QRELS, ["recall@2", "ndcg@3"])
    assert result.per_query[0].metrics["recall@2"] == 0.5


def test_duplicate_query_ids_raise() -> None:
    with pytest.raises(MetricError, match="duplicate query ids: q1"):
        run("sys", ranker, [Q("q1"), Q("q1")], QRELS, ["recall@1"])


def test_empty_queries_raise() -> None:
    with pytest.raises(MetricError, match="no queries"):
        run("sys", ranker, [], QRELS, ["recall@1"])


def test_query_without_id_raises() -> None:
    with pytest.raises(MetricError, match="has no .id"):
        run("sys", ranker, [object()], QRELS, ["recall@1"])


def test_retriever_returning_a_string_raises_naming_query() -> None:
    with pytest.raises(MetricError, match="returned str for query 'q1'"):
        run("sys", lambda q: "a", [Q("q1")], QRELS, ["recall@1"])


def test_row_order_follows_queries() -> None:
    ids = [f"q{i}" for i in range(20)]
    random.Random(3).shuffle(ids)
    qrels = {i: {"a"} for i in ids}
    result = run("sys", lambda q: ["a"], [Q(i) for i in ids], qrels, ["recall@1"])
    assert result.ids() == ids


def test_queries_can_be_any_object_with_id() -> None:
    from dataclasses import dataclass

    @dataclass
    class MyQuery:
        id: str
        question: str

    result = run("sys", lambda q: ["a"], [MyQuery("q1", "hi")], {"q1": {"a"}}, ["recall@1"])
    assert result.mean("recall@1") == 1.0


def test_mean_of_uncomputed_metric_raises() -> None:
    result = run("sys", ranker, [Q("q1")], QRELS, ["recall@1"])
    with pytest.raises(MetricError, match="'ndcg@10' was not computed \\(computed: recall@1\\)"):
        result.mean("ndcg@10")


def test_mean_of_empty_run_raises() -> None:
    with pytest.raises(MetricError, match="no rows"):
        RunResult("empty", []).mean("recall@1")


def test_mean_with_a_row_missing_the_metric_names_it() -> None:
    rr = RunResult("r", [QueryResult("a", [], {"m": 1.0}), QueryResult("b", [], {})])
    with pytest.raises(MetricError, match="missing on 1 of 2 case\\(s\\): b"):
        rr.mean("m")


def test_aggregates_work_on_retrieval_rows() -> None:
    result = run("sys", lambda q: ["same"], [Q("q1"), Q("q2")], QRELS, ["recall@1"])
    assert result.aggregate("max_item_share") == 1.0
    assert result.value("max_item_share") == 1.0
    assert result.value("recall@1") == result.mean("recall@1")


def test_aggregate_of_a_case_metric_is_refused() -> None:
    result = run("sys", ranker, [Q("q1")], QRELS, ["recall@1"])
    with pytest.raises(MetricError, match="per-case metric: use mean"):
        result.aggregate("recall@1")


def test_empty_metric_list_is_refused() -> None:
    with pytest.raises(MetricError, match="name at least one metric"):
        run("sys", ranker, [Q("q1")], QRELS, [])
