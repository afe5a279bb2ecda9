"""An artefact's rows held to what the artefact itself claims."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from evalkit._model.registry import Bounds, bounds_text, metric_instance
from evalkit.errors import ArtifactError, EvalkitError

if TYPE_CHECKING:
    from evalkit._model.results import CaseResult, QueryResult
    from evalkit._spec.artifact import MetricInfo


def declared_bounds(metrics: Mapping[str, MetricInfo]) -> dict[str, Bounds]:
    """``{name: (low, high)}`` for the stored metrics whose definition here is the one
    that scored them (same fingerprint) and declares a range."""
    out: dict[str, Bounds] = {}
    for name, info in metrics.items():
        if info.kind != "case":
            continue
        try:
            defn = metric_instance(name, dict(info.params))
        except EvalkitError:  # not registered in this process: nothing to hold it to
            continue
        if defn.bounds is not None and defn.fingerprint == info.fingerprint:
            out[name] = defn.bounds
    return out


def check_rows(
    rows: Sequence[QueryResult | CaseResult],
    metrics: Mapping[str, MetricInfo],
    cases: Mapping[str, str] | None,
    row_where: Callable[[int], str],
) -> None:
    """Raise one :class:`ArtifactError` for the first row that breaks a claim."""
    ranges = declared_bounds(metrics)
    for index, row in enumerate(rows):
        if cases is not None and row.query_id not in cases:
            raise ArtifactError(
                f"{row_where(index)}: row {row.query_id!r} is not among the {len(cases)} "
                "case(s) of this artefact's own goldens.cases; the file was edited: re-run it"
            )
        values = row.metrics
        for name, (low, high) in ranges.items():
            value = values.get(name)
            if value is not None and not low <= value <= high:
                raise ArtifactError(
                    f"{row_where(index)}: row {row.query_id!r}, metric {name!r} = {value!r} "
                    f"is outside its range {bounds_text((low, high))}; no run of the metric "
                    "writes that, so the file was edited: re-run it"
                )
