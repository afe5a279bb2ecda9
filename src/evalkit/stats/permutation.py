"""The paired sign-flip (randomization) test's null distribution.

Under "the two systems are interchangeable", each case's pair of scores is as
likely swapped as not, so each per-case difference keeps or flips its sign
independently with probability 1/2.  The null statistic of a resample is the
flipped sum; for an aggregate, the aggregate recomputed with the two systems'
rows swapped on the flipped cases.

Three exact-in-distribution ways to produce it, chosen from the data:

* ``exact``: n <= 20 -- every one of the 2**n flip patterns, no randomness
  (aggregates that are not vectorised only when 2**n <= n_resamples);
* ``binomial``: few distinct ``|Δ|`` tuples (see ``discrete_limit``) -- the
  signed count of each group is ``n_g - 2 * Binomial(n_g, 1/2)``;
* ``flips``: Monte Carlo flips drawn case by case.

Statistics arrive chunk by chunk (memory stays bounded even for 2**20
patterns); callers count tails as they stream past.  When only per-metric tail
counts of an exact null are needed, :func:`exact_tail_counts` gets them by
meeting in the middle (2 x 2**(n/2) sums and a sorted search) instead of
listing 2**n patterns.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.aggregates import ResampledAggregate
from evalkit.stats.bootstrap import distinct_rows
from evalkit.stats.fixedpoint import FixedPoint
from evalkit.stats.stream import discrete_limit, flip_blocks, plan_chunks

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

EXACT_MAX_N: Final = 20

PermutationPath = Literal["exact", "binomial", "flips"]


@dataclass(frozen=True)
class NullChunk:
    """Null statistics for some resamples: signed sums (fixed-point) and aggregate Δ."""

    sums: IntArray  # (rows, k)
    aggregates: FloatArray  # (rows, j)


@dataclass(frozen=True)
class PermutationNull:
    path: PermutationPath
    total: int  # patterns enumerated (exact) or resamples drawn
    chunks: Iterator[NullChunk]

    @property
    def exact(self) -> bool:
        return self.path == "exact"


def permutation_null(
    fixed: FixedPoint,
    aggregates: Sequence[ResampledAggregate],
    n_resamples: int,
    gen: np.random.Generator,
    chunk_bytes: int,
) -> PermutationNull:
    units = fixed.units
    n = units.shape[0]
    all_vectorised = all(a.vectorised for a in aggregates)
    if n <= EXACT_MAX_N and (all_vectorised or 2**n <= n_resamples):
        return PermutationNull("exact", 2**n, _exact(units, aggregates, chunk_bytes))
    if not aggregates and units.shape[1]:
        groups = _sign_groups(units)
        if groups is not None:
            values, sizes = groups
            chunks = _binomial(values, sizes, n_resamples, gen, chunk_bytes)
            return PermutationNull("binomial", n_resamples, chunks)
    return PermutationNull(
        "flips", n_resamples, _flips(units, aggregates, n_resamples, gen, chunk_bytes)
    )


def _signed(units: IntArray, flips: IntArray) -> IntArray:
    # sum_i (1 - 2 f_i) K_i  =  sum_i K_i - 2 * sum_{flipped} K_i
    flipped: IntArray = flips @ units
    out: IntArray = units.sum(axis=0, dtype=np.int64) - 2 * flipped
    return out


def _aggregate_deltas(aggregates: Sequence[ResampledAggregate], flips: IntArray) -> FloatArray:
    out = np.empty((flips.shape[0], len(aggregates)), dtype=np.float64)
    for i, aggregate in enumerate(aggregates):
        out[:, i] = aggregate.swapped(flips)
    return out


def _exact(
    units: IntArray, aggregates: Sequence[ResampledAggregate], chunk_bytes: int
) -> Iterator[NullChunk]:
    n = units.shape[0]
    bits = np.arange(n, dtype=np.int64)
    rows = max(1, chunk_bytes // max(1, 24 * n))
    for start in range(0, 2**n, rows):
        patterns = np.arange(start, min(2**n, start + rows), dtype=np.int64)
        flips = (patterns[:, None] >> bits) & 1
        yield NullChunk(_signed(units, flips), _aggregate_deltas(aggregates, flips))


def _all_signed_sums(values: IntArray) -> IntArray:
    """sum_i s_i v_i for every sign pattern s of ``values`` (2**len values)."""
    sums = np.zeros(1, dtype=np.int64)
    for v in values.tolist():
        sums = np.concatenate([sums + v, sums - v])
    return sums


def exact_tail_counts(units: IntArray, observed_abs: IntArray) -> tuple[IntArray, IntArray]:
    """Per column: sign patterns with ``|T| > |t|`` and with ``|T| == |t|`` (all 2**n).

    Splits the cases in two halves, lists each half's signed sums, and for every
    left sum counts the right sums that push ``|left + right|`` past (or onto)
    ``|t|`` with a binary search; exact integer arithmetic throughout.
    """
    n, k = units.shape
    half = n // 2
    greater = np.zeros(k, dtype=np.int64)
    equal = np.zeros(k, dtype=np.int64)
    for j in range(k):
        left = _all_signed_sums(units[:half, j])
        right = np.sort(_all_signed_sums(units[half:, j]))
        t = int(observed_abs[j])
        above = right.shape[0] - np.searchsorted(right, t - left, side="right")
        below = np.searchsorted(right, -t - left, side="left")
        greater[j] = int(above.sum() + below.sum())
        hits_high = np.searchsorted(right, t - left, side="right") - np.searchsorted(
            right, t - left, side="left"
        )
        if t == 0:
            equal[j] = int(hits_high.sum())
            continue
        hits_low = np.searchsorted(right, -t - left, side="right") - np.searchsorted(
            right, -t - left, side="left"
        )
        equal[j] = int(hits_high.sum() + hits_low.sum())
    return greater, equal


def _sign_groups(units: IntArray) -> tuple[IntArray, IntArray] | None:
    """Cases grouped by their difference tuple up to sign; all-zero cases dropped."""
    nonzero = np.any(units != 0, axis=1)
    kept = units[nonzero]
    if kept.shape[0] == 0:
        return np.zeros((0, units.shape[1]), dtype=np.int64), np.zeros(0, dtype=np.int64)
    # orient each tuple so its first non-zero entry is positive
    first = np.argmax(kept != 0, axis=1)
    sign = np.sign(kept[np.arange(kept.shape[0]), first])
    groups = distinct_rows(kept * sign[:, None], discrete_limit(units.shape[0]))
    if groups is None:
        return None
    return groups.values, groups.counts


def _binomial(
    values: IntArray,
    sizes: IntArray,
    n_resamples: int,
    gen: np.random.Generator,
    chunk_bytes: int,
) -> Iterator[NullChunk]:
    k = values.shape[1]
    if values.shape[0] == 0:  # every difference is zero: the null is a point at 0
        for start in range(0, n_resamples, 65536):
            rows = min(65536, n_resamples - start)
            yield NullChunk(np.zeros((rows, k), dtype=np.int64), np.empty((rows, 0)))
        return
    rows_per_chunk = max(1, chunk_bytes // (16 * values.shape[0]))
    for start in range(0, n_resamples, rows_per_chunk):
        rows = min(rows_per_chunk, n_resamples - start)
        flipped = gen.binomial(sizes, 0.5, size=(rows, sizes.shape[0])).astype(np.int64)
        yield NullChunk((sizes - 2 * flipped) @ values, np.empty((rows, 0)))


def _flips(
    units: IntArray,
    aggregates: Sequence[ResampledAggregate],
    n_resamples: int,
    gen: np.random.Generator,
    chunk_bytes: int,
) -> Iterator[NullChunk]:
    n, k = units.shape
    plan = plan_chunks(n, 32, chunk_bytes, split=not aggregates)
    totals = units.sum(axis=0, dtype=np.int64)
    pending = np.zeros(k, dtype=np.int64)
    for block in flip_blocks(gen, n, n_resamples, plan):
        flips = block.draws
        if plan.piece >= n:
            yield NullChunk(_signed(units, flips), _aggregate_deltas(aggregates, flips))
            continue
        # one resample split into pieces: accumulate the flipped sum, emit when complete
        pending += (flips @ units[block.col : block.col + flips.shape[1]])[0]
        if block.col + flips.shape[1] == n:
            yield NullChunk((totals - 2 * pending)[None, :], np.empty((1, 0)))
            pending = np.zeros(k, dtype=np.int64)
