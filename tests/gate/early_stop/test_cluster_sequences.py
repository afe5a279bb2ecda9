"""Early stopping with declared clusters: whole-cluster order and batches, and the
cluster-level (ratio) confidence sequence the checks are read with."""

from __future__ import annotations

import math

import numpy as np
import pytest
from test_gate import artifact, vs

from evalkit._app.early_stop import batches_of, case_units
from evalkit.gate.sequential import settle_checks
from evalkit.stats.sequential import confidence_sequence, ratio_confidence_sequence
from helpers.scripts import load_script


def test_clusters_of_one_case_read_as_the_case_level_sequence() -> None:
    x = np.random.default_rng(5).normal(0.02, 0.3, 300)
    ratio = ratio_confidence_sequence(x, np.ones(300), 0.05, prior_variance=1.0, looks=[50, 300])
    flat = confidence_sequence(x, 0.05, prior_variance=1.0, looks=[50, 300])
    assert np.allclose(ratio.low, flat.low)
    assert np.allclose(ratio.high, flat.high)


def test_the_estimate_is_the_case_weighted_mean_and_the_interval_contains_it() -> None:
    rng = np.random.default_rng(6)
    sizes = rng.integers(1, 9, 120).astype(np.float64)
    totals = sizes * rng.normal(0.1, 0.2, 120)
    cs = ratio_confidence_sequence(totals, sizes, 0.05, looks=[40, 120])
    assert cs.mean[-1] == pytest.approx(totals.sum() / sizes.sum())
    assert cs.low[-1] < cs.mean[-1] < cs.high[-1]
    assert np.all(np.diff(cs.low) >= 0)
    assert np.all(np.diff(cs.high) <= 0)


def test_bad_sizes_are_refused() -> None:
    with pytest.raises(ValueError, match="positive size"):
        ratio_confidence_sequence(np.zeros(3), np.array([1.0, 0.0, 2.0]), 0.05)
    with pytest.raises(ValueError, match="positive size"):
        ratio_confidence_sequence(np.zeros(3), np.ones(2), 0.05)


def test_whole_clusters_run_in_a_seeded_order_and_a_batch_never_cuts_one() -> None:
    ids = [f"c{i:03d}" for i in range(60)]
    clusters: dict[str, str | None] = {i: f"d{int(i[1:]) // 6}" for i in ids}
    clusters["c000"] = None  # a case without a cluster is one of its own
    units = case_units(ids, 9, clusters)
    assert units == case_units(ids, 9, clusters)
    assert sorted(i for unit in units for i in unit) == ids
    assert ("c000",) in units
    for unit in units:
        assert len({clusters[i] for i in unit}) == 1
    batches = batches_of(units, 10, 60)
    assert [i for b in batches for i in b] == [i for unit in units for i in unit]
    assert all(len(b) >= 10 for b in batches[:-1])
    # without clusters: one case a unit
    assert all(len(u) == 1 for u in case_units(ids, 9))
    assert [len(b) for b in batches_of(case_units(ids, 9), 25, 60)] == [25, 25, 10]


def test_a_shared_cluster_effect_settles_read_as_cases_and_not_read_as_clusters() -> None:
    # 40 documents of 10 questions; each document's change is shared by its questions
    # and the changes average -0.05: 400 cases' worth of evidence read as independent,
    # 40 documents' worth read by cluster.
    effects = np.random.default_rng(8).normal(0.0, 0.1, 40)
    effects += -0.05 - effects.mean()
    ids = [f"c{i:03d}" for i in range(400)]
    base = {i: {"ndcg@10": 0.3 + 0.04 * (k % 11)} for k, i in enumerate(ids)}
    cand = {
        i: {"ndcg@10": min(max(v["ndcg@10"] + effects[k // 10], 0.0), 1.0)}
        for k, (i, v) in enumerate(base.items())
    }
    clusters: dict[str, str | None] = {i: f"d{k // 10}" for k, i in enumerate(ids)}
    args = (artifact("c", cand), artifact("b", base), ids)
    (as_cases,) = settle_checks([vs()], *args, planned=400, batch_ends=[400])
    (as_clusters,) = settle_checks([vs()], *args, planned=400, batch_ends=[400], clusters=clusters)
    assert as_cases.outcome == "fail"
    assert as_clusters.outcome is None


def test_monitored_clustered_null_rarely_fails_and_reading_cases_as_independent_does() -> None:
    sim = load_script("scripts/calibration/early_stopping.py")
    rates = sim.cluster_false_fails(150, 60, 20, 1)
    by_cluster, by_case = rates["continuous"]
    assert by_cluster <= 0.025 + 2 * math.sqrt(0.025 * 0.975 / 150)
    assert by_case > 0.1  # the mistake the cluster-level sequence avoids


@pytest.mark.slow
def test_monitored_false_fails_with_correlated_clusters_stay_within_alpha_over_2() -> None:
    sim = load_script("scripts/calibration/early_stopping.py")
    trials = 600
    limit = 0.025 + 2 * math.sqrt(0.025 * 0.975 / trials)  # nominal plus two standard errors
    for clusters, batch, seed in ((200, 50, 1), (200, 10, 2), (40, 10, 3)):
        rates = sim.cluster_false_fails(trials, clusters, batch, seed)
        assert max(r[0] for r in rates.values()) <= limit, (clusters, batch, rates)
