"""Gate reports built by hand, with statuses known in advance, for the reporter tests."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from evalkit.gate.inputs import GoldensDiff
from evalkit.gate.model import (
    CaseDelta,
    CheckVerdict,
    Comparison,
    GateReport,
    ReferenceReport,
    RunSummary,
)

HOSTILE = "<script>alert(1)</script> | `tick` @octocat #123 <!-- x --> [a](http://e.vil) *b*\nline2"

CANDIDATE = RunSummary(
    name="candidate",
    n_cases=100,
    failed=(),
    git_commit="0123456789abcdef0123456789abcdef01234567",
    created_at="2026-11-30T12:00:00Z",
    config_name="evalkit",
)
BASELINE = RunSummary(
    name="main",
    n_cases=100,
    failed=(),
    git_commit="fedcba9876543210fedcba9876543210fedcba98",
    created_at="2026-11-29T08:30:00Z",
    config_name="evalkit",
)


def deltas(n: int, shift: float, seed: int = 0, prefix: str = "q") -> tuple[CaseDelta, ...]:
    """``n`` paired cases: baseline uniform in [0, 1], candidate moved by ``shift`` ± noise."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        base = round(rng.random(), 4)
        r = rng.random()
        move = 0.0 if r < 0.5 else round(shift + rng.uniform(-0.2, 0.2), 4)
        cand = round(min(max(base + move, 0.0), 1.0), 4)
        out.append(CaseDelta(f"{prefix}{i:04d}", cand, base, round(cand - base, 4)))
    return tuple(out)


def comparison(ds: tuple[CaseDelta, ...], **kw: Any) -> Comparison:
    wins = sum(1 for d in ds if d.delta > 0)
    losses = sum(1 for d in ds if d.delta < 0)
    fields: dict[str, Any] = {
        "baseline_value": 0.7377,
        "delta": 0.0207,
        "ci_low": 0.0106,
        "ci_high": 0.0320,
        "confidence": 0.95,
        "p_value": 0.0003,
        "method": "bootstrap",
        "n_paired": len(ds),
        "n_resamples": 10_000,
        "wins": wins,
        "losses": losses,
        "ties": len(ds) - wins - losses,
        "mde": 0.0153,
        "deltas": ds,
    }
    fields.update(kw)
    return Comparison(**fields)


def worst(ds: tuple[CaseDelta, ...], k: int = 10) -> tuple[CaseDelta, ...]:
    bad = sorted((d for d in ds if d.delta < 0), key=lambda d: (d.delta, d.case_id))
    return tuple(bad[:k])


def threshold(
    check_id: str, metric: str, observed: float, op: str, value: float, status: str, **kw: Any
) -> CheckVerdict:
    rel = "meets" if status == "pass" else "misses"
    fields: dict[str, Any] = {
        "check_id": check_id,
        "metric": metric,
        "kind": "threshold",
        "level": "block",
        "status": status,
        "message": f"{metric} = {observed:.4g} {rel} {op} {value:.4g}",
        "covered": 100,
        "total": 100,
        "observed": observed,
        "op": op,
        "threshold": value,
        "higher_is_better": op == ">=",
    }
    fields.update(kw)
    return CheckVerdict(**fields)


def vs_baseline(
    check_id: str, metric: str, status: str, comp: Comparison | None, **kw: Any
) -> CheckVerdict:
    fields: dict[str, Any] = {
        "check_id": check_id,
        "metric": metric,
        "kind": "vs_baseline",
        "level": "block",
        "status": status,
        "message": "Δ +0.0207, 95% CI [+0.0106, +0.032], p=0.0003: significant improvement",
        "covered": comp.n_paired if comp else 100,
        "total": 100,
        "observed": 0.7584,
        "mode": "no_significant_regression",
        "higher_is_better": True,
        "comparison": comp,
        "worst_cases": worst(comp.deltas) if comp else (),
    }
    fields.update(kw)
    return CheckVerdict(**fields)


def report(
    verdicts: list[CheckVerdict],
    *,
    candidate: RunSummary = CANDIDATE,
    baseline: RunSummary | None = BASELINE,
    diff: GoldensDiff | None = None,
    notes: tuple[str, ...] = (),
    reference: ReferenceReport | None = None,
) -> GateReport:
    tests = [v for v in verdicts if v.comparison is not None]
    fw = None
    if tests:
        survive = 1.0
        for v in tests:
            assert v.comparison is not None
            survive *= v.comparison.confidence
        fw = 1 - survive
    return GateReport(
        verdicts=tuple(verdicts),
        candidate=candidate,
        baseline=baseline,
        goldens_diff=diff or GoldensDiff(),
        n_vs_baseline_tests=len(tests),
        alpha_familywise=fw,
        notes=notes,
        reference=reference,
    )


# ----------------------------------------------------------------------------- scenarios


def passing() -> GateReport:
    ds = deltas(100, 0.05, seed=1)
    return report(
        [
            threshold("recall_floor", "recall@10", 0.72, ">=", 0.6, "pass"),
            vs_baseline("no_ndcg_regression", "ndcg@10", "pass", comparison(ds)),
            threshold(
                "p95_ceiling", "latency_p95", 612.5, "<=", 800.0, "pass", higher_is_better=False
            ),
        ]
    )


def failing() -> GateReport:
    ds = deltas(100, -0.08, seed=2)
    comp = comparison(
        ds, baseline_value=0.7377, delta=-0.0412, ci_low=-0.0650, ci_high=-0.0170, p_value=0.0008
    )
    comp2 = comparison(
        deltas(100, 0.0, seed=3), delta=-0.004, ci_low=-0.012, ci_high=0.005, p_value=0.41
    )
    return report(
        [
            threshold("recall_floor", "recall@10", 0.55, ">=", 0.6, "fail"),
            vs_baseline(
                "no_ndcg_regression",
                "ndcg@10",
                "fail",
                comp,
                observed=0.6965,
                message="Δ -0.0412, 95% CI [-0.065, -0.017], p=0.0008: significant regression",
            ),
            vs_baseline(
                "recall_stable",
                "recall@5",
                "pass",
                comp2,
                message="Δ -0.004, 95% CI [-0.012, +0.005], p=0.4100: no significant regression",
            ),
        ]
    )


def no_baseline() -> GateReport:
    return report(
        [
            threshold("recall_floor", "recall@10", 0.72, ">=", 0.6, "pass"),
            vs_baseline(
                "no_ndcg_regression",
                "ndcg@10",
                "no-baseline",
                None,
                covered=100,
                message="no baseline to compare against; promote one from the default branch",
            ),
        ],
        baseline=None,
    )


def incomparable() -> GateReport:
    return report(
        [
            vs_baseline(
                "helpfulness_holds",
                "helpfulness",
                "incomparable",
                None,
                message=(
                    "judge model changed (claude-haiku-4-5 → claude-sonnet-4-5); scores from "
                    "different judges are not comparable: promote a new baseline made with the "
                    "new judge"
                ),
            ),
            threshold("recall_floor", "recall@10", 0.72, ">=", 0.6, "pass"),
        ],
        diff=GoldensDiff(added=("q-new-1", "q-new-2"), removed=("q-old",), changed=("q0007",)),
    )


def errored() -> GateReport:
    cand = RunSummary(
        name="candidate",
        n_cases=100,
        failed=(
            ("q0003", "TargetError: http://localhost:3001/api/search returned 503 twice"),
            ("q0042", "TimeoutError: no response within 30s"),
        ),
        git_commit="0123456789abcdef0123456789abcdef01234567",
        created_at="2026-11-30T12:00:00Z",
        config_name="evalkit",
    )
    return report(
        [
            CheckVerdict(
                check_id="recall_floor",
                metric="recall@10",
                kind="threshold",
                level="block",
                status="error",
                message=(
                    "check 'recall_floor': 2 of 100 case(s) produced no result: q0003, q0042. "
                    "A check must evaluate every case it covers"
                ),
                covered=98,
                total=100,
                op=">=",
                threshold=0.6,
            ),
            threshold(
                "p95_ceiling", "latency_p95", 612.5, "<=", 800.0, "pass", higher_is_better=False
            ),
        ],
        candidate=cand,
    )


def warned() -> GateReport:
    ds = deltas(100, -0.01, seed=4)
    comp = comparison(
        ds, delta=-0.006, ci_low=-0.031, ci_high=0.018, p_value=0.62, margin=0.02, mde=0.034
    )
    return report(
        [
            threshold("recall_floor", "recall@10", 0.72, ">=", 0.6, "pass"),
            threshold(
                "p95_ceiling",
                "latency_p95",
                912.0,
                "<=",
                800.0,
                "warn",
                level="warn",
                higher_is_better=False,
            ),
            vs_baseline(
                "ndcg_non_inferior",
                "ndcg@10",
                "warn",
                comp,
                level="warn",
                mode="non_inferiority",
                message=(
                    "Δ -0.006, 95% CI [-0.031, +0.018]: a drop larger than the margin 0.02 "
                    "cannot be ruled out (bound -0.031)"
                ),
            ),
        ],
        notes=("baseline promoted from main at fedcba9",),
    )


def hostile() -> GateReport:
    """Every untrusted field set to the same hostile text (with a unique tag per field)."""

    def h(tag: str) -> str:
        return f"{tag}:{HOSTILE}"

    ds = (
        CaseDelta(h("delta-id"), 0.1, 0.9, -0.8),
        CaseDelta("plain", 0.5, 0.5, 0.0),
    )
    comp = comparison(
        ds, method=h("method"), warnings=(h("warning"),), delta=-0.4, ci_low=-0.8, ci_high=0.0
    )
    cand = RunSummary(
        name=h("cand-name"),
        n_cases=2,
        failed=((h("failed-id"), h("failed-error")),),
        git_commit=h("commit"),
        created_at=h("created"),
        config_name=h("config"),
    )
    base = RunSummary(h("base-name"), 2, (), None, h("base-created"), None)
    return report(
        [
            vs_baseline(
                h("check-id"),
                h("metric"),
                "fail",
                comp,
                message=h("message"),
                mode=h("mode"),
            ),
            threshold(h("check2"), h("metric2"), 0.1, ">=", 0.5, "fail", message=h("message2")),
        ],
        candidate=cand,
        baseline=base,
        diff=GoldensDiff(added=(h("added"),), removed=(h("removed"),), changed=(h("changed"),)),
        notes=(h("note"),),
    )


def big(n: int = 5_000) -> GateReport:
    """A 5,000-case report: every list long enough to need truncation."""
    failed = tuple(
        (f"fail-{i:04d}", f"TargetError: case {i} timed out after 30s") for i in range(150)
    )
    cand = RunSummary("candidate", n, failed, CANDIDATE.git_commit, CANDIDATE.created_at, "evalkit")
    verdicts = []
    for j, metric in enumerate(("ndcg@10", "recall@10", "mrr@10")):
        ds = deltas(n, -0.02, seed=10 + j, prefix=f"{metric}-case-")
        comp = comparison(ds, delta=-0.012, ci_low=-0.02, ci_high=-0.004, p_value=0.002)
        verdicts.append(
            vs_baseline(
                f"no_{metric}_regression",
                metric,
                "fail",
                comp,
                covered=n,
                total=n,
                message="Δ -0.012, 95% CI [-0.02, -0.004], p=0.0020: significant regression",
            )
        )
    verdicts.append(threshold("p95_ceiling", "latency_p95", 612.5, "<=", 800.0, "pass"))
    diff = GoldensDiff(
        added=tuple(f"added-{i:04d}" for i in range(n)),
        removed=tuple(f"removed-{i:04d}" for i in range(300)),
        changed=tuple(f"changed-{i:04d}" for i in range(40)),
    )
    return report(verdicts, candidate=cand, diff=diff)


REFERENCE = dataclasses.replace(
    BASELINE,
    git_commit="abcdef0123456789abcdef0123456789abcdef01",
    created_at="2026-09-01T10:00:00Z",
)


def drift() -> GateReport:
    """Each PR passes its own check; the drift check against the pinned reference fails."""
    step = comparison(
        deltas(100, -0.01, seed=5), delta=-0.006, ci_low=-0.015, ci_high=0.003, p_value=0.19
    )
    slide = comparison(
        deltas(96, -0.06, seed=6),
        baseline_value=0.7702,
        delta=-0.031,
        ci_low=-0.048,
        ci_high=-0.014,
        p_value=0.0004,
        mde=0.0161,
    )
    ref = ReferenceReport(
        status="found",
        detail="pinned: release v1.4 (2026-09-01), 6 promotions ago",
        source="branch",
        run=REFERENCE,
        goldens_diff=GoldensDiff(changed=("q0007", "q0031", "q0058", "q0090")),
        comparable=96,
        n_cases=100,
        sha=REFERENCE.git_commit,
    )
    return report(
        [
            vs_baseline(
                "no_ndcg_regression",
                "ndcg@10",
                "pass",
                step,
                message="Δ -0.006, 95% CI [-0.015, +0.003], p=0.1900: no significant regression",
            ),
            vs_baseline(
                "no_ndcg_drift",
                "ndcg@10",
                "fail",
                slide,
                kind="vs_reference",
                covered=96,
                observed=0.7392,
                message=(
                    "Δ -0.031, 95% CI [-0.048, -0.014], p=0.0004: significant regression "
                    "(4 with a changed golden: left out; before, after and Δ are over the "
                    "paired cases)"
                ),
            ),
        ],
        reference=ref,
        notes=(
            "goldens changed since the reference (4 changed): 96 of 100 case(s) remain "
            "comparable, and drift checks are decided on those; changed: q0007, q0031, "
            "q0058, q0090",
        ),
    )


def no_reference() -> GateReport:
    """A drift check whose pinned reference expired: loud, never a pass."""
    step = comparison(
        deltas(100, 0.0, seed=7), delta=0.001, ci_low=-0.008, ci_high=0.01, p_value=0.81
    )
    ref = ReferenceReport(
        status="expired",
        detail="artifact 'evalkit-baseline' of the pinned commit abcdef0 expired on 2026-11-30",
        source="artifact",
        n_cases=100,
    )
    return report(
        [
            vs_baseline(
                "no_ndcg_regression",
                "ndcg@10",
                "pass",
                step,
                message="Δ +0.001, 95% CI [-0.008, +0.01], p=0.8100: no significant regression",
            ),
            vs_baseline(
                "no_ndcg_drift",
                "ndcg@10",
                "no-reference",
                None,
                kind="vs_reference",
                message=(
                    "no reference to compare against: expired (artifact 'evalkit-baseline' of "
                    "the pinned commit abcdef0 expired on 2026-11-30); not a pass: pin one "
                    "(docs/drift.md)"
                ),
            ),
        ],
        reference=ref,
    )


def _trial_notes(metrics: tuple[str, ...], n: int = 16, k: int = 3) -> list[str]:
    """The notes a repeated run really writes (evalkit._engine.trials), one per metric."""
    from evalkit._engine.trials import trial_notes
    from evalkit._model.results import TRIALS_KEY, CaseResult, TargetResponse

    rng = random.Random(9)
    rows = []
    for i in range(n):
        trials = {m: [round(rng.random() * (j + 1) / len(metrics), 3) for _ in range(k)]
                  for j, m in enumerate(metrics)}  # fmt: skip
        response = TargetResponse(text="x", meta={TRIALS_KEY: trials})
        rows.append(CaseResult(f"q{i:02d}", response, {m: v[0] for m, v in trials.items()}))
    return trial_notes(rows, metrics)


def repeats() -> GateReport:
    """``repeats: 3`` on 16 cases: six per-metric trial-noise notes and small-n caveats."""
    metrics = ("ndcg@10", "recall@10", "mrr@10", "faithfulness", "helpfulness", "answer_f1")
    ds = deltas(16, 0.0, seed=11)
    small_n = (
        "only 16 cases: below 30 cases the false-fail rate is not guaranteed within a point "
        "of nominal (measured at n = 20); treat a borderline result as undecided"
    )
    checks = [
        vs_baseline(
            f"{m.split('@')[0]}_holds",
            m,
            "pass",
            comparison(ds, delta=0.0, ci_low=-0.01 * (i + 1), ci_high=0.012 * (i + 1),
                       p_value=0.62 - 0.05 * i, warnings=(small_n,)),
            covered=16,
            total=16,
            message="no significant regression",
        )
        for i, m in enumerate(metrics[:3])
    ]  # fmt: skip
    cand = dataclasses.replace(CANDIDATE, n_cases=16)
    base = dataclasses.replace(BASELINE, n_cases=16)
    return report(checks, candidate=cand, baseline=base, notes=tuple(_trial_notes(metrics)))


def identical_rerun() -> GateReport:
    """The same code run twice: Δ = 0 on every case, every case a tie, p = 1."""
    ties = tuple(CaseDelta(f"q{i:02d}", 0.5, 0.5, 0.0) for i in range(16))
    small_n = (
        "only 16 cases: below 30 cases the false-fail rate is not guaranteed within a point "
        "of nominal (measured at n = 20); treat a borderline result as undecided"
    )
    comp = comparison(
        ties, delta=0.0, ci_low=0.0, ci_high=0.0, p_value=1.0, mde=0.05, warnings=(small_n,)
    )
    cand = dataclasses.replace(CANDIDATE, n_cases=16)
    base = dataclasses.replace(BASELINE, n_cases=16)
    return report(
        [
            threshold("recall_floor", "recall@10", 0.8438, ">=", 0.6, "pass", covered=16, total=16),
            vs_baseline(
                "no_ndcg_regression", "ndcg@10", "pass", comp, covered=16, total=16,
                message="Δ +0, 95% CI [+0, +0], p=1.0000: no significant regression",
            ),
        ],
        candidate=cand,
        baseline=base,
    )  # fmt: skip


def many(n_checks: int = 200, id_len: int = 40) -> GateReport:
    """``n_checks`` checks with long ids: a few fail or warn, most pass."""
    verdicts = []
    for i in range(n_checks):
        metric = ("ndcg@10", "recall@10", "mrr@10", "answer_f1")[i % 4]
        stem = f"segment_{i:03d}_{metric.replace('@', '_at_')}_no_significant_regression_"
        check_id = (stem * 3)[:id_len]
        status = "fail" if i % 37 == 5 else "warn" if i % 53 == 7 else "pass"
        ds = deltas(40, -0.05 if status != "pass" else 0.0, seed=100 + i)
        comp = comparison(
            ds,
            delta=-0.03 if status != "pass" else 0.002,
            ci_low=-0.051 if status != "pass" else -0.011,
            ci_high=-0.009 if status != "pass" else 0.015,
            p_value=0.004 if status != "pass" else 0.4 + (i % 50) / 100,
        )
        covered = 38 if i % 41 == 3 else 40
        verdicts.append(
            vs_baseline(
                check_id, metric, status, comp, covered=covered, total=40,
                level="warn" if status == "warn" else "block",
                message=(
                    "Δ -0.03, 95% CI [-0.051, -0.009], p=0.0040: significant regression"
                    if status != "pass"
                    else "Δ +0.002, 95% CI [-0.011, +0.015]: no significant regression"
                ),
            )
        )  # fmt: skip
    cand = dataclasses.replace(CANDIDATE, n_cases=40)
    base = dataclasses.replace(BASELINE, n_cases=40)
    return report(verdicts, candidate=cand, baseline=base)


SCENARIOS = {
    "passing": passing,
    "failing": failing,
    "no_baseline": no_baseline,
    "incomparable": incomparable,
    "error": errored,
    "warn": warned,
    "drift": drift,
    "no_reference": no_reference,
    "repeats": repeats,
    "identical_rerun": identical_rerun,
    "many_checks": many,
}
