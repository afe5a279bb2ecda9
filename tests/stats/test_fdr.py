"""Benjamini-Hochberg and Benjamini-Yekutieli (evalkit.stats.fdr): known answers, a brute
force written from the definition, and simulations of what each guarantees."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from evalkit.stats.fdr import FdrMethod, choose_method, harmonic, one_sided_p, step_up


def test_bh_hand_computed_step_up_rejects_past_a_gap() -> None:
    # m = 4, q = 0.05: thresholds 0.0125, 0.025, 0.0375, 0.05.  p(2) = 0.026 misses its
    # own threshold but p(3) = 0.030 meets 0.0375, so the step-up rejects all three.
    result = step_up([0.009, 0.026, 0.030, 0.9], 0.05, "bh")
    assert result.rejected == (True, True, True, False)
    assert result.level == pytest.approx(0.0375)
    # adjusted: 4p/rank = 0.036, 0.052, 0.040, 0.9, then the running minimum from the top
    assert result.adjusted == pytest.approx((0.036, 0.040, 0.040, 0.9))


def test_by_hand_computed_pays_the_harmonic_sum() -> None:
    # c(4) = 25/12, so the thresholds are 0.05·k/(4·25/12) = 0.006·k: nothing is below.
    assert harmonic(4) == pytest.approx(25 / 12)
    result = step_up([0.009, 0.026, 0.030, 0.9], 0.05, "by")
    assert result.rejected == (False, False, False, False)
    c = 25 / 12
    assert result.adjusted == pytest.approx((0.036 * c, 0.040 * c, 0.040 * c, 1.0))
    assert result.level == pytest.approx(0.05 / (4 * c))
    # with small enough p-values BY rejects too: 0.001 ≤ 0.006, 0.011 ≤ 0.012
    assert step_up([0.011, 0.001, 0.5, 0.6], 0.05, "by").rejected == (True, True, False, False)


def _brute(p: list[float], q: float, scale: float) -> tuple[tuple[bool, ...], list[float]]:
    """From the definitions: R = the largest k with at least k p-values ≤ q·k/(m·c);
    adjusted p_i = the smallest over thresholds t ≥ p_i (t a p-value) of m·c·t / #{p ≤ t}."""
    m = len(p)
    big = max(
        (k for k in range(1, m + 1) if sum(x <= q * k / (m * scale) for x in p) >= k), default=0
    )
    cut = q * big / (m * scale)
    rejected = tuple(big > 0 and x <= cut for x in p)
    adjusted = [
        min(1.0, min(m * scale * t / sum(x <= t for x in p) for t in p if t >= pi)) for pi in p
    ]
    return rejected, adjusted


@pytest.mark.parametrize("method", ["bh", "by"])
def test_step_up_equals_the_brute_force_on_random_and_tied_p_values(method: str) -> None:
    rng = np.random.default_rng(7)
    for trial in range(300):
        m = int(rng.integers(1, 12))
        p = rng.uniform(0, 0.2, m) if trial % 2 else rng.choice([0.001, 0.01, 0.02, 0.3], m)
        values = [float(x) for x in p]
        q = float(rng.choice([0.05, 0.1, 0.2]))
        scale = harmonic(m) if method == "by" else 1.0
        rejected, adjusted = _brute(values, q, scale)
        result = step_up(values, q, method)  # type: ignore[arg-type]
        assert result.rejected == rejected, (values, q)
        assert result.adjusted == pytest.approx(adjusted), (values, q)
        # rejected exactly when p ≤ level, and exactly when adjusted p ≤ q
        assert all((x <= result.level) == r for x, r in zip(values, rejected, strict=True))
        assert all((a <= q + 1e-12) == r for a, r in zip(adjusted, rejected, strict=True))


def test_refusals_and_the_empty_family() -> None:
    assert step_up([], 0.05, "bh").rejected == ()
    for bad in ([float("nan")], [1.5], [-0.1]):
        with pytest.raises(ValueError, match="p-values"):
            step_up(bad, 0.05, "bh")
    with pytest.raises(ValueError, match="strictly between"):
        step_up([0.1], 1.0, "bh")


def test_auto_takes_bh_for_disjoint_tests_and_by_for_shared_cases() -> None:
    assert choose_method("auto", [{"a", "b"}, {"c"}])[0] == "bh"
    method, why = choose_method("auto", [{"a", "b"}, {"b", "c"}])
    assert method == "by"
    assert "'b'" in why
    assert choose_method("bh", [{"a"}, {"a"}])[0] == "bh"
    assert choose_method("by", [{"a"}, {"b"}])[0] == "by"


def test_one_sided_p_is_half_on_the_bad_side() -> None:
    assert one_sided_p(0.04, -0.1, 0.0, True) == pytest.approx(0.02)
    assert one_sided_p(0.04, 0.1, 0.0, True) == pytest.approx(0.98)
    assert one_sided_p(0.04, 0.1, 0.0, False) == pytest.approx(0.02)
    assert one_sided_p(1.0, 0.0, 0.0, True) == pytest.approx(0.5)


def _fdr(p: np.ndarray, null: np.ndarray, q: float, method: FdrMethod) -> tuple[float, float]:
    """(FDR, SE) over the rows of p: the mean of V / max(R, 1)."""
    shares = []
    for row in p:
        rejected = np.array(step_up(row, q, method).rejected, dtype=bool)
        false, found = int(np.count_nonzero(rejected & null)), int(np.count_nonzero(rejected))
        shares.append(false / max(1, found))
    values = np.array(shares)
    return float(values.mean()), float(values.std(ddof=1) / math.sqrt(values.size))


@pytest.mark.parametrize("m0", [20, 15])
def test_bh_fdr_is_q_times_null_share_for_independent_tests(m0: int) -> None:
    """Independent uniform nulls: BH's FDR is exactly q·m0/m, whatever the true effects."""
    rng = np.random.default_rng(28)
    m, trials, q = 20, 4_000, 0.05
    p = rng.uniform(size=(trials, m))
    # the false nulls: strong one-sided effects, z = 3
    effect = 3.0 + rng.standard_normal((trials, m - m0))
    # the normal upper tail, 1 - Φ(z) = erfc(z/√2)/2
    if m0 < m:
        p[:, m0:] = 0.5 * np.vectorize(math.erfc)(effect / math.sqrt(2.0))
    null = np.arange(m) < m0
    rate, se = _fdr(p, null, q, "bh")
    assert abs(rate - q * m0 / m) < 4 * se + 1e-3, (rate, se)


def test_by_holds_q_under_negative_dependence_where_it_is_needed() -> None:
    """Pairs of perfectly negatively correlated one-sided tests (p and 1 − p): BY ≤ q."""
    rng = np.random.default_rng(5)
    u = rng.uniform(size=(4_000, 10))
    p = np.concatenate([u, 1.0 - u], axis=1)
    rate, se = _fdr(p, np.ones(20, dtype=bool), 0.05, "by")
    assert rate <= 0.05 + 3 * se


def test_brute_force_helper_agrees_with_the_textbook_definition_on_all_subsets() -> None:
    """The brute force itself, against "the largest rejected set S with every p in S ≤
    q·|S|/m" enumerated over every subset of a small family."""
    p = [0.004, 0.02, 0.021, 0.04, 0.3]
    q, m = 0.05, len(p)
    best: tuple[int, ...] = ()
    for size in range(m + 1):
        for subset in itertools.combinations(range(m), size):
            if all(p[i] <= q * size / m for i in subset) and size > len(best):
                best = subset
    rejected, _ = _brute(p, q, 1.0)
    assert tuple(i for i, r in enumerate(rejected) if r) == best
