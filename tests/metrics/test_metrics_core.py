"""The retrieval formulas by hand, graded relevance on both paths, and their errors."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest

import evalkit
from evalkit._engine.runner import METRICS, run
from evalkit._model import registry
from evalkit._model.relevance import (
    Relevance,
    accepts_relevance_level,
    as_grades,
    call_retrieval_fn,
    relevant_ids,
)
from evalkit.errors import MetricError
from evalkit.goldens import GoldenCase
from evalkit.metrics.batch import RankedGrades, batch_metric, score_rankings
from evalkit.metrics.core import (
    hit_rate_at_k,
    map_at_k,
    mrr_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
)
from evalkit.metrics.rankings import Rankings
from evalkit.targets.base import TargetResponse

LOG3 = math.log2(3)

# --------------------------------------------------------------------------- known answers


def test_precision_divides_by_k_even_when_fewer_were_returned() -> None:
    assert precision_at_k(["a", "b", "c"], {"a", "c"}, 5) == 2 / 5
    assert precision_at_k(["a", "b", "c"], {"a", "c"}, 2) == 1 / 2
    assert precision_at_k([], {"a"}, 3) == 0.0


def test_recall_divides_by_every_relevant_judged_id() -> None:
    assert recall_at_k(["a", "x"], {"a", "c", "z"}, 2) == 1 / 3
    assert recall_at_k(["a", "c", "z"], {"a", "c", "z"}, 10) == 1.0
    assert recall_at_k(["a"], set(), 10) == 0.0  # nothing relevant: 0.0, never a division


def test_binary_ndcg_is_the_spec_definition() -> None:
    # gain 1 per hit at rank r, discounted by log2(r + 1); ideal = min(k, |relevant|) hits
    assert ndcg_at_k(["x", "a"], {"a"}, 2) == pytest.approx(1 / LOG3)
    assert ndcg_at_k(["a", "x", "b"], {"a", "b", "c"}, 3) == pytest.approx(
        (1 + 1 / 2) / (1 + 1 / LOG3 + 1 / 2)
    )
    assert ndcg_at_k(["a", "b"], {"a", "b"}, 10) == 1.0
    assert ndcg_at_k(["a"], set(), 5) == 0.0


def test_graded_ndcg_uses_linear_gain_and_ignores_the_level() -> None:
    grades = {"a": 1, "c": 2, "z": 3, "n": -1, "o": 0}
    # dcg = 1 + 2/log2(3); ideal over every positive grade: 3 + 2/log2(3)
    want = (1 + 2 / LOG3) / (3 + 2 / LOG3)
    assert ndcg_at_k(["a", "c"], grades, 2) == pytest.approx(want)
    assert ndcg_at_k(["a", "c"], grades, 2, relevance_level=3) == pytest.approx(want)
    assert ndcg_at_k(["n", "o"], grades, 2) == 0.0  # negative and zero grades gain nothing


def test_mrr_is_the_first_relevant_rank_within_k() -> None:
    assert mrr_at_k(["x", "y", "a"], {"a"}, 10) == 1 / 3
    assert mrr_at_k(["x", "y", "a"], {"a"}, 2) == 0.0
    assert mrr_at_k([], {"a"}, 2) == 0.0


def test_map_averages_precision_at_each_hit_over_all_relevant() -> None:
    assert map_at_k(["a", "x", "c"], {"a", "c", "z"}, 10) == pytest.approx((1 + 2 / 3) / 3)
    assert map_at_k(["a", "x", "c"], {"a", "c", "z"}, 2) == pytest.approx(1 / 3)
    assert map_at_k(["x"], set(), 2) == 0.0


def test_hit_rate() -> None:
    assert hit_rate_at_k(["x", "a"], {"a"}, 2) == 1.0
    assert hit_rate_at_k(["x", "a"], {"a"}, 1) == 0.0


def test_relevance_level_decides_what_counts() -> None:
    grades = {"a": 1, "b": 2, "c": 0, "d": -1}
    assert precision_at_k(["a", "b"], grades, 2) == 1.0
    assert precision_at_k(["a", "b"], grades, 2, relevance_level=2) == 0.5
    assert recall_at_k(["a"], grades, 5, relevance_level=2) == 0.0
    assert recall_at_k(["b"], grades, 5, relevance_level=2) == 1.0
    assert hit_rate_at_k(["c", "d"], grades, 2) == 0.0  # zero and negative never relevant
    # a set is grade 1: above level 1 nothing in it is relevant
    assert recall_at_k(["a"], {"a"}, 1, relevance_level=2) == 0.0


def test_a_repeated_id_keeps_its_slot_and_scores_nothing() -> None:
    ranking = ["a", "a", "b"]
    assert precision_at_k(ranking, {"a", "b"}, 2) == 0.5
    assert recall_at_k(ranking, {"a", "b"}, 2) == 0.5
    assert recall_at_k(ranking, {"a", "b"}, 3) == 1.0
    assert ndcg_at_k(ranking, {"a", "b"}, 3) == pytest.approx((1 + 1 / 2) / (1 + 1 / LOG3))
    assert map_at_k(ranking, {"a", "b"}, 3) == pytest.approx((1 + 2 / 3) / 2)
    assert mrr_at_k(["x", "x", "a"], {"a"}, 3) == 1 / 3


@pytest.mark.parametrize("fn", [precision_at_k, recall_at_k, ndcg_at_k, mrr_at_k, map_at_k])
@pytest.mark.parametrize("k", [0, -1, True, 2.0, "3"])
def test_bad_k_raises_naming_it(fn: object, k: object) -> None:
    with pytest.raises(MetricError, match=f"k must be a positive integer, got {k!r}"):
        fn(["a"], {"a"}, k)  # type: ignore[operator]


def test_bad_relevance_level_raises_naming_it() -> None:
    with pytest.raises(MetricError, match="relevance_level must be >= 1, got 0"):
        recall_at_k(["a"], {"a": 1}, 1, relevance_level=0)
    with pytest.raises(MetricError, match="relevance_level must be an integer, got 1.5"):
        recall_at_k(["a"], {"a": 1}, 1, relevance_level=1.5)  # type: ignore[arg-type]


def test_a_string_where_ids_belong_raises() -> None:
    with pytest.raises(MetricError, match="not the single string 'abc'"):
        recall_at_k(["a"], "abc", 1)
    with pytest.raises(MetricError, match="retrieved must be a list of ids, best first, got str"):
        recall_at_k("abc", {"a"}, 1)


# --------------------------------------------------------------------------- dispatch


def set_only(retrieved: Sequence[str], relevant: Relevance, k: int) -> float:
    """A client formula written for the spec's sets."""
    assert isinstance(relevant, frozenset | set)
    return float(len([d for d in retrieved[:k] if d in relevant]))


def test_set_only_formulas_receive_the_ids_relevant_at_the_level() -> None:
    grades = {"a": 1, "b": 2, "c": 0}
    assert not accepts_relevance_level(set_only)
    assert accepts_relevance_level(recall_at_k)
    assert call_retrieval_fn(set_only, ["a", "b", "c"], grades, 3) == 2.0  # c (grade 0) is not
    assert call_retrieval_fn(set_only, ["a", "b", "c"], grades, 3, relevance_level=2) == 1.0
    assert call_retrieval_fn(set_only, ["a"], {"a"}, 1, relevance_level=2) == 0.0
    assert call_retrieval_fn(recall_at_k, ["b"], grades, 1, relevance_level=2) == 1.0


def test_as_grades_and_relevant_ids() -> None:
    assert as_grades({"a", "b"}) == {"a": 1, "b": 1}
    assert as_grades({"a": 3}) == {"a": 3}
    assert relevant_ids({"a": 3, "b": 1, "c": 0}, 2) == frozenset({"a"})
    # A set of ids is grade 1 each: all relevant at level 1, none above it.
    assert relevant_ids({"a", "b"}) == frozenset({"a", "b"})
    assert relevant_ids({"a", "b"}, 2) == frozenset()
    with pytest.raises(MetricError, match="for query 'q1'"):
        as_grades("a", query_id="q1")


# --------------------------------------------------------------------------- both paths


class Query:
    def __init__(self, qid: str) -> None:
        self.id = qid


def test_run_accepts_graded_qrels_and_a_relevance_level() -> None:
    def retriever(q: Query) -> list[str]:
        return ["a", "b", "c"]

    graded = {"q1": {"a": 1, "b": 2, "c": 0, "z": 3}}
    result = run("g", retriever, [Query("q1")], graded, ["precision@3", "ndcg@2", "map@10"])
    row = result.per_query[0]
    assert row.metrics["precision@3"] == pytest.approx(2 / 3)
    assert row.metrics["ndcg@2"] == pytest.approx((1 + 2 / LOG3) / (3 + 2 / LOG3))
    strict = run("g2", retriever, [Query("q1")], graded, ["precision@3"], relevance_level=2)
    assert strict.per_query[0].metrics["precision@3"] == pytest.approx(1 / 3)
    # the spec's sets still work, and mean grade 1
    binary = run("b", retriever, [Query("q1")], {"q1": {"a", "c"}}, ["recall@1", "mrr@5"])
    assert binary.per_query[0].metrics == {"recall@1": 0.5, "mrr@5": 1.0}


def test_run_hands_set_only_client_families_the_binarised_judgments() -> None:
    METRICS["hits_set_only"] = set_only
    graded = {"q1": {"a": 1, "b": 2, "c": 0}}
    result = run("c", lambda q: ["a", "b", "c"], [Query("q1")], graded, ["hits_set_only@3"])
    assert result.per_query[0].metrics["hits_set_only@3"] == 2.0


def test_run_refuses_a_string_as_judgments() -> None:
    with pytest.raises(MetricError, match="query 'q1'"):
        run("s", lambda q: ["a"], [Query("q1")], {"q1": "a"}, ["recall@1"])


def test_target_path_scores_graded_goldens() -> None:
    case = GoldenCase(id="c1", query="pizza", grades={"a": 1, "c": 2, "z": 3})
    response = TargetResponse(["a", "c"])
    ndcg = registry.get_metric("ndcg@2").fn(response, case)
    assert ndcg == pytest.approx((1 + 2 / LOG3) / (3 + 2 / LOG3))
    assert registry.get_metric("map@5").fn(response, case) == pytest.approx((1 + 1) / 3)
    plain = GoldenCase(id="c2", query="pizza", relevant=frozenset({"c"}))
    assert registry.get_metric("mrr@5").fn(response, plain) == 0.5


@pytest.mark.parametrize("family", ["precision", "recall", "ndcg", "mrr", "map", "hit_rate"])
def test_the_trec_families_are_built_in_on_both_paths(family: str) -> None:
    assert evalkit.polarity(f"{family}@7") is True
    assert METRICS[family] is registry.families()[family].fn
    assert registry.get_metric(f"{family}@7").family == family


# --------------------------------------------------------------------------- batch API


def test_batch_falls_back_to_the_formula_for_client_families() -> None:
    rankings = Rankings.from_mapping({"q1": ["a", "b"], "q2": []})
    rg = RankedGrades(rankings, [{"a": 1, "b": 0}, {"z": 1}])
    assert batch_metric(rg, set_only, 2).tolist() == [1.0, 0.0]
    assert batch_metric(rg, recall_at_k, 2).tolist() == [1.0, 0.0]


def test_rankings_validate_their_shape() -> None:
    import numpy as np

    with pytest.raises(MetricError, match="offsets must have one entry more"):
        Rankings(["q1"], np.array([0], dtype=np.int64), [])
    with pytest.raises(MetricError, match="query ids must be unique"):
        Rankings(["q", "q"], np.array([0, 0, 0], dtype=np.int64), [])
    with pytest.raises(MetricError, match="ranking of query 'q1' must be a list"):
        Rankings.from_mapping({"q1": "abc"})


def test_score_rankings_query_selection() -> None:
    rankings = {"q1": ["a"], "q2": ["b"], "unjudged": ["c"]}
    qrels: dict[str, set[str]] = {"q1": {"a"}, "q2": {"x"}, "only-judged": {"d"}}
    both = score_rankings("r", rankings, qrels, ["recall@1"])
    assert [r.query_id for r in both.per_query] == ["q1", "q2"]
    complete = score_rankings("r", rankings, qrels, ["recall@1"], queries="qrels")
    assert [r.query_id for r in complete.per_query] == ["q1", "q2", "only-judged"]
    assert complete.per_query[2].retrieved == []
    assert complete.per_query[2].metrics == {"recall@1": 0.0}
    with pytest.raises(MetricError, match="1 ranked query is missing from qrels: 'unjudged'"):
        score_rankings("r", rankings, qrels, ["recall@1"], queries="run")
    with pytest.raises(MetricError, match="no ranked query is judged"):
        score_rankings("r", {"a": ["x"]}, {"b": {"x"}}, ["recall@1"])
    with pytest.raises(MetricError, match="queries must be 'both', 'qrels' or 'run'"):
        score_rankings("r", rankings, qrels, ["recall@1"], queries="all")  # type: ignore[arg-type]


def test_score_rankings_refuses_bad_metric_lists_and_grades() -> None:
    rankings = {"q1": ["a"]}
    with pytest.raises(MetricError, match="whole-run aggregate"):
        score_rankings("r", rankings, {"q1": {"a"}}, ["latency_p95"])
    with pytest.raises(MetricError, match="names a metric twice"):
        score_rankings("r", rankings, {"q1": {"a"}}, ["recall@1", "recall@1"])
    with pytest.raises(MetricError, match="not a str"):
        score_rankings("r", rankings, {"q1": {"a"}}, "recall@1")
    with pytest.raises(MetricError, match="name at least one metric"):
        score_rankings("r", rankings, {"q1": {"a"}}, [])
    with pytest.raises(MetricError, match="query 'q1': grade of 'a' is 0.5"):
        score_rankings("r", rankings, {"q1": {"a": 0.5}}, ["recall@1"])
    with pytest.raises(MetricError, match="query 'q1': grade of 'a' is True"):
        score_rankings("r", rankings, {"q1": {"a": True}}, ["recall@1"])
    with pytest.raises(MetricError, match="query 'q1': id 7 is a int"):
        score_rankings("r", rankings, {"q1": {7: 1}}, ["recall@1"])  # type: ignore[dict-item]
    with pytest.raises(MetricError, match="ranking of query 'q1': ids must be strings, got 7"):
        score_rankings("r", {"q1": ["a", 7]}, {"q1": {"a"}}, ["recall@1"])  # type: ignore[list-item]


def test_score_rankings_runs_client_case_metrics_on_graded_goldens() -> None:
    @evalkit.register_metric("top_grade", higher_is_better=True)
    def top_grade(response: TargetResponse, case: GoldenCase) -> float:
        return float(max(case.grades.get(d, 0) for d in response.ranked_ids))

    result = score_rankings("r", {"q1": ["a", "b"]}, {"q1": {"b": 3}}, ["top_grade", "recall@1"])
    assert result.per_query[0].metrics == {"top_grade": 3.0, "recall@1": 0.0}


def test_grades_beyond_64_bits_and_mismatched_inputs_are_refused() -> None:
    with pytest.raises(MetricError, match="a grade does not fit in a 64-bit integer"):
        score_rankings("r", {"q1": ["a"]}, {"q1": {"a": 2**70}}, ["recall@1"])
    with pytest.raises(MetricError, match="a grade does not fit in a 64-bit integer"):
        score_rankings("r", {"q1": ["b"]}, {"q1": {"a": 2**70}}, ["recall@1"])
    rankings = Rankings.from_mapping({"q1": ["a"]})
    with pytest.raises(MetricError, match="one judgment mapping per ranking"):
        RankedGrades(rankings, [])
    with pytest.raises(MetricError, match="relevance_level must be >= 1, got 0"):
        RankedGrades(rankings, [{"a": 1}], relevance_level=0)
    with pytest.raises(MetricError, match="k must be a positive integer, got 0"):
        batch_metric(RankedGrades(rankings, [{"a": 1}]), recall_at_k, 0)
