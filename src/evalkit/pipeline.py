"""From ``evalkit.yaml`` to a run, an artefact and a gate report.

The CLI and the GitHub Action are thin shells over these functions.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalkit.artifact import GoldensInfo, RunArtifact, build_artifact, read_artifact
from evalkit.config import HttpTargetConfig, LoadedConfig, expand_env
from evalkit.errors import ConfigError, EvalkitError, TargetError
from evalkit.execute import RowCallback, evaluate, resolve_metrics
from evalkit.gate import GateOptions, GateReport, evaluate_gate
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.results import CaseResult, RunResult
from evalkit.targets.base import Target

_PLACEHOLDER = "{{%s}}"


def import_plugins(config: LoadedConfig) -> None:
    """Put the config's python_path on sys.path and import its plugin modules."""
    for entry in config.model.python_path:
        folder = str(config.resolve(entry).resolve())
        if folder not in sys.path:
            sys.path.insert(0, folder)
    for module in config.model.plugins:
        try:
            importlib.import_module(module)
        except ImportError as exc:
            raise ConfigError(
                f"{config.path}: plugin {module!r} cannot be imported ({exc}); "
                "check the module name and python_path"
            ) from None


def register_judges(config: LoadedConfig, *, cache_only: bool = False) -> None:
    """Register each configured LLM judge as a per-case metric."""
    if not config.model.judge:
        return
    from evalkit.metrics.judge import LLMJudge
    from evalkit.registry import register_metric

    for judge in config.model.judge:
        if judge.rubric_file is not None:
            try:
                rubric = config.resolve(judge.rubric_file).read_text(encoding="utf-8")
            except OSError as exc:
                raise ConfigError(f"{config.path}: judge rubric_file: {exc}") from None
        else:
            rubric = judge.rubric or ""
        cache = config.resolve(judge.cache_path) if judge.cache_path else None
        grader = LLMJudge(
            rubric=rubric,
            model=judge.model,
            scale=judge.scale,
            cache_path=cache,
            cache_only=cache_only,
            prices=judge.prices,
        )
        register_metric(judge.metric, higher_is_better=judge.higher_is_better)(grader)


def _case_field(case: GoldenCase, name: str) -> Any:
    if name == "id":
        return case.id
    if name == "query":
        return case.query
    if name == "expected":
        return case.expected
    if name == "relevant":
        return sorted(case.relevant)
    if name.startswith("context."):
        key = name.removeprefix("context.")
        if key in case.context:
            return case.context[key]
    raise TargetError(
        f"payload template names {{{{{name}}}}}, which case {case.id!r} does not have "
        "(use id, query, expected, relevant or context.<column>)"
    )


def render_payload(template: Any, case: GoldenCase) -> Any:
    """Fill ``{{query}}``-style placeholders; a string that is one placeholder keeps its type."""
    if isinstance(template, str):
        stripped = template.strip()
        if stripped.startswith("{{") and stripped.endswith("}}") and stripped.count("{{") == 1:
            return _case_field(case, stripped[2:-2].strip())
        out = template
        while "{{" in out:
            start = out.index("{{")
            end = out.find("}}", start)
            if end < 0:
                break
            name = out[start + 2 : end].strip()
            out = out[:start] + str(_case_field(case, name)) + out[end + 2 :]
        return out
    if isinstance(template, dict):
        return {k: render_payload(v, case) for k, v in template.items()}
    if isinstance(template, list):
        return [render_payload(v, case) for v in template]
    return template


def _jmespath_extract(expr: str) -> Callable[[Any], Any]:
    import jmespath

    compiled = jmespath.compile(expr)

    def extract(body: Any) -> Any:
        found = compiled.search(body)
        if found is None:
            raise ValueError(f"extract {expr!r} matched nothing in the response body")
        if isinstance(found, list):
            return [str(x) for x in found]
        if isinstance(found, str):
            return found
        raise ValueError(
            f"extract {expr!r} gave {type(found).__name__}; it must give a list of ids or a string"
        )

    return extract


def build_http_target(
    http: HttpTargetConfig, name: str, env: Mapping[str, str], where: str
) -> Target:
    from evalkit.targets.http import HttpTarget

    url = expand_env(http.url, env, f"{where}.url")
    headers = expand_env(http.headers, env, f"{where}.headers")
    payload_template = expand_env(http.payload, env, f"{where}.payload")
    return HttpTarget(
        url=url,
        name=name,
        build_payload=lambda case: render_payload(payload_template, case),
        extract=_jmespath_extract(http.extract),
        headers=headers,
        timeout_s=http.timeout_s,
        meta_keys=tuple(http.meta_keys),
        method=http.method,
    )


def build_target(config: LoadedConfig, env: Mapping[str, str] | None = None) -> Target:
    """The configured target: a python factory's product or a declarative HTTP target."""
    tc = config.model.target
    environ = os.environ if env is None else env
    if tc.http is not None:
        return build_http_target(tc.http, tc.name or config.name, environ, "target.http")
    assert tc.python is not None
    module_name, _, attr = tc.python.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"{config.path}: target.python: cannot import {module_name!r} ({exc}); "
            "check python_path and the module name"
        ) from None
    factory: Any = module
    for part in attr.split("."):
        factory = getattr(factory, part, None)
        if factory is None:
            raise ConfigError(f"{config.path}: target.python: {module_name!r} has no {attr!r}")
    try:
        made = factory(**tc.args)
    except EvalkitError:
        raise
    except Exception as exc:
        raise ConfigError(
            f"{config.path}: target.python: {tc.python}() raised {type(exc).__name__}: {exc}"
        ) from None
    if not hasattr(made, "invoke") and callable(made):
        from evalkit.targets.callable import CallableTarget

        made = CallableTarget(made, name=tc.name or config.name)
    if not hasattr(made, "invoke") or not hasattr(made, "name"):
        raise ConfigError(
            f"{config.path}: target.python: {tc.python}() returned {type(made).__name__}, "
            "not a Target (an object with .name and .invoke(case)) or a callable"
        )
    return made  # type: ignore[no-any-return]


@dataclass
class Prepared:
    """Everything loaded and validated before any case is run."""

    config: LoadedConfig
    goldens: GoldenSet
    checks: Any  # evalkit.checks.ChecksFile


def prepare(config: LoadedConfig, *, cache_only: bool = False) -> Prepared:
    """Load plugins, judges, goldens and checks, and cross-validate them.

    ``cache_only`` is process-wide: it holds for every judge, including ones a
    plugin registers itself (:mod:`evalkit.metrics.judge_guard`).
    """
    from evalkit.checks import load_checks_file
    from evalkit.golden_loaders import load_goldens
    from evalkit.metrics.judge_guard import set_cache_only

    set_cache_only(cache_only)
    import_plugins(config)
    register_judges(config, cache_only=cache_only)
    goldens = load_goldens(config.resolve(config.model.goldens))
    checks = load_checks_file(config.resolve(config.model.checks), known_case_ids=goldens.ids())
    resolve_metrics(config.model.metrics)
    computed = set(config.model.metrics)
    for spec in checks.checks:
        if spec.metric not in computed:
            raise ConfigError(
                f"{config.path}: check {spec.id!r} names metric {spec.metric!r}, which the "
                f"config does not compute (metrics: {', '.join(config.model.metrics)}); add it"
            )
    return Prepared(config, goldens, checks)


def goldens_info(goldens: GoldenSet) -> GoldensInfo:
    per_case = goldens.case_fingerprints()
    return GoldensInfo(goldens.fingerprint(), per_case)


def run_candidate(
    prepared: Prepared,
    *,
    target: Target | None = None,
    on_row: RowCallback | None = None,
    skip: Sequence[str] = (),
    concurrency: int | None = None,
) -> RunResult[CaseResult]:
    cfg = prepared.config.model
    tgt = target or build_target(prepared.config)
    try:
        return evaluate(
            tgt,
            prepared.goldens,
            cfg.metrics,
            concurrency=concurrency or cfg.concurrency,
            rate_limit=cfg.rate_limit,
            case_timeout_s=cfg.case_timeout_s,
            on_row=on_row,
            skip=skip,
        )
    finally:
        close = getattr(tgt, "close", None)
        if target is None and callable(close):
            close()


def to_artifact(prepared: Prepared, result: RunResult[CaseResult], target_name: str) -> RunArtifact:
    from evalkit import significance
    from evalkit.checkpoint import config_fingerprint

    cfg = prepared.config.model
    art = build_artifact(
        result,
        cfg.metrics,
        target_name=target_name,
        target_description=cfg.target.description,
        goldens=goldens_info(prepared.goldens),
        seed=cfg.seed,
        resampling_stream=getattr(significance, "RESAMPLING_STREAM", None),
        config_name=prepared.config.name,
    )
    art.config_fingerprint = config_fingerprint(cfg)
    return art


def load_baseline(config: LoadedConfig, override: str | Path | None) -> RunArtifact | None:
    """The baseline artefact: an explicit path, else the config's file store, else none."""
    if override is not None:
        return read_artifact(override)
    base = config.model.baseline
    if base is None or base.store != "file" or base.path is None:
        return None
    path = config.resolve(base.path)
    if not path.exists():
        return None
    return read_artifact(path)


def gate(
    prepared: Prepared,
    candidate: RunArtifact,
    baseline: RunArtifact | None,
    *,
    notes: Sequence[str] = (),
) -> GateReport:
    cfg = prepared.config.model
    checks = prepared.checks
    return evaluate_gate(
        checks.checks,
        candidate,
        baseline,
        GateOptions(
            n_resamples=cfg.n_resamples,
            seed=cfg.seed,
            require_baseline=cfg.require_baseline
            or bool(getattr(checks, "require_baseline", False)),
            correction=getattr(checks, "correction", "none") or "none",
            extra_notes=tuple(n for n in notes if n),
        ),
    )
