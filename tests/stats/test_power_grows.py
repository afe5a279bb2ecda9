"""Power never falls as cases are added, on every calibration shape (#43).

The rule paired t replaced lost power as a golden set grew (a bounded skewed shape: 29% of
a 0.5-σ regression caught at n = 15, 24% at n = 30).  Here the default must catch a fixed
regression of 0.5·σ at least as often at n = 15, 30, 50 and 100, on each training shape
of ``scripts/calibration/calibrate.py`` (the real data up to their 100 topics).
"""

from __future__ import annotations

import itertools

import pytest
from calibrate import GROWING, GROWING_EFFECT, MAX_N, SHAPES, population_sd, power_at, seed_for

pytestmark = pytest.mark.slow

TRIALS = 2000


@pytest.mark.parametrize("shape", list(SHAPES))
def test_power_at_a_fixed_regression_never_falls_as_cases_are_added(shape: str) -> None:
    draw = SHAPES[shape]
    effect = GROWING_EFFECT * population_sd(draw)
    sizes = [n for n in GROWING if n <= MAX_N.get(shape, n)]
    rates = [power_at(draw, n, effect, TRIALS, seed_for("grow", shape, n)) for n in sizes]
    for (n1, r1), (n2, r2) in itertools.pairwise(zip(sizes, rates, strict=True)):
        assert r2 >= r1, f"{shape}: {r1:.1%} at n = {n1}, {r2:.1%} at n = {n2}"
