"""``evalkit score`` reads BEIR qrels (told by their header) as it reads TREC qrels.

The invariant: the same judgements written as BEIR and as TREC qrels read to the same
grades (those :func:`evalkit.corpus.load_qrels_graded` reads) and score to the same rows.
A file mixing the formats, or BEIR without its header, is one stderr line naming the
file and line.
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest

from evalkit._spec.artifact import read_artifact
from evalkit._spec.trec import write_qrels
from evalkit._spec.trec_io import read_qrels
from evalkit.corpus import load_qrels, load_qrels_graded
from helpers.cli import evalkit
from helpers.tiny_project import one_line_error

TINY = Path(__file__).parents[1] / "data" / "beir" / "tiny"
HEADER = "query-id\tcorpus-id\tscore\n"


def beir_text(qrels: dict[str, dict[str, int]]) -> str:
    return HEADER + "".join(
        f"{qid}\t{doc}\t{grade}\n" for qid, docs in qrels.items() for doc, grade in docs.items()
    )


def generated(seed: int) -> dict[str, dict[str, int]]:
    rng = random.Random(seed)
    return {
        f"q{q}": {f"d{d}": rng.choice([-1, 0, 0, 1, 1, 2, 3]) for d in rng.sample(range(40), 6)}
        for q in range(rng.randint(1, 12))
    }


@pytest.mark.parametrize("seed", range(8))
def test_beir_and_trec_qrels_read_to_the_grades_load_qrels_reads(tmp_path: Path, seed: int) -> None:
    grades = generated(seed)
    (tmp_path / "b.tsv").write_text(beir_text(grades))
    with gzip.open(tmp_path / "b.tsv.gz", "wt") as fh:
        fh.write(beir_text(grades))
    write_qrels(tmp_path / "t.txt", grades)
    expected = load_qrels_graded(tmp_path / "b.tsv")
    assert expected == grades
    for name in ("b.tsv", "b.tsv.gz", "t.txt"):
        assert read_qrels(tmp_path / name) == expected


def test_score_gives_the_same_rows_from_beir_and_trec_qrels(tmp_path: Path) -> None:
    graded = load_qrels_graded(TINY, split="test")
    write_qrels(tmp_path / "trec.qrels", graded)
    (tmp_path / "run.txt").write_text(
        "q1 Q0 d2 1 3.0 t\nq1 Q0 d1 2 2.0 t\nq1 Q0 d9 3 1.0 t\nq2 Q0 d4 1 2.0 t\nq2 Q0 3 2 1.0 t\n"
    )
    metrics = ("--metrics", "ndcg@10,recall@2,map@100")
    for qrels, out in ((TINY / "qrels" / "test.tsv", "beir.json"), ("trec.qrels", "trec.json")):
        done = evalkit("score", "run.txt", qrels, *metrics, "--out", out, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
    beir = read_artifact(tmp_path / "beir.json").result.per_query
    trec = read_artifact(tmp_path / "trec.json").result.per_query
    assert [(r.query_id, r.metrics) for r in beir] == [(r.query_id, r.metrics) for r in trec]
    # grade 0 is judged, not relevant, exactly as load_qrels says
    relevant = load_qrels(TINY, split="test")
    assert relevant["q2"] == {"3"}


@pytest.mark.parametrize(
    ("text", "line", "needles"),
    [
        # BEIR header, then a TREC line
        (HEADER + "q1\td1\t1\nq1 0 d2 1\n", 3, ("got 4", "keep one format")),
        # TREC lines, then BEIR's header
        ("q1 0 d1 1\nquery-id\tcorpus-id\tscore\nq1\td2\t1\n", 2, ("header belongs on line 1",)),
        # BEIR without its header
        ("q1\td1\t1\n", 1, ("need their header on line 1",)),
        # a grade that is no integer
        (HEADER + "q1\td1\thigh\n", 2, ("'high' is not an integer grade",)),
        # a document judged twice
        (HEADER + "q1\td1\t1\nq1\td1\t2\n", 3, ("again (first at line 2)",)),
    ],
)
def test_a_mixed_or_broken_qrels_file_is_one_line_naming_file_and_line(
    tmp_path: Path, text: str, line: int, needles: tuple[str, ...]
) -> None:
    (tmp_path / "qrels.tsv").write_text(text)
    (tmp_path / "run.txt").write_text("q1 Q0 d1 1 1.0 t\n")
    done = evalkit(
        "score", "run.txt", "qrels.tsv", "--metrics", "ndcg@10", "--out", "o.json", cwd=tmp_path
    )
    where = ("qrels.tsv:" + str(line), "qrels.tsv, line " + str(line))
    one_line_error(done, 2, *needles)
    assert any(w in done.stderr for w in where), done.stderr
    assert not (tmp_path / "o.json").exists()
