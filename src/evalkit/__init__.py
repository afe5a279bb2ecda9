"""evalkit: per-case eval results and paired significance for search, RAG and LLM systems.

The distribution is ``paired-evalkit``; the import name is ``evalkit``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from evalkit._model import builtin_hook as _builtin_hook

# The package logger and its NullHandler, set at import as the standard library advises
# libraries to (docs/logging.md): nothing is printed unless the program configures logging.
from evalkit._util import log as _log  # noqa: F401 (imported for its effect)

# The leaves (no imports of their own beyond the standard library) are eager: every
# command and library call may raise an error or name an exit code.
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


def _register_metrics() -> None:
    """The built-in metrics, aggregates and retrieval families."""
    import importlib

    importlib.import_module("evalkit.metrics.builtin").register_builtins()


def _register_loaders() -> None:
    """The built-in golden loaders, registered by importing their module."""
    import importlib

    importlib.import_module("evalkit._spec.golden_loaders")


# Run at the first use of the registry's tables, whichever module a program starts from
# (see evalkit._model.builtin_hook): `import evalkit` and `evalkit --help` never pay for
# them, and looking a metric up loads no golden loader.
_builtin_hook.defer(_register_metrics)
_builtin_hook.defer(_register_loaders, loaders=True)

if TYPE_CHECKING:
    from evalkit._engine.client_load import ClientSaturationWarning
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
    from evalkit._spec.artifact import RunArtifact, read_artifact, write_artifact
    from evalkit._spec.checks import (
        ChecksFile,
        CheckSpec,
        compare,
        load_checks,
        load_checks_file,
    )
    from evalkit._spec.corpus import Doc, Query, load_corpus, load_qrels, load_queries
    from evalkit._spec.dataset_hubs import load_goldens
    from evalkit._spec.export import to_dataframe, write_csv
    from evalkit._spec.trec import read_run, score_trec_run, write_qrels, write_run
    from evalkit._spec.trec_io import read_qrels
    from evalkit.gate.model import GateReport
    from evalkit.gate.procedure import evaluate_gate
    from evalkit.gate.reference import Reference
    from evalkit.metrics.core import ndcg_at_k, recall_at_k
    from evalkit.stats.significance import (
        BootstrapResult,
        PairedTestResult,
        mde,
        paired_bootstrap,
        paired_bootstrap_many,
        paired_test,
        power,
    )
    from evalkit.targets.base import Target
    from evalkit.targets.callable import CallableTarget
    from evalkit.targets.http import HttpTarget

# Everything else is loaded on first use, from its owner, so `import evalkit` (and every
# `evalkit` command, whose package this is) pays only for what it touches: no YAML parser,
# numpy, HTTP stack, judge or socket until a name that needs one is used
# (tests/project/test_import_cost.py).
_LAZY = {
    "AggregateFn": "evalkit._model.registry",
    "BootstrapResult": "evalkit.stats.significance",
    "CallableTarget": "evalkit.targets.callable",
    "CaseMetricFn": "evalkit._model.registry",
    "CaseResult": "evalkit._model.results",
    "CheckSpec": "evalkit._spec.checks",
    "ChecksFile": "evalkit._spec.checks",
    "ClientSaturationWarning": "evalkit._engine.client_load",
    "DEFAULT_METRICS": "evalkit._engine.runner",
    "Doc": "evalkit._spec.corpus",
    "GateReport": "evalkit.gate.procedure",
    "GoldenCase": "evalkit._model.golden_cases",
    "GoldenSet": "evalkit._model.golden_cases",
    "HttpTarget": "evalkit.targets.http",
    "LoaderFn": "evalkit._model.registry",
    "METRICS": "evalkit._engine.runner",
    "MetricFn": "evalkit._engine.runner",
    "PairedTestResult": "evalkit.stats.significance",
    "Query": "evalkit._spec.corpus",
    "QueryResult": "evalkit._model.results",
    # what drift (vs_reference) checks compare with: evaluate_gate(..., reference=)
    "Reference": "evalkit.gate.reference",
    "Retriever": "evalkit._engine.runner",
    "RunArtifact": "evalkit._spec.artifact",
    "RunResult": "evalkit._model.results",
    "Target": "evalkit.targets.base",
    "TargetResponse": "evalkit._model.results",
    # 0.2.0's threshold comparison.  ``evalkit.compare`` is also a module (the face of
    # ``evalkit compare``); that module is callable and does the same, so
    # ``from evalkit import compare`` works whichever was loaded first.
    "compare": "evalkit._spec.checks",
    "evaluate": "evalkit._engine.execute",
    "evaluate_gate": "evalkit.gate.procedure",
    "load_checks": "evalkit._spec.checks",
    "load_checks_file": "evalkit._spec.checks",
    "load_corpus": "evalkit._spec.corpus",
    "load_goldens": "evalkit._spec.dataset_hubs",
    "load_qrels": "evalkit._spec.corpus",
    "load_queries": "evalkit._spec.corpus",
    "mde": "evalkit.stats.significance",
    "ndcg_at_k": "evalkit.metrics.core",
    "paired_bootstrap": "evalkit.stats.significance",
    "paired_bootstrap_many": "evalkit.stats.significance",
    "paired_test": "evalkit.stats.significance",
    "polarity": "evalkit._model.registry",
    "power": "evalkit.stats.significance",
    "read_artifact": "evalkit._spec.artifact",
    "read_qrels": "evalkit._spec.trec_io",
    "read_run": "evalkit._spec.trec",
    "recall_at_k": "evalkit.metrics.core",
    "register_aggregate": "evalkit._model.registry",
    "register_loader": "evalkit._model.registry",
    "register_metric": "evalkit._model.registry",
    "registered": "evalkit._model.registry",
    "run": "evalkit._engine.runner",
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


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


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
    "PairedTestResult",
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
    "paired_test",
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
