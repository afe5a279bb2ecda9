"""Every API call the spec shows, transcribed and run as the spec writes it.

The spec's prose and examples are the contract: if one of these lines stops working,
a client's code stops working.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

import evalkit
from evalkit import CheckError, GoldenSet, TargetResponse
from servers.search import Reply, SearchServer


class Q:
    def __init__(self, qid: str) -> None:
        self.id = qid


QUERIES = [Q(f"q{i}") for i in range(30)]
QRELS = {q.id: {f"d{int(q.id[1:]) % 5}"} for q in QUERIES}


def search_v1(q: Q) -> list[str]:
    i = int(q.id[1:])
    return ["x", f"d{i % 5}"] if i % 2 else ["x", "y"]


def search_v2(q: Q) -> list[str]:
    return [f"d{int(q.id[1:]) % 5}", "x"]


def test_spec_quick_start() -> None:
    from evalkit import paired_bootstrap, run

    baseline = run("baseline", search_v1, QUERIES, QRELS, ["recall@10", "ndcg@10"])
    candidate = run("candidate", search_v2, QUERIES, QRELS, ["recall@10", "ndcg@10"])
    v = paired_bootstrap(candidate, baseline, "ndcg@10")
    line = f"{v.observed:+.4f}  95% CI [{v.ci_low:+.4f}, {v.ci_high:+.4f}]  p={v.p_value:.4f}"
    assert line.startswith("+")
    assert v.significant
    assert (v.metric, v.name_a, v.name_b, v.n_queries, v.n_resamples) == (
        "ndcg@10",
        "candidate",
        "baseline",
        30,
        10_000,
    )


def test_spec_run_result_shape() -> None:
    from evalkit.runner import QueryResult, RunResult, run

    result = run("r", search_v2, QUERIES, QRELS, ["recall@1", "ndcg@10"])
    assert isinstance(result, RunResult)
    row = result.per_query[0]
    assert isinstance(row, QueryResult)
    assert (row.query_id, row.retrieved) == ("q0", ["d0", "x"])
    assert row.metrics == {"recall@1": 1.0, "ndcg@10": 1.0}
    assert result.mean("recall@1") == 1.0


def test_spec_metrics_table_addition() -> None:
    from evalkit.runner import METRICS, run

    def precision_at_k(retrieved: Sequence[str], relevant: object, k: int) -> float:
        assert isinstance(relevant, set | frozenset)
        return sum(1 for doc in retrieved[:k] if doc in relevant) / k

    METRICS["precision"] = precision_at_k  # the client's own formula, as the spec shows
    result = run("r", search_v2, QUERIES, QRELS, ["precision@2"])
    assert result.mean("precision@2") == 0.5
    # One name, one meaning: the gate path now uses the client's formula too, and its
    # fingerprint is no longer the built-in's, so old baselines read as incomparable.
    defn = evalkit.registry.get_metric("precision@2")
    assert not defn.builtin


def test_spec_extension_points() -> None:
    from evalkit import register_aggregate, register_loader, register_metric

    def count_unsupported(text: str | None) -> int:
        return 0 if text is None else text.count("[citation needed]")

    @register_metric("precision", higher_is_better=True)
    def precision(response: TargetResponse, case: evalkit.GoldenCase) -> float:
        hits = sum(1 for i in response.ranked_ids[:3] if i in case.relevant)
        return hits / 3

    @register_metric("unsupported_claims", higher_is_better=False)
    def unsupported_claims(response: TargetResponse, case: evalkit.GoldenCase) -> float:
        return float(count_unsupported(response.text))

    @register_aggregate("cost_per_query", higher_is_better=False)
    def cost_per_query(rows: Sequence[evalkit.CaseResult]) -> float:
        total = sum(r.response.meta.get("cost_usd", 0.0) for r in rows if r.response)
        return float(total) / len(rows)

    @register_loader("parquet")
    def load_parquet(path: Path) -> GoldenSet:
        return GoldenSet([])

    assert evalkit.polarity("unsupported_claims") is False
    assert {"precision", "unsupported_claims", "cost_per_query"} <= set(evalkit.registered())
    with pytest.raises(evalkit.RegistryError):
        register_metric("precision", higher_is_better=True)(precision)


def test_spec_register_retrieval_metric() -> None:
    from evalkit.metrics.core import recall_at_k
    from evalkit.metrics.retrieval import register_retrieval_metric

    register_retrieval_metric("recall", recall_at_k, 50, higher_is_better=True)
    assert "recall@50" in evalkit.registered()


@pytest.fixture
def search_service() -> Iterator[SearchServer]:
    with SearchServer() as server:
        server.route("/api/search", Reply(json={"results": [{"id": "d1"}, {"id": "d2"}]}))
        yield server


def test_spec_targets_and_goldens(search_service: SearchServer, tmp_path: Path) -> None:
    from evalkit import CallableTarget, HttpTarget, load_goldens

    path = tmp_path / "cases.jsonl"
    path.write_text('{"id": "q1", "query": "first", "relevant": ["d1"]}\n')
    goldens = load_goldens(path)
    local = CallableTarget(lambda case: ["d1"], name="local")
    assert local.invoke(goldens.get("q1")).ranked_ids == ["d1"]
    with HttpTarget(
        url=search_service.url("/api/search"),
        name="prod",
        build_payload=lambda case: {"q": case.query},
        extract=lambda body: [r["id"] for r in body["results"]],
        meta_keys=("cost_usd", "my_custom_field"),
    ) as remote:
        response = remote.invoke(goldens.get("q1"))
    assert response.ranked_ids == ["d1", "d2"]


def test_spec_llm_judge_registration(tmp_path: Path) -> None:
    from evalkit import register_metric
    from evalkit.metrics import LLMJudge

    judge = LLMJudge(
        rubric="Score 5 if the answer is correct and complete, 1 if it is wrong.",
        model="claude-haiku-4-5",
        scale=5,
        cache_path=str(tmp_path / "judge-cache.json"),
    )
    register_metric("helpfulness", higher_is_better=True)(judge)
    assert evalkit.polarity("helpfulness") is True
    with pytest.raises(TypeError):
        LLMJudge(rubric="r", scale=5)  # type: ignore[call-arg]  # model has no default


CHECKS = """\
checks:
  - id: controls_hold
    metric: ndcg@3
    scope: [cp-surry-any, cp-newtown-pub, cp-bondi-any]
    op: ">="
    threshold: 1.0

  - id: no_regression
    metric: ndcg@3
    vs_baseline: no_significant_regression

  - id: p95_ceiling
    metric: latency_p95
    op: "<="
    threshold: 800
    level: warn

  - id: no_unsupported_claims
    metric: unsupported_claims
    op: "<="
    threshold: 0
"""


def test_spec_checks_scope_select_and_coverage(tmp_path: Path) -> None:
    from evalkit import load_checks

    path = tmp_path / "checks.yaml"
    path.write_text(CHECKS)
    ids = ["cp-surry-any", "cp-newtown-pub", "cp-bondi-any", "other"]
    specs = load_checks(path, known_case_ids=ids)
    assert [s.id for s in specs] == [
        "controls_hold",
        "no_regression",
        "p95_ceiling",
        "no_unsupported_claims",
    ]
    typo = tmp_path / "typo.yaml"
    typo.write_text(CHECKS.replace("cp-newtown-pub", "cp-newton-pub"))
    with pytest.raises(
        CheckError, match="scope names 1 case\\(s\\) that do not exist: cp-newton-pub"
    ):
        load_checks(typo, known_case_ids=ids)

    rows = [
        evalkit.CaseResult(cid, TargetResponse(["x"]), {"ndcg@3": 1.0})
        for cid in ("cp-surry-any", "cp-newtown-pub", "other")
    ]
    spec = specs[0]
    with pytest.raises(
        CheckError,
        match="check 'controls_hold': scoped to 3 case\\(s\\) but 1 produced no result: "
        "cp-bondi-any",
    ):
        spec.select(rows)
    full = [*rows, evalkit.CaseResult("cp-bondi-any", TargetResponse(["x"]), {"ndcg@3": 1.0})]
    assert len(spec.select(full)) == 3
    assert spec.coverage(full) == "3/3 cases"
    assert spec.compare(1.0)
