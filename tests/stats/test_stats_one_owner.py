"""One owner per decision (issue #10): pairing, wins/losses/ties, paired means, metric identity.

Each test drives every entry point that shows the decision -- ``paired_bootstrap``,
``evalkit compare`` (:func:`compare_artifacts`), the gate and its reports -- and
checks them against counts made independently here from exact fractions.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from evalkit import CaseResult, RunResult, TargetResponse, register_metric
from evalkit._model.registry import get_metric, isolated, metric_instance
from evalkit._spec.artifact import (
    GoldensInfo,
    RunArtifact,
    build_artifact,
    read_artifact,
    write_artifact,
)
from evalkit._spec.checks import CheckSpec
from evalkit.gate.compare import compare_artifacts, compare_runs
from evalkit.gate.model import GateOptions
from evalkit.gate.procedure import evaluate_gate
from evalkit.report.compare_tables import render_text
from evalkit.report.html import render_compare_html
from evalkit.report.json_report import render_json
from evalkit.report.summary import result as summary_result
from evalkit.report.summary import wlt as summary_wlt
from evalkit.stats.significance import paired_bootstrap

FAST = GateOptions(n_resamples=1_000, seed=3)


@pytest.fixture
def lower_is_better() -> Iterator[str]:
    with isolated():

        @register_metric("bad_claims", higher_is_better=False)
        def bad_claims(response: object, case: object) -> float:  # pragma: no cover - unused
            return 0.0

        @register_metric("good_share", higher_is_better=True)
        def good_share(response: object, case: object) -> float:  # pragma: no cover - unused
            return 0.0

        yield "bad_claims"


def artifact(
    name: str,
    values: Mapping[str, Mapping[str, float]],
    *,
    errors: Mapping[str, str] | None = None,
    case_fps: Mapping[str, str] | None = None,
    params: Mapping[str, object] | None = None,
) -> RunArtifact:
    rows = [
        CaseResult(cid, TargetResponse([cid], latency_ms=1.0), dict(v)) for cid, v in values.items()
    ]
    rows += [CaseResult(cid, None, {}, error=e) for cid, e in (errors or {}).items()]
    names = sorted({m for v in values.values() for m in v})
    fps = dict(case_fps or {cid: f"fp-{cid}" for cid in [*values, *(errors or {})]})
    return build_artifact(
        RunResult(name, rows),
        names,
        goldens=GoldensInfo("set", fps),
        git=("abc", False),
        seed=1,
        params=params,
    )


def expected_wlt(
    cand: list[Fraction], base: list[Fraction], higher_is_better: bool
) -> tuple[int, int, int]:
    better = sum(
        1 for c, b in zip(cand, base, strict=True) if (c > b) == higher_is_better and c != b
    )
    ties = sum(1 for c, b in zip(cand, base, strict=True) if c == b)
    return better, len(cand) - better - ties, ties


def fifths(rng: np.random.Generator, n: int) -> list[Fraction]:
    return [Fraction(int(x), 5) for x in rng.integers(0, 6, n)]


# ---------------------------------------------------------------- wins / losses / ties


@pytest.mark.parametrize("metric", ["bad_claims", "good_share"])
def test_wins_losses_ties_agree_through_every_entry_point(
    lower_is_better: str, metric: str
) -> None:
    hib = get_metric(metric).higher_is_better
    assert hib is not None
    for seed in range(12):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(5, 60))
        cand, base = fifths(rng, n), fifths(rng, n)
        # 0.6 - 0.4 and 0.4 - 0.2 are different doubles; as fifths they are one step each
        want = expected_wlt(cand, base, hib)
        ids = [f"c{i:03d}" for i in range(n)]
        cand_art = artifact("cand", {i: {metric: float(v)} for i, v in zip(ids, cand, strict=True)})
        base_art = artifact("base", {i: {metric: float(v)} for i, v in zip(ids, base, strict=True)})

        res = paired_bootstrap(cand_art.result, base_art.result, metric, n_resamples=200)
        assert (res.wins, res.losses, res.ties) == want, seed

        (row,) = compare_artifacts(cand_art, base_art, n_resamples=200)
        assert (row.wins, row.losses, row.ties) == want, seed

        spec = CheckSpec(id="vs", metric=metric, vs_baseline="no_significant_regression")
        report = evaluate_gate([spec], cand_art, base_art, FAST)
        verdict = report.verdicts[0]
        assert verdict.comparison is not None
        c = verdict.comparison
        assert (c.wins, c.losses, c.ties) == want, seed
        assert summary_wlt(verdict) == "{} / {} / {}".format(*want)
        data = render_json(report)["checks"][0]["comparison"]
        assert (data["wins"], data["losses"], data["ties"]) == want
        # the worst cases are exactly the losses
        worse = {
            i for i, cv, bv in zip(ids, cand, base, strict=True) if cv != bv and (cv > bv) != hib
        }
        assert {d.case_id for d in verdict.worst_cases} <= worse
        assert len(verdict.worst_cases) == min(10, len(worse))


# ---------------------------------------------------------------- before → after and Δ


def test_before_after_and_delta_are_over_the_same_paired_cases() -> None:
    rng = np.random.default_rng(5)
    ids = [f"c{i:03d}" for i in range(40)]
    base_vals = {i: {"recall@5": float(v)} for i, v in zip(ids, fifths(rng, 40), strict=True)}
    cand_vals = {i: {"recall@5": float(v)} for i, v in zip(ids, fifths(rng, 40), strict=True)}
    # the baseline failed on 5 cases and 5 goldens changed: the candidate scores 1.0 there
    failed = ids[:5]
    changed = ids[5:10]
    for i in failed + changed:
        cand_vals[i] = {"recall@5": 1.0}
    base_ok = {i: v for i, v in base_vals.items() if i not in failed}
    fps = {i: f"fp-{i}" for i in ids}
    cand_fps = {**fps, **dict.fromkeys(changed, "new")}
    base_art = artifact("base", base_ok, errors=dict.fromkeys(failed, "timeout"), case_fps=fps)
    cand_art = artifact("cand", cand_vals, case_fps=cand_fps)
    spec = CheckSpec(id="vs", metric="recall@5", vs_baseline="no_significant_regression")
    report = evaluate_gate([spec], cand_art, base_art, FAST)
    v = report.verdicts[0]
    c = v.comparison
    assert c is not None
    paired = [i for i in ids if i not in failed and i not in changed]
    truth_c = sum(Fraction(cand_vals[i]["recall@5"]).limit_denominator(5) for i in paired)
    truth_b = sum(Fraction(base_vals[i]["recall@5"]).limit_denominator(5) for i in paired)
    assert c.n_paired == len(paired) == 30
    assert c.candidate_value == pytest.approx(float(truth_c / 30), abs=1e-15)
    assert c.baseline_value == pytest.approx(float(truth_b / 30), abs=1e-15)
    assert c.delta == pytest.approx(float((truth_c - truth_b) / 30), abs=1e-15)
    assert c.candidate_value is not None
    assert c.candidate_value - c.baseline_value == pytest.approx(c.delta, abs=1e-15)
    line = summary_result(v)
    assert line.startswith(f"{c.baseline_value:.4f} → {c.candidate_value:.4f}: Δ")
    assert "5 failed in the baseline" in v.message
    assert "5 with a changed golden" in v.message
    # evalkit compare pairs the same cases and shows the same means
    (row,) = compare_artifacts(cand_art, base_art, n_resamples=500)
    assert row.n == 30
    assert row.value_a == pytest.approx(c.candidate_value, abs=1e-15)
    assert row.value_b == pytest.approx(c.baseline_value, abs=1e-15)
    assert row.delta == c.delta


# ---------------------------------------------------------------- metric identity


def test_relevance_level_is_part_of_the_fingerprint() -> None:
    default = get_metric("recall@1").fingerprint
    assert metric_instance("recall@1", {"relevance_level": 1}).fingerprint == default
    assert metric_instance("recall@1", {"relevance_level": 2}).fingerprint != default
    for family in ("precision@5", "mrr@10", "map@100", "hit_rate@3"):
        assert (
            metric_instance(family, {"relevance_level": 2}).fingerprint
            != get_metric(family).fingerprint
        )
    # nDCG's gains are the grades: relevance_level does not change it
    assert (
        metric_instance("ndcg@10", {"relevance_level": 2}, only_declared=True).fingerprint
        == get_metric("ndcg@10").fingerprint
    )


def test_unknown_parameters_are_refused_by_name() -> None:
    with pytest.raises(Exception, match="no parameter 'relevance'"):
        metric_instance("recall@1", {"relevance": 2})


def _graded_runs(level: int, tmp_path: Path) -> RunArtifact:
    rng = np.random.default_rng(level)
    values = {
        f"c{i:03d}": {"recall@1": float(rng.integers(0, 2)), "ndcg@10": 0.5} for i in range(50)
    }
    if level == 2:  # stricter relevance: fewer hits
        values = {k: {"recall@1": 0.0, "ndcg@10": 0.5} for k in values}
    art = artifact(f"level{level}", values, params={"relevance_level": level})
    path = write_artifact(art, tmp_path / f"level{level}.json")
    return read_artifact(path)


def test_different_relevance_levels_are_incomparable_in_the_gate_and_compare(
    tmp_path: Path,
) -> None:
    one, two = _graded_runs(1, tmp_path), _graded_runs(2, tmp_path)
    assert one.metrics["recall@1"].params == ()
    assert two.metrics["recall@1"].params == (("relevance_level", 2),)
    assert two.metrics["ndcg@10"].params == ()
    spec = CheckSpec(id="vs", metric="recall@1", vs_baseline="no_significant_regression")
    report = evaluate_gate([spec], two, one, FAST)
    v = report.verdicts[0]
    assert v.status == "incomparable"
    assert "relevance_level=2" in v.message
    assert v.blocking
    rows = {r.metric: r for r in compare_artifacts(two, one, n_resamples=500)}
    assert rows["recall@1"].incomparable
    assert not rows["recall@1"].significant
    assert "relevance_level" in rows["recall@1"].note
    assert not rows["ndcg@10"].incomparable
    page = render_compare_html(list(rows.values()), two, one)
    assert 'class="badge incomparable">incomparable: parameters differ' in page
    (line,) = [
        x
        for x in render_text(compare_runs([two], one, n_resamples=500)).splitlines()
        if x.startswith("recall@1 ")
    ]
    assert line.endswith(
        "incomparable: parameters differ (default parameters vs relevance_level=2)"
    )
    assert "better" not in line
    assert "worse" not in line


def test_same_parameters_stay_comparable(tmp_path: Path) -> None:
    a = artifact(
        "a", {f"c{i}": {"recall@1": 1.0} for i in range(10)}, params={"relevance_level": 2}
    )
    b = artifact(
        "b", {f"c{i}": {"recall@1": 0.0} for i in range(10)}, params={"relevance_level": 2}
    )
    spec = CheckSpec(id="vs", metric="recall@1", vs_baseline="no_significant_regression")
    assert evaluate_gate([spec], a, b, FAST).verdicts[0].status == "pass"
    assert math.isclose(compare_artifacts(a, b, n_resamples=200)[0].delta, 1.0)


def test_trec_scoring_records_relevance_level_in_the_identity(tmp_path: Path) -> None:
    from evalkit._app.trec import score_trec_file

    qrels = tmp_path / "qrels.txt"
    run_file = tmp_path / "run.txt"
    qrels.write_text("".join(f"q{i} 0 d{i}a {1 + i % 2}\nq{i} 0 d{i}b 1\n" for i in range(6)))
    run_file.write_text(
        "".join(f"q{i} Q0 d{i}a 1 2.0 sys\nq{i} Q0 d{i}b 2 1.0 sys\n" for i in range(6))
    )
    metrics = "recall@1,ndcg@10"
    one = score_trec_file(run_file, qrels, metrics, tmp_path / "1.json", relevance_level=1).artifact
    two = score_trec_file(run_file, qrels, metrics, tmp_path / "2.json", relevance_level=2).artifact
    assert one.metrics["recall@1"].params == ()
    assert two.metrics["recall@1"].params == (("relevance_level", 2),)
    assert one.metrics["recall@1"].fingerprint != two.metrics["recall@1"].fingerprint
    assert one.metrics["ndcg@10"].fingerprint == two.metrics["ndcg@10"].fingerprint
    spec = CheckSpec(id="vs", metric="recall@1", vs_baseline="no_significant_regression")
    assert evaluate_gate([spec], two, one, FAST).verdicts[0].status == "incomparable"
    rows = {r.metric: r for r in compare_artifacts(two, one, n_resamples=200)}
    assert rows["recall@1"].incomparable
    assert not rows["recall@1"].significant
