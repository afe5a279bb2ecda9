"""orjson writes and reads the artefact's rows only where it agrees with json (#27).

Every value orjson would write otherwise than json (NaN, an Enum, a UUID) or refuses
(an integer past 64 bits, a key that is not a string, half a surrogate pair) sends the
run to json, which writes it or refuses it with the words it always had; every file
orjson parses otherwise than json (an integer past 64 bits, which it makes a float) or
refuses (NaN, ``1e400``, half a surrogate pair) is read by json.  A file read either
way gives the same run.
"""

from __future__ import annotations

import enum
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit import ArtifactError, CaseResult, QueryResult, RunResult, TargetResponse
from evalkit._spec.artifact import artifact_from_dict, build_artifact, read_artifact, write_artifact


class Colour(enum.Enum):
    RED = 1


def _run(meta: dict[Any, Any] | None = None, latency: float = 1.5) -> RunResult[CaseResult]:
    rows = [
        CaseResult("a", TargetResponse(["d1", "d2"], latency_ms=latency, meta=meta), {"m": 0.5}),
        CaseResult("b", None, {}, error="boom"),
    ]
    return RunResult("r", rows)


def _written(tmp_path: Path, result: RunResult[Any]) -> Path:
    return write_artifact(build_artifact(result, [], git=(None, None)), tmp_path / "run.json")


def _row_lines(path: Path) -> list[str]:
    return [line for line in path.read_text(encoding="utf-8").split("\n") if line[:3] == "  ["]


@pytest.mark.parametrize(
    ("meta", "latency", "message"),
    [
        ({}, float("nan"), "cannot serialise run: Out of range float values"),
        ({"c": float("inf")}, 1.0, "cannot serialise run: Out of range float values"),
        ({"c": [1.0, {"d": float("nan")}]}, 1.0, "cannot serialise run: Out of range float"),
        ({"c": Colour.RED}, 1.0, r"\(Object of type Colour is not JSON serializable\)"),
        ({"c": uuid.UUID(int=3)}, 1.0, r"\(Object of type UUID is not JSON serializable\)"),
        (
            {"c": "\udcff"},
            1.0,
            "cannot serialise run: 'utf-8' codec can't encode character '\\\\udcff' in "
            r"position \d+: surrogates not allowed$",
        ),
    ],
    ids=["nan-latency", "inf-meta", "nested-nan", "enum", "uuid", "lone-surrogate"],
)
def test_what_json_refuses_is_refused_with_its_words(
    tmp_path: Path, meta: dict[str, Any], latency: float, message: str
) -> None:
    with pytest.raises(ArtifactError, match=rf"^{tmp_path / 'run.json'}: .*{message}"):
        _written(tmp_path, _run(meta, latency))
    assert not (tmp_path / "run.json").exists()


@pytest.mark.parametrize(
    ("meta", "cell"),
    [
        ({"n": 2**70}, '{"n":1180591620717411303424}'),
        ({"n": -(2**64)}, '{"n":-18446744073709551616}'),
        ({1: "x", None: 2}, '{"1":"x","null":2}'),
    ],
    ids=["past-64-bits", "negative-past-64-bits", "keys-not-text"],
)
def test_what_only_json_writes_is_written_by_json_in_the_same_layout(
    tmp_path: Path, meta: dict[Any, Any], cell: str
) -> None:
    path = _written(tmp_path, _run(meta))
    assert _row_lines(path) == [
        f'  ["a",{{"m":0.5}},["d1","d2"],null,1.5,{cell},null,false],',
        '  ["b",{},null,null,null,{},"boom",false]',
    ]
    back = read_artifact(path).result.per_query[0].response
    assert back is not None
    assert back.meta == json.loads(cell)


def test_an_integer_past_64_bits_reads_exactly_where_the_reader_keeps_it(tmp_path: Path) -> None:
    big = 12345678901234567890123
    path = _written(tmp_path, _run({"n": big, "deep": {"k": [-big]}}))
    art = read_artifact(path)
    response = art.result.per_query[0].response
    assert response is not None
    assert response.meta == {"n": big, "deep": {"k": [-big]}}
    assert type(response.meta["n"]) is int
    # a metric value written as a huge integer (by hand) is json's float of it
    text = path.read_text(encoding="utf-8").replace('{"m":0.5}', f'{{"m":{big}}}')
    path.write_text(text, encoding="utf-8")
    assert read_artifact(path).result.per_query[0].metrics == {"m": float(big)}


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("NaN", r"NaN is not a valid metric value \(NaN/Infinity are never valid scores\)$"),
        ("1e400", "case 'a': metric 'm' has a non-numeric value inf$"),
    ],
)
def test_a_file_orjson_refuses_gets_the_json_readers_message(
    tmp_path: Path, cell: str, message: str
) -> None:
    path = _written(tmp_path, _run())
    text = path.read_text(encoding="utf-8").replace('{"m":0.5}', f'{{"m":{cell}}}')
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ArtifactError, match=rf"^{path}(:\d+)?: .*{message}"):
        read_artifact(path)


def test_half_a_surrogate_pair_is_refused_as_before(tmp_path: Path) -> None:
    path = _written(tmp_path, _run({"c": "x"}))
    text = path.read_text(encoding="utf-8").replace('{"c":"x"}', '{"c":"\\ud800"}')
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ArtifactError, match=r"half of a UTF-16 surrogate pair"):
        read_artifact(path)


finite = st.floats(allow_nan=False, allow_infinity=False)
texts = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8)
meta_values = st.recursive(
    st.none() | st.booleans() | st.integers() | finite | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)


@st.composite
def runs(draw: st.DrawFn) -> RunResult[Any]:
    ids = draw(st.lists(texts.filter(bool), min_size=1, max_size=6, unique=True))
    metrics = st.dictionaries(st.sampled_from(["m", "n"]), finite | st.integers())
    if draw(st.booleans()):
        return RunResult(
            "r",
            [
                QueryResult(q, draw(st.lists(texts, max_size=4)), draw(metrics), draw(st.none()))
                for q in ids
            ],
        )
    rows = []
    for case_id in ids:
        response = TargetResponse(
            ranked_ids=draw(st.none() | st.lists(texts, max_size=4)),
            text=draw(texts),
            latency_ms=draw(st.floats(0, 1e6)),
            meta=draw(st.dictionaries(texts, meta_values, max_size=3)),
        )
        rows.append(CaseResult(case_id, response, draw(metrics), draw(st.none() | texts)))
    return RunResult("r", rows)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(result=runs())
def test_orjson_and_json_read_every_file_to_the_same_run(
    tmp_path: Path, result: RunResult[Any]
) -> None:
    path = _written(tmp_path, result)
    text = path.read_text(encoding="utf-8")
    by_json = artifact_from_dict(json.loads(text), where=str(path), text=text)
    read = read_artifact(path)
    assert read.result == by_json.result
    for got, want in zip(read.result.per_query, by_json.result.per_query, strict=True):
        meta = got.response.meta if isinstance(got, CaseResult) and got.response else {}
        want_meta = want.response.meta if isinstance(want, CaseResult) and want.response else {}
        assert json.dumps(meta, sort_keys=True) == json.dumps(want_meta, sort_keys=True)
    assert read.truncated_ids == by_json.truncated_ids


def test_orjson_reads_a_plain_file_and_leaves_the_rest_to_json(tmp_path: Path) -> None:
    from evalkit._spec.artifact import _read_quickly

    plain = _written(tmp_path, _run({"cost": 0.25, "tags": ["x"]}))
    assert _read_quickly(plain.read_bytes(), "run.json") is not None
    huge = write_artifact(build_artifact(_run({"n": 2**70}), []), tmp_path / "huge.json")
    assert _read_quickly(huge.read_bytes(), "huge.json") is None
    edited = plain.read_bytes().replace(b'"m":0.5', b'"m":"high"')
    assert _read_quickly(edited, "run.json") is None  # json's way names the fault


FIXTURES = Path(__file__).parents[1] / "data" / "artifacts"


@pytest.mark.parametrize("name", ["v3.json", "v3-retrieval.json"])
def test_a_schema_3_file_of_the_json_writer_reads_through_orjson_as_its_source(
    tmp_path: Path, name: str
) -> None:
    from evalkit._spec.artifact import _read_quickly

    path = FIXTURES / name
    quick = _read_quickly(path.read_bytes(), str(path))
    assert quick is not None  # spaces after , and : and json's floats are no matter
    source = read_artifact(FIXTURES / name.replace("v3", "v2"))
    assert read_artifact(path).result == quick.result == source.result
    assert quick.truncated_ids == source.truncated_ids
    assert read_artifact(write_artifact(quick, tmp_path / name)).result == source.result


_COLLECTOR_CHECK = """
import gc, sys
from evalkit._spec.artifact import read_artifact

path = sys.argv[1]
kept = [{"frozen": i} for i in range(100)]
gc.freeze()
frozen = gc.get_freeze_count()
assert frozen >= len(kept), frozen
read_artifact(path)
assert gc.get_freeze_count() == frozen, (gc.get_freeze_count(), frozen)
assert gc.isenabled()
gc.unfreeze()
gc.disable()
read_artifact(path)
assert not gc.isenabled()
gc.enable()
assert gc.get_freeze_count() == 0
print("ok")
"""


def test_reading_leaves_the_collector_as_the_program_set_it(tmp_path: Path) -> None:
    # The reader moves its new objects to the oldest generation with gc.freeze() and
    # gc.unfreeze(): a program that froze objects of its own (before a fork) keeps them
    # frozen, and one that turned the collector off finds it off.  The collector is the
    # process's: checked in a fresh interpreter, where no other test's thread can move it.
    import subprocess
    import sys

    path = _written(tmp_path, _run())
    done = subprocess.run(
        [sys.executable, "-c", _COLLECTOR_CHECK, str(path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr
