"""Per-case rows out of evalkit: CSV files and (optionally) pandas DataFrames."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from evalkit._model.results import CaseResult, QueryResult, RunResult
from evalkit._util.atomic import write_text_atomic
from evalkit.errors import ConfigError, MetricError

if TYPE_CHECKING:
    import pandas as pd

Rows = RunResult[QueryResult] | RunResult[CaseResult] | Iterable[QueryResult | CaseResult]

FIXED = ("query_id", "latency_ms", "error", "output")


def _rows(result: Rows) -> list[QueryResult | CaseResult]:
    if isinstance(result, RunResult):
        return list(result.per_query)
    rows = list(result)
    for row in rows:
        if not isinstance(row, QueryResult | CaseResult):
            raise MetricError(
                f"export: expected QueryResult or CaseResult rows, got {type(row).__name__}"
            )
    return rows


def _metric_columns(
    rows: Sequence[QueryResult | CaseResult], metrics: Sequence[str] | None
) -> list[str]:
    present: dict[str, None] = {}
    for row in rows:
        for name in row.metrics:
            present.setdefault(name, None)
    if metrics is None:
        return list(present)
    if isinstance(metrics, str):
        raise MetricError(f"export: metrics must be a list of names, e.g. [{metrics!r}]")
    missing = [m for m in metrics if m not in present]
    if missing:
        raise MetricError(
            f"export: metric(s) {', '.join(map(repr, missing))} not computed on any row "
            f"(computed: {', '.join(present) or 'none'})"
        )
    return list(metrics)


def _meta_keys(rows: Sequence[QueryResult | CaseResult]) -> list[str]:
    keys: dict[str, None] = {}
    for row in rows:
        if isinstance(row, CaseResult) and row.response is not None:
            for key in row.response.meta:
                keys.setdefault(str(key), None)
    return list(keys)


def _cell(value: Any) -> Any:
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def _output(row: QueryResult | CaseResult) -> str | None:
    response = row.response
    if response is None:
        return None
    if response.has_ids:
        return json.dumps(response.ranked_ids, ensure_ascii=False)
    return json.dumps(response.text, ensure_ascii=False)


def rows_to_records(
    result: Rows, *, metrics: Sequence[str] | None = None, include_output: bool = False
) -> list[dict[str, Any]]:
    """One ``dict`` per case, keys in column order (see the module docstring).

    ``metrics`` picks and orders the metric columns (default: every metric
    computed on any row, first-seen order); naming one no row has raises.
    A missing value is ``None``; a NaN or infinite value raises, naming the case.
    """
    return _table(result, metrics, include_output)[1]


def _table(
    result: Rows, metrics: Sequence[str] | None, include_output: bool
) -> tuple[list[str], list[dict[str, Any]]]:
    """The header and one record per case (:func:`rows_to_records`)."""
    rows = _rows(result)
    header = _header(rows, metrics, include_output)
    columns = header[1 : header.index("latency_ms")]
    meta_keys = [c.removeprefix("meta.") for c in header if c.startswith("meta.")]
    records: list[dict[str, Any]] = []
    for row in rows:
        record: dict[str, Any] = {"query_id": row.query_id}
        for name in columns:
            value = row.metrics.get(name)
            if value is not None and not math.isfinite(value):
                raise MetricError(
                    f"export: case {row.query_id!r}, metric {name!r} is {value!r}; "
                    "only finite values are exported (fix the metric)"
                )
            record[name] = None if value is None else float(value)
        if isinstance(row, QueryResult):
            record["latency_ms"] = row.latency_ms
            record["error"] = None
            meta: dict[str, Any] = {}
        else:
            record["latency_ms"] = row.response.latency_ms if row.response is not None else None
            record["error"] = row.error
            meta = dict(row.response.meta) if row.response is not None else {}
        for key in meta_keys:
            record[f"meta.{key}"] = _cell(meta.get(key))
        if include_output:
            record["output"] = _output(row)
        records.append(record)
    return header, records


def _csv_cell(value: Any) -> Any:
    """Empty for a missing value; a float as Python writes it back exactly."""
    if value is None:
        return ""
    # float(): a numpy float64 is a float whose repr is "np.float64(1.5)"
    return repr(float(value)) if isinstance(value, float) else value


def _header(
    rows: Sequence[QueryResult | CaseResult], metrics: Sequence[str] | None, include_output: bool
) -> list[str]:
    columns = _metric_columns(rows, metrics)
    clash = [m for m in columns if m in FIXED or m.startswith("meta.")]
    if clash:
        raise MetricError(
            f"export: metric name {clash[0]!r} collides with a fixed column; rename the metric"
        )
    header = ["query_id", *columns, "latency_ms", "error"]
    header += [f"meta.{key}" for key in _meta_keys(rows)]
    if include_output:
        header.append("output")
    return header


def write_csv(
    result: Rows,
    target: str | os.PathLike[str] | TextIO,
    *,
    metrics: Sequence[str] | None = None,
    include_output: bool = False,
) -> Path | None:
    """Write the per-case rows as CSV (UTF-8) to a path (atomically) or an open text file.

    Returns the path written, or ``None`` for a file object.  Metric names are
    column names; a metric named like a fixed column (``error``...) is refused
    rather than silently shadowed.
    """
    header, records = _table(result, metrics, include_output)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    for record in records:
        writer.writerow([_csv_cell(record[c]) for c in header])
    if not isinstance(target, str | os.PathLike):
        target.write(buffer.getvalue())
        return None
    return write_text_atomic(target, buffer.getvalue())


def to_dataframe(
    result: Rows, *, metrics: Sequence[str] | None = None, include_output: bool = False
) -> pd.DataFrame:
    """The per-case rows as a pandas DataFrame (pandas is an optional dependency).

    Metric columns are float64 with NaN where a case failed; ``error`` says why.
    """
    try:
        import pandas as pd
    except ImportError:
        raise ConfigError(
            "to_dataframe needs pandas, which is optional: install it (pip install pandas) "
            "or use write_csv"
        ) from None
    header, records = _table(result, metrics, include_output)
    frame = pd.DataFrame.from_records(records, columns=header)
    for name in header[1 : header.index("latency_ms") + 1]:
        frame[name] = frame[name].astype("float64")
    return frame
