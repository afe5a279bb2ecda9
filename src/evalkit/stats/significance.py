"""Paired significance: did that change really improve anything, or did the number move?"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from evalkit.errors import MetricError
from evalkit.stats.compare import (
    Column,
    aggregate_column,
    case_column,
    check_settings,
    compare_columns,
    compare_metrics,
)
from evalkit.stats.correction import familywise_false_alarm, holm
from evalkit.stats.outcome import BootstrapResult, Comparison, StatWarning
from evalkit.stats.paired_test import PairedTestResult, paired_test
from evalkit.stats.pairing import (
    CaseValues,
    RunLike,
    metric_data,
    pair_runs,
    registered_polarity,
)
from evalkit.stats.power import (
    PowerRow,
    PowerTable,
    analytic_power,
    default_effects,
    mde,
    n_for_effect,
    power,
    power_table,
)
from evalkit.stats.stream import DEFAULT_CHUNK_BYTES, RESAMPLING_STREAM, SeedLike

__all__ = [
    "RESAMPLING_STREAM",
    "BootstrapResult",
    "Comparison",
    "PairedTestResult",
    "PowerRow",
    "PowerTable",
    "StatWarning",
    "analytic_power",
    "compare_metrics",
    "default_effects",
    "familywise_false_alarm",
    "holm",
    "mde",
    "n_for_effect",
    "paired_bootstrap",
    "paired_bootstrap_many",
    "paired_test",
    "power",
    "power_table",
]


def paired_bootstrap(
    a: RunLike,
    b: RunLike,
    metric: str,
    n_resamples: int = 10_000,
    seed: SeedLike = 42,
    *,
    alpha: float = 0.05,
    method: str = "bootstrap",
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    higher_is_better: bool | None = None,
) -> BootstrapResult:
    """Compare ``metric`` between runs ``a`` and ``b`` (Δ = a - b), paired by case id.

    ``a`` and ``b`` are :class:`~evalkit.RunResult` objects or sequences of
    rows with ``.query_id`` and ``.metrics`` (``QueryResult``, ``CaseResult``).
    ``alpha`` sets the interval's level (``1 - alpha``); ``method`` is
    ``"bootstrap"`` (default), ``"permutation"`` or ``"t"``.
    ``higher_is_better`` sets the direction wins/losses/ties are counted in
    (default: the registered metric's; "a higher" wins when it has none).
    Raises :class:`~evalkit.ComparisonError` or :class:`~evalkit.MetricError`
    naming the run, case or metric at fault.

    This is 0.2.0's percentile bootstrap, kept exactly; on small evals it reports changes
    that are not there too often (docs/calibration.md): :func:`paired_test` gives the gate's.
    """
    comparison = paired_bootstrap_many(
        a,
        b,
        [metric],
        n_resamples,
        seed,
        alpha=alpha,
        method=method,
        chunk_bytes=chunk_bytes,
        polarities=None if higher_is_better is None else {metric: higher_is_better},
    )
    return comparison.results[0]


def _check_metrics(metrics: object) -> list[str]:
    if isinstance(metrics, str) or not isinstance(metrics, Sequence):
        raise MetricError(f"metrics must be a list of metric names, got {metrics!r}")
    names = list(metrics)
    if not names:
        raise MetricError("no metrics to compare: name at least one")
    for name in names:
        if not isinstance(name, str) or not name:
            raise MetricError(f"metric names must be non-empty strings, got {name!r}")
    repeated = sorted({m for m in names if names.count(m) > 1})
    if repeated:
        raise MetricError(f"metric(s) named more than once: {', '.join(repeated)}")
    return names


def paired_bootstrap_many(
    a: RunLike,
    b: RunLike,
    metrics: Sequence[str],
    n_resamples: int = 10_000,
    seed: SeedLike = 42,
    *,
    alpha: float = 0.05,
    method: str = "bootstrap",
    correction: str = "none",
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    polarities: Mapping[str, bool] | None = None,
) -> Comparison:
    """Compare several metrics of the same two runs (each metric resampled on its own terms).

    ``correction`` is ``"none"`` (default), ``"holm"`` or ``"maxt"``; adjusted
    p-values and decisions land in each result's ``p_adjusted`` and
    ``significant_adjusted`` (and :attr:`BootstrapResult.decision`).
    ``polarities`` overrides a metric's registered direction for wins/losses/ties.
    """
    names = _check_metrics(metrics)
    settings = check_settings(n_resamples, seed, alpha, method, correction, chunk_bytes)
    paired = pair_runs(a, b)
    columns: list[Column] = []
    for name in names:
        data = metric_data(paired, name)
        if isinstance(data, CaseValues):
            hib = (polarities or {}).get(name, registered_polarity(name))
            columns.append(case_column(name, data.kind, data.a, data.b, data.a - data.b, hib))
        else:
            columns.append(aggregate_column(data))
    return compare_columns(columns, paired.n, (paired.name_a, paired.name_b), settings)
