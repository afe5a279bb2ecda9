"""evalkit: per-case eval results and paired significance for search, RAG and LLM systems.

The distribution is ``paired-evalkit``; the import name is ``evalkit``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit._version import __version__
from evalkit.checks import ChecksFile, CheckSpec, load_checks, load_checks_file
from evalkit.corpus import Doc, Query, load_corpus, load_qrels, load_queries
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
from evalkit.exit_codes import ExitCode
from evalkit.golden_cases import GoldenCase, GoldenSet
from evalkit.golden_loaders import load_goldens
from evalkit.metrics import builtin as _builtin  # noqa: F401  (registers the built-ins)
from evalkit.metrics.core import ndcg_at_k, recall_at_k
from evalkit.registry import (
    AggregateFn,
    CaseMetricFn,
    LoaderFn,
    polarity,
    register_aggregate,
    register_loader,
    register_metric,
    registered,
)
from evalkit.results import CaseResult, QueryResult, RunResult, TargetResponse
from evalkit.runner import DEFAULT_METRICS, METRICS, MetricFn, Retriever, run
from evalkit.targets.base import Target
from evalkit.targets.callable import CallableTarget

if TYPE_CHECKING:
    from evalkit.artifact import RunArtifact, read_artifact, write_artifact
    from evalkit.checks import compare
    from evalkit.client_load import ClientSaturationWarning
    from evalkit.drift import Reference
    from evalkit.export import to_dataframe, write_csv
    from evalkit.gate import GateReport, evaluate_gate
    from evalkit.significance import (
        BootstrapResult,
        mde,
        paired_bootstrap,
        paired_bootstrap_many,
        power,
    )
    from evalkit.targets.http import HttpTarget
    from evalkit.trec import read_qrels, read_run, score_trec_run, write_qrels, write_run

# Loaded on first use so `import evalkit` (and `evalkit --help`) does not pay for
# numpy and httpx in programs that never need them.
_LAZY = {
    "BootstrapResult": "evalkit.significance",
    "ClientSaturationWarning": "evalkit.client_load",
    "GateReport": "evalkit.gate",
    "HttpTarget": "evalkit.targets.http",
    # 0.2.0's threshold comparison.  Lazy because ``evalkit.compare`` is also a
    # module (``evalkit compare``); that module is callable and does the same,
    # so ``from evalkit import compare`` works whichever was loaded first.
    "compare": "evalkit.checks",
    "RunArtifact": "evalkit.artifact",
    # what drift (vs_reference) checks compare with: evaluate_gate(..., reference=)
    "Reference": "evalkit.drift",
    "evaluate_gate": "evalkit.gate",
    "mde": "evalkit.significance",
    "paired_bootstrap": "evalkit.significance",
    "paired_bootstrap_many": "evalkit.significance",
    "power": "evalkit.significance",
    "read_artifact": "evalkit.artifact",
    "read_qrels": "evalkit.trec",
    "read_run": "evalkit.trec",
    "score_trec_run": "evalkit.trec",
    "to_dataframe": "evalkit.export",
    "write_artifact": "evalkit.artifact",
    "write_csv": "evalkit.export",
    "write_qrels": "evalkit.trec",
    "write_run": "evalkit.trec",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'evalkit' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "AggregateFn",
    "ArtifactError",
    "BootstrapResult",
    "CallableTarget",
    "CaseMetricFn",
    "CaseResult",
    "CheckError",
    "CheckSpec",
    "ChecksFile",
    "ClientSaturationWarning",
    "ComparisonError",
    "ConfigError",
    "DEFAULT_METRICS",
    "Doc",
    "EvalkitError",
    "ExitCode",
    "GateReport",
    "GoldenCase",
    "GoldenError",
    "GoldenSet",
    "HttpTarget",
    "InputError",
    "JudgeError",
    "LoaderFn",
    "METRICS",
    "MetricError",
    "MetricFn",
    "Query",
    "QueryResult",
    "Reference",
    "RegistryError",
    "Retriever",
    "RunArtifact",
    "RunResult",
    "RuntimeFailure",
    "Target",
    "TargetError",
    "TargetResponse",
    "UnknownMetricError",
    "__version__",
    "compare",
    "evaluate",
    "evaluate_gate",
    "load_checks",
    "load_checks_file",
    "load_corpus",
    "load_goldens",
    "load_qrels",
    "load_queries",
    "mde",
    "ndcg_at_k",
    "paired_bootstrap",
    "paired_bootstrap_many",
    "polarity",
    "power",
    "read_artifact",
    "read_qrels",
    "read_run",
    "recall_at_k",
    "register_aggregate",
    "register_loader",
    "register_metric",
    "registered",
    "run",
    "score_trec_run",
    "to_dataframe",
    "write_artifact",
    "write_csv",
    "write_qrels",
    "write_run",
]
