"""Golden sets and qrels from Hugging Face ``datasets`` and ``ir_datasets`` (docs/loaders.md).

Local data only, never the hub: ``datasets.load_dataset`` on a local folder (JSON lines and
parquet), ``datasets.Dataset`` built in memory, and an ir_datasets dataset registered
from local files.  The invariant: a case from a hub is the case the JSONL loader makes
of the same record (same fingerprint), and qrels from an ir_datasets id equal the same
judgements read from a TREC file.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

# Never the network: set before datasets or ir_datasets is imported.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

from evalkit import load_goldens, read_qrels
from evalkit._spec.dataset_hubs import goldens_from_rows
from evalkit._spec.golden_loaders import load_jsonl
from evalkit._spec.trec import write_qrels
from evalkit.corpus import load_qrels, load_qrels_graded, load_queries
from evalkit.errors import ConfigError, GoldenError
from helpers.cli import evalkit

RECORDS: list[dict[str, Any]] = [
    {"qid": "a", "question": "alpha", "docs": ["d1"], "answer": "first", "lang": "en"},
    {"qid": "b", "question": "beta", "docs": ["d2", "d3"], "answer": "second", "lang": "de"},
    {"qid": "c", "question": "gamma", "docs": [], "answer": "third", "lang": "en"},
]
FIELDS = {"id": "qid", "query": "question", "relevant": "docs", "expected": "answer"}


def as_golden_file(tmp_path: Path) -> Path:
    """The same records as a JSONL golden file, evalkit's field names."""
    path = tmp_path / "same.jsonl"
    path.write_text(
        "".join(
            json.dumps({name: r[column] for name, column in FIELDS.items()}) + "\n" for r in RECORDS
        )
    )
    return path


@pytest.fixture
def hf_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in RECORDS))
    return folder


def test_a_local_hf_dataset_loads_as_the_golden_file_of_the_same_records(
    tmp_path: Path, hf_folder: Path
) -> None:
    goldens = load_goldens(
        f"hf:{hf_folder}",
        split="test",
        fields=FIELDS,
        dataset_options={"cache_dir": str(tmp_path / "cache")},
    )
    same = load_jsonl(as_golden_file(tmp_path))
    assert goldens.fingerprint() == same.fingerprint()
    assert [c.id for c in goldens] == ["a", "b", "c"]
    assert goldens.source == f"hf:{hf_folder} (split test)"


def test_a_parquet_dataset_and_an_in_memory_one_read_the_same(tmp_path: Path) -> None:
    import datasets

    table = datasets.Dataset.from_list(RECORDS)
    folder = tmp_path / "pq"
    folder.mkdir()
    table.to_parquet(str(folder / "test.parquet"))
    from_parquet = load_goldens(
        f"hf:{folder}",
        split="test",
        fields=FIELDS,
        dataset_options={"cache_dir": str(tmp_path / "cache")},
    )
    in_memory = goldens_from_rows(table, "memory", FIELDS)
    assert from_parquet.fingerprint() == in_memory.fingerprint()
    assert in_memory.fingerprint() == load_jsonl(as_golden_file(tmp_path)).fingerprint()


def test_without_fields_every_column_is_a_field_and_the_rest_is_context() -> None:
    rows = [{"id": "x", "query": "q", "relevant": ["d"], "lang": "en"}]
    (case,) = goldens_from_rows(rows, "memory")
    assert case.context == {"lang": "en"}
    assert case.relevant == frozenset({"d"})


@pytest.mark.parametrize(
    ("fields", "needles"),
    [
        ({"id": "qid", "query": "nope"}, ("memory: case #1: no column 'nope'", "qid, question")),
        ({"id": "qid", "question": "question"}, ("'question', not a golden field",)),
        ({"query": "question"}, ("fields must map id to a column",)),
    ],
)
def test_bad_fields_are_one_sentence_naming_the_row_or_field(
    fields: dict[str, str], needles: tuple[str, ...]
) -> None:
    with pytest.raises(GoldenError) as info:
        goldens_from_rows(RECORDS, "memory", fields)
    for needle in needles:
        assert needle in str(info.value)
    assert "\n" not in str(info.value)


def test_a_malformed_row_is_named_by_its_number() -> None:
    rows = [*RECORDS, {"qid": "a", "question": "again", "docs": [], "answer": ""}]
    with pytest.raises(GoldenError, match=r"memory: case #4: duplicate case id 'a'"):
        goldens_from_rows(rows, "memory", FIELDS)


def test_split_and_fields_belong_to_a_dataset(tmp_path: Path) -> None:
    path = as_golden_file(tmp_path)
    with pytest.raises(GoldenError, match="split apply to a dataset"):
        load_goldens(path, split="test")
    with pytest.raises(GoldenError, match="needs split="):
        load_goldens("hf:org/name")


@pytest.mark.parametrize(
    ("module", "source", "line"),
    [
        ("datasets", "hf:org/name", "pip install 'paired-evalkit[hf]'"),
        ("ir_datasets", "irds:beir/scifact/test", "pip install 'paired-evalkit[ir-datasets]'"),
    ],
)
def test_a_missing_extra_names_the_pip_install_line(
    monkeypatch: pytest.MonkeyPatch, module: str, source: str, line: str
) -> None:
    monkeypatch.setitem(sys.modules, module, None)  # import raises ImportError
    with pytest.raises(ConfigError) as info:
        load_goldens(source, split="test") if module == "datasets" else load_goldens(source)
    assert line in str(info.value)
    assert module in str(info.value)


# ----------------------------------------------------------------------------- ir_datasets


@pytest.fixture(scope="module")
def irds_id(tmp_path_factory: pytest.TempPathFactory) -> str:
    """An ir_datasets dataset of local files, registered under a test-only id."""
    root = tmp_path_factory.mktemp("irds")
    os.environ.setdefault("IR_DATASETS_HOME", str(root / "home"))
    import ir_datasets
    from ir_datasets.datasets.base import Dataset
    from ir_datasets.formats import TrecQrels, TsvQueries
    from ir_datasets.util import LocalDownload

    (root / "queries.tsv").write_text("1\tfirst query\n2\tsecond query\n3\tnever judged\n")
    (root / "qrels.txt").write_text("1 0 dA 2\n1 0 dB 0\n2 0 dC 1\n2 0 dD -1\n")
    dataset_id = "evalkit-tests/tiny"
    if dataset_id not in ir_datasets.registry:
        ir_datasets.registry.register(
            dataset_id,
            Dataset(
                TsvQueries(LocalDownload(root / "queries.tsv")),
                TrecQrels(LocalDownload(root / "qrels.txt"), {0: "no", 1: "yes", 2: "very"}),
            ),
        )
    return f"irds:{dataset_id}"


def test_irds_qrels_equal_the_same_judgements_from_a_trec_file(
    tmp_path: Path, irds_id: str
) -> None:
    expected = {"1": {"dA": 2, "dB": 0}, "2": {"dC": 1, "dD": -1}}
    write_qrels(tmp_path / "q.txt", expected)
    assert read_qrels(irds_id) == read_qrels(tmp_path / "q.txt") == expected
    assert load_qrels_graded(irds_id) == expected
    assert load_qrels(irds_id) == {"1": {"dA"}, "2": {"dC"}}


def test_irds_goldens_are_the_judged_queries_with_their_grades(irds_id: str) -> None:
    goldens = load_goldens(irds_id)
    assert [(c.id, c.query) for c in goldens] == [("1", "first query"), ("2", "second query")]
    first = goldens[0]
    assert first.relevant == frozenset({"dA"})
    assert first.grades == {"dA": 2, "dB": 0}
    assert [q.id for q in load_queries(irds_id)] == ["1", "2"]
    assert [q.id for q in load_queries(irds_id, split=None)] == ["1", "2", "3"]


def test_score_takes_an_irds_id_for_its_qrels(tmp_path: Path, irds_id: str) -> None:
    (tmp_path / "run.txt").write_text("1 Q0 dA 1 2.0 t\n2 Q0 dX 1 2.0 t\n2 Q0 dC 2 1.0 t\n")
    done = evalkit(
        "score", "run.txt", irds_id, "--metrics", "recall@1", "--out", "o.json", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "2 queries scored" in done.stdout


def test_an_unknown_irds_id_is_one_sentence(irds_id: str) -> None:
    with pytest.raises(GoldenError, match="no ir_datasets dataset 'nope/none'"):
        load_goldens("irds:nope/none")
