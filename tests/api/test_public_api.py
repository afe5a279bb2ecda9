"""The front door: `evalkit.__all__` is sorted, complete and importable."""

from __future__ import annotations

import inspect
import subprocess
import sys
import types

import evalkit


def test_all_is_sorted() -> None:
    assert evalkit.__all__ == sorted(evalkit.__all__)


def test_all_has_no_duplicates() -> None:
    assert len(set(evalkit.__all__)) == len(evalkit.__all__)


def test_every_name_in_all_resolves() -> None:
    for name in evalkit.__all__:
        assert getattr(evalkit, name) is not None, name


def test_all_equals_the_public_names() -> None:
    public = {
        name
        for name, value in vars(evalkit).items()
        if not name.startswith("_")
        and not isinstance(value, types.ModuleType)
        and name not in {"annotations", "TYPE_CHECKING", "Any"}
    }
    lazy = set(evalkit._LAZY)
    assert public | lazy | {"__version__"} == set(evalkit.__all__)


def test_spec_import_paths_exist() -> None:
    from evalkit.metrics import LLMJudge
    from evalkit.metrics.core import ndcg_at_k, recall_at_k
    from evalkit.metrics.retrieval import register_retrieval_metric
    from evalkit.runner import METRICS, QueryResult, RunResult, run

    for obj in (LLMJudge, ndcg_at_k, recall_at_k, register_retrieval_metric, run):
        assert callable(obj)
    assert inspect.isclass(QueryResult)
    assert inspect.isclass(RunResult)
    assert "recall" in METRICS


def test_spec_signatures() -> None:
    assert list(inspect.signature(evalkit.run).parameters)[:5] == [
        "name",
        "retriever",
        "queries",
        "qrels",
        "metrics",
    ]
    params = inspect.signature(evalkit.paired_bootstrap).parameters
    assert list(params)[:5] == ["a", "b", "metric", "n_resamples", "seed"]
    assert params["n_resamples"].default == 10_000
    assert params["seed"].default == 42
    reg = inspect.signature(evalkit.register_metric).parameters
    assert reg["higher_is_better"].kind is inspect.Parameter.KEYWORD_ONLY
    assert reg["higher_is_better"].default is inspect.Parameter.empty


def test_import_does_not_load_heavy_modules() -> None:
    code = (
        "import sys, evalkit; "
        "heavy = [m for m in ('numpy', 'httpx', 'anthropic', 'github', 'scipy', 'pandas') "
        "if m in sys.modules]; print(','.join(heavy))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()
    assert out == ""
