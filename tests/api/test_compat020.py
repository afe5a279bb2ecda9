"""paired-evalkit 0.2.0 code, files and habits keep working on this release.

``tests/data/compat020`` is a small project written against 0.2.0's API
(goldens whose ``expected`` lists relevant ids, a CallableTarget, plugin
metrics, a checks file as a bare list, checks applied by hand).  It must run
unchanged, and the very same files must gate through ``evalkit gate``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import evalkit
from evalkit.checks import CheckSpec, load_checks
from evalkit.errors import (
    CheckError,
    GoldenError,
    MetricError,
    RegistryError,
    TargetError,
    UnknownMetricError,
)
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.registry import get_metric, isolated, registered, resolve
from evalkit.results import CaseResult, QueryResult, RunResult
from evalkit.targets import TargetResponse

FIXTURE = Path(__file__).parents[1] / "data" / "compat020"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    dest = tmp_path / "books"
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    env.pop("EVALKIT_DEBUG", None)
    return subprocess.run(
        [sys.executable, *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=120
    )


# --------------------------------------------------------------------------- the project


def test_the_0_2_0_style_script_runs_unchanged(project: Path) -> None:
    good = _run(["evaluate_books.py"], project)
    assert good.returncode == 0, good.stderr
    lines = good.stdout.splitlines()
    assert len(lines) == 5
    assert lines[0].startswith("pass  recall_floor: recall@5 >= 0.75 [block]  1.0000  (8/8 cases)")
    assert "sea_shelf_first_hit: first_hit >= 1 over 2 case(s) [block]" in lines[1]
    assert "(2/2 cases)" in lines[1]
    assert "no_ndcg_regression: ndcg@10 no_significant_regression (alpha=0.05)" in lines[2]

    broken = _run(["evaluate_books.py", "v0"], project)
    assert broken.returncode == 1, broken.stderr
    assert broken.stdout.count("FAIL") == 3


def test_the_same_files_gate_through_evalkit_yaml(project: Path) -> None:
    baseline = _run(["-m", "evalkit", "run", "--config", "evalkit-baseline.yaml", "--out",
                     "baseline.json"], project)  # fmt: skip
    assert baseline.returncode == 0, baseline.stderr
    passed = _run(["-m", "evalkit", "gate", "--config", "evalkit.yaml"], project)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "5 of 5 checks passed" in passed.stdout
    regressed = _run(["-m", "evalkit", "gate", "--config", "evalkit-regressed.yaml"], project)
    assert regressed.returncode == 1, regressed.stdout + regressed.stderr
    for check in ("recall_floor", "sea_shelf_first_hit", "no_ndcg_regression"):
        assert f"✗ {check}:" in regressed.stdout


def test_the_fixture_goldens_load_as_0_2_0_read_them() -> None:
    goldens = evalkit.load_goldens(FIXTURE / "goldens.jsonl")
    case = goldens.get("b01")
    assert case.expected == {"moby-dick", "in-the-heart-of-the-sea"}
    assert case.relevant == case.expected
    assert case.context == {"shelf": "sea"}
    assert goldens.ids == goldens.ids() == [f"b0{i}" for i in range(1, 9)]


# --------------------------------------------------------------------------- names and paths

# Every name paired-evalkit 0.2.0 exported, by the module it exported it from.
NAMES_0_2_0 = {
    "evalkit": (
        "DEFAULT_METRICS METRICS AggregateFn BootstrapResult CallableTarget CaseMetricFn "
        "CaseResult CheckError CheckSpec Doc GoldenCase GoldenError GoldenSet HttpTarget "
        "LoaderFn MetricFn Query QueryResult RegistryError Retriever RunResult Target "
        "TargetError TargetResponse compare load_checks load_corpus load_goldens load_qrels "
        "load_queries ndcg_at_k paired_bootstrap polarity recall_at_k register_aggregate "
        "register_loader register_metric registered run"
    ),
    "evalkit.checks": (
        "ABS_TOL LEVELS OPS REL_TOL VS_BASELINE_MODES CheckError CheckSpec HasCaseId "
        "compare load_checks"
    ),
    "evalkit.goldens": (
        "GoldenCase GoldenError GoldenSet load_csv load_goldens load_jsonl load_yaml"
    ),
    "evalkit.registry": (
        "AggregateFn CaseMetricFn LoaderFn RegistryError get_aggregate get_loader get_metric "
        "is_aggregate polarity register_aggregate register_loader register_metric registered "
        "resolve"
    ),
    "evalkit.metrics": (
        "JudgeError LLMJudge entropy max_item_share ndcg_at_k percentile recall_at_k "
        "diversity latency retrieval"
    ),
    "evalkit.metrics.retrieval": "DEFAULT_KS register_retrieval_metric",
    "evalkit.metrics.latency": "latency_mean latency_p50 latency_p95 latency_p99 percentile",
    "evalkit.metrics.diversity": "POLARITY entropy max_item_share register_diversity_metric",
    "evalkit.metrics.judge": "TOOL_NAME JudgeError LLMJudge",
    "evalkit.metrics.core": "ndcg_at_k recall_at_k",
    "evalkit.targets": "CallableTarget HttpTarget Target TargetError TargetResponse",
    "evalkit.targets.base": "Target TargetError TargetResponse",
    "evalkit.targets.http": "DEFAULT_META_KEYS HttpTarget",
    "evalkit.targets.callable_target": "CallableFn CallableTarget",
    "evalkit.targets.http_target": "DEFAULT_META_KEYS BuildPayload Extract HttpTarget",
    "evalkit.runner": "DEFAULT_METRICS METRICS MetricFn QueryResult Retriever RunResult run",
    "evalkit.results": "CaseResult",
    "evalkit.significance": "BootstrapResult paired_bootstrap",
    "evalkit.corpus": "Doc Query load_corpus load_qrels load_queries",
}


@pytest.mark.parametrize("module", sorted(NAMES_0_2_0))
def test_every_0_2_0_name_imports_from_its_0_2_0_module(module: str) -> None:
    loaded = importlib.import_module(module)
    missing = [name for name in NAMES_0_2_0[module].split() if not hasattr(loaded, name)]
    assert missing == []


def test_the_version_sorts_after_0_2_0() -> None:
    parts = tuple(int(p) for p in evalkit.__version__.split("."))
    assert parts > (0, 2, 0)


# --------------------------------------------------------------------------- compare


@pytest.mark.parametrize(
    ("observed", "op", "threshold", "holds"),
    [
        (0.6, ">=", 0.6, True),
        (0.6 - 1e-12, ">=", 0.6, False),
        (800.0, "<=", 800.0, True),
        (1e-17, "==", 0.0, True),
        (1e-9, "==", 0.0, False),
        (0.1 + 0.2, "==", 0.3, True),
    ],
)
def test_compare_takes_both_argument_orders(
    observed: float, op: str, threshold: float, holds: bool
) -> None:
    from evalkit.checks import compare

    assert compare(op, observed, threshold) is holds  # 0.2.0's order
    assert compare(observed, op, threshold) is holds
    assert evalkit.compare(observed, op, threshold) is holds
    spec = CheckSpec("c", "m", op=op, threshold=threshold)  # type: ignore[arg-type]
    assert spec.compare(observed) is holds


def test_evalkit_compare_is_callable_even_as_the_cli_module() -> None:
    module = importlib.import_module("evalkit.compare")
    assert callable(module)
    assert module(0.5, ">=", 0.4) is True
    from evalkit.compare import compare_artifacts

    assert callable(compare_artifacts)
    code = "import evalkit.compare\nfrom evalkit import compare\nprint(compare('<=', 1.0, 2.0))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_compare_refuses_unknown_ops_and_nan() -> None:
    from evalkit.checks import compare

    with pytest.raises(CheckError, match="unknown op '!='"):
        compare("!=", 1.0, 1.0)
    with pytest.raises(CheckError, match="NaN"):
        compare(">=", float("nan"), 1.0)
    assert list(inspect.signature(compare).parameters) == ["op", "observed", "threshold"]


# --------------------------------------------------------------------------- checks


def test_describe_names_condition_scope_and_level() -> None:
    floor = CheckSpec("floor", "recall@10", op=">=", threshold=0.6)
    assert floor.describe() == "floor: recall@10 >= 0.6 [block]"
    scoped = CheckSpec(
        "nr", "ndcg@10", vs_baseline="no_significant_regression", scope=("a", "b"), level="warn"
    )
    assert scoped.describe() == (
        "nr: ndcg@10 no_significant_regression (alpha=0.05) over 2 case(s) [warn]"
    )
    assert scoped.is_baseline
    assert not scoped.blocking


def test_scoped_select_keeps_run_order_and_an_empty_run_is_refused() -> None:
    spec = CheckSpec("s", "m", op=">=", threshold=0.0, scope=("c", "a"))
    rows = [QueryResult(i, [], {"m": 1.0}) for i in ("a", "b", "c")]
    assert [r.query_id for r in spec.select(rows)] == ["a", "c"]
    with pytest.raises(CheckError, match="no cases"):
        CheckSpec("u", "m", op=">=", threshold=0.0).select([])


def test_0_2_0_message_words_survive(tmp_path: Path) -> None:
    with pytest.raises(CheckError, match="empty scope"):
        CheckSpec("s", "m", op=">=", threshold=1.0, scope=())
    with pytest.raises(CheckError, match="repeats a"):
        CheckSpec("s", "m", op=">=", threshold=1.0, scope=("a", "b", "a"))
    with pytest.raises(CheckError, match="either"):
        CheckSpec("s", "m", op=None, threshold=None, vs_baseline=None)
    # 0.2.0's suite matches "either" for a check declaring both modes as well
    with pytest.raises(CheckError, match="either"):
        CheckSpec("s", "m", op=">=", threshold=0.5, vs_baseline="no_significant_regression")
    empty = tmp_path / "c.yaml"
    empty.write_text("checks: []\n")
    with pytest.raises(CheckError, match="0 checks"):
        load_checks(empty)


# --------------------------------------------------------------------------- goldens, targets


def test_golden_case_takes_0_2_0_expected() -> None:
    ids = GoldenCase(id="a", query="q", expected={"d1", "d2"})
    assert ids.relevant == {"d1", "d2"}
    assert ids.expected_text is None
    text = GoldenCase(id="b", query="q", expected="an answer")
    assert text.relevant == frozenset()
    assert text.expected_text == "an answer"
    with pytest.raises(GoldenError, match="must all be strings"):
        GoldenCase(id="c", query="q", expected={1})  # type: ignore[arg-type]
    with pytest.raises(KeyError, match="no case with id 'zz'"):
        GoldenSet([ids]).get("zz")


def test_target_response_takes_output_and_raises_on_the_wrong_kind() -> None:
    ids = TargetResponse(output=["a", "b"], latency_ms=3.0, meta={"cost_usd": 0.1})
    assert ids.ranked_ids == ["a", "b"]
    assert ids.output == ["a", "b"]
    assert ids == TargetResponse(ranked_ids=["a", "b"], latency_ms=3.0, meta={"cost_usd": 0.1})
    text = TargetResponse("hello", 1.0)
    assert text.text == "hello"
    assert text.output == "hello"
    for response, asked in ((text, "ranked_ids"), (ids, "text")):
        with pytest.raises(TargetError) as info:
            getattr(response, asked)
        assert isinstance(info.value, MetricError)  # a configuration error: exit 2


def test_a_retrieval_metric_on_a_case_without_ids_raises_as_a_golden_error() -> None:
    response = TargetResponse(output=["d1"], latency_ms=1.0)
    with pytest.raises(GoldenError, match="relevant ids"):
        get_metric("recall@10")(response, GoldenCase(id="a", query="q", expected="text"))


def test_case_result_from_response_and_pairing() -> None:
    response = TargetResponse(output=["v1"], latency_ms=2.0)
    rows_a = [CaseResult.from_response(f"q{i}", response, {"m": 1.0}) for i in range(5)]
    rows_b = [CaseResult.from_response(f"q{i}", response, {"m": 0.5}) for i in range(5)]
    assert rows_a[0].retrieved == ["v1"]
    result = evalkit.paired_bootstrap(RunResult("a", rows_a), RunResult("b", rows_b), "m")
    assert result.observed == pytest.approx(0.5)
    with pytest.raises(KeyError, match="'nope' was not computed"):
        RunResult("a", rows_a).mean("nope")


# --------------------------------------------------------------------------- errors, registry


def test_exception_bases_0_2_0_code_catches() -> None:
    assert issubclass(GoldenError, ValueError)
    assert issubclass(CheckError, ValueError)
    assert issubclass(RegistryError, ValueError)
    assert issubclass(RegistryError, RuntimeError)
    assert issubclass(TargetError, RuntimeError)
    assert issubclass(UnknownMetricError, RegistryError)
    assert issubclass(UnknownMetricError, KeyError)


def test_registered_reads_as_a_list_and_as_0_2_0_snapshot() -> None:
    with isolated():

        @evalkit.register_aggregate("cost_sum", higher_is_better=False)
        def cost_sum(rows: object) -> float:
            return 0.0

        names = registered()
        assert "cost_sum" in names
        assert "recall@10" in names
        assert "cost_sum" in names["aggregates"]
        assert "recall@10" in names["metrics"]
        assert "jsonl" in names["loaders"]
        assert resolve("cost_sum") is cost_sum
        with pytest.raises(RegistryError, match="unknown metric 'nope'"):
            evalkit.polarity("nope")


def test_llm_judge_takes_0_2_0_arguments_and_errors() -> None:
    from evalkit.metrics import JudgeError, LLMJudge

    with pytest.raises(JudgeError, match="no default"):
        LLMJudge(rubric="r", model="")
    with pytest.raises(JudgeError, match="at least 2"):
        LLMJudge(rubric="r", model="m", scale=1)
    plain = LLMJudge(rubric="r", model="m")
    strict = LLMJudge(rubric="r", model="m", system="Be strict.")
    assert plain.fingerprint != strict.fingerprint
    case = GoldenCase(id="a", query="q", expected="x")
    response = TargetResponse(output="y", latency_ms=1.0)
    assert plain.cache_key(response, case) != strict.cache_key(response, case)
    assert plain.cache_size == 0


def test_a_0_2_0_judge_cache_is_named_not_called_corrupt(tmp_path: Path) -> None:
    from evalkit.errors import JudgeError
    from evalkit.metrics import LLMJudge

    old = tmp_path / "judge-cache.json"
    old.write_text('{"9f2c": {"score": 4, "reason": "fine"}}')
    judge = LLMJudge(rubric="r", model="m", cache_path=old)
    with pytest.raises(JudgeError, match="written by paired-evalkit 0.2.0.*move it aside"):
        _ = judge.cache_size
    assert old.read_text() == '{"9f2c": {"score": 4, "reason": "fine"}}'  # left untouched


def test_without_a_cache_file_a_repeated_grading_is_not_paid_twice() -> None:
    from types import SimpleNamespace
    from typing import Any

    from evalkit.metrics import LLMJudge
    from evalkit.metrics.judge import TOOL_NAME

    calls: list[dict[str, Any]] = []

    class Messages:
        def create(self, **kwargs: Any) -> Any:
            calls.append(kwargs)
            block = SimpleNamespace(
                type="tool_use", name=TOOL_NAME, input={"score": 4, "reason": "ok"}, id="t1"
            )
            return SimpleNamespace(content=[block], stop_reason="tool_use", usage=None)

    judge = LLMJudge(rubric="r", model="m", client=SimpleNamespace(messages=Messages()))  # type: ignore[arg-type]
    case = GoldenCase(id="a", query="q", expected="x")
    first = judge.grade(TargetResponse(output="y", latency_ms=1.0), case)
    again = judge.grade(TargetResponse(output="y", latency_ms=99.0), case)
    assert (first["score"], first["cached"], again["score"], again["cached"]) == (4, False, 4, True)
    assert len(calls) == 1
    judge.grade(TargetResponse(output="z", latency_ms=1.0), case)
    assert len(calls) == 2
