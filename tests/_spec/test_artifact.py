from __future__ import annotations

import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from evalkit import ArtifactError, CaseResult, QueryResult, RunResult, TargetResponse, run
from evalkit._model.formats import ARTIFACT_SCHEMA_VERSION
from evalkit._spec.artifact import GoldensInfo, build_artifact, read_artifact, write_artifact
from evalkit._spec.artifact_rows import COLUMNS, MAX_OUTPUT_CHARS, MAX_OUTPUT_IDS


class Q:
    def __init__(self, qid: str) -> None:
        self.id = qid


def target_run() -> RunResult[CaseResult]:
    return RunResult(
        "cand",
        [
            CaseResult(
                "a",
                TargetResponse(["d1", "d2"], latency_ms=12.5, meta={"cost_usd": 0.01}),
                {"recall@1": 1.0},
            ),
            CaseResult("b", TargetResponse(text="an answer", latency_ms=3.0), {"recall@1": 0.0}),
            CaseResult("c", None, {}, error="target 'x' failed on case 'c': HTTP 500"),
        ],
    )


def test_round_trip_target_path(tmp_path: Path) -> None:
    art = build_artifact(target_run(), ["recall@1", "latency_p95"], git=("abc", True), seed=3)
    back = read_artifact(write_artifact(art, tmp_path / "run.json"))
    assert back.result == art.result
    assert back.metrics == art.metrics
    assert back.path == "target"
    assert back.git_commit == "abc"
    assert back.git_dirty is True
    assert back.seed == 3
    assert [r.case_id for r in back.failed] == ["c"]


def test_round_trip_retrieval_path(tmp_path: Path) -> None:
    result = run("sys", lambda q: ["x", "y"], [Q("q1"), Q("q2")], {"q1": {"x"}, "q2": {"z"}})
    art = build_artifact(result, ["recall@1", "ndcg@10"], git=(None, None))
    back = read_artifact(write_artifact(art, tmp_path / "run.json"))
    assert back.path == "retrieval"
    assert back.result == result
    assert isinstance(back.result.per_query[0], QueryResult)


def test_round_trip_gzip(tmp_path: Path) -> None:
    art = build_artifact(target_run(), ["recall@1"], git=(None, None))
    path = write_artifact(art, tmp_path / "run.json.gz")
    assert path.read_bytes()[:2] == b"\x1f\x8b"
    assert read_artifact(path).result == art.result


def test_provenance_fields_written_in_order(tmp_path: Path) -> None:
    art = build_artifact(
        target_run(),
        ["recall@1", "latency_p95"],
        goldens=GoldensInfo("setfp", {"a": "fa"}),
        seed=7,
        git=("abc123", False),
        config_name="cfg",
        resampling_stream="pcg64-v1",
    )
    doc = json.loads(write_artifact(art, tmp_path / "r.json").read_text())
    assert next(iter(doc)) == "schema_version"
    assert doc["schema_version"] == ARTIFACT_SCHEMA_VERSION
    assert doc["metrics"]["latency_p95"]["higher_is_better"] is False
    assert doc["metrics"]["latency_p95"]["kind"] == "aggregate"
    assert len(doc["metrics"]["recall@1"]["fingerprint"]) == 16
    assert doc["goldens"] == {"fingerprint": "setfp", "cases": {"a": "fa"}}
    assert doc["resampling_stream"] == "pcg64-v1"
    assert doc["created_at"].endswith("Z")
    assert doc["columns"] == list(COLUMNS)
    assert doc["rows"][2][COLUMNS.index("error")].startswith("target 'x'")


def test_write_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    target.write_text("old")
    write_artifact(build_artifact(target_run(), ["recall@1"], git=(None, None)), target)
    assert [p.name for p in tmp_path.iterdir()] == ["run.json"]
    assert json.loads(target.read_text())["schema_version"] == ARTIFACT_SCHEMA_VERSION


def test_nan_metric_refused_on_write_naming_case(tmp_path: Path) -> None:
    result = RunResult("r", [CaseResult("bad-case", TargetResponse(["x"]), {"m": float("nan")})])
    art = build_artifact(result, [], git=(None, None))
    with pytest.raises(ArtifactError, match="case 'bad-case', metric 'm'.*NaN/inf"):
        write_artifact(art, tmp_path / "r.json")
    assert not (tmp_path / "r.json").exists()


def test_unserialisable_meta_refused(tmp_path: Path) -> None:
    result = RunResult("r", [CaseResult("a", TargetResponse(["x"], meta={"obj": object()}), {})])
    with pytest.raises(ArtifactError, match="meta holds a value JSON cannot store"):
        write_artifact(build_artifact(result, [], git=(None, None)), tmp_path / "r.json")


def test_output_is_capped_and_flagged(tmp_path: Path) -> None:
    ids = [f"d{i}" for i in range(MAX_OUTPUT_IDS + 50)]
    text = "x" * (MAX_OUTPUT_CHARS + 10)
    result = RunResult(
        "r",
        [
            CaseResult("ids", TargetResponse(ids), {}),
            CaseResult("text", TargetResponse(text=text), {}),
            CaseResult("small", TargetResponse(["d"]), {}),
        ],
    )
    back = read_artifact(
        write_artifact(build_artifact(result, [], git=(None, None)), tmp_path / "r.json")
    )
    assert back.truncated_ids == {"ids", "text"}
    first = back.result.per_query[0].response
    assert first is not None
    assert len(first.ranked_ids) == MAX_OUTPUT_IDS


def write_doc(tmp_path: Path, doc: object) -> Path:
    path = tmp_path / "a.json"
    path.write_text(json.dumps(doc))
    return path


def good_doc(tmp_path: Path) -> dict[str, object]:
    path = write_artifact(
        build_artifact(target_run(), ["recall@1"], git=(None, None)), tmp_path / "g.json"
    )
    doc: dict[str, object] = json.loads(path.read_text())
    return doc


@pytest.mark.parametrize(
    ("edit", "match"),
    [
        pytest.param(
            lambda doc: doc.update(schema_version=99),
            r"a.json: artefact schema_version 99 was written by a newer evalkit",
            id="wrong-schema-version",
        ),
        pytest.param(
            lambda doc: doc["rows"][0][COLUMNS.index("metrics")].update({"recall@1": "high"}),
            "case 'a': metric 'recall@1' has a non-numeric value",
            id="hand-broken-metric-value",
        ),
        pytest.param(
            lambda doc: doc["rows"].append(doc["rows"][0]),
            "case 'a' appears twice",
            id="duplicate-case-in-file",
        ),
        pytest.param(lambda doc: doc.pop("rows"), "missing field 'rows'", id="missing-field"),
        pytest.param(
            lambda doc: doc["rows"][0].__setitem__(COLUMNS.index("ids"), None),
            "case 'a': a row needs an output or an error",
            id="row-without-output-or-error",
        ),
        pytest.param(
            lambda doc: doc.update(seed="seven"),
            "field 'seed' has the wrong type",
            id="wrong-type-field",
        ),
    ],
)
def test_a_hand_edited_artefact_is_refused(
    tmp_path: Path, edit: Callable[[dict[str, Any]], object], match: str
) -> None:
    doc = good_doc(tmp_path)
    edit(doc)
    with pytest.raises(ArtifactError, match=match):
        read_artifact(write_doc(tmp_path, doc))


def test_not_an_artefact(tmp_path: Path) -> None:
    with pytest.raises(ArtifactError, match="no schema_version"):
        read_artifact(write_doc(tmp_path, {"hello": 1}))
    with pytest.raises(ArtifactError, match="top level is not an object"):
        read_artifact(write_doc(tmp_path, [1, 2]))


def test_truncated_file(tmp_path: Path) -> None:
    good = write_artifact(
        build_artifact(target_run(), ["recall@1"], git=(None, None)), tmp_path / "g.json"
    )
    cut = tmp_path / "cut.json"
    cut.write_bytes(good.read_bytes()[:200])
    with pytest.raises(ArtifactError, match=r"cut.json: not valid JSON at line \d+.*truncated"):
        read_artifact(cut)


def test_truncated_gzip(tmp_path: Path) -> None:
    good = write_artifact(
        build_artifact(target_run(), ["recall@1"], git=(None, None)), tmp_path / "g.json.gz"
    )
    cut = tmp_path / "cut.json.gz"
    cut.write_bytes(good.read_bytes()[:40])
    with pytest.raises(ArtifactError, match="cut.json.gz: corrupt or truncated gzip"):
        read_artifact(cut)


def test_nan_in_file_refused(tmp_path: Path) -> None:
    text = json.dumps(good_doc(tmp_path)).replace('"recall@1": 1.0', '"recall@1": NaN', 1)
    path = tmp_path / "nan.json"
    path.write_text(text)
    with pytest.raises(ArtifactError, match="NaN"):
        read_artifact(path)


def test_missing_file() -> None:
    with pytest.raises(ArtifactError, match="nowhere.json: artefact file not found"):
        read_artifact("nowhere.json")


def test_gzip_detected_by_magic_even_without_suffix(tmp_path: Path) -> None:
    good = write_artifact(
        build_artifact(target_run(), ["recall@1"], git=(None, None)), tmp_path / "g.json"
    )
    other = tmp_path / "renamed.json"
    other.write_bytes(gzip.compress(good.read_bytes()))
    assert read_artifact(other).result == read_artifact(good).result
