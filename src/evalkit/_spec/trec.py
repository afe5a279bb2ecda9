"""TREC run files and qrels: read, write (plain or ``.gz``), and score."""

from __future__ import annotations

import numbers
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeAlias

from evalkit._model.relevance import Relevance, as_grades
from evalkit._model.results import QueryResult, RunResult
from evalkit._spec.trec_io import PathLike, ScoreDtype, TrecFormatError, read_qrels
from evalkit._spec.trec_run import TrecRun
from evalkit._util.bounded import paused_gc
from evalkit.metrics.rankings import QuerySelection

if TYPE_CHECKING:
    from evalkit._util.arrays import IntArray


_ID_BREAKERS = re.compile(r"[ \t\n\r\x0b\x0c\x00]")


def read_run(path: PathLike, *, score_dtype: ScoreDtype = "float64") -> TrecRun:
    """Read a TREC run file (``.gz`` too) into rankings ordered as trec_eval orders them.

    ``score_dtype="float32"`` reproduces trec_eval <= 9.0.8 / pytrec_eval,
    which compare scores as C floats; the default compares doubles (10.0).
    """
    from evalkit._spec import trec_read

    return trec_read.read_run(path, score_dtype)


# --------------------------------------------------------------------------- writing


def _check_ids(ids: Sequence[str], what: str, where: str) -> None:
    for token in ids:
        if not isinstance(token, str):
            raise TrecFormatError(f"{where}: {what} {token!r} is not a string")
    if "" in ids or _ID_BREAKERS.search("\x01".join(ids)):
        bad = next(t for t in ids if not t or _ID_BREAKERS.search(t))
        raise TrecFormatError(
            f"{where}: {what} {bad!r} is empty or contains whitespace, which TREC files "
            "cannot hold (fields are whitespace-separated)"
        )


def _check_query_id(qid: str, where: str) -> None:
    _check_ids([qid], "query id", where)
    if qid.startswith("#"):
        raise TrecFormatError(
            f"{where}: query id {qid!r} starts with '#', so the line would be read as a comment"
        )


def _atomic_write(path: Path, lines: Iterator[str]) -> Path:
    # Imported here: tempfile (random, shutil, bz2, lzma) and gzip write; scoring needs neither.
    import gzip

    from evalkit._util.atomic import atomic_file

    with atomic_file(path) as raw:
        if path.name.endswith(".gz"):
            # mtime=0 and no file name in the header: the same data gives the same bytes.
            with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as gz:
                _write_lines(gz.write, lines)
        else:
            _write_lines(raw.write, lines)
    return path


def _write_lines(write: Callable[[bytes], object], lines: Iterator[str]) -> None:
    batch: list[str] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= 65536:
            write("".join(batch).encode("utf-8"))
            batch.clear()
    write("".join(batch).encode("utf-8"))


RunData: TypeAlias = TrecRun | Mapping[str, Sequence[str]] | Mapping[str, Mapping[str, float]]


def _run_lines(run: RunData, tag: str, where: str) -> Iterator[str]:
    if isinstance(run, TrecRun):
        for i, qid in enumerate(run.query_ids):
            _check_query_id(qid, where)
            scored = run.scored(i)
            _check_ids([d for d, _ in scored], "document id", f"{where}, query {qid!r}")
            for rank, (doc, score) in enumerate(scored, start=1):
                yield f"{qid} Q0 {doc} {rank} {score!r} {tag}\n"
        return
    for qid, ranked in run.items():
        _check_query_id(qid, where)
        here = f"{where}, query {qid!r}"
        if isinstance(ranked, Mapping):
            pairs = [(float(s), d) for d, s in ranked.items()]
            if any(s != s for s, _ in pairs):
                raise TrecFormatError(f"{here}: a score is NaN, which cannot be ranked")
            pairs.sort(reverse=True)
            _check_ids([d for _, d in pairs], "document id", here)
            for rank, (score, doc) in enumerate(pairs, start=1):
                yield f"{qid} Q0 {doc} {rank} {score!r} {tag}\n"
            continue
        if isinstance(ranked, str | bytes) or not isinstance(ranked, Sequence):
            raise TrecFormatError(f"{here}: expected a list of ids best first or id -> score")
        _check_ids(ranked, "document id", here)
        if len(set(ranked)) != len(ranked):
            raise TrecFormatError(
                f"{here}: a document id is ranked twice; a TREC run holds each once"
            )
        n = len(ranked)
        # Strictly falling integer scores: trec_eval re-reads exactly this order.
        for rank, doc in enumerate(ranked, start=1):
            yield f"{qid} Q0 {doc} {rank} {n - rank + 1} {tag}\n"


def write_run(path: PathLike, run: RunData, *, tag: str = "evalkit") -> Path:
    """Write a run file (gzip when the name ends in ``.gz``); returns the path.

    ``run`` is a :class:`TrecRun`, ``{query_id: [ids best first]}`` (written
    with strictly falling scores so any TREC tool reads the same order back),
    or ``{query_id: {doc_id: score}}``.  Ids containing whitespace raise.
    """
    file = Path(path)
    _check_ids([tag], "run tag", str(file))
    return _atomic_write(file, _run_lines(run, tag, str(file)))


def _qrels_lines(qrels: Mapping[str, Relevance], where: str) -> Iterator[str]:
    for qid, judged in qrels.items():
        _check_query_id(qid, where)
        here = f"{where}, query {qid!r}"
        grades = as_grades(judged, query_id=qid)
        _check_ids(list(grades), "document id", here)
        for doc, grade in grades.items():
            value: object = grade  # Integral: an int or a numpy integer, not a bool
            if isinstance(value, bool) or not isinstance(value, numbers.Integral):
                raise TrecFormatError(f"{here}: grade of {doc!r} must be an integer, got {grade!r}")
            yield f"{qid} 0 {doc} {int(grade)}\n"


def write_qrels(path: PathLike, qrels: Mapping[str, Relevance]) -> Path:
    """Write qrels (``{query_id: {doc_id: grade}}``, or sets meaning grade 1)."""
    file = Path(path)
    return _atomic_write(file, _qrels_lines(qrels, str(file)))


# --------------------------------------------------------------------------- scoring


@dataclass(frozen=True)
class TrecScoring:
    """A scored run file and the queries the two files do not share.

    ``unranked``: judged queries the run has no ranking for (left out under
    ``queries="both"``, scored as empty rankings under ``"qrels"``).
    ``unjudged``: ranked queries the qrels do not judge (never scored).
    Both in file order, so a report can name them.
    """

    result: RunResult[QueryResult]
    queries: QuerySelection
    unranked: tuple[str, ...]
    unjudged: tuple[str, ...]


def score_trec_run(
    run_path: PathLike,
    qrels_path: PathLike,
    metrics: Sequence[str],
    *,
    relevance_level: int = 1,
    queries: QuerySelection = "both",
    score_dtype: ScoreDtype = "float64",
    name: str | None = None,
) -> RunResult[QueryResult]:
    """Score a TREC run file against a qrels file: one row per query, trec_eval's values.

    ``metrics`` are spec strings (``"ndcg@10"``, ``"map@100"``...).  By default
    only queries present in both files are scored, as trec_eval does;
    ``queries="qrels"`` is trec_eval ``-c`` (judged queries missing from the
    run score as empty rankings) and ``queries="run"`` requires every ranked
    query to be judged.  ``name`` defaults to the file's run tag.
    :func:`score_trec` also says which queries the files do not share.
    """
    return score_trec(
        run_path,
        qrels_path,
        metrics,
        relevance_level=relevance_level,
        queries=queries,
        score_dtype=score_dtype,
        name=name,
    ).result


def score_trec(
    run_path: PathLike,
    qrels_path: PathLike,
    metrics: Sequence[str],
    *,
    relevance_level: int = 1,
    queries: QuerySelection = "both",
    score_dtype: ScoreDtype = "float64",
    name: str | None = None,
) -> TrecScoring:
    """:func:`score_trec_run`, with the queries left out or zeroed named (:class:`TrecScoring`)."""
    from evalkit._spec.trec_read import grade_run
    from evalkit.metrics.batch import score_rankings

    # One pause for the whole job: the collection that follows a pause walks
    # everything built during it, so two pauses would walk the run twice.
    with paused_gc():
        run = read_run(run_path, score_dtype=score_dtype)
        # The scores only ranked the run: the rows hold no score, so they go now.
        run = replace(run, scores=run.scores[:0].copy())
        # Graded as the qrels are read: none of their ids is kept (trec_read.grade_run).
        graded = grade_run(qrels_path, run) if _built_in_families(metrics) else None
        grades: IntArray | None = None
        judged: dict[str, IntArray] | None = None
        if graded is not None:
            grades, judged = graded
            # Every judged query, its judgments unread (``judged`` holds their grades).
            qrels: dict[str, dict[str, int]] = {qid: {} for qid in judged}
        else:  # client metrics see every judgment; metrics.batch looks the grades up
            qrels = read_qrels(qrels_path)
        result = score_rankings(
            name if name is not None else (run.tag or Path(run_path).name),
            run,
            qrels,
            metrics,
            relevance_level=relevance_level,
            queries=queries,
            _grades=grades,
            _checked_qrels=True,
            _judged=judged,
        )
        ranked = set(run.query_ids)
        unranked = tuple(q for q in qrels if q not in ranked)
        unjudged = tuple(q for q in run.query_ids if q not in qrels)
        # Freed now, not walked by the collection that ends the pause.
        del run, graded, grades, judged, qrels, ranked
    return TrecScoring(result, queries, unranked, unjudged)


def _built_in_families(metrics: Sequence[str]) -> bool:
    """Whether every metric is a built-in retrieval family (a list the registry refuses
    is not: the full path raises its error, in its place)."""
    from evalkit._model import registry
    from evalkit.metrics.batch import is_builtin_formula

    try:
        defs = registry.resolve_query_metrics(metrics)
    except Exception:  # refused: the full path raises it, in its place
        return False
    return all(
        d.family is not None and is_builtin_formula(registry.families()[d.family].fn) for d in defs
    )
