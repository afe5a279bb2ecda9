"""Reports of a real gate run (not hand-built): every reporter accepts what the gate makes."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema

from evalkit._model.results import CaseResult, RunResult
from evalkit._spec.artifact import RunArtifact, metric_info
from evalkit._spec.checks import CheckSpec
from evalkit.gate.model import GateOptions, GateReport
from evalkit.gate.procedure import evaluate_gate
from evalkit.report import dumps, render_html, render_markdown, render_terminal


def _artifact(name: str, values: list[float]) -> RunArtifact:
    rows = [CaseResult(f"q{i}", None, {"recall@10": v}) for i, v in enumerate(values)]
    return RunArtifact(
        result=RunResult(name, rows),
        path="target",
        metrics={"recall@10": metric_info("recall@10")},
        evalkit_version="0.1.0",
        created_at="2026-11-30T12:00:00Z",
        git_commit="abcdef0123456789",
    )


def _report() -> GateReport:
    base = _artifact("main", [1.0] * 8)
    cand = _artifact("pr", [1.0, 0.0, 0.0, 0.5, 0.0, 0.0, 1.0, 0.0])
    checks = [
        CheckSpec(id="floor", metric="recall@10", op=">=", threshold=0.5),
        CheckSpec(id="no_regression", metric="recall@10", vs_baseline="no_significant_regression"),
    ]
    return evaluate_gate(checks, cand, base, GateOptions(n_resamples=2_000))


def test_every_reporter_renders_a_real_gate_report() -> None:
    report = _report()
    assert report.verdict == "fail"
    v = report.verdicts[1]
    assert v.comparison is not None
    assert len(v.comparison.deltas) == 8
    assert all(isinstance(w, str) for w in v.comparison.warnings)

    data = json.loads(dumps(report))
    schema = json.loads(
        resources.files("evalkit.report").joinpath("gate-report.schema.json").read_text()
    )
    jsonschema.Draft202012Validator(schema).validate(data)
    assert data["checks"][1]["comparison"]["losses"] == 6

    md = render_markdown(report, config_name="evalkit")
    assert md.startswith(
        "<!-- evalkit report config=evalkit -->\n### ❌ FAIL: 0 of 2 checks passed"
    )
    assert "wins / losses / ties 0 / 6 / 2" in md
    # the default procedure (auto) decided: its small-n caveat, not the bootstrap's; in
    # view, since the check failed
    head = md.partition("<details>")[0]
    assert "- ⚠️ **no&#95;regression**: Only 8 cases: treat a borderline result as" in head

    text = render_terminal(report, capture=True)
    assert text is not None
    assert text.startswith("FAIL: 0 of 2 checks passed; blocking: floor, no_regression")

    page = render_html(report)
    assert page.count("<svg") == 2
