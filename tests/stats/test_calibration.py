"""Calibration: the gate's default procedure (paired t) holds the targets it claims (#23, #43).

A reduced, fixed-seed version of ``uv run python scripts/calibration/calibrate.py`` (which
regenerates docs/calibration.md). Targets for the default, one-sided, both polarities, on
every claimed shape of ``calibrate.CLAIMED`` (continuous, binary, tie-heavy, heavy-tailed,
correlated nDCG, discrete P@5, two symmetric groups of cases, real TREC runs under a
coin-flip null):

* false fails at most 4% at n = 15 and at most 3.5% from n = 30 (nominal 2.5%);
* coverage of the 95% interval within 1.5 points from n = 30;
* on the real data: at most 3% pooled over the five metrics, at most 4% in any cell;
* non-inferiority at a true difference of exactly −margin passes ≤ α/2;
* the reported detectable regression is caught 80 ± 5% of the time (and heavy-t2 at
  n = 15, the cell nearest the claim's floor, does not slip below it by more than 2 SE);
* Holm keeps the family-wise one-sided false-fail rate ≤ α/2; none follows Šidák.

The strongly skewed shapes are the default's measured limit: a test holds that the limit
the docs state is still there (if it vanished, the docs would be wrong).  Each assertion
allows the target plus 2 SE of this run's own sampling error; seeds are fixed per cell, so
a run is deterministic.  ``EVALKIT_CALIBRATION=full`` adds n = 100 and 300 and 10,000
trials per false-fail cell.
"""

from __future__ import annotations

import math
import os
from typing import Final

import pytest
from calibrate import (
    CLAIMED,
    EXTRA_SHAPES,
    SHAPES,
    TREC_SHAPES,
    Rates,
    familywise,
    measure,
    rare_win,
    realised_power,
    seed_for,
)

# A simulation: `uv run pytest -m slow` (and .ci/run) runs it, the fast tier skips it.
pytestmark = pytest.mark.slow

FULL: Final = os.environ.get("EVALKIT_CALIBRATION", "").lower() == "full"
TRIALS: Final = 10_000 if FULL else 4000
SIZES: Final = (15, 30, 100, 300) if FULL else (15, 30)
NOMINAL: Final = 0.025


def se(rate: float, trials: int) -> float:
    return math.sqrt(rate * (1 - rate) / trials)


def target(n: int) -> float:
    return 0.04 if n < 30 else 0.035


_CACHE: dict[tuple[str, int], Rates] = {}


def rates_of(shape: str, n: int) -> Rates:
    if (shape, n) not in _CACHE:
        _CACHE[shape, n] = measure("t", SHAPES[shape], n, TRIALS, seed_for("t", shape, n))
    return _CACHE[shape, n]


CELLS: Final = [(s, n) for s in CLAIMED for n in SIZES if not (s in TREC_SHAPES and n > 100)]


@pytest.mark.parametrize(("shape", "n"), CELLS)
def test_default_false_fail_rate_and_coverage(shape: str, n: int) -> None:
    rates = rates_of(shape, n)
    limit = target(n) + 2 * se(target(n), TRIALS)
    for side, rate in (("higher-is-better", rates.hib), ("lower-is-better", rates.lib)):
        assert rate <= limit, f"{shape}, n={n}, {side}: {rate:.2%} false fails, target {limit:.2%}"
    if n >= 30:
        slack = 2 * se(0.05, TRIALS)
        assert rates.coverage >= 0.95 - 0.015 - slack, (
            f"{shape}, n={n}: coverage {rates.coverage:.2%}, at least 93.5% wanted"
        )
        assert rates.coverage <= 0.95 + 0.015 + slack, (
            f"{shape}, n={n}: coverage {rates.coverage:.2%}, at most 96.5% wanted"
        )


@pytest.mark.parametrize("n", [15, 30])
def test_real_trec_data_under_an_exact_null_pooled_and_per_cell(n: int) -> None:
    cells = [rates_of(shape, n) for shape in TREC_SHAPES]
    trials = sum(r.trials for r in cells)
    for side, count in (
        ("below", sum(r.below for r in cells)),
        ("above", sum(r.above for r in cells)),
    ):
        pooled = count / trials
        assert pooled <= 0.03 + 2 * se(0.03, trials), f"n={n}, {side}: pooled {pooled:.2%}"
    for shape, r in zip(TREC_SHAPES, cells, strict=True):
        assert max(r.hib, r.lib) <= 0.04 + 2 * se(0.04, r.trials), f"{shape}, n={n}"


@pytest.mark.parametrize("shape", ["continuous", "tie-heavy", "heavy-t3", "trec-ndcg@10"])
def test_non_inferiority_at_minus_margin_passes_at_most_half_alpha(shape: str) -> None:
    n = 30
    rates = measure("t", SHAPES[shape], n, TRIALS, seed_for("ni", shape, n), shift=-0.1)
    assert rates.lib <= NOMINAL + 2 * se(NOMINAL, TRIALS) + 0.005, (
        f"{shape}, n={n}: {rates.lib:.2%} pass at a true difference of −margin"
    )


POWER_SHAPES: Final = (
    "continuous",
    "binary",
    "tie-heavy",
    "heavy-t3",
    "ndcg-shared",
    "precision@5",
    "trec-map@1000",
)


@pytest.mark.parametrize(("shape", "n"), [(s, 30) for s in POWER_SHAPES])
def test_the_reported_detectable_regression_is_caught_80_percent(shape: str, n: int) -> None:
    """The claim a verdict prints, computed as the gate does, caught on a second eval."""
    trials = 1000
    _, caught = realised_power("t", SHAPES[shape], n, trials, seed_for("po", shape, n), own=True)
    assert abs(caught - 0.8) <= 0.05 + 2 * se(0.8, trials), f"{shape}, n={n}: {caught:.1%}"


def test_the_detectable_regression_on_infinite_variance_at_n15_does_not_slip() -> None:
    """heavy-t2 (Student t, 2 df: no finite variance) at n = 15 is the claimed cell that
    sits nearest the claim's floor: 74.0 ± 0.2% realised at 50,000 trials, listed as a miss
    in docs/calibration.md (no principled level correction measured closes it; see
    docs/design/statistics.md, "Power").  Here, on the calibration run's own seed, it must
    stay within the claim less 2 SE of this run's 4,000 trials (SE ±0.7): a change that
    lowers it by more than sampling error fails."""
    trials = 4000
    _, caught = realised_power(
        "t", SHAPES["heavy-t2"], 15, trials, seed_for("po", "heavy-t2", 15), own=True
    )
    assert 0.75 - 2 * se(0.75, trials) <= caught <= 0.85 + 2 * se(0.85, trials), f"{caught:.1%}"


@pytest.mark.parametrize("shape", ["right-skewed", "left-skewed"])
def test_the_stated_limit_on_strongly_skewed_data_is_real(shape: str) -> None:
    """docs/calibration.md states that paired t misses the targets on strongly skewed
    differences (and the report warns there): the limit is still measured at n = 30."""
    rates = measure("t", SHAPES[shape], 30, TRIALS, seed_for("t", shape, 30))
    assert max(rates.hib, rates.lib) > 0.05


def test_every_false_fail_on_a_rare_large_win_is_on_a_sample_with_no_win() -> None:
    """The shape no procedure holds; the no_wins warning fires on exactly those samples."""
    assert "rare-large-win" in EXTRA_SHAPES
    failed, share, _ = rare_win(30, TRIALS, seed_for("rw", 30))
    assert failed > 0.15
    assert share == 1.0


@pytest.mark.parametrize("k", [5, 10])
def test_familywise_false_fails_per_correction(k: int) -> None:
    trials = 4000
    none = familywise("none", k, 100, trials, seed_for("fw", k, 100))
    sidak = 1 - (1 - NOMINAL) ** k
    assert abs(none - sidak) <= 0.015 + 2 * se(sidak, trials), f"none: {none:.2%}"
    corrected = familywise("holm", k, 100, trials, seed_for("fwh", k, 100))
    assert corrected <= NOMINAL + 0.005 + 2 * se(NOMINAL, trials), f"holm: {corrected:.2%}"
