"""A metric's identity: family + parameters -> canonical parameters, name and fingerprint."""

from __future__ import annotations

import inspect
import json
import math
from collections.abc import Callable, Mapping
from typing import Any, TypeAlias

from evalkit.errors import MetricError

#: A parameter value: what a config file can hold and JSON can round-trip.
ParamValue: TypeAlias = str | int | float | bool | tuple["ParamValue", ...] | None
#: Canonical parameters: sorted (name, value) pairs, defaults left out.
Params: TypeAlias = tuple[tuple[str, ParamValue], ...]


def _freeze(metric: str, key: str, value: object) -> ParamValue:
    if value is None or isinstance(value, str | bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise MetricError(f"metric {metric!r}: parameter {key!r} must be finite, got {value}")
        return value
    if isinstance(value, list | tuple):
        return tuple(_freeze(metric, key, v) for v in value)
    raise MetricError(
        f"metric {metric!r}: parameter {key!r} must be a string, number, boolean or a list "
        f"of those, got {type(value).__name__}"
    )


def signature_parameters(fn: Callable[..., Any]) -> dict[str, ParamValue]:
    """Keyword-only parameters of ``fn`` that have a default: the values it can be tuned by."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}
    out: dict[str, ParamValue] = {}
    for p in signature.parameters.values():
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is not inspect.Parameter.empty:
            out[p.name] = _freeze(getattr(fn, "__name__", "?"), p.name, p.default)
    return out


def canonical_params(
    metric: str, given: Mapping[str, object], declared: Mapping[str, ParamValue]
) -> Params:
    """Check ``given`` against the ``declared`` defaults; drop defaults; sort by name."""
    unknown = sorted(set(given) - set(declared))
    if unknown:
        allowed = ", ".join(sorted(declared)) or "none"
        raise MetricError(
            f"metric {metric!r} has no parameter {unknown[0]!r} (its parameters: {allowed})"
        )
    out = []
    for key in sorted(given):
        value = _freeze(metric, key, given[key])
        if value != declared[key] or type(value) is not type(declared[key]):
            out.append((key, value))
    return tuple(out)


def params_json(params: Params) -> str:
    """The canonical text a fingerprint hashes (stable across Python versions)."""
    return json.dumps(dict(params), sort_keys=True, separators=(",", ":"))


def describe_params(params: Params) -> str:
    """``relevance_level=2, pattern='x'``; ``default parameters`` for none."""
    if not params:
        return "default parameters"
    return ", ".join(f"{k}={json.dumps(v)}" for k, v in params)
