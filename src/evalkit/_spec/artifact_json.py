"""The artefact's rows through orjson, where it gives exactly what :mod:`json` would."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Sequence
from functools import partial
from io import SEEK_CUR
from itertools import chain, compress, repeat
from operator import attrgetter, is_
from typing import Any, BinaryIO

import orjson

from evalkit._model.results import CaseResult, QueryResult, TargetResponse
from evalkit._spec.artifact_rows import MAX_OUTPUT_CHARS, MAX_OUTPUT_IDS, exact_metric_dicts
from evalkit._util.bounded import MAX_DEPTH

# Between two rows: each row on a line of its own, indented under `"rows": [`.
SEPARATOR = b",\n  "


def _refuse(_value: object) -> object:
    raise TypeError("not a JSON type")


# Subclasses, dataclasses and datetimes go to ``default`` (which refuses them) instead
# of being written the way orjson would and json would not.
_dumps = partial(
    orjson.dumps,
    default=_refuse,
    option=orjson.OPT_PASSTHROUGH_SUBCLASS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME,
)

_NONE = type(None)
_STR = frozenset({str})
_DICT = frozenset({dict})
_STR_OR_NONE = frozenset({str, _NONE})
_FLOAT_OR_NONE = frozenset({float, _NONE})
_NUMBER_OR_NONE = frozenset({float, int, _NONE})
_SEQUENCES = frozenset({list, tuple})
_SCALARS = frozenset({str, int, float, bool, _NONE})

_query_id = attrgetter("query_id")
_metrics = attrgetter("metrics")
_response = attrgetter("response")
_error = attrgetter("error")
_retrieved = attrgetter("retrieved")
_latency = attrgetter("latency_ms")
_ids = attrgetter("_ids")
_text = attrgetter("_text")
_meta = attrgetter("meta")


class _NoResponse:
    """The cells of a failed case without a response (read, never changed)."""

    __slots__ = ()
    _ids = None
    _text = None
    latency_ms = None
    meta: dict[str, Any] = {}  # noqa: RUF012 - shared, only ever encoded


_NO_RESPONSE = _NoResponse()


def _finite_floats(values: list[Any]) -> bool:
    """Every ``float`` among ``values`` finite (the others are not looked at)."""
    floats = compress(values, map(is_, map(type, values), repeat(float)))
    return all(map(math.isfinite, floats))


def _plain(value: Any) -> bool:
    """Whether ``value`` holds only exact JSON types and finite floats, nested at most
    :data:`~evalkit._util.bounded.MAX_DEPTH` levels (a value that refers to itself
    is no deeper to json, which then fails as it always did)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is float:
            if not math.isfinite(item):
                return False
        elif kind is dict or kind is list or kind is tuple:
            if depth >= MAX_DEPTH:
                return False
            children = item.values() if kind is dict else item
            stack.extend(zip(children, repeat(depth + 1)))
        elif kind not in _SCALARS:
            return False
    return True


def _plain_metas(metas: list[Any]) -> bool:
    if not _DICT.issuperset(map(type, metas)):
        return False
    values = list(chain.from_iterable(map(dict.values, metas)))
    if _SCALARS.issuperset(map(type, values)):
        return _finite_floats(values)
    return all(map(_plain, values))


def _longest(values: Iterable[Any]) -> int:
    return max(map(len, filter(None, values)), default=0)


def write_rows(
    out: BinaryIO, rows: Sequence[QueryResult | CaseResult], truncated_ids: Collection[str]
) -> bool:
    """Write each row's cells (:func:`evalkit._spec.artifact_rows.table_rows`) to ``out``
    as JSON through orjson, :data:`SEPARATOR` between two; False (and nothing
    written) when the run holds anything that orjson would not write as json does, or an
    output past the cap: the caller then takes json's way.
    """
    if not rows:
        return True
    kinds = set(map(type, rows))
    case_ids = list(map(_query_id, rows))
    metrics = list(map(_metrics, rows))
    if not _STR.issuperset(map(type, case_ids)) or not exact_metric_dicts(metrics):
        return False
    flagged = truncated_ids if isinstance(truncated_ids, frozenset | set) else set(truncated_ids)
    cuts = list(map(flagged.__contains__, case_ids))
    cells: Iterable[tuple[Any, ...]]
    if kinds == {CaseResult}:
        responses = list(map(_response, rows))
        answered = set(map(type, responses))
        if not answered <= {TargetResponse, _NONE}:
            return False
        if _NONE in answered:
            responses = [_NO_RESPONSE if r is None else r for r in responses]
        ids = list(map(_ids, responses))  # tuples of exact str (TargetResponse makes them)
        texts = list(map(_text, responses))
        latencies = list(map(_latency, responses))
        metas = list(map(_meta, responses))
        errors = list(map(_error, rows))
        if not (
            _STR_OR_NONE.issuperset(map(type, texts))
            and _STR_OR_NONE.issuperset(map(type, errors))
            and _FLOAT_OR_NONE.issuperset(map(type, latencies))
            and _finite_floats(latencies)
            and _longest(ids) <= MAX_OUTPUT_IDS
            and _longest(texts) <= MAX_OUTPUT_CHARS
            and _plain_metas(metas)
        ):
            return False
        cells = zip(case_ids, metrics, ids, texts, latencies, metas, errors, cuts, strict=True)
    elif kinds == {QueryResult}:
        ranked = list(map(_retrieved, rows))
        latencies = list(map(_latency, rows))
        if not (
            _SEQUENCES.issuperset(map(type, ranked))
            and _longest(ranked) <= MAX_OUTPUT_IDS
            and _STR.issuperset(map(type, chain.from_iterable(ranked)))
            and _NUMBER_OR_NONE.issuperset(map(type, latencies))
            and _finite_floats(latencies)
        ):
            return False
        none: repeat[None] = repeat(None)
        empty: repeat[dict[str, Any]] = repeat({})
        cells = zip(case_ids, metrics, ranked, none, latencies, empty, none, cuts, strict=False)
    else:
        return False
    start = out.tell()
    try:
        out.writelines(chain.from_iterable(zip(map(_dumps, cells), repeat(SEPARATOR))))
    except TypeError:  # orjson.JSONEncodeError is one: json's way names what is wrong
        out.seek(start)
        out.truncate()
        return False
    out.seek(-len(SEPARATOR), SEEK_CUR)
    out.truncate()
    return True


def loads(raw: bytes) -> Any:
    """The document ``raw`` holds, or ``None`` when orjson refuses it (json then says why)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
