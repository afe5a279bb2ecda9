"""TREC run files and qrels: read, write (plain or ``.gz``), and score.

A run line is ``query_id Q0 doc_id rank score run_tag``; a qrels line is
``query_id 0 doc_id grade``.  Reading follows trec_eval (v10.0 source):

* lines whose first non-blank character is ``#`` are skipped, as are blank
  lines; run lines may carry fields after the tag (ignored), qrels lines may
  not;
* the rank column and the line order are ignored: each query's documents are
  ranked by score, highest first, and exactly equal scores by doc id
  *descending*, byte-wise (``strcmp``);
* scores compare as C doubles (trec_eval 10.0).  ``score_dtype="float32"``
  compares them as C floats instead, as trec_eval <= 9.0.8 and the
  pytrec_eval it is bundled in do: scores closer than float32 precision
  then tie and fall back to the doc id;
* a document listed twice for one query is an error, in runs and qrels.

Unlike trec_eval, a score that is not a number, or is NaN, is an error
rather than ``atof``'s silent 0.0, and every error names the file and line.
Files ending in ``.gz`` (or starting with the gzip magic bytes) are
decompressed transparently; writes are atomic and ``.gz`` output is
byte-reproducible.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby, repeat
from pathlib import Path
from typing import IO, Literal, TypeAlias

import numpy as np
import numpy.typing as npt

from evalkit._model.relevance import Grades, Relevance, as_grades
from evalkit._model.results import QueryResult, RunResult
from evalkit._util.atomic import atomic_file
from evalkit._util.bounded import line_too_long, max_line_bytes
from evalkit.errors import InputError
from evalkit.metrics.batch import (
    UNJUDGED,
    IntArray,
    QuerySelection,
    Rankings,
    paused_gc,
    score_rankings,
)

__all__ = [
    "ScoreDtype",
    "TrecFormatError",
    "TrecRun",
    "TrecScoring",
    "read_qrels",
    "read_run",
    "score_trec",
    "score_trec_run",
    "write_qrels",
    "write_run",
]

ScoreDtype: TypeAlias = Literal["float64", "float32"]
PathLike: TypeAlias = str | os.PathLike[str]
FloatArray: TypeAlias = npt.NDArray[np.float64]

_CHUNK_BYTES = 1 << 17
_GZIP_MAGIC = b"\x1f\x8b"
# A chunk holding none of these bytes tokenises identically with str.split()
# and C isspace(), has no comment lines, and no score Python would read
# differently from a C float literal ("1_0"); others take the line-by-line path.
_FAST_PATH_UNSAFE = (b"#", b"\x00", b"\x01", b"_", b"\x1c", b"\x1d", b"\x1e", b"\x1f")
_SCORE = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf(?:inity)?", re.I)
_GRADE = re.compile(rb"[+-]?\d+")
_ID_BREAKERS = re.compile(r"[ \t\n\r\x0b\x0c\x00]")


class TrecFormatError(InputError):
    """A TREC run or qrels file (or the data to write as one) is malformed."""


@dataclass(frozen=True, eq=False)
class TrecRun(Rankings):
    """A run file's rankings in trec_eval's order, with their scores.

    ``query_ids`` keep the order of first appearance in the file; ``docnos`` and
    ``scores`` are ranked within each query.  No query repeats a document.
    ``tag`` is the run tag of the last line (trec_eval keeps that one).
    """

    scores: FloatArray = field(default_factory=lambda: np.zeros(0, dtype=np.float64))
    tag: str | None = None
    source: str | None = None

    def scored(self, index: int) -> list[tuple[str, float]]:
        """``[(doc_id, score), ...]`` of the ``index``-th query, best first."""
        a, b = int(self.offsets[index]), int(self.offsets[index + 1])
        return list(zip(self.docnos[a:b], self.scores[a:b].tolist(), strict=True))


# --------------------------------------------------------------------------- reading


def _open_bytes(path: Path, what: str) -> IO[bytes]:
    try:
        fh: IO[bytes] = open(path, "rb")  # noqa: SIM115  (returned to the caller)
        magic = fh.read(2)
        fh.seek(0)
    except OSError as exc:
        raise TrecFormatError(f"cannot read {what} {str(path)!r}: {exc.strerror}") from None
    if magic == _GZIP_MAGIC:
        return gzip.GzipFile(fileobj=fh, mode="rb")  # type: ignore[return-value]
    return fh


def _chunks(fh: IO[bytes], source: str) -> Iterator[tuple[bytes, int, int]]:
    """Whole-line chunks of the file, each ending in a newline: (chunk, first line, lines)."""
    line_no = 1
    longest = max_line_bytes()
    while True:
        try:
            data = fh.read(_CHUNK_BYTES)
            if data and not data.endswith(b"\n"):
                rest = fh.readline(longest + 1)  # bounded: a bomb need not hold a newline
                if len(rest) > longest and not rest.endswith(b"\n"):
                    raise TrecFormatError(line_too_long(source, line_no + data.count(b"\n")))
                data += rest
        except (OSError, EOFError, zlib.error) as exc:
            raise TrecFormatError(f"{source}: cannot read the file: {exc}") from None
        if not data:
            return
        if not data.endswith(b"\n"):
            data += b"\n"
        n_lines = data.count(b"\n")
        yield data, line_no, n_lines
        line_no += n_lines


def _clip(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return repr(text if len(text) <= 80 else text[:77] + "...")


def _text(token: bytes, source: str, line_no: int) -> str:
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        raise TrecFormatError(
            f"{source}, line {line_no}: {token!r} is not valid UTF-8; ids must be UTF-8 text"
        ) from None


def _score(token: bytes, source: str, line_no: int) -> float:
    if token.lower() in (b"nan", b"+nan", b"-nan"):
        raise TrecFormatError(
            f"{source}, line {line_no}: score is NaN, which cannot be ranked; "
            "give the document a finite score or drop the line"
        )
    if not _SCORE.fullmatch(token):
        raise TrecFormatError(
            f"{source}, line {line_no}: score {token.decode('utf-8', 'replace')!r} is not "
            "a number (the 5th field of 'query_id Q0 doc_id rank score run_tag')"
        )
    return float(token)


_Columns: TypeAlias = tuple[list[str], list[str], FloatArray, str | None]


def _fast_run_chunk(chunk: bytes, n: int) -> _Columns | None:
    """Tokenise a plain chunk of ``n`` lines in C; ``None`` when it needs the careful path."""
    if not chunk.isascii() or any(b in chunk for b in _FAST_PATH_UNSAFE):
        return None
    # A sentinel token after every line proves each line has exactly 6 fields.
    toks = chunk.decode("ascii").replace("\n", " \x01 ").split()
    if len(toks) != 7 * n or toks[6::7].count("\x01") != n:
        return None
    try:
        scores = np.array(toks[4::7], dtype=np.float64)
    except ValueError:
        return None
    if np.isnan(scores).any():
        return None
    return toks[0::7], toks[2::7], scores, toks[5::7][-1] if n else None


def _careful_run_chunk(chunk: bytes, first_line: int, source: str) -> _Columns:
    qids: list[str] = []
    docs: list[str] = []
    scores: list[float] = []
    tag: bytes | None = None
    for offset, raw in enumerate(chunk.split(b"\n")[:-1]):
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        line_no = first_line + offset
        if len(fields) < 6:
            raise TrecFormatError(
                f"{source}, line {line_no}: expected 'query_id Q0 doc_id rank score run_tag', "
                f"got {len(fields)} field(s): {_clip(raw)}"
            )
        qids.append(_text(fields[0], source, line_no))
        docs.append(_text(fields[2], source, line_no))
        scores.append(_score(fields[4], source, line_no))
        tag = fields[5]
    tag_text = None if tag is None else tag.decode("utf-8", "replace")
    return qids, docs, np.array(scores, dtype=np.float64), tag_text


def _first_duplicate(ranked: Sequence[str]) -> str:
    seen: set[str] = set()
    for doc in ranked:
        if doc in seen:
            return doc
        seen.add(doc)
    raise AssertionError("no duplicate")  # pragma: no cover


def _order_block(
    seg_ids: Sequence[str],
    offs: Sequence[int],
    docs: list[str],
    scores: FloatArray,
    float32: bool,
    source: str,
) -> tuple[list[str], FloatArray]:
    """Check and rank a block of whole queries: query ``i`` is ``offs[i]:offs[i+1]``.

    Refuses a document listed twice for one query; orders each query by score
    descending, then doc id descending (trec_eval).  Runs usually arrive in
    that order already, so the check is vectorised and only the queries out
    of order are sorted.
    """
    # One set for the whole block proves most blocks clean (ids rarely repeat
    # across the queries of a block); otherwise check query by query.
    for i, qid in enumerate(seg_ids if len(set(docs)) != len(docs) else ()):
        a, b = offs[i], offs[i + 1]
        if len(set(docs[a:b])) != b - a:
            raise TrecFormatError(
                f"{source}: query {qid!r} lists document {_first_duplicate(docs[a:b])!r} "
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
    """Builds a :class:`TrecRun` chunk by chunk.

    Each query is checked and ranked as soon as its lines are complete, while
    its strings are still in the CPU cache: that, not the parsing, is what
    makes 10^7-line runs fast.  A query whose lines are not contiguous in the
    file is merged and re-ranked at the end.
    """

    def __init__(
        self, source: str, float32: bool, judgments: Mapping[str, Grades] | None = None
    ) -> None:
        self.source = source
        self.float32 = float32
        # With judgments, each query's grades are looked up while its ids are hot.
        self.judgments = judgments
        self.grades: list[IntArray] = []
        self.query_ids: list[str] = []
        self.lengths: list[int] = []
        self.docs: list[str] = []
        self.scores: list[FloatArray] = []
        self.seen: set[str] = set()
        self.interleaved = False
        self.carry_id: str | None = None
        self.carry_docs: list[list[str]] = []
        self.carry_scores: list[FloatArray] = []

    def _emit(
        self, seg_ids: Sequence[str], offs: Sequence[int], docs: list[str], scores: FloatArray
    ) -> None:
        docs, scores = _order_block(seg_ids, offs, docs, scores, self.float32, self.source)
        for qid in seg_ids:
            if qid in self.seen:
                self.interleaved = True
            self.seen.add(qid)
        if self.judgments is not None:
            self.grades.append(_lookup_grades(self.judgments, seg_ids, offs, docs))
        self.query_ids.extend(seg_ids)
        self.lengths.extend(offs[i + 1] - offs[i] for i in range(len(seg_ids)))
        self.docs.extend(docs)
        self.scores.append(scores)

    def _flush_carry(self) -> None:
        if self.carry_id is None:
            return
        docs = [d for piece in self.carry_docs for d in piece]
        scores = np.concatenate(self.carry_scores)
        self._emit([self.carry_id], [0, len(docs)], docs, scores)
        self.carry_id, self.carry_docs, self.carry_scores = None, [], []

    def add(self, qids: list[str], docs: list[str], scores: FloatArray) -> None:
        seg_ids: list[str] = []
        offs = [0]
        for key, group in groupby(qids):
            seg_ids.append(key)
            offs.append(offs[-1] + len(list(group)))
        if not seg_ids:
            return
        first = 0
        if self.carry_id is not None:
            if seg_ids[0] == self.carry_id:
                self.carry_docs.append(docs[: offs[1]])
                self.carry_scores.append(scores[: offs[1]])
                first = 1
            if first < len(seg_ids):
                self._flush_carry()
        if first == len(seg_ids):
            return
        # Every segment but the last is complete; the last may go on in the next chunk.
        last = len(seg_ids) - 1
        if first < last:
            a, b = offs[first], offs[last]
            block_offs = [o - a for o in offs[first : last + 1]]
            self._emit(seg_ids[first:last], block_offs, docs[a:b], scores[a:b])
        self.carry_id = seg_ids[last]
        self.carry_docs = [docs[offs[last] :]]
        self.carry_scores = [scores[offs[last] :]]

    def judged_grades(self) -> IntArray | None:
        """Grades aligned with the finished run's ids (``None`` if not looked up)."""
        if self.judgments is None or self.interleaved:
            return None  # merged queries were re-ranked: the scorer looks them up again
        return np.concatenate(self.grades) if self.grades else np.zeros(0, dtype=np.int64)

    def finish(self, tag: str | None) -> TrecRun:
        self._flush_carry()
        if not self.query_ids:
            raise TrecFormatError(
                f"{self.source}: no run lines; expected 'query_id Q0 doc_id rank score run_tag' "
                "per line"
            )
        scores = np.concatenate(self.scores)
        query_ids, lengths, docs = self.query_ids, self.lengths, self.docs
        if self.interleaved:
            query_ids, lengths, docs, scores = self._merge_interleaved(scores)
        offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        return TrecRun(query_ids, offsets, docs, True, scores=scores, tag=tag, source=self.source)

    def _merge_interleaved(
        self, scores: FloatArray
    ) -> tuple[list[str], list[int], list[str], FloatArray]:
        """Gather every query's segments (file order) and re-check and re-rank it."""
        starts = np.concatenate(([0], np.cumsum(self.lengths))).tolist()
        segments: dict[str, list[int]] = {}
        for s, qid in enumerate(self.query_ids):
            segments.setdefault(qid, []).append(s)
        docs: list[str] = []
        parts: list[FloatArray] = []
        lengths: list[int] = []
        for qid, segs in segments.items():
            q_docs = [d for s in segs for d in self.docs[starts[s] : starts[s + 1]]]
            q_scores = np.concatenate([scores[starts[s] : starts[s + 1]] for s in segs])
            if len(segs) > 1:
                q_docs, q_scores = _order_block(
                    [qid], [0, len(q_docs)], q_docs, q_scores, self.float32, self.source
                )
            docs.extend(q_docs)
            parts.append(q_scores)
            lengths.append(len(q_docs))
        return list(segments), lengths, docs, np.concatenate(parts)


def _lookup_grades(
    judgments: Mapping[str, Grades], seg_ids: Sequence[str], offs: Sequence[int], docs: list[str]
) -> IntArray:
    flat: list[int] = []
    for i, qid in enumerate(seg_ids):
        a, b = offs[i], offs[i + 1]
        grades = judgments.get(qid)
        if grades is None:
            flat.extend(repeat(UNJUDGED, b - a))
        else:
            flat.extend(map(grades.get, docs[a:b], repeat(UNJUDGED, b - a)))
    return np.array(flat, dtype=np.int64)


def read_run(path: PathLike, *, score_dtype: ScoreDtype = "float64") -> TrecRun:
    """Read a TREC run file (``.gz`` too) into rankings ordered as trec_eval orders them.

    ``score_dtype="float32"`` reproduces trec_eval <= 9.0.8 / pytrec_eval,
    which compare scores as C floats; the default compares doubles (10.0).
    """
    return _read_run(path, score_dtype, None)[0]


def _read_run(
    path: PathLike, score_dtype: ScoreDtype, judgments: Mapping[str, Grades] | None
) -> tuple[TrecRun, IntArray | None]:
    if score_dtype not in ("float64", "float32"):
        raise TrecFormatError(f"score_dtype must be 'float64' or 'float32', got {score_dtype!r}")
    file = Path(path)
    source = str(file)
    acc = _RunAccumulator(source, score_dtype == "float32", judgments)
    tag: str | None = None
    with paused_gc(), _open_bytes(file, "run file") as fh:
        for chunk, first_line, n_lines in _chunks(fh, source):
            qids, docs, scores, chunk_tag = _fast_run_chunk(chunk, n_lines) or _careful_run_chunk(
                chunk, first_line, source
            )
            acc.add(qids, docs, scores)
            tag = chunk_tag if chunk_tag is not None else tag
    run = acc.finish(tag)
    return run, acc.judged_grades()


def _fast_qrels_chunk(chunk: bytes, n: int) -> tuple[list[str], list[str], list[int]] | None:
    if not chunk.isascii() or any(b in chunk for b in _FAST_PATH_UNSAFE):
        return None
    toks = chunk.decode("ascii").replace("\n", " \x01 ").split()
    if len(toks) != 5 * n or toks[4::5].count("\x01") != n:
        return None
    try:
        grades = list(map(int, toks[3::5]))
    except ValueError:
        return None
    return toks[0::5], toks[2::5], grades


def _careful_qrels_chunk(
    chunk: bytes, first_line: int, source: str
) -> tuple[list[str], list[str], list[int], list[int]]:
    qids: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    lines: list[int] = []
    for offset, raw in enumerate(chunk.split(b"\n")[:-1]):
        fields = raw.split()
        if not fields or fields[0].startswith(b"#"):
            continue
        line_no = first_line + offset
        if len(fields) != 4:
            raise TrecFormatError(
                f"{source}, line {line_no}: expected 'query_id 0 doc_id grade', "
                f"got {len(fields)} field(s): {_clip(raw)}"
            )
        if not _GRADE.fullmatch(fields[3]):
            raise TrecFormatError(
                f"{source}, line {line_no}: grade {fields[3].decode('utf-8', 'replace')!r} "
                "is not an integer (the 4th field of 'query_id 0 doc_id grade')"
            )
        qids.append(_text(fields[0], source, line_no))
        docs.append(_text(fields[2], source, line_no))
        grades.append(int(fields[3]))
        lines.append(line_no)
    return qids, docs, grades, lines


def _raise_duplicate_judgment(file: Path, source: str) -> None:
    """Find and name the first line that judges a document twice (error path only)."""
    seen: set[tuple[str, str]] = set()
    with _open_bytes(file, "qrels file") as fh:
        for chunk, first_line, _ in _chunks(fh, source):
            qids, docs, _, lines = _careful_qrels_chunk(chunk, first_line, source)
            for qid, doc, line_no in zip(qids, docs, lines, strict=True):
                if (qid, doc) in seen:
                    raise TrecFormatError(
                        f"{source}, line {line_no}: document {doc!r} is judged twice for "
                        f"query {qid!r}; trec_eval refuses duplicate judgments: keep one"
                    )
                seen.add((qid, doc))
    raise AssertionError("no duplicate judgment found")  # pragma: no cover


def read_qrels(path: PathLike) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file (``.gz`` too) into ``{query_id: {doc_id: grade}}``."""
    file = Path(path)
    source = str(file)
    qrels: dict[str, dict[str, int]] = {}
    with paused_gc(), _open_bytes(file, "qrels file") as fh:
        for chunk, first_line, n_lines in _chunks(fh, source):
            fast = _fast_qrels_chunk(chunk, n_lines)
            if fast is not None:
                qids, docs, grades = fast
            else:
                qids, docs, grades, _ = _careful_qrels_chunk(chunk, first_line, source)
            start = 0
            for qid, group in groupby(qids):
                stop = start + len(list(group))
                judged = qrels.setdefault(qid, {})
                before = len(judged)
                judged.update(zip(docs[start:stop], grades[start:stop], strict=True))
                if len(judged) != before + stop - start:
                    _raise_duplicate_judgment(file, source)
                start = stop
    if not qrels:
        raise TrecFormatError(
            f"{source}: no qrels lines; expected 'query_id 0 doc_id grade' per line"
        )
    return qrels


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


def _check_query_id(qid: object, where: str) -> str:
    if not isinstance(qid, str):
        raise TrecFormatError(f"{where}: query id {qid!r} is not a string")
    _check_ids([qid], "query id", where)
    if qid.startswith("#"):
        raise TrecFormatError(
            f"{where}: query id {qid!r} starts with '#', so the line would be read as a comment"
        )
    return qid


def _atomic_write(path: Path, lines: Iterator[str]) -> Path:
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
            if isinstance(grade, bool) or not isinstance(grade, int | np.integer):
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
    # One pause for the whole job: the collection that follows a pause walks
    # everything built during it, so three pauses would walk the run three times.
    with paused_gc():
        qrels = read_qrels(qrels_path)
        # Grades are looked up while the run is read (its ids are still in cache then).
        run, grades = _read_run(run_path, score_dtype, qrels)
        label = name if name is not None else (run.tag or Path(run_path).name)
        result = score_rankings(
            label,
            run,
            qrels,
            metrics,
            relevance_level=relevance_level,
            queries=queries,
            _grades=grades,
            _checked_qrels=True,
        )
        ranked = set(run.query_ids)
        unranked = tuple(q for q in qrels if q not in ranked)
        unjudged = tuple(q for q in run.query_ids if q not in qrels)
        del run, grades, qrels, ranked  # freed now, not walked by the collection after the pause
    return TrecScoring(result, queries, unranked, unjudged)
