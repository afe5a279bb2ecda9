"""Score a plain TREC run file without numpy: the common case, and the fast one.

A run file is plain when every chunk tokenises in C (ASCII, six fields a line, no comment
or blank line: :data:`~evalkit._spec.trec_io.FAST_PATH_UNSAFE`), every score parses as a
finite double, each query's lines are contiguous and no query lists a document twice.
Such a file is read here into plain lists, ranked as trec_eval ranks (score descending,
then doc id descending), and scored with :mod:`evalkit.metrics.ranked_lists`: importing
numpy would cost more than all of that at 10^5 lines.

Anything else makes :func:`read_plain_run` return ``None``, and the caller takes the
numpy reader (:mod:`evalkit._spec.trec_read`), which reports what is wrong with the same
message, file and line as ever: this path never raises a format error of its own.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import compress, count, groupby, islice, repeat
from operator import eq, ge, gt
from pathlib import Path

from evalkit._model.results import QueryResult
from evalkit._spec.trec_io import (
    PathLike,
    TrecFormatError,
    chunks,
    open_bytes,
    plain_byte_tokens,
    query_runs,
)
from evalkit.metrics.ranked_lists import PlainKind, QueryGrades
from evalkit.metrics.rankings import UNJUDGED, QuerySelection

__all__ = ["PlainRun", "read_plain_run", "score_plain_run"]

_INT64 = range(-(2**63), 2**63)


@dataclass(frozen=True)
class PlainRun:
    """A plain run file's queries (file order), each one's ids ranked, and the last tag."""

    query_ids: list[str]
    ranked: dict[str, list[str]]
    tag: str | None


def _read_columns(path: Path) -> tuple[list[tuple[str, int]], list[str], list[float], str] | None:
    """(each run of lines of one query id: the id and how many, doc ids, scores, last tag).

    Each chunk's query ids and score tokens are dropped once read, so their memory
    serves the next chunk: keeping them took a fifth of the run's peak memory, and its
    page faults."""
    source = str(path)
    runs: list[tuple[str, int]] = []
    docs: list[str] = []
    scores: list[float] = []
    tag = ""
    try:
        with open_bytes(path, "run file") as fh:
            for chunk, _, n in chunks(fh, source):
                toks = plain_byte_tokens(chunk, n, 6)
                if toks is None:
                    return None
                try:
                    chunk_scores = list(map(float, toks[4::7]))
                except ValueError:
                    return None
                if any(map(math.isnan, chunk_scores)):
                    return None
                scores += chunk_scores
                docs += map(bytes.decode, toks[2::7])
                for qid, lines in query_runs(toks[0::7]):
                    if runs and runs[-1][0] == qid:  # the query goes on from the last chunk
                        lines += runs.pop()[1]
                    runs.append((qid, lines))
                tag = toks[-2].decode("ascii")
    except TrecFormatError:
        return None  # the numpy reader meets it too, after any earlier error it reports first
    return (runs, docs, scores, tag) if runs else None


def _ranked(scores: list[float], docs: list[str]) -> list[str]:
    """The query's ids best first: score descending, exact ties by id descending."""
    following = islice(scores, 1, None)
    if all(map(gt, scores, following)):
        return docs  # strictly falling already, so no tie: the common case, checked in C
    if not all(map(ge, scores, islice(scores, 1, None))):
        return [doc for _, doc in sorted(zip(scores, docs, strict=True), reverse=True)]
    # In order but for ties: only each run of tied scores needs its ids put descending.
    ranked = list(docs)
    tied = compress(count(), map(eq, scores, islice(scores, 1, None)))  # i: s[i] == s[i+1]
    for _, run in groupby(enumerate(tied), key=lambda pair: pair[1] - pair[0]):
        positions = [i for _, i in run]
        a, b = positions[0], positions[-1] + 2
        ranked[a:b] = sorted(ranked[a:b], reverse=True)
    return ranked


def read_plain_run(path: PathLike) -> PlainRun | None:
    """The run, read as trec_eval reads it; ``None`` unless the file is plain (above)."""
    columns = _read_columns(Path(path))
    if columns is None:
        return None
    runs, docs, scores, tag = columns
    query_ids: list[str] = []
    ranked: dict[str, list[str]] = {}
    start = 0
    for qid, lines in runs:
        stop = start + lines
        if qid in ranked:
            return None  # the query's lines are not contiguous
        q_docs = docs[start:stop]
        if len(set(q_docs)) != lines:
            return None  # a document listed twice
        query_ids.append(qid)
        ranked[qid] = _ranked(scores[start:stop], q_docs)
        start = stop
    return PlainRun(query_ids, ranked, tag)


def score_plain_run(
    run: PlainRun,
    qrels: Mapping[str, Mapping[str, int]],
    metrics: Sequence[tuple[str, PlainKind, int]],
    level: int,
    queries: QuerySelection,
) -> list[QueryResult] | None:
    """One row per ranked and judged query (file order), then under ``queries="qrels"``
    one per judged query the run does not rank (an empty ranking), as batch scores them.

    ``None`` where batch raises: no query to score, an unjudged query under
    ``queries="run"``, an unknown selection, a grade beyond int64.
    """
    if queries not in ("both", "qrels", "run"):
        return None
    chosen = [qid for qid in run.query_ids if qid in qrels]
    if queries == "run" and len(chosen) < len(run.query_ids):
        return None
    if queries == "qrels":
        chosen += [qid for qid in qrels if qid not in run.ranked]
    if not chosen:
        return None
    rows: list[QueryResult] = []
    for qid in chosen:
        judged = qrels[qid]
        grades = Counter(judged.values())
        if not (grades and _INT64.start <= min(grades) and max(grades) < _INT64.stop):
            return None
        ranking = run.ranked.get(qid, [])
        at = list(map(judged.get, ranking, repeat(UNJUDGED, len(ranking))))
        query = QueryGrades(at, grades, level)
        values = {name: query.value(kind, k) for name, kind, k in metrics}
        rows.append(QueryResult(qid, ranking, values))
    return rows
