"""One paired comparison of several metrics: resample once, test, correct, report."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from evalkit._util.arrays import FloatArray
from evalkit.errors import InputError, MetricError
from evalkit.stats.aggregates import ResampledAggregate
from evalkit.stats.bootstrap import bootstrap_draws, marginal_draws
from evalkit.stats.correction import (
    StepDownMaxT,
    check_correction,
    familywise_false_alarm,
    holm,
)
from evalkit.stats.diagnostics import warnings_for
from evalkit.stats.fixedpoint import FixedPoint, to_fixed
from evalkit.stats.names import METHODS, Correction, Method, checked, checked_alpha
from evalkit.stats.outcome import BootstrapResult, Comparison, Kind
from evalkit.stats.permutation import marginal_tails, permutation_null
from evalkit.stats.stream import (
    DEFAULT_CHUNK_BYTES,
    PURPOSE_BOOTSTRAP,
    PURPOSE_PERMUTATION,
    RESAMPLING_STREAM,
    SeedLike,
    check_resamples,
    resolve_seed,
    substream,
)
from evalkit.stats.tails import TailCounter, standardise, t_p_of, tail_p
from evalkit.stats.tdist import normal_quantile
from evalkit.stats.ties import case_signs, count

#: Power used for the minimum detectable effect reported with each result.
MDE_POWER = 0.8


@dataclass(frozen=True)
class Column:
    """One metric to compare: per-case differences, or an aggregate to recompute."""

    name: str
    kind: Kind
    observed: float
    diffs: FloatArray | None = None
    aggregate: ResampledAggregate | None = None
    value_a: float | None = None
    value_b: float | None = None
    sides: tuple[FloatArray, FloatArray] | None = None  # both systems' values, when known
    higher_is_better: bool | None = None  # decides wins and losses; None reads "a higher"


@dataclass(frozen=True)
class Settings:
    n_resamples: int
    seed: int
    alpha: float
    method: Method
    correction: Correction
    chunk_bytes: int


def check_settings(
    n_resamples: object,
    seed: SeedLike,
    alpha: object,
    method: object,
    correction: object,
    chunk_bytes: object,
) -> Settings:
    resamples = check_resamples(n_resamples)
    level = checked_alpha(alpha, " (0.05 gives a 95% interval)")
    chosen = checked(method, METHODS, "method")
    fixed_correction = check_correction(correction)
    if fixed_correction == "maxt" and chosen == "t":
        raise InputError(
            "correction 'maxt' needs a resampled null and method 't' has none: use "
            "correction 'holm' with 't', or method 'bootstrap'/'permutation' with 'maxt'"
        )
    if isinstance(chunk_bytes, bool) or not isinstance(chunk_bytes, int) or chunk_bytes < 1:
        raise InputError(f"chunk_bytes must be a positive integer, got {chunk_bytes!r}")
    return Settings(resamples, resolve_seed(seed), level, chosen, fixed_correction, chunk_bytes)


def case_column(
    name: str,
    kind: Kind,
    a: FloatArray | None,
    b: FloatArray | None,
    diffs: FloatArray,
    higher_is_better: bool | None = None,
) -> Column:
    """A per-case metric; ``observed`` is refined from the exact sum once the lattice is known."""
    n = diffs.shape[0]
    if a is None or b is None:
        observed = math.fsum(diffs.tolist()) / n
        return Column(name, kind, observed, diffs, higher_is_better=higher_is_better)
    # exactly what RunResult.mean gives, so observed == a.mean(m) - b.mean(m)
    value_a, value_b = math.fsum(a.tolist()) / n, math.fsum(b.tolist()) / n
    return Column(
        name, kind, value_a - value_b, diffs, None, value_a, value_b, (a, b), higher_is_better
    )


def aggregate_column(aggregate: ResampledAggregate) -> Column:
    a, b = aggregate.value_a, aggregate.value_b
    return Column(aggregate.name, "aggregate", a - b, None, aggregate, a, b)


@dataclass
class _Tests:
    """Per-column p-values (in the order case columns, then aggregate columns)."""

    p_values: list[float]
    null: list[str]
    adjusted: list[float] | None = None


@dataclass(frozen=True)
class _Resampled:
    """The per-metric bootstrap pass and what every test below reads from it."""

    fixed: FixedPoint
    aggregates: list[ResampledAggregate]
    observed: FloatArray  # per column: case columns from their exact sums, then aggregates
    observed_agg: FloatArray
    paths: tuple[str, ...]
    resampled: FloatArray  # per column: resampled Δs
    low: FloatArray
    high: FloatArray
    se: FloatArray  # of each Δ, in the metric's units
    scale: FloatArray  # of each null statistic, in the units it is counted in
    centred: FloatArray  # |resampled - observed| (per-case metrics: fixed-point sums)

    @property
    def observed_abs(self) -> NDArray[np.float64]:
        return np.concatenate([np.abs(self.fixed.totals), np.abs(self.observed_agg)])


def percentile_interval(
    x: FloatArray, alpha: float, axis: int = 0
) -> tuple[FloatArray, FloatArray]:
    """The spec's percentile interval (numpy "linear", type 7) of resampled Δs along ``axis``."""
    low = np.quantile(x, alpha / 2, axis=axis, method="linear")
    high = -np.quantile(-x, alpha / 2, axis=axis, method="linear")
    return np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)


def observed_on_lattice(col: Column, fixed: FixedPoint, j: int) -> float:
    """A case column's Δ: from its exact lattice sum when the lattice is rational."""
    if fixed.kinds[j] in ("rational", "zero"):
        return fixed.exact_mean(j)
    return col.observed


def lattice_of(case_cols: list[Column], n: int) -> FixedPoint:
    """The case columns' integers on their lattices (stats/fixedpoint.py)."""
    if not case_cols:
        return to_fixed(np.zeros((n, 0)))
    return to_fixed(
        [c.diffs for c in case_cols if c.diffs is not None], [c.sides for c in case_cols]
    )


def single_metric_resamples(
    col: Column, n: int, n_resamples: int, seed: int, chunk_bytes: int
) -> FloatArray:
    """The resampled Δs of ``col`` exactly as :func:`evalkit.paired_bootstrap` draws them."""
    settings = Settings(n_resamples, seed, 0.05, "bootstrap", "none", chunk_bytes)
    case_cols, agg_cols = ([col], []) if col.diffs is not None else ([], [col])
    return _resample(case_cols, agg_cols, n, settings).resampled[:, 0]


def _resample(case_cols: list[Column], agg_cols: list[Column], n: int, s: Settings) -> _Resampled:
    fixed = lattice_of(case_cols, n)
    aggregates = [c.aggregate for c in agg_cols if c.aggregate is not None]
    observed_case = np.array(
        [observed_on_lattice(c, fixed, j) for j, c in enumerate(case_cols)], dtype=np.float64
    )
    observed_agg = np.array([c.observed for c in agg_cols], dtype=np.float64)
    draws = marginal_draws(fixed, aggregates, s.n_resamples, s.seed, s.chunk_bytes)
    offsets = draws.sums - fixed.totals
    scale_case = fixed.denominator * n
    # observed + (resampled sum - observed sum) / (n D): the offset is an exact integer
    resampled = np.hstack([observed_case + offsets / scale_case, draws.aggregates])
    low, high = percentile_interval(resampled, s.alpha)
    many = s.n_resamples > 1
    k = len(case_cols)
    sums_se = offsets.std(axis=0, ddof=1) if many else np.zeros(k)
    agg_se = draws.aggregates.std(axis=0, ddof=1) if many else np.zeros(len(agg_cols))
    flip_invariant = np.sqrt(np.sum(fixed.by_metric * fixed.by_metric, axis=1))
    return _Resampled(
        fixed=fixed,
        aggregates=aggregates,
        observed=np.concatenate([observed_case, observed_agg]),
        observed_agg=observed_agg,
        paths=draws.paths,
        resampled=resampled,
        low=low,
        high=high,
        se=np.concatenate([sums_se / scale_case, agg_se]),
        # max-T scale of a per-case metric: sqrt(Σ K²), which no sign flip changes (the
        # bootstrap SE changes under the flips: an anti-conservative max-T, code-notes.md)
        scale=np.concatenate([flip_invariant, agg_se]),
        centred=np.hstack([np.abs(offsets), np.abs(draws.aggregates - observed_agg)]),
    )


def _joint_centred(r: _Resampled, s: Settings) -> FloatArray:
    """Centred statistics of every column from one joint resampling (for max-T)."""
    draws = bootstrap_draws(
        r.fixed, r.aggregates, s.n_resamples, substream(s.seed, PURPOSE_BOOTSTRAP), s.chunk_bytes
    )
    return np.hstack(
        [np.abs(draws.sums - r.fixed.totals), np.abs(draws.aggregates - r.observed_agg)]
    )


def _bootstrap_p(r: _Resampled, s: Settings) -> _Tests:
    """The spec's centred-null p-value per column (and max-T over joint resamples)."""
    counter = TailCounter(r.observed_abs)
    counter.update(r.centred)
    p_values = [
        tail_p(int(g), int(e), s.n_resamples, exact=False, mid=False)
        for g, e in zip(counter.greater, counter.equal, strict=True)
    ]
    tests = _Tests(p_values, ["bootstrap-centred"] * len(p_values))
    if s.correction == "maxt":
        maxt = StepDownMaxT(standardise(r.observed_abs, r.scale))
        maxt.update(standardise(_joint_centred(r, s), r.scale))
        tests.adjusted = maxt.adjusted(p_values, s.n_resamples, exact=False, mid=False)
    return tests


def compare_columns(
    columns: Sequence[Column], n: int, names: tuple[str, str], settings: Settings
) -> Comparison:
    case_cols = [c for c in columns if c.diffs is not None]
    agg_cols = [c for c in columns if c.aggregate is not None]
    if settings.method == "t" and agg_cols:
        raise MetricError(
            f"aggregate {agg_cols[0].name!r} has no per-case values, which the paired t-test "
            "needs: use method 'bootstrap' or 'permutation' for aggregates"
        )
    resampled = _resample(case_cols, agg_cols, n, settings)
    if settings.method == "bootstrap":
        tests = _bootstrap_p(resampled, settings)
    elif settings.method == "permutation":
        tests = _permutation(resampled, settings)
    else:
        tests = _t_tests(resampled)
    if settings.correction == "holm":
        tests.adjusted = holm(tests.p_values)

    ordered = [*case_cols, *agg_cols]
    results = {
        col.name: _result(col, i, n, names, settings, resampled, tests)
        for i, col in enumerate(ordered)
    }
    return Comparison(
        results=tuple(results[c.name] for c in columns),
        name_a=names[0],
        name_b=names[1],
        n_queries=n,
        n_resamples=settings.n_resamples,
        alpha=settings.alpha,
        method=settings.method,
        correction=settings.correction,
        seed=settings.seed,
        stream=RESAMPLING_STREAM,
        false_alarm_chance=familywise_false_alarm(len(columns), settings.alpha),
    )


def _result(
    col: Column,
    i: int,
    n: int,
    names: tuple[str, str],
    settings: Settings,
    resampled: _Resampled,
    tests: _Tests,
) -> BootstrapResult:
    a = settings.alpha
    ci_low, ci_high = float(resampled.low[i]), float(resampled.high[i])
    observed = float(resampled.observed[i])
    wlt = (
        count(case_signs(resampled.fixed.by_metric[i], col.higher_is_better))
        if col.diffs is not None
        else None
    )
    p = tests.p_values[i]
    # bootstrap: the spec's rule (the interval excludes 0); otherwise the test's own p
    significant = (ci_low > 0 or ci_high < 0) if settings.method == "bootstrap" else p <= a
    adjusted = tests.adjusted[i] if tests.adjusted is not None else None
    diffs = col.diffs
    se = float(resampled.se[i])
    sd = float(np.std(diffs, ddof=1)) if diffs is not None else None
    z = normal_quantile(1 - a / 2) + normal_quantile(MDE_POWER)
    return BootstrapResult(
        metric=col.name,
        name_a=names[0],
        name_b=names[1],
        observed=observed,
        ci_low=ci_low,
        ci_high=ci_high,
        p_value=p,
        significant=significant,
        n_queries=n,
        n_resamples=settings.n_resamples,
        alpha=a,
        method=settings.method,
        kind=col.kind,
        value_a=col.value_a,
        value_b=col.value_b,
        wins=wlt.wins if wlt is not None else None,
        losses=wlt.losses if wlt is not None else None,
        ties=wlt.ties if wlt is not None else None,
        higher_is_better=col.higher_is_better,
        sd_diff=sd,
        se=se,
        mde=z * (sd / math.sqrt(n) if sd is not None else se),
        seed=settings.seed,
        stream=RESAMPLING_STREAM,
        resampling=resampled.paths[i],
        null=tests.null[i],
        warnings=warnings_for(n=n, method=settings.method, kind=col.kind, diffs=diffs),
        correction=settings.correction,
        p_adjusted=adjusted,
        significant_adjusted=None if adjusted is None else adjusted <= a,
    )


def _permutation(r: _Resampled, settings: Settings) -> _Tests:
    tails = marginal_tails(
        r.fixed,
        r.aggregates,
        np.abs(r.observed_agg),
        settings.n_resamples,
        settings.seed,
        settings.chunk_bytes,
    )
    observed_abs = r.observed_abs
    p_values = [
        1.0
        if observed_abs[i] == 0
        else tail_p(
            int(tails.greater[i]),
            int(tails.equal[i]),
            tails.totals[i],
            exact=tails.paths[i] == "exact",
            mid=True,
        )
        for i in range(observed_abs.shape[0])
    ]
    tests = _Tests(p_values, [f"permutation-{path}" for path in tails.paths])
    if settings.correction == "maxt":
        tests.adjusted = _joint_maxt(r, settings, p_values)
    return tests


def _joint_maxt(r: _Resampled, settings: Settings, p_values: list[float]) -> list[float]:
    """Max-T adjusted permutation p-values from one joint sign-flip null."""
    null = permutation_null(
        r.fixed.by_metric,
        r.aggregates,
        settings.n_resamples,
        substream(settings.seed, PURPOSE_PERMUTATION),
        settings.chunk_bytes,
    )
    maxt = StepDownMaxT(standardise(r.observed_abs, r.scale))
    for chunk in null.chunks:
        maxt.update(standardise(np.hstack([np.abs(chunk.sums), np.abs(chunk.aggregates)]), r.scale))
    return maxt.adjusted(p_values, null.total, exact=null.exact, mid=True)


def _t_tests(r: _Resampled) -> _Tests:
    """Paired t per metric, on the exact lattice sums (so a swap only flips the sign)."""
    n, k = r.fixed.n, r.fixed.k
    sd = np.array([float(np.std(row, ddof=1)) for row in r.fixed.by_metric]) / r.fixed.denominator
    p_values = t_p_of(r.observed[:k], sd / math.sqrt(n), n - 1, 0.0).tolist()
    return _Tests(p_values, ["t"] * k)


def compare_metrics(
    diffs: Mapping[str, ArrayLike],
    n_resamples: int = 10_000,
    seed: SeedLike = 42,
    *,
    alpha: float = 0.05,
    method: str = "bootstrap",
    correction: str = "none",
    name_a: str = "a",
    name_b: str = "b",
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
) -> Comparison:
    """The engine on already-paired per-case differences ``{metric: a - b}``.

    Every array must be one-dimensional, finite, and as long as the others
    (position i is the same case in every array).
    """
    if not isinstance(diffs, Mapping) or not diffs:
        raise MetricError("diffs must be a non-empty mapping {metric: per-case differences}")
    settings = check_settings(n_resamples, seed, alpha, method, correction, chunk_bytes)
    columns: list[Column] = []
    n: int | None = None
    for name, values in diffs.items():
        array = np.asarray(values, dtype=np.float64)
        if array.ndim != 1:
            raise InputError(f"differences for {name!r} must be one-dimensional, got {array.shape}")
        if n is None:
            n = array.shape[0]
        elif array.shape[0] != n:
            raise InputError(
                f"differences for {name!r} cover {array.shape[0]} cases, the others {n}: "
                "every metric must be paired over the same cases"
            )
        bad = np.flatnonzero(~np.isfinite(array))
        if bad.size:
            raise MetricError(
                f"differences for {name!r} are non-finite at position(s) "
                f"{', '.join(str(int(i)) for i in bad[:5])}: drop or fix those cases"
            )
        columns.append(case_column(str(name), "case", None, None, array))
    assert n is not None
    if n < 2:
        raise InputError(
            f"need at least 2 paired cases to compare, got {n}: a single case cannot "
            "separate a change from noise"
        )
    return compare_columns(columns, n, (name_a, name_b), settings)
