"""min_effect on no_significant_regression: fail only on a regression significantly beyond δ."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from test_gate import artifact, noisy, vs

from evalkit._spec.checks import CheckSpec, load_checks
from evalkit.errors import CheckError
from evalkit.gate.model import GateOptions, GateReport
from evalkit.gate.procedure import evaluate_gate
from evalkit.report.json_report import render_json
from evalkit.report.summary import change_parts

FAST = GateOptions(n_resamples=500, seed=1)


def _gate(
    shift: float, sd: float, seed: int, n: int = 80, min_effect: float | None = None
) -> GateReport:
    base, cand = noisy(n, shift, sd, seed=seed)
    check = vs(min_effect=min_effect)
    return evaluate_gate([check], artifact("cand", cand), artifact("base", base), FAST)


def test_a_small_significant_regression_passes_once_it_is_within_min_effect() -> None:
    plain = _gate(-0.02, 0.01, seed=4).verdicts[0]
    assert plain.status == "fail"
    tolerant = _gate(-0.02, 0.01, seed=4, min_effect=0.05).verdicts[0]
    assert tolerant.status == "pass"
    assert "any regression larger than min_effect 0.05 is ruled out" in tolerant.message
    assert tolerant.comparison is not None
    assert tolerant.comparison.ci_low > -0.05
    assert tolerant.comparison.tested_value == -0.05
    assert "p vs min_effect" in tolerant.message


def test_a_regression_significantly_beyond_min_effect_fails_and_names_it() -> None:
    v = _gate(-0.10, 0.02, seed=5, min_effect=0.03).verdicts[0]
    assert v.status == "fail"
    assert "significantly larger than min_effect 0.03" in v.message
    assert v.comparison is not None
    assert v.comparison.ci_high < -0.03


def test_an_uncertain_regression_near_min_effect_passes_as_not_significant() -> None:
    # interval straddles -δ: neither ruled out nor significantly beyond
    v = _gate(-0.03, 0.10, seed=6, n=40, min_effect=0.03).verdicts[0]
    assert v.comparison is not None
    assert v.comparison.ci_low < -0.03 < v.comparison.ci_high
    assert v.status == "pass"
    assert "no regression significantly larger than min_effect 0.03" in v.message


@pytest.mark.parametrize("seed", range(12))
def test_min_effect_fails_exactly_when_the_interval_lies_beyond_it_and_never_more_often(
    seed: int,
) -> None:
    rng = random.Random(seed)
    shift = rng.uniform(-0.12, 0.04)
    sd = rng.uniform(0.01, 0.15)
    effect = rng.uniform(0.005, 0.08)
    plain = _gate(shift, sd, seed, n=50).verdicts[0]
    v = _gate(shift, sd, seed, n=50, min_effect=effect).verdicts[0]
    c = v.comparison
    assert c is not None
    assert (v.status == "fail") == (c.ci_high < -effect)
    if v.status == "fail":  # a δ can only turn a failure into a pass, never the reverse
        assert plain.status == "fail"


def test_lower_is_better_min_effect_reads_the_upper_side() -> None:
    from evalkit import register_metric

    register_metric("wait_cost", higher_is_better=False)(lambda response, case: 0.0)
    rng = random.Random(7)
    base = {f"c{i}": {"wait_cost": 1.0 + rng.random()} for i in range(60)}
    cand = {k: {"wait_cost": v["wait_cost"] + 0.02 + rng.gauss(0, 0.005)} for k, v in base.items()}
    check = CheckSpec(
        id="w", metric="wait_cost", vs_baseline="no_significant_regression", min_effect=0.1
    )
    report = evaluate_gate([check], artifact("cand", cand), artifact("base", base), FAST)
    v = report.verdicts[0]
    assert v.status == "pass"
    assert v.comparison is not None
    assert v.comparison.tested_value == 0.1
    assert v.comparison.ci_high < 0.1


def test_report_states_min_effect_in_the_line_the_json_and_the_check() -> None:
    report = _gate(-0.02, 0.01, seed=4, min_effect=0.05)
    v = report.verdicts[0]
    assert "min_effect 0.05" in ", ".join(change_parts(v))
    data = render_json(report)
    assert data["checks"][0]["comparison"]["min_effect"] == 0.05
    assert "min_effect=0.05" in vs(min_effect=0.05).describe()


@pytest.mark.parametrize(
    ("extra", "needle"),
    [
        ({"min_effect": 0}, "min_effect must be greater than 0"),
        ({"min_effect": -0.1}, "min_effect must be greater than 0"),
        ({"min_effect": "0.1"}, "min_effect must be a number"),
        ({"min_effect": 0.1, "vs_baseline": "non_inferiority", "margin": 0.1}, "min_effect"),
        ({"min_effect": 0.1, "per_slice": True}, "min_effect and per_slice"),
    ],
)
def test_bad_min_effect_is_refused_naming_the_key(extra: dict[str, object], needle: str) -> None:
    fields: dict[str, object] = {"vs_baseline": "no_significant_regression", **extra}
    with pytest.raises(CheckError, match=needle):
        CheckSpec(id="x", metric="ndcg@10", **fields)  # type: ignore[arg-type]


def test_min_effect_on_a_threshold_check_points_at_its_line(tmp_path: Path) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(
        "checks:\n  - id: floor\n    metric: ndcg@10\n    op: '>='\n    threshold: 0.5\n"
        "    min_effect: 0.02\n",
        encoding="utf-8",
    )
    with pytest.raises(CheckError) as info:
        load_checks(path)
    message = str(info.value)
    assert ":6:" in message
    assert "min_effect applies only" in message
    assert "\n" not in message


def test_min_effect_loads_from_a_checks_file(tmp_path: Path) -> None:
    path = tmp_path / "checks.yaml"
    path.write_text(
        "checks:\n  - id: r\n    metric: ndcg@10\n    vs_baseline: no_significant_regression\n"
        "    min_effect: 0.01\n",
        encoding="utf-8",
    )
    (check,) = load_checks(path)
    assert check.min_effect == 0.01
