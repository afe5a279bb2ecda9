"""Schema 3's table of rows: what is written reads back as it was, and a broken table is
named by file and line (#27).

Held on many generated runs: write -> read gives back every row, metric values, texts
(unicode, newlines, quotes), ids lists of any length, meta values, failed cases, missing
latencies and the truncation flags; the file is one case per line in the order of the
run; the committed schema-2 fixtures read to the values they were written with.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit import ArtifactError, CaseResult, QueryResult, RunResult, TargetResponse
from evalkit._model.formats import ARTIFACT_SCHEMA_VERSION
from evalkit._spec.artifact import (
    GoldensInfo,
    artifact_from_dict,
    build_artifact,
    read_artifact,
    write_artifact,
)
from evalkit._spec.artifact_rows import COLUMNS, MAX_OUTPUT_IDS, _row_dict

FIXTURES = Path(__file__).parents[1] / "data" / "artifacts"

texts = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12
) | st.sampled_from(['a "quoted"\nline', "tab\there", "ünïcode ✓", "", "\\", "</script>"])
ids_lists = st.lists(texts, max_size=6) | st.lists(st.just("d"), min_size=40, max_size=60)
finite = st.floats(allow_nan=False, allow_infinity=False)
metric_dicts = st.dictionaries(st.sampled_from(["ndcg@10", "recall@5", "mrr", "m ✓"]), finite)
meta_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**6), 10**6) | finite | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=6,
)
latencies = st.floats(min_value=0.0, max_value=1e6, allow_nan=False)


@st.composite
def case_rows(draw: st.DrawFn, case_id: str) -> CaseResult:
    if draw(st.integers(0, 5)) == 0:
        return CaseResult(case_id, None, {}, error=draw(texts) or "failed")
    kind = draw(st.sampled_from(["ids", "text", "both"]))
    response = TargetResponse(
        ranked_ids=draw(ids_lists) if kind != "text" else None,
        text=draw(texts) if kind != "ids" else None,
        latency_ms=draw(latencies),
        meta=draw(st.dictionaries(texts, meta_values, max_size=3)),
    )
    error = draw(st.none() | texts)  # an answered case may still carry an error
    return CaseResult(case_id, response, draw(metric_dicts), error)


@st.composite
def target_runs(draw: st.DrawFn) -> RunResult[CaseResult]:
    ids = draw(st.lists(texts.filter(bool), min_size=0, max_size=8, unique=True))
    return RunResult(draw(texts), [draw(case_rows(case_id)) for case_id in ids])


@st.composite
def retrieval_runs(draw: st.DrawFn) -> RunResult[QueryResult]:
    ids = draw(st.lists(texts.filter(bool), min_size=1, max_size=8, unique=True))
    rows = [
        QueryResult(q, draw(ids_lists), draw(metric_dicts), draw(st.none() | latencies))
        for q in ids
    ]
    return RunResult(draw(texts), rows)


def _write_read(tmp_path: Path, result: RunResult[Any], truncated: frozenset[str]) -> Any:
    art = build_artifact(result, [], git=(None, None), truncated_ids=truncated)
    return art, read_artifact(write_artifact(art, tmp_path / "run.json"))


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(result=target_runs(), data=st.data())
def test_a_target_run_reads_back_as_it_was_written(
    tmp_path: Path, result: RunResult[CaseResult], data: st.DataObject
) -> None:
    flagged = frozenset(data.draw(st.sets(st.sampled_from(result.ids()))) if result.ids() else ())
    _, back = _write_read(tmp_path, result, flagged)
    assert back.read_schema_version == ARTIFACT_SCHEMA_VERSION
    assert back.result.name == result.name
    assert back.result.per_query == result.per_query
    assert all(type(v) is float for r in back.result.per_query for v in r.metrics.values())
    assert back.truncated_ids == flagged


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(result=retrieval_runs())
def test_a_retrieval_run_reads_back_as_it_was_written(
    tmp_path: Path, result: RunResult[QueryResult]
) -> None:
    _, back = _write_read(tmp_path, result, frozenset())
    assert back.path == "retrieval"
    assert back.result.per_query == result.per_query


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(result=target_runs())
def test_every_case_is_one_line_in_run_order_under_the_columns_header(
    tmp_path: Path, result: RunResult[CaseResult]
) -> None:
    art = build_artifact(result, [], git=(None, None))
    lines = write_artifact(art, tmp_path / "run.json").read_text(encoding="utf-8").split("\n")
    assert f' "columns": {json.dumps(list(COLUMNS))},' in lines
    if not result.per_query:
        return
    start = lines.index(' "rows": [') + 1
    rows = [
        json.loads(line.strip().removesuffix(",")) for line in lines[start : start + len(result)]
    ]
    assert [row[0] for row in rows] == result.ids()
    assert lines[start + len(result)] == " ]"


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(result=target_runs())
def test_a_schema_2_document_reads_to_the_same_run_as_the_schema_3_file(
    tmp_path: Path, result: RunResult[CaseResult]
) -> None:
    # Schema 2 held each case as the object the checkpoint still writes (_row_dict).
    _, back = _write_read(tmp_path, result, frozenset())
    doc = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    doc.pop("columns")
    doc["rows"] = [_row_dict(row, "run.json") for row in result.per_query]
    doc["schema_version"] = 2
    old = artifact_from_dict(doc, where="v2.json")
    assert old.read_schema_version == 2
    assert old.result == back.result
    assert (old.metrics, old.truncated_ids) == (back.metrics, back.truncated_ids)


def test_integer_metric_values_are_stored_as_floats(tmp_path: Path) -> None:
    rows = [CaseResult("a", TargetResponse(["d"], latency_ms=1.0), {"m": 1, "n": 0.5})]
    _, back = _write_read(tmp_path, RunResult("r", rows), frozenset())
    assert back.result.per_query[0].metrics == {"m": 1.0, "n": 0.5}
    assert type(back.result.per_query[0].metrics["m"]) is float


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_a_non_finite_metric_is_refused_on_write_naming_the_case(
    tmp_path: Path, bad: float
) -> None:
    rows = [
        CaseResult("fine", TargetResponse(["d"], latency_ms=1.0), {"m": 0.5}),
        CaseResult("bad", TargetResponse(["d"], latency_ms=1.0), {"m": bad}),
    ]
    with pytest.raises(ArtifactError, match=r"run.json: case 'bad', metric 'm'.*NaN/inf"):
        write_artifact(build_artifact(RunResult("r", rows), []), tmp_path / "run.json")


def test_output_past_the_cap_is_cut_and_flagged_on_both_paths(tmp_path: Path) -> None:
    ids = [f"d{i}" for i in range(MAX_OUTPUT_IDS + 1)]
    _, back = _write_read(tmp_path, RunResult("r", [QueryResult("q", ids, {})]), frozenset())
    assert back.truncated_ids == {"q"}
    assert back.result.per_query[0].retrieved == ids[:MAX_OUTPUT_IDS]


# --- the committed schema-2 fixtures -------------------------------------------------------


def test_the_schema_2_target_fixture_reads_to_what_it_was_written_with() -> None:
    art = read_artifact(FIXTURES / "v2.json")
    assert art.read_schema_version == 2
    assert (art.name, art.path, art.seed, art.config_name) == (
        "fixture-v2",
        "target",
        42,
        "fixture",
    )
    rows = {r.query_id: r for r in art.result.per_query}
    assert list(rows) == ["a", "b", "c", "d"]
    a, b, c, d = rows["a"], rows["b"], rows["c"], rows["d"]
    assert isinstance(a, CaseResult)
    assert a.response is not None
    assert a.response.ranked_ids == ["d1", "d2", "d3"]
    assert a.response.meta == {"cost_usd": 0.01, "model": "m-1", "tags": ["x", {"y": 1}]}
    assert a.metrics == {"recall@1": 1.0, "ndcg@10": 0.9197207891481876}
    assert a.response.latency_ms == 12.5
    assert isinstance(b, CaseResult)
    assert b.response is not None
    assert b.response.text == 'a "quoted" answer\nover two lines — ünïcode ✓'
    assert not b.response.has_ids
    assert isinstance(c, CaseResult)
    assert c.response is not None
    assert (c.response.ranked_ids, c.response.text, c.response.latency_ms) == (
        ["d9"],
        "both kinds",
        0.0,
    )
    assert isinstance(d, CaseResult)
    assert (d.response, d.metrics, d.error) == (
        None,
        {},
        "target 'ranker' failed on case 'd': HTTP 500",
    )
    assert art.truncated_ids == {"a"}
    assert art.metrics["recall@1"].params == (("relevance_level", 2),)
    assert art.goldens is not None
    assert art.goldens.slices is not None
    assert art.goldens.slices.dimensions == ("tags",)


def test_the_schema_2_retrieval_fixture_reads_to_what_it_was_written_with() -> None:
    art = read_artifact(FIXTURES / "v2-retrieval.json")
    assert (art.read_schema_version, art.path, art.shard, art.subset) == (
        2,
        "retrieval",
        "1/2",
        "-k q",
    )
    assert art.result.per_query == [
        QueryResult("q1", ["d2", "d1", "d3"], {"recall@10": 1.0, "ndcg@10": 0.8}, 1.25),
        QueryResult("q2", [], {"recall@10": 0.0, "ndcg@10": 0.0}, None),
        QueryResult("q3", ["d7"], {"recall@10": 0.5}, 2.0),
    ]


@pytest.mark.parametrize("name", ["v2.json", "v2-retrieval.json"])
def test_a_schema_2_fixture_rewritten_reads_the_same(tmp_path: Path, name: str) -> None:
    old = read_artifact(FIXTURES / name)
    again = read_artifact(write_artifact(old, tmp_path / name))
    assert again.read_schema_version == ARTIFACT_SCHEMA_VERSION
    assert again.result == old.result
    assert (again.metrics, again.goldens, again.truncated_ids) == (
        old.metrics,
        old.goldens,
        old.truncated_ids,
    )


# --- a broken table ---------------------------------------------------------------------------


def _written(tmp_path: Path) -> Path:
    rows = [
        CaseResult("a", TargetResponse(["d1"], latency_ms=1.0), {"m": 1.0}),
        CaseResult("b", TargetResponse(["d2"], latency_ms=2.0), {"m": 0.0}),
        CaseResult("c", None, {}, error="boom"),
    ]
    return write_artifact(
        build_artifact(RunResult("r", rows), [], goldens=GoldensInfo("f", {})),
        tmp_path / "run.json",
    )


def _edit_line(path: Path, case_id: str, edit: Any) -> int:
    """Apply ``edit`` to the text of the line holding ``case_id``'s row; its line number."""
    lines = path.read_text(encoding="utf-8").split("\n")
    number = next(i for i, line in enumerate(lines) if line.startswith(f'  ["{case_id}"'))
    lines[number] = edit(lines[number])
    path.write_text("\n".join(lines), encoding="utf-8")
    return number + 1


@pytest.mark.parametrize(
    ("case_id", "edit", "match"),
    [
        pytest.param(
            "b",
            lambda text: text.replace(",false]", "]"),
            r"^{path}:{line}: row has 7 cells; each row is an array of the 8 columns id, ",
            id="a-row-with-a-missing-cell-is-named-by-file-and-line",
        ),
        pytest.param(
            "a",
            lambda _: '  {"id": "a"},',
            r"^{path}:{line}: row is an object, not an array",
            id="a-row-that-is-not-an-array-is-named-by-file-and-line",
        ),
        pytest.param(
            "b",
            lambda text: text.replace('{"m":0.0}', '{"m":"high"}'),
            r"^{path}:{line}: case 'b': metric 'm' has a non-numeric value 'high'$",
            id="a-wrong-cell-is-named-by-file-line-and-case",
        ),
        pytest.param(
            "b",
            lambda text: text.replace('["b"', '["a"', 1),
            r"^{path}:{line}: case 'a' appears twice$",
            id="a-repeated-case-is-named-by-the-line-of-the-second",
        ),
        pytest.param(
            "b",
            lambda _: '  ["b", {"m": 0.0}, oops],',
            r"^{path}: not valid JSON at line {line} column 21 \(Expecting value\)",
            id="a-line-that-is-not-json-is-named-by-line-and-column",
        ),
    ],
)
def test_an_edited_row_is_named_where_it_is(
    tmp_path: Path, case_id: str, edit: Any, match: str
) -> None:
    path = _written(tmp_path)
    line = _edit_line(path, case_id, edit)
    with pytest.raises(ArtifactError, match=match.format(path=path, line=line)):
        read_artifact(path)


def test_a_row_moved_off_its_line_is_named_by_its_index(tmp_path: Path) -> None:
    path = _written(tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["rows"][1] = doc["rows"][1][:-1]
    path.write_text(json.dumps(doc, indent=2), encoding="utf-8")  # reformatted by a tool
    with pytest.raises(ArtifactError, match=rf"^{path}: rows\[1\]: row has 7 cells"):
        read_artifact(path)


def test_a_file_cut_in_the_middle_of_the_rows_is_called_truncated(tmp_path: Path) -> None:
    path = _written(tmp_path)
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.index('["b"') + 10], encoding="utf-8")
    with pytest.raises(
        ArtifactError, match=rf"^{path}: not valid JSON at line \d+ column \d+ .*truncated"
    ):
        read_artifact(path)


@pytest.mark.parametrize(
    "columns",
    [list(reversed(COLUMNS)), list(COLUMNS[:-1]), "id,metrics"],
    ids=["reordered", "one-missing", "not-a-list"],
)
def test_a_columns_header_other_than_the_schemas_is_refused(tmp_path: Path, columns: Any) -> None:
    path = _written(tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["columns"] = columns
    path.write_text(json.dumps(doc), encoding="utf-8")
    what = "columns must be" if isinstance(columns, list) else "field 'columns' has the wrong type"
    with pytest.raises(ArtifactError, match=rf"^{path}: {what}"):
        read_artifact(path)


def test_without_the_c_encoder_the_same_text_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from json import encoder as json_encoder

    from evalkit._spec import artifact

    rows = [
        CaseResult(
            "a", TargetResponse(["d1", "é"], latency_ms=1.5, meta={"k": [1, None]}), {"m": 0.25}
        ),
        CaseResult("b", TargetResponse(text='say "hi"\n', latency_ms=0.0), {}),
        CaseResult("c", None, {}, error="boom"),
    ]
    art = build_artifact(RunResult("r", rows), [], git=(None, None))
    with_c = write_artifact(art, tmp_path / "c.json").read_bytes()
    artifact._line_encoder.cache_clear()
    monkeypatch.setattr(json_encoder, "c_make_encoder", None)
    try:
        without = write_artifact(art, tmp_path / "py.json").read_bytes()
    finally:
        artifact._line_encoder.cache_clear()
    assert without == with_c
    assert read_artifact(tmp_path / "py.json").result == art.result
