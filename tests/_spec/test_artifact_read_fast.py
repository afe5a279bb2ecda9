"""The artefact reader's quick row path reads exactly what the careful path reads (#27).

``_quick_row`` takes the well-formed rows with C-level checks and hands anything else to
``_careful_row``, which names the defect.  Held here: on any row document (well-formed,
oddly typed or broken) the quick path either declines or builds the same row as the
careful one; and the depth limit still holds for the parts the reader keeps (a row's
meta, a metric's params) although the document is no longer walked as a whole.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evalkit import ArtifactError, CaseResult, QueryResult, RunResult, TargetResponse
from evalkit._spec.artifact import build_artifact, read_artifact, write_artifact
from evalkit._spec.artifact_rows import COLUMNS, _careful_row, _quick_row, _quick_table

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=3),
)
json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=6,
)
metric_values = st.dictionaries(
    st.sampled_from(["ndcg@10", "recall@5", "mrr"]),
    st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.integers(-2, 2), st.booleans()),
)
ids = st.one_of(st.lists(st.text(max_size=3), max_size=4), st.lists(json_values, max_size=2))


@st.composite
def row_docs(draw: st.DrawFn) -> Any:
    doc: dict[str, Any] = {}
    fields = {
        "id": st.one_of(st.text(max_size=3), st.integers()),
        "metrics": st.one_of(metric_values, json_values),
        "output": st.one_of(
            st.none(),
            st.fixed_dictionaries(
                {}, optional={"ids": st.one_of(ids, json_values), "text": json_values}
            ),
            json_values,
        ),
        "latency_ms": st.one_of(
            st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-1, 5)
        ),
        "meta": st.one_of(st.none(), st.dictionaries(st.text(max_size=2), json_values)),
        "error": st.one_of(st.none(), st.text(max_size=3), st.integers()),
        "truncated": st.one_of(st.none(), st.booleans(), st.integers(0, 1)),
        "extra": json_values,
    }
    for key, strategy in fields.items():
        if draw(st.booleans()) or key in ("id", "metrics"):
            doc[key] = draw(strategy)
    return doc if draw(st.integers(0, 9)) else draw(json_values)


def _careful(doc: Any, path: str) -> Any:
    try:
        return _careful_row(doc, 0, path, "run.json")  # type: ignore[arg-type]
    except ArtifactError as exc:
        return exc


def _same(a: QueryResult | CaseResult, b: QueryResult | CaseResult) -> bool:
    if type(a) is not type(b) or a.query_id != b.query_id or a.metrics != b.metrics:
        return False
    if isinstance(a, QueryResult):
        assert isinstance(b, QueryResult)
        return a.retrieved == b.retrieved and a.latency_ms == b.latency_ms
    assert isinstance(b, CaseResult)
    return a.response == b.response and a.error == b.error


@settings(max_examples=150, deadline=None)
@given(doc=row_docs(), path=st.sampled_from(["target", "retrieval"]))
def test_the_quick_path_declines_or_agrees_with_the_careful_one(doc: Any, path: str) -> None:
    quick = _quick_row(doc, path)  # type: ignore[arg-type]
    if quick is None:
        return
    careful = _careful(doc, path)
    assert not isinstance(careful, ArtifactError), (doc, careful)
    assert _same(quick[0], careful[0]), doc
    assert quick[1] == careful[1], doc


def test_a_written_artefact_takes_the_quick_path_for_its_table(tmp_path: Path) -> None:
    rows = [
        CaseResult("a", TargetResponse(["d1", "d2"], latency_ms=1.5, meta={"c": 1}), {"m": 0.5}),
        CaseResult("b", TargetResponse(text="t", latency_ms=0.0), {"m": 1.0}),
        CaseResult("c", None, {}, error="boom"),
    ]
    path = write_artifact(build_artifact(RunResult("r", rows), []), tmp_path / "r.json")
    doc = json.loads(path.read_text())
    quick = _quick_table(doc["rows"], "target")
    assert quick is not None
    assert quick[0] == rows
    assert [r.query_id for r in read_artifact(path).result.per_query] == ["a", "b", "c"]


def _deep(levels: int) -> Any:
    """``levels`` lists, one inside the other (an empty one would not count)."""
    value: Any = [1]
    for _ in range(levels - 1):
        value = [value, 1]
    return value


@pytest.mark.parametrize("levels", [96, 97])
def test_meta_may_nest_to_the_limit_counted_from_the_document(tmp_path: Path, levels: int) -> None:
    # document, rows, row, meta: a meta value of `levels` lists nests 4 + levels deep.
    rows = [CaseResult("a", TargetResponse(["d"], latency_ms=1.0), {})]
    path = write_artifact(build_artifact(RunResult("r", rows), []), tmp_path / "r.json")
    doc = json.loads(path.read_text())
    doc["rows"][0][COLUMNS.index("meta")] = {"x": _deep(levels)}
    path.write_text(json.dumps(doc))
    if levels + 4 <= 100:
        assert read_artifact(path).result.per_query[0].response.meta == {"x": _deep(levels)}
    else:
        with pytest.raises(ArtifactError, match=r"case 'a': meta is nested deeper than 100"):
            read_artifact(path)


def test_params_nested_past_the_limit_are_refused(tmp_path: Path) -> None:
    rows = [CaseResult("a", TargetResponse(["d"], latency_ms=1.0), {"recall@1": 1.0})]
    path = write_artifact(build_artifact(RunResult("r", rows), ["recall@1"]), tmp_path / "r.json")
    doc = json.loads(path.read_text())
    doc["metrics"]["recall@1"]["params"] = {"x": _deep(99)}
    path.write_text(json.dumps(doc))
    with pytest.raises(ArtifactError, match=r"metrics\['recall@1'\]: params are nested deeper"):
        read_artifact(path)
