"""Judge-human agreement: aggregates a check can gate on, and the gate report line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from evalkit import registry
from evalkit.errors import ConfigError, MetricError
from evalkit.goldens import GoldenCase, GoldenSet
from evalkit.metrics.judge_agreement import (
    agreement_notes,
    register_judge_agreement,
)
from evalkit.results import CaseResult
from evalkit.targets.base import TargetResponse
from fakes.openai_server import FakeOpenAI, grade

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


# --- end to end: evalkit gate with a threshold on the agreement -----------------------------

TARGET = """
from evalkit import CallableTarget

ANSWERS = {"a": "Paris", "b": "I do not know", "c": "Berlin", "d": "I do not know"}


def make_target():
    return CallableTarget(lambda case: ANSWERS[case.id], name="qa-bot")
"""

CONFIG = """\
goldens: goldens.yaml
checks: checks.yaml
metrics: [helpfulness, judge_agreement_kappa]
target:
  python: "qa_target:make_target"
judge:
  metric: helpfulness
  provider: openai
  base_url: {base_url}
  model: gpt-test-judge
  rubric: "5 if the answer matches the expected answer, 1 if it is wrong."
  cache_path: cache/judge.json
"""

CHECKS = """\
checks:
  - id: judge_trusted
    metric: judge_agreement_kappa
    op: ">="
    threshold: {threshold}
"""


@pytest.fixture
def api() -> Iterator[FakeOpenAI]:
    def by_answer(request: dict[str, object]) -> object:
        return grade(1, "wrong") if "I do not know" in json.dumps(request) else grade(5, "ok")

    with FakeOpenAI(responder=by_answer) as server:
        yield server


def project(tmp_path: Path, api: FakeOpenAI, threshold: float) -> Path:
    (tmp_path / "qa_target.py").write_text(TARGET)
    lines = [
        f"- {{id: {cid}, query: 'question {cid}?', expected: x, human_grade: {g}}}"
        for cid, g in HUMAN.items()
    ]
    (tmp_path / "goldens.yaml").write_text("\n".join(lines) + "\n")
    (tmp_path / "checks.yaml").write_text(CHECKS.format(threshold=threshold))
    (tmp_path / "evalkit.yaml").write_text(CONFIG.format(base_url=api.openai_base_url))
    return tmp_path


def evalkit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "OPENAI_API_KEY": "test", "NO_COLOR": "1", "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "evalkit", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_gate_passes_and_reports_the_agreement(api: FakeOpenAI, tmp_path: Path) -> None:
    root = project(tmp_path, api, threshold=0.9)
    result = evalkit("gate", cwd=root)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "judge_trusted" in result.stdout
    assert "judge-human agreement on 4 case(s)" in result.stdout
    assert "0.92" in result.stdout


def test_gate_blocks_when_the_judge_disagrees_with_people(api: FakeOpenAI, tmp_path: Path) -> None:
    root = project(tmp_path, api, threshold=0.95)
    result = evalkit("gate", cwd=root)
    assert result.returncode == 1, result.stdout + result.stderr
