"""BEIR loaders: data root resolution, formats, gzip, and every malformed-input error."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import pytest

from evalkit import run
from evalkit._spec import corpus
from evalkit._spec.corpus import (
    Query,
    data_root,
    load_corpus,
    load_qrels,
    load_qrels_graded,
    load_queries,
)
from evalkit.errors import ConfigError, GoldenError

BEIR = Path(__file__).parents[1] / "data" / "beir"
TINY = BEIR / "tiny"


@pytest.fixture(autouse=True)
def _no_env_data_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """The developer's own EVALKIT_DATA must not leak into these tests."""
    monkeypatch.delenv(corpus.ENV_VAR, raising=False)


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """A writable copy of the tiny dataset at ``<tmp>/root/tiny``."""
    target = tmp_path / "root" / "tiny"
    shutil.copytree(TINY, target)
    return target


def gzip_in_place(path: Path) -> Path:
    zipped = path.with_name(path.name + ".gz")
    zipped.write_bytes(gzip.compress(path.read_bytes()))
    path.unlink()
    return zipped


# --------------------------------------------------------------------------- happy paths


def test_load_corpus_by_name_under_an_explicit_root() -> None:
    docs = load_corpus("tiny", data_root=BEIR)
    assert list(docs) == ["d1", "d2", "3", "d4"]
    assert docs["d1"] == {"title": "Paris", "text": "Paris is the capital of France."}
    assert docs["3"] == {"title": "", "text": "Mount Everest is the tallest mountain."}
    assert docs["d2"]["title"] == ""  # extra fields such as metadata are not kept


def test_load_queries_defaults_to_the_test_split() -> None:
    queries = load_queries("tiny", data_root=BEIR)
    assert queries == [
        Query("q1", "capital of france"),
        Query("q2", "tallest mountain"),
        Query("q3", "speed of light"),
    ]


def test_load_queries_other_split_and_all() -> None:
    assert [q.id for q in load_queries("tiny", data_root=BEIR, split="train")] == ["q9"]
    assert [q.id for q in load_queries("tiny", data_root=BEIR, split=None)] == [
        "q1",
        "q2",
        "q3",
        "q9",
    ]


def test_load_qrels_keeps_grade_one_and_above() -> None:
    assert load_qrels("tiny", data_root=BEIR) == {
        "q1": {"d1", "d2"},
        "q2": {"3"},
        "q3": {"d4"},
    }


def test_load_qrels_graded_keeps_every_grade() -> None:
    assert load_qrels_graded("tiny", data_root=BEIR) == {
        "q1": {"d1": 2, "d2": 1},
        "q2": {"3": 1, "d4": 0},
        "q3": {"d4": 1, "d1": -1},
    }


def test_a_query_judged_only_below_one_keeps_an_empty_set(dataset: Path) -> None:
    (dataset / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t0\n")
    assert load_qrels(dataset) == {"q1": set()}


def test_headerless_and_space_separated_qrels(dataset: Path) -> None:
    (dataset / "qrels" / "test.tsv").write_text("q1 d1 1\nq2  3  2\n\n")
    assert load_qrels_graded(dataset) == {"q1": {"d1": 1}, "q2": {"3": 2}}


def test_loaders_compose_with_run() -> None:
    docs = load_corpus("tiny", data_root=BEIR)

    def word_overlap(query: Query) -> list[str]:
        words = set(query.text.lower().split())
        scored = sorted(docs, key=lambda d: -len(words & set(docs[d]["text"].lower().split())))
        return scored

    result = run(
        "overlap",
        word_overlap,
        load_queries("tiny", data_root=BEIR),
        load_qrels("tiny", data_root=BEIR),
        ["recall@1"],
    )
    assert result.ids() == ["q1", "q2", "q3"]
    assert result.per_query[1].metrics["recall@1"] == 1.0  # q2 -> doc 3 ranks first


# --------------------------------------------------------------------------- data root


def test_environment_variable_sets_the_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(corpus.ENV_VAR, str(BEIR))
    assert data_root() == BEIR
    assert list(load_corpus("tiny")) == ["d1", "d2", "3", "d4"]


def test_argument_beats_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(corpus.ENV_VAR, str(tmp_path / "elsewhere"))
    assert data_root(BEIR) == BEIR
    assert len(load_corpus("tiny", data_root=BEIR)) == 4


def test_module_data_is_the_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(corpus, "DATA", TINY)
    assert data_root() == TINY
    assert len(load_corpus()) == 4  # None: the root itself is the dataset


def test_default_data_is_beside_the_source_checkout() -> None:
    assert Path(corpus.__file__).resolve().parents[2] / "data" == corpus.DATA


def test_blank_environment_variable_is_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(corpus.ENV_VAR, "  ")
    monkeypatch.setattr(corpus, "DATA", TINY)
    assert data_root() == TINY


def test_paths_to_a_dataset_directory(monkeypatch: pytest.MonkeyPatch) -> None:
    assert len(load_corpus(TINY)) == 4  # a Path
    monkeypatch.chdir(BEIR)
    assert len(load_corpus("./tiny")) == 4  # a string with a separator is a path


def test_paths_to_the_files_themselves() -> None:
    assert len(load_corpus(TINY / "corpus.jsonl")) == 4
    assert load_qrels(TINY / "qrels" / "train.tsv") == {"q9": {"d1"}}
    assert [q.id for q in load_queries(TINY / "queries.jsonl", split="train")] == ["q9"]


def test_gzipped_files_load_like_plain_ones(dataset: Path) -> None:
    for path in (dataset / "corpus.jsonl", dataset / "queries.jsonl", dataset / "qrels/test.tsv"):
        gzip_in_place(path)
    assert load_corpus(dataset) == load_corpus(TINY)
    assert load_queries(dataset) == load_queries(TINY)
    assert load_qrels_graded(dataset) == load_qrels_graded(TINY)


# --------------------------------------------------------------------------- missing data


def test_missing_data_names_the_path_and_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as info:
        load_corpus("scifact", data_root=tmp_path)
    message = str(info.value)
    assert f"looked for {tmp_path / 'scifact' / 'corpus.jsonl'}" in message
    assert "using the data_root argument" in message
    assert "Set EVALKIT_DATA" in message


def test_missing_data_names_the_environment_variable(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(corpus.ENV_VAR, str(tmp_path))
    with pytest.raises(ConfigError, match=rf"using EVALKIT_DATA={tmp_path}"):
        load_queries("scifact")


def test_missing_data_under_the_default_root(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(corpus, "DATA", tmp_path / "data")
    with pytest.raises(ConfigError, match=r"using evalkit\.corpus\.DATA \(no EVALKIT_DATA set\)"):
        load_qrels("scifact")


def test_missing_split_names_the_qrels_file() -> None:
    with pytest.raises(ConfigError, match=r"looked for .*tiny/qrels/dev\.tsv"):
        load_qrels("tiny", data_root=BEIR, split="dev")
    with pytest.raises(ConfigError, match=r"looked for .*tiny/qrels/dev\.tsv"):
        load_queries("tiny", data_root=BEIR, split="dev")


def test_split_must_be_a_plain_name() -> None:
    with pytest.raises(ConfigError, match="split must be a plain name"):
        load_qrels("tiny", data_root=BEIR, split="../test")


def test_plain_and_gzipped_copies_are_ambiguous(dataset: Path) -> None:
    (dataset / "corpus.jsonl.gz").write_bytes(gzip.compress(b""))
    with pytest.raises(ConfigError, match=r"both .*corpus\.jsonl and .*corpus\.jsonl\.gz exist"):
        load_corpus(dataset)


# --------------------------------------------------------------------------- malformed jsonl


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ('{"_id": "d9", "text": }', r"invalid JSON: Expecting value \(column 23\)"),
        ('["d9", "text"]', "expected a JSON object per document, got list"),
        ('{"text": "no id"}', "'_id' must be a non-empty string"),
        ('{"_id": 1.5, "text": "x"}', "'_id' must be a non-empty string"),
        ('{"_id": "d9"}', "'text' must be present"),
        ('{"_id": "d9", "text": 5}', "'text' must be a string, got 5"),
        ('{"_id": "d9", "title": ["t"], "text": "x"}', "'title' must be a string"),
        ('{"_id": "d1", "text": "again"}', r"duplicate document id 'd1' \(first at line 1\)"),
    ],
)
def test_malformed_corpus_line_names_file_and_line(dataset: Path, line: str, problem: str) -> None:
    path = dataset / "corpus.jsonl"
    path.write_text(path.read_text() + line + "\n")
    with pytest.raises(GoldenError, match=rf"corpus\.jsonl:5: {problem}"):
        load_corpus(dataset)


def test_malformed_queries_line(dataset: Path) -> None:
    path = dataset / "queries.jsonl"
    path.write_text(path.read_text() + '{"_id": "q1", "text": "dup"}\n')
    with pytest.raises(
        GoldenError, match=r"queries\.jsonl:5: duplicate query id 'q1' \(first at line 1\)"
    ):
        load_queries(dataset)


def test_empty_query_text(dataset: Path) -> None:
    (dataset / "queries.jsonl").write_text('{"_id": "q1", "text": "  "}\n')
    with pytest.raises(GoldenError, match=r"queries\.jsonl:1: query 'q1' has empty 'text'"):
        load_queries(dataset, split=None)


def test_judged_query_missing_from_queries(dataset: Path) -> None:
    (dataset / "qrels" / "test.tsv").write_text("q1\td1\t1\nq7\td1\t1\nq8\td2\t1\n")
    with pytest.raises(
        GoldenError, match=r"test\.tsv: judges 2 query id\(s\) absent from .*queries\.jsonl: q7, q8"
    ):
        load_queries(dataset)


@pytest.mark.parametrize("name", ["corpus.jsonl", "queries.jsonl"])
def test_empty_files_are_refused(dataset: Path, name: str) -> None:
    (dataset / name).write_text("\n\n")
    loader = load_corpus if name == "corpus.jsonl" else load_queries
    with pytest.raises(GoldenError, match=rf"{name}: no .*; the .* file is empty"):
        loader(dataset)


def test_invalid_utf8_names_the_line(dataset: Path) -> None:
    path = dataset / "corpus.jsonl"
    path.write_bytes(path.read_bytes() + b'{"_id": "d9", "text": "\xff"}\n')
    with pytest.raises(GoldenError, match=r"corpus\.jsonl:5: not valid UTF-8"):
        load_corpus(dataset)


def test_corrupt_gzip_is_named(dataset: Path) -> None:
    zipped = gzip_in_place(dataset / "corpus.jsonl")
    zipped.write_bytes(zipped.read_bytes()[:20])  # truncated
    with pytest.raises(GoldenError, match=r"cannot read .*corpus\.jsonl\.gz"):
        load_corpus(dataset)


def test_not_gzip_at_all(dataset: Path) -> None:
    (dataset / "corpus.jsonl").rename(dataset / "corpus.jsonl.gz")
    with pytest.raises(GoldenError, match=r"cannot read .*corpus\.jsonl\.gz"):
        load_corpus(dataset)


# --------------------------------------------------------------------------- malformed qrels


@pytest.mark.parametrize(
    ("line", "problem"),
    [
        ("q1\td1", r"expected 3 tab-separated fields \(query-id, corpus-id, score\), got 2"),
        ("q1\t0\td1\t1", "expected 3 tab-separated fields .*, got 4"),
        ("q1\td3\thigh", "score 'high' is not an integer grade"),
        ("q1\td3\t1.0", "score '1.0' is not an integer grade"),
        ("\td3\t1", "empty query-id or corpus-id"),
        ("q1\td1\t3", r"query 'q1' judges document 'd1' again \(first at line 2\)"),
    ],
)
def test_malformed_qrels_line_names_file_and_line(dataset: Path, line: str, problem: str) -> None:
    path = dataset / "qrels" / "test.tsv"
    path.write_text(path.read_text() + line + "\n")
    with pytest.raises(GoldenError, match=rf"test\.tsv:8: {problem}"):
        load_qrels(dataset)


def test_wrong_header_is_explained(dataset: Path) -> None:
    (dataset / "qrels" / "test.tsv").write_text("qid\tdocid\trel\nq1\td1\t1\n")
    with pytest.raises(
        GoldenError,
        match=r"test\.tsv:1: header 'rel' is not an integer grade; "
        r"the header must be query-id corpus-id score",
    ):
        load_qrels(dataset)


def test_empty_qrels(dataset: Path) -> None:
    (dataset / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n")
    with pytest.raises(GoldenError, match=r"test\.tsv: no judgements; the qrels file is empty"):
        load_qrels(dataset)
