"""The resampling stream: which random numbers a comparison draws, in which order.

The stream is part of the statistics' definition, like a metric's formula: the
same seed must give the same resamples on any machine, whatever memory budget
or chunk size this process happens to use.  :data:`RESAMPLING_STREAM` names the
definition below and is recorded in every result (and so in run artefacts); a
change to anything in this module that alters a single draw must bump it.

Definition of ``evalkit-resample/2`` (``/1`` grouped the discrete paths by the
tuple of all metrics in the call, sorted by value: a metric's result depended
on its neighbours and swapping the systems reordered the groups):

* Every random number comes from ``numpy.random.Generator(PCG64(SeedSequence(
  seed, spawn_key=(purpose,))))``; one independent substream per *purpose*
  (bootstrap, permutation, power simulation), so adding a permutation test to a
  comparison never changes its bootstrap.
* Each per-case metric is resampled on its own terms: its draws depend on the
  seed and its own differences only, never on the other metrics of the call.
  Metrics that take the case-level path share its positions (and with them the
  aggregates); metrics on a discrete path each restart the discrete substream.
* Case-level bootstrap (the generic path): resample ``r = 0 .. B-1`` draws its
  ``n`` case positions as ``integers(0, n, size=n, dtype=int64)`` (positions
  index the cases sorted by id), resample after resample.  numpy's ``int64``
  bounded integers consume the PCG64 stream sequentially, so drawing a block
  of rows, or one row in pieces, yields the same numbers (a test pins this).
* Discrete bootstrap (a metric with at most :func:`discrete_limit` ``(n)``
  distinct per-case differences): from a fresh ``PURPOSE_BOOTSTRAP_DISCRETE``
  generator, resample ``r`` draws the counts of each distinct value (in the
  order of each value's first case, which swapping the systems preserves) as
  one ``multinomial(n, count/n)`` row.  This is exactly the distribution of the
  counts produced by resampling cases, at a cost that depends on the number of
  distinct values instead of n.
* Sign-flip permutation (Monte Carlo): resample ``r`` draws ``n`` flips as
  ``integers(0, 2, size=n, dtype=int64)``; 1 flips the case.  A metric with at
  most ``discrete_limit(n)`` distinct non-zero ``|Δ|`` values (sorted ascending)
  instead draws, from a fresh ``PURPOSE_PERMUTATION_DISCRETE`` generator, one
  ``binomial(n_g, 0.5)`` per group (row by row), again the same distribution.
  ``n <= 20`` enumerates every flip exactly and draws nothing.
* Max-T corrections need the metrics' joint distribution: they resample all
  metrics of the call together (one stream, the discrete path only when the
  tuples of all metrics are few), separately from the per-metric draws above.
* Declared clusters (G of them): the cluster bootstrap draws, resample after resample,
  one ``multinomial(G, 1/G)`` row of cluster counts from ``PURPOSE_CLUSTER_BOOTSTRAP``;
  cluster sign-flips draw one 63-bit seed from ``PURPOSE_CLUSTER_PERMUTATION`` whose
  generator then draws ``integers(0, 2, size=G, dtype=int64)`` per pattern (exact over all
  2^G patterns when G <= 20 and 2^G is within the resamples).
* Power simulation: one ``integers(0, n_observed, size=(n, n_sim), dtype=int64)``
  draw picks every simulated eval's cases (column s is eval s), then the same
  generator continues with the bootstrap rules above for their intervals.

``Generator``'s algorithms may change in a numpy feature release (NEP 19);
``tests/stats/test_significance.py`` pins the first draws for seed 42, so such a
change fails loudly instead of silently moving every stored p-value.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from evalkit.errors import InputError

RESAMPLING_STREAM: Final = "evalkit-resample/2"

PURPOSE_BOOTSTRAP: Final = 1
PURPOSE_PERMUTATION: Final = 2
PURPOSE_POWER: Final = 3
PURPOSE_BOOTSTRAP_DISCRETE: Final = 4
PURPOSE_PERMUTATION_DISCRETE: Final = 5
#: With declared clusters (evalkit.stats.clustered): whole clusters resampled, and flipped.
PURPOSE_CLUSTER_BOOTSTRAP: Final = 6
PURPOSE_CLUSTER_PERMUTATION: Final = 7

#: Always take the discrete path at or below this many distinct difference tuples ...
DISCRETE_MAX_DISTINCT: Final = 64
#: ... and also whenever there are at most n / this many (a binomial costs ~16 draws).
DISCRETE_CASES_PER_TUPLE: Final = 16

#: Working memory for one chunk of draws; results never depend on it.
DEFAULT_CHUNK_BYTES: Final = 16 * 2**20

SeedLike = int | np.integer | np.random.Generator

IntArray = NDArray[np.int64]


def resolve_seed(seed: SeedLike) -> int:
    """The integer seed a comparison records.

    A caller's ``Generator`` is consumed for one 63-bit integer, so the result
    is still reproducible from the recorded integer alone.
    """
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or int(seed) < 0:
        raise InputError(f"seed must be a non-negative integer or a numpy Generator, got {seed!r}")
    return int(seed)


def substream(seed: int, purpose: int) -> np.random.Generator:
    """The generator for one purpose of one seed (see the module docstring)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(purpose,))))


def discrete_limit(n: int) -> int:
    """Most distinct difference tuples for which the discrete paths are used.

    Part of the stream definition: which path runs decides which numbers are drawn.
    """
    return max(DISCRETE_MAX_DISTINCT, n // DISCRETE_CASES_PER_TUPLE)


def check_resamples(n_resamples: object) -> int:
    if (
        isinstance(n_resamples, bool)
        or not isinstance(n_resamples, int | np.integer)
        or int(n_resamples) < 1
    ):
        raise InputError(
            f"n_resamples must be a positive integer, got {n_resamples!r} "
            "(10_000 is the default; fewer than ~1_000 makes the p-value floor coarse)"
        )
    return int(n_resamples)


@dataclass(frozen=True)
class ChunkPlan:
    """How many resamples to draw at once, and whether one resample is split."""

    rows: int
    piece: int  # draws per piece; equals n unless a single resample is split


def plan_chunks(n: int, bytes_per_draw: int, budget: int, *, split: bool = True) -> ChunkPlan:
    """Rows per chunk so that one chunk's working arrays stay within ``budget`` bytes."""
    per_row = max(1, n * bytes_per_draw)
    if per_row <= budget:
        return ChunkPlan(rows=max(1, budget // per_row), piece=n)
    if not split:
        return ChunkPlan(rows=1, piece=n)
    return ChunkPlan(rows=1, piece=max(1, budget // bytes_per_draw))


@dataclass(frozen=True)
class Block:
    """Draws for resamples ``start .. start + rows - 1``, columns ``col .. col + width - 1``."""

    start: int
    rows: int
    col: int
    draws: IntArray  # shape (rows, width)


def draw_blocks(
    gen: np.random.Generator, n: int, n_resamples: int, plan: ChunkPlan, high: int
) -> Iterator[Block]:
    """Each resample's ``n`` draws in ``[0, high)``, chunk by chunk: case positions
    (``high`` n, the bootstrap) or sign flips (``high`` 2, 1 = swap the systems)."""
    for start in range(0, n_resamples, plan.rows):
        rows = min(plan.rows, n_resamples - start)
        if plan.piece >= n:
            yield Block(start, rows, 0, gen.integers(0, high, size=(rows, n), dtype=np.int64))
            continue
        for col in range(0, n, plan.piece):
            width = min(plan.piece, n - col)
            yield Block(start, 1, col, gen.integers(0, high, size=(1, width), dtype=np.int64))
