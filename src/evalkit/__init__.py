"""evalkit: per-case eval results and paired significance for search, RAG and LLM systems.

The distribution is ``paired-evalkit``; the import name is ``evalkit``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit._engine.execute import evaluate
from evalkit._engine.runner import DEFAULT_METRICS, METRICS, MetricFn, Retriever, run
from evalkit._model.golden_cases import GoldenCase, GoldenSet
from evalkit._model.registry import (
    AggregateFn,
    CaseMetricFn,
    LoaderFn,
    polarity,
    register_aggregate,
    register_loader,
    register_metric,
    registered,
)
from evalkit._model.results import CaseResult, QueryResult, RunResult, TargetResponse
from evalkit._spec.checks import ChecksFile, CheckSpec, load_checks, load_checks_file
from evalkit._spec.corpus import Doc, Query, load_corpus, load_qrels, load_queries
from evalkit._spec.golden_loaders import load_goldens
from evalkit._version import __version__
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
from evalkit.exit_codes import ExitCode
from evalkit.metrics import builtin as _builtin  # noqa: F401  (registers the built-ins)
from evalkit.metrics.core import ndcg_at_k, recall_at_k
from evalkit.targets.base import Target
from evalkit.targets.callable import CallableTarget

if TYPE_CHECKING:
    from evalkit._engine.client_load import ClientSaturationWarning
    from evalkit._spec.artifact import RunArtifact, read_artifact, write_artifact
    from evalkit._spec.checks import compare
    from evalkit._spec.export import to_dataframe, write_csv
    from evalkit._spec.trec import read_qrels, read_run, score_trec_run, write_qrels, write_run
    from evalkit.gate.model import GateReport
    from evalkit.gate.procedure import evaluate_gate
    from evalkit.gate.reference import Reference
    from evalkit.stats.significance import (
        BootstrapResult,
        mde,
        paired_bootstrap,
        paired_bootstrap_many,
        power,
    )
    from evalkit.targets.http import HttpTarget

# Loaded on first use so `import evalkit` (and `evalkit --help`) does not pay for
# numpy and httpx in programs that never need them.
_LAZY = {
    "BootstrapResult": "evalkit.stats.significance",
    "ClientSaturationWarning": "evalkit._engine.client_load",
    "GateReport": "evalkit.gate.procedure",
    "HttpTarget": "evalkit.targets.http",
    # 0.2.0's threshold comparison.  Lazy because ``evalkit.gate.compare`` is also a
    # module (``evalkit compare``); that module is callable and does the same,
    # so ``from evalkit import compare`` works whichever was loaded first.
    "compare": "evalkit._spec.checks",
    "RunArtifact": "evalkit._spec.artifact",
    # what drift (vs_reference) checks compare with: evaluate_gate(..., reference=)
    "Reference": "evalkit.gate.reference",
    "evaluate_gate": "evalkit.gate.procedure",
    "mde": "evalkit.stats.significance",
    "paired_bootstrap": "evalkit.stats.significance",
    "paired_bootstrap_many": "evalkit.stats.significance",
    "power": "evalkit.stats.significance",
    "read_artifact": "evalkit._spec.artifact",
    "read_qrels": "evalkit._spec.trec",
    "read_run": "evalkit._spec.trec",
    "score_trec_run": "evalkit._spec.trec",
    "to_dataframe": "evalkit._spec.export",
    "write_artifact": "evalkit._spec.artifact",
    "write_csv": "evalkit._spec.export",
    "write_qrels": "evalkit._spec.trec",
    "write_run": "evalkit._spec.trec",
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
