"""One case of a run as the artefact stores it: a row of the ``rows`` table."""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from itertools import chain, compress, repeat
from operator import and_, attrgetter, is_
from typing import Any, Literal

from evalkit._model.results import CaseResult, QueryResult, TargetResponse
from evalkit._util import bounded as _bounded
from evalkit.errors import ArtifactError

MAX_OUTPUT_IDS = 1_000
MAX_OUTPUT_CHARS = 20_000

# The cells of a schema-3 row, in order; the artefact's `columns` header says the same.
COLUMNS: tuple[str, ...] = (
    "id",
    "metrics",
    "ids",
    "text",
    "latency_ms",
    "meta",
    "error",
    "truncated",
)

RunPath = Literal["target", "retrieval"]


# ------------------------------------------------- row objects (schemas 1 and 2, checkpoints)


def _req(doc: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in doc:
        raise ArtifactError(f"{where}: missing field {key!r}")
    value = doc[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise ArtifactError(f"{where}: field {key!r} has the wrong type ({type(value).__name__})")
    return value


def _opt(doc: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if doc.get(key) is None:
        return None
    return _req(doc, key, kind, where)


def _finite(value: Any, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ArtifactError(f"{where}: metric value must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ArtifactError(
            f"{where}: metric value is {value!r}; NaN/inf cannot be stored as a score "
            "(fix the metric so it returns a finite number or raises)"
        )
    return float(value)


def _row_dict(row: QueryResult | CaseResult, path: str) -> dict[str, Any]:
    """The row as schema 2 held it, and as the checkpoint still writes it: an object."""
    case_id, metrics, ids, text, latency, meta, error, cut = table_rows([row], (), path)[0][0]
    parts = (("ids", None if ids is None else list(ids)), ("text", text))
    output = None if row.response is None else {k: v for k, v in parts if v is not None}
    return {
        "id": case_id,
        "metrics": dict(metrics),
        "output": output,
        "truncated": cut,
        "latency_ms": latency,
        "meta": dict(meta),
        "error": error,
    }


def _row_cells(doc: Any) -> list[Any] | None:
    """A row object's cells (schema 3's layout), or ``None`` when it has not their shape."""
    output = doc.get("output") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or "id" not in doc or "metrics" not in doc:
        return None
    if not (output is None or isinstance(output, dict)):
        return None
    out = output or {}
    return [doc["id"], doc["metrics"], out.get("ids"), out.get("text"), *map(doc.get, COLUMNS[4:])]


def _quick_row(doc: Any, path: RunPath) -> tuple[QueryResult | CaseResult, bool] | None:
    """The row a well-formed document describes, or ``None`` to take :func:`_careful_row`."""
    cells = _row_cells(doc)
    quick = None if cells is None else _quick_table([cells], path)
    return None if quick is None else (quick[0][0], bool(quick[1]))


# A row's meta sits at depth 4 (document, rows, row, meta): what it may nest below that.
_ROW_META_DEPTH = 4


def _parse_row(
    doc: Any, index: int, path: RunPath, where: str
) -> tuple[QueryResult | CaseResult, bool]:
    quick = _quick_row(doc, path)
    return quick if quick is not None else _careful_row(doc, index, path, where)


def _careful_row(
    doc: Any, index: int, path: RunPath, where: str
) -> tuple[QueryResult | CaseResult, bool]:
    w = f"{where}: rows[{index}]"
    if not isinstance(doc, dict):
        raise ArtifactError(f"{w}: expected an object")
    case_id = _req(doc, "id", str, w)
    w = f"{where}: case {case_id!r}"
    metrics_doc = _req(doc, "metrics", dict, w)
    metrics: dict[str, float] = {}
    for k, v in metrics_doc.items():
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise ArtifactError(f"{w}: metric {k!r} has a non-numeric value {v!r}")
        metrics[k] = float(v)
    output = _opt(doc, "output", dict, w)
    latency = _opt(doc, "latency_ms", (int, float), w)
    if latency is not None and not (math.isfinite(latency) and latency >= 0):
        raise ArtifactError(f"{w}: latency_ms must be a finite number >= 0, got {latency!r}")
    meta = _opt(doc, "meta", dict, w) or {}
    if meta and not _bounded.check_depth(meta, depth=_ROW_META_DEPTH):
        raise ArtifactError(
            f"{w}: meta is nested deeper than {_bounded.MAX_DEPTH} levels; keep meta flat"
        )
    error = _opt(doc, "error", str, w)
    truncated = bool(_opt(doc, "truncated", bool, w))
    ids = None if output is None else output.get("ids")
    text = None if output is None else output.get("text")
    if ids is not None and (not isinstance(ids, list) or not all(isinstance(i, str) for i in ids)):
        raise ArtifactError(f"{w}: output.ids must be a list of strings")
    if text is not None and not isinstance(text, str):
        raise ArtifactError(f"{w}: output.text must be a string")
    if path == "retrieval":
        if ids is None:
            raise ArtifactError(f"{w}: a retrieval row needs output.ids")
        return QueryResult(case_id, ids, metrics, latency_ms=latency), truncated
    response = None
    if output is not None and (ids is not None or text is not None):
        if latency is None:
            # evalkit records every answered case's latency; none would read as 0 ms.
            raise ArtifactError(f"{w}: an answered case needs latency_ms (a number of ms)")
        response = TargetResponse(ids, text=text, latency_ms=latency, meta=meta)
    if response is None and error is None:
        raise ArtifactError(f"{w}: a row needs an output or an error")
    return CaseResult(case_id, response, metrics, error), truncated


# ------------------------------------------------------------------ the table (schema 3)

_LIST = frozenset({list})
_STR = frozenset({str})
_FLOAT = frozenset({float})
_NONE = type(None)
_DICT = frozenset({dict})
_BOOL = frozenset({bool})
_LIST_OR_NONE = frozenset({list, type(None)})
_STR_OR_NONE = frozenset({str, type(None)})
_FLOAT_OR_NONE = frozenset({float, type(None)})
_metrics_of = attrgetter("metrics")
# What a meta value may be without a depth test: nothing nests below it.
_LEAVES = frozenset({str, int, float, bool, type(None)})


def table_rows(
    rows: Sequence[QueryResult | CaseResult], truncated_ids: Collection[str], where: str
) -> tuple[list[list[Any]], bool]:
    """The schema-3 ``rows`` table of a run (one list of :data:`COLUMNS` cells a case),
    and whether it holds the run's own values: metrics that are dicts of finite floats (a
    NaN or an infinity makes their sum non-finite), and no output cut to the caps."""
    metric_dicts = list(map(_metrics_of, rows))
    exact = _DICT.issuperset(map(type, metric_dicts))
    if exact:
        values = list(chain.from_iterable(map(dict.values, metric_dicts)))
        exact = _FLOAT.issuperset(map(type, values)) and math.isfinite(sum(values))
    own = exact
    table: list[list[Any]] = []
    append = table.append
    for row, metrics in zip(rows, metric_dicts, strict=True):
        case_id = row.query_id
        if not exact:
            at = f"{where}: case {case_id!r}"
            metrics = {k: _finite(v, f"{at}, metric {k!r}") for k, v in metrics.items()}
        # A row read back from disk holds the already-capped output, so the cap alone
        # cannot tell it was cut; the flag read with it must survive a rewrite.
        cut = case_id in truncated_ids
        if isinstance(row, QueryResult):
            ids: Sequence[str] = row.retrieved
            if len(ids) > MAX_OUTPUT_IDS:
                ids, cut, own = ids[:MAX_OUTPUT_IDS], True, False
            append([case_id, metrics, ids, None, row.latency_ms, {}, None, cut])
            continue
        response = row.response
        if response is None:
            append([case_id, metrics, None, None, None, {}, row.error, cut])
            continue
        ids_kept, text = response._ids, response._text
        if ids_kept is not None and len(ids_kept) > MAX_OUTPUT_IDS:
            ids_kept, cut, own = ids_kept[:MAX_OUTPUT_IDS], True, False
        if text is not None and len(text) > MAX_OUTPUT_CHARS:
            text, cut, own = text[:MAX_OUTPUT_CHARS], True, False
        latency, meta = response.latency_ms, response.meta
        append([case_id, metrics, ids_kept, text, latency, meta, row.error, cut])
    return table, own


class NotQuick(Exception):
    """A table that :func:`read_table` was told to read only the quick way cannot be."""


def read_table(
    table: list[Any], path: RunPath, row_where: Callable[[int], str], *, quick_only: bool = False
) -> tuple[list[QueryResult | CaseResult], set[str]]:
    """The rows of a schema-3 ``rows`` table and the ids of those whose output was cut."""
    quick = _quick_table(table, path)
    if quick is not None:
        return quick
    if quick_only:
        raise NotQuick
    rows: list[QueryResult | CaseResult] = []
    truncated: set[str] = set()
    seen: set[str] = set()
    for index, cells in enumerate(table):
        row, cut = _careful_cells(cells, index, path, row_where)
        if row.query_id in seen:
            raise ArtifactError(f"{row_where(index)}: case {row.query_id!r} appears twice")
        seen.add(row.query_id)
        rows.append(row)
        if cut:
            truncated.add(row.query_id)
    return rows, truncated


def _careful_cells(
    cells: Any, index: int, path: RunPath, row_where: Callable[[int], str]
) -> tuple[QueryResult | CaseResult, bool]:
    where = row_where(index)
    if not isinstance(cells, list) or len(cells) != len(COLUMNS):
        got = (
            f"has {len(cells)} cells"
            if isinstance(cells, list)
            else f"is {_json_kind(cells)}, not an array"
        )
        raise ArtifactError(
            f"{where}: row {got}; each row is an array of the {len(COLUMNS)} columns "
            f"{', '.join(COLUMNS)}; the file was edited or cut short: regenerate it"
        )
    doc = dict(zip(COLUMNS, cells, strict=True))
    ids, text = doc.pop("ids"), doc.pop("text")
    output = {key: value for key, value in (("ids", ids), ("text", text)) if value is not None}
    doc["output"] = output or None
    return _careful_row(doc, index, path, where)


def _json_kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, str):
        return "text"
    return "null" if value is None else f"a {type(value).__name__}"


def _quick_table(
    table: list[Any], path: RunPath
) -> tuple[list[QueryResult | CaseResult], set[str]] | None:
    """The rows of a well-formed table, or ``None`` to take the careful way."""
    if not table:
        return [], set()
    if not _LIST.issuperset(map(type, table)):
        return None
    try:
        case_ids, metrics, ids, texts, latencies, metas, errors, cuts = zip(*table, strict=True)
    except ValueError:  # a row of another length, or all of them
        return None
    if not _STR.issuperset(map(type, case_ids)) or len(set(case_ids)) != len(case_ids):
        return None
    if not _DICT.issuperset(map(type, metrics)):
        return None
    values = list(chain.from_iterable(map(dict.values, metrics)))
    if not _FLOAT.issuperset(map(type, values)) or not _below_huge(values):
        return None  # (_below_huge refuses NaN and the infinities as well)
    id_kinds = set(map(type, ids))
    text_kinds = set(map(type, texts))
    latency_kinds = set(map(type, latencies))
    if not (id_kinds <= _LIST_OR_NONE and text_kinds <= _STR_OR_NONE):
        return None
    if not _STR.issuperset(map(type, chain.from_iterable(filter(None, ids)))):
        return None
    if not latency_kinds <= _FLOAT_OR_NONE:
        return None
    answered = list(filter(None, latencies)) if _NONE in latency_kinds else latencies
    if answered and not (min(answered) >= 0.0 and math.isfinite(sum(answered))):
        return None  # (0.0 and None need no test)
    if not _DICT.issuperset(map(type, metas)):
        return None
    leaves = list(chain.from_iterable(map(dict.values, metas)))
    kinds = list(map(type, leaves))
    if _LEAVES.issuperset(kinds):
        if float in kinds and not _below_huge(compress(leaves, map(is_, kinds, repeat(float)))):
            return None
    elif not all(_bounded.check_depth(m, depth=_ROW_META_DEPTH) for m in metas) or any(
        map(huge_float_in, metas)
    ):
        return None
    if not _STR_OR_NONE.issuperset(map(type, errors)) or not _BOOL.issuperset(map(type, cuts)):
        return None
    truncated = set(compress(case_ids, cuts))
    # The parsed dicts and lists are this row's alone: kept, not copied.
    if path == "retrieval":
        if _NONE in id_kinds:
            return None
        return list(map(QueryResult, case_ids, ids, metrics, latencies)), truncated
    unanswered = (
        _NONE in id_kinds
        and _NONE in text_kinds
        and any(map(and_, map(is_, ids, repeat(None)), map(is_, texts, repeat(None))))
    )
    if not unanswered:  # every case answered: a pass a column
        if _NONE in latency_kinds:
            return None
        responses = map(TargetResponse._checked, ids, texts, latencies, metas)
        return list(map(CaseResult, case_ids, responses, metrics, errors)), truncated
    rows: list[QueryResult | CaseResult] = []
    append = rows.append
    checked = TargetResponse._checked
    for case_id, metric_values, ranked, text, latency, meta, error, _ in table:
        if ranked is None and text is None:
            if error is None:
                return None
            append(CaseResult(case_id, None, metric_values, error))
        elif latency is None:
            return None
        else:
            append(CaseResult(case_id, checked(ranked, text, latency, meta), metric_values, error))
    return rows, truncated


# A float this large and whole may be orjson's reading of an integer past 64 bits, which
# json reads exactly (evalkit._spec.artifact_json): the careful way keeps json's value.
_HUGE = float(2**63)


def _below_huge(floats: Iterable[float]) -> bool:
    """``floats`` finite and of magnitudes summing to less than 2^63 (so each is under it;
    a run whose do not goes the careful way, which reads them as well)."""
    return sum(map(abs, floats)) < _HUGE


def huge_float_in(value: Any) -> bool:
    """Whether parsed JSON ``value`` holds a float of 2^63 or more (see :data:`_HUGE`)."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is float:
            if not abs(item) < _HUGE:
                return True
        elif kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
    return False


def cells_of_row_object(doc: Any, index: int, path: RunPath, where: str) -> list[Any]:
    """A schema-2 row object as schema-3 cells (the 2 -> 3 migration)."""
    cells = _row_cells(doc)
    if cells is None:
        _careful_row(doc, index, path, where)  # raises: it names what is wrong
        raise AssertionError("unreachable: the careful reader refuses what has no cells")
    return cells
