"""The chance that a gate fails falsely: for the decision it actually makes.

A gate with k vs_baseline checks fails when any of them fails.  The figure a
report prints must describe *that* decision: one-sided (a check fails only on
its bad side), across metrics that move together (ndcg@10 and recall@10 of one
system), after the correction in force.  ``1 − (1 − α)^k`` describes none of
those: it is two-sided and assumes independence, and beside ``correction: holm``
it is simply not the rate of anything.

When every check compares a per-case metric on the same cases, the rate is
*computed* for this gate: each check's standardised estimate is, with nothing
changed, close to normal with the correlation the checks' per-case differences
show (the calibration suite holds each check's own one-sided level at
α/2 ± 1 point from n = 30 on, docs/calibration.md), so the rate is the chance
that, among correlated normal statistics, any one lands beyond its own fail line
-- one-sided; for non-inferiority, the margin's line -- after the correction in
force, simulated over many draws.  Otherwise the report gives a bound that holds
under any dependence: Σ α_j/2 without a correction (Bonferroni, one-sided), α
with Holm or max-T (both control the two-sided family-wise rate at α).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from evalkit.stats.correction import holm_rows
from evalkit.stats.stream import PURPOSE_POWER, substream
from evalkit.stats.tdist import normal_quantile

FloatArray = NDArray[np.float64]

#: Simulated draws behind a computed family-wise rate (SE ≤ 0.4 points).
FAMILYWISE_WORLDS: Final = 20_000


@dataclass(frozen=True)
class TestedCheck:
    """One check as the family-wise estimate sees it."""

    diffs: FloatArray | None  # per-case candidate - baseline, in the shared case order
    procedure: str
    alpha: float
    higher_is_better: bool
    tested_value: float  # 0, or the margin on the bad side for non_inferiority
    corrected: bool  # part of the Holm / max-T family


@dataclass(frozen=True)
class FamilywiseRate:
    rate: float
    estimated: bool  # False: an upper bound
    worlds: int

    def describe(self, correction: str) -> str:
        if self.estimated:
            return (
                f"about {self.rate:.1%} (one-sided, for the correlation between these checks' "
                f"differences, correction: {correction}; {self.worlds:,} simulated draws)"
            )
        return (
            f"at most {self.rate:.1%} (a bound valid for any correlation, one-sided, "
            f"correction: {correction})"
        )


def familywise_rate(
    checks: Sequence[TestedCheck], correction: str, seed: int, worlds: int = FAMILYWISE_WORLDS
) -> FamilywiseRate:
    sizes = {c.diffs.shape[0] for c in checks if c.diffs is not None}
    if not checks or any(c.diffs is None for c in checks) or len(sizes) != 1:
        return _bound(checks, correction)
    n = sizes.pop()
    matrix = np.stack([c.diffs for c in checks if c.diffs is not None], axis=1)
    sd = matrix.std(axis=0, ddof=1)
    varies = sd > 0
    if not np.any(varies):
        return FamilywiseRate(0.0, True, worlds)
    active = [c for c, v in zip(checks, varies.tolist(), strict=True) if v]
    correlation = np.atleast_2d(np.corrcoef(matrix[:, varies], rowvar=False))
    gen = substream(seed, PURPOSE_POWER)
    # eigen-decomposition rather than Cholesky: tolerates perfectly correlated metrics
    values, vectors = np.linalg.eigh(correlation)
    root = vectors * np.sqrt(np.clip(values, 0.0, None))
    z = gen.standard_normal((worlds, len(active))) @ root.T
    bad = np.stack([-z[:, j] if c.higher_is_better else z[:, j] for j, c in enumerate(active)], 1)
    fails = np.zeros(worlds, dtype=bool)
    family = []
    se = sd[varies] / np.sqrt(n)
    for j, c in enumerate(active):
        q = normal_quantile(1.0 - c.alpha / 2.0)
        if c.tested_value != 0.0:  # non_inferiority: the bad end reaches the margin
            fails |= bad[:, j] >= q - abs(c.tested_value) / float(se[j])
        elif correction != "none" and c.corrected:
            family.append(j)
        else:
            fails |= bad[:, j] > q
    if family:
        alpha = min(active[j].alpha for j in family)
        stat = bad[:, family]
        p = 2.0 * _normal_sf(np.abs(stat))
        fails |= np.any((holm_rows(p) <= alpha) & (stat > 0), axis=1)
    return FamilywiseRate(float(np.count_nonzero(fails)) / worlds, True, worlds)


def _normal_sf(x: FloatArray) -> FloatArray:
    out: FloatArray = 0.5 * np.vectorize(math.erfc)(x / math.sqrt(2.0))
    return out


def _bound(checks: Sequence[TestedCheck], correction: str) -> FamilywiseRate:
    corrected = [c for c in checks if c.corrected and correction != "none"]
    alone = [c for c in checks if c not in corrected]
    rate = sum(c.alpha / 2 for c in alone)
    if corrected:
        rate += min(c.alpha for c in corrected)
    return FamilywiseRate(min(1.0, rate), False, 0)
