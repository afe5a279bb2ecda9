"""Gate decisions on runs whose right answer is known by construction."""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pytest

from evalkit import CaseResult, RunResult, TargetResponse, register_metric
from evalkit._spec.artifact import GoldensInfo, JudgeInfo, RunArtifact, build_artifact
from evalkit._spec.checks import CheckSpec
from evalkit.gate.model import GateOptions
from evalkit.gate.procedure import evaluate_gate
from evalkit.goldens import GoldenCase

FAST = GateOptions(n_resamples=2_000, seed=1)


def artifact(
    name: str,
    values: Mapping[str, Mapping[str, float]],
    *,
    latencies: Mapping[str, float] | None = None,
    errors: Mapping[str, str] | None = None,
    metrics: list[str] | None = None,
    case_fps: Mapping[str, str] | None = None,
) -> RunArtifact:
    rows = []
    for cid, vals in values.items():
        latency = (latencies or {}).get(cid, 10.0)
        rows.append(CaseResult(cid, TargetResponse([cid], latency_ms=latency), dict(vals)))
    for cid, err in (errors or {}).items():
        rows.append(CaseResult(cid, None, {}, error=err))
    names = metrics or sorted({m for v in values.values() for m in v})
    fps = case_fps or {cid: f"fp-{cid}" for cid in [*values, *(errors or {})]}
    return build_artifact(
        RunResult(name, rows),
        names,
        goldens=GoldensInfo("set", dict(fps)),
        git=("deadbeef", False),
        seed=1,
    )


def noisy(n: int, shift: float, sd: float, seed: int) -> tuple[dict[str, dict[str, float]], ...]:
    rng = random.Random(seed)
    base: dict[str, dict[str, float]] = {}
    cand: dict[str, dict[str, float]] = {}
    for i in range(n):
        b = rng.uniform(0.3, 0.7)
        base[f"c{i:03d}"] = {"ndcg@10": b}
        cand[f"c{i:03d}"] = {"ndcg@10": b + shift + rng.gauss(0, sd)}
    return base, cand


def vs(metric: str = "ndcg@10", **kw: Any) -> CheckSpec:
    check_id = kw.pop("id", "vs")
    mode = kw.pop("mode", "no_significant_regression")
    return CheckSpec(id=check_id, metric=metric, vs_baseline=mode, **kw)


def thr(metric: str, op: str, threshold: float, **kw: Any) -> CheckSpec:
    check_id = kw.pop("id", "thr")
    return CheckSpec(id=check_id, metric=metric, op=op, threshold=threshold, **kw)  # type: ignore[arg-type]


# ------------------------------------------------------------------------- vs_baseline


def test_clear_regression_fails() -> None:
    base, cand = noisy(100, -0.10, 0.03, seed=1)
    report = evaluate_gate([vs()], artifact("cand", cand), artifact("base", base), FAST)
    v = report.verdicts[0]
    assert v.status == "fail"
    assert v.blocking
    assert v.comparison is not None
    assert v.comparison.ci_high < 0
    assert v.comparison.losses > 90
    assert "significant regression" in v.message
    assert report.verdict == "fail"
    assert report.exit_code == 1


def test_clear_improvement_passes() -> None:
    base, cand = noisy(100, +0.10, 0.03, seed=2)
    report = evaluate_gate([vs()], artifact("cand", cand), artifact("base", base), FAST)
    v = report.verdicts[0]
    assert v.status == "pass"
    assert "significant improvement" in v.message
    assert v.comparison is not None
    assert v.comparison.ci_low > 0
    assert report.exit_code == 0


def test_pure_noise_passes_no_significant_regression() -> None:
    base, cand = noisy(60, 0.0, 0.10, seed=3)
    report = evaluate_gate([vs()], artifact("cand", cand), artifact("base", base), FAST)
    v = report.verdicts[0]
    assert v.status == "pass"
    assert v.comparison is not None
    assert v.comparison.ci_low < 0 < v.comparison.ci_high


def test_pure_noise_fails_a_tight_non_inferiority_margin() -> None:
    base, cand = noisy(60, 0.0, 0.10, seed=3)
    # Centre the noise so the observed change is exactly zero: the interval then spans
    # about ±2.6 SE (≈ ±0.025) around 0, far past the 0.005 margin, whatever the procedure.
    shift = sum(cand[c]["ndcg@10"] - base[c]["ndcg@10"] for c in base) / len(base)
    cand = {c: {"ndcg@10": v["ndcg@10"] - shift} for c, v in cand.items()}
    check = vs(mode="non_inferiority", margin=0.005)
    report = evaluate_gate([check], artifact("cand", cand), artifact("base", base), FAST)
    v = report.verdicts[0]
    assert v.status == "fail"
    assert "cannot be ruled out" in v.message


def test_non_inferiority_passes_with_a_generous_margin() -> None:
    base, cand = noisy(60, 0.0, 0.10, seed=3)
    check = vs(mode="non_inferiority", margin=0.2)
    report = evaluate_gate([check], artifact("cand", cand), artifact("base", base), FAST)
    assert report.verdicts[0].status == "pass"


def test_warn_level_regression_does_not_block() -> None:
    base, cand = noisy(100, -0.10, 0.03, seed=1)
    report = evaluate_gate([vs(level="warn")], artifact("cand", cand), artifact("base", base), FAST)
    assert report.verdicts[0].status == "warn"
    assert not report.verdicts[0].blocking
    assert report.verdict == "warn"
    assert report.exit_code == 0


def test_lower_is_better_custom_count_regresses_upwards() -> None:
    register_metric("unsupported_claims", higher_is_better=False)(lambda r, c: 0.0)
    rng = random.Random(4)
    base = {f"c{i}": {"unsupported_claims": float(rng.randint(0, 1))} for i in range(80)}
    worse = {k: {"unsupported_claims": v["unsupported_claims"] + 2.0} for k, v in base.items()}
    better = {k: {"unsupported_claims": 0.0} for k in base}
    check = vs("unsupported_claims")
    up = evaluate_gate([check], artifact("c", worse), artifact("b", base), FAST)
    assert up.verdicts[0].status == "fail"
    assert up.verdicts[0].comparison is not None
    assert up.verdicts[0].comparison.losses == 80
    down = evaluate_gate([check], artifact("c", better), artifact("b", base), FAST)
    assert down.verdicts[0].status == "pass"


def test_lower_is_better_aggregate_latency_p95_regresses_upwards() -> None:
    rng = random.Random(5)
    ids = [f"c{i}" for i in range(80)]
    vals = {i: {"ndcg@10": 0.5} for i in ids}
    base_lat = {i: rng.uniform(50, 100) for i in ids}
    slow = {i: v * 3 for i, v in base_lat.items()}
    fast = {i: v / 3 for i, v in base_lat.items()}
    metrics = ["ndcg@10", "latency_p95"]
    base = artifact("b", vals, latencies=base_lat, metrics=metrics)
    check = vs("latency_p95")
    slow_report = evaluate_gate(
        [check], artifact("c", vals, latencies=slow, metrics=metrics), base, FAST
    )
    assert slow_report.verdicts[0].status == "fail"
    assert slow_report.verdicts[0].comparison is not None
    assert slow_report.verdicts[0].comparison.delta > 0
    fast_report = evaluate_gate(
        [check], artifact("c", vals, latencies=fast, metrics=metrics), base, FAST
    )
    assert fast_report.verdicts[0].status == "pass"


@pytest.mark.parametrize(("n", "status"), [(19, "error"), (20, "fail")])
def test_latency_p95_that_is_each_runs_maximum_is_refused_not_decided(n: int, status: str) -> None:
    """Below 20 cases p95 is the slowest case; its bootstrap failed falsely 7-11% (#23)."""
    ids = [f"c{i}" for i in range(n)]
    vals = {i: {"ndcg@10": 0.5} for i in ids}
    base_lat = {i: 50.0 + 3 * k for k, i in enumerate(ids)}
    slow = {i: v * 3 for i, v in base_lat.items()}
    metrics = ["ndcg@10", "latency_p95"]
    report = evaluate_gate(
        [vs("latency_p95")],
        artifact("c", vals, latencies=slow, metrics=metrics),
        artifact("b", vals, latencies=base_lat, metrics=metrics),
        FAST,
    )
    verdict = report.verdicts[0]
    assert verdict.status == status
    if status == "error":
        assert "slowest case" in verdict.message
        assert "at least 20 cases" in verdict.message
        assert verdict.blocking


def test_a_regression_with_no_winning_case_warns_that_rare_wins_may_be_missing() -> None:
    ids = [f"c{i}" for i in range(20)]
    base = {i: {"ndcg@10": 0.5 + k / 100} for k, i in enumerate(ids)}
    cand = {i: {"ndcg@10": v["ndcg@10"] - 0.05} for i, v in base.items()}
    report = evaluate_gate([vs()], artifact("c", cand), artifact("b", base), FAST)
    verdict = report.verdicts[0]
    assert verdict.status == "fail"
    assert verdict.comparison is not None
    assert any("no case improved" in w for w in verdict.comparison.warnings)


def test_wins_losses_ties_are_polarity_aware() -> None:
    base = {"a": {"ndcg@10": 0.5}, "b": {"ndcg@10": 0.5}, "c": {"ndcg@10": 0.5}}
    cand = {"a": {"ndcg@10": 0.9}, "b": {"ndcg@10": 0.1}, "c": {"ndcg@10": 0.5}}
    report = evaluate_gate([vs()], artifact("c", cand), artifact("b", base), FAST)
    c = report.verdicts[0].comparison
    assert c is not None
    assert (c.wins, c.losses, c.ties) == (1, 1, 1)
    assert [d.case_id for d in report.verdicts[0].worst_cases] == ["b"]


def test_most_regressed_cases_sorted_by_size() -> None:
    base = {f"c{i}": {"ndcg@10": 0.9} for i in range(5)}
    cand = {f"c{i}": {"ndcg@10": 0.9 - 0.1 * i} for i in range(5)}
    report = evaluate_gate([vs()], artifact("c", cand), artifact("b", base), FAST)
    assert [d.case_id for d in report.verdicts[0].worst_cases] == ["c4", "c3", "c2", "c1"]


def test_no_baseline_is_reported_and_does_not_block() -> None:
    _base, cand = noisy(20, 0.0, 0.1, seed=6)
    report = evaluate_gate([vs()], artifact("c", cand), None, FAST)
    v = report.verdicts[0]
    assert v.status == "no-baseline"
    assert not v.blocking
    assert report.exit_code == 0
    assert report.baseline is None


def test_no_baseline_blocks_when_required() -> None:
    _, cand = noisy(20, 0.0, 0.1, seed=6)
    opts = replace(FAST, require_baseline=True)
    report = evaluate_gate([vs()], artifact("c", cand), None, opts)
    assert report.verdicts[0].status == "fail"
    assert "require_baseline" in report.verdicts[0].message
    assert report.exit_code == 1


def test_changed_metric_fingerprint_is_incomparable() -> None:
    base, cand = noisy(30, 0.0, 0.1, seed=7)
    b = artifact("b", base)
    info = b.metrics["ndcg@10"]
    b.metrics["ndcg@10"] = replace(info, fingerprint="0000000000000000")
    report = evaluate_gate([vs()], artifact("c", cand), b, FAST)
    v = report.verdicts[0]
    assert v.status == "incomparable"
    assert v.blocking
    assert "definition of ndcg@10 changed" in v.message
    assert "promote" in v.message


def test_changed_judge_model_is_incomparable() -> None:
    base, cand = noisy(30, 0.0, 0.1, seed=7)
    b, c = artifact("b", base), artifact("c", cand)
    b.metrics["ndcg@10"] = replace(b.metrics["ndcg@10"], judge=JudgeInfo("old-model", "r", 5))
    c.metrics["ndcg@10"] = replace(c.metrics["ndcg@10"], judge=JudgeInfo("new-model", "r", 5))
    report = evaluate_gate([vs()], c, b, FAST)
    assert report.verdicts[0].status == "incomparable"
    assert "judge model changed (old-model → new-model)" in report.verdicts[0].message


def test_changed_goldens_compare_unchanged_cases_and_list_the_rest() -> None:
    base = {
        "same1": {"ndcg@10": 0.5},
        "same2": {"ndcg@10": 0.6},
        "gone": {"ndcg@10": 0.9},
        "edit": {"ndcg@10": 0.9},
    }
    cand = {
        "same1": {"ndcg@10": 0.5},
        "same2": {"ndcg@10": 0.6},
        "new": {"ndcg@10": 0.1},
        "edit": {"ndcg@10": 0.0},
    }
    b = artifact("b", base, case_fps={"same1": "x", "same2": "y", "gone": "z", "edit": "old"})
    c = artifact("c", cand, case_fps={"same1": "x", "same2": "y", "new": "n", "edit": "new"})
    report = evaluate_gate([vs()], c, b, FAST)
    diff = report.goldens_diff
    assert diff.added == ("new",)
    assert diff.removed == ("gone",)
    assert diff.changed == ("edit",)
    v = report.verdicts[0]
    assert v.covered == 2
    assert v.comparison is not None
    assert v.comparison.n_paired == 2
    assert v.comparison.delta == 0.0
    assert "left out" in v.message


def test_vs_baseline_scope_pairs_only_scoped_cases() -> None:
    base = {f"c{i}": {"ndcg@10": 0.9} for i in range(10)}
    cand = {f"c{i}": {"ndcg@10": 0.9 if i > 1 else 0.1} for i in range(10)}
    check = vs(scope=("c5", "c6", "c7"))
    report = evaluate_gate([check], artifact("c", cand), artifact("b", base), FAST)
    v = report.verdicts[0]
    assert v.status == "pass"
    assert v.coverage == "3/3 cases"


# ------------------------------------------------------------------------- thresholds


def test_threshold_pass_and_fail() -> None:
    vals = {"a": {"ndcg@10": 0.8}, "b": {"ndcg@10": 0.6}}
    ok = evaluate_gate([thr("ndcg@10", ">=", 0.7)], artifact("c", vals))
    assert ok.verdicts[0].status == "pass"
    assert ok.verdicts[0].observed == pytest.approx(0.7)
    assert ok.verdicts[0].coverage == "2/2 cases"
    bad = evaluate_gate([thr("ndcg@10", ">=", 0.71)], artifact("c", vals))
    assert bad.verdicts[0].status == "fail"
    assert bad.exit_code == 1


def test_threshold_equality_uses_fixed_tolerance() -> None:
    vals = {"a": {"err": 0.1 + 0.2}}
    register_metric("err", higher_is_better=False)(lambda r, c: 0.0)
    report = evaluate_gate([thr("err", "==", 0.3)], artifact("c", vals))
    assert report.verdicts[0].status == "pass"


def test_threshold_on_aggregate_uses_scoped_rows() -> None:
    vals = {f"c{i}": {"ndcg@10": 1.0} for i in range(20)}
    lat = {f"c{i}": float(i + 1) for i in range(20)}
    art = artifact("c", vals, latencies=lat, metrics=["ndcg@10", "latency_p95"])
    whole = evaluate_gate([thr("latency_p95", "<=", 19.0)], art)
    assert whole.verdicts[0].observed == 19.0  # nearest rank, not the max
    assert whole.verdicts[0].status == "pass"
    scoped = evaluate_gate([thr("latency_p95", "<=", 2.0, scope=("c0", "c1"))], art)
    assert scoped.verdicts[0].observed == 2.0
    assert scoped.verdicts[0].status == "pass"


def test_scoped_check_with_a_failed_case_is_an_error_naming_it() -> None:
    vals = {"ok1": {"ndcg@10": 1.0}, "ok2": {"ndcg@10": 1.0}}
    art = artifact("c", vals, errors={"broken": "HTTP 500"})
    check = thr("ndcg@10", ">=", 0.5, scope=("ok1", "ok2", "broken"))
    report = evaluate_gate([check], art)
    v = report.verdicts[0]
    assert v.status == "error"
    assert "broken" in v.message
    assert v.coverage == "2/3 cases"
    assert v.blocking
    assert report.verdict == "error"
    assert report.exit_code == 3


def test_unscoped_check_with_failed_cases_is_an_error() -> None:
    art = artifact("c", {"ok": {"ndcg@10": 1.0}}, errors={"bad": "timeout"})
    v = evaluate_gate([thr("ndcg@10", ">=", 0.5)], art).verdicts[0]
    assert v.status == "error"
    assert "1 of 2 case(s) produced no result: bad" in v.message


def test_check_on_a_metric_nobody_computed_is_an_error() -> None:
    art = artifact("c", {"a": {"ndcg@10": 1.0}})
    v = evaluate_gate([thr("recall@10", ">=", 0.5)], art).verdicts[0]
    assert v.status == "error"
    assert "'recall@10' was not computed" in v.message


def test_familywise_false_alarm_is_reported() -> None:
    base, cand = noisy(40, 0.0, 0.1, seed=8)
    register_metric("m2", higher_is_better=True)(lambda r, c: 0.0)
    for d in (base, cand):
        for row in d.values():
            row["m2"] = row["ndcg@10"]
    checks = [vs(id="one"), vs("m2", id="two")]
    report = evaluate_gate(checks, artifact("c", cand), artifact("b", base), FAST)
    assert report.n_vs_baseline_tests == 2
    # The two metrics are the same measurement and each check fails on one side only:
    # the gate's false-fail chance is one check's α/2, not the two-sided independent
    # 1 - 0.95**2 = 9.75% the header used to print.
    assert report.familywise is not None
    assert report.familywise.estimated
    assert report.alpha_familywise is not None
    assert 0.02 <= report.alpha_familywise <= 0.03


def test_gate_is_deterministic() -> None:
    base, cand = noisy(50, -0.02, 0.1, seed=9)
    a = evaluate_gate([vs()], artifact("c", cand), artifact("b", base), FAST)
    b = evaluate_gate([vs()], artifact("c", cand), artifact("b", base), FAST)
    assert a.verdicts == b.verdicts


def test_text_only_case_metric_unaffected_by_ids() -> None:
    # A per-case metric gate works without ranked ids (judge-style scores).
    register_metric("helpfulness", higher_is_better=True)(lambda r, c: 0.0)
    rows = [CaseResult(f"c{i}", TargetResponse(text="x"), {"helpfulness": 4.0}) for i in range(5)]
    art = build_artifact(RunResult("c", rows), ["helpfulness"], git=(None, None))
    report = evaluate_gate([thr("helpfulness", ">=", 3.5)], art)
    assert report.verdicts[0].status == "pass"
    assert GoldenCase(id="x", query="q")  # the case type is importable alongside


# ------------------------------------------------------------------------- corrections


def borderline() -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    """A real but modest drop whose raw bootstrap p is about 0.027 (n = 100)."""
    base, cand = noisy(100, -0.025, 0.1, seed=21)
    for rows in (base, cand):
        for values in rows.values():
            values["ndcg_copy"] = values["ndcg@10"]
    register_metric("ndcg_copy", higher_is_better=True)(lambda r, c: 0.0)
    return base, cand


def test_without_correction_each_borderline_check_fails() -> None:
    base, cand = borderline()
    checks = [vs(id="a"), vs(id="b"), vs(id="c")]
    report = evaluate_gate(checks, artifact("c", cand), artifact("b", base), FAST)
    assert [v.status for v in report.verdicts] == ["fail", "fail", "fail"]
    first = report.verdicts[0].comparison
    assert first is not None
    assert 0.02 < first.p_value < 0.035
    assert first.p_adjusted is None


def test_holm_correction_can_clear_a_borderline_alarm() -> None:
    base, cand = borderline()
    checks = [vs(id="a"), vs(id="b"), vs(id="c")]
    opts = replace(FAST, correction="holm")
    report = evaluate_gate(checks, artifact("c", cand), artifact("b", base), opts)
    for v in report.verdicts:
        assert v.comparison is not None
        assert v.comparison.correction == "holm"
        assert v.comparison.p_adjusted == pytest.approx(min(1.0, 3 * v.comparison.p_value))
        assert v.status == "pass"
        assert "Holm-adjusted p=" in v.message
    assert report.correction == "holm"


def test_maxt_keeps_power_when_metrics_are_the_same_measurement() -> None:
    """Two perfectly correlated metrics are one test: max-T barely adjusts, Holm doubles."""
    base, cand = borderline()
    checks = [vs(id="a"), vs("ndcg_copy", id="b")]
    maxt = evaluate_gate(
        checks, artifact("c", cand), artifact("b", base), replace(FAST, correction="maxt")
    )
    holm = evaluate_gate(
        checks, artifact("c", cand), artifact("b", base), replace(FAST, correction="holm")
    )
    for v_max, v_holm in zip(maxt.verdicts, holm.verdicts, strict=True):
        assert v_max.comparison is not None
        assert v_holm.comparison is not None
        assert v_max.comparison.correction == "maxt"
        raw = v_max.comparison.p_value
        assert v_max.comparison.p_adjusted is not None
        assert raw <= v_max.comparison.p_adjusted <= raw * 1.2
        assert v_holm.comparison.p_adjusted == pytest.approx(2 * raw)
    assert [v.status for v in maxt.verdicts] == ["fail", "fail"]
    assert [v.status for v in holm.verdicts] == ["fail", "fail"] or all(
        v.comparison is not None and v.comparison.p_adjusted is not None for v in holm.verdicts
    )


def test_maxt_falls_back_to_holm_when_checks_pair_different_cases() -> None:
    base, cand = borderline()
    scoped = vs("ndcg_copy", id="b", scope=tuple(sorted(cand)[:50]))
    opts = replace(FAST, correction="maxt")
    report = evaluate_gate([vs(id="a"), scoped], artifact("c", cand), artifact("b", base), opts)
    assert any("Holm" in note for note in report.notes)
    for v in report.verdicts:
        assert v.comparison is not None
        assert v.comparison.correction == "holm"


def test_non_inferiority_is_not_adjusted() -> None:
    base, cand = borderline()
    checks = [vs(id="a"), vs(id="ni", mode="non_inferiority", margin=0.5)]
    opts = replace(FAST, correction="holm")
    report = evaluate_gate(checks, artifact("c", cand), artifact("b", base), opts)
    ni = report.verdicts[1]
    assert ni.comparison is not None
    assert ni.comparison.p_adjusted is None
    assert ni.status == "pass"


@pytest.mark.parametrize("method", ["t", "permutation"])
def test_per_check_method_decides_with_its_own_p(method: str) -> None:
    base, cand = noisy(100, -0.10, 0.03, seed=1)
    report = evaluate_gate([vs(method=method)], artifact("c", cand), artifact("b", base), FAST)
    v = report.verdicts[0]
    assert v.comparison is not None
    assert v.comparison.method == method
    assert v.comparison.p_value < 0.001
    assert v.status == "fail"
    noise_base, noise_cand = noisy(60, 0.0, 0.10, seed=3)
    calm = evaluate_gate(
        [vs(method=method)], artifact("c", noise_cand), artifact("b", noise_base), FAST
    )
    assert calm.verdicts[0].status == "pass"
