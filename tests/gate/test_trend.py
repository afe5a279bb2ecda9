"""The trend across promotions, on histories whose steps are known by construction."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import numpy as np
import pytest

from evalkit.gate.compare import compare_artifacts
from evalkit.gate.trend import CANDIDATE_LABEL, metric_trends, render_trend, trends_as_dicts
from helpers.history_runs import history, run, sha_of

IDS = [f"c{i:02d}" for i in range(20)]


def shifted(step: int, shift: float = 0.01) -> dict[str, dict[str, float]]:
    """Every case moves by exactly ``shift`` per step: each Δ is ``shift``, CI degenerate."""
    return {cid: {"ndcg@10": 0.25 + 0.02 * (i % 5) + shift * step} for i, cid in enumerate(IDS)}


def noisy(seed: int, n: int = 40, shift: float = 0.0) -> list[dict[str, dict[str, float]]]:
    rng = random.Random(seed)
    base = {f"q{i:03d}": {"ndcg@10": rng.uniform(0.2, 0.8)} for i in range(n)}
    moved = {cid: {"ndcg@10": v["ndcg@10"] + shift + rng.gauss(0, 0.05)} for cid, v in base.items()}
    return [base, moved]


def test_exact_shifts_give_exact_steps(tmp_path: Path) -> None:
    runs = [run(f"r{k}", shifted(k), sha=sha_of(k)) for k in range(4)]
    (trend,) = metric_trends(history(tmp_path, runs), n_resamples=500)
    assert trend.metric == "ndcg@10"
    assert trend.higher_is_better is True
    assert [p.label for p in trend.points] == [
        "0000000 2026-11-01",
        "0101010 2026-11-02",
        "0202020 2026-11-03",
        "0303030 2026-11-04",
    ]
    assert trend.points[0].step is None
    base = sum(0.25 + 0.02 * (i % 5) for i in range(20)) / 20
    for k, point in enumerate(trend.points):
        assert point.value == pytest.approx(base + 0.01 * k, abs=1e-12)
        if k:
            step = point.step
            assert step is not None
            assert step.delta == pytest.approx(0.01, abs=1e-12)
            assert step.ci_low == pytest.approx(0.01, abs=1e-12)
            assert step.ci_high == pytest.approx(0.01, abs=1e-12)
            assert step.n_paired == 20
            assert step.significant


def test_candidate_is_the_last_point(tmp_path: Path) -> None:
    runs = [run(f"r{k}", shifted(k)) for k in range(2)]
    candidate = run("cand", shifted(-3))
    (trend,) = metric_trends(history(tmp_path, runs), candidate=candidate, n_resamples=500)
    last = trend.points[-1]
    assert last.label == CANDIDATE_LABEL
    assert last.is_candidate
    assert last.entry is None
    assert last.step is not None
    assert last.step.delta == pytest.approx(-0.04, abs=1e-12)  # from +1 step to -3 steps
    # the candidate may also be given as a file
    path = tmp_path / "cand.json"
    from evalkit._spec.artifact import write_artifact

    write_artifact(candidate, path)
    (again,) = metric_trends(history(tmp_path, runs), candidate=path, n_resamples=500)
    assert again.points[-1].step == last.step


@pytest.mark.parametrize("seed", range(12))
def test_each_step_is_the_paired_comparison_and_swapping_mirrors_it(
    tmp_path: Path, seed: int
) -> None:
    a_values, b_values = noisy(seed, shift=random.Random(seed).choice([-0.05, 0.0, 0.05]))
    a, b = run("a", a_values), run("b", b_values)
    (forward,) = metric_trends(history(tmp_path, [a, b]), n_resamples=1000, seed=seed)
    (backward,) = metric_trends(history(tmp_path, [b, a]), n_resamples=1000, seed=seed)
    f, r = forward.points[1].step, backward.points[1].step
    assert f is not None
    assert r is not None
    # one engine: the step is exactly what `evalkit compare newer older` decides
    (row,) = compare_artifacts(b, a, n_resamples=1000, seed=seed)
    assert (f.delta, f.ci_low, f.ci_high, f.p_value, f.significant) == (
        row.delta,
        row.ci_low,
        row.ci_high,
        row.p_value,
        row.significant,
    )
    # swap symmetry: the reversed history's step is the mirror image
    assert r.delta == pytest.approx(-f.delta, abs=1e-12)  # type: ignore[operator]
    assert r.ci_low == pytest.approx(-f.ci_high, abs=1e-9)  # type: ignore[operator]
    assert r.ci_high == pytest.approx(-f.ci_low, abs=1e-9)  # type: ignore[operator]
    assert r.significant == f.significant
    assert (f.ci_low > 0 or f.ci_high < 0) == f.significant  # type: ignore[operator]


def test_a_flat_step_is_zero_and_not_significant(tmp_path: Path) -> None:
    values, _ = noisy(3)
    (trend,) = metric_trends(history(tmp_path, [run("a", values), run("b", values)]))
    step = trend.points[1].step
    assert step is not None
    assert (step.delta, step.ci_low, step.ci_high, step.significant) == (0.0, 0.0, 0.0, False)


def test_a_clear_regression_step_is_significant(tmp_path: Path) -> None:
    before, after = noisy(5, n=80, shift=-0.1)
    (trend,) = metric_trends(history(tmp_path, [run("a", before), run("b", after)]))
    step = trend.points[1].step
    assert step is not None
    assert step.ci_high is not None
    assert step.significant
    assert step.ci_high < 0


def test_changed_goldens_are_left_out_of_the_step(tmp_path: Path) -> None:
    old = run("old", shifted(0))
    # five goldens changed, and those cases moved a lot: they must not count
    fps = {cid: (f"fp-{cid}-v2" if i < 5 else f"fp-{cid}") for i, cid in enumerate(IDS)}
    values = shifted(1)
    for cid in IDS[:5]:
        values[cid] = {"ndcg@10": 0.99}
    new = run("new", values, case_fps=fps)
    (trend,) = metric_trends(history(tmp_path, [old, new]), n_resamples=500)
    step = trend.points[1].step
    assert step is not None
    assert step.n_paired == 15
    assert step.delta == pytest.approx(0.01, abs=1e-12)


def test_an_unpairable_step_is_kept_with_its_reason(tmp_path: Path) -> None:
    first = run("first", shifted(0))
    other = run("other", {f"z{i}": {"ndcg@10": 0.5} for i in range(5)})
    third = run("third", {f"z{i}": {"ndcg@10": 0.6} for i in range(5)})
    (trend,) = metric_trends(history(tmp_path, [first, other, third]), n_resamples=500)
    gap, after = trend.points[1].step, trend.points[2].step
    assert gap is not None
    assert not gap.compared
    assert "share no case" in gap.note
    assert after is not None
    assert after.delta == pytest.approx(0.1, abs=1e-12)
    text = render_trend(trend)
    assert "not compared" in text


def test_metric_choice_and_a_metric_missing_on_one_side(tmp_path: Path) -> None:
    a = run("a", {cid: {"ndcg@10": 0.5, "mrr@10": 0.4} for cid in IDS})
    b = run("b", {cid: {"ndcg@10": 0.6} for cid in IDS})
    trends = metric_trends(history(tmp_path, [a, b]), n_resamples=500)
    assert [t.metric for t in trends] == ["mrr@10", "ndcg@10"]
    mrr = trends[0]
    assert mrr.points[1].value is None
    assert mrr.points[1].step is not None
    assert not mrr.points[1].step.compared
    (only,) = metric_trends(history(tmp_path, [a, b]), ["ndcg@10"], n_resamples=500)
    assert only.metric == "ndcg@10"


@pytest.mark.parametrize("seed", range(5))
def test_printed_equals_computed(tmp_path: Path, seed: int) -> None:
    runs = [run(f"r{k}", v) for k, v in enumerate(noisy(seed, shift=0.03))]
    (trend,) = metric_trends(history(tmp_path, runs), n_resamples=500)
    step = trend.points[1].step
    assert step is not None
    line = render_trend(trend).splitlines()[-1]
    assert f"{step.delta:+.4f}" in line
    assert f"[{step.ci_low:+.4f}, {step.ci_high:+.4f}]" in line
    assert ("significant" in line) == step.significant
    doc = trends_as_dicts([trend])[0]
    assert doc["points"][1]["step"]["delta"] == step.delta
    assert doc["points"][0]["step"] is None


def test_json_trend_writes_null_for_a_non_finite_statistic(tmp_path: Path) -> None:
    """A stored run with one huge (finite) case makes the bootstrap CI of the step infinite:
    ``history --json`` writes it as null, as the JSON report does, never ``Infinity``."""
    m = "answer_length"
    a = run("a", {cid: {m: 1e308 if cid == "c00" else 1.0} for cid in IDS})
    b = run("b", {cid: {m: 1.0} for cid in IDS})
    with np.errstate(over="ignore"):
        (trend,) = metric_trends(history(tmp_path, [a, b]), n_resamples=200)
    step = trend.points[1].step
    assert step is not None
    assert step.ci_low == -math.inf
    assert step.ci_high == math.inf
    doc = json.loads(json.dumps(trends_as_dicts([trend]), allow_nan=False))
    assert doc[0]["points"][1]["step"]["ci_low"] is None
    assert doc[0]["points"][1]["step"]["ci_high"] is None
    assert doc[0]["points"][1]["step"]["delta"] == step.delta
    assert doc[0]["points"][0]["value"] == trend.points[0].value
