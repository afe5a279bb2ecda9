"""The gate with declared clusters (issue 46): every deciding path infers by cluster."""

from __future__ import annotations

import numpy as np
import pytest

from evalkit import paired_test
from evalkit._spec.artifact import RunArtifact
from evalkit._spec.checks import CheckSpec
from evalkit.gate.model import GateOptions
from evalkit.gate.procedure import evaluate_gate
from evalkit.stats.names import GateMethod
from helpers.slice_runs import METRIC, artefact, assignment


def _runs(
    clusters: int, per: int, shift: float, seed: int = 5
) -> tuple[RunArtifact, RunArtifact, dict[str, str | None]]:
    """``clusters`` documents of ``per`` questions; each document's effect is shared."""
    rng = np.random.default_rng(seed)
    ids = [f"d{g:02d}-q{j}" for g in range(clusters) for j in range(per)]
    labels: dict[str, str | None] = {cid: cid.split("-")[0] for cid in ids}
    effect = {f"d{g:02d}": 0.15 * rng.standard_normal() for g in range(clusters)}
    base = {cid: 0.5 + 0.05 * rng.standard_normal() for cid in ids}
    cand = {
        cid: base[cid] + effect[cid.split("-")[0]] + 0.02 * rng.standard_normal() + shift
        for cid in ids
    }
    tags = assignment({cid: ["odd" if int(cid[1:3]) % 2 else "even"] for cid in ids})
    return artefact("cand", cand, tags), artefact("base", base), labels


NSR = CheckSpec("nsr", METRIC, vs_baseline="no_significant_regression")
NI = CheckSpec("ni", METRIC, vs_baseline="non_inferiority", margin=0.05)
SLICED = CheckSpec("sliced", METRIC, vs_baseline="no_significant_regression", per_slice=True)


def test_every_vs_baseline_verdict_is_decided_by_cluster_and_counts_them() -> None:
    cand, base, labels = _runs(40, 5, 0.0)
    options = GateOptions(n_resamples=500, seed=1, clusters=labels)
    report = evaluate_gate([NSR, NI], cand, base, options)
    for verdict in report.verdicts:
        c = verdict.comparison
        assert c is not None
        assert c.procedure == "cluster-t"
        assert (c.clusters, c.own_clusters) == (40, 0)
        assert not any("clusters" in w for w in c.warnings)  # 40 clusters: no warning
        excluded = c.ci_low > c.tested_value or c.ci_high < c.tested_value
        assert excluded == (c.p_value <= 1 - c.confidence)
    nsr = report.verdicts[0].comparison
    assert nsr is not None
    same = paired_test(cand, base, METRIC, clusters=labels)
    assert (same.ci_low, same.ci_high, same.p_value) == (nsr.ci_low, nsr.ci_high, nsr.p_value)
    # the family-wise figure is the bound that holds under any dependence, not a
    # simulation of independent cases
    assert report.familywise is not None
    assert not report.familywise.estimated


def test_the_clustered_interval_is_wider_than_the_independent_one() -> None:
    cand, base, labels = _runs(40, 5, 0.0)
    clustered = paired_test(cand, base, METRIC, clusters=labels)
    plain = paired_test(cand, base, METRIC)
    assert clustered.observed == plain.observed
    assert clustered.ci_high - clustered.ci_low > 1.5 * (plain.ci_high - plain.ci_low)


@pytest.mark.parametrize(
    ("method", "procedure"),
    [("bootstrap", "cluster-bootstrap"), ("permutation", "cluster-permutation")],
)
def test_the_resampling_methods_resample_clusters(method: GateMethod, procedure: str) -> None:
    cand, base, labels = _runs(12, 4, 0.0)
    spec = CheckSpec("r", METRIC, vs_baseline="no_significant_regression", method=method)
    options = GateOptions(n_resamples=999, seed=1, clusters=labels)
    c = evaluate_gate([spec], cand, base, options).verdicts[0].comparison
    assert c is not None
    assert c.procedure == procedure
    assert c.n_resamples == 999
    result = paired_test(
        cand, base, METRIC, clusters=labels, method=method, n_resamples=999, seed=1
    )
    assert (result.ci_low, result.ci_high, result.p_value) == (c.ci_low, c.ci_high, c.p_value)


def test_too_few_clusters_are_refused_with_the_number_needed() -> None:
    cand, base, labels = _runs(5, 8, 0.0)
    options = GateOptions(n_resamples=500, seed=1, clusters=labels)
    verdict = evaluate_gate([NSR], cand, base, options).verdicts[0]
    assert verdict.status == "error"
    assert "40 cases in 5 clusters" in verdict.message
    assert "at least 6" in verdict.message


def test_per_slice_verdicts_are_decided_by_cluster() -> None:
    cand, base, labels = _runs(80, 3, 0.0)
    options = GateOptions(n_resamples=500, seed=1, clusters=labels)
    report = evaluate_gate([SLICED], cand, base, options)
    assert report.slices is not None
    tested = [v for v in report.slices.verdicts if v.procedure is not None]
    assert {v.procedure for v in tested} == {"cluster-t"}
    for v in tested:
        keep = [cid for cid in labels if (int(cid[1:3]) % 2 == 1) == (v.slice == "tags=odd")]
        sub_cand = [r for r in cand.result.per_query if r.query_id in keep]
        sub_base = [r for r in base.result.per_query if r.query_id in keep]
        alone = paired_test(sub_cand, sub_base, METRIC, clusters=labels)
        assert alone.observed == pytest.approx(v.delta, abs=1e-12)


def test_an_aggregate_resamples_whole_clusters_on_both_sides() -> None:
    """latency_p95 of a run 7 ms slower on every case: every resample of clusters draws
    the same rows on both sides, so each recomputed Δ is exactly +7."""
    from evalkit import CaseResult, RunResult, TargetResponse

    rng = np.random.default_rng(2)
    ids = [f"d{g:02d}-q{j}" for g in range(30) for j in range(4)]
    latency = {cid: float(rng.uniform(10, 90)) for cid in ids}

    def run(name: str, extra: float) -> RunResult[CaseResult]:
        rows = [
            CaseResult(cid, TargetResponse([cid], latency_ms=latency[cid] + extra), {METRIC: 0.5})
            for cid in ids
        ]
        return RunResult(name, rows)

    labels: dict[str, str | None] = {cid: cid.split("-")[0] for cid in ids}
    result = paired_test(
        run("slow", 7.0), run("fast", 0.0), "latency_p95", clusters=labels, n_resamples=200
    )
    assert result.procedure == "cluster-bootstrap"
    assert result.clusters == 30
    assert result.observed == pytest.approx(7.0)
    assert result.ci_low == pytest.approx(7.0)
    assert result.ci_high == pytest.approx(7.0)
    assert result.significant


def test_few_clusters_warn_and_the_bootstrap_warns_below_80() -> None:
    cand, base, labels = _runs(12, 4, 0.0)
    boot = CheckSpec("b", METRIC, vs_baseline="no_significant_regression", method="bootstrap")
    options = GateOptions(n_resamples=500, seed=1, clusters=labels)
    report = evaluate_gate([NSR, boot], cand, base, options)
    t_warnings, boot_warnings = (v.comparison.warnings for v in report.verdicts if v.comparison)
    assert any(w.startswith("only 12 clusters") for w in t_warnings)
    assert not any("cluster bootstrap" in w for w in t_warnings)
    assert any(w.startswith("the cluster bootstrap decided on 12 clusters") for w in boot_warnings)
    many = GateOptions(n_resamples=500, seed=1, clusters=_runs(40, 3, 0.0)[2])
    cand40, base40, _ = _runs(40, 3, 0.0)
    (verdict,) = evaluate_gate([NSR], cand40, base40, many).verdicts
    assert verdict.comparison is not None
    assert not any("clusters" in w for w in verdict.comparison.warnings)
