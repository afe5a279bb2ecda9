"""``metrics:`` entries in evalkit.yaml: a name, or a metric declared with its parameters."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import PlainSerializer, PlainValidator

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence


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

        kind = value.get("kind")
        if isinstance(kind, str) and _is_retrieval(kind):
            name, kind, params = _check_retrieval(value)
        else:
            name, kind, params = check_declaration(value)
        return DeclaredMetric(name, kind, params)
    raise ValueError(
        "a metric is a name, or a mapping with 'name', 'kind' and the kind's parameters, "
        f"got {type(value).__name__}"
    )


def _is_retrieval(kind: str) -> bool:
    """``recall@10``, or one of trec_eval's full-depth names (``map``, ``recip_rank``)."""
    from evalkit._model.registry import FULL_DEPTH

    return "@" in kind or kind in FULL_DEPTH


def _check_retrieval(entry: Mapping[str, Any]) -> tuple[str, str, dict[str, Any]]:
    """A ``{name, kind: family@k, relevance_level}`` entry, checked as far as it can be now."""
    from evalkit._model.registry import FULL_DEPTH, families, family_instance, split_spec
    from evalkit.errors import EvalkitError, MetricError

    name, kind = entry.get("name"), str(entry.get("kind"))
    if not isinstance(name, str) or not name.strip():
        raise MetricError(f"a declared metric needs a 'name' (text), got {name!r}")
    params = {k: v for k, v in entry.items() if k not in ("name", "kind")}
    try:
        if split_spec(kind)[0] in families() or kind in FULL_DEPTH:
            family_instance(name, kind, params)
    except EvalkitError as exc:
        raise MetricError(f"metric {name!r}: {exc}") from None
    return name, kind, params


def _dump(value: str) -> object:
    return value.declaration() if isinstance(value, DeclaredMetric) else str(value)


MetricEntry = Annotated[str, PlainValidator(_entry), PlainSerializer(_dump)]


def register_declared_metrics(
    entries: Sequence[str], resolve: Callable[[str], Path], where: Callable[[int], str]
) -> list[str]:
    """Build and register every declared entry; returns their names."""
    from evalkit._model.registry import define, family_instance
    from evalkit.errors import EvalkitError, MetricError
    from evalkit.metrics.answers import build_answer_metric, register_answer_metric

    names: list[str] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, DeclaredMetric):
            continue
        what = f"{where(index)}: metric {str(entry)!r}"
        if _is_retrieval(entry.kind):  # a retrieval metric with its relevance level
            try:
                define(family_instance(str(entry), entry.kind, entry.params))
            except EvalkitError as exc:
                raise MetricError(f"{what}: {exc}") from None
        else:
            params = dict(entry.params)
            for key in _PATH_PARAMS:
                if isinstance(params.get(key), str):
                    params[key] = str(resolve(params[key]))
            register_answer_metric(str(entry), build_answer_metric(entry.kind, params, what))
        names.append(str(entry))
    return names
