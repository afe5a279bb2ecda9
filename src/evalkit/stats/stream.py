"""The resampling stream: which random numbers a comparison draws, in which order.

The stream is part of the statistics' definition: the same seed gives the same resamples
on any machine and memory budget.  :data:`RESAMPLING_STREAM` names the definition (in
docs/design/code-notes.md) and is recorded in every result; a change here that alters a
single draw must bump it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final

import numpy as np

from evalkit._util.arrays import IntArray
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


def resolve_seed(seed: SeedLike) -> int:
    """The integer seed a comparison records (a caller's ``Generator`` is consumed for one
    63-bit integer, so the result is reproducible from the recorded integer alone)."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or int(seed) < 0:
        raise InputError(f"seed must be a non-negative integer or a numpy Generator, got {seed!r}")
    return int(seed)


def substream(seed: int, purpose: int) -> np.random.Generator:
    """The generator for one purpose of one seed (see the module docstring)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(purpose,))))


def discrete_limit(n: int) -> int:
    """Most distinct difference tuples for which the discrete paths (part of the stream's
    definition) are used."""
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
