"""Order statistics by selection, not sorting: O(n) per resample (#27).

The detectable-effect simulation summarises 1,000 resampled copies of an eval and
the gate's aggregate bootstrap 10,000; a sort per copy made them O(n log n) per
resample, and the gate at 10^5 cases spent most of its time in those sorts.
``np.partition`` (introselect) finds any few order statistics of a row in linear
time, which is all these summaries need.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


def shortest_run_at(share: float, n: int) -> int:
    """The fewest of ``n`` cases whose share ``count / n`` is at least ``share`` (0 < share <= 1).

    Computed with the same floating-point division a caller compares, so
    ``count / n >= share`` holds exactly for ``count >= shortest_run_at(share, n)``.
    """
    count = max(1, min(n, math.ceil(share * n)))
    while count > 1 and (count - 1) / n >= share:
        count -= 1
    while count < n and count / n < share:
        count += 1
    return count


def tied_share(d: FloatArray, at_least: float) -> FloatArray:
    """Per row of ``d``, the largest share of cases holding one and the same value,
    exact whenever it is at least ``at_least``; below that, the share of some value,
    also below ``at_least`` (so ``share < at_least`` is decided exactly either way).

    A value held by ``L = shortest_run_at(at_least, n)`` cases or more fills a run of
    at least L consecutive positions of the row in sorted order, and every such run
    covers one of the positions L - 1, 2L - 1, ...; one ``np.partition`` finds the
    values at those positions (about 1/at_least of them) and one comparison per
    candidate counts each.  O(n / at_least) per row instead of a sort.
    """
    rows, n = d.shape
    run = shortest_run_at(at_least, n)
    kth = list(range(run - 1, n, run))
    candidates = np.partition(d, kth, axis=1)[:, kth]
    best = np.zeros(rows, dtype=np.int64)
    for j in range(candidates.shape[1]):
        best = np.maximum(best, np.count_nonzero(d == candidates[:, j : j + 1], axis=1))
    out: FloatArray = best / n
    return out


def value_codes(d: FloatArray) -> tuple[FloatArray, IntArray]:
    """The distinct values of the 1-D ``d`` (ascending) and each case's code, its
    value's index among them: what :func:`code_counts` counts."""
    uniques, codes = np.unique(d, return_inverse=True)
    return uniques, codes.astype(np.int64, copy=False)


def code_counts(codes: IntArray, n_codes: int, draws: IntArray) -> IntArray:
    """Per row of ``draws`` (positions into the data ``codes`` came from), how many
    drawn cases hold each value: one ``bincount`` for all rows."""
    rows = draws.shape[0]
    keyed = codes[draws] + (np.arange(rows, dtype=np.int64) * n_codes)[:, None]
    counts: IntArray = np.bincount(keyed.ravel(), minlength=rows * n_codes).reshape(rows, n_codes)
    return counts


def resampled_tied_share(codes: IntArray, draws: IntArray) -> FloatArray:
    """Per row of ``draws``, the exact largest share of drawn cases holding one and the
    same value.

    The data sets a simulation draws from one sample hold only that sample's values, so
    one count per value finds each row's mode: under a third of what
    :func:`tied_share`'s partition cost the detectable-regression simulation (#27).
    Where both are at least the share :func:`tied_share` was asked for, they are equal.
    """
    # One bincount per row: its counts fit in cache, where one for all rows (as
    # code_counts makes) scattered over rows x n_codes and took 3.7x as long.
    rows, n = draws.shape
    best = np.fromiter((np.bincount(codes[row]).max() for row in draws), np.int64, rows)
    out: FloatArray = best / n
    return out
