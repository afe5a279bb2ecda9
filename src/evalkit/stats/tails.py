"""Turning a null distribution into a p-value: tail counts, the +1 rule, mid-p, Student's t."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.tdist import t_two_sided_p

Numeric = NDArray[np.int64] | NDArray[np.float64]


class TailCounter:
    """Counts, per column, null draws beyond and level with the observed statistic."""

    def __init__(self, observed_abs: Numeric) -> None:
        self._observed = observed_abs
        self.greater = np.zeros(observed_abs.shape[0], dtype=np.int64)
        self.equal = np.zeros(observed_abs.shape[0], dtype=np.int64)

    def update(self, null_abs: Numeric) -> None:
        self.greater += np.count_nonzero(null_abs > self._observed, axis=0)
        self.equal += np.count_nonzero(null_abs == self._observed, axis=0)


def tail_p(greater: int, equal: int, total: int, *, exact: bool, mid: bool) -> float:
    """Two-sided p from tail counts (see the module docstring for each rule)."""
    tie_weight = 0.5 if mid else 1.0
    if exact:
        return min(1.0, (greater + tie_weight * equal) / total)
    return min(1.0, (greater + tie_weight * (equal + 1)) / (total + 1))


def standardise(values_abs: Numeric, scale: NDArray[np.float64]) -> NDArray[np.float64]:
    """``|x| / scale`` per column, with a zero scale giving 0 for 0 and inf otherwise."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.asarray(values_abs, dtype=np.float64) / scale
    out = np.where(values_abs == 0, 0.0, out)
    result: NDArray[np.float64] = np.where(np.isnan(out), np.inf, out)
    return result


def t_p_of(
    mean: NDArray[np.float64], se: NDArray[np.float64], df: float, null: float
) -> NDArray[np.float64]:
    """Two-sided t p of H0: mean = ``null``, per row; a row with se 0 (it does not vary)
    has p 1 at its own mean and 0 anywhere else."""
    out = np.empty(mean.shape[0])
    for i, (m, s) in enumerate(zip(mean.tolist(), se.tolist(), strict=True)):
        out[i] = (1.0 if m == null else 0.0) if s == 0.0 else t_two_sided_p((m - null) / s, df)
    return out
