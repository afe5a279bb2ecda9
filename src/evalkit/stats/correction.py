"""Many tests in one gate: Holm, Westfall-Young max-T, and the false-alarm chance."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from evalkit._util.arrays import FloatArray
from evalkit.errors import InputError
from evalkit.stats.names import CORRECTIONS, Correction, checked
from evalkit.stats.tails import tail_p


def check_correction(correction: object) -> Correction:
    return checked(correction, CORRECTIONS, "correction")


def familywise_false_alarm(k: int, alpha: float) -> float:
    """Chance of at least one false alarm among ``k`` independent tests at ``alpha``."""
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InputError(f"number of tests must be a non-negative integer, got {k!r}")
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    return 1.0 - (1.0 - alpha) ** k


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the input order."""
    p = np.asarray(p_values, dtype=np.float64)
    if p.ndim != 1 or np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise InputError(f"p-values must be finite numbers in [0, 1], got {list(p_values)!r}")
    return [float(x) for x in holm_rows(p[None, :])[0]]


def holm_rows(p: FloatArray) -> FloatArray:
    """Holm-adjusted p-values of every row of a (rows × k) matrix (vectorised)."""
    k = p.shape[1]
    order = np.argsort(p, axis=1, kind="stable")
    ordered = np.take_along_axis(p, order, axis=1)
    scaled = np.minimum(1.0, ordered * (k - np.arange(k)))
    stepped = np.maximum.accumulate(scaled, axis=1)
    out = np.empty_like(p)
    np.put_along_axis(out, order, stepped, axis=1)
    return out


class StepDownMaxT:
    """Westfall-Young step-down max-T, fed the scaled null statistics chunk by chunk."""

    def __init__(self, observed: FloatArray) -> None:
        self._order = np.argsort(-observed, kind="stable")
        self._observed = observed[self._order]
        self.greater = np.zeros(observed.shape[0], dtype=np.int64)
        self.equal = np.zeros(observed.shape[0], dtype=np.int64)

    def update(self, null: FloatArray) -> None:
        ordered = null[:, self._order]
        # largest statistic among the j-th most extreme metric and all less extreme ones
        suffix_max = np.maximum.accumulate(ordered[:, ::-1], axis=1)[:, ::-1]
        self.greater += np.count_nonzero(suffix_max > self._observed, axis=0)
        self.equal += np.count_nonzero(suffix_max == self._observed, axis=0)

    def adjusted(self, raw: Sequence[float], total: int, *, exact: bool, mid: bool) -> list[float]:
        """Adjusted p-values in the original order, monotone, never below the raw ones."""
        k = self._observed.shape[0]
        stepped = np.array(
            [
                tail_p(int(self.greater[j]), int(self.equal[j]), total, exact=exact, mid=mid)
                for j in range(k)
            ]
        )
        monotone = np.maximum.accumulate(stepped)
        out = np.empty(k, dtype=np.float64)
        out[self._order] = monotone
        return [max(float(o), float(r)) for o, r in zip(out, raw, strict=True)]
