"""The paired sign-flip (randomization) test's null distribution."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from evalkit._util.arrays import FloatArray, IntArray
from evalkit.stats.aggregates import ResampledAggregate
from evalkit.stats.bootstrap import DistinctRows, distinct_rows
from evalkit.stats.fixedpoint import FixedPoint, exact_products
from evalkit.stats.stream import (
    PURPOSE_PERMUTATION,
    PURPOSE_PERMUTATION_DISCRETE,
    discrete_limit,
    draw_blocks,
    plan_chunks,
    substream,
)
from evalkit.stats.tails import TailCounter

EXACT_MAX_N: Final = 20

PermutationPath = Literal["exact", "binomial", "flips"]


@dataclass(frozen=True)
class NullChunk:
    """Null statistics for some resamples: signed sums (fixed-point) and aggregate Δ."""

    sums: FloatArray  # (rows, k) integer-valued
    aggregates: FloatArray  # (rows, j)


@dataclass(frozen=True)
class PermutationNull:
    path: PermutationPath
    total: int  # patterns enumerated (exact) or resamples drawn
    chunks: Iterator[NullChunk]

    @property
    def exact(self) -> bool:
        return self.path == "exact"


@dataclass(frozen=True)
class MarginalTails:
    """Per column (metrics, then aggregates): null draws beyond and level with the observed."""

    greater: IntArray
    equal: IntArray
    totals: tuple[int, ...]  # patterns enumerated (exact) or resamples drawn
    paths: tuple[PermutationPath, ...]


def marginal_tails(
    fixed: FixedPoint,
    aggregates: Sequence[ResampledAggregate],
    observed_agg_abs: FloatArray,
    n_resamples: int,
    seed: int,
    chunk_bytes: int,
) -> MarginalTails:
    """Each column's tail counts from a null that depends on its own data and the seed only."""
    n, k = fixed.n, fixed.k
    totals_abs = np.abs(fixed.totals)
    greater = np.zeros(k + len(aggregates), dtype=np.int64)
    equal = np.zeros(k + len(aggregates), dtype=np.int64)
    totals = [n_resamples] * (k + len(aggregates))
    paths: list[PermutationPath] = ["flips"] * (k + len(aggregates))
    flipped: list[int] = []
    if n <= EXACT_MAX_N:
        greater[:k], equal[:k] = exact_tail_counts(fixed.by_metric, totals_abs)
        totals[:k] = [2**n] * k
        paths[:k] = ["exact"] * k
    else:
        for j in range(k):
            groups = _sign_groups(fixed.by_metric[j : j + 1])
            if groups is None:
                flipped.append(j)
                continue
            counter = TailCounter(totals_abs[j : j + 1])
            gen = substream(seed, PURPOSE_PERMUTATION_DISCRETE)
            for chunk in _binomial(groups, n_resamples, gen, chunk_bytes):
                counter.update(np.abs(chunk.sums))
            greater[j], equal[j] = int(counter.greater[0]), int(counter.equal[0])
            paths[j] = "binomial"
    if not aggregates and not flipped:
        return MarginalTails(greater, equal, tuple(totals), tuple(paths))
    # The flipped metrics (n > 20, too many distinct values for the binomial path) and the
    # aggregates share one null, drawn from the permutation substream.
    gen = substream(seed, PURPOSE_PERMUTATION)
    null = permutation_null(fixed.by_metric[flipped], aggregates, n_resamples, gen, chunk_bytes)
    counter = TailCounter(np.concatenate([totals_abs[flipped], observed_agg_abs]))
    for chunk in null.chunks:
        counter.update(np.hstack([np.abs(chunk.sums), np.abs(chunk.aggregates)]))
    where = [*flipped, *range(k, k + len(aggregates))]
    greater[where], equal[where] = counter.greater, counter.equal
    for i in where:
        totals[i], paths[i] = null.total, null.path
    return MarginalTails(greater, equal, tuple(totals), tuple(paths))


def permutation_null(
    by_metric: FloatArray,
    aggregates: Sequence[ResampledAggregate],
    n_resamples: int,
    gen: np.random.Generator,
    chunk_bytes: int,
) -> PermutationNull:
    """The joint sign-flip null of the metrics (rows of ``by_metric``) and aggregates."""
    n = by_metric.shape[1]
    all_vectorised = all(a.vectorised for a in aggregates)
    if n <= EXACT_MAX_N and (all_vectorised or 2**n <= n_resamples):
        return PermutationNull("exact", 2**n, _exact(by_metric, aggregates, chunk_bytes))
    if not aggregates and by_metric.shape[0]:
        groups = _sign_groups(by_metric)
        if groups is not None:
            chunks = _binomial(groups, n_resamples, gen, chunk_bytes)
            return PermutationNull("binomial", n_resamples, chunks)
    chunks = _flips(by_metric, aggregates, n_resamples, gen, chunk_bytes)
    return PermutationNull("flips", n_resamples, chunks)


def _signed(by_metric: FloatArray, totals: FloatArray, flips: FloatArray) -> FloatArray:
    # sum_i (1 - 2 f_i) K_i  =  sum_i K_i - 2 * sum_{flipped} K_i, all exact integers
    flipped = exact_products(flips, by_metric)
    out: FloatArray = totals - 2 * flipped
    return out


def _aggregate_deltas(aggregates: Sequence[ResampledAggregate], flips: IntArray) -> FloatArray:
    out = np.empty((flips.shape[0], len(aggregates)), dtype=np.float64)
    for i, aggregate in enumerate(aggregates):
        out[:, i] = aggregate.swapped(flips)
    return out


def _exact(
    by_metric: FloatArray, aggregates: Sequence[ResampledAggregate], chunk_bytes: int
) -> Iterator[NullChunk]:
    n = by_metric.shape[1]
    totals = by_metric.sum(axis=1)
    bits = np.arange(n, dtype=np.int64)
    rows = max(1, chunk_bytes // max(1, 24 * n))
    for start in range(0, 2**n, rows):
        patterns = np.arange(start, min(2**n, start + rows), dtype=np.int64)
        flips = (patterns[:, None] >> bits) & 1
        signed = _signed(by_metric, totals, flips.astype(np.float64))
        yield NullChunk(signed, _aggregate_deltas(aggregates, flips))


def _all_signed_sums(values: FloatArray) -> FloatArray:
    """sum_i s_i v_i for every sign pattern s of ``values`` (2**len values, exact)."""
    sums = np.zeros(1, dtype=np.float64)
    for v in values.tolist():
        sums = np.concatenate([sums + v, sums - v])
    return sums


def exact_tail_counts(by_metric: FloatArray, observed_abs: FloatArray) -> tuple[IntArray, IntArray]:
    """Per metric: sign patterns with ``|T| > |t|`` and with ``|T| == |t|`` (all 2**n)."""
    k, n = by_metric.shape
    half = n // 2
    greater = np.zeros(k, dtype=np.int64)
    equal = np.zeros(k, dtype=np.int64)
    for j in range(k):
        left = _all_signed_sums(by_metric[j, :half])
        right = np.sort(_all_signed_sums(by_metric[j, half:]))
        t = float(observed_abs[j])
        high_lo = np.searchsorted(right, t - left, side="left")
        high_hi = np.searchsorted(right, t - left, side="right")
        low_lo = np.searchsorted(right, -t - left, side="left")
        low_hi = np.searchsorted(right, -t - left, side="right")
        # |left + right| > t: right > t - left, or right < -t - left
        greater[j] = int((right.shape[0] - high_hi).sum() + low_lo.sum())
        on_edge = (high_hi - high_lo).sum() + (0 if t == 0 else (low_hi - low_lo).sum())
        equal[j] = int(on_edge)
    return greater, equal


def _sign_groups(by_metric: FloatArray) -> DistinctRows | None:
    """Cases grouped by their difference tuple up to sign; all-zero cases dropped."""
    k, n = by_metric.shape
    nonzero = np.flatnonzero(np.any(by_metric != 0, axis=0))
    if nonzero.shape[0] == 0:
        return DistinctRows(np.zeros((0, k)), np.zeros(0, dtype=np.int64))
    kept = by_metric[:, nonzero]
    # orient each tuple so that its first non-zero entry is positive
    first = np.argmax(kept != 0, axis=0)
    sign = np.sign(kept[first, np.arange(kept.shape[1])])
    return distinct_rows(kept * sign + 0.0, discrete_limit(n))


def _binomial(
    groups: DistinctRows, n_resamples: int, gen: np.random.Generator, chunk_bytes: int
) -> Iterator[NullChunk]:
    # no group (every difference zero) draws nothing: the null is a point at 0
    by_metric = np.ascontiguousarray(groups.values.T)
    rows_per_chunk = max(1, chunk_bytes // (16 * max(1, groups.counts.shape[0])))
    for start in range(0, n_resamples, rows_per_chunk):
        rows = min(rows_per_chunk, n_resamples - start)
        flipped = gen.binomial(groups.counts, 0.5, size=(rows, groups.counts.shape[0]))
        signed_counts = (groups.counts - 2 * flipped).astype(np.float64)
        sums = exact_products(signed_counts, by_metric)
        yield NullChunk(sums, np.empty((rows, 0)))


def _flips(
    by_metric: FloatArray,
    aggregates: Sequence[ResampledAggregate],
    n_resamples: int,
    gen: np.random.Generator,
    chunk_bytes: int,
) -> Iterator[NullChunk]:
    k, n = by_metric.shape
    plan = plan_chunks(n, 32, chunk_bytes, split=not aggregates)
    totals = by_metric.sum(axis=1)
    pending = np.zeros(k, dtype=np.float64)
    for block in draw_blocks(gen, n, n_resamples, plan, high=2):
        flips = block.draws
        if plan.piece >= n:
            signed = _signed(by_metric, totals, flips.astype(np.float64))
            yield NullChunk(signed, _aggregate_deltas(aggregates, flips))
            continue
        # one resample split into pieces: accumulate the flipped sum, emit when complete
        width = flips.shape[1]
        piece = by_metric[:, block.col : block.col + width]
        pending += exact_products(flips.astype(np.float64), piece)[0]
        if block.col + width == n:
            yield NullChunk((totals - 2 * pending)[None, :], np.empty((1, 0)))
            pending = np.zeros(k, dtype=np.float64)
