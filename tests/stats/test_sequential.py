"""Anytime-valid confidence sequences (evalkit.stats.sequential): invariants and coverage."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evalkit.stats.rule import fails
from evalkit.stats.sequential import (
    confidence_sequence,
    settle_comparison,
    settle_threshold,
)
from evalkit.stats.tdist import t_quantile
from helpers.scripts import load_script


def _data(seed: int, n: int = 400) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(rng.normal(0.05, 0.3, n), -1.0, 1.0)


@pytest.mark.parametrize("bounded", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_bounds_never_move_back_and_the_interval_never_inverts(bounded: bool, seed: int) -> None:
    cs = confidence_sequence(
        _data(seed), 0.05, value_range=(-1.0, 1.0) if bounded else None, looks=range(5, 401, 5)
    )
    assert np.all(np.diff(cs.low) >= 0)
    assert np.all(np.diff(cs.high) <= 0)
    assert np.all(cs.low <= cs.high)


@pytest.mark.parametrize("bounded", [False, True])
def test_negating_the_values_mirrors_the_sequence(bounded: bool) -> None:
    x = _data(11)
    kw = {"value_range": (-1.0, 1.0)} if bounded else {}
    a = confidence_sequence(x, 0.05, **kw)  # type: ignore[arg-type]
    b = confidence_sequence(-x, 0.05, **kw)  # type: ignore[arg-type]
    assert np.allclose(a.low, -b.high)
    assert np.allclose(a.high, -b.low)


def test_shifting_the_values_shifts_the_asymptotic_sequence() -> None:
    x = _data(12)
    a = confidence_sequence(x, 0.05, prior_variance=0.5)
    b = confidence_sequence(x + 3.0, 0.05, prior_variance=0.5)
    assert np.allclose(a.low + 3.0, b.low)
    assert np.allclose(a.high + 3.0, b.high)


@pytest.mark.parametrize("bounded", [False, True])
def test_anytime_validity_costs_width_against_the_fixed_n_t_interval(bounded: bool) -> None:
    x = _data(13, 1000)
    cs = confidence_sequence(x, 0.05, value_range=(-1.0, 1.0) if bounded else None)
    for n in (50, 200, 1000):
        half_t = t_quantile(0.975, n - 1) * float(x[:n].std(ddof=1)) / math.sqrt(n)
        assert cs.high[n - 1] - cs.low[n - 1] > 2.0 * half_t


def test_the_bounded_sequence_stays_inside_the_declared_range() -> None:
    x = np.ones(30)
    cs = confidence_sequence(x, 0.05, value_range=(0.0, 1.0))
    assert np.all(cs.high <= 1.0)
    assert np.all(cs.low >= 0.0)
    with pytest.raises(ValueError, match="outside the declared range"):
        confidence_sequence(x * 2, 0.05, value_range=(0.0, 1.0))


def test_a_paired_difference_of_a_metric_in_a_range_is_bounded_by_twice_it() -> None:
    d = np.array([-1.0, 1.0, 0.0, 0.5] * 20)
    cs = confidence_sequence(d, 0.05, value_range=(-1.0, 1.0))
    assert cs.construction == "empirical-bernstein"
    assert cs.low[-1] >= -1.0
    assert cs.high[-1] <= 1.0


def test_a_run_of_ties_does_not_collapse_the_regularised_sequence_to_a_point() -> None:
    cs = confidence_sequence(np.zeros(50), 0.05, prior_variance=1.0, looks=[50])
    assert cs.high[0] - cs.low[0] > 0.05


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError, match="alpha"):
        confidence_sequence(np.zeros(3), 1.5)
    with pytest.raises(ValueError, match="finite"):
        confidence_sequence(np.array([0.0, math.nan]), 0.05)
    with pytest.raises(ValueError, match="looks"):
        confidence_sequence(np.zeros(3), 0.05, looks=[2, 1])


@pytest.mark.parametrize(
    ("low", "high"),
    [(-0.3, -0.1), (-0.1, 0.2), (0.05, 0.2), (-0.04, 0.01), (-0.2, -0.06), (0.0, 0.0)],
)
@pytest.mark.parametrize("effect", [None, 0.05])
def test_settling_is_symmetric_in_polarity_and_fails_as_the_gates_rule(
    low: float, high: float, effect: float | None
) -> None:
    beyond = effect or 0.0
    up = settle_comparison(low, high, higher_is_better=True, fail_beyond=beyond, pass_within=effect)
    down = settle_comparison(
        -high, -low, higher_is_better=False, fail_beyond=beyond, pass_within=effect
    )
    assert up == down
    tested = -(effect or 0.0)
    assert (up == "fail") == fails("no_significant_regression", low, high, tested, True)
    if effect is None:
        assert up != "pass"  # without a tolerance a check can only settle by failing


def test_threshold_settles_on_its_own_mean() -> None:
    assert settle_threshold(0.61, 0.7, op=">=", threshold=0.6) == "pass"
    assert settle_threshold(0.5, 0.59, op=">=", threshold=0.6) == "fail"
    assert settle_threshold(0.55, 0.65, op=">=", threshold=0.6) is None
    assert settle_threshold(0.5, 0.59, op="<=", threshold=0.6) == "pass"
    assert settle_threshold(0.5, 0.59, op="==", threshold=0.6) == "fail"
    assert settle_threshold(0.5, 0.7, op="==", threshold=0.6) is None


@pytest.mark.parametrize("bounded", [False, True])
def test_coverage_holds_at_every_look_on_a_small_simulation(bounded: bool) -> None:
    rng = np.random.default_rng(3)
    trials, n = 300, 600
    misses = 0
    for _ in range(trials):
        x = rng.choice([-1.0, 0.0, 1.0], n, p=[0.2, 0.6, 0.2])
        cs = confidence_sequence(
            x,
            0.05,
            value_range=(-1.0, 1.0) if bounded else None,
            prior_variance=None if bounded else 1.0,
            looks=range(20, n + 1, 20),
        )
        misses += bool(cs.low[-1] > 0 or cs.high[-1] < 0)
    assert misses / trials <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials)


@pytest.mark.slow
def test_monitored_false_fails_and_wrong_passes_stay_within_alpha_over_2() -> None:
    sim = load_script("scripts/calibration/early_stopping.py")
    trials = 600
    limit = 0.025 + 2 * math.sqrt(0.025 * 0.975 / trials)  # nominal plus two standard errors
    for construction in sim.DIFF_RANGE:
        for rates in (
            sim.false_fails(trials, 1000, 50, 1, construction),
            sim.false_fails(trials, 100, 10, 2, construction),
            sim.wrong_passes(trials, 1000, 10, 3, construction),
        ):
            assert max(rates.values()) <= limit, (construction, rates)


@pytest.mark.slow
def test_replayed_real_runs_stop_on_the_full_runs_verdict() -> None:
    sim = load_script("scripts/calibration/early_stopping.py")
    for construction in sim.DIFF_RANGE:
        clear, agree, settled, _share = sim.replays(3, 10, 0.01, 4, construction)
        assert clear > 1000
        assert agree / clear >= 0.95
        assert settled > 0
