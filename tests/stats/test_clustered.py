"""Clustered inference (stats/clustered.py) against known answers and brute force."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps  # type: ignore[import-untyped]  # dev-only, no stubs

from evalkit.errors import InputError
from evalkit.stats.clustered import (
    Clustering,
    ClusterT,
    bell_mccaffrey_df,
    cluster_bootstrap_means,
    clusters_needed,
    refuse_too_few,
)
from evalkit.stats.clustered_decide import ClusteredEvaluator
from evalkit.stats.procedures import Decision, Procedure
from evalkit.stats.sign_flips import SignFlipNull, SignFlips


def clustered_answer(
    procedure: Procedure,
    d: np.ndarray,
    clustering: Clustering,
    alpha: float,
    null: float = 0.0,
    *,
    n_resamples: int = 999,
) -> tuple[Decision, ClusteredEvaluator]:
    gen = np.random.default_rng(1)
    if procedure == "cluster-bootstrap":
        totals = clustering.totals(d)
        resampled = cluster_bootstrap_means(totals, clustering.sizes, n_resamples, gen)[0]
        ev = ClusteredEvaluator(procedure, float(d.mean()), clustering, resampled=resampled)
    elif procedure == "cluster-permutation":
        flips = SignFlips.draw(clustering.count, n_resamples, gen)
        ev = ClusteredEvaluator(procedure, float(d.mean()), clustering, diffs=d, flips=flips)
    else:
        ev = ClusteredEvaluator(procedure, float(d.mean()), clustering, diffs=d)
    return ev.decide(alpha, null), ev


def _labels(sizes: list[int]) -> list[str]:
    return [f"c{g}" for g, size in enumerate(sizes) for _ in range(size)]


def _brute_cr2(d: np.ndarray, codes: np.ndarray) -> tuple[float, float]:
    """CR2 variance and Bell-McCaffrey df of a mean by the papers' matrices: adjustment
    A_g = (I - H_gg)^(-1/2) by eigen-decomposition, df = tr(MPM)² / tr((MPM)²)."""
    n = d.shape[0]
    residual = d - d.mean()
    m = np.eye(n) - 1.0 / n
    p = np.zeros((n, n))
    meat = 0.0
    for g in np.unique(codes):
        idx = codes == g
        size = int(idx.sum())
        lam, vec = np.linalg.eigh(np.eye(size) - np.full((size, size), 1.0 / n))
        adjust = vec @ np.diag(lam**-0.5) @ vec.T
        meat += float(np.ones(size) @ adjust @ residual[idx]) ** 2
        row = np.zeros(n)
        row[idx] = adjust.sum(axis=0) / n
        p += np.outer(row, row)
    b = m @ p @ m
    return meat / n**2, float(np.trace(b) ** 2 / np.trace(b @ b))


def test_every_case_its_own_cluster_is_exactly_the_paired_t() -> None:
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=40), rng.normal(size=40) + 0.2
    clustering = Clustering.of([None] * 40)
    assert clustering.count == 40
    assert clustering.own == 40
    answer, _ = clustered_answer("cluster-t", a - b, clustering, 0.05)
    reference = sps.ttest_rel(a, b)
    assert bell_mccaffrey_df(clustering.sizes) == pytest.approx(39.0, rel=1e-12)
    assert answer.p_value == pytest.approx(reference.pvalue, rel=1e-9)
    low, high = reference.confidence_interval(0.95)
    assert answer.low == pytest.approx(low, rel=1e-9)
    assert answer.high == pytest.approx(high, rel=1e-9)


def test_equal_clusters_are_exactly_the_t_on_cluster_means() -> None:
    rng = np.random.default_rng(4)
    sizes = [6] * 9
    d = rng.normal(size=54) + np.repeat(rng.normal(size=9), 6)
    clustering = Clustering.of(_labels(sizes))
    answer, _ = clustered_answer("cluster-t", d, clustering, 0.1, null=0.3)
    means = d.reshape(9, 6).mean(axis=1)
    reference = sps.ttest_1samp(means, 0.3)
    assert bell_mccaffrey_df(clustering.sizes) == pytest.approx(8.0, rel=1e-12)
    assert answer.p_value == pytest.approx(reference.pvalue, rel=1e-9)
    low, high = sps.ttest_1samp(means, 0.0).confidence_interval(0.9)
    assert answer.low == pytest.approx(low, rel=1e-9)
    assert answer.high == pytest.approx(high, rel=1e-9)


@pytest.mark.parametrize("seed", range(6))
def test_unequal_clusters_match_the_papers_matrices(seed: int) -> None:
    rng = np.random.default_rng(seed)
    sizes = rng.integers(1, 12, size=rng.integers(2, 10)).tolist()
    labels = _labels(sizes)
    order = rng.permutation(len(labels))  # clusters need not be contiguous
    shuffled = [labels[i] for i in order]
    d = rng.normal(size=len(labels))
    clustering = Clustering.of(shuffled)
    t = ClusterT.of(clustering.totals(d), clustering.sizes)
    variance, df = _brute_cr2(d, clustering.codes)
    assert float(t.se[0]) ** 2 == pytest.approx(variance, rel=1e-9)
    assert t.df == pytest.approx(df, rel=1e-9)
    assert bell_mccaffrey_df(clustering.sizes) <= len(sizes) - 1 + 1e-9


def test_the_satterthwaite_df_is_the_variance_estimates_spread() -> None:
    # Under independent normal cases, 2·E[V]²/Var[V] of the CR2 variance is its df.
    rng = np.random.default_rng(11)
    sizes = np.array([1, 2, 3, 10, 25, 4, 1, 8], dtype=np.int64)
    d = rng.normal(size=(20_000, int(sizes.sum())))
    codes = np.repeat(np.arange(sizes.shape[0]), sizes)
    totals = np.stack([np.bincount(codes, weights=row).astype(np.float64) for row in d])
    variance = ClusterT.of(totals, sizes).se ** 2
    simulated = 2 * variance.mean() ** 2 / variance.var()
    assert simulated == pytest.approx(bell_mccaffrey_df(sizes), rel=0.05)
    assert variance.mean() == pytest.approx(1.0 / sizes.sum(), rel=0.03)  # CR2: unbiased


def test_interval_and_p_are_duals_on_every_path() -> None:
    rng = np.random.default_rng(8)
    sizes = [3, 1, 7, 2, 5, 4, 6, 2, 9, 1]
    d = rng.normal(size=sum(sizes)) + 0.4 + np.repeat(rng.normal(size=10), sizes)
    clustering = Clustering.of(_labels(sizes))
    seen: set[tuple[str, bool]] = set()
    paths: tuple[Procedure, ...] = ("cluster-t", "cluster-bootstrap", "cluster-permutation")
    for procedure in paths:
        for null in (-0.5, 0.0, 0.2, 0.8, 1.5):
            for alpha in (0.01, 0.05, 0.2):
                answer, _ = clustered_answer(procedure, d, clustering, alpha, null)
                excluded = answer.low > null or answer.high < null
                seen.add((procedure, excluded))
                if abs(answer.p_value - alpha) > 1e-9:
                    assert excluded == (answer.p_value <= alpha), (procedure, null, alpha)
    assert len(seen) == 6  # every path both excluded and kept a tested value


def test_exact_sign_flips_enumerate_every_cluster_pattern() -> None:
    totals = np.array([[1.5, -0.5, 2.0, 0.5, 3.0, 1.0]])
    sizes = np.array([2, 1, 3, 1, 4, 2], dtype=np.int64)
    flips = SignFlips.draw(6, 10_000, np.random.default_rng(0))
    assert flips.exact
    assert flips.total == 64
    null = SignFlipNull.of(totals, flips, sizes)
    for shift in (0.0, 0.1, 0.6):
        observed = abs(totals.sum() - sizes.sum() * shift)
        greater = equal = 0
        for signs in itertools.product((1.0, -1.0), repeat=6):
            value = abs(
                sum(s * (t - n * shift) for s, t, n in zip(signs, totals[0], sizes, strict=True))
            )
            if math.isclose(value, observed, rel_tol=1e-12, abs_tol=1e-12):
                equal += 1
            elif value > observed:
                greater += 1
        assert float(null.p(np.array([shift]))[0]) == pytest.approx((greater + equal / 2) / 64)


def test_cluster_bootstrap_resamples_whole_clusters() -> None:
    # Two clusters of constant values: every resample's mean is one of three values.
    totals = np.array([[3.0, 10.0]])  # cluster 0: three cases of 1; cluster 1: five of 2
    sizes = np.array([3, 5], dtype=np.int64)
    means = cluster_bootstrap_means(totals, sizes, 2_000, np.random.default_rng(2))
    assert set(np.round(means[0], 12)) == {1.0, 2.0, round(13.0 / 8.0, 12)}
    again = cluster_bootstrap_means(totals, sizes, 2_000, np.random.default_rng(2))
    assert np.array_equal(means, again)


def test_a_case_without_a_cluster_is_its_own() -> None:
    clustering = Clustering.of(["doc1", None, "doc1", "doc2", None, "doc2", "doc2"])
    assert clustering.count == 4
    assert clustering.own == 2
    assert clustering.sizes.tolist() == [2, 1, 3, 1]


def test_too_few_clusters_are_refused_with_the_number_needed() -> None:
    assert clusters_needed(0.05) == 6  # 2/2^5 = 0.0625 > 0.05 >= 2/2^6
    assert clusters_needed(0.1) == 5
    assert clusters_needed(0.01) == 8
    refuse_too_few(Clustering.of(_labels([2] * 6)), 0.05, "check 'x'")
    with pytest.raises(InputError, match=r"12 cases in 5 clusters.*at least 6"):
        refuse_too_few(Clustering.of(_labels([2, 2, 3, 3, 2])), 0.05, "check 'x'")


def test_no_spread_gives_a_point_and_an_exact_p() -> None:
    clustering = Clustering.of(_labels([2, 3, 2, 1, 1, 1]))
    answer, _ = clustered_answer("cluster-t", np.full(10, 0.25), clustering, 0.05)
    assert (answer.low, answer.high, answer.p_value) == (0.25, 0.25, 0.0)
    same, _ = clustered_answer("cluster-t", np.full(10, 0.25), clustering, 0.05, null=0.25)
    assert same.p_value == 1.0
