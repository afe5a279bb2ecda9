"""Calibration suite: false-positive rates under true nulls, per method, n and shape.

Every trial draws a fresh eval in which the two systems are equally good, runs
the test at alpha = 0.05 and records whether it cried "significant".  A
calibrated test does so about 5% of the time.

Runs in CI in a fast mode (500 trials per cell, 300 resamples; ~10 s).  The full run
(2,000 trials per cell, +-1 point at 95%; 1,000 resamples) that produced
``docs/calibration.md``::

    EVALKIT_CALIBRATION=full uv run pytest tests/statistics/test_calibration.py -s

Bands are wide enough that a correct implementation cannot miss them at the
fast mode's sample size (3.5 standard errors around the measured behaviour of
each method), and narrow enough to catch the classic bugs: a one-sided p
(about 10% or 2.5%), an uncentred bootstrap null (about 0%), unpaired
resampling (about 0%).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

import numpy as np
import pytest
from numpy.typing import NDArray

from evalkit.significance import compare_metrics

FloatArray = NDArray[np.float64]

FULL: Final = os.environ.get("EVALKIT_CALIBRATION", "").lower() == "full"
TRIALS: Final = 2000 if FULL else 500
RESAMPLES: Final = 1000 if FULL else 300
ALPHA: Final = 0.05
SIZES: Final = (20, 50, 100, 300)
METHODS: Final = ("bootstrap", "permutation", "t")


def continuous_with_ties(n: int, rng: np.random.Generator) -> FloatArray:
    """Graded scores (a 0.1 grid, clipped at 0 and 1) of two equally good systems."""
    difficulty = rng.beta(2, 2, n)
    a = np.clip(np.round(difficulty + rng.normal(0, 0.2, n), 1), 0, 1)
    b = np.clip(np.round(difficulty + rng.normal(0, 0.2, n), 1), 0, 1)
    return a - b


def skewed(n: int, rng: np.random.Generator) -> FloatArray:
    """Mean-zero, skewness-2 differences: many small losses, a few large wins."""
    return rng.exponential(1.0, n) - 1.0


def binary(n: int, rng: np.random.Generator) -> FloatArray:
    """Hit/miss metrics (recall@1) of two equally good systems on cases of mixed difficulty."""
    p = rng.beta(0.5, 0.5, n)
    return (rng.random(n) < p).astype(np.float64) - (rng.random(n) < p).astype(np.float64)


SHAPES: Final[dict[str, Callable[[int, np.random.Generator], FloatArray]]] = {
    "continuous+ties": continuous_with_ties,
    "skewed": skewed,
    "binary": binary,
}


@dataclass(frozen=True)
class Cell:
    shape: str
    n: int
    method: str
    rate: float
    trials: int


def measure(shape: str, n: int) -> dict[str, float]:
    rng = np.random.default_rng([n, list(SHAPES).index(shape)])
    hits = dict.fromkeys(METHODS, 0)
    for trial in range(TRIALS):
        d = SHAPES[shape](n, rng)
        both = compare_metrics({"d": d}, n_resamples=RESAMPLES, seed=trial, method="permutation")
        hits["bootstrap"] += (both["d"].ci_low > 0) or (both["d"].ci_high < 0)
        hits["permutation"] += both["d"].significant
        hits["t"] += compare_metrics({"d": d}, n_resamples=1, method="t")["d"].significant
    return {m: h / TRIALS for m, h in hits.items()}


@pytest.fixture(scope="module")
def table() -> dict[tuple[str, int, str], Cell]:
    cells: dict[tuple[str, int, str], Cell] = {}
    for shape in SHAPES:
        for n in SIZES:
            for method, rate in measure(shape, n).items():
                cells[shape, n, method] = Cell(shape, n, method, rate, TRIALS)
    lines = [
        f"false-positive rate at alpha = {ALPHA} ({TRIALS} trials per cell, "
        f"{RESAMPLES} resamples; {'full' if FULL else 'fast'} mode)",
        f"{'shape':<16} {'n':>4} " + " ".join(f"{m:>12}" for m in METHODS),
    ]
    for shape in SHAPES:
        for n in SIZES:
            rates = " ".join(f"{cells[shape, n, m].rate:>11.1%} " for m in METHODS)
            lines.append(f"{shape:<16} {n:>4} {rates}")
    print("\n" + "\n".join(lines))
    return cells


# The range of false-positive rates each method showed across n = 20..300 in the full run
# (docs/calibration.md), widened by ~1 point for that run's own sampling error.  A cell
# passes within 3.5 standard errors (of this run's trial count) of the range.
EXPECTED: Final[dict[str, tuple[float, float]]] = {
    "continuous+ties/bootstrap": (0.033, 0.080),
    "continuous+ties/permutation": (0.034, 0.069),
    "continuous+ties/t": (0.032, 0.069),
    "skewed/bootstrap": (0.052, 0.112),
    "skewed/permutation": (0.047, 0.090),
    "skewed/t": (0.046, 0.089),
    "binary/bootstrap": (0.030, 0.065),
    "binary/permutation": (0.018, 0.055),
    "binary/t": (0.032, 0.060),
}


def slack(rate: float, trials: int) -> float:
    return 3.5 * math.sqrt(rate * (1 - rate) / trials)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_false_positive_rate_is_in_band(
    table: dict[tuple[str, int, str], Cell], shape: str, n: int, method: str
) -> None:
    cell = table[shape, n, method]
    low, high = EXPECTED[f"{shape}/{method}"]
    low, high = low - slack(low, TRIALS), high + slack(high, TRIALS)
    assert low <= cell.rate <= high, (
        f"{shape}, n={n}, {method}: {cell.rate:.1%} false positives outside [{low:.1%}, {high:.1%}]"
    )


@pytest.mark.parametrize(
    ("method", "low", "high"),
    [("bootstrap", 0.040, 0.070), ("permutation", 0.035, 0.060), ("t", 0.040, 0.060)],
)
def test_pooled_symmetric_nulls_hold_the_nominal_level(
    table: dict[tuple[str, int, str], Cell], method: str, low: float, high: float
) -> None:
    """Pooled over n and the two symmetric shapes (8 cells): tight enough to catch a
    one-sided p-value (~10% or ~2.5%), an uncentred null or unpaired resampling (~0%)."""
    rates = [table[s, n, method].rate for s in ("continuous+ties", "binary") for n in SIZES]
    pooled = float(np.mean(rates))
    trials = TRIALS * len(rates)
    assert low - slack(low, trials) <= pooled <= high + slack(high, trials), f"{pooled:.2%}"


def test_the_bootstrap_over_rejection_shrinks_with_n(
    table: dict[tuple[str, int, str], Cell],
) -> None:
    """The percentile bootstrap's excess at n = 20 is larger than at n = 300 (pooled)."""
    small = np.mean([table[s, 20, "bootstrap"].rate for s in ("continuous+ties", "skewed")])
    large = np.mean([table[s, 300, "bootstrap"].rate for s in ("continuous+ties", "skewed")])
    assert small > large
