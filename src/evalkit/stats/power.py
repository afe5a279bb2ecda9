"""Power analysis: could this eval have seen a change of a given size?"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import ArrayLike, NDArray

from evalkit._util.arrays import FloatArray
from evalkit.errors import InputError, MetricError
from evalkit.stats.bootstrap import bootstrap_draws
from evalkit.stats.fixedpoint import to_fixed
from evalkit.stats.names import checked_alpha
from evalkit.stats.pairing import CaseValues, Paired, RunLike, metric_data, pair_runs
from evalkit.stats.stream import (
    DEFAULT_CHUNK_BYTES,
    PURPOSE_POWER,
    RESAMPLING_STREAM,
    SeedLike,
    check_resamples,
    resolve_seed,
    substream,
)
from evalkit.stats.tails import t_p_of
from evalkit.stats.tdist import normal_cdf, normal_quantile, t_cdf, t_quantile

SIMULATION_METHODS: Final = ("auto", "bootstrap", "t")
_EFFECT_MULTIPLES: Final = (0.25, 0.5, 1.0, 1.5, 2.0)
_SINGLE_RUN_SOURCE: Final = (
    "single run: σ of the metric itself, standing in for σ_d (assumes the two systems' "
    "per-case scores correlate at ρ = 0.5, since σ_d² = 2σ²(1 - ρ)); pass a baseline "
    "for the real σ_d"
)


@dataclass(frozen=True)
class PowerRow:
    """Detection chance for one true effect (same units as the metric)."""

    effect: float
    analytic: float
    simulated: float | None  # None when n_sim == 0


@dataclass(frozen=True)
class PowerTable:
    """A power analysis: the σ_d it used, its source, and one row per effect."""

    n: int
    sd_diff: float
    sd_source: str
    alpha: float
    target_power: float
    mde: float
    method: str
    n_sim: int
    n_resamples: int
    seed: int
    stream: str
    rows: tuple[PowerRow, ...]
    metric: str | None = None


def _target(power: float) -> float:
    if isinstance(power, bool) or not isinstance(power, int | float) or not 0 < power < 1:
        raise InputError(f"power must lie strictly between 0 and 1 (e.g. 0.8), got {power!r}")
    return float(power)


def _cases(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or int(n) < 2:
        raise InputError(f"n must be an integer number of cases >= 2, got {n!r}")
    return int(n)


def _diffs(values: ArrayLike, what: str = "differences") -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.shape[0] < 2:
        raise InputError(f"{what} must be a one-dimensional array of at least 2 values")
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise InputError(f"{what} are non-finite at position(s) {', '.join(map(str, bad[:5]))}")
    return array


def _sd(sd_or_diffs: float | ArrayLike) -> float:
    if isinstance(sd_or_diffs, int | float) and not isinstance(sd_or_diffs, bool):
        sd = float(sd_or_diffs)
        if not math.isfinite(sd) or sd < 0:
            raise InputError(f"σ_d must be a finite non-negative number, got {sd_or_diffs!r}")
        return sd
    return float(np.std(_diffs(sd_or_diffs), ddof=1))


def _t_sum(alpha: float, power: float, n: int) -> float:
    # Student quantiles: the deciding tests estimate σ_d (docs/calibration.md).
    return t_quantile(1 - alpha / 2, n - 1) + t_quantile(power, n - 1)


def mde(sd_or_diffs: float | ArrayLike, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """Smallest true effect detected with probability ``power`` at ``n`` cases.

    ``(t(1 − α/2, n − 1) + t(power, n − 1))·σ_d/√n`` -- about 2.9·σ_d/√n at n = 30
    and 2.8·σ_d/√n for large n at the defaults.
    """
    size = _cases(n)
    return _t_sum(checked_alpha(alpha), _target(power), size) * _sd(sd_or_diffs) / math.sqrt(size)


#: Null worlds simulated for a verdict's detectable regression.
DETECTABLE_SIMULATIONS: Final = 1000
#: Memory budget (float64 elements) of one simulated chunk: 2 MB stays in cache (16 MB was
#: 1.4-3x slower); the draws, and so the result, do not depend on it.
_CHUNK_ELEMENTS: Final = 2**18
#: Cases per distinct difference from which the simulation counts levels instead.
_FEW_LEVELS: Final = 16


@dataclass(frozen=True)
class Levels:
    """An eval's centred differences as distinct values and each case's code among them."""

    centred: FloatArray
    values: FloatArray  # the distinct values, ascending
    codes: NDArray[np.int64]  # each case's index into ``values``

    @classmethod
    def of(cls, centred: FloatArray) -> Levels:
        values, codes = np.unique(centred, return_inverse=True)
        return cls(centred, values, codes.astype(np.int64, copy=False))

    def world_mean_sd(
        self, draws: NDArray[np.int64], *, counted: bool
    ) -> tuple[FloatArray, FloatArray]:
        """Mean and sd (ddof 1) of each resampled world (a row of case positions)."""
        rows, n = draws.shape
        if counted:
            k = self.values.shape[0]
            keyed = self.codes[draws] + (np.arange(rows, dtype=np.int64) * k)[:, None]
            counts = np.bincount(keyed.ravel(), minlength=rows * k).reshape(rows, k)
            mean = counts @ self.values / n
            squares = counts @ (self.values * self.values)
        else:
            world = self.centred[draws]
            mean = world.mean(axis=1)
            squares = np.einsum("ij,ij->i", world, world)
        sd = np.sqrt(np.maximum(squares - n * mean * mean, 0.0) / (n - 1))
        return mean, sd


def detectable_regression(
    diffs: FloatArray,
    alpha: float,
    *,
    higher_is_better: bool,
    method: str = "auto",
    power: float = 0.8,
    n_sim: int = DETECTABLE_SIMULATIONS,
    seed: int = 0,
) -> float:
    """The regression a verdict's own procedure catches with probability ``power``."""
    d = _diffs(diffs)
    n = d.shape[0]
    a, goal = checked_alpha(alpha), _target(power)
    if method not in ("auto", "t") or float(np.std(d)) == 0.0:
        return mde(d, n, a, goal)
    gen = substream(resolve_seed(seed), PURPOSE_POWER)
    # Resampling a sample spreads its mean by the plug-in sd (divisor n), √((n − 1)/n)
    # of s; rescaled, the resampled worlds spread as the eval's own estimate does.
    centred = (d - d.mean()) * math.sqrt(n / (n - 1))
    levels = Levels.of(centred)
    # A metric of few levels (recall@k, pass/fail): each world summarised from its counts.
    counted = levels.values.shape[0] * _FEW_LEVELS <= n
    reach = t_quantile(1 - a / 2, n - 1) / math.sqrt(n)
    bad_ends: list[FloatArray] = []
    rows = max(1, min(n_sim, _CHUNK_ELEMENTS // n))
    for start in range(0, n_sim, rows):
        count = min(rows, n_sim - start)
        draws = gen.integers(0, n, size=(count, n), dtype=np.int64)
        mean, sd = levels.world_mean_sd(draws, counted=counted)
        # the end that must clear 0 for a regression to be caught, as a distance
        bad_ends.append(mean + reach * sd if higher_is_better else reach * sd - mean)
    level = _level_for_estimated_spread(d, a, goal)
    return float(np.quantile(np.concatenate(bad_ends), level))


def _level_for_estimated_spread(d: FloatArray, alpha: float, goal: float) -> float:
    """The quantile level whose effect is caught ``goal`` of the time *on average*."""
    n = d.shape[0]
    centred = d - d.mean()
    m2 = float(np.mean(centred**2))
    excess = float(np.mean(centred**4)) / (m2 * m2) - 3.0 if m2 > 0 else 0.0
    if n > 3:  # G2, the kurtosis estimator unbiased under normality
        excess = ((n + 1) * excess + 6.0) * (n - 1) / ((n - 2) * (n - 3))
    v = max(excess + 3.0 - (n - 3) / (n - 1), 0.0) / (4.0 * n)
    b = -v / 2.0
    q = t_quantile(1 - alpha / 2, n - 1)
    target = normal_quantile(goal)

    def realised(z: float) -> float:
        return float((z + (q + z) * b) / math.sqrt(1.0 + (q + z) ** 2 * v))

    low, high = target, target + 6.0
    if realised(high) < target:  # too uncertain to promise anything: the top quantile
        return 0.999
    for _ in range(60):
        mid = 0.5 * (low + high)
        low, high = (mid, high) if realised(mid) < target else (low, mid)
    return min(0.999, normal_cdf(high))


def n_for_effect(
    sd_or_diffs: float | ArrayLike, effect: float, alpha: float = 0.05, power: float = 0.8
) -> int:
    """Cases needed to detect ``effect`` with probability ``power`` (the smallest such n)."""
    if not isinstance(effect, int | float) or not math.isfinite(effect) or effect == 0:
        raise InputError(f"effect must be a non-zero finite number, got {effect!r}")
    a, goal, sd = checked_alpha(alpha), _target(power), _sd(sd_or_diffs)
    ratio = sd / abs(effect)
    # the normal-quantile answer is a lower bound; step up until the t-based MDE fits
    n = max(2, math.ceil(((normal_quantile(1 - a / 2) + normal_quantile(goal)) * ratio) ** 2))
    while _t_sum(a, goal, n) * ratio / math.sqrt(n) > 1.0:
        n += 1
    return n


def analytic_power(sd: float, n: int, effect: float, alpha: float = 0.05) -> float:
    """Chance of a significant result on ``effect``'s side (α/2 at effect 0).

    ``F(|δ|·√n/σ_d − t(1 − α/2, n − 1))`` with F Student's t CDF (n − 1 df), the
    inverse of :func:`mde`; at δ = 0 the one-sided false-fail rate α/2.
    """
    n = _cases(n)
    a = checked_alpha(alpha)
    if effect == 0:
        return a / 2
    if sd == 0:
        return 1.0
    return t_cdf(abs(effect) * math.sqrt(n) / sd - t_quantile(1 - a / 2, n - 1), n - 1)


def default_effects(sd: float, n: int, alpha: float = 0.05) -> tuple[float, ...]:
    """Effects around the 80%-power MDE (¼, ½, 1, 1½, 2 ×), rounded to 2 significant digits."""
    base = mde(sd, n, alpha)
    if base == 0:
        return (0.0,)
    out: list[float] = []
    for multiple in _EFFECT_MULTIPLES:
        value = base * multiple
        digits = 1 - math.floor(math.log10(abs(value)))
        rounded = round(value, digits)
        if rounded not in out:
            out.append(rounded)
    return tuple(out)


def _check_effects(effects: Sequence[float]) -> list[float]:
    out = [float(e) for e in effects]
    if not out or not all(math.isfinite(e) for e in out):
        raise InputError(f"effects must be a non-empty list of finite numbers, got {effects!r}")
    return out


def _simulated_bootstrap(
    sims: FloatArray,
    effects: list[float],
    alpha: float,
    n_resamples: int,
    gen: np.random.Generator,
) -> list[float]:
    n, n_sim = sims.shape
    hits = np.zeros(len(effects), dtype=np.int64)
    per_chunk = max(1, DEFAULT_CHUNK_BYTES // (8 * n * 4))
    for start in range(0, n_sim, per_chunk):
        block = sims[:, start : start + per_chunk]
        fixed = to_fixed(block)
        draws = bootstrap_draws(fixed, [], n_resamples, gen, DEFAULT_CHUNK_BYTES)
        low, high = np.quantile(fixed.means(draws.sums), [alpha / 2, 1 - alpha / 2], axis=0)
        for i, effect in enumerate(effects):
            if effect > 0:
                hits[i] += np.count_nonzero(low + effect > 0)
            elif effect < 0:
                hits[i] += np.count_nonzero(high + effect < 0)
            else:
                hits[i] += np.count_nonzero((low > 0) | (high < 0))
    return [float(h) / n_sim for h in hits]


def _simulated_t(sims: FloatArray, effects: list[float], alpha: float) -> list[float]:
    n, n_sim = sims.shape
    means = sims.mean(axis=0)
    # exactly one repeated value: its float sd is rounding noise, not 0
    sds = np.where(np.ptp(sims, axis=0) > 0, sims.std(axis=0, ddof=1), 0.0)
    # A world of one repeated value carries no evidence of a shift (issue #23): never a hit.
    varies = sds > 0
    rates = []
    for effect in effects:
        shifted = means + effect
        p = t_p_of(shifted, sds / math.sqrt(n), n - 1, 0.0)
        # on the effect's side (at effect 0: below, one side, as analytic_power)
        side = shifted > 0 if effect > 0 else shifted < 0
        rates.append(int(np.count_nonzero(varies & (p <= alpha) & side)) / n_sim)
    return rates


def power(
    diffs: ArrayLike,
    effects: Sequence[float],
    *,
    n: int | None = None,
    alpha: float = 0.05,
    target_power: float = 0.8,
    n_sim: int = 1000,
    n_resamples: int = 1000,
    seed: SeedLike = 42,
    method: str = "auto",
    metric: str | None = None,
    sd_source: str = "paired differences",
) -> PowerTable:
    """Detection rate of each true effect for an eval of ``n`` cases like this one.

    ``diffs`` are observed per-case differences (their shape drives the
    simulation, their SD the analytic figure); ``n`` defaults to their count.
    ``n_sim=0`` skips the simulation.  ``method`` is the test simulated: ``"auto"``
    (default: the gate's default procedure, stats.procedures), ``"bootstrap"`` (the
    spec's CI rule, with ``n_resamples`` per eval) or ``"t"``.
    """
    observed = _diffs(diffs)
    size = _cases(observed.shape[0] if n is None else n)
    a = checked_alpha(alpha)
    goal = _target(target_power)
    wanted = _check_effects(effects)
    if method not in SIMULATION_METHODS:
        raise InputError(
            f"power simulation supports method {', '.join(SIMULATION_METHODS[:-1])} or "
            f"{SIMULATION_METHODS[-1]}, got "
            f"{method!r} (a permutation test's power is close to the t-test's)"
        )
    if isinstance(n_sim, bool) or not isinstance(n_sim, int) or n_sim < 0:
        raise InputError(f"n_sim must be a non-negative integer, got {n_sim!r}")
    resamples = check_resamples(n_resamples)
    seed_value = resolve_seed(seed)
    sd = float(np.std(observed, ddof=1))
    simulated: list[float] | None = None
    if n_sim:
        gen = substream(seed_value, PURPOSE_POWER)
        centred = observed - observed.mean()
        sims = centred[gen.integers(0, observed.shape[0], size=(size, n_sim), dtype=np.int64)]
        if method == "bootstrap":
            simulated = _simulated_bootstrap(sims, wanted, a, resamples, gen)
        else:  # "auto" is paired t (docs/design/statistics.md, "The default verdict")
            simulated = _simulated_t(sims, wanted, a)
    rows = tuple(
        PowerRow(
            effect=effect,
            analytic=analytic_power(sd, size, effect, a),
            simulated=None if simulated is None else simulated[i],
        )
        for i, effect in enumerate(wanted)
    )
    return PowerTable(
        n=size,
        sd_diff=sd,
        sd_source=sd_source,
        alpha=a,
        target_power=goal,
        mde=mde(sd, size, a, goal),
        method=method,
        n_sim=n_sim,
        n_resamples=resamples,
        seed=seed_value,
        stream=RESAMPLING_STREAM,
        rows=rows,
        metric=metric,
    )


def case_values(a: RunLike, b: RunLike, metric: str) -> tuple[Paired, CaseValues]:
    """``metric``'s per-case values of ``a`` and ``b`` paired by case id (refusing an
    aggregate); ``b`` may be ``a`` itself, which reuses every fail-loud rule for one run."""
    paired = pair_runs(a, b)
    data = metric_data(paired, metric)
    if not isinstance(data, CaseValues):
        raise MetricError(
            f"{metric!r} is a whole-run aggregate: power analysis needs per-case values"
        )
    return paired, data


def power_table(
    a: RunLike,
    b: RunLike | None = None,
    *,
    metric: str,
    effects: Sequence[float] | None = None,
    n: int | None = None,
    alpha: float = 0.05,
    n_sim: int = 1000,
    n_resamples: int = 1000,
    seed: SeedLike = 42,
    method: str = "auto",
) -> PowerTable:
    """The table ``evalkit power A [B] --metric M`` prints.

    With a baseline ``b`` the differences are ``a - b`` paired by case id; with
    one run, the metric's own spread stands in for σ_d (the table says so).
    ``effects`` default to multiples of the minimum detectable effect.
    """
    if b is not None:
        data = case_values(a, b, metric)[1]
        diffs = data.a - data.b
        source = "paired differences"
    else:
        values = case_values(a, a, metric)[1].a
        diffs = values - values.mean()
        source = _SINGLE_RUN_SOURCE
    size = diffs.shape[0] if n is None else n
    chosen = (
        list(effects)
        if effects is not None
        else list(default_effects(float(np.std(diffs, ddof=1)), size, alpha))
    )
    return power(
        diffs,
        chosen,
        n=size,
        alpha=alpha,
        n_sim=n_sim,
        n_resamples=n_resamples,
        seed=seed,
        method=method,
        metric=metric,
        sd_source=source,
    )
