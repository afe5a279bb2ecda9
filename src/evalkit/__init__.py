"""evalkit: per-case eval results and paired significance for search, RAG and LLM systems.

The distribution is ``paired-evalkit``; the import name is ``evalkit``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit.checks import ChecksFile, CheckSpec, load_checks, load_checks_file
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
from evalkit.execute import evaluate
from evalkit.golden_loaders import load_goldens
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
from evalkit.targets.callable import CallableTarget

if TYPE_CHECKING:
    from evalkit.significance import BootstrapResult, paired_bootstrap
    from evalkit.targets.http import HttpTarget

# Loaded on first use so `import evalkit` (and `evalkit --help`) does not pay for
# numpy and httpx in programs that never need them.
_LAZY = {
    "BootstrapResult": "evalkit.significance",
    "HttpTarget": "evalkit.targets.http",
    "paired_bootstrap": "evalkit.significance",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'evalkit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__version__ = "0.1.0"

__all__ = [
    "ArtifactError",
    "BootstrapResult",
    "CallableTarget",
    "CaseResult",
    "CheckError",
    "CheckSpec",
    "ChecksFile",
    "ComparisonError",
    "ConfigError",
    "DEFAULT_METRICS",
    "EvalkitError",
    "GoldenCase",
    "GoldenError",
    "GoldenSet",
    "HttpTarget",
    "InputError",
    "JudgeError",
    "METRICS",
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
    "evaluate",
    "load_checks",
    "load_checks_file",
    "load_goldens",
    "paired_bootstrap",
    "polarity",
    "register_aggregate",
    "register_loader",
    "register_metric",
    "registered",
    "run",
]
