from __future__ import annotations

from collections.abc import Sequence

import pytest

import evalkit
from evalkit import (
    METRICS,
    MetricError,
    RegistryError,
    TargetResponse,
    UnknownMetricError,
    polarity,
    register_aggregate,
    register_loader,
    register_metric,
    registered,
    registry,
    run,
)
from evalkit._model.results import Row
from evalkit.goldens import GoldenCase
from evalkit.metrics.core import precision_at_k, recall_at_k
from evalkit.metrics.retrieval import register_retrieval_metric


def my_precision(retrieved: Sequence[str], relevant: object, k: int) -> float:
    """A client's own retrieval formula (not a built-in)."""
    assert isinstance(relevant, set | frozenset)
    return sum(1 for doc in retrieved[:k] if doc in relevant) / k


class Q:
    def __init__(self, qid: str, text: str = "q") -> None:
        self.id = qid
        self.text = text


def test_builtins_are_registered_on_import() -> None:
    names = registered()
    for expected in [
        "recall@1",
        "recall@3",
        "recall@5",
        "recall@10",
        "recall@20",
        "ndcg@10",
        "latency_p50",
        "latency_p95",
        "latency_p99",
        "latency_mean",
        "max_item_share",
        "max_item_share@1",
        "max_item_share@3",
        "max_item_share@10",
        "entropy",
    ]:
        assert expected in names


def test_registered_is_sorted_and_live() -> None:
    assert registered() == sorted(registered())

    @register_metric("brand_new", higher_is_better=True)
    def brand_new(response: TargetResponse, case: GoldenCase) -> float:
        return 1.0

    assert "brand_new" in registered()


def test_builtin_polarities() -> None:
    assert polarity("recall@10") is True
    assert polarity("ndcg@10") is True
    assert polarity("latency_p95") is False
    assert polarity("max_item_share@3") is False
    assert polarity("entropy") is True


def test_polarity_unknown_name_raises_listing_known() -> None:
    with pytest.raises(UnknownMetricError, match="unknown metric 'recal@10'.*recall@10"):
        polarity("recal@10")


def test_unknown_metric_error_is_key_error_with_readable_message() -> None:
    with pytest.raises(KeyError) as info:
        polarity("nope")
    assert str(info.value).startswith("unknown metric 'nope'")


def test_register_metric_requires_higher_is_better() -> None:
    with pytest.raises(TypeError, match="higher_is_better"):
        register_metric("x")  # type: ignore[call-arg]


def test_register_metric_rejects_non_bool_polarity() -> None:
    with pytest.raises(RegistryError, match="'x'.*True or False"):
        register_metric("x", higher_is_better="yes")  # type: ignore[arg-type]


def test_lower_is_better_metric_keeps_its_direction() -> None:
    @register_metric("unsupported_claims", higher_is_better=False)
    def claims(response: TargetResponse, case: GoldenCase) -> float:
        return 0.0

    assert polarity("unsupported_claims") is False


def test_duplicate_metric_name_raises() -> None:
    register_metric("dup", higher_is_better=True)(lambda r, c: 1.0)
    with pytest.raises(RegistryError, match="'dup' is already registered"):
        register_metric("dup", higher_is_better=True)(lambda r, c: 0.0)


def test_name_is_metric_or_aggregate_never_both() -> None:
    register_metric("cost", higher_is_better=False)(lambda r, c: 1.0)
    with pytest.raises(RegistryError, match="'cost' is already registered \\(a per-case metric\\)"):
        register_aggregate("cost", higher_is_better=False)(lambda rows: 1.0)


def test_aggregate_cannot_shadow_builtin_aggregate() -> None:
    with pytest.raises(RegistryError, match="latency_p95"):
        register_aggregate("latency_p95", higher_is_better=False)(lambda rows: 1.0)


def test_metric_cannot_take_a_name_a_family_claims() -> None:
    with pytest.raises(RegistryError, match="recall@7.*retrieval family 'recall'"):
        register_metric("recall@7", higher_is_better=True)(lambda r, c: 1.0)


def test_invalid_metric_names_raise() -> None:
    for bad in ["", "has space", "recall@0", "@5", "x@y"]:
        with pytest.raises(RegistryError, match="invalid metric name"):
            register_metric(bad, higher_is_better=True)


def test_register_metric_returns_function_unchanged() -> None:
    def f(response: TargetResponse, case: GoldenCase) -> float:
        return 0.5

    assert register_metric("f_metric", higher_is_better=True)(f) is f


def test_spec_aggregate_example_cost_per_query() -> None:
    @register_aggregate("cost_per_query", higher_is_better=False)
    def cost_per_query(rows: Sequence[Row]) -> float:
        return float(sum(r.response.meta.get("cost_usd", 0.0) for r in rows if r.response)) / len(
            rows
        )

    from evalkit._model.results import CaseResult, RunResult

    rows = [
        CaseResult("a", TargetResponse(["x"], meta={"cost_usd": 0.2})),
        CaseResult("b", TargetResponse(["y"], meta={"cost_usd": 0.4})),
    ]
    assert RunResult("r", rows).aggregate("cost_per_query") == pytest.approx(0.3)
    assert polarity("cost_per_query") is False


def test_register_retrieval_metric_adds_a_k() -> None:
    register_retrieval_metric("recall", recall_at_k, 50, higher_is_better=True)
    assert "recall@50" in registered()
    assert polarity("recall@50") is True


def test_register_retrieval_metric_existing_k_raises() -> None:
    with pytest.raises(RegistryError, match="recall@10"):
        register_retrieval_metric("recall", recall_at_k, 10, higher_is_better=True)


def test_register_retrieval_metric_different_fn_same_family_raises() -> None:
    with pytest.raises(RegistryError, match="family 'recall'.*different definition"):
        register_retrieval_metric("recall", precision_at_k, 7, higher_is_better=True)


def test_register_retrieval_metric_bad_k() -> None:
    with pytest.raises(RegistryError, match="k must be a positive integer"):
        register_retrieval_metric("prec", precision_at_k, 0, higher_is_better=True)


def test_metrics_table_assignment_works_in_run_as_spec_shows() -> None:
    METRICS["my_prec"] = my_precision
    result = run("r", lambda q: ["a", "b", "c"], [Q("q1")], {"q1": {"a", "c"}}, ["my_prec@3"])
    assert result.per_query[0].metrics["my_prec@3"] == pytest.approx(2 / 3)


def test_one_name_means_one_thing_on_both_paths() -> None:
    """A family added via runner.METRICS resolves on the target path too."""
    METRICS["my_prec"] = my_precision
    defn = registry.get_metric("my_prec@2")
    case = GoldenCase(id="c", query="q", relevant=frozenset({"a"}))
    assert defn.fn(TargetResponse(["a", "z"]), case) == pytest.approx(0.5)


def test_metrics_table_family_has_no_polarity_until_declared() -> None:
    METRICS["my_prec"] = my_precision
    with pytest.raises(MetricError, match="no declared direction.*register_retrieval_metric"):
        polarity("my_prec@3")
    register_retrieval_metric("my_prec", my_precision, 3, higher_is_better=True)
    assert polarity("my_prec@3") is True


def test_metrics_table_reassigning_a_builtin_raises() -> None:
    with pytest.raises(RegistryError, match="'recall'.*different definition"):
        METRICS["recall"] = precision_at_k


def test_metrics_table_is_a_mapping() -> None:
    assert "recall" in METRICS
    assert "ndcg" in METRICS
    assert METRICS["recall"] is recall_at_k
    assert list(METRICS) == sorted(METRICS)
    with pytest.raises(KeyError):
        METRICS["nope"]


def test_metrics_table_refuses_deletion() -> None:
    with pytest.raises(RegistryError, match="cannot be removed"):
        del METRICS["recall"]


def test_user_metric_on_the_retrieval_path() -> None:
    """A (TargetResponse, GoldenCase) metric is usable from run() too: no two tables."""

    @register_metric("first_is_relevant", higher_is_better=True)
    def first(response: TargetResponse, case: GoldenCase) -> float:
        return float(response.ranked_ids[:1] == [next(iter(case.relevant))])

    result = run("r", lambda q: ["a"], [Q("q1")], {"q1": {"a"}}, ["first_is_relevant"])
    assert result.per_query[0].metrics == {"first_is_relevant": 1.0}


def test_fingerprint_is_stable_and_changes_with_definition() -> None:
    a = registry.get_metric("ndcg@10").fingerprint
    assert a == registry.get_metric("ndcg@10").fingerprint
    assert a != registry.get_metric("ndcg@5").fingerprint

    register_metric("m1", higher_is_better=True)(lambda r, c: 1.0)
    register_metric("m2", higher_is_better=True)(lambda r, c: 2.0)
    assert registry.get_metric("m1").fingerprint != registry.get_metric("m2").fingerprint


def test_fingerprint_uses_explicit_attribute() -> None:
    class Judge:
        fingerprint = "model-x|rubric-y"

        def __call__(self, response: TargetResponse, case: GoldenCase) -> float:
            return 1.0

    class Judge2(Judge):
        fingerprint = "model-z|rubric-y"

    register_metric("j1", higher_is_better=True)(Judge())
    register_metric("j2", higher_is_better=True)(Judge2())
    # Same name would be needed for a real comparison; here: different attrs differ.
    assert registry.get_metric("j1").fingerprint != registry.get_metric("j2").fingerprint


def test_register_loader_and_duplicate() -> None:
    @register_loader("parquet")
    def load_parquet(path: object) -> evalkit.GoldenSet:
        return evalkit.GoldenSet([])

    assert registry.get_loader(".PARQUET") is load_parquet
    with pytest.raises(RegistryError, match="parquet"):
        register_loader("parquet")(load_parquet)


def test_isolated_undoes_registrations() -> None:
    with registry.isolated():
        register_metric("temporary", higher_is_better=True)(lambda r, c: 1.0)
        assert "temporary" in registered()
    assert "temporary" not in registered()


def test_split_spec() -> None:
    assert registry.split_spec("recall@10") == ("recall", 10)
    assert registry.split_spec("entropy") == ("entropy", None)
    for bad in ["recall@", "recall@x", "recall@0", "@3", "recall@-1"]:
        with pytest.raises(MetricError, match="malformed metric spec"):
            registry.split_spec(bad)
