"""The paired bootstrap engine: one resampling pass shared by every metric."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from evalkit._util.arrays import FloatArray, IntArray
from evalkit.stats.aggregates import ResampledAggregate
from evalkit.stats.fixedpoint import FixedPoint, exact_products
from evalkit.stats.stream import (
    PURPOSE_BOOTSTRAP,
    PURPOSE_BOOTSTRAP_DISCRETE,
    discrete_limit,
    draw_blocks,
    plan_chunks,
    substream,
)

#: Up to this many metrics, gathering per metric beats building the counts matrix.
GATHER_MAX_METRICS: Final = 3
#: Gathering is cache-bound (small chunks are faster), so it uses at most this much budget.
GATHER_CHUNK_BYTES: Final = 4 * 2**20

BootstrapPath = Literal["indices", "multinomial"]


@dataclass(frozen=True)
class BootstrapDraws:
    """Resampled statistics: exact sums of per-case metrics, Δ of aggregates."""

    sums: FloatArray  # (B, k) integer-valued, in fixed-point units
    aggregates: FloatArray  # (B, j)
    paths: tuple[BootstrapPath, ...]  # per metric, then per aggregate


@dataclass(frozen=True)
class DistinctRows:
    """Distinct per-case tuples (in the order of their first case) and how many cases have each."""

    values: FloatArray  # (T, k)
    counts: IntArray  # (T,)


def distinct_rows(by_metric: FloatArray, limit: int) -> DistinctRows | None:
    """Group cases by their tuple of values (exactly: the metrics folded in one at a time,
    mixed radix), or ``None`` when there are more than ``limit``."""
    n = by_metric.shape[1]
    codes = np.zeros(n, dtype=np.int64)
    for row in by_metric:
        values, column_codes = np.unique(row, return_inverse=True)
        if values.shape[0] > limit:
            return None
        _, codes = np.unique(
            codes * values.shape[0] + column_codes.reshape(-1), return_inverse=True
        )
        codes = codes.reshape(-1).astype(np.int64)
    _, first, counts = np.unique(codes, return_index=True, return_counts=True)
    if first.shape[0] > limit:
        return None
    order = np.argsort(first, kind="stable")  # groups by their first case
    return DistinctRows(by_metric[:, first[order]].T.copy(), counts[order].astype(np.int64))


def bootstrap_draws(
    fixed: FixedPoint,
    aggregates: Sequence[ResampledAggregate],
    n_resamples: int,
    gen: np.random.Generator,
    chunk_bytes: int,
) -> BootstrapDraws:
    """Resample cases jointly for every metric (one stream; correlations kept)."""
    if fixed.k and not aggregates:
        groups = distinct_rows(fixed.by_metric, discrete_limit(fixed.n))
        if groups is not None:
            sums = _multinomial(fixed.n, groups, n_resamples, gen, chunk_bytes)
            discrete = tuple[BootstrapPath, ...](["multinomial"] * fixed.k)
            return BootstrapDraws(sums, np.empty((n_resamples, 0)), discrete)
    return _generic(fixed.by_metric, aggregates, n_resamples, gen, chunk_bytes)


def marginal_draws(
    fixed: FixedPoint,
    aggregates: Sequence[ResampledAggregate],
    n_resamples: int,
    seed: int,
    chunk_bytes: int,
) -> BootstrapDraws:
    """Each metric's resampled statistics, a function of its own data and the seed only."""
    limit = discrete_limit(fixed.n)
    sums = np.empty((n_resamples, fixed.k), dtype=np.float64)
    paths: list[BootstrapPath] = []
    indexed: list[int] = []
    for j in range(fixed.k):
        groups = distinct_rows(fixed.by_metric[j : j + 1], limit)
        if groups is None:
            indexed.append(j)
            paths.append("indices")
            continue
        gen = substream(seed, PURPOSE_BOOTSTRAP_DISCRETE)
        sums[:, j] = _multinomial(fixed.n, groups, n_resamples, gen, chunk_bytes)[:, 0]
        paths.append("multinomial")
    deltas = np.empty((n_resamples, 0), dtype=np.float64)
    if indexed or aggregates:
        gen = substream(seed, PURPOSE_BOOTSTRAP)
        shared = _generic(fixed.by_metric[indexed], aggregates, n_resamples, gen, chunk_bytes)
        sums[:, indexed] = shared.sums
        deltas = shared.aggregates
    shared_paths = tuple[BootstrapPath, ...](["indices"] * len(aggregates))
    return BootstrapDraws(sums, deltas, (*paths, *shared_paths))


def _multinomial(
    n: int, groups: DistinctRows, n_resamples: int, gen: np.random.Generator, chunk_bytes: int
) -> FloatArray:
    k = groups.values.shape[1]
    sums = np.empty((n_resamples, k), dtype=np.float64)
    probabilities = groups.counts / n
    distinct = groups.values.shape[0]
    by_metric = np.ascontiguousarray(groups.values.T)
    rows = max(1, chunk_bytes // (16 * distinct))
    for start in range(0, n_resamples, rows):
        stop = min(n_resamples, start + rows)
        counts = gen.multinomial(n, probabilities, size=stop - start).astype(np.float64)
        sums[start:stop] = exact_products(counts, by_metric)
    return sums


def _counted_sums(by_metric: FloatArray, counts: FloatArray, draws: IntArray) -> FloatArray:
    """Sum of each metric over each row of draws, as a counts x values product."""
    n = counts.shape[1]
    for r in range(counts.shape[0]):
        counts[r] = np.bincount(draws[r], minlength=n)
    return exact_products(counts, by_metric)


def _generic(
    by_metric: FloatArray,
    aggregates: Sequence[ResampledAggregate],
    n_resamples: int,
    gen: np.random.Generator,
    chunk_bytes: int,
) -> BootstrapDraws:
    k, n = by_metric.shape
    # positions + one gathered (or counted) copy per draw, plus an aggregate's scratch
    counting = k > GATHER_MAX_METRICS and n * 16 <= chunk_bytes
    budget = chunk_bytes if counting or aggregates else min(chunk_bytes, GATHER_CHUNK_BYTES)
    plan = plan_chunks(n, 32 if aggregates else 16, budget, split=not aggregates)
    weights = np.empty((plan.rows, n), dtype=np.float64) if counting else None
    sums = np.zeros((n_resamples, k), dtype=np.float64)
    deltas = np.empty((n_resamples, len(aggregates)), dtype=np.float64)
    for block in draw_blocks(gen, n, n_resamples, plan, high=n):
        rows = slice(block.start, block.start + block.rows)
        draws = block.draws
        if weights is not None:
            sums[rows] += _counted_sums(by_metric, weights[: block.rows], draws)
        else:
            for j in range(k):
                # integer-valued floats, partial sums below 2**52: exact
                sums[rows, j] += np.take(by_metric[j], draws).sum(axis=1)
        for i, aggregate in enumerate(aggregates):
            deltas[rows, i] = aggregate.bootstrap(draws)
    indexed = tuple[BootstrapPath, ...](["indices"] * (k + len(aggregates)))
    return BootstrapDraws(sums, deltas, indexed)
