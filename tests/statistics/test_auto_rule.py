"""The default ``auto`` corrects for skewness only where it survives trimming (#23).

Known answers on hand-made samples; the rates the rule buys are the calibration
suite's (tests/statistics/test_calibration.py, docs/calibration.md).
"""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.stats.procedures import Moments, auto_corrects, choose_procedure, trim_count


@pytest.mark.parametrize(("n", "k"), [(3, 3), (10, 3), (60, 3), (61, 4), (100, 5), (1000, 50)])
def test_trim_count(n: int, k: int) -> None:
    assert trim_count(n) == k


def test_one_extreme_case_in_symmetric_data_is_not_corrected_for() -> None:
    # symmetric small values and one big win: g1 is large, but it is that one case
    d = np.array([-0.02, -0.01, 0.0, 0.01, 0.02] * 4 + [0.9])
    m = Moments.of(d)
    assert float(m.skewness[0]) > 3.0
    assert abs(float(m.trimmed_skewness[0])) < 0.15
    assert choose_procedure("auto", d) == "t"


def test_skew_that_survives_trimming_is_corrected_for() -> None:
    # a spread-out right tail: many moderate wins, not one or two extreme ones
    d = np.array([-0.3] * 12 + [-0.2] * 6 + [0.0, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.3, 1.6, 2.0])
    m = Moments.of(d)
    assert float(m.trimmed_skewness[0]) >= 0.15
    assert choose_procedure("auto", d) == "skew-t"
    assert choose_procedure("auto", -d) == "skew-t"  # left skew, mirrored


def test_the_choice_is_shift_and_scale_invariant() -> None:
    """Non-inferiority tests d + margin: it must pick what the test at 0 picks."""
    rng = np.random.default_rng(7)
    rows = np.vstack([rng.exponential(1.0, (200, 25)) - 1.0, rng.standard_t(2.0, (200, 25))])
    plain = auto_corrects(Moments.of(rows))
    moved = auto_corrects(Moments.of(3.0 * rows - 0.1))
    assert plain.any()
    assert not plain.all()
    assert (plain == moved).all()


def test_half_the_cases_tied_is_never_corrected_for() -> None:
    d = np.array([0.0] * 10 + [-0.1] * 6 + [0.2, 0.5, 0.9, 1.5])
    assert float(Moments.of(d).trimmed_skewness[0]) >= 0.15
    assert choose_procedure("auto", d) == "t"
