"""Golden sets and qrels from the ecosystem: Hugging Face ``datasets`` and ``ir_datasets``."""

from __future__ import annotations

import importlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from evalkit._model.golden_cases import GoldenCase, GoldenSet
from evalkit._spec.golden_loaders import (
    KNOWN_FIELDS,
    CaseWhere,
    Loader,
    build_case,
    collect_cases,
)
from evalkit._spec.golden_loaders import load_goldens as load_golden_file
from evalkit._util.log import get_logger
from evalkit.errors import ConfigError, GoldenError

HF_PREFIX = "hf:"
IRDS_PREFIX = "irds:"

_log = get_logger(__name__)


def _extra(module: str, extra: str, what: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError:
        raise ConfigError(
            f"{what} needs the optional package {module}: pip install 'paired-evalkit[{extra}]'"
        ) from None


# ----------------------------------------------------------------------------- Hugging Face


def check_fields(fields: Mapping[str, str] | None, source: str) -> dict[str, str] | None:
    """``fields`` (evalkit field -> the dataset's column), refused when it names no field."""
    if fields is None:
        return None
    unknown = [name for name in fields if name not in KNOWN_FIELDS]
    if unknown:
        raise GoldenError(
            f"{source}: fields names {unknown[0]!r}, not a golden field; the fields are "
            f"{', '.join(KNOWN_FIELDS)} (each mapped to a column of the dataset)"
        )
    if "id" not in fields or "query" not in fields:
        missing = [n for n in ("id", "query") if n not in fields]
        raise GoldenError(f"{source}: fields must map {' and '.join(missing)} to a column")
    return dict(fields)


def goldens_from_rows(
    rows: Iterable[Mapping[str, Any]], source: str, fields: Mapping[str, str] | None = None
) -> GoldenSet:
    """A golden set from a dataset's rows (dicts), checked as a golden file's cases are."""
    mapping = check_fields(fields, source)
    where_file = Path(source)

    def cases() -> Iterable[tuple[GoldenCase, CaseWhere]]:
        for index, row in enumerate(rows, start=1):
            where = CaseWhere(where_file, None, index)
            if mapping is None:
                raw: Mapping[str, Any] = row
            else:
                absent = [column for column in mapping.values() if column not in row]
                if absent:
                    raise GoldenError(
                        f"{where.at()}no column {absent[0]!r}; the dataset's columns are "
                        f"{', '.join(map(str, row)) or 'none'}"
                    )
                raw = {name: row[column] for name, column in mapping.items()}
            yield build_case(raw, where), where

    goldens = collect_cases(cases(), where_file)
    goldens.source = source
    if len(goldens) == 0:
        raise GoldenError(f"{source}: the dataset has no rows; an empty eval would pass every gate")
    return goldens


def hf_goldens(
    source: str,
    *,
    split: str | None,
    fields: Mapping[str, str] | None = None,
    options: Mapping[str, Any] | None = None,
) -> GoldenSet:
    """``hf:ORG/NAME``: the split's rows through ``datasets.load_dataset`` (``options``:
    its other arguments, e.g. ``revision`` to pin a commit, ``name`` for a config)."""
    name = source.removeprefix(HF_PREFIX)
    if not name:
        raise GoldenError(f"{source}: name the dataset, e.g. hf:ORG/NAME")
    if split is None:
        raise GoldenError(f"{source}: a Hugging Face dataset needs split=, e.g. split='test'")
    check_fields(fields, source)
    datasets = _extra("datasets", "hf", f"load_goldens({source!r})")
    try:
        rows = datasets.load_dataset(name, split=split, **dict(options or {}))
    except (FileNotFoundError, ValueError, ConnectionError) as exc:
        raise GoldenError(f"{source}: cannot load split {split!r}: {exc}") from None
    label = f"{source} (split {split})"
    return goldens_from_rows(rows, label, fields)


# ----------------------------------------------------------------------------- ir_datasets


def _irds(source: str, what: str) -> Any:
    dataset_id = source.removeprefix(IRDS_PREFIX)
    ir_datasets = _extra("ir_datasets", "ir-datasets", f"{what}({source!r})")
    try:
        return ir_datasets.load(dataset_id)
    except KeyError:
        raise GoldenError(
            f"{source}: no ir_datasets dataset {dataset_id!r}; ids look like "
            "beir/scifact/test (https://ir-datasets.com)"
        ) from None


def irds_qrels(source: str) -> dict[str, dict[str, int]]:
    """``{query id: {doc id: grade}}`` of an ir_datasets id, every grade kept."""
    dataset = _irds(source, "qrels")
    if not dataset.has_qrels():
        raise GoldenError(f"{source}: this ir_datasets dataset has no qrels")
    qrels: dict[str, dict[str, int]] = {}
    for qrel in dataset.qrels_iter():
        judged = qrels.setdefault(str(qrel.query_id), {})
        doc = str(qrel.doc_id)
        if doc in judged:
            raise GoldenError(
                f"{source}: query {qrel.query_id!r} judges document {doc!r} twice; keep one"
            )
        judged[doc] = int(qrel.relevance)
    if not qrels:
        raise GoldenError(f"{source}: no judgements; the qrels are empty")
    return qrels


def irds_queries(source: str) -> list[tuple[str, str]]:
    """``(query id, text)`` of an ir_datasets id, in its order."""
    dataset = _irds(source, "queries")
    if not dataset.has_queries():
        raise GoldenError(f"{source}: this ir_datasets dataset has no queries")
    out = []
    for query in dataset.queries_iter():
        # default_text(): the field ir_datasets reads as a query's text (a TREC topic's title)
        text = query.default_text() if hasattr(query, "default_text") else query.text
        out.append((str(query.query_id), str(text)))
    return out


def irds_goldens(source: str) -> GoldenSet:
    """One case per judged query of an ir_datasets id: its text, and its grades as
    ``relevant`` (grade >= 1 relevant, every grade kept).  Unjudged queries are left out,
    as trec_eval leaves them out; how many is logged at INFO."""
    qrels = irds_qrels(source)
    queries = irds_queries(source)
    judged = [(qid, text) for qid, text in queries if qid in qrels]
    if len(judged) < len(queries):
        _log.info(
            "%s: %d unjudged of %d queries left out",
            source,
            len(queries) - len(judged),
            len(queries),
        )
    rows = ({"id": qid, "query": text, "relevant": qrels[qid]} for qid, text in judged)
    return goldens_from_rows(rows, source)


# ----------------------------------------------------------------------------- the front door


def load_goldens(
    path: str | os.PathLike[str],
    loader: Loader | str | None = None,
    *,
    split: str | None = None,
    fields: Mapping[str, str] | None = None,
    dataset_options: Mapping[str, Any] | None = None,
) -> GoldenSet:
    """Load a golden set from a file, or from a hub: ``hf:ORG/NAME`` or ``irds:DATASET_ID``.

    A file is read by its extension's loader (``loader`` overrides it: a
    ``(Path) -> GoldenSet`` callable, or a registered loader's name), as in 0.2.0.
    ``hf:ORG/NAME`` reads the ``split`` of a Hugging Face dataset (``fields`` maps
    evalkit's fields to its columns; ``dataset_options`` go to ``datasets.load_dataset``,
    e.g. ``{"revision": "<commit>"}``); ``irds:ID`` makes one case per judged query of an
    ir_datasets id.  Raises :class:`GoldenError` for anything malformed or empty, and
    :class:`ConfigError` naming the ``pip install`` when an extra is missing.
    """
    source = str(path)
    given = [
        name
        for name, value in (
            ("split", split),
            ("fields", fields),
            ("dataset_options", dataset_options),
        )
        if value is not None
    ]
    if not source.startswith((HF_PREFIX, IRDS_PREFIX)):
        if given:
            raise GoldenError(
                f"{path}: {', '.join(given)} apply to a dataset (hf:ORG/NAME); a golden "
                "file has its own fields"
            )
        return load_golden_file(path, loader)
    if loader is not None:
        raise GoldenError(f"{source}: loader= applies to golden files, not to a dataset")
    if source.startswith(HF_PREFIX):
        return hf_goldens(source, split=split, fields=fields, options=dataset_options)
    if given:
        raise GoldenError(
            f"{source}: {', '.join(given)} apply to hf: datasets; an ir_datasets id names "
            "its split itself (e.g. irds:beir/scifact/test)"
        )
    return irds_goldens(source)
