"""Exact resampled sums: per-case differences as integers on the data's own lattice."""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Final, Literal

import numpy as np

from evalkit._util.arrays import FloatArray

LatticeKind = Literal["rational", "binary", "zero"]

_MANTISSA_SUMS: Final = 2**52  # a sum of n values, each at most this / n, fits a double exactly
# Rational lattices keep two more bits of headroom: K = A - B doubles the range, and
# rint(v * D) must stay unambiguous (the product's own rounding is below 1/8 there).
_RATIONAL_SUMS: Final = 2**50
#: Largest denominator tried for one value; two fractions p/q, p'/q' with q, q' below it
#: differ by at least 1/q**2 = 1e-12, far more than the matching tolerance below.
MAX_DENOMINATOR: Final = 10**6
#: A value matches a fraction when it is within this many units in the last place of it
#: (a metric computed as a ratio is the double nearest the fraction, 1/2 ulp; a few
#: more cover formulas that add a handful of such ratios).
ULPS: Final = 4
#: Products of at most this many multiply-adds stay single-threaded in OpenBLAS
#: (SMP_THRESHOLD_MIN x GEMM_MULTITHREAD_THRESHOLD); see ``exact_products``.
SINGLE_THREAD_PRODUCT: Final = 2**18


@dataclass(frozen=True)
class FixedPoint:
    """Integer-valued per-case differences, one row per metric, and each metric's lattice."""

    by_metric: FloatArray  # (k, n), every entry an integer with |K| <= 2**52 / n
    denominator: FloatArray  # (k,) D: difference = K / D (an integer-valued float)
    kinds: tuple[LatticeKind, ...] = ()

    @property
    def n(self) -> int:
        return int(self.by_metric.shape[1])

    @property
    def k(self) -> int:
        return int(self.by_metric.shape[0])

    @property
    def totals(self) -> FloatArray:
        """Sum over cases of each metric, exactly (an integer-valued float)."""
        totals: FloatArray = self.by_metric.sum(axis=1)
        return totals

    def means(self, sums: FloatArray) -> FloatArray:
        """Turn resampled sums (rows x k) into resampled means (correctly rounded)."""
        scaled: FloatArray = sums / (self.denominator * self.n)
        return scaled

    def exact_mean(self, j: int) -> float:
        """Metric ``j``'s mean difference from its exact sum, correctly rounded."""
        total = int(self.totals[j])
        return float(Fraction(total, int(self.denominator[j]) * self.n)) if total else 0.0


def _tolerance(value: float, floor: float) -> float:
    return ULPS * float(np.spacing(max(abs(value), floor)))


def rational_denominator(values: FloatArray, n: int, *, floor: float = 0.0) -> int | None:
    """The least common denominator of ``values`` if they lie on a usable rational lattice."""
    distinct = np.unique(np.abs(values))
    largest = float(distinct[-1])  # lattice_column has refused all-zero data
    tol_max = _tolerance(largest, floor)
    # rounding v * D must be unambiguous (error well below 1/2) and n terms must fit
    limit = min(_RATIONAL_SUMS // max(n, 1) / max(largest, 1e-300), 0.25 / tol_max)
    common = 1
    for v in distinct.tolist():
        if v == 0.0:
            continue
        denominator = _value_denominator(v, floor)
        if denominator is None:
            return None
        common = math.lcm(common, denominator)
        if common > limit:
            return None
    return common


@functools.lru_cache(maxsize=4096)
def _value_denominator(v: float, floor: float) -> int | None:
    """The denominator of the small fraction ``v`` is the double of, or ``None``."""
    exact = Fraction(v)
    near = exact.limit_denominator(MAX_DENOMINATOR)
    if abs(exact - near) > _tolerance(v, floor):
        return None
    return near.denominator


def _maps_back(values: FloatArray, whole: FloatArray, d: float, floor: float) -> bool:
    """Every value is within its tolerance of ``whole / d`` (the lattice really fits)."""
    tolerance = ULPS * np.spacing(np.maximum(np.abs(values), floor))
    return bool(np.all(np.abs(values - whole / d) <= tolerance))


def _binary_denominator(largest: float, n: int) -> float:
    # smallest power of two q with largest / q <= 2**52 / n; D = 1 / q
    _, exponent = math.frexp(largest / (_MANTISSA_SUMS // max(n, 1)))
    return math.ldexp(1.0, -exponent)


def lattice_column(
    diffs: FloatArray, sides: tuple[FloatArray, FloatArray] | None = None
) -> tuple[FloatArray, float, LatticeKind]:
    """One metric's integers ``K``, its ``D`` and which lattice was found."""
    n = diffs.shape[0]
    largest = float(np.max(np.abs(diffs))) if n else 0.0
    if largest == 0.0:
        return np.zeros(n, dtype=np.float64), 1.0, "zero"
    if sides is not None:
        a, b = sides
        both = np.concatenate([a, b])
        widest = float(np.max(np.abs(both)))
        common = rational_denominator(both, n)
        if common is not None and widest * common * n <= _RATIONAL_SUMS:
            d = float(common)
            whole_a, whole_b = np.rint(a * d), np.rint(b * d)
            if _maps_back(a, whole_a, d, 0.0) and _maps_back(b, whole_b, d, 0.0):
                return whole_a - whole_b + 0.0, d, "rational"
    else:
        common = rational_denominator(diffs, n, floor=1.0)
        if common is not None:
            d = float(common)
            whole = np.rint(diffs * d)
            if _maps_back(diffs, whole, d, 1.0):
                return whole + 0.0, d, "rational"
    d = _binary_denominator(largest, n)
    # d / q is exact (a power of two); + 0.0 turns -0.0 into 0.0, so equal tuples have equal bits
    return np.rint(diffs * d) + 0.0, d, "binary"


def to_fixed(
    values: FloatArray | Sequence[FloatArray],
    sides: Sequence[tuple[FloatArray, FloatArray] | None] | None = None,
) -> FixedPoint:
    """Put each metric (a column of an n x k array, or one 1-D array each) on its lattice."""
    if isinstance(values, np.ndarray):
        n = values.shape[0]
        columns = [values[:, j] for j in range(values.shape[1])]
    else:
        columns = list(values)
        n = columns[0].shape[0] if columns else 0
    by_metric = np.zeros((len(columns), n), dtype=np.float64)
    denominator = np.ones(len(columns), dtype=np.float64)
    kinds: list[LatticeKind] = []
    for j, column in enumerate(columns):
        pair = sides[j] if sides is not None else None
        by_metric[j], denominator[j], kind = lattice_column(column, pair)
        kinds.append(kind)
    return FixedPoint(by_metric, denominator, tuple(kinds))


def exact_products(left: FloatArray, right: FloatArray) -> FloatArray:
    """``left @ right.T`` for integer-valued float operands whose exact result is < 2**53."""
    rows, n = left.shape
    k = right.shape[0]
    total = np.zeros((rows, k), dtype=np.float64)
    step = max(256, SINGLE_THREAD_PRODUCT // max(1, k * rows))
    for start in range(0, n, step):
        total += left[:, start : start + step] @ right[:, start : start + step].T
    return total
