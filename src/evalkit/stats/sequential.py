"""Anytime-valid confidence sequences for a mean, and when a check is settled by one.

A confidence sequence covers the mean at every sample size at once, so a gate may look
after every batch and stop on any rule.  With a declared range it is the empirical-Bernstein
sequence, otherwise the asymptotic one (the constructions and references:
docs/design/early-stopping.md and docs/design/code-notes.md).  Each is two-sided from two
one-sided sequences at alpha/2, intersected over the looks so a settled check stays settled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
from numpy.typing import NDArray

from evalkit._util.arrays import FloatArray

Settled = Literal["pass", "fail"] | None

# Waudby-Smith & Ramdas cap the bet at 1/2 or 3/4; 1/2 keeps psi_E(lambda) moderate.
_BET_CAP: Final = 0.5


@dataclass(frozen=True)
class ConfidenceSequence:
    """The bounds and running mean at each look (``looks[j]`` values seen at look j)."""

    looks: NDArray[np.int64]
    low: FloatArray
    high: FloatArray
    mean: FloatArray
    alpha: float
    construction: Literal["empirical-bernstein", "asymptotic"]

    @property
    def last(self) -> tuple[float, float]:
        """The interval at the last look."""
        return float(self.low[-1]), float(self.high[-1])


def _check_inputs(values: FloatArray, alpha: float) -> None:
    if values.ndim != 1 or values.size == 0:
        raise ValueError("a confidence sequence needs a non-empty one-dimensional array")
    if not np.all(np.isfinite(values)):
        raise ValueError("a confidence sequence needs finite values")
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")


def _looks(n: int, looks: object) -> NDArray[np.int64]:
    if looks is None:
        return np.arange(1, n + 1, dtype=np.int64)
    at = np.asarray(looks, dtype=np.int64)
    if at.ndim != 1 or at.size == 0 or at[0] < 1 or at[-1] > n or np.any(np.diff(at) <= 0):
        raise ValueError(f"looks must be increasing sample sizes between 1 and {n}")
    return at


def _running(low: FloatArray, high: FloatArray) -> tuple[FloatArray, FloatArray]:
    low = np.maximum.accumulate(low)
    high = np.minimum.accumulate(high)
    # An empty intersection can only happen on the alpha-probability event; keep a
    # point there rather than an inverted interval.
    crossed = low > high
    if not crossed.any():
        return low, high
    mid = (low + high) / 2.0
    return np.where(crossed, mid, low), np.where(crossed, mid, high)


def _empirical_bernstein(unit: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """Bounds for the mean of values in [0, 1]: WSR (2024) predictable plug-in EB."""
    n = unit.size
    t = np.arange(1, n + 1, dtype=np.float64)
    # Regularised running mean and variance: one pseudo-observation at 1/2 with the
    # largest variance [0, 1] allows, so the first bets are small.
    mean_t = (0.5 + np.cumsum(unit)) / (t + 1.0)
    prev_mean = np.concatenate(([0.5], mean_t[:-1]))
    var_t = (0.25 + np.cumsum((unit - mean_t) ** 2)) / (t + 1.0)
    prev_var = np.concatenate(([0.25], var_t[:-1]))
    log_term = math.log(1.0 / (alpha / 2.0))  # each side at alpha/2
    bets = np.minimum(np.sqrt(2.0 * log_term / (prev_var * t * np.log1p(t))), _BET_CAP)
    psi = (-np.log1p(-bets) - bets) / 4.0
    penalty = 4.0 * (unit - prev_mean) ** 2 * psi
    weight = np.cumsum(bets)
    centre = np.cumsum(bets * unit) / weight
    half = (log_term + np.cumsum(penalty)) / weight
    return np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0)


def _asymptotic(
    values: FloatArray, alpha: float, planned_n: int, prior_variance: float | None
) -> tuple[FloatArray, FloatArray]:
    n = values.size
    t = np.arange(1, n + 1, dtype=np.float64)
    mean = np.cumsum(values) / t
    # the sum of squares about the mean of the first t values, for every t
    sq = np.maximum(np.cumsum(values * values) - t * mean * mean, 0.0)
    if prior_variance is not None:
        # One pseudo-observation at a spread fixed before the sample (the baseline's),
        # as the bounded sequence regularises with the range's: a run of ties must not
        # collapse the interval to a point.
        var = (prior_variance + sq) / (t + 1.0)
    else:
        # one value has no spread to plug in: no bound until two are seen
        var = np.where(t > 1.0, sq / np.maximum(t - 1.0, 1.0), np.inf)
    half = np.sqrt(var) * _radius(t, alpha, planned_n)
    return mean - half, mean + half


def _radius(t: FloatArray, alpha: float, planned_n: int) -> FloatArray:
    """The one-sided normal-mixture boundary at alpha/2 per side, per unit of spread."""
    # rho² of the mixture tightest at planned_n: Waudby-Smith et al. (2021)'s closed form
    log_a = -2.0 * math.log(alpha / 2.0)
    rho2 = (log_a + math.log(log_a + 1.0)) / max(planned_n, 1)
    return np.sqrt(
        2.0 * (t * rho2 + 1.0) / (t * t * rho2) * np.log1p(np.sqrt(t * rho2 + 1.0) / alpha)
    )


def ratio_confidence_sequence(
    totals: FloatArray,
    sizes: FloatArray,
    alpha: float,
    *,
    planned_n: int | None = None,
    prior_variance: float | None = None,
    looks: object = None,
) -> ConfidenceSequence:
    """The asymptotic sequence for Σ totals / Σ sizes over units (clusters) in order, through
    its linearisation (docs/design/code-notes.md); ``planned_n`` and ``looks`` count units."""
    s = np.asarray(totals, dtype=np.float64)
    m = np.asarray(sizes, dtype=np.float64)
    _check_inputs(s, alpha)
    if m.shape != s.shape or not np.all(np.isfinite(m)) or np.any(m <= 0):
        raise ValueError("every unit needs a positive size, one per total")
    at = _looks(s.size, looks)
    t = np.arange(1, s.size + 1, dtype=np.float64)
    sum_s, sum_m = np.cumsum(s), np.cumsum(m)
    theta = sum_s / sum_m
    # Σ (S − θ m)² at each running θ, from the running sums of squares and products
    sq = np.cumsum(s * s) - 2.0 * theta * np.cumsum(s * m) + theta * theta * np.cumsum(m * m)
    sq = np.maximum(sq, 0.0)
    if prior_variance is not None:
        var = (prior_variance * np.cumsum(m * m) / t + sq) / (t + 1.0)
    else:
        var = np.where(t > 1.0, sq / np.maximum(t - 1.0, 1.0), np.inf)
    planned = s.size if planned_n is None else planned_n
    half = np.sqrt(var) * _radius(t, alpha, planned) / (sum_m / t)
    low, high = _running((theta - half)[at - 1], (theta + half)[at - 1])
    return ConfidenceSequence(at, low, high, theta[at - 1], alpha, "asymptotic")


def confidence_sequence(
    values: FloatArray,
    alpha: float,
    *,
    value_range: tuple[float, float] | None = None,
    planned_n: int | None = None,
    prior_variance: float | None = None,
    looks: object = None,
) -> ConfidenceSequence:
    """A two-sided confidence sequence at 1 − alpha for the mean of ``values`` in order, read
    at ``looks`` (default: every value): empirical-Bernstein within ``value_range``, else
    asymptotic, tightest at ``planned_n`` and regularised by ``prior_variance``."""
    values = np.asarray(values, dtype=np.float64)
    _check_inputs(values, alpha)
    at = _looks(values.size, looks)
    t = np.arange(1, values.size + 1, dtype=np.float64)
    mean = (np.cumsum(values) / t)[at - 1]
    if value_range is not None:
        lo, hi = float(value_range[0]), float(value_range[1])
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise ValueError(f"value_range must be finite with lo < hi, got {value_range!r}")
        if values.min() < lo or values.max() > hi:
            raise ValueError(f"a value lies outside the declared range [{lo:g}, {hi:g}]")
        low_u, high_u = _empirical_bernstein((values - lo) / (hi - lo), alpha)
        low, high = _running(lo + (hi - lo) * low_u[at - 1], lo + (hi - lo) * high_u[at - 1])
        return ConfidenceSequence(at, low, high, mean, alpha, "empirical-bernstein")
    planned = values.size if planned_n is None else planned_n
    raw_low, raw_high = _asymptotic(values, alpha, planned, prior_variance)
    low, high = _running(raw_low[at - 1], raw_high[at - 1])
    return ConfidenceSequence(at, low, high, mean, alpha, "asymptotic")


def settle_comparison(
    low: float,
    high: float,
    *,
    higher_is_better: bool,
    fail_beyond: float,
    pass_within: float | None,
) -> Settled:
    """Whether an interval for a paired difference settles a check, and which way: failed
    when it lies wholly beyond ``fail_beyond`` on the bad side, passed when it rules out
    every regression larger than ``pass_within`` (None: it can only fail)."""
    # in units where a gain is positive: the worst and best plausible change
    worst, best = (low, high) if higher_is_better else (-high, -low)
    if best < -fail_beyond:
        return "fail"
    if pass_within is not None and worst > -pass_within:
        return "pass"
    return None


def settle_threshold(low: float, high: float, *, op: str, threshold: float) -> Settled:
    """Whether an interval for a check's own mean settles its fixed line ``op threshold``.

    ``>=`` passes when the interval lies at or above the line and fails when wholly
    below; ``<=`` mirrors it; ``==`` can only be settled by failing (the line outside).
    """
    if op == ">=":
        return "pass" if low >= threshold else "fail" if high < threshold else None
    if op == "<=":
        return "pass" if high <= threshold else "fail" if low > threshold else None
    if op == "==":
        return "fail" if threshold < low or threshold > high else None
    raise ValueError(f"unknown op {op!r}")
