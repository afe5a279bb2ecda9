"""Pair two runs by case id and pull out what the statistics need, failing loudly."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, TypeAlias

import numpy as np

from evalkit._model.registry import MetricDef, get_metric
from evalkit._model.results import Row, RunResult
from evalkit._util.arrays import FloatArray
from evalkit.errors import (
    ComparisonError,
    MetricError,
    MissingMetricError,
    UnknownMetricError,
)
from evalkit.stats.aggregates import (
    GenericAggregate,
    ItemCountAggregate,
    NearestRankAggregate,
    ResampledAggregate,
)
from evalkit.stats.outcome import Kind

RunLike: TypeAlias = RunResult[Any] | Sequence[Row]


_SHOWN: Final = 5
_PERCENTILE_AGGREGATES: Final = {"latency_p50": 50.0, "latency_p95": 95.0, "latency_p99": 99.0}


def _shown(ids: Sequence[str]) -> str:
    head = ", ".join(ids[:_SHOWN])
    return head + (f" (+{len(ids) - _SHOWN} more)" if len(ids) > _SHOWN else "")


@dataclass(frozen=True)
class Paired:
    """Both runs' rows for the same cases, in sorted id order."""

    ids: list[str]
    rows_a: list[Row]
    rows_b: list[Row]
    name_a: str
    name_b: str

    @property
    def n(self) -> int:
        return len(self.ids)


@dataclass(frozen=True)
class CaseValues:
    """A per-case metric on both sides (or latency for ``latency_mean``)."""

    name: str
    a: FloatArray
    b: FloatArray
    kind: Kind  # "aggregate" for an aggregate that is the mean of per-case values


def _name_and_rows(run: RunLike, default: str) -> tuple[str, list[Row]]:
    if isinstance(run, RunResult):
        return run.name, list(run.per_query)
    if not isinstance(run, Sequence) or isinstance(run, str | bytes):  # type: ignore[unreachable]
        raise ComparisonError(
            f"expected a RunResult or a sequence of rows with .query_id and .metrics, "
            f"got {type(run).__name__}"
        )
    return default, list(run)


def _by_id(rows: list[Row], name: str) -> dict[str, Row]:
    by_id = dict(zip([row.query_id for row in rows], rows, strict=True))
    seen: set[str] = set()
    for row in rows if len(by_id) < len(rows) else ():  # a duplicate: name the first
        if row.query_id in seen:
            raise ComparisonError(
                f"run {name!r}: case id {row.query_id!r} appears more than once; pairing by "
                "id needs unique ids (deduplicate the rows)"
            )
        seen.add(row.query_id)
    return by_id


@dataclass(frozen=True)
class CaseMatch:
    """Which cases two runs share, and why the others were left out."""

    ids: tuple[str, ...]
    rows_a: dict[str, Row]
    rows_b: dict[str, Row]
    only_a: tuple[str, ...] = ()
    only_b: tuple[str, ...] = ()
    failed_a: tuple[str, ...] = ()
    failed_b: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()


def match_cases(
    rows_a: Sequence[Row],
    rows_b: Sequence[Row],
    names: tuple[str, str],
    *,
    drop_failed: bool = False,
    changed: Sequence[str] = (),
) -> CaseMatch:
    """Pair rows by case id: the one pairing rule of ``paired_bootstrap``, ``compare``, the gate."""
    name_a, name_b = names
    by_a = _by_id(list(rows_a), name_a)
    by_b = _by_id(list(rows_b), name_b)
    skip = set(changed)
    failed_a = tuple(i for i, r in by_a.items() if r.error is not None) if drop_failed else ()
    failed_b = tuple(i for i, r in by_b.items() if r.error is not None) if drop_failed else ()
    bad = {*failed_a, *failed_b}
    # the same cases, none failed or changed: one C-level comparison of the id sets (#27)
    same = by_a.keys() == by_b.keys()
    if same and not skip and not bad:
        ids = tuple(by_a)
    else:
        ids = tuple(i for i in by_a if i in by_b and i not in skip and i not in bad)
    return CaseMatch(
        ids=ids,
        rows_a=by_a,
        rows_b=by_b,
        only_a=() if same else tuple(i for i in by_a if i not in by_b),
        only_b=() if same else tuple(i for i in by_b if i not in by_a),
        failed_a=failed_a,
        failed_b=tuple(i for i in failed_b if i not in set_a)
        if (set_a := set(failed_a))
        else failed_b,
        changed=tuple(i for i in by_a if i in by_b and i in skip and i not in bad) if skip else (),
    )


def pair_runs(a: RunLike, b: RunLike) -> Paired:
    """Pair the rows of ``a`` and ``b`` by case id; both must cover the same cases."""
    name_a, rows_a = _name_and_rows(a, "a")
    name_b, rows_b = _name_and_rows(b, "b")
    for name, rows in ((name_a, rows_a), (name_b, rows_b)):
        if not rows:
            raise ComparisonError(
                f"run {name!r} has no rows (it is empty): there is nothing to compare (did every "
                "case fail to run, or was the wrong file loaded?)"
            )
    match = match_cases(rows_a, rows_b, (name_a, name_b))
    if match.only_a or match.only_b:
        only_a = sorted(match.only_a)
        only_b = sorted(match.only_b)
        parts = []
        if only_a:
            parts.append(f"{len(only_a)} only in {name_a!r}: {_shown(only_a)}")
        if only_b:
            parts.append(f"{len(only_b)} only in {name_b!r}: {_shown(only_b)}")
        raise ComparisonError(
            f"runs {name_a!r} and {name_b!r} cover different cases ({'; '.join(parts)}); "
            "a paired comparison needs the same cases on both sides: rerun on one golden "
            "set or drop those cases from both runs"
        )
    ids = sorted(match.ids)  # the statistics resample the cases in sorted id order
    paired = Paired(
        ids, [match.rows_a[i] for i in ids], [match.rows_b[i] for i in ids], name_a, name_b
    )
    if paired.n < 2:
        raise ComparisonError(
            f"runs {name_a!r} and {name_b!r} share only {paired.n} case ({_shown(paired.ids)}): a "
            "single case cannot separate a change from noise; gate it with a threshold check"
        )
    return paired


def _number(value: object, metric: str, case_id: str, run: str) -> float:
    if not isinstance(value, numbers.Real):
        raise MetricError(
            f"run {run!r}: metric {metric!r} on case {case_id!r} is {value!r} "
            f"({type(value).__name__}), not a number"
        )
    out = float(value)
    if not math.isfinite(out):
        raise MetricError(
            f"run {run!r}: metric {metric!r} is {out} on case {case_id!r}; a non-finite "
            "score cannot be compared (fix the metric or drop the case from both runs)"
        )
    return out


def _case_values(paired: Paired, metric: str) -> CaseValues:
    sides = ((paired.name_a, paired.rows_a), (paired.name_b, paired.rows_b))
    arrays: list[FloatArray] = []
    for run, rows in sides:
        missing = [row.query_id for row in rows if metric not in row.metrics]
        if len(missing) == len(rows):
            computed = dict.fromkeys(name for row in rows for name in row.metrics)
            raise MissingMetricError(
                f"metric {metric!r} was not computed for run {run!r} (computed: "
                f"{', '.join(computed) or 'none'})"
            )
        if missing:
            raise MetricError(
                f"run {run!r}: metric {metric!r} is missing on {len(missing)} of {len(rows)} "
                f"case(s): {_shown(missing)} (a failed case is never scored as zero: fix "
                "those cases or drop them from both runs)"
            )
        values = [row.metrics[metric] for row in rows]
        array = np.array(values, dtype=np.float64) if _FLOAT.issuperset(map(type, values)) else None
        if array is None or not np.isfinite(array).all():
            # anything but finite floats goes case by case, which names the defect
            array = np.array(
                [
                    _number(v, metric, row.query_id, run)
                    for v, row in zip(values, rows, strict=True)
                ],
                dtype=np.float64,
            )
        arrays.append(array)
    return CaseValues(metric, arrays[0], arrays[1], "case")


_FLOAT = frozenset({float})


def _latencies(rows: list[Row]) -> FloatArray | None:
    """Every row's latency, or ``None`` when a case failed (the generic path handles it)."""
    values = [row.response.latency_ms for row in rows if row.response is not None]
    out = np.array(values, dtype=np.float64)
    return out if len(values) == len(rows) and np.all(np.isfinite(out)) else None


def _item_sets(rows: list[Row], k: int | None) -> list[set[str]] | None:
    """Each row's deduplicated shown items (the first ``k``), or ``None`` when a case failed."""
    out = [set(row.response.ranked_ids[:k]) for row in rows if row.response is not None]
    return out if len(out) == len(rows) else None


def _item_aggregate(paired: Paired, defn: MetricDef) -> ItemCountAggregate | None:
    base, _, k_text = defn.name.partition("@")
    if (
        not defn.builtin
        or base not in ("max_item_share", "entropy")
        or (k_text and base == "entropy")
    ):
        return None
    k = int(k_text) if k_text else None
    sets_a, sets_b = _item_sets(paired.rows_a, k), _item_sets(paired.rows_b, k)
    if sets_a is None or sets_b is None:
        return None
    values = (float(defn.fn(paired.rows_a)), float(defn.fn(paired.rows_b)))
    statistic = "share" if base == "max_item_share" else "entropy"
    # Which cases listed anything at all: max_item_share's denominator.
    shown_a, shown_b = (
        [bool(row.response and row.response.ranked_ids) for row in rows]
        for rows in (paired.rows_a, paired.rows_b)
    )
    return ItemCountAggregate(defn.name, statistic, sets_a, sets_b, values, (shown_a, shown_b))


def _aggregate(paired: Paired, defn: MetricDef) -> CaseValues | ResampledAggregate:
    items = _item_aggregate(paired, defn)
    if items is not None:
        return items
    if defn.builtin and (defn.name == "latency_mean" or defn.name in _PERCENTILE_AGGREGATES):
        lat_a, lat_b = _latencies(paired.rows_a), _latencies(paired.rows_b)
        if lat_a is not None and lat_b is not None:
            if defn.name == "latency_mean":
                return CaseValues(defn.name, lat_a, lat_b, "aggregate")
            p = _PERCENTILE_AGGREGATES[defn.name]
            return NearestRankAggregate(defn.name, p, lat_a, lat_b)
    return GenericAggregate(
        defn.name, defn.fn, paired.rows_a, paired.rows_b, (paired.name_a, paired.name_b)
    )


def registered_polarity(metric: str) -> bool | None:
    """The registered direction of ``metric``, or ``None`` when it has none or is unknown."""
    try:
        return get_metric(metric).higher_is_better
    except (UnknownMetricError, MetricError):
        return None


def metric_data(paired: Paired, metric: str) -> CaseValues | ResampledAggregate:
    """Per-case values when the rows carry ``metric``; else the registered aggregate."""
    if not isinstance(metric, str) or not metric:
        raise MetricError(f"metric must be a non-empty string, got {metric!r}")
    on_rows = any(metric in row.metrics for row in (*paired.rows_a, *paired.rows_b))
    if not on_rows:
        try:
            defn = get_metric(metric)
        except UnknownMetricError:
            defn = None
        if defn is not None and defn.kind == "aggregate":
            return _aggregate(paired, defn)
    return _case_values(paired, metric)
