"""TREC run and qrels files: trec_eval's reading rules, writing, .gz, and every refusal."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pytest

import evalkit._spec.trec_io as trec_io
from evalkit._spec.trec import (
    read_run,
    score_trec_run,
    write_qrels,
    write_run,
)
from evalkit._spec.trec_io import TrecFormatError, read_qrels
from evalkit.errors import InputError, MetricError
from evalkit.metrics.rankings import QuerySelection


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --------------------------------------------------------------------------- reading runs


def test_run_order_is_score_descending_then_doc_id_descending(tmp_path: Path) -> None:
    # Line order and the rank column are ignored; exact ties fall back to the doc id,
    # compared byte-wise descending ('é' is 0xC3.. in UTF-8, above every ASCII byte).
    path = write(
        tmp_path / "run.txt",
        "q1 Q0 a 1 2.0 t\n"
        "q1 Q0 B 2 2.0 t\n"
        "q1 Q0 low 3 -1e3 t\n"
        "q1 Q0 é 4 2.0 t\n"
        "q1 Q0 b 5 2.0 t\n"
        "q1 Q0 top 6 +inf t\n",
    )
    run = read_run(path)
    assert run.as_dict() == {"q1": ["top", "é", "b", "a", "B", "low"]}
    assert run.scored(0)[0] == ("top", float("inf"))
    assert run.tag == "t"
    assert run.distinct


def test_comments_blank_lines_extra_fields_and_the_last_tag(tmp_path: Path) -> None:
    path = write(
        tmp_path / "run.txt",
        "# produced by bm25\n"
        "\n"
        "q2\tQ0\td1\t1\t0.5\tfirst\n"
        "   # indented comment\n"
        "q2 Q0 d2 2 0.7 second extra fields are ignored\n"
        "q1 Q0 d3 1 1 last",  # no final newline
    )
    run = read_run(path)
    assert run.as_dict() == {"q2": ["d2", "d1"], "q1": ["d3"]}
    assert run.tag == "last"


def test_interleaved_queries_are_merged_and_reranked(tmp_path: Path) -> None:
    path = write(
        tmp_path / "run.txt",
        "q1 Q0 a 1 1.0 t\nq2 Q0 x 1 1.0 t\nq1 Q0 b 2 3.0 t\nq2 Q0 y 2 0.5 t\nq1 Q0 c 3 2.0 t\n",
    )
    assert read_run(path).as_dict() == {"q1": ["b", "c", "a"], "q2": ["x", "y"]}


def test_small_chunks_read_the_same_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(3)
    lines = [
        f"q{q} Q0 d{d} 0 {rng.integers(0, 5) / 2} t\n" for q in range(40) for d in range(q % 7 + 1)
    ]
    lines += ["q3 Q0 late 0 9.0 t\n"]  # q3 again, after other queries
    path = write(tmp_path / "run.txt", "".join(lines))
    whole = read_run(path)
    monkeypatch.setattr(trec_io, "CHUNK_BYTES", 37)  # queries span many chunks
    chunked = read_run(path)
    assert chunked.as_dict() == whole.as_dict()
    assert chunked.scores.tolist() == whole.scores.tolist()
    assert chunked.ranking(3)[0] == "late"


def test_float32_ties_scores_closer_than_float_precision(tmp_path: Path) -> None:
    path = write(tmp_path / "run.txt", "q Q0 a 1 1.0000000001 t\nq Q0 b 2 1.0 t\n")
    assert read_run(path).as_dict() == {"q": ["a", "b"]}  # doubles differ
    as_float32 = read_run(path, score_dtype="float32")
    assert as_float32.as_dict() == {"q": ["b", "a"]}  # a tie in float32: doc id descending
    assert as_float32.scored(0) == [("b", 1.0), ("a", 1.0000000001)]  # scores stay with ids
    with pytest.raises(TrecFormatError, match="score_dtype must be 'float64' or 'float32'"):
        read_run(path, score_dtype="half")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "q1 Q0 d1 1 0.5\n",
            r"run\.txt, line 1: expected 'query_id Q0 doc_id rank score run_tag', got 5 field",
        ),
        (
            "q1 Q0 d1 1 0.5 t\nq1 Q0 d2 1 high t\n",
            r"run\.txt, line 2: score 'high' is not a number",
        ),
        ("# c\nq1 Q0 d1 1 1_0 t\n", r"run\.txt, line 2: score '1_0' is not a number"),
        ("q1 Q0 d1 1 nan t\n", r"run\.txt, line 1: score is NaN"),
        (
            "q1 Q0 d1 1 1 t\nq2 Q0 x 1 1 t\nq1 Q0 d1 2 0 t\n",
            r"query 'q1' lists document 'd1' more than once",
        ),
        ("# only a comment\n\n", r"run\.txt: no run lines"),
    ],
)
def test_malformed_runs_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "run.txt", text)
    with pytest.raises(TrecFormatError, match=message):
        read_run(path)


def test_unreadable_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(TrecFormatError, match=r"cannot read run file '.*missing\.txt'"):
        read_run(tmp_path / "missing.txt")
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"q1 Q0 \xff\xfe 1 1 t\n")
    with pytest.raises(TrecFormatError, match=r"bad\.txt, line 1: .* is not valid UTF-8"):
        read_run(bad)
    truncated = tmp_path / "cut.txt.gz"
    truncated.write_bytes(gzip.compress(b"q1 Q0 d 1 1 t\n" * 100)[:-12])
    with pytest.raises(TrecFormatError, match=r"cut\.txt\.gz: cannot read the file"):
        read_run(truncated)
    assert issubclass(TrecFormatError, InputError)


# --------------------------------------------------------------------------- reading qrels


def test_qrels_are_graded_and_keep_negative_and_zero_labels(tmp_path: Path) -> None:
    path = write(
        tmp_path / "qrels.txt",
        "# judged by two assessors\nq1 0 a 2\nq1 0 b 0\nq1 0 c -1\n\nq2 Q0 x +1\nq1 0 d 1\n",
    )
    assert read_qrels(path) == {"q1": {"a": 2, "b": 0, "c": -1, "d": 1}, "q2": {"x": 1}}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("q1 0 a\n", r"qrels\.txt, line 1: expected 'query_id 0 doc_id grade', got 3 field"),
        ("q1 0 a 1 extra\n", r"line 1: expected 'query_id 0 doc_id grade', got 5 field"),
        ("q1 0 a 1\nq1 0 b 0.5\n", r"qrels\.txt, line 2: grade '0\.5' is not an integer"),
        (
            "q1 0 a 1\nq2 0 a 1\nq1 0 b 1\nq1 0 a 0\n",
            r"line 4: document 'a' is judged twice for query 'q1'",
        ),
        ("\n# nothing\n", r"qrels\.txt: no qrels lines"),
    ],
)
def test_malformed_qrels_name_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "qrels.txt", text)
    with pytest.raises(TrecFormatError, match=message):
        read_qrels(path)


def test_a_repeat_judgment_in_a_later_chunk_names_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(trec_io, "CHUNK_BYTES", 16)
    path = write(tmp_path / "qrels.txt", "q1 0 a 1\nq1 0 b 1\nq1 0 c 1\nq2 0 a 1\nq1 0 b 2\n")
    with pytest.raises(TrecFormatError, match="line 5: document 'b' is judged twice"):
        read_qrels(path)


@pytest.mark.parametrize("chunk_bytes", [16, 1 << 17])
@pytest.mark.parametrize(
    "qrels",
    [
        "q1 0 a 0\nq1 0 b 1\nq1 0 a 2\n",  # the repeat is of a grade the scoring drops
        "q1 0 a -3\nq1 0 b 1\nq1 0 a -3\n",
    ],
)
def test_scoring_refuses_a_repeat_judgment_it_would_not_keep(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk_bytes: int, qrels: str
) -> None:
    monkeypatch.setattr(trec_io, "CHUNK_BYTES", chunk_bytes)
    run = write(tmp_path / "run.txt", "q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0 t\n")
    path = write(tmp_path / "qrels.txt", qrels)
    with pytest.raises(TrecFormatError, match="line 3: document 'a' is judged twice"):
        score_trec_run(run, path, ["ndcg@10"])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("queries", ["both", "qrels", "run"])
def test_scoring_keeps_only_scoring_judgments_and_scores_as_with_every_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, queries: QuerySelection
) -> None:
    # Scoring built-in families keeps only grades >= 1 of the qrels; the values are those
    # of the same rankings scored against every judgment (zero and negative grades, a
    # query judged only irrelevant, a query whose lines come back later in the file).
    from evalkit.metrics.batch import score_rankings

    monkeypatch.setattr(trec_io, "CHUNK_BYTES", 64)
    rng = np.random.default_rng(seed)
    qids = [f"q{i}" for i in range(6)]
    lines = [
        f"{q} 0 d{d} {int(rng.choice([-1, 0, 0, 1, 2, 3]))}\n"
        for q in qids[:-1]
        for d in rng.choice(40, size=int(rng.integers(1, 25)), replace=False)
    ]
    lines.append(f"{qids[-1]} 0 d0 0\n")
    if seed % 2:  # a query's lines come back later in the file
        lines.append(f"{qids[0]} 0 d999 2\n")
    qrels = write(tmp_path / "qrels.txt", "".join(lines))
    ranked = {
        q: [f"d{d}" for d in rng.choice(40, size=int(rng.integers(1, 30)), replace=False)]
        for q in [*qids[1:], "unjudged"][: len(qids) - (queries == "run")]
    }
    run = write_run(tmp_path / "run.txt", ranked)
    specs = ["ndcg@10", "map@1000", "recall@5", "precision@3", "mrr@10", "hit_rate@2"]
    got = score_trec_run(run, qrels, specs, queries=queries, relevance_level=1 + seed % 2)
    want = score_rankings(
        "run.txt",
        read_run(run),
        read_qrels(qrels),
        specs,
        queries=queries,
        relevance_level=1 + seed % 2,
    )
    assert [(r.query_id, r.retrieved, r.metrics) for r in got.per_query] == [
        (r.query_id, r.retrieved, r.metrics) for r in want.per_query
    ]


# --------------------------------------------------------------------------- writing


def test_ranked_lists_round_trip_through_a_run_file(tmp_path: Path) -> None:
    rankings = {"q1": ["c", "a", "b"], "q2": [], "q3": ["z"]}
    path = write_run(tmp_path / "run.txt", rankings, tag="mine")
    text = path.read_text()
    assert text.splitlines()[0] == "q1 Q0 c 1 3 mine"
    assert read_run(path).as_dict() == {"q1": ["c", "a", "b"], "q3": ["z"]}  # no empty run


def test_scores_round_trip_exactly_and_gzip_is_reproducible(tmp_path: Path) -> None:
    scores = {"q1": {"a": 0.1 + 0.2, "b": 1e-300, "c": -7.5}, "q2": {"x": 3.0, "y": 3.0}}
    first = write_run(tmp_path / "a.run.gz", scores)
    second = write_run(tmp_path / "b.run.gz", scores)
    assert first.read_bytes()[:2] == b"\x1f\x8b"
    assert first.read_bytes() == second.read_bytes()
    run = read_run(first)
    assert run.scored(0) == [("a", 0.1 + 0.2), ("b", 1e-300), ("c", -7.5)]
    assert run.ranking(1) == ["y", "x"]  # the tie, as trec_eval orders it
    again = write_run(tmp_path / "c.run", run)
    assert read_run(again).scored(0) == run.scored(0)


def test_qrels_round_trip_and_sets_mean_grade_one(tmp_path: Path) -> None:
    path = write_qrels(tmp_path / "q.txt.gz", {"q1": {"a": 2, "b": -1}, "q2": {"x"}})
    assert read_qrels(path) == {"q1": {"a": 2, "b": -1}, "q2": {"x": 1}}
    assert not list(tmp_path.glob(".*.tmp"))  # the temp file was renamed into place


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"q 1": ["a"]}, r"query id 'q 1' is empty or contains whitespace"),
        ({"#q": ["a"]}, r"query id '#q' starts with '#'"),
        ({"q1": ["a", "b c"]}, r"query 'q1': document id 'b c' is empty or contains whitespace"),
        ({"q1": ["a", ""]}, r"document id '' is empty"),
        ({"q1": ["a", "a"]}, r"query 'q1': a document id is ranked twice"),
        ({"q1": {"a": float("nan")}}, r"query 'q1': a score is NaN"),
        ({"q1": "abc"}, r"query 'q1': expected a list of ids"),
        ({1: ["a"]}, r"query id 1 is not a string"),
    ],
)
def test_unwritable_runs_raise_and_leave_no_file(
    tmp_path: Path, data: object, message: str
) -> None:
    target = tmp_path / "run.txt"
    with pytest.raises(TrecFormatError, match=message):
        write_run(target, data)  # type: ignore[arg-type]
    assert not target.exists()
    assert not list(tmp_path.iterdir())


def test_bad_tags_and_grades_raise(tmp_path: Path) -> None:
    with pytest.raises(TrecFormatError, match="run tag 'my run'"):
        write_run(tmp_path / "r.txt", {"q": ["a"]}, tag="my run")
    with pytest.raises(TrecFormatError, match="query 'q1': grade of 'a' must be an integer"):
        write_qrels(tmp_path / "q.txt", {"q1": {"a": 1.5}})


# --------------------------------------------------------------------------- scoring files


def test_score_trec_run_scores_judged_queries_and_names_the_run(tmp_path: Path) -> None:
    run_path = write_run(
        tmp_path / "run.txt", {"q1": ["a", "x"], "q2": ["b"], "stray": ["c"]}, tag="bm25"
    )
    qrels_path = write_qrels(tmp_path / "qrels.txt", {"q1": {"a": 1}, "q2": {"b": 2}, "q9": {"z"}})
    result = score_trec_run(run_path, qrels_path, ["precision@2", "ndcg@2"])
    assert result.name == "bm25"
    assert [(r.query_id, r.retrieved) for r in result.per_query] == [
        ("q1", ["a", "x"]),
        ("q2", ["b"]),
    ]
    assert result.per_query[0].metrics == {"precision@2": 0.5, "ndcg@2": 1.0}
    strict = score_trec_run(run_path, qrels_path, ["precision@2"], relevance_level=2, name="s")
    assert strict.name == "s"
    assert [r.metrics["precision@2"] for r in strict.per_query] == [0.0, 0.5]
    complete = score_trec_run(run_path, qrels_path, ["recall@5"], queries="qrels")
    assert [r.query_id for r in complete.per_query] == ["q1", "q2", "q9"]
    with pytest.raises(MetricError, match="'stray'"):
        score_trec_run(run_path, qrels_path, ["recall@5"], queries="run")


def test_score_trec_run_on_interleaved_files_and_unknown_metrics(tmp_path: Path) -> None:
    run_path = write(tmp_path / "run.txt", "q1 Q0 a 1 1 t\nq2 Q0 b 1 1 t\nq1 Q0 c 1 2 t\n")
    qrels_path = write_qrels(tmp_path / "qrels.txt", {"q1": {"a": 1}, "q2": {"b": 1}})
    result = score_trec_run(run_path, qrels_path, ["mrr@10"])
    assert [(r.query_id, r.metrics["mrr@10"]) for r in result.per_query] == [
        ("q1", 0.5),
        ("q2", 1.0),
    ]
    with pytest.raises(MetricError, match="unknown metric 'prec@5'"):
        score_trec_run(run_path, qrels_path, ["prec@5"])
