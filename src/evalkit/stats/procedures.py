"""Decision procedures: each gives a verdict's interval and its dual p from one computation,
so the decision, "p ≤ α" and "the interval excludes the tested value" never disagree."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Final, Literal

import numpy as np

from evalkit._util.arrays import FloatArray
from evalkit.errors import InputError
from evalkit.stats.aggregates import NearestRankAggregate
from evalkit.stats.compare import (
    aggregate_column,
    case_column,
    lattice_of,
    observed_on_lattice,
    percentile_interval,
)
from evalkit.stats.names import GateMethod
from evalkit.stats.pairing import CaseValues, RunLike, metric_data, pair_runs
from evalkit.stats.sign_flips import SignFlipNull, SignFlips
from evalkit.stats.tails import t_p_of
from evalkit.stats.tdist import t_quantile

Procedure = Literal[
    "t",
    "bootstrap",
    "permutation",
    # with declared clusters (evalkit.stats.clustered_decide)
    "cluster-t",
    "cluster-bootstrap",
    "cluster-permutation",
]
DEFAULT_GATE_METHOD: Final[GateMethod] = "auto"
#: What ``auto`` (the default) runs on per-case differences: plain paired t
#: (docs/design/statistics.md, "The default verdict").
DEFAULT_PROCEDURE: Final[Procedure] = "t"

#: Procedures that draw resamples (their verdicts record ``n_resamples``).
RESAMPLING: Final = ("bootstrap", "permutation", "cluster-bootstrap", "cluster-permutation")


PROCEDURE_NAMES: Final[dict[str, str]] = {
    "t": "paired t",
    "bootstrap": "percentile bootstrap",
    "permutation": "sign-flip permutation test",
    "cluster-t": "cluster-robust t (CR2, Bell-McCaffrey df)",
    "cluster-bootstrap": "cluster bootstrap (percentile)",
    "cluster-permutation": "cluster sign-flip permutation test",
}


def _rows(data: FloatArray) -> FloatArray:
    array = np.asarray(data, dtype=np.float64)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.shape[1] < 2:
        raise InputError("a procedure needs at least 2 paired cases per data set")
    return array


# ----------------------------------------------------------------------------- paired t


def _mean_sd(data: FloatArray) -> tuple[int, FloatArray, FloatArray]:
    """(n, mean, sd) of every row; exactly one repeated value has sd 0 (its float sd is
    rounding noise, not spread)."""
    d = _rows(data)
    return d.shape[1], d.mean(axis=1), np.where(np.ptp(d, axis=1) > 0, d.std(axis=1, ddof=1), 0.0)


def t_bounds(data: FloatArray, alpha: float) -> tuple[FloatArray, FloatArray]:
    """Ends of the 1 − α paired t interval for every row (a point where a row does not vary)."""
    n, mean, sd = _mean_sd(data)
    half = t_quantile(1.0 - alpha / 2.0, n - 1) * sd / math.sqrt(n)
    return mean - half, mean + half


def t_p(data: FloatArray, null: float) -> FloatArray:
    """Two-sided p of H0: mean difference = ``null``, per row (the dual of :func:`t_bounds`)."""
    n, mean, sd = _mean_sd(data)
    return t_p_of(mean, sd / math.sqrt(n), n - 1, null)


# ----------------------------------------------------------------------------- bootstrap


def _crossing(r: FloatArray, null: float, count: int) -> float:
    """Position h where the interpolation line through the sorted r reaches ``null``."""
    below, above = float(r[count - 1]), float(r[count])
    return (count - 1) + (null - below) / (above - below)


def percentile_p(resampled: FloatArray, null: float) -> float:
    """Smallest α at which the type-7 percentile interval of ``resampled`` excludes ``null``
    (read off where the interpolation line crosses ``null``: docs/design/code-notes.md)."""
    r = np.sort(resampled)
    b = r.shape[0]
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
    def excludes_null(self) -> bool:
        return self.low > self.null or self.high < self.null


def agree(low: float, high: float, null: float, p: float, alpha: float) -> float:
    """``p`` made to agree with the interval where float rounding (|p − α| of order 1e-15)
    puts it on the line: the interval (the DESIGN §5 rule) wins."""
    excluded = low > null or high < null
    if excluded and p > alpha:
        return alpha
    if not excluded and p <= alpha:
        return float(np.nextafter(alpha, 2.0))
    return p


class Evaluator:
    """The state one procedure needs to give intervals at any level for one data set (a
    correction asks it again at the corrected level, so interval and adjusted p stay duals)."""

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
        self._diffs = _rows(diffs) if diffs is not None else None
        self._resampled = resampled[None, :] if resampled is not None else None
        self._null = (
            SignFlipNull.of(self._diffs, flips) if self._diffs is not None and flips else None
        )

    def raw(self, alpha: float, null: float) -> tuple[float, float, float]:
        """(low, high, p) before :func:`agree` -- exposed for the consistency tests."""
        if self._resampled is not None:
            low, high = percentile_interval(self._resampled, alpha, axis=1)
            return float(low[0]), float(high[0]), percentile_p(self._resampled[0], null)
        if self._null is not None:
            low, high = self._null.bounds(alpha, null)
            return float(low[0]), float(high[0]), float(self._null.p(np.array([null]))[0])
        return self._t_raw(alpha, null)

    def _t_raw(self, alpha: float, null: float) -> tuple[float, float, float]:
        assert self._diffs is not None
        low, high = t_bounds(self._diffs, alpha)
        return float(low[0]), float(high[0]), float(t_p(self._diffs, null)[0])

    def decide(self, alpha: float, null: float = 0.0) -> Decision:
        low, high, p = self.raw(alpha, null)
        p = agree(low, high, null, p, alpha)
        return Decision(self.procedure, self.estimate, low, high, 1.0 - alpha, null, p)


def refuse_aggregate(asked: GateMethod, metric: str, fix: str = "") -> None:
    """Raise for ``t`` or ``permutation`` asked of a whole-run aggregate (no per-case values:
    only resampling compares it); ``fix`` adds to the advice."""
    if asked in ("t", "permutation"):
        raise InputError(
            f"method {asked!r} needs per-case values and {metric!r} is a whole-run "
            f"aggregate: use method 'bootstrap'{fix}"
        )


def corrected_alpha(alpha: float, p_raw: float, p_adjusted: float) -> float:
    """The level at which the raw test decides exactly as the corrected one does: the raw p
    is ≤ α·p/p_adj exactly when p_adj ≤ α (Holm's step j: α/(k − j + 1))."""
    if p_adjusted <= 0.0 or p_raw <= 0.0:
        return alpha
    return min(alpha, alpha * p_raw / p_adjusted)


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


#: Paired cases up to which a verdict decided by another procedure also shows the spec's
#: percentile bootstrap interval in its details (its cost: docs/design/code-notes.md).
BOOTSTRAP_SHOWN_UP_TO: Final = 10_000
#: Why a paired bootstrap does not decide, beside its interval (docs/calibration.md).
BOOTSTRAP_NOT_DECIDING: Final = (
    "not deciding: at n = 30 the percentile bootstrap fails falsely up to 5.5% one-sided "
    "and the studentized one up to 6.5% (tie-heavy differences) against 2.5%; paired t, "
    "the default, holds 2.6% (docs/calibration.md)"
)


#: Measured one-sided false fails of latency_p95's percentile bootstrap where p95 is the
#: maximum (docs/calibration.md, "Small-n aggregates"): 7-11% at n = 10-19.
MAXIMUM_FIGURES: Final = "7-11% one-sided against 2.5% at n = 10-19"


def refuse_unbounded(aggregate: object, metric: str) -> None:
    """Raise when a percentile aggregate is each run's slowest case: the bootstrap of a
    sample maximum never exceeds the observed one, so no resampling bounds it."""
    if isinstance(aggregate, NearestRankAggregate) and aggregate.is_maximum:
        raise InputError(
            f"{metric!r} over {aggregate.n} paired cases is each run's slowest case (the "
            f"nearest-rank p{aggregate.p:g} of {aggregate.n}); a bootstrap cannot bound a "
            f"maximum and fails falsely {MAXIMUM_FIGURES}: compare at least "
            f"{aggregate.cases_needed} cases, or gate latency_mean or a lower percentile"
        )
