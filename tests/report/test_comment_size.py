"""A big gate's comment is read, not searched: it lists what changed, worst first, and
stays small (issue 44: a 1,000-case, 10-check gate under 15 KB)."""

from __future__ import annotations

import random

from evalkit._model.results import CaseResult, RunResult
from evalkit._spec.artifact import RunArtifact, metric_info
from evalkit._spec.checks import CheckSpec
from evalkit.gate.model import GateOptions
from evalkit.gate.procedure import evaluate_gate
from evalkit.report import render_markdown
from evalkit.report.escape import md

METRICS = ("ndcg@10", "recall@10", "mrr@10", "recall@5", "recall@1")


def _artifact(name: str, values: dict[str, list[float]]) -> RunArtifact:
    n = len(next(iter(values.values())))
    rows = [CaseResult(str(i), None, {m: v[i] for m, v in values.items()}) for i in range(n)]
    return RunArtifact(
        result=RunResult(name, rows),
        path="target",
        metrics={m: metric_info(m) for m in values},
        evalkit_version="0.3.0",
        created_at="2026-11-30T12:00:00Z",
        git_commit="abcdef0123456789",
    )


def _runs(n: int, seed: int, shift: float) -> tuple[RunArtifact, RunArtifact]:
    rng = random.Random(seed)
    base = {m: [round(rng.random(), 4) for _ in range(n)] for m in METRICS}
    # 70% of cases tie; the rest move by shift ± noise
    cand = {
        m: [
            v if rng.random() < 0.7 else round(min(max(v + shift + rng.gauss(0, 0.2), 0), 1), 4)
            for v in vs
        ]
        for m, vs in base.items()
    }
    return _artifact("candidate", cand), _artifact("baseline", base)


def _checks() -> list[CheckSpec]:
    out = [
        CheckSpec(f"no_{m}_regression", m, vs_baseline="no_significant_regression") for m in METRICS
    ]
    out += [CheckSpec(f"{m}_floor", m, op=">=", threshold=0.3) for m in METRICS]
    return out


def test_a_1000_case_10_check_comment_is_under_15_kb_passing_and_failing() -> None:
    for shift in (0.0, -0.08):
        cand, base = _runs(1_000, seed=5, shift=shift)
        report = evaluate_gate(_checks(), cand, base, GateOptions(n_resamples=200))
        assert len(report.verdicts) == 10
        if shift < 0:
            assert report.verdict == "fail"
        text = render_markdown(report, config_name="big")
        size = len(text.encode("utf-8"))
        assert size < 15_000, size
        # nothing is lost that the reader needs: every check is in the table, and each
        # compared check counts its ties rather than listing them
        for v in report.verdicts:
            assert md(v.check_id, 80) in text
        assert text.count(" tied)</summary>") == len(METRICS)
        assert "| tie |" not in text
