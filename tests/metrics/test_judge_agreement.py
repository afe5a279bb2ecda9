"""Judge-human agreement: aggregates a check can gate on, and the gate report line."""

from __future__ import annotations

import pytest

from evalkit._model import registry
from evalkit._model.results import CaseResult, RunResult
from evalkit.errors import ConfigError, MetricError
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.metrics.judge_agreement import (
    agreement_notes,
    register_judge_agreement,
)
from evalkit.targets.base import TargetResponse

HUMAN = {"a": 5, "b": 1, "c": 4, "d": 2}
JUDGE = {"a": 5.0, "b": 1.0, "c": 5.0, "d": 1.0}
# Worked by hand: Σ(x-y)² = 2, Σx² = 52, Σy² = 46, ΣxΣy/n = 36 → κ = 1 - 2/26 = 12/13;
# mid-ranks x 3.5 1.5 3.5 1.5, y 4 1 3 2: ρ = 4/√(4·5) = 2/√5.
KAPPA = 12 / 13
RHO = 2 / 5**0.5


def goldens(human: dict[str, object]) -> GoldenSet:
    cases = [
        GoldenCase(id=cid, query=f"q {cid}", context={} if g is None else {"human_grade": g})
        for cid, g in human.items()
    ]
    return GoldenSet(cases)


def rows(values: dict[str, float], metric: str = "helpfulness") -> list[CaseResult]:
    return [CaseResult(cid, TargetResponse(text="x"), {metric: v}) for cid, v in values.items()]


def test_the_aggregates_equal_the_hand_worked_values() -> None:
    names = register_judge_agreement([("helpfulness", 5)], goldens(dict(HUMAN)))
    assert names == ["judge_agreement_kappa", "judge_agreement_spearman"]
    kappa = registry.get_metric("judge_agreement_kappa")
    assert kappa.kind == "aggregate"
    assert registry.polarity("judge_agreement_kappa") is True
    assert kappa.fn(rows(JUDGE)) == pytest.approx(KAPPA, abs=1e-12)
    assert registry.get_metric("judge_agreement_spearman").fn(rows(JUDGE)) == pytest.approx(RHO)


def test_a_repeated_run_is_compared_on_the_first_trials_grade_not_the_mean() -> None:
    register_judge_agreement([("helpfulness", 5)], goldens(dict(HUMAN)))
    repeated = []
    for cid, grade in JUDGE.items():
        # two trials: the first graded as JUDGE says, the second 3; the row holds the mean
        meta = {"helpfulness_score": int(grade), "trials": {"helpfulness": [grade, 3.0]}}
        response = TargetResponse(text="x", meta=meta)
        repeated.append(CaseResult(cid, response, {"helpfulness": (grade + 3.0) / 2}))
    kappa = registry.get_metric("judge_agreement_kappa").fn(repeated)
    assert kappa == pytest.approx(KAPPA, abs=1e-12)


def test_cases_without_a_human_grade_are_left_out() -> None:
    human: dict[str, object] = {**HUMAN, "e": None}
    register_judge_agreement([("helpfulness", 5)], goldens(human))
    value = registry.get_metric("judge_agreement_kappa").fn(rows({**JUDGE, "e": 3.0}))
    assert value == pytest.approx(KAPPA)


def test_several_judges_get_suffixed_names() -> None:
    names = register_judge_agreement([("helpful", 5), ("correct", 3)], goldens({"a": 2, "b": 3}))
    assert names == [
        "judge_agreement_kappa.helpful",
        "judge_agreement_spearman.helpful",
        "judge_agreement_kappa.correct",
        "judge_agreement_spearman.correct",
    ]


def test_a_grade_off_the_scale_is_refused_at_load() -> None:
    with pytest.raises(ConfigError, match=r"cfg: case 'b': human_grade 7 is outside .* 1\.\.5"):
        register_judge_agreement([("helpfulness", 5)], goldens({"a": 1, "b": 7}), where="cfg")
    with pytest.raises(ConfigError, match=r"human_grade must be an integer grade, got 'good'"):
        register_judge_agreement([("helpfulness", 5)], goldens({"a": "good"}))


def test_a_listed_agreement_metric_needs_two_graded_cases_before_anything_runs() -> None:
    with pytest.raises(ConfigError, match=r"'judge_agreement_kappa' needs at least 2 .*found 1"):
        register_judge_agreement(
            [("helpfulness", 5)], goldens({"a": 3, "b": None}), ["judge_agreement_kappa"]
        )


def test_too_few_pairs_in_the_run_is_an_error_not_a_number() -> None:
    register_judge_agreement([("helpfulness", 5)], goldens(dict(HUMAN)))
    with pytest.raises(MetricError, match="1 case.* agreement needs at least 2"):
        registry.get_metric("judge_agreement_kappa").fn(rows({"a": 5.0}))


def test_identity_is_statistic_and_judge_metric() -> None:
    prints = []
    for judge, human in (("helpfulness", HUMAN), ("correctness", HUMAN), ("helpfulness", {})):
        with registry.isolated():
            register_judge_agreement([(judge, 5)], goldens(dict(human)))
            prints.append(registry.get_metric("judge_agreement_kappa").fingerprint)
    assert prints[0] != prints[1]
    assert prints[0] == prints[2]  # the grades belong to the goldens' own fingerprint


def test_notes_report_both_kappas_and_rho_with_intervals() -> None:
    (note,) = agreement_notes(rows(JUDGE), [("helpfulness", 5)], goldens(dict(HUMAN)))
    assert note.startswith(
        "helpfulness: judge-human agreement on 4 case(s): weighted κ (quadratic)"
    )
    assert f"{KAPPA:.2f} [" in note
    assert "κ (linear)" in note
    assert "Spearman ρ" in note
    assert agreement_notes(rows(JUDGE), [("helpfulness", 5)], goldens(dict.fromkeys(HUMAN))) == []


def test_notes_say_when_agreement_is_undefined() -> None:
    (note,) = agreement_notes(
        rows(dict.fromkeys(HUMAN, 3.0)), [("helpfulness", 5)], goldens(dict(HUMAN))
    )
    assert "judge-human agreement not computed" in note
    assert "same grade" in note


def test_a_graded_answer_is_compared_on_the_judges_grade_of_that_text() -> None:
    graded: list[str] = []

    def length_judge(response: TargetResponse, case: GoldenCase) -> float:
        assert response.text is not None
        graded.append(response.text)
        return float(min(5, len(response.text)))

    registry.register_metric("helpfulness", higher_is_better=True)(length_judge)
    cases = [
        GoldenCase(id="a", query="q a", context={"human_grade": 5, "graded_answer": "abcde"}),
        GoldenCase(id="b", query="q b", context={"human_grade": 1, "graded_answer": "a"}),
        GoldenCase(id="c", query="q c", context={"human_grade": 3}),
    ]
    register_judge_agreement([("helpfulness", 5)], GoldenSet(cases))
    # The run's own grades of a and b (1 and 5, reversed) are not what the person graded.
    run = rows({"a": 1.0, "b": 5.0, "c": 3.0})
    value = registry.get_metric("judge_agreement_kappa").fn(run)
    assert value == pytest.approx(1.0)  # judge(abcde)=5, judge(a)=1, c from the run: 3
    assert sorted(graded) == ["a", "abcde"]


def test_a_graded_answer_without_a_grade_is_refused() -> None:
    with pytest.raises(ConfigError, match="graded_answer is given without a human_grade"):
        register_judge_agreement(
            [("helpfulness", 5)],
            GoldenSet([GoldenCase(id="a", query="q", context={"graded_answer": "x"})]),
        )


def _helpfulness_metric() -> None:
    """A stand-in judge metric (the rows already carry its grades)."""

    @registry.register_metric("helpfulness", higher_is_better=True)
    def helpfulness(response: TargetResponse, case: GoldenCase) -> float:
        raise AssertionError("the rows carry the grades; nothing is graded again")


def test_the_gate_counts_only_the_human_graded_cases_as_covered() -> None:
    _helpfulness_metric()
    from evalkit._spec.artifact import build_artifact
    from evalkit._spec.checks import CheckSpec
    from evalkit.gate.procedure import evaluate_gate
    from evalkit.report.json_report import render_json

    human: dict[str, object] = {**HUMAN, "e": None, "f": None}
    register_judge_agreement([("helpfulness", 5)], goldens(human))
    run = RunResult("cand", rows({**JUDGE, "e": 3.0, "f": 2.0}))
    artifact = build_artifact(run, ["helpfulness", "judge_agreement_kappa"])
    spec = CheckSpec(id="trusted", metric="judge_agreement_kappa", op=">=", threshold=0.5)
    (verdict,) = evaluate_gate([spec], artifact).verdicts
    assert (verdict.status, verdict.covered, verdict.total) == ("pass", 4, 6)
    assert verdict.coverage == "4/6 cases (human-graded)"
    coverage = render_json(evaluate_gate([spec], artifact))["checks"][0]["coverage"]
    assert coverage == {"covered": 4, "total": 6, "counts": "human-graded"}


def test_a_per_case_metrics_coverage_names_no_subset() -> None:
    _helpfulness_metric()
    from evalkit._spec.artifact import build_artifact
    from evalkit._spec.checks import CheckSpec
    from evalkit.gate.procedure import evaluate_gate

    register_judge_agreement([("helpfulness", 5)], goldens(dict(HUMAN)))
    artifact = build_artifact(RunResult("cand", rows(JUDGE)), ["helpfulness"])
    spec = CheckSpec(id="helpful", metric="helpfulness", op=">=", threshold=1.0)
    (verdict,) = evaluate_gate([spec], artifact).verdicts
    assert (verdict.coverage, verdict.counts) == ("4/4 cases", None)
