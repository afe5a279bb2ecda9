"""The default ``auto`` corrects for skewness only where it survives trimming (#23).

Known answers on hand-made samples; the rates the rule buys are the calibration
suite's (tests/statistics/test_calibration.py, docs/calibration.md).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from evalkit.stats.diagnostics import NO_WIN_N, warnings_for
from evalkit.stats.procedures import (
    AUTO_MIN_TRIMMED_SKEW,
    AUTO_MODE_CORRELATION,
    AUTO_MODE_FULL_N,
    AUTO_MODE_MAX_N,
    AUTO_MODE_MIN_N,
    AUTO_MODE_SMALL_CORRELATION,
    UNTIED_MIN,
    Evaluator,
    Moments,
    TieSpikes,
    auto_bounds,
    auto_corrects,
    auto_drops_guard,
    auto_p,
    batch_bounds,
    choose_procedure,
    counted_moments,
    deep_trim_count,
    group_min,
    guarded_bounds,
    guarded_p,
    leave_one_out_correlation,
    skew_t_bounds,
    skew_t_p,
    tie_spikes,
    trim_count,
    with_two_modes,
)


@pytest.mark.parametrize(("n", "k"), [(3, 3), (10, 3), (60, 3), (61, 4), (100, 5), (1000, 50)])
def test_trim_count(n: int, k: int) -> None:
    assert trim_count(n) == k


def test_one_extreme_case_in_symmetric_data_is_not_corrected_for() -> None:
    # evenly spread small values and one big win: g1 is large, but it is that one case
    # (the three set aside are the win and the core's two largest; what is left is even)
    d = np.concatenate([np.linspace(-0.02, 0.02, 20), [0.9]])
    m = Moments.of(d)
    assert float(m.skewness[0]) > 3.0
    assert abs(float(m.trimmed_skewness[0])) < AUTO_MIN_TRIMMED_SKEW
    assert choose_procedure("auto", d) == "t"


@pytest.mark.parametrize(
    ("n", "k"), [(3, 5), (10, 5), (33, 5), (34, 6), (100, 15), (101, 16), (1000, 150)]
)
def test_deep_trim_count(n: int, k: int) -> None:
    assert deep_trim_count(n) == k


def test_skew_that_runs_deep_is_corrected_for_on_both_ends() -> None:
    # a spread-out right tail: many moderate wins, not one or two extreme ones, so the
    # skew survives setting aside 15% of the cases too, and skew-t decides alone
    d = np.array([-0.3] * 12 + [-0.2] * 6 + [0.0, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.3, 1.6, 2.0])
    m = Moments.of(d)
    assert float(m.trimmed_skewness[0]) >= AUTO_MIN_TRIMMED_SKEW
    assert float(m.deep_trimmed_skewness[0]) >= 0.2
    assert choose_procedure("auto", d) == "skew-t"
    assert choose_procedure("auto", -d) == "skew-t"  # left skew, mirrored
    low, high = auto_bounds(m, 0.05)
    s_low, s_high = skew_t_bounds(m, m.skewness, 0.05)
    assert (float(low[0]), float(high[0])) == (float(s_low[0]), float(s_high[0]))


def test_skew_of_a_few_cases_beyond_the_first_three_keeps_plain_t_as_guard() -> None:
    # a symmetric core and five big wins: the skew survives setting three aside (two wins
    # are left) but not five, so t and skew-t decide together
    d = np.concatenate([np.linspace(-0.1, 0.1, 25), [0.5, 0.6, 0.7, 0.8, 0.9]])
    m = Moments.of(d)
    assert float(m.trimmed_skewness[0]) >= AUTO_MIN_TRIMMED_SKEW
    assert abs(float(m.deep_trimmed_skewness[0])) < 0.2
    assert choose_procedure("auto", d) == "t+skew-t"
    assert choose_procedure("auto", -d) == "t+skew-t"
    low, high = auto_bounds(m, 0.05)
    t_low, _ = skew_t_bounds(m, np.zeros(1), 0.05)
    _, s_high = skew_t_bounds(m, m.skewness, 0.05)
    assert (float(low[0]), float(high[0])) == (float(t_low[0]), float(s_high[0]))


def _mixed_rows(n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    return np.vstack(
        [
            rng.exponential(1.0, (300, n)) - 1.0,
            rng.standard_t(2.0, (300, n)),
            np.where(
                rng.random((300, n)) < 0.9,
                rng.normal(0, 0.01, (300, n)),
                rng.normal(0, 0.3, (300, n)),
            ),
            rng.beta(0.5, 3.0, (300, n)) - 1.0 / 7.0,
            # a tie group beside continuous cases: skewed, and symmetric
            np.where(rng.random((300, n)) < 0.5, 0.0, rng.exponential(1.0, (300, n)) - 1.0),
            np.where(rng.random((300, n)) < 0.4, 0.0, rng.normal(0, 0.1, (300, n))),
        ]
    )


@pytest.mark.parametrize("n", [8, 15, 30, 100])
def test_auto_is_one_of_its_three_intervals_and_its_p_is_their_dual(n: int) -> None:
    rows = _mixed_rows(n)
    m = Moments.of(rows)
    low, high = auto_bounds(m, 0.05)
    zero = np.zeros(rows.shape[0])
    t_low, t_high = skew_t_bounds(m, zero, 0.05)
    s_low, s_high = skew_t_bounds(m, m.skewness, 0.05)
    alone, corrects = auto_drops_guard(m), auto_corrects(m)
    assert not (alone & ~corrects).any()  # dropping the guard needs the first test too
    assert np.array_equal(low[alone], s_low[alone])
    assert np.array_equal(high[alone], s_high[alone])
    plain = ~corrects
    assert np.array_equal(low[plain], t_low[plain])
    assert np.array_equal(high[plain], t_high[plain])
    both = corrects & ~alone
    assert np.array_equal(low[both], np.minimum(t_low, s_low)[both])
    assert np.array_equal(high[both], np.maximum(t_high, s_high)[both])
    # the dual: p at the interval's own ends is α (to rounding), and p ≤ α exactly
    # where the interval excludes 0
    p = auto_p(m, 0.0)
    excludes = (low > 0.0) | (high < 0.0)
    clear = np.abs(p - 0.05) > 1e-9
    assert np.array_equal((p <= 0.05)[clear], excludes[clear])
    assert np.array_equal(p[alone], skew_t_p(m, m.skewness, 0.0)[alone])
    if n >= 15:  # every tier is exercised by these shapes
        assert alone.any()
        assert both.any()
        assert plain.any()


@pytest.mark.parametrize("n", [15, 30, 100])
def test_auto_mirrors_exactly_when_every_difference_changes_sign(n: int) -> None:
    rows = _mixed_rows(n)
    low, high = auto_bounds(Moments.of(rows), 0.05)
    m_low, m_high = auto_bounds(Moments.of(-rows), 0.05)
    assert np.allclose(m_low, -high, rtol=1e-12, atol=1e-15)
    assert np.allclose(m_high, -low, rtol=1e-12, atol=1e-15)
    assert np.array_equal(auto_drops_guard(Moments.of(rows)), auto_drops_guard(Moments.of(-rows)))


def test_the_choice_is_shift_and_scale_invariant() -> None:
    """Non-inferiority tests d + margin: it must pick what the test at 0 picks."""
    rng = np.random.default_rng(7)
    rows = np.vstack(
        [
            rng.exponential(1.0, (200, 25)) - 1.0,
            rng.standard_t(2.0, (200, 25)),
            # a tie spike: shifted with the rest, it is found at its new value
            np.where(rng.random((200, 25)) < 0.4, 0.0, rng.exponential(1.0, (200, 25)) - 1.0),
        ]
    )
    assert np.array_equal(tie_spikes(rows).any_rows(), tie_spikes(3.0 * rows - 0.1).any_rows())
    assert tie_spikes(rows).any_rows()[400:].mean() > 0.9
    plain = auto_corrects(Moments.of(rows))
    moved = auto_corrects(Moments.of(3.0 * rows - 0.1))
    assert plain.any()
    assert not plain.all()
    assert (plain == moved).all()
    alone = auto_drops_guard(Moments.of(rows))
    assert alone.any()
    assert not alone.all()
    assert (alone == auto_drops_guard(Moments.of(3.0 * rows - 0.1))).all()


# ----------------------------------------------------------------------------- ties


def _spike(*parts: np.ndarray) -> tuple[float, float, bool]:
    found = tie_spikes(np.concatenate(parts)[None, :])
    return float(found.value[0]), float(found.kept[0]), bool(found.few_levels[0])


def test_a_spike_is_the_commonest_value_less_what_its_neighbours_hold() -> None:
    rng = np.random.default_rng(3)
    spread = rng.exponential(1.0, 20) - 1.0  # 20 distinct values
    assert _spike(np.zeros(10), spread) == (0.0, 1.0, False)  # neighbours hold 1 each
    assert _spike(np.full(10, 0.25), spread) == (0.25, 1.0, False)  # wherever it sits
    assert _spike(np.zeros(4), spread) == (0.0, 1.0, False)  # an excess of 3 of 24 ...
    assert math.isnan(_spike(np.zeros(3), spread)[0])  # ... 2 is within counting noise
    # equally common values: the one nearest 0
    assert _spike(np.full(5, 0.4), np.full(5, -0.1), spread)[0] == -0.1
    # a lattice whose 0 holds no more than a step either side: no spike ...
    steps = np.array([-0.4] * 3 + [-0.2] * 8 + [0.0] * 9 + [0.2] * 8 + [0.4] * 2)
    assert math.isnan(_spike(steps)[0])
    # ... one whose 0 holds three times as many: the excess over its neighbours' 8
    assert _spike(steps, np.zeros(15)) == (0.0, 8.0, False)
    # pass/fail: what is left holds -1, 0 and +1 only
    assert _spike(np.array([-1.0] * 3 + [0.0] * 20 + [1.0] * 4)) == (0.0, 4.0, True)
    # two coincident pairs among 64 cases are no spike
    wide = rng.normal(0.0, 1.0, 60)
    assert math.isnan(_spike(wide, wide[:2])[0])
    assert math.isnan(_spike(spread)[0])  # nothing ties
    # a batch finds each row's own
    rows = np.vstack([np.concatenate([np.zeros(6), wide]), np.concatenate([wide, wide[:6]])])
    found = tie_spikes(rows)
    assert found.value[0] == 0.0
    assert math.isnan(float(found.value[1]))


def test_a_spike_leaves_the_skewness_to_the_other_cases() -> None:
    """Mean and spread are the whole sample's; the skewness, its trims and the far end's
    size are those of the cases left once the spike's excess is set aside, the skewness
    scaled by √(n/m) (#23, "Ties")."""
    rng = np.random.default_rng(11)
    other = rng.exponential(1.0, (50, 24)) - 1.0
    d = np.hstack([np.zeros((50, 16)), other])
    read = np.hstack([np.zeros((50, 1)), other])  # one zero stays: its neighbours hold 1
    whole, own = Moments.of(d), Moments.of(read)
    assert (tie_spikes(d).value == 0.0).all()
    assert np.allclose(whole.mean, d.mean(axis=1), rtol=0, atol=1e-15)
    assert np.allclose(whole.sd, d.std(axis=1, ddof=1), rtol=1e-13)
    assert np.allclose(whole.skewness, own.skewness * math.sqrt(40 / 25), rtol=1e-12)
    assert np.array_equal(whole.trimmed_skewness, own.trimmed_skewness)
    assert np.array_equal(whole.deep_trimmed_skewness, own.deep_trimmed_skewness)
    assert np.array_equal(whole.mode_correlation, own.mode_correlation)
    assert (whole.skew_n == 25).all()
    assert np.array_equal(auto_corrects(whole), auto_corrects(own))
    assert auto_corrects(whole).any()  # where their skew is stable, auto corrects for it


def test_a_spike_with_too_few_or_too_coarse_other_cases_keeps_plain_t() -> None:
    rng = np.random.default_rng(2)
    few = np.concatenate([np.zeros(12), rng.exponential(1.0, UNTIED_MIN - 2) - 1.0])
    assert tie_spikes(few[None, :]).any()
    assert choose_procedure("auto", few) == "t"
    # hits and misses: -1, 0, +1 left; their skewness is their shares, which set the mean
    coarse = np.array([-1.0] * 2 + [0.0] * 30 + [1.0] * 9)
    assert tie_spikes(coarse[None, :]).few_levels[0]
    assert choose_procedure("auto", coarse) == "t"


def test_named_spikes_are_the_found_ones() -> None:
    """The detectable-effect simulation names each world's spike (the eval's own: a
    world's repeated draws are not ties); where a row's own search finds the same one
    the two agree exactly."""
    rng = np.random.default_rng(5)
    d = np.where(rng.random((400, 40)) < 0.5, 0.0, rng.normal(0, 1, (400, 40)) ** 3) - 0.2
    found = tie_spikes(d)
    rows = found.any_rows()
    assert rows.mean() > 0.9
    named = TieSpikes(found.value[rows], found.kept[rows], found.few_levels[rows])
    given, own = Moments.of(d[rows], spikes=named), Moments.of(d[rows])
    for field in ("mean", "sd", "skewness", "trimmed_skewness", "skew_n"):
        assert np.array_equal(getattr(given, field), getattr(own, field)), field
    none = Moments.of(d, spikes=TieSpikes.none(d.shape[0]))  # nothing named: whole sample
    assert (none.skew_n == 40).all()


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


# --- where auto corrects, plain t must agree (procedure t+skew-t) -------------------------


def _contaminated(trials: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """Symmetric by construction: 90% of cases N(0, 0.01²), 10% N(0, 0.3²)."""
    out: np.ndarray = np.where(
        rng.random((trials, n)) < 0.9,
        rng.normal(0.0, 0.01, (trials, n)),
        rng.normal(0.0, 0.3, (trials, n)),
    )
    return out


@pytest.mark.parametrize("n", [30, 50])
def test_a_symmetric_parent_with_many_extreme_cases_holds_plain_ts_level(n: int) -> None:
    """Outliers on both sides, more than the trimming sets aside: the stable-skew rule
    corrects often, and correcting alone failed falsely 4-5% one-sided here (plain t
    0.5-1.6%); requiring plain t to agree gives plain t's rate (2.5% nominal)."""
    data = _contaminated(20_000, n, np.random.default_rng(n))
    assert auto_corrects(Moments.of(data)).mean() > 0.05  # the rule fires (about 11%)
    low, high = batch_bounds("auto", data, 0.05)
    for rate in (np.mean(high < 0.0), np.mean(low > 0.0)):
        assert rate <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / 20_000), rate


def test_the_guarded_interval_is_the_union_and_its_p_the_larger() -> None:
    rng = np.random.default_rng(3)
    data = np.vstack([rng.exponential(1.0, (300, 30)) - 0.7, -rng.exponential(1.0, (300, 30))])
    m = Moments.of(data)
    gamma = m.skewness
    t_low, t_high = skew_t_bounds(m, np.zeros_like(gamma), 0.05)
    s_low, s_high = skew_t_bounds(m, gamma, 0.05)
    low, high = guarded_bounds(m, gamma, 0.05)
    assert (low == np.minimum(t_low, s_low)).all()
    assert (high == np.maximum(t_high, s_high)).all()
    p = guarded_p(m, gamma, 0.0)
    # duals: the union excludes 0 exactly when the larger p is at most alpha
    excluded = (low > 0.0) | (high < 0.0)
    assert (excluded == (p <= 0.05)).mean() > 0.995  # float ties at the boundary aside


def test_a_guarded_verdict_decides_only_where_both_procedures_do() -> None:
    rng = np.random.default_rng(11)
    for _ in range(200):
        d = rng.exponential(0.2, 40) - 0.2 + rng.normal(-0.05, 0.05)
        if choose_procedure("auto", d) != "t+skew-t":
            continue
        both = [Evaluator(p, float(d.mean()), diffs=d).decide(0.05) for p in ("t", "skew-t")]
        guarded = Evaluator("t+skew-t", float(d.mean()), diffs=d).decide(0.05)
        assert guarded.excludes_null == all(x.excludes_null for x in both)
        assert guarded.p_value == pytest.approx(max(x.p_value for x in both), abs=1e-12)


def test_the_skew_warning_states_the_deep_trim_the_rule_uses() -> None:
    from evalkit.stats.diagnostics import DEEP_DECIDED
    from evalkit.stats.procedures import AUTO_DEEP_TRIM_PERCENT

    assert f"most extreme {AUTO_DEEP_TRIM_PERCENT}% of cases" in DEEP_DECIDED


def brute_force_mode_correlation(d: np.ndarray) -> float:
    """Drop each case in turn; correlate the n means with the n skewnesses g1."""
    means, skews = [], []
    for i in range(d.shape[0]):
        rest = np.delete(d, i)
        c = rest - rest.mean()
        means.append(rest.mean())
        skews.append(float(np.mean(c**3) / np.mean(c**2) ** 1.5))
    return float(np.corrcoef(means, skews)[0, 1])


@pytest.mark.parametrize("seed", range(5))
def test_the_mode_correlation_is_the_leave_one_out_correlation(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for d in (
        rng.exponential(1.0, 25) - 1.0,
        np.where(rng.random(31) < 0.3, 0.07, -0.03) + rng.normal(0.0, 0.01, 31),
        rng.standard_t(2, 12),
    ):
        centred = (d - d.mean())[None, :]
        got = float(leave_one_out_correlation(centred, None, d.shape[0])[0])
        assert got == pytest.approx(brute_force_mode_correlation(d), abs=1e-9)
        # a mirror image has the same correlation (mean and skewness both change sign)
        mirrored = float(leave_one_out_correlation(-centred, None, d.shape[0])[0])
        assert mirrored == pytest.approx(got, abs=1e-12)
        # Moments carries it where the rule applies, 0 elsewhere: at the rule's sizes, and
        # where the widest gap between consecutive cases leaves group_min on either side
        ordered = np.sort(d)
        below = int(np.argmax(np.diff(ordered))) + 1
        two_groups = min(below, d.shape[0] - below) >= group_min(d.shape[0])
        inside = AUTO_MODE_MIN_N <= d.shape[0] <= AUTO_MODE_MAX_N and two_groups
        assert float(Moments.of(d).mode_correlation[0]) == (pytest.approx(got) if inside else 0.0)


def test_the_counted_path_has_the_same_mode_correlation() -> None:
    rng = np.random.default_rng(3)
    levels = np.array([-0.4, -0.2, 0.0, 0.2, 0.4, 1.0])
    counts = rng.multinomial(40, [0.1, 0.2, 0.3, 0.2, 0.15, 0.05], size=50).astype(float)
    assert AUTO_MODE_MIN_N <= 40 <= AUTO_MODE_MAX_N
    cases = np.stack([np.repeat(levels, c.astype(int)) for c in counts])
    counted = counted_moments(levels, counts, 40).mode_correlation
    # (the counted path sets no tie spike aside: its callers take the case path where one is)
    whole = Moments.of(cases, spikes=TieSpikes.none(50))
    assert np.allclose(counted, whole.mode_correlation, atol=1e-12)


def test_two_modes_are_not_corrected_for_from_the_rules_first_size() -> None:
    # 70% of the cases near -0.03, 30% near +0.07: the skewness is the groups' sizes,
    # stable under trimming (it grows when the smaller group loses cases), and it moves
    # with the mean in lockstep, so auto leaves it to plain t from AUTO_MODE_MIN_N cases
    def two_modes(n: int) -> np.ndarray:
        upper = round(0.3 * n)
        noise = np.linspace(-0.01, 0.01, n)
        return np.concatenate([np.full(n - upper, -0.03), np.full(upper, 0.07)]) + noise

    big = two_modes(AUTO_MODE_FULL_N + 10)
    m = Moments.of(big)
    assert float(m.trimmed_skewness[0]) > float(m.skewness[0]) > 0.5  # the trim fooled
    assert float(m.mode_correlation[0]) < AUTO_MODE_CORRELATION
    assert choose_procedure("auto", big) == "t"
    # from the rule's first size, on its stricter line (these groups sit at -0.997)
    small = two_modes(AUTO_MODE_MIN_N)
    assert float(Moments.of(small).mode_correlation[0]) < AUTO_MODE_SMALL_CORRELATION
    assert choose_procedure("auto", small) == "t"
    # below and above the rule's sizes the stability rule alone decides
    for n in (AUTO_MODE_MIN_N - 1, AUTO_MODE_MAX_N + 10):
        d = two_modes(n)
        loo = leave_one_out_correlation((d - d.mean())[None, :], None, n)
        assert float(loo[0]) < AUTO_MODE_CORRELATION
        assert float(Moments.of(d).mode_correlation[0]) == 0.0
        assert choose_procedure("auto", d) != "t"


def test_one_or_two_extreme_cases_beyond_a_gap_are_a_tail_not_a_group() -> None:
    # 28 cases spread evenly and 2 far out: in lockstep like two groups, but a tail
    n = 30
    tail = np.concatenate([np.linspace(-0.1, 0.1, n - 2), [2.0, 2.2]])
    centred = (tail - tail.mean())[None, :]
    assert float(leave_one_out_correlation(centred, None, n)[0]) < AUTO_MODE_CORRELATION
    assert group_min(n) == 3
    assert float(Moments.of(tail).mode_correlation[0]) == 0.0
    # the same with the far group of 3 reads as two groups
    group = np.concatenate([np.linspace(-0.1, 0.1, n - 3), [2.0, 2.1, 2.2]])
    assert float(Moments.of(group).mode_correlation[0]) < AUTO_MODE_CORRELATION
    assert [group_min(k) for k in (15, 30, 31, 100, 200)] == [3, 3, 4, 10, 20]


def test_below_the_full_size_the_two_mode_line_is_stricter() -> None:
    # a correlation between the two lines decides at 20 cases, not at 19
    rows = np.random.default_rng(8).exponential(1.0, (4000, 19)) - 1.0
    m = Moments.of(rows)
    between = (m.mode_correlation < AUTO_MODE_CORRELATION) & (
        m.mode_correlation >= AUTO_MODE_SMALL_CORRELATION
    )
    stable = auto_corrects(dataclasses.replace(m, mode_correlation=np.zeros(4000)))
    assert (between & stable).any()
    # at 19 cases the stricter line leaves them to the stability rule ...
    assert np.array_equal(auto_corrects(m)[between], stable[between])
    # ... at the full size the line takes them (plain t)
    wider = dataclasses.replace(m, skew_n=np.full(4000, float(AUTO_MODE_FULL_N)))
    assert not auto_corrects(wider)[between].any()


def test_resampled_worlds_read_two_modes_as_their_eval_does() -> None:
    # the detectable-regression simulation hands every world the eval's own reading
    rows = np.random.default_rng(9).exponential(1.0, (2000, 17)) - 1.0
    m = Moments.of(rows)
    none = dataclasses.replace(m, mode_correlation=np.zeros(2000))
    assert np.array_equal(auto_corrects(with_two_modes(m, False)), auto_corrects(none))
    assert not auto_corrects(with_two_modes(m, True)).any()
    assert auto_corrects(none).any()


def test_a_tail_is_still_corrected_for_where_two_modes_are_not() -> None:
    # a spread-out right tail at the rule's sizes: the correlation stays above the line
    d = np.array([-0.3] * 12 + [-0.2] * 6 + [0.0, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.3, 1.6, 2.0])
    assert d.shape[0] >= AUTO_MODE_MIN_N
    assert float(Moments.of(d).mode_correlation[0]) > AUTO_MODE_CORRELATION
    assert choose_procedure("auto", d) != "t"
