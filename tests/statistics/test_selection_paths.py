"""The O(n) selection paths give today's numbers bit for bit (#27).

* ``stats.selection.tied_share`` (the tie share ``auto`` reads, per simulated eval)
  decides ``share < AUTO_MAX_TIED_SHARE`` exactly as counting every value does, and
  equals the exact share whenever that is at or above the threshold;
* ``NearestRankAggregate.bootstrap`` (latency_pXX per resample) counts only the
  sorted tail; it equals counting every case position, including the resamples
  whose rank falls below the tail and take the full count.
"""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.stats.aggregates import NearestRankAggregate
from evalkit.stats.procedures import (
    AUTO_MAX_TIED_SHARE,
    Moments,
    TieSpikes,
    auto_corrects,
    auto_drops_guard,
    counted_moments,
    tie_spikes,
)
from evalkit.stats.selection import (
    code_counts,
    resampled_tied_share,
    shortest_run_at,
    tied_share,
    value_codes,
)


def exact_share(d: np.ndarray) -> np.ndarray:
    return np.array([np.unique(row, return_counts=True)[1].max() / d.shape[1] for row in d])


@pytest.mark.parametrize("n", [2, 3, 4, 5, 10, 11, 64, 257])
@pytest.mark.parametrize("at_least", [AUTO_MAX_TIED_SHARE, 0.3, 0.5, 0.75, 1.0])
def test_tied_share_decides_the_threshold_exactly(n: int, at_least: float) -> None:
    rng = np.random.default_rng(n)
    rows = []
    for distinct in (1, 2, 3, n):
        rows.append(rng.integers(0, distinct, size=n).astype(np.float64))
        # a value planted at exactly the threshold's count, and one case short of it
        for count in (shortest_run_at(at_least, n), shortest_run_at(at_least, n) - 1):
            row = rng.normal(size=n)
            row[rng.permutation(n)[: max(0, count)]] = 0.0
            rows.append(row)
    d = np.array(rows)
    d[0, 0] = -0.0  # -0.0 and 0.0 are one value, as np.unique has them
    got, exact = tied_share(d, at_least), exact_share(d)
    assert np.array_equal(got < at_least, exact < at_least)
    high = exact >= at_least
    assert np.array_equal(got[high], exact[high])
    assert np.all(got <= exact)


@pytest.mark.parametrize("n", [2, 3, 10, 64, 257])
@pytest.mark.parametrize("distinct", [1, 2, 3, 0])
def test_the_tied_share_of_resamples_is_counted_exactly(n: int, distinct: int) -> None:
    # The detectable-regression simulation counts its worlds' ties by value code (#27).
    rng = np.random.default_rng(n * 10 + distinct)
    sample = rng.integers(0, distinct, size=n) / 4 if distinct else rng.normal(size=n)
    sample[0] = -0.0 if sample[0] == 0.0 else sample[0]  # one value with 0.0
    draws = rng.integers(0, n, size=(50, n))
    draws[0] = 0  # a world of one value
    _, codes = value_codes(sample)
    got = resampled_tied_share(codes, draws)
    assert np.array_equal(got, exact_share(sample[draws]))
    high = got >= AUTO_MAX_TIED_SHARE
    assert np.array_equal(
        high, tied_share(sample[draws], AUTO_MAX_TIED_SHARE) >= AUTO_MAX_TIED_SHARE
    )


def test_shortest_run_is_the_first_count_whose_share_reaches_the_threshold() -> None:
    for n in range(1, 300):
        for share in (0.05, 0.1, 1 / 3, 0.5, 0.7, 1.0):
            run = shortest_run_at(share, n)
            assert run / n >= share or run == n
            assert run == 1 or (run - 1) / n < share


@pytest.mark.parametrize("n", [256, 1000, 4099])
@pytest.mark.parametrize("p", [50, 90, 95, 99, 100])
def test_the_tail_count_equals_the_full_count(n: int, p: float) -> None:
    rng = np.random.default_rng(n + int(p))
    a = np.round(rng.lognormal(4.0, 0.5, n))  # ties among the values
    b = rng.lognormal(4.0, 0.4, n)
    agg = NearestRankAggregate("latency_p", p, a, b)
    positions = rng.integers(0, n, size=(40, n))
    # resamples whose rank falls below the tail: the smallest cases drawn again and again
    positions[0] = np.argsort(a)[0]
    positions[1, : n - 3] = np.argsort(b)[:2].repeat(n)[: n - 3]
    assert np.array_equal(agg.bootstrap(positions), agg._counted(positions))


def test_the_tail_is_used_for_a_p95_of_many_cases() -> None:
    agg = NearestRankAggregate("latency_p95", 95, np.arange(1000.0), np.arange(1000.0))
    assert 900 < agg._start < 950
    few = NearestRankAggregate("latency_p95", 95, np.arange(100.0), np.arange(100.0))
    assert few._start == 0  # few cases: every position is counted


def _trimmed_g1_by_sorting(centred: np.ndarray, g1: np.ndarray, deep: bool = False) -> np.ndarray:
    """The reference: scipy's g1 of the sorted cases left once the side's k largest go
    (k = trim_count(n), or deep_trim_count(n) for the deeper trim)."""
    from scipy.stats import skew  # type: ignore[import-untyped]  # dev-only, no stubs

    from evalkit.stats.procedures import deep_trim_count, trim_count

    n = centred.shape[1]
    keep = n - (deep_trim_count(n) if deep else trim_count(n))
    if keep < 3:
        return np.zeros(centred.shape[0])
    out = []
    for row, g in zip(centred, g1, strict=True):
        side = -1.0 if g < 0.0 else 1.0
        kept = np.sort(row * side)[:keep]
        out.append(side * skew(kept) if np.ptp(kept) > 0 else 0.0)
    return np.array(out)


@pytest.mark.parametrize("n", [4, 30, 257, 1999, 2000, 5000, 20_000])
def test_the_trimmed_skewness_by_selection_equals_the_sorted_one(n: int) -> None:
    # Statistically identical, not bit for bit: the kept cases are summed in another
    # order, so the moments may differ in the last bits, never in what auto decides.
    from evalkit.stats.procedures import (
        AUTO_MIN_DEEP_TRIMMED_SKEW,
        AUTO_MIN_TRIMMED_SKEW,
        Moments,
        TieSpikes,
    )

    rng = np.random.default_rng(n)
    d = np.concatenate(
        [
            rng.exponential(size=(20, n)),
            -rng.exponential(size=(20, n)),
            rng.standard_t(2, size=(20, n)),
            rng.integers(-2, 3, size=(20, n)).astype(np.float64),
        ]
    )
    m = Moments.of(d, spikes=TieSpikes.none(d.shape[0]))  # every case counted alike
    centred = d - d.mean(axis=1, keepdims=True)
    g1 = np.where(m.skewness != 0.0, m.skewness, 0.0)
    expected = _trimmed_g1_by_sorting(centred, g1)
    # From 2,000 cases the kept moments are the row's power sums less the set-aside
    # cases', so a Student t₂ row, whose set-aside cases dominate those sums, keeps
    # ~1e-12 of relative rounding (1.2e-12 under numpy 2.0's summation order).
    rtol = 1e-10 if n >= 2000 else 1e-12
    assert np.allclose(m.trimmed_skewness, expected, rtol=rtol, atol=1e-15)
    assert np.array_equal(
        np.abs(m.trimmed_skewness) >= AUTO_MIN_TRIMMED_SKEW,
        np.abs(expected) >= AUTO_MIN_TRIMMED_SKEW,
    )
    deep = _trimmed_g1_by_sorting(centred, g1, deep=True)
    assert np.allclose(m.deep_trimmed_skewness, deep, rtol=rtol, atol=1e-15)
    assert np.array_equal(
        np.abs(m.deep_trimmed_skewness) >= AUTO_MIN_DEEP_TRIMMED_SKEW,
        np.abs(deep) >= AUTO_MIN_DEEP_TRIMMED_SKEW,
    )


def test_a_tail_threshold_that_catches_too_few_cases_falls_back_to_the_whole_row() -> None:
    # From 2,000 cases the set-aside cases are found above a threshold read from every
    # 16th case (#27); here the largest cases sit exactly there, so it catches too few.
    from evalkit.stats.procedures import Moments, trim_count

    n = 3200
    rng = np.random.default_rng(1)
    row = rng.normal(size=n)
    row[::16] = 10.0 + rng.random(n // 16)
    d = np.stack([row, -row])
    m = Moments.of(d)
    k = trim_count(n)
    rank = n // 16 - 1 - int(1.25 * k / 16) - 4  # the sample's rank the threshold is read at
    assert np.count_nonzero(row > np.sort(row[::16])[rank]) < k  # so the whole row is used
    centred = d - d.mean(axis=1, keepdims=True)
    expected = _trimmed_g1_by_sorting(centred, m.skewness)
    assert np.allclose(m.trimmed_skewness, expected, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("n", [3, 20, 23, 200, 5_000])
@pytest.mark.parametrize(
    "shape", ["levels", "binary", "mostly_tied", "one_value", "spike_on_levels"]
)
def test_moments_from_level_counts_equal_the_moments_of_the_cases(n: int, shape: str) -> None:
    # The detectable-regression simulation summarises resamples of a metric with few
    # levels from their counts per level (#27): the same summaries, to rounding.
    rng = np.random.default_rng(n)
    if shape == "levels":
        sample = (rng.integers(0, 11, n) - rng.integers(0, 11, n)) / 10
    elif shape == "binary":
        sample = rng.integers(0, 2, n) - rng.integers(0, 2, n) * 1.0
    elif shape == "mostly_tied":
        sample = np.where(rng.random(n) < 0.6, 0.0, rng.integers(1, 4, n) / 3)
    elif shape == "spike_on_levels":  # 0 far above its neighbours, 12 other levels
        sample = np.where(rng.random(n) < 0.4, 0.0, rng.integers(-6, 7, n) / 4)
    else:
        sample = np.full(n, 0.25)
    draws = rng.integers(0, n, size=(60, n))
    levels, codes = value_codes(sample)
    counts = code_counts(codes, len(levels), draws).astype(float)
    # every case counted alike, and the eval's own tie spike set aside in every resample
    # as the gate's simulation does
    found = tie_spikes(sample[None, :])
    spikes = TieSpikes.repeat(
        float(found.value[0]), float(found.kept[0]), bool(found.few_levels[0]), 60
    )
    if shape == "spike_on_levels" and n >= 20:
        assert found.any()
        assert not found.few_levels[0]
    for named in (TieSpikes.none(60), spikes):
        counted = counted_moments(levels, counts, n, named)
        direct = Moments.of(sample[draws], spikes=named)
        assert counted.n == direct.n
        fields = ("mean", "sd", "skewness", "trimmed_skewness", "deep_trimmed_skewness", "skew_n")
        for field in fields:
            got, want = getattr(counted, field), getattr(direct, field)
            assert np.allclose(got, want, rtol=1e-9, atol=1e-12), field
        assert np.array_equal(auto_corrects(counted), auto_corrects(direct))
        assert np.array_equal(auto_drops_guard(counted), auto_drops_guard(direct))
        if not named.any():
            assert np.array_equal(counted.tied_share, exact_share(sample[draws]))
