"""Per-case rows to CSV and pandas: exact values, failed cases kept, refusals named."""

from __future__ import annotations

import csv
import io
import json
import sys
from pathlib import Path

import pytest

from evalkit._model.results import CaseResult, QueryResult, RunResult
from evalkit._spec.export import rows_to_records, to_dataframe, write_csv
from evalkit.errors import ConfigError, MetricError
from evalkit.targets.base import TargetResponse


def retrieval_run() -> RunResult[QueryResult]:
    return RunResult(
        "bm25",
        [
            QueryResult("q1", ["a", "b,c", 'd"e'], {"ndcg@10": 0.1 + 0.2, "recall@5": 1.0}, 2.5),
            QueryResult("q2", [], {"ndcg@10": 0.0, "recall@5": 0.0}, None),
        ],
    )


def gate_run() -> RunResult[CaseResult]:
    ok = TargetResponse(["x"], latency_ms=12.0, meta={"cost_usd": 0.002, "tags": ["a"]})
    text = TargetResponse(text='Paris, "France"', latency_ms=30.0, meta={"cost_usd": 0.001})
    return RunResult(
        "prod",
        [
            CaseResult("c1", ok, {"recall@1": 1.0}),
            CaseResult("c2", None, {}, error="TargetError: HTTP 503 twice"),
            CaseResult("c3", text, {"judge": 4.0}),
        ],
    )


def read_back(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_csv_columns_and_exact_values(tmp_path: Path) -> None:
    path = write_csv(retrieval_run(), tmp_path / "out" / "rows.csv", include_output=True)
    assert path == tmp_path / "out" / "rows.csv"
    text = path.read_text(encoding="utf-8")
    assert text.splitlines()[0] == "query_id,ndcg@10,recall@5,latency_ms,error,output"
    rows = read_back(text)
    assert float(rows[0]["ndcg@10"]) == 0.1 + 0.2  # repr round-trips exactly
    assert rows[0]["latency_ms"] == "2.5"
    assert rows[1]["latency_ms"] == ""
    assert rows[1]["error"] == ""
    assert json.loads(rows[0]["output"]) == ["a", "b,c", 'd"e']
    assert json.loads(rows[1]["output"]) == []
    assert not list((tmp_path / "out").glob(".*.tmp"))


def test_failed_cases_keep_their_row_with_empty_metrics_and_the_error() -> None:
    buffer = io.StringIO()
    assert write_csv(gate_run(), buffer, include_output=True) is None
    rows = read_back(buffer.getvalue())
    assert list(rows[0]) == [
        "query_id",
        "recall@1",
        "judge",
        "latency_ms",
        "error",
        "meta.cost_usd",
        "meta.tags",
        "output",
    ]
    failed = rows[1]
    assert failed["query_id"] == "c2"
    assert failed["recall@1"] == ""
    assert failed["judge"] == ""
    assert failed["error"] == "TargetError: HTTP 503 twice"
    assert failed["output"] == ""
    assert rows[0]["meta.tags"] == '["a"]'
    assert rows[0]["meta.cost_usd"] == "0.002"
    assert json.loads(rows[2]["output"]) == 'Paris, "France"'


def test_metric_selection_and_unknown_metrics() -> None:
    records = rows_to_records(retrieval_run(), metrics=["recall@5"])
    assert list(records[0]) == ["query_id", "recall@5", "latency_ms", "error"]
    with pytest.raises(MetricError, match="metric\\(s\\) 'mrr@10' not computed on any row"):
        rows_to_records(retrieval_run(), metrics=["recall@5", "mrr@10"])
    with pytest.raises(MetricError, match="must be a list of names"):
        rows_to_records(retrieval_run(), metrics="recall@5")


def test_non_finite_values_and_clashing_names_are_refused() -> None:
    bad = RunResult("x", [QueryResult("q9", [], {"ndcg@10": float("nan")})])
    with pytest.raises(MetricError, match="case 'q9', metric 'ndcg@10' is nan"):
        write_csv(bad, io.StringIO())
    clash = RunResult("x", [QueryResult("q1", [], {"error": 1.0})])
    with pytest.raises(MetricError, match="metric name 'error' collides with a fixed column"):
        rows_to_records(clash)
    with pytest.raises(MetricError, match="expected QueryResult or CaseResult rows, got dict"):
        rows_to_records([{"query_id": "q1"}])  # type: ignore[list-item]


def test_dataframe_has_float_metrics_and_nan_for_failed_cases() -> None:
    frame = to_dataframe(gate_run())
    assert list(frame["query_id"]) == ["c1", "c2", "c3"]
    assert str(frame["recall@1"].dtype) == "float64"
    assert frame["recall@1"].isna().tolist() == [False, True, True]
    assert frame.loc[1, "error"] == "TargetError: HTTP 503 twice"
    assert frame["latency_ms"].tolist()[0] == 12.0
    plain = to_dataframe(retrieval_run(), metrics=["ndcg@10"])
    assert plain["ndcg@10"].tolist() == [0.1 + 0.2, 0.0]


def test_dataframe_without_pandas_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ConfigError, match="to_dataframe needs pandas"):
        to_dataframe(retrieval_run())


def test_numpy_floats_are_written_as_numbers() -> None:
    """A target that puts numpy values in meta or latency gets plain numbers in the CSV."""
    import numpy as np

    response = TargetResponse(["x"], latency_ms=np.float64(12.5), meta={"score": np.float64(0.25)})
    buffer = io.StringIO()
    write_csv(RunResult("np", [CaseResult("c1", response, {"recall@1": 1.0})]), buffer)
    row = read_back(buffer.getvalue())[0]
    assert row["latency_ms"] == "12.5"
    assert row["meta.score"] == "0.25"
