"""``metrics:`` entries in evalkit.yaml: a name, or a metric declared with its parameters.

    metrics:
      - exact_match
      - name: cites_source          # the name checks and reports use
        kind: regex_match           # the canonical metric (see metrics/answers.py)
        pattern: '\\[\\d+\\]'
        flags: i
      - name: valid_order
        kind: json_schema
        schema_path: schemas/order.json   # relative to evalkit.yaml

A declared entry is a :class:`DeclaredMetric`: a ``str`` (its name, so every
consumer of ``config.metrics`` keeps working) that also carries its kind and
parameters.  It is checked when the config is read (unknown kind, unknown
parameter, invalid pattern: ``evalkit.yaml:LINE``) and registered by
:func:`register_declared_metrics` before anything runs; the parameters are
part of the metric's identity, so runs declared differently are incomparable.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import PlainSerializer, PlainValidator

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["DeclaredMetric", "MetricEntry", "register_declared_metrics"]

# Parameters naming a file, resolved against the config's folder when registered.
_PATH_PARAMS = ("schema_path",)


class DeclaredMetric(str):
    """A metric name that also carries the ``kind`` and parameters it was declared with."""

    kind: str
    params: dict[str, Any]

    def __new__(cls, name: str, kind: str, params: Mapping[str, Any]) -> DeclaredMetric:
        made = super().__new__(cls, name)
        made.kind = kind
        made.params = dict(params)
        return made

    def declaration(self) -> dict[str, Any]:
        """The entry as written (what the config fingerprint hashes)."""
        return {"name": str(self), "kind": self.kind, **self.params}


def _entry(value: object) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        from evalkit.metrics.answers import check_declaration

        name, kind, params = check_declaration(value)
        return DeclaredMetric(name, kind, params)
    raise ValueError(
        "a metric is a name, or a mapping with 'name', 'kind' and the kind's parameters, "
        f"got {type(value).__name__}"
    )


def _dump(value: str) -> object:
    return value.declaration() if isinstance(value, DeclaredMetric) else str(value)


MetricEntry = Annotated[str, PlainValidator(_entry), PlainSerializer(_dump)]


def register_declared_metrics(
    entries: Sequence[str], resolve: Callable[[str], Path], where: str
) -> list[str]:
    """Build and register every declared entry; returns their names.

    ``resolve`` maps a path parameter to a file (relative to the config);
    ``where`` (the config path) prefixes any error.
    """
    from evalkit.metrics.answers import build_answer_metric, register_answer_metric

    names: list[str] = []
    for entry in entries:
        if not isinstance(entry, DeclaredMetric):
            continue
        params = dict(entry.params)
        for key in _PATH_PARAMS:
            if isinstance(params.get(key), str):
                params[key] = str(resolve(params[key]))
        metric = build_answer_metric(entry.kind, params, f"{where}: metric {str(entry)!r}")
        register_answer_metric(str(entry), metric)
        names.append(str(entry))
    return names
