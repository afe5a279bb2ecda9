"""One paired comparison of several metrics: resample once, test, correct, report.

Order of work: round per-case differences onto their exact grid; one bootstrap
pass for every metric (CI, standard error, the bootstrap p); if asked, one
permutation pass for every metric or per-metric t-tests; then the correction;
then the per-metric results with their warnings.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from evalkit.errors import InputError, MetricError
from evalkit.stats.aggregates import ResampledAggregate
from evalkit.stats.bootstrap import bootstrap_draws
from evalkit.stats.correction import (
    Correction,
    StepDownMaxT,
    check_correction,
    familywise_false_alarm,
    holm,
)
from evalkit.stats.diagnostics import warnings_for
from evalkit.stats.fixedpoint import FixedPoint, to_fixed
from evalkit.stats.outcome import METHODS, BootstrapResult, Comparison, Kind, Method
from evalkit.stats.permutation import exact_tail_counts, permutation_null
from evalkit.stats.stream import (
    PURPOSE_BOOTSTRAP,
    PURPOSE_PERMUTATION,
    RESAMPLING_STREAM,
    SeedLike,
    check_resamples,
    resolve_seed,
    substream,
)
from evalkit.stats.tails import TailCounter, standardise, tail_p
from evalkit.stats.tdist import normal_quantile, t_two_sided_p

FloatArray = NDArray[np.float64]

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
    if (
        isinstance(alpha, bool)
        or not isinstance(alpha, int | float)
        or not 0.0 < float(alpha) < 1.0
    ):
        raise InputError(
            f"alpha must lie strictly between 0 and 1 (0.05 gives a 95% interval), got {alpha!r}"
        )
    chosen = next((m for m in METHODS if m == method), None)
    if chosen is None:
        raise InputError(f"unknown method {method!r}: use one of {', '.join(METHODS)}")
    fixed_correction = check_correction(correction)
    if fixed_correction == "maxt" and chosen == "t":
        raise InputError(
            "correction 'maxt' needs a resampled null and method 't' has none: use "
            "correction 'holm' with 't', or method 'bootstrap'/'permutation' with 'maxt'"
        )
    if isinstance(chunk_bytes, bool) or not isinstance(chunk_bytes, int) or chunk_bytes < 1:
        raise InputError(f"chunk_bytes must be a positive integer, got {chunk_bytes!r}")
    return Settings(
        resamples, resolve_seed(seed), float(alpha), chosen, fixed_correction, chunk_bytes
    )


def case_column(
    name: str, kind: Kind, a: FloatArray | None, b: FloatArray | None, diffs: FloatArray
) -> Column:
    n = diffs.shape[0]
    if a is not None and b is not None:
        # exactly what RunResult.mean gives, so observed == a.mean(m) - b.mean(m)
        value_a = math.fsum(a.tolist()) / n
        value_b = math.fsum(b.tolist()) / n
        return Column(name, kind, value_a - value_b, diffs, None, value_a, value_b)
    # bare differences: numpy's pairwise sum (relative error ~1e-16 * log2 n) is plenty
    return Column(name, kind, float(np.sum(diffs)) / n, diffs)


def aggregate_column(aggregate: ResampledAggregate) -> Column:
    return Column(
        aggregate.name,
        "aggregate",
        aggregate.value_a - aggregate.value_b,
        None,
        aggregate,
        aggregate.value_a,
        aggregate.value_b,
    )


@dataclass
class _Tests:
    """Per-column p-values (in the order case columns, then aggregate columns)."""

    p_values: list[float]
    null: str
    adjusted: list[float] | None = None


@dataclass(frozen=True)
class _Resampled:
    """The shared bootstrap pass and what every test below reads from it."""

    fixed: FixedPoint
    aggregates: list[ResampledAggregate]
    observed_agg: FloatArray
    path: str
    low: FloatArray
    high: FloatArray
    se: FloatArray  # of each Δ, in the metric's units
    scale: FloatArray  # of each null statistic, in the units it is counted in
    centred_case: FloatArray  # |resampled sum - observed sum|, fixed-point integers
    centred_agg: FloatArray

    @property
    def observed_abs(self) -> NDArray[np.float64]:
        return np.concatenate([np.abs(self.fixed.totals), np.abs(self.observed_agg)])


def _resample(case_cols: list[Column], agg_cols: list[Column], n: int, s: Settings) -> _Resampled:
    fixed = (
        to_fixed([c.diffs for c in case_cols if c.diffs is not None])
        if case_cols
        else to_fixed(np.zeros((n, 0)))
    )
    aggregates = [c.aggregate for c in agg_cols if c.aggregate is not None]
    observed_agg = np.array([c.observed for c in agg_cols], dtype=np.float64)
    draws = bootstrap_draws(
        fixed, aggregates, s.n_resamples, substream(s.seed, PURPOSE_BOOTSTRAP), s.chunk_bytes
    )
    resampled = np.hstack([fixed.means(draws.sums), draws.aggregates])
    low, high = np.quantile(resampled, [s.alpha / 2, 1 - s.alpha / 2], axis=0, method="linear")
    columns = len(case_cols) + len(agg_cols)
    many = s.n_resamples > 1
    se = resampled.std(axis=0, ddof=1) if many else np.zeros(columns)
    flip_invariant = np.sqrt(np.sum(fixed.by_metric * fixed.by_metric, axis=1))
    return _Resampled(
        fixed=fixed,
        aggregates=aggregates,
        observed_agg=observed_agg,
        path=draws.path,
        low=low,
        high=high,
        se=se,
        # max-T scale of a per-case metric: sqrt(Σ d_i²), which no sign flip changes.
        # The bootstrap SE it replaces changes under the flips (it depends on the mean),
        # so the permutation max-T was anti-conservative: 8.7% / 9.4% family-wise at
        # k = 5 / 10 independent metrics, n = 30 (docs/calibration.md).
        scale=np.concatenate([flip_invariant, se[len(case_cols) :]]),
        centred_case=np.abs(draws.sums - fixed.totals),
        centred_agg=np.abs(draws.aggregates - observed_agg),
    )


def _bootstrap_p(r: _Resampled, s: Settings) -> _Tests:
    """The spec's centred-null p-value per column (and max-T over the same resamples)."""
    case = TailCounter(np.abs(r.fixed.totals))
    case.update(r.centred_case)
    agg = TailCounter(np.abs(r.observed_agg))
    agg.update(r.centred_agg)
    greater = np.concatenate([case.greater, agg.greater])
    equal = np.concatenate([case.equal, agg.equal])
    p_values = [
        tail_p(int(g), int(e), s.n_resamples, exact=False, mid=False)
        for g, e in zip(greater, equal, strict=True)
    ]
    tests = _Tests(p_values, "bootstrap-centred")
    if s.correction == "maxt":
        maxt = StepDownMaxT(standardise(r.observed_abs, r.scale))
        maxt.update(standardise(np.hstack([r.centred_case, r.centred_agg]), r.scale))
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
        tests = _t_tests(case_cols)
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
        observed=col.observed,
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
        wins=int(np.count_nonzero(diffs > 0)) if diffs is not None else None,
        losses=int(np.count_nonzero(diffs < 0)) if diffs is not None else None,
        ties=int(np.count_nonzero(diffs == 0)) if diffs is not None else None,
        sd_diff=sd,
        se=se,
        mde=z * (sd / math.sqrt(n) if sd is not None else se),
        seed=settings.seed,
        stream=RESAMPLING_STREAM,
        resampling=resampled.path,
        null=tests.null,
        warnings=warnings_for(n=n, method=settings.method, kind=col.kind, diffs=diffs),
        correction=settings.correction,
        p_adjusted=adjusted,
        significant_adjusted=None if adjusted is None else adjusted <= a,
    )


def _permutation(r: _Resampled, settings: Settings) -> _Tests:
    null = permutation_null(
        r.fixed,
        r.aggregates,
        settings.n_resamples,
        substream(settings.seed, PURPOSE_PERMUTATION),
        settings.chunk_bytes,
    )
    totals_abs = np.abs(r.fixed.totals)
    case_counter = TailCounter(totals_abs)
    agg_counter = TailCounter(np.abs(r.observed_agg))
    observed_abs = r.observed_abs
    maxt = (
        StepDownMaxT(standardise(observed_abs, r.scale)) if settings.correction == "maxt" else None
    )
    if null.exact and not r.aggregates and maxt is None:
        # per-metric counts only: meet in the middle instead of listing 2**n patterns
        case_counter.greater, case_counter.equal = exact_tail_counts(r.fixed.by_metric, totals_abs)
    else:
        for chunk in null.chunks:
            case_abs = np.abs(chunk.sums)
            agg_abs = np.abs(chunk.aggregates)
            case_counter.update(case_abs)
            agg_counter.update(agg_abs)
            if maxt is not None:
                maxt.update(standardise(np.hstack([case_abs, agg_abs]), r.scale))
    greater = np.concatenate([case_counter.greater, agg_counter.greater])
    equal = np.concatenate([case_counter.equal, agg_counter.equal])
    p_values = [
        1.0
        if observed_abs[i] == 0
        else tail_p(int(greater[i]), int(equal[i]), null.total, exact=null.exact, mid=True)
        for i in range(observed_abs.shape[0])
    ]
    tests = _Tests(p_values, f"permutation-{null.path}")
    if maxt is not None:
        tests.adjusted = maxt.adjusted(p_values, null.total, exact=null.exact, mid=True)
    return tests


def _t_tests(case_cols: list[Column]) -> _Tests:
    p_values = []
    for col in case_cols:
        assert col.diffs is not None
        d = col.diffs
        n = d.shape[0]
        mean = float(np.mean(d))
        sd = float(np.std(d, ddof=1))
        if sd == 0.0:
            p_values.append(1.0 if mean == 0.0 else 0.0)
            continue
        p_values.append(t_two_sided_p(mean / (sd / math.sqrt(n)), n - 1))
    return _Tests(p_values, "t")
