"""evalkit: per-case eval results and paired significance for search, RAG and LLM systems.

The distribution is ``paired-evalkit``; the import name is ``evalkit``.
"""

from __future__ import annotations

from evalkit.errors import (
    ArtifactError,
    CheckError,
    ComparisonError,
    ConfigError,
    EvalkitError,
    GoldenError,
    InputError,
    JudgeError,
    MetricError,
    RegistryError,
    RuntimeFailure,
    TargetError,
    UnknownMetricError,
)
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.metrics import builtin as _builtin  # noqa: F401  (registers the built-ins)
from evalkit.registry import (
    polarity,
    register_aggregate,
    register_loader,
    register_metric,
    registered,
)
from evalkit.results import CaseResult, QueryResult, RunResult
from evalkit.runner import DEFAULT_METRICS, METRICS, run
from evalkit.targets.base import Target, TargetResponse

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_METRICS",
    "METRICS",
    "ArtifactError",
    "CaseResult",
    "CheckError",
    "ComparisonError",
    "ConfigError",
    "EvalkitError",
    "GoldenCase",
    "GoldenError",
    "GoldenSet",
    "InputError",
    "JudgeError",
    "MetricError",
    "QueryResult",
    "RegistryError",
    "RunResult",
    "RuntimeFailure",
    "Target",
    "TargetError",
    "TargetResponse",
    "UnknownMetricError",
    "__version__",
    "polarity",
    "register_aggregate",
    "register_loader",
    "register_metric",
    "registered",
    "run",
]
