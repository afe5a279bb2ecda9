"""The default ``auto`` corrects for skewness only where it survives trimming (#23).

Known answers on hand-made samples; the rates the rule buys are the calibration
suite's (tests/statistics/test_calibration.py, docs/calibration.md).
"""

from __future__ import annotations

import numpy as np
import pytest

from evalkit.stats.diagnostics import NO_WIN_N, warnings_for
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


# ----------------------------------------------------------------------------- no_wins


@pytest.mark.parametrize("hib", [True, False])
def test_no_wins_warns_where_a_rare_large_win_can_be_missing(hib: bool) -> None:
    worse = -0.05 if hib else 0.05
    d = np.full(30, worse)
    d[:5] = 0.0  # ties are neither wins nor losses
    found = warnings_for(n=30, method="t", kind="case", diffs=d, higher_is_better=hib)
    messages = [w.message for w in found if w.code == "no_wins"]
    assert len(messages) == 1
    assert "25 of 30 worse" in messages[0]
    assert "21%" in messages[0]  # 0.95**30


def test_no_wins_is_silent_with_one_win_with_many_cases_or_without_polarity() -> None:
    d = np.full(30, -0.05)
    with_win = d.copy()
    with_win[0] = 0.9
    assert not [
        w
        for w in warnings_for(n=30, method="t", kind="case", diffs=with_win, higher_is_better=True)
        if w.code == "no_wins"
    ]
    many = np.full(NO_WIN_N, -0.05)
    assert not [
        w
        for w in warnings_for(
            n=NO_WIN_N, method="t", kind="case", diffs=many, higher_is_better=True
        )
        if w.code == "no_wins"
    ]
    assert not [
        w for w in warnings_for(n=30, method="t", kind="case", diffs=d) if w.code == "no_wins"
    ]
