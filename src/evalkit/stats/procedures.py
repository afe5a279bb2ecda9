"""Decision procedures: the interval and the p-value a verdict shows, from one procedure.

A gate verdict says three things that must never disagree: the decision, "p ≤ α",
and "the 1 − α interval excludes the tested value".  That holds when the p-value
is the *dual* of the interval -- the smallest α at which the interval excludes
the tested value -- so every procedure here provides both from one computation:

``t``
    Student's paired t interval ``mean ± t(1 − α/2, n − 1)·s/√n`` and its p.
``skew-t``
    Hall's (1992) monotone version of Johnson's (1978) skewness-corrected t:
    with θ = (mean − μ)/s and a = γ/3 (γ the sample skewness G1 with a
    measured small-sample correction, :data:`SKEW_BIAS`),
    ``T(μ) = √n·[θ + aθ² + a²θ³/3 + γ/(6n)]`` removes the n^-1/2
    skewness term of the t statistic's distribution.  T is monotone in θ, so
    ``{μ : |T(μ)| ≤ t(1 − α/2, n − 1)}`` is an interval with closed-form ends
    (a cube root), and p = P(|t_{n-1}| ≥ |T(μ₀)|) is its dual.  At small n the end
    away from the skew stays conservative, so that end is Hall's at the larger skewness
    γ·(1 + :data:`FAR_END_SKEW_BIAS`/n), and a tested value on that side of the mean is
    tested by that statistic.
``t+skew-t``
    Both: the interval is the union of the ``t`` and the ``skew-t`` intervals and the p
    the larger of their two p-values, so a change counts only where both procedures find
    it (still duals: the union excludes μ₀ exactly when both intervals do).  Where the
    skewness is real, the corrected side decides and plain t's false fails on that side
    are removed; where the sample skewness is the noise of a few extreme cases of a
    symmetric parent, plain t (which holds its level there, conservatively) decides.
``auto`` (the gate's default)
    ``skew-t`` where the skewness runs *deep*, ``t+skew-t`` where it is only *stable*,
    else ``t``.  Where a tie spike stands out (many cases share one difference, usually
    0: both systems scored the case alike, beyond what the values beside it hold:
    :func:`tie_spikes`), the skewness and every test below read the other cases
    (:data:`UNTIED_MIN`).  Stable: fewer than
    half of the per-case differences share one value, and the skewness keeps its sign, at least
    :data:`AUTO_MIN_TRIMMED_SKEW` in size, once the k most extreme cases on the
    side of the skew are set aside (k = max(3, ⌈n/20⌉), :func:`trim_count`), and, at
    :data:`AUTO_MODE_MIN_N` to :data:`AUTO_MODE_MAX_N` cases, the cases do not fall in
    two groups whose sizes set the skewness: the samples that leave one case out must
    not have their means and skewnesses in lockstep (:func:`leave_one_out_correlation`
    at least :data:`AUTO_MODE_CORRELATION`, or :data:`AUTO_MODE_SMALL_CORRELATION` below
    :data:`AUTO_MODE_FULL_N` cases).
    Why, measured in ``docs/calibration.md``: the sample skewness of symmetric
    heavy-tailed differences (Student t with 2-3 df, nDCG of two rankers that
    share their noise, real TREC runs under a coin-flip null) is the noise of
    one to three extreme cases, and correcting for it fails falsely 4-7% one-sided
    against 2.5% and costs 5-16 points of power against plain t; the skewness
    of a genuinely skewed parent (Exp) survives the trimming, so the correction
    stays where plain t fails falsely 6-9%.  With many ties the sample skewness
    is the noise of a handful of untied cases (5-6% on the tie-heavy shape).
    Stable is not enough on its own: a symmetric parent whose extreme cases are more
    than the trimming sets aside (10% of cases with 30 times the spread, Student t with
    1.5 df) passed the test often enough that correcting alone failed falsely 4-5%
    one-sided at n = 30-50 where plain t failed 0.5-1.6%; requiring plain t to agree
    brought those to plain t's rates, and on the skewed shapes it keeps the corrected
    side's rate (measured in ``docs/design/statistics.md``, "Guarded by plain t").
    Deep: stable, and the skewness also keeps its sign, at least
    :data:`AUTO_MIN_DEEP_TRIMMED_SKEW` in size, once the :func:`deep_trim_count` most
    extreme cases (15%, at least 5) on its side are set aside.  The guard costs nothing on
    the skew's side but keeps plain t's conservative end on the other, so a skewed parent's
    coverage sat at 96.7-97.9% against 95%; where the skew runs this deep the symmetric
    parents above rarely get there, and skew-t decides alone ("Dropping the guard where
    the skew runs deep", same file).
``bootstrap``
    The spec's percentile interval (the same resamples, hence the same numbers,
    as :func:`evalkit.paired_bootstrap`) with the *percentile p*: the smallest α
    at which that interval excludes the tested value.  (The spec's centred-null
    p of ``paired_bootstrap`` stays in that function's result; it is not the
    dual of the percentile interval, which is why a verdict never shows it.)
``permutation``
    The paired sign-flip test with mid-p, and the interval obtained by test
    inversion: every shift δ for which the test on ``d − δ`` does not reject.
    Bisection between a point known to be accepted and one known to be
    rejected finds each end, with the tested value used as one of the bracket
    ends, so "excludes the tested value" and "p ≤ α" agree by construction.

Every function works on a batch: rows are data sets (metrics of one gate, or
simulated evals of the calibration suite), so the code that decides a verdict
is the very code the calibration suite simulates.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

import numpy as np
from numpy.typing import NDArray

from evalkit.errors import InputError
from evalkit.stats.aggregates import NearestRankAggregate
from evalkit.stats.compare import (
    aggregate_column,
    case_column,
    lattice_of,
    observed_on_lattice,
    percentile_interval,
    single_metric_resamples,
)
from evalkit.stats.names import GATE_METHODS, GateMethod
from evalkit.stats.pairing import CaseValues, RunLike, metric_data, pair_runs
from evalkit.stats.selection import tied_share
from evalkit.stats.stream import (
    DEFAULT_CHUNK_BYTES,
    PURPOSE_PERMUTATION,
    substream,
)
from evalkit.stats.tdist import t_quantile, t_two_sided_p

FloatArray = NDArray[np.float64]
BoolArray = NDArray[np.bool_]

Procedure = Literal["t", "skew-t", "t+skew-t", "bootstrap", "permutation"]
DEFAULT_GATE_METHOD: Final[GateMethod] = "auto"
#: What ``auto`` (the default) runs on per-case differences: plain paired t
#: (docs/design/statistics.md, "The default verdict").
DEFAULT_PROCEDURE: Final[Procedure] = "t"

#: Procedures computed from the per-case moments alone (no resamples).
ANALYTIC: Final = ("t", "skew-t", "t+skew-t")
#: Procedures that draw resamples (their verdicts record ``n_resamples``).
RESAMPLING: Final = ("bootstrap", "permutation")
#: Small-sample correction of the sample skewness: γ̂ = G1·(1 + SKEW_BIAS/√n) (measured).
SKEW_BIAS: Final = 2.0
#: The far end of the skew-t interval (the one away from the skew) is Hall's at the larger
#: skewness γ̂·(1 + FAR_END_SKEW_BIAS/n).  Why (docs/design/statistics.md, "The far end at
#: small n"): at n = 15 that end was conservative on every skewed parent (one-sided 1.3%
#: on Exp(1) − 1 and on ±(Beta(½, 3) − 1/7), whose coverage was 96.8% against 95 ± 1.5).
#: The factor fades as 1/n because the conservatism does: at n = 30 the far side of
#: Exp(1) − 1 is already 2.2%.  Measured at 0, 6, 8 and 10 (scripts/far_end_sweep.py,
#: 100,000 trials a cell): 6 brings the bounded shape to 96.3% at n = 15 and holds the far
#: side of the held-out log-normal at n = 30 to 3.0% (8: 96.1% and 3.25%).
FAR_END_SKEW_BIAS: Final = 6.0
#: ``auto`` corrects for skewness only while fewer than this share of the cases tie.
AUTO_MAX_TIED_SHARE: Final = 0.5
#: ... and only while the skewness, with the most extreme cases on its side set aside
#: (:func:`trim_count`), keeps its sign and at least this size.  Chosen by measurement
#: (docs/design/statistics.md, "The stability threshold at n = 15"): with plain t as the
#: guard a lower threshold no longer lets symmetric parents fail falsely more often (their
#: rates rose by at most 0.1 point from 0.15 to 0.1), it corrects more of a skewed
#: parent's samples (Exp(1) − 1 at n = 15: 3.9% one-sided at 0.15, 3.7% at 0.1), and it
#: costs power where plain t holds (Student t, 2 df, n = 15: 2.5 points below t at 0.15,
#: 2.8 at 0.1, 3.1 at 0.05, against a limit of 3; scripts/stability_sweep.py).
AUTO_MIN_TRIMMED_SKEW: Final = 0.1
#: ... and, at :data:`AUTO_MODE_MIN_N` to :data:`AUTO_MODE_MAX_N` cases, only while the
#: leave-one-out means and
#: skewnesses do not move in lockstep (:func:`leave_one_out_correlation` above this).  Two
#: modes make that correlation about −0.98 at every n (a sample's skewness is then the
#: modes' weights, which also set its mean, and Hall's correction moved every interval
#: toward the truth: coverage 98.1% at n = 30 on symmetric two-mode differences); a skewed
#: parent's tail leaves it mostly above (Exp(1) − 1: −0.86 at its 10th percentile at
#: n = 30).  Measured in docs/design/statistics.md, "Two modes".
AUTO_MODE_CORRELATION: Final = -0.95
#: Below :data:`AUTO_MODE_FULL_N` cases a tail reaches further down (Exp(1) − 1 at n = 15:
#: −0.93 at its 10th percentile), so the line is stricter there: at −0.95 Exp(1) − 1 at
#: n = 15 failed falsely 3.96% one-sided (3.73% without the rule), at this line 3.79%,
#: while two symmetric modes at n = 15 cover 95.8% (97.9% without: 1.1% a side) and a
#: 70/30 pair of modes fails 3.82% (3.70%), 100,000 trials a cell (docs/design/statistics.md,
#: "Two modes").
AUTO_MODE_SMALL_CORRELATION: Final = -0.97
#: The rule starts here ...
AUTO_MODE_MIN_N: Final = 15
#: ... with the stricter line until here.
AUTO_MODE_FULL_N: Final = 20
#: ... and ends here: by 100 cases the correction's over-coverage on two modes was back in
#: the band without the rule (95.8-95.9%), and the statistic costs O(n) per data set, which
#: the detectable-regression simulation pays a thousand times a check.
AUTO_MODE_MAX_N: Final = 200
#: ``auto`` drops plain t's guard (decides with ``skew-t`` alone) only where the skewness
#: also survives setting aside this share of the cases on its side
#: (:func:`deep_trim_count`) ...
AUTO_DEEP_TRIM_PERCENT: Final = 15
#: ... and never fewer than this many cases ...
AUTO_DEEP_TRIM_MIN: Final = 5
#: ... keeping its sign and at least this size.  Chosen by measurement
#: (docs/design/statistics.md, "Dropping the guard where the skew runs deep").
AUTO_MIN_DEEP_TRIMMED_SKEW: Final = 0.2

#: Where many cases share one difference (both systems scored them alike) beyond what
#: the neighbouring values hold, that excess is a *spike* (:func:`tie_spikes`), and
#: ``auto`` reads the skewness from the other cases, at least this many of them.  Why
#: (docs/design/statistics.md, "Ties"): the skewness of the whole sample moves with where
#: the other cases' mean falls against the spike, so a right-skewed metric with half its
#: cases tied (``skewed+ties``) failed falsely 8.1% one-sided at n = 30 and 5.4% at
#: n = 100 under the whole-sample rule, 4.0% and 2.3% with the spike set aside
#: (docs/calibration.md).
#: Only the excess goes: on a lattice whose tie value is no spike (P@5, whose 0 holds
#: about as many cases as ±0.2) setting all of it aside left a hole that made the rest
#: look two-moded, and the correction over-covered (96.6% at n = 30).
UNTIED_MIN: Final = 10
#: A spike holds at least this share of the cases (and 2 of them): two equal values among
#: a hundred are a coincidence, not a spike that moves the skewness.
SPIKE_MIN_SHARE: Final = 0.05
#: ... and this many times the square root of what each value beside it holds: an excess
#: that counting noise would rarely give.  A lattice whose 0 is only the commonest step
#: (P@10: about 26% at 0 beside 20% at ±0.1) shows an excess by chance in small samples
#: (5 at 0 beside 2 and 2 in 15 cases); read apart, those samples cost power against t
#: (3.3 points at n = 15 where the whole-sample rule cost 2.6).
SPIKE_MIN_SIGMAS: Final = 3.0
#: On fewer distinct values than this the cases read have a skewness set by their shares,
#: which also set their mean (the lockstep of two modes), so where a spike was set aside
#: ``auto`` does not correct (pass/fail metrics: −1, 0, +1).
SPIKE_MIN_LEVELS: Final = 4

#: Bisection steps for the permutation interval's ends (2**-64 of the bracket).
_BISECTION_STEPS: Final = 64

PROCEDURE_NAMES: Final[dict[str, str]] = {
    "t": "paired t",
    "skew-t": "Hall's skewness-corrected t",
    "t+skew-t": "paired t and skewness-corrected t, both must agree",
    "bootstrap": "percentile bootstrap",
    "permutation": "sign-flip permutation test",
}


def _rows(data: FloatArray) -> FloatArray:
    array = np.asarray(data, dtype=np.float64)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] < 2:
        raise InputError("a procedure needs at least 2 paired cases per data set")
    return array


# ----------------------------------------------------------------------------- moments


@dataclass(frozen=True)
class Moments:
    """Per-row summaries every analytic procedure reads."""

    n: int
    mean: FloatArray
    sd: FloatArray  # ddof = 1
    skewness: FloatArray  # G1 × (1 + SKEW_BIAS/√n); 0 when the row does not vary or n < 3
    tied_share: FloatArray  # largest share of cases with one and the same difference
    trimmed_skewness: FloatArray  # g1 without the trim_count(n) most extreme cases on its side
    deep_trimmed_skewness: FloatArray  # the same without the deep_trim_count(n) most extreme
    mode_correlation: FloatArray  # corr. of the leave-one-out means and skewnesses (or 0)
    #: Cases the skewness was read from: n, or the untied cases where a tie group was set
    #: aside (:func:`tie_spikes`); the far end's small-sample factor uses it.
    skew_n: FloatArray

    @classmethod
    def of(
        cls,
        data: FloatArray,
        tied: FloatArray | None = None,
        spikes: TieSpikes | None = None,
    ) -> Moments:
        """The moments of every row.

        ``tied``: the rows' tied shares, when the caller counted them more cheaply
        (:func:`evalkit.stats.selection.resampled_tied_share`).  ``spikes``: each row's
        tie spike, when the caller knows it from the data the rows were resampled from
        (a resample's repeated cases are not ties of the eval); by default
        :func:`tie_spikes` finds it in each row.
        """
        d = _rows(data)
        found = tie_spikes(d) if spikes is None else spikes
        if not found.any():
            return cls._of_cases(d, tied)
        return cls._with_spikes_apart(d, tied, found)

    @classmethod
    def _with_spikes_apart(
        cls, d: FloatArray, tied: FloatArray | None, spikes: TieSpikes
    ) -> Moments:
        """The moments of every row, the rows with a tie spike reading their skewness
        and its stability from the other cases (:func:`_read_apart`)."""
        rows, n = d.shape
        apart = spikes.cases(d)
        counts = n - np.count_nonzero(apart, axis=1)
        spiked = spikes.any_rows()
        read = _reads_apart(spikes, counts)
        mean = d.mean(axis=1)
        centred = d - mean[:, None]
        _, sd = _varies_and_sd(d, np.mean(centred * centred, axis=1))
        # the rows read apart need only their mean and spread here (the rest is theirs)
        fields = [np.zeros(rows) for _ in range(6)]
        rest = np.flatnonzero(~read)
        if rest.size:
            whole = cls._of_cases(d[rest], None if tied is None else tied[rest])
            sources = (
                whole.skewness,
                whole.tied_share,
                whole.trimmed_skewness,
                whole.deep_trimmed_skewness,
                whole.mode_correlation,
                whole.skew_n,
            )
            for target, source in zip(fields, sources, strict=True):
                target[rest] = source
        base = cls(n, mean, sd, *fields)

        def own(group: NDArray[np.int64], m: int) -> Moments:
            cases = d[group][~apart[group]].reshape(group.shape[0], m)
            return cls._of_cases(cases, None)

        return _read_apart(base, spiked, read, counts, own)

    @classmethod
    def _of_cases(cls, d: FloatArray, tied: FloatArray | None) -> Moments:
        """The moments of every row, every case counted alike (no tie group set aside)."""
        n = d.shape[1]
        mean = d.mean(axis=1)
        centred = d - mean[:, None]
        m2, m3 = _second_third(centred)
        varies, sd = _varies_and_sd(d, m2)
        with np.errstate(divide="ignore", invalid="ignore"):
            g1 = _rounded_to_zero(np.where(varies, m3 / np.where(varies, m2, 1.0) ** 1.5, 0.0))
        # G1, then a small-sample correction: the sample skewness of a skewed parent
        # runs low (about 1.6-1.7 for Exp(1), skewness 2, at n = 30), which left the
        # skewed one-sided rates at 3.4-3.5% at n = 30; with the factor they sit at
        # 2.3-2.9% from n = 30 to 300 (docs/calibration.md, skew-t table).
        adjust = (
            math.sqrt(n * (n - 1)) / (n - 2) * (1.0 + SKEW_BIAS / math.sqrt(n)) if n >= 3 else 0.0
        )
        share = _mode_share(d) if tied is None else tied
        trimmed, deep = _trimmed_g1(centred, g1, (trim_count(n), deep_trim_count(n)))
        modes = mode_correlation(centred, None, n)
        skew_n = np.full(d.shape[0], float(n))
        return cls(n, mean, sd, g1 * adjust, share, trimmed, deep, modes, skew_n)


def _reads_apart(spikes: TieSpikes, counts: NDArray[np.int64]) -> BoolArray:
    """Rows whose skewness is read from the ``counts`` cases left beside their spike:
    at least :data:`UNTIED_MIN` of them, on at least :data:`SPIKE_MIN_LEVELS` values."""
    out: BoolArray = spikes.any_rows() & (counts >= UNTIED_MIN) & ~spikes.few_levels
    return out


def _read_apart(
    base: Moments,
    spiked: BoolArray,
    read: BoolArray,
    counts: NDArray[np.int64],
    own: Callable[[NDArray[np.int64], int], Moments],
) -> Moments:
    """``base`` with the skewness and its stability of the ``read`` rows taken from the
    ``counts`` cases left beside their spike (``own(rows, m)``: those cases' moments).

    The mean and the spread stay the whole sample's (the share of ties varies from
    sample to sample, and the whole-sample spread carries that).  The skewness is the
    other cases' own G1, small-sample corrected at their count m and scaled by √(n/m):
    the skewness of the whole sample if the spike sat at their mean, which is what it
    is under the null, without the term that couples it to where their sample mean
    happens to fall against the spike.  The stability tests read those cases (their
    trims at m).  Where a spike leaves too few cases, or too coarse ones, to read
    (``spiked`` but not ``read``), nothing is corrected for: the whole-sample skewness
    is the spike's.  Rows grouped by m, so each group is one rectangular batch.
    """
    n = base.n
    skewness, tied_share = base.skewness.copy(), base.tied_share.copy()
    trimmed, deep = base.trimmed_skewness.copy(), base.deep_trimmed_skewness.copy()
    modes, skew_n = base.mode_correlation.copy(), base.skew_n.copy()
    silent = spiked & ~read
    trimmed[silent] = 0.0
    deep[silent] = 0.0
    for m in np.unique(counts[read]).tolist():
        group = np.flatnonzero(read & (counts == m))
        cases = own(group, m)
        varies = base.sd[group] > 0.0
        skewness[group] = np.where(varies, cases.skewness * math.sqrt(n / m), 0.0)
        tied_share[group] = cases.tied_share
        trimmed[group] = cases.trimmed_skewness
        deep[group] = cases.deep_trimmed_skewness
        modes[group] = cases.mode_correlation
        skew_n[group] = float(m)
    return Moments(n, base.mean, base.sd, skewness, tied_share, trimmed, deep, modes, skew_n)


#: A sample skewness this small is the rounding of a symmetric sample's (exactly 0).
_SKEW_ROUNDING: Final = 1e-12


def _rounded_to_zero(g1: FloatArray) -> FloatArray:
    """``g1`` with rounding-level values set to 0: a symmetric sample's third moment sums
    to a few ulps of either sign, which would pick the side the trims set cases aside on
    (and the counted and the case paths, summing in other orders, would pick differently)."""
    out: FloatArray = np.where(np.abs(g1) < _SKEW_ROUNDING, 0.0, g1)
    return out


def _varies_and_sd(d: FloatArray, m2: FloatArray) -> tuple[BoolArray, FloatArray]:
    """Per row of ``d`` (second central moment ``m2``): whether it varies beyond rounding
    noise (a difference that only does has no usable skewness), and its sd (ddof 1, 0
    where it does not vary)."""
    n = d.shape[1]
    varies: BoolArray = m2 > (1e-24 * np.maximum(1.0, np.max(np.abs(d), axis=1))) ** 2
    sd: FloatArray = np.where(varies, np.sqrt(m2 * n / (n - 1)), 0.0)
    return varies, sd


@dataclass(frozen=True)
class TieSpikes:
    """Per row, the tie spike :func:`tie_spikes` found (or a caller named): its value
    (NaN: no spike), how many of its cases stay with the others (``kept``), and whether
    the cases read hold fewer than :data:`SPIKE_MIN_LEVELS` distinct values."""

    value: FloatArray
    kept: FloatArray
    few_levels: BoolArray

    @classmethod
    def none(cls, rows: int) -> TieSpikes:
        return cls(np.full(rows, np.nan), np.zeros(rows), np.zeros(rows, dtype=bool))

    @classmethod
    def repeat(cls, value: float, kept: float, few_levels: bool, rows: int) -> TieSpikes:
        """One eval's spike for every one of ``rows`` data sets resampled from it."""
        return cls(np.full(rows, value), np.full(rows, kept), np.full(rows, few_levels, dtype=bool))

    def any_rows(self) -> BoolArray:
        out: BoolArray = ~np.isnan(self.value)
        return out

    def any(self) -> bool:
        return bool(self.any_rows().any())

    def cases(self, d: FloatArray) -> BoolArray:
        """The cases set aside: those at the spike's value beyond the first ``kept``."""
        at = d == np.where(self.any_rows(), self.value, np.inf)[:, None]
        out: BoolArray = at & (np.cumsum(at, axis=1) > self.kept[:, None])
        return out


def tie_spikes(d: FloatArray) -> TieSpikes:
    """Per row, its tie spike: the difference most cases share (of equally common ones,
    the nearest 0), less as many of its cases as the values beside it in sorted order
    hold on average (1 each on continuous data, so all but one go; on a lattice whose
    0 is no more common than ±one step, none), where that excess is at least 2 cases and
    :data:`SPIKE_MIN_SHARE` of them, and :data:`SPIKE_MIN_SIGMAS` times the square root of
    what a neighbour holds.

    Shift-invariant up to the value itself: the rows of a data set shifted by a margin
    name the shifted value, so the non-inferiority test at −margin reads the same cases.
    One sort per row.
    """
    rows, n = d.shape
    if n < 3 or rows == 0:
        return TieSpikes.none(rows)
    ordered = np.sort(d, axis=1)
    starts = np.ones((rows, n), dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    run = np.cumsum(starts, axis=1) - 1  # run index of each position
    distinct = run[:, -1] + 1
    keyed = run + (np.arange(rows, dtype=np.int64) * n)[:, None]
    lengths = np.bincount(keyed.ravel(), minlength=rows * n).reshape(rows, n)
    longest = lengths.max(axis=1)
    # each run's value (the unused run slots past a row's last run are never the longest)
    value_of_run = np.zeros((rows, n))
    value_of_run[np.arange(rows)[:, None], run] = ordered
    distance = np.where(lengths == longest[:, None], np.abs(value_of_run), np.inf)
    chosen = np.argmin(distance, axis=1)
    at = np.arange(rows)
    below = np.where(chosen > 0, lengths[at, np.maximum(chosen - 1, 0)], 0)
    has_above = chosen < distinct - 1
    above = np.where(has_above, lengths[at, np.minimum(chosen + 1, n - 1)], 0)
    sides = (chosen > 0).astype(np.int64) + has_above.astype(np.int64)
    neighbours = (below + above) / np.maximum(sides, 1)
    kept = np.minimum(np.round(neighbours), longest)
    excess = longest - kept
    noise = SPIKE_MIN_SIGMAS * np.sqrt(np.maximum(neighbours, 1.0))
    spiked = (excess >= 2) & (excess >= SPIKE_MIN_SHARE * n) & (excess >= noise)
    levels = distinct - (kept == 0)  # the spike's value stays among the cases read if kept
    value = np.where(spiked, value_of_run[at, chosen], np.nan)
    return TieSpikes(value, np.where(spiked, kept, 0.0), spiked & (levels < SPIKE_MIN_LEVELS))


def counted_moments(
    values: FloatArray, counts: FloatArray, n: int, spikes: TieSpikes | None = None
) -> Moments:
    """:meth:`Moments.of` for data sets given as counts of a few distinct values.

    Row ``r`` holds ``counts[r, j]`` copies of ``values[j]`` (ascending, distinct), ``n``
    in all, as a resample of a metric with few levels does (recall@k, P@k, pass/fail:
    a dozen values among 10^5 cases).  Every summary then costs O(levels) per data set instead of
    O(n): the detectable-regression simulation spent most of a 10^5-case gate on
    them (#27).  The same definitions as :meth:`Moments.of`, summed in another order,
    so equal to it to rounding (~1e-15 relative).  ``spikes``: each row's tie spike
    (:func:`tie_spikes`; none by default), set aside as :meth:`Moments.of` does.
    """
    whole = _counted_whole(values, counts, n)
    if spikes is None or not spikes.any():
        return whole
    spiked = spikes.any_rows()
    level = np.argmax(values[None, :] == spikes.value[:, None], axis=1)
    rows = np.arange(counts.shape[0])
    spiked &= values[level] == spikes.value  # a value no row holds sets nothing aside
    held = counts[rows, level]
    reduced = counts.copy()
    reduced[rows, level] = np.where(spiked, np.minimum(held, spikes.kept), held)
    left = (n - (held - reduced[rows, level])).astype(np.int64)

    def own(group: NDArray[np.int64], m: int) -> Moments:
        return _counted_whole(values, reduced[group], m)

    return _read_apart(whole, spiked, _reads_apart(spikes, left) & spiked, left, own)


def _counted_whole(values: FloatArray, counts: FloatArray, n: int) -> Moments:
    """:func:`counted_moments` with every case counted alike (no spike set aside)."""
    rows = counts.shape[0]
    mean = counts @ values / n
    centred = values[None, :] - mean[:, None]  # rows x levels
    m2 = np.einsum("rj,rj->r", counts, centred * centred) / n
    m3 = np.einsum("rj,rj->r", counts, centred * centred * centred) / n
    present = counts > 0
    biggest = np.max(np.where(present, np.abs(values)[None, :], 0.0), axis=1)
    varies = m2 > (1e-24 * np.maximum(1.0, biggest)) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        g1 = _rounded_to_zero(np.where(varies, m3 / np.where(varies, m2, 1.0) ** 1.5, 0.0))
    adjust = math.sqrt(n * (n - 1)) / (n - 2) * (1.0 + SKEW_BIAS / math.sqrt(n)) if n >= 3 else 0.0
    sd = np.where(varies, np.sqrt(m2 * n / (n - 1)), 0.0)
    tied = counts.max(axis=1) / n

    def trimmed(k: int) -> FloatArray:
        if not rows:
            return np.zeros(0)
        return _counted_trimmed_g1(centred, counts, present, g1, n, k)

    modes = mode_correlation(centred, counts, n)
    return Moments(
        n,
        mean,
        sd,
        g1 * adjust,
        tied,
        trimmed(trim_count(n)),
        trimmed(deep_trim_count(n)),
        modes,
        np.full(rows, float(n)),
    )


def mode_correlation(centred: FloatArray, weights: FloatArray | None, n: int) -> FloatArray:
    """:func:`leave_one_out_correlation` where ``auto``'s two-mode rule applies (from
    :data:`AUTO_MODE_MIN_N` to :data:`AUTO_MODE_MAX_N` cases, and the cases split across
    their widest gap into two groups of at least :func:`group_min` each), else 0."""
    if not AUTO_MODE_MIN_N <= n <= AUTO_MODE_MAX_N:
        return np.zeros(centred.shape[0])
    correlation = leave_one_out_correlation(centred, weights, n)
    out: FloatArray = np.where(
        _smaller_group(centred, weights, n) >= group_min(n), correlation, 0.0
    )
    return out


def group_min(n: int) -> int:
    """Cases each side of the widest gap must hold for ``auto`` to read two groups:
    max(3, ⌈n/10⌉).  One or two extreme cases beyond a gap are a tail, which the trims
    handle, not a group: with any group size, a sample of a Weibull(½) parent (skewness
    6.6) read as two groups often enough to fail falsely 3.7% one-sided at n = 30 (2.6%
    without the two-mode rule, 3.2% with this floor) and 6.1% at n = 15 (4.7%, 5.3%), while
    two groups of 30% and 70% keep their rates (docs/design/statistics.md, "Two groups are
    groups, not a tail")."""
    return max(3, -(-n // 10))


def _smaller_group(centred: FloatArray, weights: FloatArray | None, n: int) -> FloatArray:
    """Per row, the cases on the smaller side of the widest gap between consecutive values
    (``weights``: the level counts of :func:`counted_moments`; one sort per row else)."""
    rows = centred.shape[0]
    if weights is None:
        ordered = np.sort(centred, axis=1)
        below = np.argmax(np.diff(ordered, axis=1), axis=1) + 1.0
        out: FloatArray = np.minimum(below, n - below)
        return out
    # levels ascending; a gap runs from a present level back to the previous present one
    present = weights > 0
    position = np.where(present, np.arange(centred.shape[1])[None, :], -1)
    previous = np.maximum.accumulate(position, axis=1)
    previous = np.concatenate([np.full((rows, 1), -1), previous[:, :-1]], axis=1)
    at = np.arange(rows)[:, None]
    gap = np.where(
        present & (previous >= 0),
        centred - centred[at, np.maximum(previous, 0)],
        -np.inf,
    )
    cut = np.argmax(gap, axis=1)  # the first level above the widest gap
    below = np.cumsum(weights, axis=1)[np.arange(rows), cut] - weights[np.arange(rows), cut]
    out = np.minimum(below, n - below)
    return out


def leave_one_out_correlation(
    centred: FloatArray, weights: FloatArray | None, n: int
) -> FloatArray:
    """Per row, the correlation, over the n samples that leave one case out, between
    their mean and their skewness g1 (0 where it is undefined).

    ``centred[r, j]`` is a value less its row's mean, held once (``weights`` None: every
    case of :meth:`Moments.of`) or ``weights[r, j]`` times (the level counts of
    :func:`counted_moments`), so both paths compute one statistic.  Near −1 the skewness
    moves with the mean in lockstep: the sample is two modes, whose skewness is set by
    how many cases fell in each, which is also what sets its mean
    (:data:`AUTO_MODE_CORRELATION`).
    """
    if n < 4 or centred.shape[1] == 0:
        return np.zeros(centred.shape[0])

    def total(values: FloatArray) -> FloatArray:
        summed: FloatArray = (
            values.sum(axis=1) if weights is None else np.einsum("rj,rj->r", weights, values)
        )
        return summed

    k = n - 1
    # Leaving case j out: its mean is (S1 − x_j)/k, linear in x_j, so the correlation is
    # −corr(x_j, g1 without j); the moments without j come from the row's sums of x, x², x³
    # (one pass each, then elementwise, few temporaries: a power simulation passes chunks
    # of millions of elements).
    square = centred * centred
    s1, s2, s3 = total(centred)[:, None], total(square)[:, None], total(square * centred)[:, None]
    mean = (s1 - centred) / k
    m2 = (s2 - square) / k - mean * mean
    del square
    m3 = (s3 - centred * centred * centred) / k - 3.0 * mean * m2 - mean * mean * mean
    del mean
    present = np.abs(centred) if weights is None else np.where(weights > 0, np.abs(centred), 0.0)
    floor = (1e-12 * np.maximum(np.max(present, axis=1), 1e-300))[:, None] ** 2
    del present
    with np.errstate(divide="ignore", invalid="ignore"):
        g1 = np.where(m2 > floor, m3 / (m2 * np.sqrt(np.maximum(m2, 0.0))), 0.0)
        del m2, m3
        g1 -= (total(g1) / n)[:, None]
        spread = np.sqrt(s2[:, 0] * total(g1 * g1))
        cov = -total(centred * g1)
        out: FloatArray = np.where(spread > 0.0, cov / np.where(spread > 0.0, spread, 1.0), 0.0)
    return out


def _counted_trimmed_g1(
    centred: FloatArray, counts: FloatArray, present: BoolArray, g1: FloatArray, n: int, k: int
) -> FloatArray:
    """:func:`_trimmed_g1` from counts: the k largest on g1's side set aside."""
    if n - k < 3:
        return np.zeros(counts.shape[0])
    side = np.where(g1 < 0.0, -1.0, 1.0)
    # Levels ordered from the side's largest down: the top of the ascending values for
    # side +1, their bottom for side -1.
    from_top = np.where((side > 0)[:, None], counts[:, ::-1], counts)
    above = np.cumsum(from_top, axis=1) - from_top  # cases strictly before each level
    dropped = np.clip(k - above, 0.0, from_top)  # how many of each level go
    kept_top = from_top - dropped
    kept = np.where((side > 0)[:, None], kept_top[:, ::-1], kept_top)
    flipped = centred * side[:, None]
    mean = np.einsum("rj,rj->r", kept, flipped) / (n - k)
    rest = flipped - mean[:, None]
    m2 = np.einsum("rj,rj->r", kept, rest * rest) / (n - k)
    m3 = np.einsum("rj,rj->r", kept, rest * rest * rest) / (n - k)
    scale = np.max(np.where(present, np.abs(centred), 0.0), axis=1)
    varies = m2 > (1e-12 * np.maximum(scale, 1e-300)) ** 2
    with np.errstate(divide="ignore", invalid="ignore"):
        out: FloatArray = np.where(varies, side * m3 / np.where(varies, m2, 1.0) ** 1.5, 0.0)
    return out


def _second_third(centred: FloatArray) -> tuple[FloatArray, FloatArray]:
    """Per row, the mean of x² and of x³: the same products and sums as
    ``mean(x * x)`` and ``mean(x * x * x)``, with one temporary array instead of three."""
    power = centred * centred
    m2 = np.mean(power, axis=1)
    power *= centred
    return m2, np.mean(power, axis=1)


def trim_count(n: int) -> int:
    """Cases set aside on the skew's side before the skewness must still show: max(3, ⌈n/20⌉).

    Three because one to three extreme cases make up the whole sample skewness of a
    symmetric heavy-tailed sample at n = 10-50; growing with n because an infinite-variance
    parent (Student t, 2 df) has proportionally more of them (a fixed 3 left it at 3.1-3.7%
    one-sided at n = 100-1000, docs/calibration.md).
    """
    return max(3, -(-n // 20))


def deep_trim_count(n: int) -> int:
    """Cases set aside before ``auto`` trusts the skewness on both ends: max(5, ⌈0.15·n⌉).

    Deeper than :func:`trim_count`: a symmetric parent whose sample skewness survives
    losing three extreme cases (a tenth of the cases with 30 times the spread, Student t
    with 1.5 df) rarely keeps it once 15% of them go, while a skewed parent's core
    stays skewed (Exp(1): the kept 85% still has skewness ≈ 1.2).
    """
    return max(AUTO_DEEP_TRIM_MIN, -(-n * AUTO_DEEP_TRIM_PERCENT // 100))


def _trimmed_g1(centred: FloatArray, g1: FloatArray, ks: tuple[int, ...]) -> tuple[FloatArray, ...]:
    """Per row and per k in ``ks``, g1 of the cases left once the k largest on the side
    of g1 go (one selection of the largest max(ks) serves every k).

    Shift- and scale-invariant, so the non-inferiority test at −margin and the test
    at 0 see the same value.
    """
    rows, n = centred.shape
    usable = [k for k in ks if n - k >= 3]
    if not usable:
        return tuple(np.zeros(rows) for _ in ks)
    side = np.where(g1 < 0.0, -1.0, 1.0)[:, None]
    # The side's k largest dropped: partitioning leaves the n - k smallest first (in no
    # order, which the moments do not need), O(n) per row where a sort was O(n log n):
    # 70 % of the detectable-regression simulation at 10^5 cases (#27).  In place, on
    # the one copy the product makes.  The largest k is partitioned off once; the
    # smaller ones take back the least of those set-aside cases.
    flipped = centred * side
    deepest = max(usable)
    if n >= _TAIL_CASES:
        kept_moments = _kept_moments_by_tail(flipped, tuple(usable))
    else:
        flipped.partition(n - deepest - 1, axis=1)
        base = flipped[:, : n - deepest]
        top = np.sort(flipped[:, n - deepest :], axis=1)  # the set-aside cases, ascending
        kept_moments = []
        for k in usable:
            kept = np.concatenate((base, top[:, : deepest - k]), axis=1) if k < deepest else base
            rest = kept - kept.mean(axis=1, keepdims=True)
            kept_moments.append(_second_third(rest))
    scale = np.maximum(centred.max(axis=1), -centred.min(axis=1))  # max |x|, no |x| array
    by_k: dict[int, FloatArray] = {}
    for k, (m2, m3) in zip(usable, kept_moments, strict=True):
        varies = m2 > (1e-12 * np.maximum(scale, 1e-300)) ** 2
        with np.errstate(divide="ignore", invalid="ignore"):
            by_k[k] = np.where(varies, side[:, 0] * m3 / np.where(varies, m2, 1.0) ** 1.5, 0.0)
    return tuple(by_k.get(k, np.zeros(rows)) for k in ks)


#: Cases from which the trimmed skewness finds the set-aside cases in a sampled tail.
_TAIL_CASES: Final = 2000


def _kept_moments_by_tail(
    flipped: FloatArray, ks: tuple[int, ...]
) -> list[tuple[FloatArray, FloatArray]]:
    """Per k in ``ks`` and per row, the 2nd and 3rd central moments of the cases left
    once the k largest go.

    The largest max(ks) lie above a threshold read from every 16th case (a little below
    where they should start); only the cases above it are partitioned, and the kept
    cases' moments are the whole row's power sums less the set-aside cases'.  A pass
    and a partition of a few percent of the row instead of a partition of all of it:
    four fifths of the trimmed skewness at 10^5 cases (#27).  Equal to partitioning
    the whole row to rounding; a row whose threshold catches fewer than max(ks) cases
    is partitioned whole.
    """
    rows, n = flipped.shape
    deepest = max(ks)
    sample = np.array(flipped[:, ::16])  # a copy: partitioned below
    size = sample.shape[1]
    # The sample's rank a quarter of the tail (and 4 cases) lower than the cut's.
    rank = max(0, min(size - 1, size - 1 - int(1.25 * deepest * size / n) - 4))
    sample.partition(rank, axis=1)
    threshold = sample[:, rank]
    above = flipped > threshold[:, None]
    caught = np.count_nonzero(above, axis=1)
    total1, total2, total3 = flipped.sum(axis=1), np.empty(rows), np.empty(rows)
    power = flipped * flipped
    total2[:] = power.sum(axis=1)
    power *= flipped
    total3[:] = power.sum(axis=1)
    sums = {k: (total1.copy(), total2.copy(), total3.copy()) for k in ks}
    # Within the deepest set-aside block, the cut of each smaller k (a partition, not a
    # sort: the block is 15% of the row at the deep trim).
    cuts = sorted({deepest - k for k in ks if k < deepest})
    for r in range(rows):
        if caught[r] >= deepest:
            tail = flipped[r][above[r]]
            tail.partition(tail.shape[0] - deepest)
            top = tail[tail.shape[0] - deepest :]
        else:
            top = np.partition(flipped[r], n - deepest)[n - deepest :]
        if cuts:
            top = np.partition(top, cuts)
        for k, (s1, s2, s3) in sums.items():
            gone = top[deepest - k :]
            s1[r] -= gone.sum()
            s2[r] -= (gone * gone).sum()
            s3[r] -= (gone * gone * gone).sum()
    out: list[tuple[FloatArray, FloatArray]] = []
    for k in ks:
        s1, s2, s3 = sums[k]
        kept = n - k
        mean = s1 / kept
        m2 = np.maximum(s2 / kept - mean * mean, 0.0)
        m3 = s3 / kept - 3.0 * mean * (s2 / kept) + 2.0 * mean**3
        out.append((m2, m3))
    return out


def _mode_share(d: FloatArray) -> FloatArray:
    """Per row, the largest share of cases with exactly the same difference (exact at
    and above :data:`AUTO_MAX_TIED_SHARE`, the only comparison made with it).

    A shift of every case by the same amount keeps it, so the non-inferiority test
    at −margin picks the same procedure as the test at 0 on the same data.
    """
    return tied_share(d, AUTO_MAX_TIED_SHARE)


def auto_corrects(m: Moments) -> BoolArray:
    """Per row, whether ``auto`` corrects for skewness (the rule in the module docstring)."""
    stable = (np.sign(m.trimmed_skewness) == np.sign(m.skewness)) & (
        np.abs(m.trimmed_skewness) >= AUTO_MIN_TRIMMED_SKEW
    )
    out: BoolArray = (
        (m.tied_share < AUTO_MAX_TIED_SHARE) & stable & ~two_modes(m) & (m.skewness != 0.0)
    )
    return out


def two_modes(m: Moments) -> BoolArray:
    """Per row, whether its cases fall in two groups whose sizes set the skewness (and the
    mean with it): the leave-one-out correlation below :data:`AUTO_MODE_CORRELATION`, or
    :data:`AUTO_MODE_SMALL_CORRELATION` below :data:`AUTO_MODE_FULL_N` cases (0, never
    below, outside :data:`AUTO_MODE_MIN_N` to :data:`AUTO_MODE_MAX_N`)."""
    line = np.where(m.skew_n < AUTO_MODE_FULL_N, AUTO_MODE_SMALL_CORRELATION, AUTO_MODE_CORRELATION)
    out: BoolArray = m.mode_correlation < line
    return out


def with_two_modes(m: Moments, two: bool) -> Moments:
    """``m`` with every row read as falling in two groups (``two``) or not, as the eval it
    was resampled from does (the detectable-regression simulation: a world's repeated
    draws cluster, so its own leave-one-out correlation is not the eval's)."""
    rows = m.mean.shape[0]
    return replace(m, mode_correlation=np.full(rows, -1.0 if two else 0.0))


def auto_skewness(m: Moments) -> FloatArray:
    """The skewness ``auto`` corrects for: the adjusted G1 where :func:`auto_corrects`, else 0."""
    out: FloatArray = np.where(auto_corrects(m), m.skewness, 0.0)
    return out


def auto_drops_guard(m: Moments) -> BoolArray:
    """Per row, whether ``auto`` decides with ``skew-t`` alone: it corrects, and the
    skewness keeps its sign and :data:`AUTO_MIN_DEEP_TRIMMED_SKEW` once the
    :func:`deep_trim_count` most extreme cases on its side are set aside too.

    The guard (plain t's interval beside the corrected one) costs nothing on the skew's
    side, where the corrected end lies further out, but on the far side it keeps plain
    t's end, which on a skewed parent is conservative (0.3-1% one-sided against 2.5%):
    coverage 96.7-97.9% where 95% is claimed.  Where the skew runs this deep it is the
    parent's, and the corrected end stands on its own.
    """
    deep = m.deep_trimmed_skewness
    keeps = (np.sign(deep) == np.sign(m.skewness)) & (np.abs(deep) >= AUTO_MIN_DEEP_TRIMMED_SKEW)
    out: BoolArray = auto_corrects(m) & keeps
    return out


def auto_guard_skewness(m: Moments) -> FloatArray:
    """The skewness of ``auto``'s guard interval: 0 (plain t) unless :func:`auto_drops_guard`,
    where it is the corrected interval's own, so the union is that interval alone."""
    out: FloatArray = np.where(auto_drops_guard(m), m.skewness, 0.0)
    return out


def auto_bounds(m: Moments, alpha: float) -> tuple[FloatArray, FloatArray]:
    """Ends of ``auto``'s 1 − α interval for every row (before the constant-row rule)."""
    return guarded_bounds(m, auto_skewness(m), alpha, guard=auto_guard_skewness(m))


def auto_p(m: Moments, null: float) -> FloatArray:
    """``auto``'s two-sided p of H0: mean = ``null`` (the dual of :func:`auto_bounds`)."""
    return guarded_p(m, auto_skewness(m), null, guard=auto_guard_skewness(m))


# ----------------------------------------------------------------------------- skew-t / t


def _theta_from_u(a: FloatArray, u: FloatArray | float) -> FloatArray:
    """Inverse of u = θ + aθ² + a²θ³/3, i.e. θ = (cbrt(1 + 3au) − 1)/a."""
    x = 3.0 * a * u
    small = np.abs(x) < 1e-5
    safe_a = np.where(small, 1.0, a)
    exact = (np.cbrt(1.0 + x) - 1.0) / safe_a
    series = u - a * u * u + (5.0 / 3.0) * a * a * u * u * u
    out: FloatArray = np.where(small, series, exact)
    return out


def far_end_skewness(n: int | FloatArray, gamma: FloatArray) -> FloatArray:
    """The skewness of the skew-t interval's far end: γ·(1 + :data:`FAR_END_SKEW_BIAS`/n),
    n the cases the skewness was read from (:attr:`Moments.skew_n`)."""
    out: FloatArray = gamma * (1.0 + FAR_END_SKEW_BIAS / n)
    return out


def _hall_end(m: Moments, gamma: FloatArray, t_value: float) -> FloatArray:
    """The μ at which Hall's statistic at skewness ``gamma`` equals ``t_value``."""
    theta = _theta_from_u(gamma / 3.0, t_value / math.sqrt(m.n) - gamma / (6.0 * m.n))
    out: FloatArray = m.mean - m.sd * theta
    return out


def skew_t_bounds(m: Moments, gamma: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """Ends of the 1 − α skewness-corrected t interval (plain t where γ = 0).

    The end on the skew's side is Hall's at γ; the far end is Hall's at the larger
    :func:`far_end_skewness` (for γ > 0 the lower end, for γ < 0 the upper)."""
    q = t_quantile(1.0 - alpha / 2.0, m.n - 1)
    far = far_end_skewness(m.skew_n, gamma)
    low = _hall_end(m, np.maximum(gamma, far), q)  # T = +q: the lower end of μ
    high = _hall_end(m, np.minimum(gamma, far), -q)
    return low, high


def skew_t_statistic(m: Moments, gamma: FloatArray, null: float) -> FloatArray:
    """Hall's transformed statistic T(μ₀) at skewness ``gamma`` (t where γ = 0)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        theta = (m.mean - null) / m.sd
    a = gamma / 3.0
    out: FloatArray = math.sqrt(m.n) * (
        theta + a * theta * theta + a * a * theta * theta * theta / 3.0 + gamma / (6.0 * m.n)
    )
    return out


def skew_t_p(m: Moments, gamma: FloatArray, null: float) -> FloatArray:
    """Two-sided p of H0: mean difference = ``null`` (dual of :func:`skew_t_bounds`).

    Each end comes from one of two statistics, each monotone in μ₀ and each taking the
    sign of mean − μ₀ but near μ₀ = mean (where either p is near 1), so μ₀ on the far
    side of the mean is tested by the far end's statistic, μ₀ on the skew's side by γ's.
    """
    far = far_end_skewness(m.skew_n, gamma)
    far_side = (m.mean - null) * gamma > 0.0
    stat = skew_t_statistic(m, np.where(far_side, far, gamma), null)
    out = np.empty(stat.shape[0])
    rows = zip(stat.tolist(), m.sd.tolist(), m.mean.tolist(), strict=True)
    for i, (s, sd, mean) in enumerate(rows):
        if sd == 0.0:
            out[i] = 1.0 if mean == null else 0.0
        else:
            out[i] = t_two_sided_p(s, m.n - 1)
    return out


def guarded_bounds(
    m: Moments, gamma: FloatArray, alpha: float, *, guard: FloatArray | None = None
) -> tuple[FloatArray, FloatArray]:
    """The union of the guard's and the skewness-corrected t intervals (``t+skew-t``).

    The guard is plain t (``guard`` = 0, the default) or, per row, a skew-t interval
    at skewness ``guard``.  Where γ equals the guard's the union is one interval, so rows
    ``auto`` does not correct get plain t and rows where it drops the guard get skew-t.
    """
    zero = np.zeros_like(gamma)
    g_low, g_high = skew_t_bounds(m, zero if guard is None else guard, alpha)
    s_low, s_high = skew_t_bounds(m, gamma, alpha)
    return np.minimum(g_low, s_low), np.maximum(g_high, s_high)


def guarded_p(
    m: Moments, gamma: FloatArray, null: float, *, guard: FloatArray | None = None
) -> FloatArray:
    """The dual of :func:`guarded_bounds`: the larger of the guard's and the skew-t p."""
    g_p = skew_t_p(m, np.zeros_like(gamma) if guard is None else guard, null)
    out: FloatArray = np.maximum(g_p, skew_t_p(m, gamma, null))
    return out


# ----------------------------------------------------------------------------- bootstrap


def percentile_bounds(resampled: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """The spec's percentile interval per row of resampled mean differences (type 7)."""
    return percentile_interval(resampled, alpha, axis=1)


def percentile_p(resampled: FloatArray, null: float) -> FloatArray:
    """Smallest α at which the type-7 percentile interval excludes ``null``, per row.

    With the resamples sorted, ``quantile(τ) ≤ null`` exactly while the
    interpolation position ``(B − 1)·τ`` stays at or below the point where the
    interpolation line crosses ``null``; the lower end excludes ``null`` once
    ``α/2`` passes that share, the upper end symmetrically.
    """
    r = np.sort(resampled, axis=1)
    rows, b = r.shape
    out = np.empty(rows)
    for i in range(rows):
        out[i] = _percentile_p_row(r[i], null, b)
    return out


def _crossing(r: FloatArray, null: float, count: int) -> float:
    """Position h where the interpolation line through the sorted r reaches ``null``."""
    below, above = float(r[count - 1]), float(r[count])
    return (count - 1) + (null - below) / (above - below)


def _percentile_p_row(r: FloatArray, null: float, b: int) -> float:
    if b == 1:
        return 1.0 if r[0] == null else 0.0
    at_most = int(np.searchsorted(r, null, side="right"))  # r <= null
    below = int(np.searchsorted(r, null, side="left"))  # r < null
    # lower end excludes null iff alpha > 2 * tau0 (tau0: last share with quantile <= null)
    if at_most == 0:
        p_low = 0.0
    elif at_most == b:
        p_low = 2.0
    else:
        p_low = 2.0 * _crossing(r, null, at_most) / (b - 1)
    # upper end excludes null iff alpha > 2 * (1 - tau1) (tau1: first share with quantile >= null)
    if below == b:
        p_high = 0.0
    elif below == 0:
        p_high = 2.0
    else:
        p_high = 2.0 * (1.0 - _crossing(r, null, below) / (b - 1))
    return min(1.0, p_low, p_high)


# ----------------------------------------------------------------------------- permutation


#: Sign patterns held at once (float64 elements), so memory never grows with B × n.
_FLIP_CHUNK_ELEMENTS: Final = 2**22


@dataclass(frozen=True)
class SignFlips:
    """A sign-flip null shared by every row: all 2**n patterns, or B random ones.

    The random patterns are drawn in chunks from a recorded seed when projected,
    so they are never all in memory (10,000 × 10⁵ would be 8 GB).
    """

    n: int
    total: int
    exact: bool
    seed: int

    @classmethod
    def draw(cls, n: int, n_resamples: int, gen: np.random.Generator) -> SignFlips:
        exact = n <= 20 and 2**n <= n_resamples
        seed = int(gen.integers(0, 2**63 - 1))
        return cls(n, 2**n if exact else n_resamples, exact, seed)

    def project(self, d: FloatArray) -> tuple[FloatArray, FloatArray]:
        """(Σ s_i d_i per row and pattern, Σ s_i per pattern)."""
        rows = max(1, _FLIP_CHUNK_ELEMENTS // max(1, self.n))
        gen = np.random.default_rng(self.seed)
        sums, ones = [], []
        for start in range(0, self.total, rows):
            count = min(rows, self.total - start)
            if self.exact:
                codes = np.arange(start, start + count, dtype=np.int64)[:, None]
                bits = (codes >> np.arange(self.n, dtype=np.int64)) & 1
            else:
                bits = gen.integers(0, 2, size=(count, self.n), dtype=np.int64)
            signs = 1.0 - 2.0 * bits.astype(np.float64)
            sums.append(d @ signs.T)
            ones.append(signs.sum(axis=1))
        return np.concatenate(sums, axis=1), np.concatenate(ones)


@dataclass(frozen=True)
class PermutationNull:
    """Per row: signed sums of d under every pattern, so any shift δ costs O(patterns)."""

    data: FloatArray
    flips: SignFlips
    flipped: FloatArray  # (rows, patterns): Σ s_i d_i
    flipped_ones: FloatArray  # (patterns,): Σ s_i

    @classmethod
    def of(cls, data: FloatArray, flips: SignFlips) -> PermutationNull:
        d = _rows(data)
        flipped, ones = flips.project(d)
        return cls(d, flips, flipped, ones)

    def p(self, shift: FloatArray) -> FloatArray:
        """Two-sided mid-p of H0: mean = shift, per row (p = 1 when nothing is observed)."""
        n = self.data.shape[1]
        observed = np.abs(self.data.sum(axis=1) - n * shift)
        null = np.abs(self.flipped - shift[:, None] * self.flipped_ones[None, :])
        # Sums of the same values in another order differ by rounding only: a tie is
        # decided with a tolerance far above that noise and far below any real step.
        tol = 1e-9 * (np.abs(self.data).sum(axis=1) + n * np.abs(shift)) + 1e-300
        greater = np.count_nonzero(null > (observed + tol)[:, None], axis=1)
        equal = np.count_nonzero(np.abs(null - observed[:, None]) <= tol[:, None], axis=1)
        total = self.flipped_ones.shape[0]
        if self.flips.exact:
            p = (greater + 0.5 * equal) / total
        else:
            p = (greater + 0.5 * (equal + 1)) / (total + 1)
        out: FloatArray = np.where(observed <= tol, 1.0, np.minimum(1.0, p))
        return out

    def bounds(self, alpha: float, anchor: float) -> tuple[FloatArray, FloatArray]:
        """Ends of {δ : p(δ) > α}, bracketed so the ``anchor`` side is decided by p(anchor)."""
        d = self.data
        mean = d.mean(axis=1)
        spread = np.max(d, axis=1) - np.min(d, axis=1)
        pad = spread + 1e-9 * (1.0 + np.abs(mean))
        far_low = np.min(d, axis=1) - pad
        far_high = np.max(d, axis=1) + pad
        anchor_row = np.full(mean.shape, float(anchor))
        anchor_ok = self.p(anchor_row) > alpha
        low = self._end(alpha, mean, far_low, anchor_row, anchor_ok, below=True)
        high = self._end(alpha, mean, far_high, anchor_row, anchor_ok, below=False)
        return low, high

    def _end(
        self,
        alpha: float,
        mean: FloatArray,
        far: FloatArray,
        anchor: FloatArray,
        anchor_ok: BoolArray,
        *,
        below: bool,
    ) -> FloatArray:
        beyond = anchor < mean if below else anchor > mean
        # accepted end: the mean (p = 1), or the anchor when it is accepted and lies on
        # this side; rejected end: the anchor when it is rejected on this side, else far.
        accepted = np.where(beyond & anchor_ok, anchor, mean)
        rejected = np.where(beyond & ~anchor_ok, anchor, far)
        reachable = self.p(far) <= alpha  # else the test never rejects on this side
        for _ in range(_BISECTION_STEPS):
            mid = 0.5 * (accepted + rejected)
            ok = self.p(mid) > alpha
            accepted = np.where(ok, mid, accepted)
            rejected = np.where(ok, rejected, mid)
        unbounded = ~reachable & ~(beyond & ~anchor_ok)
        out: FloatArray = np.where(unbounded, -np.inf if below else np.inf, accepted)
        return out


# ----------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Decision:
    """One verdict's statistics: an interval and its dual p, from ``procedure``."""

    procedure: Procedure
    estimate: float
    low: float
    high: float
    confidence: float
    null: float  # the value tested: 0, or −margin / +margin for non-inferiority
    p_value: float  # two-sided p of H0: Δ = null; ≤ 1 − confidence ⇔ null outside [low, high]

    @property
    def alpha(self) -> float:
        return 1.0 - self.confidence

    @property
    def excludes_null(self) -> bool:
        return self.low > self.null or self.high < self.null

    @property
    def name(self) -> str:
        return PROCEDURE_NAMES[self.procedure]


def agree(low: float, high: float, null: float, p: float, alpha: float) -> float:
    """``p`` made to agree with the interval where float rounding puts it on the line.

    The analytic p and the analytic interval are computed by different float
    paths; exactly at the boundary (|p − α| of order 1e-15) they may disagree,
    and the interval (the DESIGN §5 rule) wins.  Tests bound how far this moves p.
    """
    excluded = low > null or high < null
    if excluded and p > alpha:
        return alpha
    if not excluded and p <= alpha:
        return float(np.nextafter(alpha, 2.0))
    return p


class Evaluator:
    """The state one procedure needs to give intervals at any level for one data set.

    Built once per verdict; a multiplicity correction asks it again for the interval
    at the corrected level, so the corrected verdict's interval and adjusted p stay
    duals of each other.
    """

    def __init__(
        self,
        procedure: Procedure,
        estimate: float,
        *,
        diffs: FloatArray | None = None,
        resampled: FloatArray | None = None,
        flips: SignFlips | None = None,
    ) -> None:
        self.procedure = procedure
        self.estimate = estimate
        self._moments = Moments.of(diffs) if diffs is not None else None
        self._resampled = resampled[None, :] if resampled is not None else None
        self._null = PermutationNull.of(diffs, flips) if diffs is not None and flips else None
        if procedure in ANALYTIC and self._moments is None:
            raise InputError(f"procedure {procedure!r} needs per-case differences")
        if procedure == "bootstrap" and self._resampled is None:
            raise InputError("procedure 'bootstrap' needs the resampled differences")
        if procedure == "permutation" and self._null is None:
            raise InputError("procedure 'permutation' needs per-case differences and flips")

    def _gamma(self) -> FloatArray:
        assert self._moments is not None
        if self.procedure == "t":
            return np.zeros(1)
        return self._moments.skewness

    def raw(self, alpha: float, null: float) -> tuple[float, float, float]:
        """(low, high, p) before :func:`agree` -- exposed for the consistency tests."""
        if self.procedure in ANALYTIC:
            assert self._moments is not None
            gamma = self._gamma()
            m = self._moments
            if float(m.sd[0]) == 0.0:
                mean = float(m.mean[0])
                return mean, mean, 1.0 if mean == null else 0.0
            if self.procedure == "t+skew-t":
                low, high = guarded_bounds(m, gamma, alpha)
                p = guarded_p(m, gamma, null)
            else:
                low, high = skew_t_bounds(m, gamma, alpha)
                p = skew_t_p(m, gamma, null)
            return float(low[0]), float(high[0]), float(p[0])
        if self.procedure == "bootstrap":
            assert self._resampled is not None
            low, high = percentile_bounds(self._resampled, alpha)
            return float(low[0]), float(high[0]), float(percentile_p(self._resampled, null)[0])
        assert self._null is not None
        low, high = self._null.bounds(alpha, null)
        p = self._null.p(np.array([null]))
        return float(low[0]), float(high[0]), float(p[0])

    def decide(self, alpha: float, null: float = 0.0) -> Decision:
        low, high, p = self.raw(alpha, null)
        p = agree(low, high, null, p, alpha)
        return Decision(self.procedure, self.estimate, low, high, 1.0 - alpha, null, p)


def choose_procedure(method: GateMethod, diffs: FloatArray | None) -> Procedure:
    """The procedure a check's ``method`` runs on these differences (None: an aggregate)."""
    if diffs is None:
        if method == "t":
            raise InputError("method 't' needs per-case values; an aggregate has none")
        # Aggregates have no per-case values: only resampling can compare them
        # (a permutation request is refused by evaluator_for with the fix).
        return "permutation" if method == "permutation" else "bootstrap"
    if method == "auto":
        return DEFAULT_PROCEDURE
    return method


def corrected_alpha(alpha: float, p_raw: float, p_adjusted: float) -> float:
    """The level at which the raw test decides exactly as the corrected one does.

    The raw p is ≤ α·p/p_adj exactly when p_adj ≤ α, so the interval at that level
    excludes the tested value exactly when the corrected decision rejects.  For
    Holm's step j this is α/(k − j + 1), the level Holm tests that step at.
    """
    if p_adjusted <= 0.0 or p_raw <= 0.0:
        return alpha
    return min(alpha, alpha * p_raw / p_adjusted)


def check_gate_method(method: object) -> GateMethod:
    for known in GATE_METHODS:
        if method == known:
            return known
    raise InputError(f"unknown method {method!r}: use one of {', '.join(GATE_METHODS)}")


def batch_bounds(
    method: Literal["auto", "t", "skew-t"],
    data: FloatArray,
    alpha: float,
    *,
    tied_share: FloatArray | None = None,
    spikes: TieSpikes | None = None,
) -> tuple[FloatArray, FloatArray]:
    """Interval ends of an analytic procedure for every row (the calibration suite's path).

    ``tied_share``: each row's largest share of equal values, if already counted;
    ``spikes``: each row's tie spike, if known (:meth:`Moments.of`)."""
    return moments_bounds(method, Moments.of(data, tied_share, spikes), alpha)


def moments_bounds(
    method: Literal["auto", "t", "skew-t"], m: Moments, alpha: float
) -> tuple[FloatArray, FloatArray]:
    """:func:`batch_bounds` from the data sets' :class:`Moments`."""
    if method == "auto":
        low, high = auto_bounds(m, alpha)
    else:
        gamma = m.skewness if method == "skew-t" else np.zeros_like(m.mean)
        low, high = skew_t_bounds(m, gamma, alpha)
    constant = m.sd == 0.0
    return np.where(constant, m.mean, low), np.where(constant, m.mean, high)


def batch_percentile(
    data: FloatArray, n_resamples: int, gen: np.random.Generator, alpha: float
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Percentile bootstrap for every row, all rows sharing one set of case draws.

    Returns (low, high, resampled means).  Sharing the draws across simulated data
    sets keeps each row's interval exactly the bootstrap of that row.
    """
    d = _rows(data)
    n = d.shape[1]
    positions = gen.integers(0, n, size=(n_resamples, n), dtype=np.int64)
    counts = np.zeros((n_resamples, n))
    np.add.at(counts, (np.repeat(np.arange(n_resamples), n), positions.ravel()), 1.0)
    resampled = d @ counts.T / n
    low, high = percentile_bounds(resampled, alpha)
    return low, high, resampled


def batch_studentized(
    data: FloatArray, n_resamples: int, gen: np.random.Generator, alpha: float
) -> tuple[FloatArray, FloatArray]:
    """Studentized (bootstrap-t) paired interval for every row, rows sharing the draws.

    Each resample's ``t* = (mean* − mean)/(s*/√n)``; the interval is
    ``[mean − t*(1 − α/2)·s/√n, mean − t*(α/2)·s/√n]``.  A candidate measured by the
    calibration suite (docs/calibration.md) against ``auto``; no verdict uses it.  A
    resample without spread (one case drawn n times) has t* = ±∞ unless its mean is
    the sample's, where it is 0.
    """
    d = _rows(data)
    n = d.shape[1]
    positions = gen.integers(0, n, size=(n_resamples, n), dtype=np.int64)
    counts = np.zeros((n_resamples, n))
    np.add.at(counts, (np.repeat(np.arange(n_resamples), n), positions.ravel()), 1.0)
    m = Moments.of(d)
    centred = d - m.mean[:, None]
    means = centred @ counts.T / n  # mean* − mean, per row and resample
    squares = (centred * centred) @ counts.T / n
    var = np.maximum(squares - means * means, 0.0) * n / (n - 1)
    se = np.sqrt(var / n)
    tiny = 1e-12 * np.maximum(m.sd, 1e-300)[:, None] / math.sqrt(n)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(se > tiny, means / np.where(se > tiny, se, 1.0), np.sign(means) * np.inf)
    t = np.where(np.abs(means) <= tiny, np.where(se > tiny, t, 0.0), t)
    # finite stand-ins for ±∞, so a quantile between two of them is not ∞ − ∞
    t = np.clip(t, -1e300, 1e300)
    lo_q, hi_q = np.quantile(t, [alpha / 2.0, 1.0 - alpha / 2.0], axis=1)
    se_obs = m.sd / math.sqrt(n)
    low = m.mean - hi_q * se_obs
    high = m.mean - lo_q * se_obs
    constant = m.sd == 0.0
    return np.where(constant, m.mean, low), np.where(constant, m.mean, high)


def as_rows(values: Sequence[float] | FloatArray) -> FloatArray:
    return _rows(np.asarray(values, dtype=np.float64))


# ----------------------------------------------------------------------------- from runs


@dataclass(frozen=True)
class PairedData:
    """What the procedures read for one metric of two runs paired by case id."""

    estimate: float  # exactly a.mean(metric) - b.mean(metric) (or the aggregates' Δ)
    diffs: FloatArray | None  # per-case a - b in sorted case-id order; None for aggregates
    ids: tuple[str, ...]


def paired_data(a: RunLike, b: RunLike, metric: str) -> tuple[PairedData, Any]:
    """Pair ``a`` and ``b`` the way :func:`evalkit.paired_bootstrap` does."""
    paired = pair_runs(a, b)
    data = metric_data(paired, metric)
    if isinstance(data, CaseValues):
        column = case_column(metric, data.kind, data.a, data.b, data.a - data.b)
        assert column.diffs is not None
        # the engine's Δ: exact on the metric's lattice (stats/fixedpoint.py)
        estimate = observed_on_lattice(column, lattice_of([column], paired.n), 0)
        return PairedData(estimate, column.diffs, tuple(paired.ids)), column
    return PairedData(data.value_a - data.value_b, None, tuple(paired.ids)), aggregate_column(data)


def spec_resamples(
    paired: PairedData,
    data: Any,
    n_resamples: int,
    seed: int,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
) -> FloatArray:
    """The resampled Δs :func:`evalkit.paired_bootstrap` draws for one metric alone.

    The engine's own function (stats/compare.py), so the percentile interval built
    from them is the spec's interval to the last bit (a test holds the two together).
    """
    _, resampled = single_metric_resamples(data, len(paired.ids), n_resamples, seed, chunk_bytes)
    return resampled


#: Paired cases up to which a verdict decided by another procedure also shows the spec's
#: percentile bootstrap interval in its details: 10,000 resamples of 10^4 continuous cases
#: cost about 0.45 s CPU per check (benchmarks/bench_gate.py: 4.5 → 6.3 s CPU for its 10
#: checks at 10^4 cases); above it the line says how to get it.
BOOTSTRAP_SHOWN_UP_TO: Final = 10_000
#: Why a paired bootstrap does not decide (measured, docs/calibration.md, 2,000 trials a
#: cell; tests/report/test_quoted_calibration.py reads the figures off it): one line in
#: each verdict's details, beside the bootstrap's interval.
BOOTSTRAP_NOT_DECIDING: Final = (
    "not deciding: at n = 30 the percentile bootstrap fails falsely up to 7.3% one-sided "
    "(skewed differences) and the studentized one up to 6.5% (tied, heavy-tailed "
    "differences) against 2.5%; the default's procedure holds 3.0% (docs/calibration.md)"
)


#: Measured one-sided false fails of latency_p95's percentile bootstrap where p95 is the
#: maximum (docs/calibration.md, "Small-n aggregates"): 7-11% at n = 10-19.
MAXIMUM_FIGURES: Final = "7-11% one-sided against 2.5% at n = 10-19"


def refuse_unbounded(aggregate: object, metric: str) -> None:
    """Raise when a percentile aggregate is each run's slowest case: no resampling bounds it.

    The bootstrap of a sample maximum never contains values above the observed one,
    so its interval is too narrow however many resamples are drawn (the measured
    figures are in :data:`MAXIMUM_FIGURES`); the gate refuses rather than fails
    falsely.  From the first n where one case lies above the percentile the
    bootstrap measured 3.5-4.2% at n = 20, 2.9-3.1% at n = 30 and below 2.5% from 50.
    """
    if isinstance(aggregate, NearestRankAggregate) and aggregate.is_maximum:
        raise InputError(
            f"{metric!r} over {aggregate.n} paired cases is each run's slowest case (the "
            f"nearest-rank p{aggregate.p:g} of {aggregate.n}); a bootstrap cannot bound a "
            f"maximum and fails falsely {MAXIMUM_FIGURES}: compare at least "
            f"{aggregate.cases_needed} cases, or gate latency_mean or a lower percentile"
        )


def evaluator_for(
    a: RunLike,
    b: RunLike,
    metric: str,
    *,
    method: object = DEFAULT_GATE_METHOD,
    n_resamples: int = 10_000,
    seed: int = 42,
    refuse_maximum: bool = True,
) -> tuple[Evaluator, PairedData]:
    """The procedure ``method`` runs for ``metric`` of ``a`` against ``b``, ready to decide.

    One owner for the gate and ``evalkit compare``: both show what this decides.
    ``refuse_maximum``: raise (:func:`refuse_unbounded`) rather than decide a
    percentile aggregate that is each run's maximum (the gate; ``compare``, which
    only describes, passes False and keeps the ``aggregate_small_n`` warning).
    """
    paired, data = paired_data(a, b, metric)
    if refuse_maximum and paired.diffs is None:
        refuse_unbounded(data.aggregate, metric)
    procedure = choose_procedure(check_gate_method(method), paired.diffs)
    if procedure == "bootstrap":
        resampled = spec_resamples(paired, data, n_resamples, seed)
        return Evaluator(procedure, paired.estimate, resampled=resampled), paired
    if procedure == "permutation":
        if paired.diffs is None:
            raise InputError(
                f"method 'permutation' needs per-case values and {metric!r} is a whole-run "
                "aggregate: use method 'bootstrap'"
            )
        flips = SignFlips.draw(len(paired.ids), n_resamples, substream(seed, PURPOSE_PERMUTATION))
        return Evaluator(procedure, paired.estimate, diffs=paired.diffs, flips=flips), paired
    return Evaluator(procedure, paired.estimate, diffs=paired.diffs), paired
