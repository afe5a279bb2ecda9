"""Optional BEIR loaders: ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/{split}.tsv``."""

from __future__ import annotations

import gzip
import json
import os
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit._util.bounded import line_too_long, loads, max_line_bytes
from evalkit.errors import ConfigError, GoldenError

ENV_VAR = "EVALKIT_DATA"

#: Default data root: ``data/`` beside the source checkout (``<repo>/data``).
#: Only useful from a checkout; set ``EVALKIT_DATA`` or pass ``data_root=`` otherwise.
DATA: Path = Path(__file__).resolve().parents[2] / "data"

DEFAULT_SPLIT = "test"


@dataclass(frozen=True)
class Doc:
    """A BEIR document (0.2.0's type; :func:`load_corpus` returns plain mappings)."""

    id: str
    title: str
    text: str

    @property
    def full(self) -> str:
        """Title and text joined, as a retriever usually indexes them."""
        return f"{self.title} {self.text}"


@dataclass(frozen=True)
class Query:
    """A BEIR query: ``id`` for :func:`evalkit.run`, ``text`` for the retriever."""

    id: str
    text: str


# --------------------------------------------------------------------------- locating


def data_root(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data root this call would use (argument, else ``EVALKIT_DATA``, else :data:`DATA`)."""
    return _root(explicit)[0]


def _root(explicit: str | os.PathLike[str] | None) -> tuple[Path, str]:
    if explicit is not None:
        return Path(explicit), "the data_root argument"
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return Path(env), f"{ENV_VAR}={env}"
    return Path(DATA), f"evalkit.corpus.DATA (no {ENV_VAR} set)"


def _is_path(name_or_path: str | os.PathLike[str]) -> bool:
    if not isinstance(name_or_path, str):
        return True
    return os.sep in name_or_path or "/" in name_or_path or name_or_path in (".", "..")


def _locate(
    name_or_path: str | os.PathLike[str] | None,
    data_root_arg: str | os.PathLike[str] | None,
    relative: str,
) -> Path:
    """Find ``relative`` (e.g. ``"corpus.jsonl"``) for a dataset, trying ``.gz`` too."""
    if name_or_path is not None and _is_path(name_or_path):
        base = Path(name_or_path)
        origin = "the path you passed"
        if base.is_file():
            return base
    else:
        root, origin = _root(data_root_arg)
        base = root if name_or_path is None else root / str(name_or_path)
    plain = base / relative
    zipped = base / (relative + ".gz")
    if plain.is_file() and zipped.is_file():
        raise ConfigError(
            f"both {plain} and {zipped} exist; remove one so it is clear which is read"
        )
    if plain.is_file():
        return plain
    if zipped.is_file():
        return zipped
    raise ConfigError(
        f"BEIR data not found: looked for {plain} (or .gz), using {origin}. "
        f"Set {ENV_VAR} to the directory holding your datasets, or pass data_root= "
        "or a path to the dataset"
    )


# --------------------------------------------------------------------------- reading


def _lines(file: Path) -> Iterator[tuple[int, str]]:
    """``(line number, line)`` for a text or gzipped file, with read errors named.

    Lines are decoded one at a time so a bad byte is reported on its own line.
    """
    number = 0
    longest = max_line_bytes()
    try:
        with gzip.open(file, "rb") if file.suffix == ".gz" else file.open("rb") as handle:
            for number, raw in enumerate(iter(lambda: handle.readline(longest + 1), b""), 1):
                if len(raw) > longest and not raw.endswith(b"\n"):
                    raise GoldenError(line_too_long(str(file), number))
                if number == 1:
                    raw = raw.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 byte order mark
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise GoldenError(
                        f"{file}:{number}: not valid UTF-8 ({exc.reason} at column {exc.start + 1})"
                    ) from None
                yield number, line.rstrip("\r\n")
    except (OSError, EOFError, zlib.error) as exc:
        detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise GoldenError(f"cannot read {file}: {detail}") from None


def _json_records(file: Path, what: str) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, line in _lines(file):
        if not line.strip():
            continue
        try:
            record = loads(line)
        except json.JSONDecodeError as exc:
            raise GoldenError(
                f"{file}:{number}: invalid JSON: {exc.msg} (column {exc.colno})"
            ) from None
        if not isinstance(record, dict):
            raise GoldenError(
                f"{file}:{number}: expected a JSON object per {what}, got {type(record).__name__}"
            )
        yield number, record


def _identified(file: Path, what: str) -> Iterator[tuple[int, str, dict[str, Any]]]:
    """``(line number, '_id', record)`` of each JSON record, an ``_id`` seen twice refused."""
    first: dict[str, int] = {}
    for number, record in _json_records(file, what):
        raw = record.get("_id")
        if isinstance(raw, bool) or not isinstance(raw, str | int) or str(raw).strip() == "":
            raise GoldenError(
                f"{file}:{number}: '_id' must be a non-empty string (or integer), got {raw!r}"
            )
        record_id = str(raw)
        if record_id in first:
            raise GoldenError(
                f"{file}:{number}: duplicate {what} id {record_id!r} "
                f"(first at line {first[record_id]})"
            )
        first[record_id] = number
        yield number, record_id, record


def _text(record: dict[str, Any], key: str, file: Path, number: int, *, default: str | None) -> str:
    raw = default if record.get(key) is None else record[key]
    if not isinstance(raw, str):
        need = f"a string, got {raw!r}" if key in record else "present"
        raise GoldenError(f"{file}:{number}: '{key}' must be {need}")
    return raw


# --------------------------------------------------------------------------- loaders


def load_corpus(
    name_or_path: str | os.PathLike[str] | None = None,
    *,
    data_root: str | os.PathLike[str] | None = None,
) -> dict[str, dict[str, str]]:
    """``{doc id: {"title": ..., "text": ...}}`` from ``corpus.jsonl``, in file order.

    ``title`` defaults to ``""``; ``text`` is required.  A duplicate ``_id``,
    invalid JSON or an empty file raises, naming ``file:line``.
    """
    file = _locate(name_or_path, data_root, "corpus.jsonl")
    docs: dict[str, dict[str, str]] = {}
    for number, doc_id, record in _identified(file, "document"):
        docs[doc_id] = {
            "title": _text(record, "title", file, number, default=""),
            "text": _text(record, "text", file, number, default=None),
        }
    if not docs:
        raise GoldenError(f"{file}: no documents; the corpus file is empty")
    return docs


def load_queries(
    name_or_path: str | os.PathLike[str] | None = None,
    *,
    data_root: str | os.PathLike[str] | None = None,
    split: str | None = DEFAULT_SPLIT,
) -> list[Query]:
    """Queries from ``queries.jsonl`` as :class:`Query` objects, in file order.

    With ``split`` (default ``"test"``), only the queries judged in
    ``qrels/{split}.tsv`` are returned, so the result pairs with
    ``load_qrels(split=...)`` in :func:`evalkit.run` (which refuses unjudged
    queries).  A judged query missing from ``queries.jsonl`` raises.
    ``split=None`` returns every query.  ``irds:DATASET_ID`` reads an ir_datasets id
    instead (its split is in the id; ``split=None`` keeps its unjudged queries too).
    """
    if str(name_or_path).startswith("irds:"):
        from evalkit._spec.dataset_hubs import irds_qrels, irds_queries

        pairs = irds_queries(str(name_or_path))
        judged = irds_qrels(str(name_or_path)) if split is not None else None
        return [Query(qid, text) for qid, text in pairs if judged is None or qid in judged]
    file = _locate(name_or_path, data_root, "queries.jsonl")
    queries: list[Query] = []
    for number, query_id, record in _identified(file, "query"):
        text = _text(record, "text", file, number, default=None)
        if not text.strip():
            raise GoldenError(f"{file}:{number}: query {query_id!r} has empty 'text'")
        queries.append(Query(query_id, text))
    if not queries:
        raise GoldenError(f"{file}: no queries; the queries file is empty")
    if split is None:
        return queries
    qrels_file = _locate(file.parent, None, f"qrels/{_split_name(split)}.tsv")
    judged = read_beir_qrels(qrels_file)
    listed = {q.id for q in queries}
    absent = [qid for qid in judged if qid not in listed]
    if absent:
        shown = ", ".join(absent[:10]) + (
            f" (+{len(absent) - 10} more)" if len(absent) > 10 else ""
        )
        raise GoldenError(
            f"{qrels_file}: judges {len(absent)} query id(s) absent from {file}: {shown}"
        )
    return [q for q in queries if q.id in judged]


def _split_name(split: str) -> str:
    if not split or any(sep in split for sep in ("/", "\\", os.sep)) or split in (".", ".."):
        raise ConfigError(f"split must be a plain name such as 'test', got {split!r}")
    return split


def load_qrels_graded(
    name_or_path: str | os.PathLike[str] | None = None,
    *,
    data_root: str | os.PathLike[str] | None = None,
    split: str = DEFAULT_SPLIT,
) -> dict[str, dict[str, int]]:
    """``{query id: {doc id: grade}}`` from ``qrels/{split}.tsv``, every grade kept (0 and < 0 too).

    ``name_or_path`` may also point at the ``.tsv`` file itself, or be an ir_datasets id,
    ``irds:DATASET_ID`` (its split is in the id).
    """
    if str(name_or_path).startswith("irds:"):
        from evalkit._spec.dataset_hubs import irds_qrels

        return irds_qrels(str(name_or_path))
    return read_beir_qrels(_locate(name_or_path, data_root, f"qrels/{_split_name(split)}.tsv"))


def load_qrels(
    name_or_path: str | os.PathLike[str] | None = None,
    *,
    data_root: str | os.PathLike[str] | None = None,
    split: str = DEFAULT_SPLIT,
) -> dict[str, set[str]]:
    """``{query id: relevant doc ids}`` (grade >= 1), the shape :func:`evalkit.run` takes.

    Every judged query is present, even one whose judgements are all below 1
    (its set is empty): dropping it would hide that it was judged at all.
    """
    graded = load_qrels_graded(name_or_path, data_root=data_root, split=split)
    return {qid: {doc for doc, grade in docs.items() if grade >= 1} for qid, docs in graded.items()}


_HEADER = ("query-id", "corpus-id", "score")


def _fields(line: str) -> list[str]:
    return [f.strip() for f in (line.split("\t") if "\t" in line else line.split())]


def is_beir_header(line: str) -> bool:
    """Whether ``line`` is BEIR's qrels header, ``query-id<TAB>corpus-id<TAB>score``."""
    return tuple(f.lower() for f in _fields(line)) == _HEADER


def read_beir_qrels(file: Path) -> dict[str, dict[str, int]]:
    """``{query id: {doc id: grade}}`` of a BEIR qrels file, every grade kept."""
    qrels: dict[str, dict[str, int]] = {}
    first: dict[tuple[str, str], int] = {}
    for number, line in _lines(file):
        if not line.strip():
            continue
        fields = _fields(line)
        if number == 1 and is_beir_header(line):
            continue
        if len(fields) != 3:
            raise GoldenError(
                f"{file}:{number}: expected 3 tab-separated fields "
                f"(query-id, corpus-id, score), got {len(fields)}"
                + (
                    "; a TREC qrels line (query_id 0 doc_id grade) in BEIR qrels: keep one format"
                    if len(fields) == 4
                    else ""
                )
            )
        query_id, doc_id, score_text = fields
        if not query_id or not doc_id:
            raise GoldenError(f"{file}:{number}: empty query-id or corpus-id")
        try:
            score = int(score_text)
        except ValueError:
            what = "header" if number == 1 else "score"
            raise GoldenError(
                f"{file}:{number}: {what} {score_text!r} is not an integer grade"
                + (f"; the header must be {' '.join(_HEADER)}" if number == 1 else "")
            ) from None
        pair = (query_id, doc_id)
        if pair in first:
            raise GoldenError(
                f"{file}:{number}: query {query_id!r} judges document {doc_id!r} again "
                f"(first at line {first[pair]})"
            )
        first[pair] = number
        qrels.setdefault(query_id, {})[doc_id] = score
    if not qrels:
        raise GoldenError(f"{file}: no judgements; the qrels file is empty")
    return qrels
