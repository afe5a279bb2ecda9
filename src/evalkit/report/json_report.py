"""The JSON report: every verdict's fields, machine-readable, documented in docs/report-schema.md.

A NaN or infinite statistic is written as ``null`` and its path listed in ``non_finite``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from evalkit._model.formats import GATE_REPORT_KIND, GATE_REPORT_SCHEMA_VERSION
from evalkit.gate.inputs import GoldensDiff
from evalkit.gate.model import (
    CaseDelta,
    CheckVerdict,
    Comparison,
    GateReport,
    ReferenceReport,
    RunSummary,
    StoppedEarly,
)
from evalkit.report.advice import MarginAdvice, margin_advice
from evalkit.report.slices import slice_json
from evalkit.report.summary import headline, non_finite_fields
from evalkit.report.summary import json_float as _f


def _delta(d: CaseDelta) -> dict[str, Any]:
    return {
        "case_id": d.case_id,
        "baseline": _f(d.baseline),
        "candidate": _f(d.candidate),
        "delta": _f(d.delta),
    }


def _comparison(c: Comparison | None) -> dict[str, Any] | None:
    if c is None:
        return None
    return {
        "baseline_value": _f(c.baseline_value),
        "candidate_value": _f(c.candidate_value),
        "delta": _f(c.delta),
        "ci_low": _f(c.ci_low),
        "ci_high": _f(c.ci_high),
        "confidence": _f(c.confidence),
        "p_value": _f(c.p_value),
        "method": c.method,
        "n_paired": c.n_paired,
        "n_resamples": c.n_resamples,
        "wins": c.wins,
        "losses": c.losses,
        "ties": c.ties,
        "mde": _f(c.mde),
        "margin": _f(c.margin),
        "min_effect": _f(c.min_effect),
        "warnings": list(c.warnings),
        "deltas": [_delta(d) for d in c.deltas],
        "correction": c.correction,
        "p_adjusted": _f(c.p_adjusted),
        "procedure": c.procedure,
        "tested_value": _f(c.tested_value),
        "deciding_p": _f(c.deciding_p),
        "p_label": c.p_label,
        "bootstrap_ci": None
        if c.bootstrap_ci is None
        else {
            "low": _f(c.bootstrap_ci[0]),
            "high": _f(c.bootstrap_ci[1]),
            "confidence": _f(c.bootstrap_ci[2]),
        },
        # with declared clusters (evalkit.yaml `clusters:`): "300 cases in 42 clusters";
        # null without
        "clusters": c.clusters,
        "own_clusters": c.own_clusters,
    }


def _advice(advice: MarginAdvice | None) -> dict[str, Any] | None:
    if advice is None:
        return None
    return {
        "rate": _f(advice.rate),
        "allowed": _f(advice.allowed),
        "fix_margin": _f(advice.fix_margin),
        "fix_cases": advice.fix_cases,
    }


def _check(v: CheckVerdict, advice: MarginAdvice | None = None) -> dict[str, Any]:
    return {
        "id": v.check_id,
        "metric": v.metric,
        "kind": v.kind,
        "level": v.level,
        "status": v.status,
        "blocking": v.blocking,
        "message": v.message,
        "coverage": _coverage(v),
        "observed": _f(v.observed),
        "op": v.op,
        "threshold": _f(v.threshold),
        "mode": v.mode,
        "higher_is_better": v.higher_is_better,
        "comparison": _comparison(v.comparison),
        "worst_cases": [_delta(d) for d in v.worst_cases],
        "required": v.required,
        "margin_advice": _advice(advice),
    }


def _run(run: RunSummary | None) -> dict[str, Any] | None:
    if run is None:
        return None
    return {
        "name": run.name,
        "n_cases": run.n_cases,
        "git_commit": run.git_commit,
        "created_at": run.created_at,
        "config_name": run.config_name,
        "failed": [{"case_id": cid, "error": err} for cid, err in run.failed],
    }


def _diff(diff: GoldensDiff) -> dict[str, Any]:
    return {
        "added": list(diff.added),
        "removed": list(diff.removed),
        "changed": list(diff.changed),
        "reassigned": list(diff.reassigned),
    }


def _reference(ref: ReferenceReport | None) -> dict[str, Any] | None:
    if ref is None:
        return None
    return {
        "status": ref.status,
        "detail": ref.detail,
        "source": ref.source,
        "sha": ref.sha,
        "run": _run(ref.run),
        "goldens_diff": _diff(ref.goldens_diff),
        "comparable": ref.comparable,
        "n_cases": ref.n_cases,
    }


def _stopped(stopped: StoppedEarly | None) -> dict[str, Any] | None:
    """How a gate with stop_early: stopped (None: every case ran)."""
    if stopped is None:
        return None
    return {
        "cases_run": stopped.cases_run,
        "cases_total": stopped.cases_total,
        "reason": stopped.reason,
        "settled": stopped.settled,
        "undecided": list(stopped.undecided),
        "cost_usd": _f(stopped.cost_usd),
        "cost_usd_estimated_full": _f(stopped.cost_usd_estimated_full),
    }


def render_json(report: GateReport) -> dict[str, Any]:
    """The report as plain JSON data (see docs/report-schema.md)."""
    h = headline(report)
    advice = margin_advice(report)
    by_status = Counter(v.status for v in report.verdicts)
    return {
        "schema_version": GATE_REPORT_SCHEMA_VERSION,
        "kind": GATE_REPORT_KIND,
        "verdict": report.verdict,
        "exit_code": report.exit_code,
        "summary": {
            "checks": h.n_checks,
            "passed": h.passed,
            "by_status": dict(sorted(by_status.items())),
            "blocking_failures": [v.check_id for v in report.blocking_failures],
            "failed_cases": h.failed_cases,
        },
        "subset": None
        if report.subset is None
        else {
            "selection": report.subset.selection,
            "cases": list(report.subset.ids),
            "n_total": report.subset.n_total,
        },
        "stopped_early": _stopped(report.stopped_early),
        "candidate": _run(report.candidate),
        "baseline": _run(report.baseline),
        "reference": _reference(report.reference),
        "goldens_diff": _diff(report.goldens_diff),
        "multiplicity": {
            "n_vs_baseline_tests": report.n_vs_baseline_tests,
            "alpha_familywise": _f(report.alpha_familywise),
            "correction": report.correction,
        },
        "notes": list(report.notes),
        "non_finite": non_finite_fields(report),
        "checks": [_check(v, advice.get(v.check_id)) for v in report.verdicts],
        # per_slice checks only (report/slices.py): additive, so the schema stays 1
        **({"slices": slice_json(report.slices)} if report.slices is not None else {}),
    }


def dumps(report: GateReport, *, indent: int | None = 2) -> str:
    """:func:`render_json` as text, ASCII-only (a lone surrogate writes anywhere); with
    ``indent``, each object or list that holds no container is one line (:func:`_indented`).
    """
    doc = render_json(report)
    if indent is None:
        return _ENCODE(doc) + "\n"
    return _indented(doc, " " * indent, "") + "\n"


# The C encoder: json.dumps(indent=...) falls back to CPython's slow pure-Python one.
_ENCODE = json.JSONEncoder(allow_nan=False).encode
_SEPARATED = json.JSONEncoder(allow_nan=False, separators=("\x00", ": ")).encode
_SCALARS = frozenset({str, int, float, bool, type(None)})


def _flat(value: dict[str, Any] | list[Any]) -> bool:
    return _SCALARS.issuperset(map(type, value.values() if isinstance(value, dict) else value))


def _indented(value: Any, step: str, pad: str) -> str:
    """``value`` laid out as ``json.dumps(indent=...)`` lays out its outline, each flat
    container on one line by the C encoder: one case per line, as diff-friendly."""
    if not isinstance(value, dict | list) or not value or _flat(value):
        return _ENCODE(value)
    inner = pad + step
    if isinstance(value, dict):
        items = [f"{_ENCODE(key)}: {_indented(item, step, inner)}" for key, item in value.items()]
        return "{\n" + inner + f",\n{inner}".join(items) + "\n" + pad + "}"
    if all(type(item) is dict and _flat(item) for item in value):
        # The per-case deltas: one C call for the whole list, "\x00" marking separators.
        text = _SEPARATED(value)[1:-1]
        body = text.replace("}\x00{", "},\n" + inner + "{").replace("\x00", ", ")
        return "[\n" + inner + body + "\n" + pad + "]"
    lines = (_indented(item, step, inner) for item in value)
    return "[\n" + inner + f",\n{inner}".join(lines) + "\n" + pad + "]"


def _coverage(v: CheckVerdict) -> dict[str, Any]:
    """``covered``/``total``, and ``counts`` when a metric counted only some cases."""
    out: dict[str, Any] = {"covered": v.covered, "total": v.total}
    if v.counts is not None:
        out["counts"] = v.counts
    return out
