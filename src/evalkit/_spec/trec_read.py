"""Read a TREC run file into a :class:`~evalkit._spec.trec_run.TrecRun`: numpy arrays,
ranked as trec_eval ranks them (see :mod:`evalkit._spec.trec` for the rules).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import compress
from pathlib import Path
from typing import TypeAlias

import numpy as np

from evalkit._spec.trec_io import (
    PathLike,
    ScoreDtype,
    TrecFormatError,
    careful_lines,
    chunks,
    clip,
    first_duplicate,
    id_text,
    judge_piece,
    no_qrels,
    open_bytes,
    plain_byte_tokens,
    qrels_pieces,
    query_runs,
    score_value,
)
from evalkit._spec.trec_run import TrecRun
from evalkit._util.arrays import FloatArray, IntArray
from evalkit.metrics.batch import UNJUDGED, paused_gc

# (each run of lines of one query id: the id and how many; doc ids; scores; the last tag)
_Columns: TypeAlias = tuple[list[tuple[str, int]], list[str], FloatArray, str | None]


def _fast_run_chunk(chunk: bytes, n: int) -> _Columns | None:
    """Tokenise a plain chunk of ``n`` lines in C; ``None`` when it needs the careful path."""
    toks = plain_byte_tokens(chunk, n, 6)
    if toks is None:
        return None
    try:
        scores = np.fromiter(map(float, toks[4::7]), dtype=np.float64, count=n)
    except ValueError:
        return None
    if np.isnan(scores).any():
        return None
    docs = list(map(bytes.decode, toks[2::7]))
    return query_runs(toks[0::7]), docs, scores, toks[-2].decode("ascii") if n else None


def _careful_run_chunk(chunk: bytes, first_line: int, source: str) -> _Columns:
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    tag: bytes | None = None
    for line_no, fields, raw in careful_lines(chunk, first_line):
        if len(fields) < 6:
            raise TrecFormatError(
                f"{source}, line {line_no}: expected 'query_id Q0 doc_id rank score run_tag', "
                f"got {len(fields)} field(s): {clip(raw)}"
            )
        qids.append(id_text(fields[0], source, line_no))
        docs.append(id_text(fields[2], source, line_no))
        scores.append(score_value(fields[4], source, line_no))
        tag = fields[5]
    tag_text = None if tag is None else tag.decode("utf-8", "replace")
    return query_runs(qids), docs, np.array(scores, dtype=np.float64), tag_text


def _order_block(
    seg_ids: Sequence[str],
    offs: Sequence[int],
    docs: list[str],
    scores: FloatArray,
    float32: bool,
    source: str,
) -> tuple[list[str], FloatArray]:
    """Check and rank a block of whole queries: query ``i`` is ``offs[i]:offs[i+1]``."""
    # One set for the whole block proves most blocks clean (ids rarely repeat
    # across the queries of a block); otherwise check query by query.
    for i, qid in enumerate(seg_ids if len(set(docs)) != len(docs) else ()):
        a, b = offs[i], offs[i + 1]
        if len(set(docs[a:b])) != b - a:
            raise TrecFormatError(
                f"{source}: query {qid!r} lists document {first_duplicate(docs[a:b])!r} "
                "more than once; trec_eval refuses duplicate documents in a run: keep one "
                "line per document"
            )
    n = len(docs)
    if n < 2:
        return docs, scores
    key = scores.astype(np.float32) if float32 else scores
    crosses = np.zeros(n - 1, dtype=bool)
    crosses[np.asarray(offs[1:-1], dtype=np.int64) - 1] = True
    ties = ~crosses & (key[:-1] == key[1:])
    falling = np.flatnonzero(~crosses & ~ties & ~(key[:-1] > key[1:])).tolist()
    tie_pairs = np.flatnonzero(ties).tolist()
    misordered = [i for i in tie_pairs if docs[i] <= docs[i + 1]]
    if not falling and not misordered:
        return docs, scores
    docs = list(docs)
    scores = scores.copy()
    # A query with scores out of order is sorted whole...
    unsorted = set((np.searchsorted(offs, falling, side="right") - 1).tolist())
    if unsorted:
        key_list = key.tolist()
        for qi in sorted(unsorted):
            a, b = offs[qi], offs[qi + 1]
            # Doc ids are distinct within a query, so the index never decides.
            ranked = sorted(zip(key_list[a:b], docs[a:b], range(a, b), strict=True), reverse=True)
            docs[a:b] = [doc for _, doc, _ in ranked]
            scores[a:b] = scores[[i for _, _, i in ranked]]
    # ...elsewhere only runs of tied scores need their ids put in descending order.
    bad_runs = _tie_runs(tie_pairs, set(misordered))
    for start, stop in bad_runs:
        if int(np.searchsorted(offs, start, side="right")) - 1 in unsorted:
            continue
        order = sorted(range(start, stop), key=docs.__getitem__, reverse=True)
        docs[start:stop] = [docs[i] for i in order]
        scores[start:stop] = scores[order]  # float32 ties may differ as doubles
    return docs, scores


def _tie_runs(tie_pairs: list[int], misordered: set[int]) -> list[tuple[int, int]]:
    """Maximal runs of tied neighbours, as [start, stop) slices, that hold a misordered pair."""
    runs: list[tuple[int, int]] = []
    start = prev = -2
    bad = False
    for i in tie_pairs:
        if i != prev + 1:
            if bad:
                runs.append((start, prev + 2))
            start, bad = i, False
        bad = bad or i in misordered
        prev = i
    if bad:
        runs.append((start, prev + 2))
    return runs


class _RunAccumulator:
    """Builds a :class:`TrecRun` chunk by chunk, ranking the queries whose lines are all
    read (every one but the last read so far) as one block."""

    def __init__(self, source: str, float32: bool) -> None:
        self.source = source
        self.float32 = float32
        self.query_ids: list[str] = []  # a query that comes back later is listed again
        self.offsets = [0]
        self.docs: list[str] = []
        self.scores: list[FloatArray] = []
        self.ranked = 0  # how many of query_ids are ranked, their docs in docs and scores
        self.open_docs: list[str] = []  # the docs and scores of the others, as read
        self.open_scores: list[FloatArray] = []

    def add(self, runs: list[tuple[str, int]], docs: list[str], scores: FloatArray) -> None:
        if runs and self.query_ids and runs[0][0] == self.query_ids[-1]:
            self.offsets[-1] += runs[0][1]  # the last query goes on in this chunk
            runs = runs[1:]
        for qid, lines in runs:
            self.query_ids.append(qid)
            self.offsets.append(self.offsets[-1] + lines)
        self.open_docs += docs
        self.open_scores.append(scores)
        self._rank(len(self.query_ids) - 1)

    def _rank(self, stop: int) -> None:
        """Check and rank the queries from ``self.ranked`` to ``stop`` (not included)."""
        start = self.ranked
        if stop <= start:
            return
        first = self.offsets[start]
        n = self.offsets[stop] - first
        scores = np.concatenate(self.open_scores)
        offs = [o - first for o in self.offsets[start : stop + 1]]
        docs, ranked = _order_block(
            self.query_ids[start:stop],
            offs,
            self.open_docs[:n],
            scores[:n],
            self.float32,
            self.source,
        )
        self.docs += docs
        self.scores.append(ranked)
        self.open_docs = self.open_docs[n:]
        self.open_scores = [scores[n:]]
        self.ranked = stop

    def finish(self, tag: str | None) -> TrecRun:
        self._rank(len(self.query_ids))
        if not self.query_ids:
            raise TrecFormatError(
                f"{self.source}: no run lines; expected 'query_id Q0 doc_id rank score run_tag' "
                "per line"
            )
        scores = np.concatenate(self.scores)
        query_ids, docs = self.query_ids, self.docs
        offsets = np.asarray(self.offsets, dtype=np.int64)
        if len(set(query_ids)) != len(query_ids):
            query_ids, offsets, docs, scores = self._merge_interleaved(scores)
        return TrecRun(query_ids, offsets, docs, True, scores=scores, tag=tag, source=self.source)

    def _merge_interleaved(
        self, scores: FloatArray
    ) -> tuple[list[str], IntArray, list[str], FloatArray]:
        """Gather every query's segments (file order) and re-check and re-rank it."""
        starts = self.offsets
        segments: dict[str, list[int]] = {}
        for s, qid in enumerate(self.query_ids):
            segments.setdefault(qid, []).append(s)
        docs: list[str] = []
        parts: list[FloatArray] = []
        offsets = [0]
        for qid, segs in segments.items():
            q_docs = [d for s in segs for d in self.docs[starts[s] : starts[s + 1]]]
            q_scores = np.concatenate([scores[starts[s] : starts[s + 1]] for s in segs])
            if len(segs) > 1:
                q_docs, q_scores = _order_block(
                    [qid], [0, len(q_docs)], q_docs, q_scores, self.float32, self.source
                )
            docs.extend(q_docs)
            parts.append(q_scores)
            offsets.append(offsets[-1] + len(q_docs))
        ids = list(segments)
        return ids, np.asarray(offsets, dtype=np.int64), docs, np.concatenate(parts)


def read_run(path: PathLike, score_dtype: ScoreDtype) -> TrecRun:
    """The run file, ranked as trec_eval ranks it (see :mod:`evalkit._spec.trec`)."""
    if score_dtype not in ("float64", "float32"):
        raise TrecFormatError(f"score_dtype must be 'float64' or 'float32', got {score_dtype!r}")
    file = Path(path)
    source = str(file)
    acc = _RunAccumulator(source, score_dtype == "float32")
    tag: str | None = None
    with paused_gc(), open_bytes(file, "run file") as fh:
        for chunk, first_line, n_lines in chunks(fh, source):
            runs, docs, scores, chunk_tag = _fast_run_chunk(chunk, n_lines) or _careful_run_chunk(
                chunk, first_line, source
            )
            acc.add(runs, docs, scores)
            tag = chunk_tag if chunk_tag is not None else tag
    return acc.finish(tag)


def grade_run(path: PathLike, run: TrecRun) -> tuple[IntArray, dict[str, IntArray]] | None:
    """Grade the run's ranked ids from the qrels file as it is read: (the grade at each
    ranked position, ``UNJUDGED`` if none; each judged query's grades >= 1, in file order)."""
    file = Path(path)
    index = {qid: i for i, qid in enumerate(run.query_ids)}
    offs = run.offsets.tolist()
    grades = np.full(len(run.docnos), UNJUDGED, dtype=np.int64)
    scoring: dict[str, list[int]] = {}
    current: str | None = None
    query_docs: dict[str, int] = {}  # every doc id judged for the current query
    ranked_at: dict[str, int] = {}  # the current query's ranked ids: id -> position
    kept: list[int] = []
    try:
        for qid, docs, values in qrels_pieces(file):
            if qid != current:
                if qid in scoring:
                    return None
                current, query_docs, kept = qid, {}, []
                scoring[qid] = kept
                i = index.get(qid)
                a, b = (offs[i], offs[i + 1]) if i is not None else (0, 0)
                ranked_at = dict(zip(run.docnos[a:b], range(a, b), strict=True))
            judge_piece(query_docs, docs, values, file)
            ranked = list(map(ranked_at.__contains__, docs))
            grades[list(map(ranked_at.__getitem__, compress(docs, ranked)))] = list(
                compress(values, ranked)
            )
            kept += filter((1).__le__, values)
        judged = {qid: np.array(kept, dtype=np.int64) for qid, kept in scoring.items()}
    except OverflowError:
        return None
    if not judged:
        raise no_qrels(file)
    return grades, judged
