"""TREC files, line by line: open (plain or ``.gz``), cut into whole-line chunks, check
tokens, and read qrels.  No numpy: reading qrels needs none, and the run reader
(:mod:`.trec_read`) builds on these.
"""

from __future__ import annotations

import os
import re
import zlib
from collections.abc import Iterator, Sequence
from itertools import groupby
from pathlib import Path
from typing import IO, Literal, TypeAlias

from evalkit._util.bounded import GZIP_MAGIC, line_too_long, max_line_bytes, paused_gc
from evalkit.errors import InputError

ScoreDtype: TypeAlias = Literal["float64", "float32"]
PathLike: TypeAlias = str | os.PathLike[str]

CHUNK_BYTES = 1 << 17
# A chunk holding none of these bytes tokenises identically with str.split()
# and C isspace(), has no comment lines, and no score Python would read
# differently from a C float literal ("1_0"); others take the line-by-line path.
FAST_PATH_UNSAFE = (b"#", b"\x00", b"\x01", b"_", b"\x1c", b"\x1d", b"\x1e", b"\x1f")
_SCORE = re.compile(rb"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?inf(?:inity)?", re.I)
_GRADE = re.compile(rb"[+-]?\d+")


class TrecFormatError(InputError):
    """A TREC run or qrels file (or the data to write as one) is malformed."""


def open_bytes(path: Path, what: str) -> IO[bytes]:
    try:
        fh: IO[bytes] = open(path, "rb")  # noqa: SIM115  (returned to the caller)
        magic = fh.read(2)
        fh.seek(0)
    except OSError as exc:
        raise TrecFormatError(f"cannot read {what} {str(path)!r}: {exc.strerror}") from None
    if magic == GZIP_MAGIC:
        import gzip  # here: most files are plain, and scoring them need not pay for it

        return gzip.GzipFile(fileobj=fh, mode="rb")  # type: ignore[return-value]
    return fh


def chunks(fh: IO[bytes], source: str) -> Iterator[tuple[bytes, int, int]]:
    """Whole-line chunks of the file, each ending in a newline: (chunk, first line, lines)."""
    line_no = 1
    longest = max_line_bytes()
    while True:
        try:
            data = fh.read(CHUNK_BYTES)
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


def clip(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace").strip()
    return repr(text if len(text) <= 80 else text[:77] + "...")


def id_text(token: bytes, source: str, line_no: int) -> str:
    try:
        return token.decode("utf-8")
    except UnicodeDecodeError:
        raise TrecFormatError(
            f"{source}, line {line_no}: {token!r} is not valid UTF-8; ids must be UTF-8 text"
        ) from None


def score_value(token: bytes, source: str, line_no: int) -> float:
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


def first_duplicate(ranked: Sequence[str]) -> str:
    seen: set[str] = set()
    for doc in ranked:
        if doc in seen:
            return doc
        seen.add(doc)
    raise AssertionError("no duplicate")  # pragma: no cover


def plain_byte_tokens(chunk: bytes, n: int, fields: int) -> list[bytes] | None:
    """The tokens of a chunk of ``n`` lines of exactly ``fields`` fields, split in C, each
    line's followed by ``b"\x01"``; ``None`` when the chunk needs the careful path."""
    if not chunk.isascii() or any(b in chunk for b in FAST_PATH_UNSAFE):
        return None
    toks = chunk.replace(b"\n", b" \x01 ").split()
    # n lines of `fields` tokens, each followed by the sentinel: each line has exactly `fields`.
    stride = fields + 1
    if len(toks) != stride * n or toks[fields::stride].count(b"\x01") != n:
        return None
    return toks


def query_runs(qids: Sequence[bytes | str]) -> list[tuple[str, int]]:
    """Each run of equal query ids in ``qids`` (text, or ASCII bytes): the id, decoded
    once, and its length."""
    return [
        (qid if isinstance(qid, str) else qid.decode("ascii"), len(list(group)))
        for qid, group in groupby(qids)
    ]


def careful_lines(chunk: bytes, first_line: int) -> Iterator[tuple[int, list[bytes], bytes]]:
    """``(line number, fields, line)`` of each line of a chunk that is neither blank nor
    a comment, split as C's isspace() splits (the careful path)."""
    for offset, raw in enumerate(chunk.split(b"\n")[:-1]):
        fields = raw.split()
        if fields and not fields[0].startswith(b"#"):
            yield first_line + offset, fields, raw


def _fast_qrels_chunk(
    chunk: bytes, n: int
) -> tuple[list[tuple[str, int]], list[str], list[int]] | None:
    toks = plain_byte_tokens(chunk, n, 4)
    if toks is None:
        return None
    grade_tokens = toks[3::5]
    try:
        # Grades take a few values: each is parsed once (a 1-byte token is CPython's
        # shared object, its hash already known), then looked up.
        value = {token: int(token) for token in set(grade_tokens)}
    except ValueError:
        return None
    grades = list(map(value.__getitem__, grade_tokens))
    return query_runs(toks[0::5]), list(map(bytes.decode, toks[2::5])), grades


def _careful_qrels_chunk(
    chunk: bytes, first_line: int, source: str
) -> tuple[list[str], list[str], list[int], list[int]]:
    qids: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    lines: list[int] = []
    for line_no, fields, raw in careful_lines(chunk, first_line):
        if len(fields) != 4:
            raise TrecFormatError(
                f"{source}, line {line_no}: expected 'query_id 0 doc_id grade', "
                f"got {len(fields)} field(s): {clip(raw)}" + _beir_hint(fields, line_no)
            )
        if not _GRADE.fullmatch(fields[3]):
            raise TrecFormatError(
                f"{source}, line {line_no}: grade {fields[3].decode('utf-8', 'replace')!r} "
                "is not an integer (the 4th field of 'query_id 0 doc_id grade')"
            )
        qids.append(id_text(fields[0], source, line_no))
        docs.append(id_text(fields[2], source, line_no))
        grades.append(int(fields[3]))
        lines.append(line_no)
    return qids, docs, grades, lines


def _beir_hint(fields: list[bytes], line_no: int) -> str:
    """What a three-field line in TREC qrels probably is: BEIR's format."""
    if len(fields) != 3:
        return ""
    if [f.lower() for f in fields] == [b"query-id", b"corpus-id", b"score"]:
        return f"; BEIR's header belongs on line 1, not line {line_no}: keep one format"
    return "; BEIR qrels (query-id corpus-id score) need their header on line 1"


def _other_format(path: PathLike) -> dict[str, dict[str, int]] | None:
    """Qrels that are not TREC's: an ir_datasets id (``irds:ID``, the ``ir-datasets``
    extra) or a BEIR file, told by its header (``query-id<TAB>corpus-id<TAB>score`` on
    line 1) and read as :func:`evalkit.corpus.load_qrels` reads it.  None for TREC qrels."""
    if str(path).startswith("irds:"):  # docs/loaders.md
        from evalkit._spec.dataset_hubs import irds_qrels

        return irds_qrels(str(path))
    file = Path(path)
    with open_bytes(file, "qrels file") as fh:
        first = fh.readline(4096).removeprefix(b"\xef\xbb\xbf").decode("utf-8", "replace")
    # Only a line starting so can be BEIR's header: TREC qrels never load its reader.
    if first.lstrip().lower().startswith("query-id"):
        from evalkit._spec.corpus import is_beir_header, read_beir_qrels

        if is_beir_header(first):
            return read_beir_qrels(file)
    return None


def raise_duplicate_judgment(file: Path) -> None:
    """Find and name the first line that judges a document twice (error path only)."""
    source = str(file)
    seen: set[tuple[str, str]] = set()
    with open_bytes(file, "qrels file") as fh:
        for chunk, first_line, _ in chunks(fh, source):
            qids, docs, _, lines = _careful_qrels_chunk(chunk, first_line, source)
            for qid, doc, line_no in zip(qids, docs, lines, strict=True):
                if (qid, doc) in seen:
                    raise TrecFormatError(
                        f"{source}, line {line_no}: document {doc!r} is judged twice for "
                        f"query {qid!r}; trec_eval refuses duplicate judgments: keep one"
                    )
                seen.add((qid, doc))
    raise AssertionError("no duplicate judgment found")  # pragma: no cover


def qrels_pieces(path: PathLike) -> Iterator[tuple[str, list[str], list[int]]]:
    """The qrels file's lines, in order, as pieces of one query id each: (query id, doc
    ids, grades).  A query's lines in one chunk are one piece; lines that go on into the
    next chunk, or come back later in the file, are further pieces of the same id.
    BEIR qrels and ``irds:`` ids give one piece per query."""
    other = _other_format(path)
    if other is not None:
        for qid, judged in other.items():
            yield qid, list(judged), list(judged.values())
        return
    file = Path(path)
    source = str(file)
    with open_bytes(file, "qrels file") as fh:
        for chunk, first_line, n_lines in chunks(fh, source):
            fast = _fast_qrels_chunk(chunk, n_lines)
            if fast is not None:
                runs, docs, grades = fast
            else:
                qids, docs, grades, _ = _careful_qrels_chunk(chunk, first_line, source)
                runs = query_runs(qids)
            start = 0
            for qid, lines in runs:
                stop = start + lines
                yield qid, docs[start:stop], grades[start:stop]
                start = stop


def judge_piece(judged: dict[str, int], docs: list[str], grades: list[int], path: Path) -> None:
    """Add one piece to a query's judgments; a document judged twice is refused, naming
    its line (trec_eval refuses duplicate judgments)."""
    before = len(judged)
    judged.update(zip(docs, grades, strict=True))
    if len(judged) != before + len(docs):
        raise_duplicate_judgment(path)


def no_qrels(path: Path) -> TrecFormatError:
    return TrecFormatError(f"{path}: no qrels lines; expected 'query_id 0 doc_id grade' per line")


def read_qrels(path: PathLike) -> dict[str, dict[str, int]]:
    """Read a qrels file (``.gz`` too) into ``{query_id: {doc_id: grade}}``: TREC qrels
    (``query_id 0 doc_id grade``), BEIR qrels (told by their header) or an ``irds:`` id."""
    file = Path(path)
    qrels: dict[str, dict[str, int]] = {}
    with paused_gc():
        for qid, docs, grades in qrels_pieces(path):
            judge_piece(qrels.setdefault(qid, {}), docs, grades, file)
    if not qrels:
        raise no_qrels(file)
    return qrels
