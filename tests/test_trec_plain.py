"""The numpy-free path of score_trec (evalkit._spec.trec_plain) against the numpy one.

Scoring a plain run file skips numpy; every other file takes the numpy reader.  Both
must give the same rows (ids, rankings, the same doubles) and the same notes, or raise
the same error with the same message, on whatever files: generated runs with tied
scores, repeated documents, interleaved or unjudged queries, negative and zero grades,
gzip, CRLF, comments, and malformed lines.
"""

from __future__ import annotations

import gzip
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evalkit._spec.trec import _score_arrays, read_qrels, read_run, score_trec
from evalkit._spec.trec_plain import read_plain_run
from evalkit.errors import EvalkitError

METRICS = [
    "map@1000",
    "ndcg@10",
    "precision@10",
    "mrr@1000",
    "recall@1000",
    "hit_rate@3",
    "map@5",
    "ndcg@2",
    "recall@4",
    "precision@1",
]
SCORES = ["3", "2.5", "2.50", "1", "1e0", "-0.0", "0", "0.0", "+.5", "-2", "inf", "-inf", "7."]
DOCS = [f"D{i}" for i in range(12)] + ["d1", "D1a", "Z", "a-b"]
QUERIES = ["301", "302", "303", "99", "q1"]

line = st.tuples(st.sampled_from(QUERIES), st.sampled_from(DOCS), st.sampled_from(SCORES))
judgment = st.tuples(st.sampled_from(QUERIES), st.sampled_from(DOCS), st.integers(-2, 3))
# Text a line may be replaced by: each sends the file to the numpy reader, which reads
# it (a comment, a blank line, a seventh field) or names the line that is wrong.
ODD_LINES = [
    "# a comment",
    "",
    "301 Q0 D1 1 nan t",
    "301 Q0 D1 1 2.0",
    "301 Q0 D1 1 x2 t",
    "301 Q0 D1 1 2.0 t extra",
    "301 Q0 D\u00e91 1 2.0 t",
    "301 Q0 D1 1 1_0 t",
]


def _run_text(lines: list[tuple[str, str, str]], odd: tuple[int, str] | None) -> list[str]:
    text = [f"{q} Q0 {d} {rank} {s} tag{rank % 2}" for rank, (q, d, s) in enumerate(lines)]
    if odd is not None and text:
        text[odd[0] % len(text)] = odd[1]
    return text


def _write(path: Path, lines: list[str], eol: str, final_eol: bool, gz: bool) -> Path:
    data = (eol.join(lines) + (eol if final_eol else "")).encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if gz else data)
    return path


def _outcome(call: object) -> object:
    try:
        scoring = call()  # type: ignore[operator]
    except EvalkitError as exc:
        return type(exc).__name__, str(exc)
    rows = [(r.query_id, r.retrieved, r.metrics) for r in scoring.result.per_query]
    return scoring.result.name, rows, scoring.unranked, scoring.unjudged


files = st.fixed_dictionaries(
    {
        # sorted by query most of the time, as runs are; else interleaved
        "lines": st.lists(line, min_size=0, max_size=40),
        "by_query": st.booleans(),
        "judgments": st.lists(judgment, min_size=0, max_size=40),
        "odd": st.none() | st.tuples(st.integers(0, 99), st.sampled_from(ODD_LINES)),
        "eol": st.sampled_from(["\n", "\r\n"]),
        "final_eol": st.booleans(),
        "gz": st.booleans(),
        "queries": st.sampled_from(["both", "qrels", "run"]),
        "level": st.sampled_from([1, 2]),
        "metrics": st.lists(st.sampled_from(METRICS), min_size=1, max_size=5, unique=True),
    }
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=files)
def test_plain_and_numpy_paths_agree_on_any_file(tmp_path: Path, case: dict) -> None:  # type: ignore[type-arg]
    lines = sorted(case["lines"], key=lambda t: t[0]) if case["by_query"] else case["lines"]
    judged = {(q, d): g for q, d, g in case["judgments"]}  # qrels repeat no judgment here
    run = _write(
        tmp_path / ("run.gz" if case["gz"] else "run.txt"),
        _run_text(lines, case["odd"]),
        case["eol"],
        case["final_eol"],
        case["gz"],
    )
    qrels = _write(
        tmp_path / "qrels.txt",
        [f"{q} 0 {d} {g}" for (q, d), g in sorted(judged.items())],
        case["eol"],
        True,
        False,
    )
    args = (case["metrics"], case["level"], case["queries"])
    ours = _outcome(
        lambda: score_trec(run, qrels, case["metrics"], relevance_level=args[1], queries=args[2])
    )
    theirs = _outcome(lambda: _score_arrays(run, read_qrels(qrels), *args, "float64", None))
    assert ours == theirs


def test_a_plain_file_takes_the_plain_path_and_an_odd_one_does_not(tmp_path: Path) -> None:
    # Without this, the test above could pass with the plain path never taken.
    plain = _write(
        tmp_path / "r.txt",
        _run_text([("301", "D1", "2"), ("301", "D2", "1")], None),
        "\r\n",
        False,
        True,
    )
    assert read_plain_run(plain) is not None
    for odd in ODD_LINES:
        text = _run_text([("301", "D1", "2"), ("301", "D2", "1")], (1, odd))
        assert read_plain_run(_write(tmp_path / "o.txt", text, "\n", True, False)) is None, odd
    for lines in (
        [("301", "D1", "2"), ("302", "D2", "1"), ("301", "D3", "1")],  # interleaved
        [("301", "D1", "2"), ("301", "D1", "1")],  # a document twice
    ):
        path = _write(tmp_path / "o.txt", _run_text(lines, None), "\n", True, False)
        assert read_plain_run(path) is None


@pytest.mark.parametrize(
    ("scores", "expected"),
    [
        (["1", "1.0", "2", "0"], ["C", "B", "A", "D"]),  # out of order, and a tie
        (["3", "2", "2.0", "1"], ["A", "C", "B", "D"]),  # in order, one tie run
        (["2", "2", "1", "1"], ["B", "A", "D", "C"]),  # in order, two tie runs
        (["-0.0", "0", "0.0", "-1"], ["C", "B", "A", "D"]),  # -0.0 ties 0
    ],
)
def test_plain_ties_rank_by_doc_id_descending(
    tmp_path: Path, scores: list[str], expected: list[str]
) -> None:
    # trec_eval: score descending, then doc id descending (strcmp), whatever the file order.
    lines = [("301", doc, score) for doc, score in zip("ABCD", scores, strict=True)]
    path = _write(tmp_path / "r.txt", _run_text(lines, None), "\n", True, False)
    run = read_plain_run(path)
    assert run is not None
    assert run.ranked == {"301": expected}
    assert read_run(path).ranking(0) == expected  # the numpy reader


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("301 Q0 D2 2 nan t", "r.txt, line 2: score is NaN"),
        (
            "301 Q0 D2 2 1.0",
            "r.txt, line 2: expected 'query_id Q0 doc_id rank score run_tag', got 5 field(s)",
        ),
        ("301 Q0 D2 2 high t", "r.txt, line 2: score 'high' is not a number"),
        ("301 Q0 D1 2 1.0 t", "query '301' lists document 'D1' more than once"),
    ],
)
def test_a_bad_line_is_named_as_before(tmp_path: Path, line: str, message: str) -> None:
    run = tmp_path / "r.txt"
    run.write_text(f"301 Q0 D1 1 2.0 t\n{line}\n")
    (tmp_path / "q.txt").write_text("301 0 D1 1\n")
    with pytest.raises(EvalkitError, match="^.*" + message.replace("(", r"\(").replace(")", r"\)")):
        score_trec(run, tmp_path / "q.txt", ["ndcg@10"])


def test_a_query_spanning_chunks_reads_as_one(tmp_path: Path) -> None:
    # Each chunk's query ids are read apart (CHUNK_BYTES): a query whose lines go on into
    # the next chunk is still one query, and one that comes back after another is not.
    from evalkit._spec.trec_io import CHUNK_BYTES

    per_query = CHUNK_BYTES // 30 + 7  # every query crosses a chunk boundary
    lines = [
        (qid, f"D{i:06d}", str((i * 7919) % 1000 / 8))
        for qid in ("301", "302", "303")
        for i in range(per_query)
    ]
    path = _write(tmp_path / "r.txt", _run_text(lines, None), "\n", True, False)
    assert path.stat().st_size > 2 * CHUNK_BYTES
    run = read_plain_run(path)
    assert run is not None
    assert run.query_ids == ["301", "302", "303"]
    numpy_run = read_run(path)
    assert run.ranked == {q: numpy_run.ranking(i) for i, q in enumerate(numpy_run.query_ids)}
    back = [*lines, ("301", "X1", "0")]  # 301 again, chunks after its first lines
    path = _write(tmp_path / "o.txt", _run_text(back, None), "\n", True, False)
    assert read_plain_run(path) is None


SPECS = [
    ["ndcg@10", "map@1000"],
    ["precision@1", "recall@20", "hit_rate@3", "mrr@5", "map@5", "ndcg@2"],
    ["ndcg@010"],  # the registry names it ndcg@10
    ["ndcg@10", "ndcg@10"],  # named twice: refused
    ["map"],  # trec_eval's full-depth name
    ["ndcg@0"],
    ["ndcg@"],
    ["ndcg@\u0661\u0660"],  # Arabic-Indic digits
    ["recall"],
    ["latency_p95"],
    ["exact_match"],
    ["nope@3"],
    [],
]


@pytest.mark.parametrize("specs", SPECS)
def test_built_in_specs_resolve_as_the_registry_resolves_them(specs: list[str]) -> None:
    # Before the registry's first use, scoring reads built-in name@k specs without it
    # (evalkit._model.builtin_hook.untouched): what it reads is what the registry says,
    # and anything else goes to the registry.
    from evalkit._spec.trec import _builtin_metrics, _registered_metrics

    known = _builtin_metrics(specs)
    assert known is None or known == _registered_metrics(specs)


def test_the_built_in_families_are_the_registered_ones() -> None:
    from evalkit._model import registry
    from evalkit.metrics.ranked_lists import BUILTIN_FAMILIES, plain_kind

    builtin = {name: fam for name, fam in registry.families().items() if fam.builtin}
    assert set(builtin) == set(BUILTIN_FAMILIES)
    assert {name: plain_kind(fam.fn) for name, fam in builtin.items()} == BUILTIN_FAMILIES


def test_a_client_family_registered_after_a_scoring_counts_in_the_next(tmp_path: Path) -> None:
    # The first scoring reads the built-in specs without the registry (and imports no
    # numpy: tests/test_import_cost.py); a client's own map, a replaceable built-in,
    # registered after it is what the next scoring uses.
    (tmp_path / "r.txt").write_text("301 Q0 D1 1 2.0 t\n301 Q0 D2 2 1.0 t\n")
    (tmp_path / "q.txt").write_text("301 0 D2 1\n")
    files = f"{str(tmp_path / 'r.txt')!r}, {str(tmp_path / 'q.txt')!r}"
    metrics = "['ndcg@10', 'map@1000', 'recall@1000', 'precision@10', 'mrr@1000']"
    code = (
        "from evalkit.trec import score_trec_run\n"
        f"r = score_trec_run({files}, {metrics})\n"
        "print(r.per_query[0].metrics['mrr@1000'], r.per_query[0].metrics['map@1000'])\n"
        "from evalkit.runner import METRICS\n"
        "METRICS['map'] = lambda retrieved, relevant, k: 0.25\n"
        f"r = score_trec_run({files}, {metrics})\n"
        "print(r.per_query[0].metrics['map@1000'])\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["0.5", "0.5", "0.25"]


# Lines of 3-7 tokens cut by every kind of ASCII whitespace (and a few bytes the fast
# path refuses): str.split and bytes.split must cut them alike.
_SEPARATOR = st.sampled_from([b" ", b"  ", b"\t", b"\x0b", b"\x0c", b"\r", b" \t "])
_TOKEN = st.sampled_from([b"301", b"Q0", b"d1", b"7", b"2.5", b"-inf", b"tag", b"#", b"_", b"\x1c"])
_LINE = st.tuples(st.lists(_TOKEN, min_size=3, max_size=7), _SEPARATOR, st.booleans()).map(
    lambda parts: parts[1].join(parts[0]) + (parts[1] if parts[2] else b"") + b"\n"
)


@given(st.lists(_LINE, min_size=1, max_size=8).map(b"".join))
@settings(max_examples=300, deadline=None)
def test_byte_tokens_are_the_text_tokens(chunk: bytes) -> None:
    # The plain reader splits bytes and decodes only the columns it keeps; the numpy
    # reader splits the decoded text. Both must see the same tokens, or refuse alike.
    from evalkit._spec.trec_io import plain_byte_tokens, plain_tokens

    n = chunk.count(b"\n")
    for fields in (4, 6):
        as_bytes = plain_byte_tokens(chunk, n, fields)
        as_text = plain_tokens(chunk, n, fields)
        assert (None if as_bytes is None else [t.decode("ascii") for t in as_bytes]) == as_text


def test_byte_tokens_of_a_real_shaped_chunk() -> None:
    from evalkit._spec.trec_io import plain_byte_tokens, plain_tokens

    chunk = b"301 Q0 d1 1 2.5 tag\n301\tQ0 d2 2 1e-3 tag\x0b\n302 Q0  d3 1 -inf tag \r\n"
    tokens = plain_byte_tokens(chunk, 3, 6)
    assert tokens is not None
    assert [t.decode() for t in tokens] == plain_tokens(chunk, 3, 6)
    assert tokens[2::7] == [b"d1", b"d2", b"d3"]
