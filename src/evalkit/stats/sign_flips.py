"""The sign-flip test of a mean difference, per case or per cluster (a case is a cluster of
one): its null, its mid-p and the interval the test inverts to (docs/design/code-notes.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np

from evalkit._util.arrays import FloatArray, IntArray

#: Sign patterns held at once (float64 elements), so memory never grows with B × G.
_CHUNK_ELEMENTS: Final = 2**22
#: Largest G whose 2^G sign patterns are enumerated (when within the resamples asked for).
_EXACT_MAX_UNITS: Final = 20
# Bisection halves the bracket each step: 64 steps reach a double's resolution.
_BISECTION_STEPS: Final = 64


@dataclass(frozen=True)
class SignFlips:
    """A sign-flip null over G units (cases or whole clusters): all 2**G patterns, or B
    random ones.  Random patterns are drawn in chunks from the recorded seed when
    projected, so they are never all in memory (10,000 × 10⁵ would be 8 GB)."""

    g: int
    total: int
    exact: bool
    seed: int

    @classmethod
    def draw(cls, g: int, n_resamples: int, gen: np.random.Generator) -> SignFlips:
        exact = g <= _EXACT_MAX_UNITS and 2**g <= n_resamples
        seed = int(gen.integers(0, 2**63 - 1))
        return cls(g, 2**g if exact else n_resamples, exact, seed)

    def project(self, totals: FloatArray, sizes: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(Σ s_g·S_g per row and pattern, Σ s_g·n_g per pattern)."""
        step = max(1, _CHUNK_ELEMENTS // max(1, self.g))
        gen = np.random.default_rng(self.seed)
        signed, weights = [], []
        for start in range(0, self.total, step):
            count = min(step, self.total - start)
            if self.exact:
                codes = np.arange(start, start + count, dtype=np.int64)[:, None]
                bits = (codes >> np.arange(self.g, dtype=np.int64)) & 1
            else:
                bits = gen.integers(0, 2, size=(count, self.g), dtype=np.int64)
            signs = 1.0 - 2.0 * bits.astype(np.float64)
            signed.append(totals @ signs.T)
            weights.append(signs @ sizes)
        return np.concatenate(signed, axis=1), np.concatenate(weights)


@dataclass(frozen=True)
class SignFlipNull:
    """Per row: Σ s_g·S_g under every pattern and Σ s_g·n_g, so any shift δ is O(patterns)."""

    totals: FloatArray  # rows × G: each unit's total difference (a case's own)
    sizes: FloatArray  # G: cases per unit
    flips: SignFlips
    flipped: FloatArray  # rows × patterns
    flipped_sizes: FloatArray  # patterns

    @classmethod
    def of(
        cls, totals: FloatArray, flips: SignFlips, sizes: IntArray | None = None
    ) -> SignFlipNull:
        """The null of per-unit ``totals`` (rows × G); ``sizes`` None: every unit one case."""
        s = np.atleast_2d(np.asarray(totals, dtype=np.float64))
        size = np.ones(s.shape[1]) if sizes is None else np.asarray(sizes, dtype=np.float64)
        flipped, flipped_sizes = flips.project(s, size)
        return cls(s, size, flips, flipped, flipped_sizes)

    def p(self, shift: FloatArray) -> FloatArray:
        """Two-sided mid-p of H0: mean = shift, per row (p = 1 when nothing is observed)."""
        n = float(self.sizes.sum())
        observed = np.abs(self.totals.sum(axis=1) - n * shift)
        null = np.abs(self.flipped - shift[:, None] * self.flipped_sizes[None, :])
        # Sums of the same values in another order differ by rounding only: a tie is
        # decided with a tolerance far above that noise and far below any real step.
        tol = 1e-9 * (np.abs(self.totals).sum(axis=1) + n * np.abs(shift)) + 1e-300
        greater = np.count_nonzero(null > (observed + tol)[:, None], axis=1)
        equal = np.count_nonzero(np.abs(null - observed[:, None]) <= tol[:, None], axis=1)
        drawn = 0 if self.flips.exact else 1  # the observed pattern counts as a draw
        p = (greater + 0.5 * (equal + drawn)) / (null.shape[1] + drawn)
        out: FloatArray = np.where(observed <= tol, 1.0, np.minimum(1.0, p))
        return out

    def bounds(self, alpha: float, anchor: float) -> tuple[FloatArray, FloatArray]:
        """Ends of {δ : p(δ) > α} by bisection from the mean towards each side; ``anchor``
        is one bracket end on its side, so "p(anchor) ≤ α" and "the interval excludes
        anchor" agree by construction.  An end the test never reaches is infinite."""
        centre = self.totals.sum(axis=1) / self.sizes.sum()
        unit_means = self.totals / self.sizes[None, :]
        lowest, highest = unit_means.min(axis=1), unit_means.max(axis=1)
        pad = (highest - lowest) + 1e-9 * (1.0 + np.abs(centre))
        anchor_row = np.full(centre.shape, float(anchor))
        anchor_ok = self.p(anchor_row) > alpha
        ends = []
        for below, limit in ((True, lowest - pad), (False, highest + pad)):
            beyond = anchor_row < centre if below else anchor_row > centre
            accepted = np.where(beyond & anchor_ok, anchor_row, centre)
            rejected = np.where(beyond & ~anchor_ok, anchor_row, limit)
            reachable = self.p(limit) <= alpha
            for _ in range(_BISECTION_STEPS):
                mid = 0.5 * (accepted + rejected)
                ok = self.p(mid) > alpha
                accepted = np.where(ok, mid, accepted)
                rejected = np.where(ok, rejected, mid)
            unbounded = ~reachable & ~(beyond & ~anchor_ok)
            ends.append(np.where(unbounded, -np.inf if below else np.inf, accepted))
        return ends[0], ends[1]
