"""Agreement between two graders of the same cases: weighted Cohen's κ and Spearman's ρ."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from evalkit.errors import MetricError

KappaWeights = Literal["quadratic", "linear"]
DEFAULT_RESAMPLES = 2000
DEFAULT_CONFIDENCE = 0.95

_Array = npt.NDArray[np.float64]
_Codes = npt.NDArray[np.intp]


def _paired(x: Sequence[float], y: Sequence[float]) -> tuple[_Array, _Array]:
    if len(x) != len(y):
        raise MetricError(f"agreement needs paired grades, got {len(x)} and {len(y)}")
    if len(x) < 2:
        raise MetricError(f"agreement needs at least 2 graded cases, got {len(x)}")
    a = np.asarray(x, dtype=np.float64)
    b = np.asarray(y, dtype=np.float64)
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise MetricError("agreement: every grade must be a finite number")
    return a, b


def _categories(a: _Array, b: _Array) -> tuple[_Array, _Codes, _Codes]:
    """The grade values both graders used, and each grade's index among them."""
    values, codes = np.unique(np.concatenate([a, b]), return_inverse=True)
    return values, codes[: len(a)], codes[len(a) :]


def _counts(codes: _Codes, k: int, idx: _Codes) -> _Array:
    """``(B, k)`` counts of each category in each resample (row of ``idx``)."""
    counts = np.zeros((idx.shape[0], k))
    np.add.at(counts, (np.arange(idx.shape[0])[:, None], codes[idx]), 1.0)
    return counts


def _kappa_batch(a: _Array, b: _Array, idx: _Codes, weights: KappaWeights) -> _Array:
    """κ_w for each resample (row of ``idx``); NaN where it is undefined."""
    xa, xb = a[idx], b[idx]
    power = 2 if weights == "quadratic" else 1  # the disagreement weight |x - y| ** power
    observed = (np.abs(xa - xb) ** power).sum(axis=1)
    values, codes_a, codes_b = _categories(a, b)
    distance = np.abs(values[:, None] - values[None, :]) ** power
    cnt_a, cnt_b = _counts(codes_a, len(values), idx), _counts(codes_b, len(values), idx)
    expected = np.einsum("bk,kl,bl->b", cnt_a, distance, cnt_b) / idx.shape[1]
    squares = (np.abs(xa) ** power).sum(axis=1) + (np.abs(xb) ** power).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        kappa = 1.0 - observed / expected
    # Constant grades give an expected disagreement of 0 (up to rounding): undefined.
    kappa[~(expected > 1e-9 * np.maximum(squares, 1.0))] = np.nan
    return np.asarray(kappa, dtype=np.float64)


def _midranks(codes: _Codes, k: int, idx: _Codes) -> _Array:
    """Each resampled grade's mid-rank within its resample (ties share their mean rank)."""
    counts = _counts(codes, k, idx)
    mid = np.cumsum(counts, axis=1) - counts + (counts + 1.0) / 2.0
    return np.asarray(np.take_along_axis(mid, codes[idx], axis=1), dtype=np.float64)


def _spearman_batch(a: _Array, b: _Array, idx: _Codes) -> _Array:
    """Spearman's ρ for each resample; NaN where a grader is constant."""
    values, codes_a, codes_b = _categories(a, b)
    ra = _midranks(codes_a, len(values), idx)
    rb = _midranks(codes_b, len(values), idx)
    da = ra - ra.mean(axis=1, keepdims=True)
    db = rb - rb.mean(axis=1, keepdims=True)
    num = (da * db).sum(axis=1)
    den = np.sqrt((da**2).sum(axis=1) * (db**2).sum(axis=1))
    with np.errstate(divide="ignore", invalid="ignore"):
        rho = num / den
    rho[~(den > 1e-9)] = np.nan
    return np.asarray(np.clip(rho, -1.0, 1.0), dtype=np.float64)


def _identity(n: int) -> _Codes:
    return np.arange(n, dtype=np.intp)[None, :]


def _defined(value: float, what: str) -> float:
    if math.isnan(value):
        raise MetricError(
            f"{what} is undefined: one grader gave every case the same grade, so there is "
            "no variation to agree on; grade more varied cases"
        )
    return value


def weighted_kappa(
    x: Sequence[float], y: Sequence[float], weights: KappaWeights = "quadratic"
) -> float:
    """Cohen's weighted κ of paired grades (quadratic or linear disagreement weights)."""
    if weights not in ("quadratic", "linear"):
        raise MetricError(f"kappa weights must be 'quadratic' or 'linear', got {weights!r}")
    a, b = _paired(x, y)
    return _defined(float(_kappa_batch(a, b, _identity(len(a)), weights)[0]), f"{weights} κ")


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rank correlation of paired grades (mid-ranks for ties)."""
    a, b = _paired(x, y)
    return _defined(float(_spearman_batch(a, b, _identity(len(a)))[0]), "Spearman's ρ")


@dataclass(frozen=True)
class Interval:
    """A statistic, its percentile bootstrap interval, and how many resamples were usable."""

    estimate: float
    low: float
    high: float
    usable_resamples: int

    def text(self, digits: int = 2) -> str:
        return f"{self.estimate:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]"


@dataclass(frozen=True)
class Agreement:
    """Judge-human agreement on ``n`` cases, each statistic with its bootstrap interval."""

    n: int
    kappa_quadratic: Interval
    kappa_linear: Interval
    spearman: Interval
    confidence: float
    n_resamples: int
    seed: int

    def line(self, what: str = "judge-human agreement") -> str:
        """One report line, naming the weights and the interval."""
        pct = f"{self.confidence * 100:g}%"
        stats = (self.kappa_quadratic, self.kappa_linear, self.spearman)
        dropped = self.n_resamples - min(s.usable_resamples for s in stats)
        return (
            f"{what} on {self.n} case(s): weighted κ (quadratic) "
            f"{self.kappa_quadratic.text()}, κ (linear) {self.kappa_linear.text()}, "
            f"Spearman ρ {self.spearman.text()} ({pct} percentile bootstrap over cases, "
            f"{self.n_resamples:,} resamples){self._dropped_words(dropped)}"
        )

    def _dropped_words(self, dropped: int) -> str:
        """What leaving out resamples did to the interval, in words (empty: none left out)."""
        if not dropped:
            return ""
        share = dropped / self.n_resamples
        words = (
            f"; {dropped:,} of them ({share:.0%}) drew grades that did not vary (κ and ρ "
            "undefined) and were left out"
        )
        if share >= ROUGH_SHARE:
            words += f": a rough interval, not a {self.confidence * 100:g}% one; grade more cases"
        return words


# Past this share of resamples left out, the interval is called rough in the report.
ROUGH_SHARE = 0.05


def _interval(point: float, draws: _Array, confidence: float) -> Interval:
    usable = draws[~np.isnan(draws)]
    if usable.size == 0:
        return Interval(point, math.nan, math.nan, 0)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(usable, [tail, 1.0 - tail])
    return Interval(point, float(low), float(high), int(usable.size))


def agreement(
    judge: Sequence[float],
    human: Sequence[float],
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    confidence: float = DEFAULT_CONFIDENCE,
    seed: int = 0,
) -> Agreement:
    """Both κ's and Spearman's ρ with percentile bootstrap intervals (cases resampled).

    Raises :class:`MetricError` when a point estimate is undefined.
    """
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise MetricError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    if not 0.0 < confidence < 1.0:
        raise MetricError(f"confidence must be between 0 and 1, got {confidence!r}")
    a, b = _paired(judge, human)
    batches: dict[str, Callable[[_Codes], _Array]] = {
        "quadratic κ": lambda idx: _kappa_batch(a, b, idx, "quadratic"),
        "linear κ": lambda idx: _kappa_batch(a, b, idx, "linear"),
        "Spearman's ρ": lambda idx: _spearman_batch(a, b, idx),
    }
    points = [_defined(float(batch(_identity(len(a)))[0]), w) for w, batch in batches.items()]
    idx = np.random.default_rng(seed).integers(0, len(a), size=(n_resamples, len(a)), dtype=np.intp)
    quadratic, linear, rho = (
        _interval(point, batch(idx), confidence)
        for point, batch in zip(points, batches.values(), strict=True)
    )
    return Agreement(len(a), quadratic, linear, rho, confidence, n_resamples, seed)
