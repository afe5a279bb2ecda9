"""The resampling engine against truth by construction (issue #10, "wrong numbers").

Every data set here is built from integers on a known lattice (P@5 in fifths,
P@10 in tenths, recall in 1/|relevant|), so the exact answer is computed by
brute force in integer arithmetic, independently of the engine: every one of
the 2**n sign patterns for the permutation test, every one of the n**n
resamples for the bootstrap.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from numpy.typing import NDArray

from evalkit._model.results import CaseResult, RunResult
from evalkit.stats.fixedpoint import to_fixed
from evalkit.stats.significance import compare_metrics, paired_bootstrap, paired_bootstrap_many
from evalkit.targets.base import TargetResponse

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]

#: denominators of the lattices we draw from: P@5, P@10, P@3, recall over 1..7 relevant
LATTICES = {"p@5": [5], "p@10": [10], "p@3": [3], "recall": [1, 2, 3, 4, 5, 6, 7]}


def lattice_values(
    rng: np.random.Generator, n: int, kind: str
) -> tuple[FloatArray, FloatArray, list[Fraction], list[Fraction]]:
    """Both systems' per-case values: exact fractions and the doubles a metric would return."""
    dens = LATTICES[kind]
    fa, fb = [], []
    for _ in range(n):
        den = int(rng.choice(dens))  # recall: one |relevant| per case, shared by both systems
        fa.append(Fraction(int(rng.integers(0, den + 1)), den))
        fb.append(Fraction(int(rng.integers(0, den + 1)), den))
    a = np.array([x.numerator / x.denominator for x in fa])
    b = np.array([x.numerator / x.denominator for x in fb])
    return a, b, fa, fb


def run(name: str, values: FloatArray) -> RunResult[CaseResult]:
    return RunResult(
        name, [CaseResult(f"q{i:03d}", None, {"m": float(v)}) for i, v in enumerate(values)]
    )


def integer_diffs(fa: list[Fraction], fb: list[Fraction]) -> tuple[IntArray, int]:
    common = math.lcm(*(x.denominator for x in fa + fb))
    k = np.array([int((x - y) * common) for x, y in zip(fa, fb, strict=True)], dtype=np.int64)
    return k, common


def brute_force_mid_p(k: IntArray) -> float:
    """Exact two-sided mid-p of the sign-flip test, every pattern listed (2**n, integers)."""
    n = k.shape[0]
    t = abs(int(k.sum()))
    if t == 0:
        return 1.0
    patterns = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(np.int64)
    totals = np.abs((1 - 2 * patterns) @ k)
    greater = int(np.count_nonzero(totals > t))
    equal = int(np.count_nonzero(totals == t))
    return float((greater + 0.5 * equal) / 2**n)


def exhaustive_bootstrap_p(k: IntArray) -> float:
    """Share of all n**n resamples with |S_r - S| >= |S| (the centred null), in integers."""
    n = k.shape[0]
    s = int(k.sum())
    hits = 0
    for draw in itertools.product(range(n), repeat=n):
        if abs(int(k[list(draw)].sum()) - s) >= abs(s):
            hits += 1
    return float(hits / n**n)


# ---------------------------------------------------------------- permutation: exact


@pytest.mark.parametrize("kind", sorted(LATTICES))
def test_permutation_p_equals_brute_force_enumeration(kind: str) -> None:
    rng = np.random.default_rng(sum(map(ord, kind)))
    checked = 0
    for trial in range(24):
        n = int(rng.integers(4, 17))
        a, b, fa, fb = lattice_values(rng, n, kind)
        k, _ = integer_diffs(fa, fb)
        expected = brute_force_mid_p(k)
        by_rows = paired_bootstrap(run("a", a), run("b", b), "m", method="permutation")
        by_diffs = compare_metrics({"m": a - b}, method="permutation")["m"]
        assert by_rows.p_value == expected, (kind, trial, n)
        assert by_diffs.p_value == expected, (kind, trial, n)
        assert by_rows.null == "permutation-exact"
        checked += 1
    assert checked == 24


@pytest.mark.slow  # 3 x 2^20 sign flips, brute-forced; the smaller n above stay fast
def test_permutation_ties_are_counted_at_n_20() -> None:
    """The largest exact n: P@10 values with many tied null sums."""
    rng = np.random.default_rng(2020)
    for _ in range(3):
        a, b, fa, fb = lattice_values(rng, 20, "p@10")
        k, _ = integer_diffs(fa, fb)
        assert paired_bootstrap(run("a", a), run("b", b), "m", method="permutation").p_value == (
            brute_force_mid_p(k)
        )


def test_an_observed_difference_of_exactly_zero_gives_p_one() -> None:
    # 0.1 + 0.2 != 0.3 in doubles, so mean(a) - mean(b) is 2.8e-17 here, not 0
    a = np.array([0.1, 0.2, 0.4, 0.6, 0.2, 0.8])
    b = np.array([0.3, 0.0, 0.6, 0.4, 0.8, 0.2])
    for method in ("bootstrap", "permutation", "t"):
        v = paired_bootstrap(run("a", a), run("b", b), "m", method=method)
        assert v.observed == 0.0
        assert v.p_value == 1.0, method
        w = compare_metrics({"m": a - b}, method=method)["m"]
        assert (w.observed, w.p_value) == (0.0, 1.0)


# ---------------------------------------------------------------- bootstrap: exhaustive


@pytest.mark.parametrize("kind", ["p@5", "p@10", "recall"])
def test_bootstrap_p_matches_exhaustive_resampling(kind: str) -> None:
    """All n**n resamples of tiny evals give the exact centred-null p; B draws estimate it."""
    rng = np.random.default_rng(7 + len(kind))
    resamples = 40_000
    done = 0
    while done < 4:
        n = int(rng.integers(4, 7))
        a, b, fa, fb = lattice_values(rng, n, kind)
        k, _ = integer_diffs(fa, fb)
        if not k.any():
            continue
        exact = exhaustive_bootstrap_p(k)
        v = paired_bootstrap(run("a", a), run("b", b), "m", n_resamples=resamples, seed=done)
        # the +1 rule adds at most 1 / (B + 1); 5 standard errors of a binomial share
        spread = 5 * math.sqrt(max(exact * (1 - exact), 1e-4) / resamples) + 1 / resamples
        assert abs(v.p_value - exact) <= spread, (kind, n, exact, v.p_value)
        done += 1


def test_bootstrap_counts_lattice_ties_that_binary_rounding_missed() -> None:
    """P@5 differences: resampled sums equal to the observed one are ties (counted as extreme)."""
    a = np.array([0.6, 0.4, 0.2, 0.8, 0.4])
    b = np.array([0.4, 0.4, 0.4, 0.6, 0.2])
    k = np.array([1, 0, -1, 1, 1])
    exact = exhaustive_bootstrap_p(k)
    v = paired_bootstrap(run("a", a), run("b", b), "m", n_resamples=50_000, seed=3)
    assert abs(v.p_value - exact) < 0.01


# ---------------------------------------------------------------- the lattice itself


def test_lattice_is_found_on_values_and_on_differences() -> None:
    rng = np.random.default_rng(5)
    for kind, dens in LATTICES.items():
        a, b, fa, fb = lattice_values(rng, 50, kind)
        k, common = integer_diffs(fa, fb)
        for fixed in (to_fixed([a - b], [(a, b)]), to_fixed([a - b])):
            assert fixed.kinds == ("rational",), kind
            scale = fixed.denominator[0] / common
            assert np.array_equal(fixed.by_metric[0], k * scale), kind
            assert math.lcm(*dens) % int(fixed.denominator[0]) == 0 or kind == "recall"


def test_continuous_values_stay_on_the_binary_grid() -> None:
    d = np.random.default_rng(1).normal(size=200)
    fixed = to_fixed([d])
    assert fixed.kinds == ("binary",)
    assert np.all(np.abs(fixed.by_metric[0] / fixed.denominator[0] - d) <= 1e-12)


def test_constant_differences_give_an_interval_that_holds_the_observed_value() -> None:
    """#12: constant 0.2 gave [0.19999999999999930, ...] around an observed 0.19999999999999996."""
    rng = np.random.default_rng(12)
    constants = [0.2, 0.1, 0.05, 1 / 3, 0.7, -0.4, 1e-3, 123.456, *rng.normal(size=6).tolist()]
    for c in constants:
        for n in (2, 3, 7, 30, 101, 1000, 5000):
            for method in ("bootstrap", "permutation", "t"):
                v = compare_metrics({"m": np.full(n, c)}, n_resamples=500, method=method)["m"]
                assert v.ci_low == v.observed == v.ci_high, (c, n, method)
    # and from values: 0.6 - 0.4 and 0.8 - 0.6 are different doubles, the same step 1/5
    a = np.array([0.6, 0.8, 1.0, 0.4] * 10)
    b = np.array([0.4, 0.6, 0.8, 0.2] * 10)
    v = paired_bootstrap(run("a", a), run("b", b), "m")
    assert v.ci_low == v.observed == v.ci_high == 0.2


# ---------------------------------------------------------------- swap symmetry


def _swap_cases() -> list[tuple[str, FloatArray, FloatArray]]:
    rng = np.random.default_rng(99)
    cases: list[tuple[str, FloatArray, FloatArray]] = []
    for i in range(5):
        n = int(rng.integers(8, 60))
        base = rng.uniform(0, 1, n)
        cases.append((f"continuous-small-{i}", base + rng.normal(0.02, 0.2, n), base))
        a, b, _, _ = lattice_values(rng, int(rng.integers(30, 400)), "p@10")
        cases.append((f"discrete-{i}", a, b))
        a, b, _, _ = lattice_values(rng, int(rng.integers(21, 60)), "recall")
        cases.append((f"recall-{i}", a, b))
    base = rng.uniform(0, 1, 3000)
    cases.append(("continuous-large", base + rng.normal(0.01, 0.2, 3000), base))
    return cases


@pytest.mark.parametrize("method", ["bootstrap", "permutation", "t"])
def test_swapping_the_systems_mirrors_the_result_on_every_path(method: str) -> None:
    paths = set()
    for label, a, b in _swap_cases():
        for seed in (0, 42):
            ab = paired_bootstrap(run("A", a), run("C", b), "m", 2000, seed, method=method)
            ba = paired_bootstrap(run("C", b), run("A", a), "m", 2000, seed, method=method)
            paths.add(ab.resampling)
            assert ba.observed == -ab.observed, label
            assert (ba.ci_low, ba.ci_high) == (-ab.ci_high, -ab.ci_low), label
            assert ba.p_value == ab.p_value, label
            assert ba.significant == ab.significant, label
            assert (ba.wins, ba.losses, ba.ties) == (ab.losses, ab.wins, ab.ties), label
            assert (ba.resampling, ba.null) == (ab.resampling, ab.null)
    assert paths == {"multinomial", "indices"}


# ---------------------------------------------------------------- metric-set independence


@pytest.mark.parametrize("method", ["bootstrap", "permutation", "t"])
@pytest.mark.parametrize("n", [12, 45, 600])
def test_a_metrics_result_does_not_depend_on_the_other_metrics(method: str, n: int) -> None:
    rng = np.random.default_rng(n)
    a5, b5, _, _ = lattice_values(rng, n, "p@5")
    a10, b10, _, _ = lattice_values(rng, n, "p@10")
    base = rng.uniform(0, 1, n)
    cont_a, cont_b = base + rng.normal(0, 0.3, n), base
    lat_a, lat_b = rng.exponential(50, n), rng.exponential(50, n)
    rows_a = [
        CaseResult(
            f"q{i:03d}",
            TargetResponse([], latency_ms=float(lat_a[i])),
            {"p5": a5[i], "p10": a10[i], "c": cont_a[i]},
        )
        for i in range(n)
    ]
    rows_b = [
        CaseResult(
            f"q{i:03d}",
            TargetResponse([], latency_ms=float(lat_b[i])),
            {"p5": b5[i], "p10": b10[i], "c": cont_b[i]},
        )
        for i in range(n)
    ]
    ra, rb = RunResult("a", rows_a), RunResult("b", rows_b)
    others = ["p10", "c", "p5"] + (["latency_p95"] if method != "t" else [])
    together = paired_bootstrap_many(ra, rb, others, 3000, 7, method=method)
    for metric in ("p5", "p10", "c"):
        alone = paired_bootstrap(ra, rb, metric, 3000, 7, method=method)
        joint = together[metric]
        assert (alone.ci, alone.p_value, alone.observed) == (
            joint.ci,
            joint.p_value,
            joint.observed,
        ), metric
    diffs = {"p5": a5 - b5, "c": cont_a - cont_b}
    pair = compare_metrics(diffs, 3000, 7, method=method)
    for metric in diffs:
        alone_d = compare_metrics({metric: diffs[metric]}, 3000, 7, method=method)[metric]
        assert (alone_d.ci, alone_d.p_value) == (pair[metric].ci, pair[metric].p_value)


@pytest.mark.parametrize("method", ["bootstrap", "permutation"])
def test_swapping_mirrors_aggregates_too(method: str) -> None:
    rng = np.random.default_rng(31)
    for n in (15, 80):
        lat_a, lat_b = rng.exponential(50, n), rng.exponential(60, n)
        ra = RunResult(
            "A",
            [
                CaseResult(f"q{i}", TargetResponse([], latency_ms=float(lat_a[i])), {})
                for i in range(n)
            ],
        )
        rb = RunResult(
            "C",
            [
                CaseResult(f"q{i}", TargetResponse([], latency_ms=float(lat_b[i])), {})
                for i in range(n)
            ],
        )
        ab = paired_bootstrap(ra, rb, "latency_p95", 1000, 5, method=method)
        ba = paired_bootstrap(rb, ra, "latency_p95", 1000, 5, method=method)
        assert ba.observed == -ab.observed
        assert (ba.ci_low, ba.ci_high) == (-ab.ci_high, -ab.ci_low)
        assert ba.p_value == ab.p_value
