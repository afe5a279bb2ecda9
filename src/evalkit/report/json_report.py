"""The JSON report: every verdict's fields, machine-readable, documented in docs/report-schema.md.

A NaN or infinite statistic is written as ``null`` and its path listed in ``non_finite``.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from evalkit._model.formats import GATE_REPORT_KIND, GATE_REPORT_SCHEMA_VERSION
from evalkit._util.figures import json_float as _f
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
from evalkit.report.summary import headline, json_record, non_finite_fields


def _delta(d: CaseDelta) -> dict[str, Any]:
    return json_record(d, "case_id baseline candidate delta")


def _comparison(c: Comparison | None) -> dict[str, Any] | None:
    if c is None:
        return None
    ci = c.bootstrap_ci
    return json_record(
        c,
        """baseline_value candidate_value delta ci_low ci_high confidence p_value method
        n_paired n_resamples wins losses ties mde margin min_effect warnings deltas
        correction p_adjusted procedure tested_value deciding_p p_label bootstrap_ci
        clusters own_clusters""",
        deltas=[_delta(d) for d in c.deltas],
        bootstrap_ci=None
        if ci is None
        else {"low": _f(ci[0]), "high": _f(ci[1]), "confidence": _f(ci[2])},
    )


def _check(v: CheckVerdict, advice: MarginAdvice | None = None) -> dict[str, Any]:
    return json_record(
        v,
        """id metric kind level status blocking message coverage observed op threshold
        mode higher_is_better comparison worst_cases required margin_advice""",
        id=v.check_id,
        coverage=_coverage(v),
        comparison=_comparison(v.comparison),
        worst_cases=[_delta(d) for d in v.worst_cases],
        margin_advice=None
        if advice is None
        else json_record(advice, "rate allowed fix_margin fix_cases"),
    )


def _run(run: RunSummary | None) -> dict[str, Any] | None:
    if run is None:
        return None
    failed = [{"case_id": cid, "error": err} for cid, err in run.failed]
    return json_record(run, "name n_cases git_commit created_at config_name failed", failed=failed)


def _diff(diff: GoldensDiff) -> dict[str, Any]:
    return json_record(diff, "added removed changed reassigned")


def _reference(ref: ReferenceReport | None) -> dict[str, Any] | None:
    if ref is None:
        return None
    return json_record(
        ref,
        "status detail source sha run goldens_diff comparable n_cases",
        run=_run(ref.run),
        goldens_diff=_diff(ref.goldens_diff),
    )


def _stopped(stopped: StoppedEarly | None) -> dict[str, Any] | None:
    """How a gate with stop_early: stopped (None: every case ran)."""
    if stopped is None:
        return None
    return json_record(
        stopped,
        "cases_run cases_total reason settled undecided cost_usd cost_usd_estimated_full",
    )


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
        "multiplicity": json_record(report, "n_vs_baseline_tests alpha_familywise correction"),
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
