"""The paired bootstrap engine: one resampling pass shared by every metric.

Per resample the engine needs, for each per-case metric, the sum of the
differences at the drawn case positions, and for each aggregate its Δ
recomputed at the same positions.  Work and memory per chunk:

* few metrics: gather each metric's differences at the positions and sum;
* many metrics: turn the positions into per-case counts once (a bincount) and
  multiply the counts matrix by the (n x k) differences matrix (BLAS, exact
  here), so metrics after the first cost a fraction of a gather each;
* few distinct per-case difference tuples (binary metrics, graded judges,
  rank-based metrics): draw the multinomial counts of each distinct tuple
  directly, which is the distribution resampling cases produces, at a cost
  that grows with the number of tuples rather than with n.

Chunks hold at most ``chunk_bytes`` of draws (a resample is split into pieces
when n alone exceeds it), so memory never grows with ``n_resamples x n``; the
stream definition in :mod:`evalkit.stats.stream` makes the result independent
of the chunking, and :mod:`evalkit.stats.fixedpoint` makes every sum exact.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.aggregates import ResampledAggregate
from evalkit.stats.fixedpoint import FixedPoint
from evalkit.stats.stream import discrete_limit, index_blocks, plan_chunks

IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]

#: Up to this many metrics, gathering per metric beats building the counts matrix.
GATHER_MAX_METRICS: Final = 3
#: Gathering is cache-bound: small chunks are faster (measured: 2.4 vs 3.5 ns/draw at
#: 2 vs 16 rows of n = 10**5), so it uses at most this much of the budget.
GATHER_CHUNK_BYTES: Final = 4 * 2**20
#: Products of at most this many multiply-adds stay single-threaded in OpenBLAS
#: (SMP_THRESHOLD_MIN x GEMM_MULTITHREAD_THRESHOLD).  Its threads spin while they
#: wait, and on a shared 2-core runner that turned a 1.5 ns/draw product into
#: 10-80 ns/draw, so the counts matrix is multiplied in column blocks below it.
SINGLE_THREAD_PRODUCT: Final = 2**18

BootstrapPath = Literal["indices", "multinomial"]


@dataclass(frozen=True)
class BootstrapDraws:
    """Resampled statistics: exact sums of per-case metrics, Δ of aggregates."""

    sums: IntArray  # (B, k) in fixed-point units
    aggregates: FloatArray  # (B, j)
    path: BootstrapPath


@dataclass(frozen=True)
class DistinctRows:
    """The distinct rows of an (n x k) integer matrix, ascending, with their counts."""

    values: IntArray  # (T, k)
    counts: IntArray  # (T,)
    codes: IntArray  # (n,) group of each case


def distinct_rows(units: IntArray, limit: int) -> DistinctRows | None:
    """Group cases by their tuple of values, or ``None`` when there are more than ``limit``.

    Columns are folded in one at a time (mixed radix, re-compacted after each)
    so the check stops early and never needs more than n integers of scratch.
    """
    n, k = units.shape
    codes = np.zeros(n, dtype=np.int64)
    distinct = 1
    for j in range(k):
        column_values, column_codes = np.unique(units[:, j], return_inverse=True)
        if column_values.shape[0] > limit:
            return None
        combined = codes * column_values.shape[0] + column_codes.reshape(-1)
        kept, codes = np.unique(combined, return_inverse=True)
        codes = codes.reshape(-1).astype(np.int64)
        distinct = kept.shape[0]
        if distinct > limit:
            return None
    _, first = np.unique(codes, return_index=True)
    counts = np.bincount(codes, minlength=distinct).astype(np.int64)
    return DistinctRows(values=units[first], counts=counts, codes=codes)


def bootstrap_draws(
    fixed: FixedPoint,
    aggregates: Sequence[ResampledAggregate],
    n_resamples: int,
    gen: np.random.Generator,
    chunk_bytes: int,
) -> BootstrapDraws:
    """Resample cases ``n_resamples`` times and return every metric's statistics."""
    units = fixed.units
    if units.shape[1] and not aggregates:
        groups = distinct_rows(units, discrete_limit(units.shape[0]))
        if groups is not None:
            return _multinomial(units.shape[0], groups, n_resamples, gen, chunk_bytes)
    return _generic(units, aggregates, n_resamples, gen, chunk_bytes)


def _multinomial(
    n: int, groups: DistinctRows, n_resamples: int, gen: np.random.Generator, chunk_bytes: int
) -> BootstrapDraws:
    k = groups.values.shape[1]
    sums = np.empty((n_resamples, k), dtype=np.int64)
    probabilities = groups.counts / n
    distinct = groups.values.shape[0]
    rows = max(1, chunk_bytes // (16 * distinct))
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        counts = gen.multinomial(n, probabilities, size=stop - start).astype(np.int64)
        sums[start:stop] = counts @ groups.values
    return BootstrapDraws(sums, np.empty((n_resamples, 0)), "multinomial")


def _counted_sums(by_metric: FloatArray, counts: FloatArray, draws: IntArray) -> IntArray:
    """Sum of each metric over each row of draws, as counts x values (k x n) products."""
    rows, n = counts.shape
    k = by_metric.shape[0]
    for r in range(rows):
        counts[r] = np.bincount(draws[r], minlength=n)
    total = np.zeros((k, rows), dtype=np.float64)
    step = max(256, SINGLE_THREAD_PRODUCT // max(1, k * rows))
    for start in range(0, n, step):
        # integer-valued products and partial sums below 2**53: exact whatever the
        # BLAS kernel, summation order or FMA
        total += by_metric[:, start : start + step] @ counts[:, start : start + step].T
    out: IntArray = np.rint(total.T).astype(np.int64)
    return out


def _generic(
    units: IntArray,
    aggregates: Sequence[ResampledAggregate],
    n_resamples: int,
    gen: np.random.Generator,
    chunk_bytes: int,
) -> BootstrapDraws:
    n, k = units.shape
    # positions + one gathered (or counted) copy per draw, plus an aggregate's scratch
    counting = k > GATHER_MAX_METRICS and n * 16 <= chunk_bytes
    budget = chunk_bytes if counting or aggregates else min(chunk_bytes, GATHER_CHUNK_BYTES)
    plan = plan_chunks(n, 32 if aggregates else 16, budget, split=not aggregates)
    by_metric = np.ascontiguousarray(units.T)
    as_float = by_metric.astype(np.float64) if counting else None
    weights = np.empty((plan.rows, n), dtype=np.float64) if counting else None
    sums = np.zeros((n_resamples, k), dtype=np.int64)
    deltas = np.empty((n_resamples, len(aggregates)), dtype=np.float64)
    for block in index_blocks(gen, n, n_resamples, plan):
        rows = slice(block.start, block.start + block.rows)
        draws = block.draws
        if as_float is not None and weights is not None:
            sums[rows] += _counted_sums(as_float, weights[: block.rows], draws)
        else:
            for j in range(k):
                sums[rows, j] += np.take(by_metric[j], draws).sum(axis=1, dtype=np.int64)
        for i, aggregate in enumerate(aggregates):
            deltas[rows, i] = aggregate.bootstrap(draws)
    return BootstrapDraws(sums, deltas, "indices")
