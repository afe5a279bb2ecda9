"""The artefact's rows through orjson, where it gives exactly what :mod:`json` would."""

from __future__ import annotations

import math
from functools import partial
from io import SEEK_CUR
from itertools import chain, compress, repeat
from operator import is_
from typing import Any, BinaryIO

import orjson

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
_NUMBER_OR_NONE = frozenset({float, int, _NONE})
_SEQUENCES_OR_NONE = frozenset({list, tuple, _NONE})
_SCALARS = frozenset({str, int, float, bool, _NONE})


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


def write_rows(out: BinaryIO, table: list[list[Any]]) -> bool:
    """Write the rows of ``table`` (:func:`evalkit._spec.artifact_rows.table_rows`) to
    ``out`` through orjson, :data:`SEPARATOR` between two; False (and nothing written)
    when they hold anything that orjson would not write as json does: the caller then
    takes json's way."""
    case_ids, _, ids, _, latencies, metas, errors, _ = zip(*table, strict=True)
    if not (
        _STR.issuperset(map(type, case_ids))
        and _STR_OR_NONE.issuperset(map(type, errors))
        and _SEQUENCES_OR_NONE.issuperset(map(type, ids))
        and _STR.issuperset(map(type, chain.from_iterable(filter(None, ids))))
        and _NUMBER_OR_NONE.issuperset(map(type, latencies))
        and _finite_floats(list(latencies))
        and _plain_metas(list(metas))
    ):
        return False
    start = out.tell()
    try:
        out.writelines(chain.from_iterable(zip(map(_dumps, table), repeat(SEPARATOR))))
    except TypeError:  # orjson.JSONEncodeError is one: json's way names what is wrong
        out.seek(start)
        out.truncate()
        return False
    out.seek(-len(SEPARATOR), SEEK_CUR)
    out.truncate()
    return True
