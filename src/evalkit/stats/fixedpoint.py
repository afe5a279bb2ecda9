"""Exact resampled sums: per-case differences on a power-of-two integer grid.

Floating-point sums depend on the order of addition, and BLAS/SIMD kernels add
in a machine-dependent order, so a float bootstrap is not bit-for-bit
reproducible across machines and can disagree with itself at ties (the
centred-null count ``|r - observed| >= |observed|`` is a tie test).  Here each
metric's per-case differences are rounded once to integers ``K = rint(d / q)``
with ``q`` a power of two chosen so that any sum of ``n`` of them stays below
2**53 in magnitude.  Every resampled sum is then an exact integer whatever the
summation order, precision, or kernel, and ``q`` scales back exactly.

The rounding moves a case by at most ``q / 2 <= max|d| * n / 2**53`` (about
1e-11 of the largest difference at n = 10**5) -- far below anything a
confidence interval resolves.  Differences that are already on a coarser grid
(binary metrics, judge scores, anything with a few binary digits) are exact.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

_MANTISSA_SUMS = 2**52  # a sum of n values, each below this / n, fits a double exactly


@dataclass(frozen=True)
class FixedPoint:
    """Integer per-case differences ``K`` (n x k) and the grid step ``q`` of each column."""

    units: NDArray[np.int64]
    step: NDArray[np.float64]

    @property
    def totals(self) -> NDArray[np.int64]:
        """Sum over cases of each column, exactly."""
        totals: NDArray[np.int64] = self.units.sum(axis=0, dtype=np.int64)
        return totals

    def means(self, sums: NDArray[np.int64]) -> NDArray[np.float64]:
        """Turn resampled sums (rows x k) into resampled means."""
        n = self.units.shape[0]
        scaled: NDArray[np.float64] = sums.astype(np.float64) * self.step / n
        return scaled


def to_fixed(values: NDArray[np.float64]) -> FixedPoint:
    """Round each column of ``values`` (n x k, finite) onto its own exact grid."""
    n, k = values.shape
    limit = _MANTISSA_SUMS // max(n, 1)
    units = np.zeros((n, k), dtype=np.int64)
    step = np.ones(k, dtype=np.float64)
    for j in range(k):
        column = values[:, j]
        largest = float(np.max(np.abs(column))) if n else 0.0
        if largest == 0.0:
            continue
        # smallest power of two q with largest / q <= limit
        _, exponent = math.frexp(largest / limit)
        units[:, j] = np.rint(np.ldexp(column, -exponent)).astype(np.int64)
        step[j] = math.ldexp(1.0, exponent)
    return FixedPoint(units, step)
