"""The permutation and t methods, and the corrections, against independent answers."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np
import pytest
from numpy.typing import NDArray
from scipy import special  # type: ignore[import-untyped]  # dev-only, no stubs
from scipy import stats as sps

from evalkit._model.registry import register_aggregate
from evalkit._model.results import CaseResult, Row, RunResult
from evalkit.errors import InputError
from evalkit.stats import permutation as perm
from evalkit.stats.fixedpoint import to_fixed
from evalkit.stats.significance import (
    compare_metrics,
    familywise_false_alarm,
    holm,
    paired_bootstrap,
)
from evalkit.stats.stream import substream
from evalkit.stats.tdist import regularized_beta, t_two_sided_p
from evalkit.targets.base import TargetResponse

FloatArray = NDArray[np.float64]


def brute_force_midp(d: Sequence[float]) -> float:
    """Two-sided sign-flip mid-p by listing every pattern (d exact in binary)."""
    observed = abs(math.fsum(d))
    greater = equal = 0
    for signs in itertools.product((1, -1), repeat=len(d)):
        value = abs(math.fsum(s * x for s, x in zip(signs, d, strict=True)))
        if value == observed:
            equal += 1
        elif value > observed:
            greater += 1
    return (greater + equal / 2) / (1 << len(d))


# ---------------------------------------------------------------- t


@pytest.mark.parametrize(
    ("n", "shift", "kind"),
    [(5, 0.3, "normal"), (30, 0.1, "normal"), (200, 0.02, "normal"), (40, 0.0, "skewed")],
)
def test_t_matches_scipy_ttest_rel(n: int, shift: float, kind: str) -> None:
    rng = np.random.default_rng(n)
    b = rng.uniform(0, 1, n)
    noise = rng.normal(0, 0.3, n) if kind == "normal" else rng.exponential(0.3, n) - 0.3
    a = b + shift + noise
    v = compare_metrics({"m": a - b}, n_resamples=100, method="t")["m"]
    expected = sps.ttest_rel(a, b).pvalue
    assert v.p_value == pytest.approx(expected, rel=1e-9)
    assert v.significant == (v.p_value <= 0.05)
    assert v.null == "t"


def test_t_tails_match_scipy_across_degrees_of_freedom() -> None:
    for df in (1, 2, 7, 29, 99, 999, 100_000):
        for t in (0.0, 0.3, 1.0, 2.0, 4.0, 12.0, 60.0):
            assert t_two_sided_p(t, df) == pytest.approx(2 * sps.t.sf(t, df), rel=1e-8, abs=0)
    assert t_two_sided_p(math.inf, 5) == 0.0
    with pytest.raises(ValueError, match="degrees of freedom must be positive"):
        t_two_sided_p(1.0, 0)


def test_regularized_beta_matches_scipy() -> None:
    rng = np.random.default_rng(1)
    for a, b, x in zip(
        rng.uniform(0.1, 300, 300), rng.uniform(0.1, 300, 300), rng.uniform(0, 1, 300), strict=True
    ):
        assert regularized_beta(a, b, x) == pytest.approx(special.betainc(a, b, x), abs=1e-12)
    assert regularized_beta(2, 3, 0.0) == 0.0
    assert regularized_beta(2, 3, 1.0) == 1.0


def test_t_with_no_spread_is_decided_by_the_mean() -> None:
    same = compare_metrics({"m": [0.0] * 10}, n_resamples=50, method="t")["m"]
    assert (same.p_value, same.significant) == (1.0, False)
    shifted = compare_metrics({"m": [0.25] * 10}, n_resamples=50, method="t")["m"]
    assert (shifted.p_value, shifted.significant) == (0.0, True)


def test_the_interval_is_always_the_bootstrap_interval() -> None:
    d = np.random.default_rng(2).normal(0.1, 1, 150)
    results = {
        m: compare_metrics({"m": d}, n_resamples=500, method=m)["m"]
        for m in ("bootstrap", "permutation", "t")
    }
    assert results["permutation"].ci == results["bootstrap"].ci == results["t"].ci
    for method in ("permutation", "t"):
        assert results[method].significant == (results[method].p_value <= 0.05)


# ---------------------------------------------------------------- permutation


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_exact_permutation_equals_brute_force(seed: int) -> None:
    rng = np.random.default_rng(seed)
    d = (rng.integers(-40, 60, 11) / 64).tolist()  # exact in binary: sums are exact
    v = compare_metrics({"m": d}, n_resamples=100, method="permutation")["m"]
    assert v.null == "permutation-exact"
    assert v.p_value == brute_force_midp(d)


def test_exact_permutation_with_ties_equals_brute_force() -> None:
    d = [1.0, 1.0, 0.0, -1.0, 1.0, 0.0, 1.0, 1.0, -1.0, 1.0, 0.0, 1.0, 1.0]
    v = compare_metrics({"m": d}, n_resamples=100, method="permutation")["m"]
    assert v.p_value == brute_force_midp(d)


def test_every_case_better_by_the_same_amount_is_the_smallest_exact_p() -> None:
    v = compare_metrics({"m": [0.5] * 10}, n_resamples=100, method="permutation")["m"]
    # identity and the full flip tie |t|, nothing exceeds it: (0 + 2/2) / 2**10
    assert v.p_value == 1 / 1024
    assert v.significant


def test_no_difference_at_all_has_p_one() -> None:
    v = compare_metrics({"m": [0.0] * 30}, n_resamples=100, method="permutation")["m"]
    assert (v.p_value, v.significant) == (1.0, False)


def test_binary_differences_match_the_exact_binomial_mid_p() -> None:
    """d in {-1, 0, 1}: under the null the signed count is m - 2 Bin(m, 1/2)."""
    rng = np.random.default_rng(3)
    d = rng.choice([-1.0, 0.0, 0.0, 1.0, 1.0], size=200)
    v = compare_metrics({"m": d}, n_resamples=40_000, method="permutation")["m"]
    assert v.null == "permutation-binomial"
    m = int(np.count_nonzero(d))
    t = abs(int(d.sum()))
    # |m - 2X| > t  <=>  X < (m - t)/2 or X > (m + t)/2
    low, high = (m - t) / 2, (m + t) / 2
    greater = sps.binom.cdf(math.ceil(low) - 1, m, 0.5) + sps.binom.sf(math.floor(high), m, 0.5)
    equal = sps.binom.pmf(low, m, 0.5) + sps.binom.pmf(high, m, 0.5) if low.is_integer() else 0.0
    exact = greater + equal / 2
    assert v.p_value == pytest.approx(exact, abs=4 * math.sqrt(exact * (1 - exact) / 40_000))


def test_binomial_and_flip_paths_agree_in_distribution(monkeypatch: pytest.MonkeyPatch) -> None:
    rng = np.random.default_rng(4)
    units = to_fixed(rng.choice([-2.0, -1.0, 0.0, 1.0, 3.0], size=(150, 1))).by_metric.T
    fixed = to_fixed(units.astype(np.float64))
    fast = perm.permutation_null(fixed.by_metric, [], 20_000, substream(1, 2), 10**7)
    monkeypatch.setattr(perm, "discrete_limit", lambda n: 0)
    slow = perm.permutation_null(fixed.by_metric, [], 20_000, substream(2, 2), 10**7)
    assert (fast.path, slow.path) == ("binomial", "flips")
    a = np.concatenate([c.sums[:, 0] for c in fast.chunks])
    b = np.concatenate([c.sums[:, 0] for c in slow.chunks])
    assert sps.ks_2samp(a, b).pvalue > 0.001
    assert a.var() == pytest.approx(np.sum(units.astype(float) ** 2), rel=0.05)


def test_permutation_chunks_never_change_a_draw() -> None:
    rng = np.random.default_rng(5)
    fixed = to_fixed(rng.normal(size=(123, 2)))
    whole = perm.permutation_null(fixed.by_metric, [], 300, substream(9, 2), 10**9)
    split = perm.permutation_null(fixed.by_metric, [], 300, substream(9, 2), 100)
    a = np.vstack([c.sums for c in whole.chunks])
    b = np.vstack([c.sums for c in split.chunks])
    assert np.array_equal(a, b)


def latency_run(name: str, latencies: Sequence[float]) -> RunResult[CaseResult]:
    rows = [
        CaseResult(f"c{i:02d}", TargetResponse(["x"], latency_ms=v), {"ok": 1.0})
        for i, v in enumerate(latencies)
    ]
    return RunResult(name, rows)


def test_aggregate_permutation_swaps_whole_rows() -> None:
    @register_aggregate("p95_by_hand", higher_is_better=False)
    def p95_by_hand(rows: Sequence[Row]) -> float:
        values = sorted(r.response.latency_ms for r in rows if r.response is not None)
        return values[max(1, math.ceil(0.95 * len(values))) - 1]

    rng = np.random.default_rng(6)
    la, lb = rng.exponential(100, 8).round(), rng.exponential(100, 8).round()
    a, b = latency_run("a", la.tolist()), latency_run("b", lb.tolist())
    fast = paired_bootstrap(a, b, "latency_p95", n_resamples=1000, method="permutation")
    slow = paired_bootstrap(a, b, "p95_by_hand", n_resamples=1000, method="permutation")
    assert fast.null == slow.null == "permutation-exact"  # 2**8 <= 1000
    assert fast.p_value == slow.p_value


# ---------------------------------------------------------------- corrections


def test_holm_known_answer() -> None:
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5]) == [0.5]
    assert holm([0.6, 0.9]) == [1.0, 1.0]


@pytest.mark.parametrize("bad", [[1.5], [math.nan], [-0.1]])
def test_holm_refuses_non_p_values(bad: list[float]) -> None:
    with pytest.raises(InputError, match="p-values must be finite numbers in"):
        holm(bad)


def test_familywise_false_alarm_chance() -> None:
    assert familywise_false_alarm(10, 0.05) == pytest.approx(0.4012630607)
    assert familywise_false_alarm(1, 0.05) == pytest.approx(0.05)
    assert familywise_false_alarm(0, 0.05) == 0.0
    with pytest.raises(InputError, match="number of tests must be a non-negative integer"):
        familywise_false_alarm(-1, 0.05)
    with pytest.raises(InputError, match="alpha must lie strictly between 0 and 1"):
        familywise_false_alarm(3, 1.5)


@pytest.mark.parametrize("method", ["bootstrap", "permutation"])
def test_maxt_spends_nothing_on_perfectly_correlated_metrics(method: str) -> None:
    d = np.random.default_rng(7).normal(0.15, 1, 120)
    twins = compare_metrics(
        {"x": d, "y": 3 * d}, n_resamples=2000, method=method, correction="maxt"
    )
    holmed = compare_metrics(
        {"x": d, "y": 3 * d}, n_resamples=2000, method=method, correction="holm"
    )
    for name in ("x", "y"):
        assert twins[name].p_adjusted == pytest.approx(twins[name].p_value)
        assert holmed[name].p_adjusted == pytest.approx(min(1.0, 2 * holmed[name].p_value))


@pytest.mark.parametrize("method", ["bootstrap", "permutation"])
def test_maxt_of_one_metric_is_the_raw_p(method: str) -> None:
    d = np.random.default_rng(8).normal(0.2, 1, 90)
    v = compare_metrics({"x": d}, n_resamples=1000, method=method, correction="maxt")["x"]
    assert v.p_adjusted == v.p_value


def test_maxt_on_independent_metrics_is_between_raw_and_bonferroni() -> None:
    rng = np.random.default_rng(9)
    diffs = {f"m{j}": rng.normal(0.12 * j, 1, 200) for j in range(4)}
    c = compare_metrics(diffs, n_resamples=4000, correction="maxt")
    for r in c:
        assert r.p_adjusted is not None
        assert r.p_value <= r.p_adjusted <= min(1.0, 4 * r.p_value) + 2 / 4001
    order_raw = sorted(c.metrics, key=lambda m: c[m].p_value)
    adjusted = [float(c[m].p_adjusted or 0.0) for m in order_raw]
    assert adjusted == sorted(adjusted)  # step-down keeps the order


def test_a_correction_drives_the_decision() -> None:
    rng = np.random.default_rng(10)
    noise = [rng.normal(0.0, 1, 100) for _ in range(8)]
    diffs = {f"m{j}": (x - x.mean()) / x.std(ddof=1) for j, x in enumerate(noise)}
    diffs["m0"] = diffs["m0"] + 0.24  # t = 2.4 exactly: p = 0.018, alone among 8 nulls
    plain = compare_metrics(diffs, n_resamples=2000, method="t")["m0"]
    holmed = compare_metrics(diffs, n_resamples=2000, method="t", correction="holm")["m0"]
    assert plain.significant
    assert plain.significant_adjusted is None
    assert plain.decision
    assert holmed.p_adjusted == pytest.approx(min(1.0, 8 * holmed.p_value))
    assert holmed.significant_adjusted is False
    assert not holmed.decision
    assert holmed.direction == 0


@pytest.mark.parametrize("n", [1, 2, 7, 16, 20])
def test_meeting_in_the_middle_equals_listing_every_pattern(n: int) -> None:
    rng = np.random.default_rng(n)
    fixed = to_fixed(np.column_stack([rng.integers(-3, 4, n), rng.normal(size=n)]).astype(float))
    observed = np.abs(fixed.totals)
    null = perm.permutation_null(fixed.by_metric, [], 100, substream(0, 2), 10**6)
    assert null.exact
    listed = np.vstack([np.abs(c.sums) for c in null.chunks])
    greater, equal = perm.exact_tail_counts(fixed.by_metric, observed)
    assert greater.tolist() == np.count_nonzero(listed > observed, axis=0).tolist()
    assert equal.tolist() == np.count_nonzero(listed == observed, axis=0).tolist()
