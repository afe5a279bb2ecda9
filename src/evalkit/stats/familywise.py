"""The chance that a gate fails falsely: for the decision it actually makes."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Final

import numpy as np

from evalkit._util.arrays import BoolArray, FloatArray, IntArray
from evalkit.stats.rule import fails
from evalkit.stats.stream import PURPOSE_POWER, substream
from evalkit.stats.tdist import t_quantile

#: Simulated gates behind a computed family-wise rate (SE ≤ 0.4 points).
FAMILYWISE_WORLDS: Final = 20_000
#: Simulated gates drawn at once (bounds the memory of the covariance draws).
_CHUNK: Final = 4_096
_NSR: Final = "no_significant_regression"
_NI: Final = "non_inferiority"
#: A non-inferiority check is named beside the family rate when its own rate with
#: nothing changed exceeds α/2 by this much (1 point: well above the simulation's SE).
_NEAR_MARGIN_EXCESS: Final = 0.01
#: The step-down tracks the checks still in play as bits of one int64.
_MAX_CHECKS: Final = 62


@dataclass(frozen=True)
class TestedCheck:
    """One check as the family-wise estimate sees it."""

    diffs: FloatArray | None  # per-case candidate - baseline, in the shared case order
    procedure: str
    alpha: float
    higher_is_better: bool
    tested_value: float  # 0, or the margin on the bad side for non_inferiority
    corrected: bool  # part of the Holm / max-T family
    mode: str = _NSR
    check_id: str = ""  # how the report names it (a non-inferiority check's own rate)


@dataclass(frozen=True)
class FamilywiseRate:
    rate: float
    estimated: bool  # False: an upper bound
    worlds: int
    # Per-slice checks (evalkit.gate.slices): their FDR q, added to ``rate`` as a bound.
    slice_q: float | None = None
    slice_method: str = ""
    checks_rate: float | None = None  # the rate of the checks alone, before slices
    # Non-inferiority checks failing well above α/2 with nothing changed (a margin close to
    # 0): (check id, that rate, margin in half-widths of the check's interval).
    near_margin: tuple[tuple[str, float, float], ...] = ()
    tests: int = 0  # how many checks the rate is over

    def with_slices(self, q: float, method: str) -> FamilywiseRate:
        """The rate once per-slice checks can also fail the gate: at most rate + q."""
        return replace(
            self,
            rate=min(1.0, self.rate + q),
            estimated=False,
            slice_q=q,
            slice_method=method,
            checks_rate=self.rate,
        )

    def near_margin_note(self) -> str | None:
        """A sentence on the non-inferiority checks that fail often with nothing changed."""
        if not self.near_margin:
            return None
        widths = " and ".join(f"{w:.1f}" for _, _, w in self.near_margin)
        (check, rate, _), *more = self.near_margin
        if not more and self.tests == 1:  # the family is this one check
            head = f"Check {check} fails {rate:.1%} of the time with nothing changed"
        else:
            head = "Of these, " + " and ".join(
                f"{check} alone{' fails' if i == 0 else ''} {rate:.1%}"
                for i, (check, rate, _) in enumerate(self.near_margin)
            )
        why = (
            "non-inferiority checks fail whenever their interval reaches the margin, and "
            f"these margins are only {widths} half-widths of their intervals from 0"
            if more
            else "a non-inferiority check fails whenever its interval reaches its margin, and "
            f"this one's margin is only {widths} half-widths of its interval from 0"
        )
        return f"{head}: {why} (a wider margin or more cases lowers the rate)."

    def describe(self, correction: str) -> str:
        if self.slice_q is not None and self.checks_rate is not None:
            alone = FamilywiseRate(self.checks_rate, self.worlds > 0, self.worlds)
            return (
                f"at most {self.rate:.1%}: {alone.describe(correction)} for the checks, plus "
                f"q = {self.slice_q:.0%} for the per-slice tests (with nothing changed, any "
                f"slice that fails is a false discovery, which {self.slice_method} holds to q)"
            )
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
    """The chance that at least one of ``checks`` fails when nothing changed."""
    sizes = {c.diffs.shape[0] for c in checks if c.diffs is not None}
    if not checks or any(c.diffs is None for c in checks) or len(sizes) != 1:
        return _bound(checks, correction)
    n = sizes.pop()
    if n < 2 or len(checks) > _MAX_CHECKS:
        return _bound(checks, correction)
    matrix = np.stack([c.diffs for c in checks if c.diffs is not None], axis=1)
    gen = substream(seed, PURPOSE_POWER)
    # half the worlds drawn, the other half their mirror images (−Δ, the same SE)
    half_est, half_se = _drawn_evals(matrix, (worlds + 1) // 2, gen)
    est = np.concatenate([half_est, -half_est])[:worlds]
    se = np.concatenate([half_se, half_se])[:worlds]
    family = [j for j, c in enumerate(checks) if c.corrected and correction != "none"]
    failed = np.zeros(worlds, dtype=bool)
    near_margin: list[tuple[str, float, float]] = []
    for j, c in enumerate(checks):
        if j in family:
            continue
        q = t_quantile(1.0 - c.alpha / 2.0, n - 1)
        low, high = est[:, j] - q * se[:, j], est[:, j] + q * se[:, j]
        own = fails(c.mode, low, high, c.tested_value, c.higher_is_better)
        failed |= own
        rate = float(np.count_nonzero(own)) / worlds
        if c.mode == _NI and rate > c.alpha / 2.0 + _NEAR_MARGIN_EXCESS:
            half = q * float(np.std(matrix[:, j], ddof=1)) / math.sqrt(n)
            near_margin.append((c.check_id, rate, abs(c.tested_value) / half))
    if family:
        if correction == "maxt":
            # |t| is blind to the mirror: independent draws for max-T's null quantile
            null_est, null_se = _drawn_evals(matrix[:, family], worlds, gen)
            critical = _maxt_critical(_abs_t(null_est, null_se))
        else:
            critical = _holm_critical(n)
        failed |= _step_down([checks[j] for j in family], est[:, family], se[:, family], critical)
    rate = float(np.count_nonzero(failed)) / worlds
    return FamilywiseRate(rate, True, worlds, near_margin=tuple(near_margin), tests=len(checks))


# ----------------------------------------------------------------------------- simulation


def _drawn_evals(
    matrix: FloatArray, worlds: int, gen: np.random.Generator
) -> tuple[FloatArray, FloatArray]:
    """(Δ, SE) of every check in ``worlds`` evals of normal differences, nothing changed."""
    n, k = matrix.shape
    values, vectors = np.linalg.eigh(np.atleast_2d(np.cov(matrix, rowvar=False)))
    keep = values > 1e-12 * max(float(values.max()), 1e-300)
    root = vectors[:, keep] * np.sqrt(values[keep])  # Σ = root · rootᵀ
    r = root.shape[1]
    est = np.zeros((worlds, k))
    sd = np.zeros((worlds, k))
    for start in range(0, worlds, _CHUNK):
        w = min(_CHUNK, worlds - start)
        if r == 0:
            continue
        est[start : start + w] = gen.standard_normal((w, r)) @ root.T / math.sqrt(n)
        if n - 1 >= r:
            factor = np.tril(gen.standard_normal((w, r, r)), -1)
            diag = np.arange(r)
            factor[:, diag, diag] = np.sqrt(gen.chisquare(n - 1 - diag, size=(w, r)))
        else:  # fewer cases than dimensions: the rows themselves
            factor = np.swapaxes(gen.standard_normal((w, n - 1, r)), 1, 2)
        spread = np.matmul(root, factor)  # (w, k, r): the rows of root · A
        sd[start : start + w] = np.sqrt(np.sum(spread * spread, axis=2) / (n - 1))
    return est, sd / math.sqrt(n)


def _abs_t(est: FloatArray, se: FloatArray) -> FloatArray:
    """|Δ|/SE, 0 where a check does not vary (its interval is the point 0: never rejects)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(se > 0, np.abs(est) / np.where(se > 0, se, 1.0), 0.0)
    return out


# ----------------------------------------------------------------------------- corrections

#: (checks not yet rejected, as a bit mask per world; alpha) → the critical |t|
#: per world at which that step rejects: the half-width of the interval, in SEs, at
#: the level that step decides at.
Critical = Callable[[IntArray, float], FloatArray]


def _holm_critical(n: int) -> Critical:
    """Holm's step j (of k) tests at α/(k − j + 1): its t quantile."""

    def critical(remaining: IntArray, alpha: float) -> FloatArray:
        left = int(remaining[0]).bit_count()  # the same count in every world at one step
        return np.full(remaining.shape[0], t_quantile(1.0 - alpha / (2.0 * left), n - 1))

    return critical


def _maxt_critical(null_abs_t: FloatArray) -> Critical:
    """Westfall-Young max-T: the (1 − α) quantile of the largest |t| among the remaining
    checks, over a second set of simulated evals with nothing changed."""
    cache: dict[tuple[int, float], float] = {}
    b = null_abs_t.shape[0]

    def quantile(mask: int, alpha: float) -> float:
        key = (mask, alpha)
        if key not in cache:
            columns = [j for j in range(null_abs_t.shape[1]) if mask >> j & 1]
            largest = np.sort(null_abs_t[:, columns].max(axis=1))
            # reject when the share of null maxima reaching |t| is ≤ α
            cache[key] = float(largest[max(0, math.ceil(b * (1.0 - alpha)) - 1)])
        return cache[key]

    def critical(remaining: IntArray, alpha: float) -> FloatArray:
        masks, where = np.unique(remaining, return_inverse=True)
        values = np.array([quantile(int(m), alpha) for m in masks.tolist()])
        out: FloatArray = values[where.reshape(-1)]
        return out

    return critical


def _step_down(
    family: Sequence[TestedCheck], est: FloatArray, se: FloatArray, critical: Critical
) -> BoolArray:
    """Per world, whether a corrected check fails: step-down, most extreme first."""
    worlds, k = est.shape
    abs_t = _abs_t(est, se)
    order = np.argsort(-abs_t, axis=1, kind="stable")
    failed = np.zeros(worlds, dtype=bool)
    everyone = np.full(worlds, (1 << k) - 1, dtype=np.int64)
    for alpha in sorted({c.alpha for c in family}):
        alive = np.ones(worlds, dtype=bool)
        remaining = everyone.copy()
        for step in range(k):
            idx = np.flatnonzero(alive)
            if idx.size == 0:
                break
            j = order[idx, step]
            c = critical(remaining[idx], alpha)
            rejects = abs_t[idx, j] > c
            for check in range(k):
                own = (j == check) & rejects
                if family[check].alpha != alpha or not np.any(own):
                    continue
                w = idx[own]
                half = c[own] * se[w, check]
                spec = family[check]
                failed[w] |= fails(
                    _NSR, est[w, check] - half, est[w, check] + half, 0.0, spec.higher_is_better
                )
            alive[idx[~rejects]] = False
            remaining[idx] &= ~(np.int64(1) << j)
    return failed


def _bound(checks: Sequence[TestedCheck], correction: str) -> FamilywiseRate:
    in_family = [c.corrected and correction != "none" for c in checks]
    corrected = [c for c, member in zip(checks, in_family, strict=True) if member]
    alone = [c for c, member in zip(checks, in_family, strict=True) if not member]
    rate = sum(c.alpha / 2 for c in alone)
    if corrected:
        rate += min(c.alpha for c in corrected)
    return FamilywiseRate(min(1.0, rate), False, 0)
