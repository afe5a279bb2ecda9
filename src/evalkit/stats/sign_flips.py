"""Sign-flip tests, per case or per cluster: the mid-p count and the interval the test inverts to.

One owner for both, so the per-case permutation test and its cluster version read the
same p and find their interval ends the same way.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import numpy as np
from numpy.typing import NDArray

__all__ = ["flip_mid_p", "invert_test"]

FloatArray = NDArray[np.float64]

# Bisection halves the bracket each step: 64 steps reach a double's resolution.
_BISECTION_STEPS: Final = 64


def flip_mid_p(
    observed: FloatArray, null: FloatArray, tol: FloatArray, *, exact: bool
) -> FloatArray:
    """Two-sided mid-p of each row's ``observed`` |sum| among its ``null`` |sums| (one
    column a sign pattern); ``tol`` decides ties (sums of the same values in another order
    differ by rounding only).  p = 1 where nothing is observed; without every pattern
    (``exact`` False) the observed pattern counts as one of the draws."""
    greater = np.count_nonzero(null > (observed + tol)[:, None], axis=1)
    equal = np.count_nonzero(np.abs(null - observed[:, None]) <= tol[:, None], axis=1)
    total = null.shape[1]
    # without every pattern, the observed one counts as a draw
    p = (greater + 0.5 * equal) / total if exact else (greater + 0.5 * (equal + 1)) / (total + 1)
    out: FloatArray = np.where(observed <= tol, 1.0, np.minimum(1.0, p))
    return out


def invert_test(
    p: Callable[[FloatArray], FloatArray],
    alpha: float,
    centre: FloatArray,
    far: tuple[FloatArray, FloatArray],
    anchor: float,
) -> tuple[FloatArray, FloatArray]:
    """The ends of {δ : p(δ) > α} around ``centre`` (accepted), by bisection towards each
    ``far`` end; the ``anchor`` is one bracket end on its side, so "p(anchor) ≤ α" and
    "the interval excludes anchor" agree by construction.  An end the test never reaches
    (p(far) > α) is infinite."""
    anchor_row = np.full(centre.shape, float(anchor))
    anchor_ok = p(anchor_row) > alpha
    ends = []
    for below, limit in ((True, far[0]), (False, far[1])):
        beyond = anchor_row < centre if below else anchor_row > centre
        accepted = np.where(beyond & anchor_ok, anchor_row, centre)
        rejected = np.where(beyond & ~anchor_ok, anchor_row, limit)
        reachable = p(limit) <= alpha
        for _ in range(_BISECTION_STEPS):
            mid = 0.5 * (accepted + rejected)
            ok = p(mid) > alpha
            accepted = np.where(ok, mid, accepted)
            rejected = np.where(ok, rejected, mid)
        unbounded = ~reachable & ~(beyond & ~anchor_ok)
        ends.append(np.where(unbounded, -np.inf if below else np.inf, accepted))
    return ends[0], ends[1]
