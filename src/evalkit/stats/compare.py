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
IntArray = NDArray[np.int64]

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
        value_a = math.fsum(a.tolist()) / n
        value_b = math.fsum(b.tolist()) / n
        return Column(name, kind, value_a - value_b, diffs, None, value_a, value_b)
    return Column(name, kind, math.fsum(diffs.tolist()) / n, diffs)


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


def compare_columns(
    columns: Sequence[Column], n: int, names: tuple[str, str], settings: Settings
) -> Comparison:
    case_cols = [c for c in columns if c.diffs is not None]
    agg_cols = [c for c in columns if c.aggregate is not None]
    ordered = [*case_cols, *agg_cols]
    aggregates = [c.aggregate for c in agg_cols if c.aggregate is not None]
    matrix = (
        np.column_stack([c.diffs for c in case_cols if c.diffs is not None])
        if case_cols
        else np.zeros((n, 0))
    )
    fixed = to_fixed(matrix)
    totals = fixed.totals
    observed_agg = np.array([c.observed for c in agg_cols], dtype=np.float64)

    draws = bootstrap_draws(
        fixed,
        aggregates,
        settings.n_resamples,
        substream(settings.seed, PURPOSE_BOOTSTRAP),
        settings.chunk_bytes,
    )
    resampled = np.hstack([fixed.means(draws.sums), draws.aggregates])
    a = settings.alpha
    low, high = np.quantile(resampled, [a / 2, 1 - a / 2], axis=0, method="linear")
    se = resampled.std(axis=0, ddof=1) if settings.n_resamples > 1 else np.zeros(len(ordered))
    # standard errors in the units each null statistic is counted in
    scale = np.concatenate(
        [
            draws.sums.astype(np.float64).std(axis=0, ddof=1)
            if settings.n_resamples > 1
            else np.zeros(len(case_cols)),
            se[len(case_cols) :],
        ]
    )
    centred_case = np.abs(draws.sums - totals)
    centred_agg = np.abs(draws.aggregates - observed_agg)
    observed_abs = (np.abs(totals), np.abs(observed_agg))

    boot = TailCounter(np.abs(totals))
    boot.update(centred_case)
    boot_agg = TailCounter(np.abs(observed_agg))
    boot_agg.update(centred_agg)
    bootstrap_p = [
        tail_p(int(g), int(e), settings.n_resamples, exact=False, mid=False)
        for g, e in zip(
            np.concatenate([boot.greater, boot_agg.greater]),
            np.concatenate([boot.equal, boot_agg.equal]),
            strict=True,
        )
    ]

    if settings.method == "bootstrap":
        tests = _Tests(bootstrap_p, "bootstrap-centred")
        if settings.correction == "maxt":
            maxt = StepDownMaxT(standardise(np.concatenate(observed_abs), scale))
            maxt.update(standardise(np.hstack([centred_case, centred_agg]), scale))
            tests.adjusted = maxt.adjusted(
                bootstrap_p, settings.n_resamples, exact=False, mid=False
            )
    elif settings.method == "permutation":
        tests = _permutation(fixed, aggregates, totals, observed_agg, scale, settings)
    else:
        tests = _t_tests(case_cols, agg_cols)

    if settings.correction == "holm":
        tests.adjusted = holm(tests.p_values)

    results: dict[str, BootstrapResult] = {}
    z = normal_quantile(1 - a / 2) + normal_quantile(MDE_POWER)
    for i, col in enumerate(ordered):
        ci_low, ci_high = float(low[i]), float(high[i])
        p = tests.p_values[i]
        # bootstrap: the spec's rule (interval excludes 0); otherwise the test's own p
        significant = (ci_low > 0 or ci_high < 0) if settings.method == "bootstrap" else p <= a
        adjusted = tests.adjusted[i] if tests.adjusted is not None else None
        diffs = col.diffs
        sd = float(np.std(diffs, ddof=1)) if diffs is not None else None
        results[col.name] = BootstrapResult(
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
            se=float(se[i]),
            mde=z * (sd / math.sqrt(n) if sd is not None else float(se[i])),
            seed=settings.seed,
            stream=RESAMPLING_STREAM,
            resampling=draws.path,
            null=tests.null,
            warnings=warnings_for(n=n, method=settings.method, kind=col.kind, diffs=diffs),
            correction=settings.correction,
            p_adjusted=adjusted,
            significant_adjusted=None if adjusted is None else adjusted <= a,
        )
    return Comparison(
        results=tuple(results[c.name] for c in columns),
        name_a=names[0],
        name_b=names[1],
        n_queries=n,
        n_resamples=settings.n_resamples,
        alpha=a,
        method=settings.method,
        correction=settings.correction,
        seed=settings.seed,
        stream=RESAMPLING_STREAM,
        false_alarm_chance=familywise_false_alarm(len(columns), a),
    )


def _permutation(
    fixed: FixedPoint,
    aggregates: list[ResampledAggregate],
    totals: IntArray,
    observed_agg: FloatArray,
    scale: FloatArray,
    settings: Settings,
) -> _Tests:
    null = permutation_null(
        fixed,
        aggregates,
        settings.n_resamples,
        substream(settings.seed, PURPOSE_PERMUTATION),
        settings.chunk_bytes,
    )
    case_counter = TailCounter(np.abs(totals))
    agg_counter = TailCounter(np.abs(observed_agg))
    observed_abs = np.concatenate([np.abs(totals), np.abs(observed_agg)])
    maxt = StepDownMaxT(standardise(observed_abs, scale)) if settings.correction == "maxt" else None
    if null.exact and not aggregates and maxt is None:
        # per-metric counts only: meet in the middle instead of listing 2**n patterns
        case_counter.greater, case_counter.equal = exact_tail_counts(fixed.units, np.abs(totals))
    else:
        for chunk in null.chunks:
            case_abs = np.abs(chunk.sums)
            agg_abs = np.abs(chunk.aggregates)
            case_counter.update(case_abs)
            agg_counter.update(agg_abs)
            if maxt is not None:
                maxt.update(standardise(np.hstack([case_abs, agg_abs]), scale))
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


def _t_tests(case_cols: list[Column], agg_cols: list[Column]) -> _Tests:
    if agg_cols:
        raise MetricError(
            f"aggregate {agg_cols[0].name!r} has no per-case values, which the paired t-test "
            "needs: use method 'bootstrap' or 'permutation' for aggregates"
        )
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
