"""One registry for every metric name, on both evaluation paths."""

from __future__ import annotations

# 0.2.0's own tests read the tables below directly, so the built-ins fill them here
# (everywhere else the first use of a table does: _model/builtin_hook.py).
from evalkit._model import fill_builtins as _fill_builtins  # noqa: F401

# 0.2.0's own tests snapshot and reset the tables through these private names.
from evalkit._model.registry import _AGGREGATES as _AGGREGATES
from evalkit._model.registry import _LOADERS as _LOADERS
from evalkit._model.registry import _METRICS as _METRICS
from evalkit._model.registry import _POLARITY as _POLARITY
from evalkit._model.registry import (
    FULL_DEPTH,
    FULL_DEPTH_K,
    AggregateFn,
    CaseFn,
    CaseMetricFn,
    F,
    LoaderFn,
    MetricDef,
    MetricKind,
    Registered,
    RetrievalFamily,
    RetrievalFn,
    define,
    families,
    family_instance,
    get_aggregate,
    get_loader,
    get_metric,
    is_aggregate,
    isolated,
    known_names,
    loader_extensions,
    metric_instance,
    polarity,
    register_aggregate,
    register_concrete_family_metric,
    register_family,
    register_loader,
    register_metric,
    registered,
    resolve,
    resolve_query_metrics,
    source_text_fingerprint,
    split_spec,
)
from evalkit._model.registry import _reset_for_tests as _reset_for_tests
from evalkit.errors import RegistryError  # 0.2.0 raised it from here

__all__ = [
    "AggregateFn",
    "CaseFn",
    "CaseMetricFn",
    "F",
    "FULL_DEPTH",
    "FULL_DEPTH_K",
    "LoaderFn",
    "MetricDef",
    "MetricKind",
    "Registered",
    "RegistryError",
    "RetrievalFamily",
    "RetrievalFn",
    "define",
    "families",
    "family_instance",
    "get_aggregate",
    "get_loader",
    "get_metric",
    "is_aggregate",
    "isolated",
    "known_names",
    "loader_extensions",
    "metric_instance",
    "polarity",
    "register_aggregate",
    "register_concrete_family_metric",
    "register_family",
    "register_loader",
    "register_metric",
    "registered",
    "resolve",
    "resolve_query_metrics",
    "source_text_fingerprint",
    "split_spec",
]
