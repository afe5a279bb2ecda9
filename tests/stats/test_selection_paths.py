"""The O(n) paths give the same numbers as the direct ones (#27).

* ``NearestRankAggregate.bootstrap`` (latency_pXX per resample) counts only the
  sorted tail; it equals counting every case position, including the resamples
  whose rank falls below the tail and take the full count;
* the detectable-regression simulation summarises each resampled world of a metric
  with few levels from its counts per level: the same mean and sd as the cases give.
"""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.stats.aggregates import NearestRankAggregate
from evalkit.stats.power import Levels


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


@pytest.mark.parametrize("n", [3, 20, 23, 200, 5_000])
@pytest.mark.parametrize("shape", ["levels", "binary", "mostly_tied", "one_value"])
def test_world_summaries_from_level_counts_equal_those_of_the_cases(n: int, shape: str) -> None:
    rng = np.random.default_rng(n)
    if shape == "levels":
        sample = (rng.integers(0, 11, n) - rng.integers(0, 11, n)) / 10
    elif shape == "binary":
        sample = rng.integers(0, 2, n) - rng.integers(0, 2, n) * 1.0
    elif shape == "mostly_tied":
        sample = np.where(rng.random(n) < 0.6, 0.0, rng.integers(1, 4, n) / 3)
    else:
        sample = np.full(n, 0.25)
    centred = sample - sample.mean()
    draws = rng.integers(0, n, size=(60, n))
    levels = Levels.of(centred)
    counted = levels.world_mean_sd(draws, counted=True)
    direct = levels.world_mean_sd(draws, counted=False)
    worlds = centred[draws]
    reference = (worlds.mean(axis=1), worlds.std(axis=1, ddof=1))
    for got in (counted, direct):
        for value, want in zip(got, reference, strict=True):
            assert np.allclose(value, want, rtol=1e-9, atol=1e-12)
