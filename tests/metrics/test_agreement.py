"""Weighted κ and Spearman's ρ against hand-worked values, the matrix definition, and scipy."""

from __future__ import annotations

import math
import random

import pytest

from evalkit.errors import MetricError
from evalkit.metrics.agreement import agreement, spearman, weighted_kappa


def test_hand_worked_one_swap() -> None:
    # x = 1..5, y swaps the last two.  Quadratic: Σ(x-y)² = 2; Σx² = Σy² = 55,
    # ΣxΣy/n = 45, so κ = 1 - 2/(55+55-90) = 0.9.  Linear: Σ|x-y| = 2; over all
    # 25 pairs Σ|a-b| = 40, /n = 8, so κ = 1 - 2/8 = 0.75.  Spearman: d² = 2,
    # ρ = 1 - 6·2/(5·24) = 0.9.
    x, y = [1, 2, 3, 4, 5], [1, 2, 3, 5, 4]
    assert weighted_kappa(x, y) == pytest.approx(0.9, abs=1e-12)
    assert weighted_kappa(x, y, "linear") == pytest.approx(0.75, abs=1e-12)
    assert spearman(x, y) == pytest.approx(0.9, abs=1e-12)


def test_hand_worked_with_ties() -> None:
    # Cells (1,1) (1,2) (2,2) (2,2): observed disagreement 1/4; marginals (½, ½) and
    # (¼, ¾) expect ½·¾ + ½·¼ = ½, so κ = 1 - (1/4)/(1/2) = 0.5 for both weightings
    # (two adjacent grades weigh 1 either way).  Mid-ranks x: 1.5 1.5 3.5 3.5, y: 1 3 3 3;
    # centred products sum to 2, squares to 4 and 3: ρ = 2/√12 = 1/√3.
    x, y = [1, 1, 2, 2], [1, 2, 2, 2]
    assert weighted_kappa(x, y) == pytest.approx(0.5, abs=1e-12)
    assert weighted_kappa(x, y, "linear") == pytest.approx(0.5, abs=1e-12)
    assert spearman(x, y) == pytest.approx(1 / math.sqrt(3), abs=1e-12)


def test_perfect_and_reversed() -> None:
    assert weighted_kappa([1, 3, 5], [1, 3, 5]) == 1.0
    assert spearman([1, 3, 5], [5, 3, 1]) == pytest.approx(-1.0)
    # a reversed 1..5 scale: Σ(x-y)² = 40, Σx² + Σy² - 2·45 = 20 → κ = 1 - 40/20 = -1
    assert weighted_kappa([1, 2, 3, 4, 5], [5, 4, 3, 2, 1]) == pytest.approx(-1.0)


def test_constant_grades_are_undefined_not_a_number() -> None:
    with pytest.raises(MetricError, match="undefined: one grader gave every case the same"):
        weighted_kappa([3, 3, 3], [3, 3, 3])
    with pytest.raises(MetricError, match="Spearman's ρ is undefined"):
        spearman([3, 3, 3], [1, 2, 3])
    with pytest.raises(MetricError, match="at least 2"):
        weighted_kappa([1], [1])
    with pytest.raises(MetricError, match="paired grades"):
        spearman([1, 2], [1, 2, 3])


def _kappa_by_matrix(x: list[int], y: list[int], weights: str, k: int) -> float:
    """Cohen (1968) from the K×K tables of observed and chance proportions."""
    n = len(x)
    obs = [[0.0] * k for _ in range(k)]
    for a, b in zip(x, y, strict=True):
        obs[a - 1][b - 1] += 1 / n
    pa = [sum(row) for row in obs]
    pb = [sum(obs[i][j] for i in range(k)) for j in range(k)]
    w = [
        [((i - j) / (k - 1)) ** 2 if weights == "quadratic" else abs(i - j) / (k - 1)]
        for i in range(k)
        for j in range(k)
    ]
    num = sum(w[i * k + j][0] * obs[i][j] for i in range(k) for j in range(k))
    den = sum(w[i * k + j][0] * pa[i] * pb[j] for i in range(k) for j in range(k))
    return 1 - num / den


def test_equals_the_matrix_definition_on_random_grades() -> None:
    rng = random.Random(11)
    for _ in range(300):
        k = rng.randint(2, 7)
        n = rng.randint(2, 40)
        x = [rng.randint(1, k) for _ in range(n)]
        y = [min(k, max(1, v + rng.randint(-2, 2))) for v in x]
        if len(set(x)) == 1 and len(set(y)) == 1:
            continue
        for weights in ("quadratic", "linear"):
            try:
                want = _kappa_by_matrix(x, y, weights, k)
            except ZeroDivisionError:
                continue
            assert weighted_kappa(x, y, weights) == pytest.approx(want, abs=1e-9)


def test_spearman_equals_scipy() -> None:
    stats = pytest.importorskip("scipy.stats")
    rng = random.Random(5)
    for _ in range(300):
        n = rng.randint(3, 50)
        x = [rng.randint(1, 5) for _ in range(n)]
        y = [rng.randint(1, 5) for _ in range(n)]
        if len(set(x)) == 1 or len(set(y)) == 1:
            continue
        want = float(stats.spearmanr(x, y).statistic)
        assert spearman(x, y) == pytest.approx(want, abs=1e-12)


def test_bootstrap_interval_is_seeded_and_brackets_the_estimate() -> None:
    rng = random.Random(2)
    human = [rng.randint(1, 5) for _ in range(60)]
    judge = [min(5, max(1, h + rng.choice([-1, 0, 0, 1]))) for h in human]
    one = agreement(judge, human, n_resamples=500, seed=3)
    two = agreement(judge, human, n_resamples=500, seed=3)
    assert one == two
    for stat in (one.kappa_quadratic, one.kappa_linear, one.spearman):
        assert stat.low <= stat.estimate <= stat.high
        assert stat.usable_resamples == 500
    assert one.kappa_quadratic.estimate == weighted_kappa(judge, human)
    assert "weighted κ (quadratic)" in one.line()
    assert "95% percentile bootstrap over cases, 500 resamples" in one.line()


def test_perfect_agreement_has_a_degenerate_interval() -> None:
    grades = [1, 2, 3, 4, 5, 3, 2]
    result = agreement(grades, grades, n_resamples=200)
    assert (result.kappa_quadratic.low, result.kappa_quadratic.high) == (1.0, 1.0)


def test_interval_covers_the_truth_by_construction() -> None:
    # Judge = human + independent noise; the population κ is computed on a huge sample,
    # and the 90% interval from 80-case samples should cover it about 90% of the time.
    rng = random.Random(9)

    def draw(n: int) -> tuple[list[int], list[int]]:
        human = [rng.randint(1, 5) for _ in range(n)]
        judge = [min(5, max(1, h + rng.choice([-2, -1, 0, 0, 0, 1]))) for h in human]
        return judge, human

    truth = weighted_kappa(*draw(200_000))
    trials, covered = 120, 0
    for seed in range(trials):
        result = agreement(*draw(80), n_resamples=400, confidence=0.9, seed=seed)
        covered += result.kappa_quadratic.low <= truth <= result.kappa_quadratic.high
    # 120 trials at p = 0.9: a 3-sigma band is about [0.82, 0.98].
    assert 0.80 <= covered / trials <= 0.99
