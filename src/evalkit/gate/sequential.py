"""Which blocking checks a partial run has settled, by anytime-valid confidence sequences.

The gate with ``stop_early:`` asks this after each batch (docs/design/early-stopping.md:
when a check settles, clusters, bounded metrics, and why the interval read is the hull of
the sequence and the fixed-n t interval, so a settled check's fixed-n verdict agrees).
Aggregates, drift checks and checks without a baseline are never settled here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from evalkit._spec.artifact import RunArtifact
from evalkit._spec.checks import CheckSpec
from evalkit.errors import EvalkitError, InputError
from evalkit.gate.procedure import _is_aggregate, _polarity
from evalkit.stats.clustered import ClusterT
from evalkit.stats.procedures import t_bounds
from evalkit.stats.sequential import (
    ConfidenceSequence,
    Settled,
    confidence_sequence,
    ratio_confidence_sequence,
    settle_comparison,
    settle_threshold,
)

Clusters = Mapping[str, str | None]

# The procedures whose fixed-n interval the hull uses (the default: plain paired t).
_T_METHODS: Final = ("auto", "t")


@dataclass(frozen=True)
class CheckState:
    """One blocking check after a look: settled or not, and why not if it cannot be."""

    check_id: str
    outcome: Settled
    cannot_settle: str | None = None  # why the sequence cannot decide this check


def refuse_unsupported(checks: Sequence[CheckSpec], correction: str) -> None:
    """Refuse, before anything runs, what early stopping does not support (exit 2)."""
    if correction != "none":
        raise InputError(
            f"stop_early: the checks file asks for correction {correction}, and the "
            "confidence sequences are not corrected for multiplicity; remove stop_early "
            "or the correction"
        )
    for spec in checks:
        if spec.is_blocking and spec.mode is not None and spec.method not in _T_METHODS:
            raise InputError(
                f"stop_early: check {spec.id!r} uses method {spec.method}; early stopping "
                "reads the default paired t (method auto or t): remove stop_early or the method"
            )


def declared_range(metric: str) -> tuple[float, float] | None:
    """The metric's declared range when both ends are finite (the bounded sequence reads
    it), else None (the asymptotic one)."""
    from evalkit._model.registry import get_metric

    try:
        bounds = get_metric(metric).bounds
    except EvalkitError:
        return None
    if bounds is None or not all(math.isfinite(end) for end in bounds):
        return None
    low, high = float(bounds[0]), float(bounds[1])
    return (low, high) if low < high else None


def _range_squared(values: Sequence[float]) -> float | None:
    """The pseudo-observation's variance: the square of the range the values span."""
    finite = [v for v in values if math.isfinite(v)]
    if len(finite) < 2:
        return None
    spread = max(finite) - min(finite)
    return spread * spread if spread > 0 else None


def _looks(n: int, batch_ends: Sequence[int]) -> list[int]:
    looks = sorted({min(b, n) for b in batch_ends if b >= 1} | {n})
    return [x for x in looks if x >= 1]


@dataclass(frozen=True)
class _Sample:
    """A check's values in the order they ran, and the sequence's view of them."""

    values: np.ndarray
    ids: list[str]
    ends: list[int]  # values seen at each batch end
    clusters: Clusters | None

    @classmethod
    def of(
        cls,
        ids: list[str],
        values: list[float],
        order: Sequence[str],
        batch_ends: Sequence[int],
        clusters: Clusters | None,
    ) -> _Sample:
        position = {case_id: k for k, case_id in enumerate(order, start=1)}
        # batch ends count cases run; a scoped check sees only its own among them
        ends = [sum(1 for i in ids if position[i] <= end) for end in batch_ends]
        return cls(np.array(values, dtype=np.float64), ids, ends, clusters)

    def _units(self) -> tuple[np.ndarray, np.ndarray, list[int]]:
        """Per cluster in the order first seen: its total and size; the clusters at each end."""
        assert self.clusters is not None
        unit: dict[object, int] = {}
        codes = []
        for case_id in self.ids:
            label = self.clusters.get(case_id)
            codes.append(unit.setdefault(("own", case_id) if label is None else label, len(unit)))
        code = np.array(codes, dtype=np.int64)
        totals = np.bincount(code, weights=self.values, minlength=len(unit))
        sizes = np.bincount(code, minlength=len(unit)).astype(np.float64)
        ends = [len(set(codes[:end])) for end in self.ends]
        return totals, sizes, ends

    def sequence(
        self,
        alpha: float,
        planned: int,
        prior: float | None,
        value_range: tuple[float, float] | None,
    ) -> tuple[ConfidenceSequence, tuple[float, float]] | None:
        """The sequence at the last look, and the fixed-n paired t interval (cluster-robust
        with clusters) the gate decides with; None with too few cases or clusters."""
        n = self.values.size
        if self.clusters is None:
            if n < 2:
                return None
            cs = confidence_sequence(
                self.values,
                alpha,
                value_range=value_range,
                planned_n=planned,
                prior_variance=prior,
                looks=_looks(n, self.ends),
            )
            low, high = t_bounds(self.values, alpha)
            return cs, (float(low[0]), float(high[0]))
        totals, sizes, ends = self._units()
        if totals.size < 2:
            return None
        # the units planned: the cases planned at this run's cases per cluster
        units = max(totals.size, round(planned * totals.size / n))
        cs = ratio_confidence_sequence(
            totals,
            sizes,
            alpha,
            planned_n=units,
            prior_variance=prior,
            looks=_looks(totals.size, ends),
        )
        low, high = ClusterT.of(totals, sizes.astype(np.int64)).bounds(alpha)
        return cs, (float(low[0]), float(high[0]))


def _comparison(
    spec: CheckSpec,
    order: Sequence[str],
    cand: Mapping[str, float],
    base: RunArtifact,
    planned: int,
    batch_ends: Sequence[int],
    hib: bool,
    clusters: Clusters | None,
) -> Settled:
    base_values = base.result.values(spec.metric)
    scope = None if spec.scope is None else set(spec.scope)
    ids = [i for i in order if i in cand and i in base_values and (scope is None or i in scope)]
    diffs = [cand[i] - base_values[i] for i in ids]
    sample = _Sample.of(ids, diffs, order, batch_ends, clusters)
    metric_range = declared_range(spec.metric)
    span = (
        None
        if metric_range is None
        else (metric_range[0] - metric_range[1], metric_range[1] - metric_range[0])
    )
    alpha = float(spec.alpha or 0.05)
    read = sample.sequence(alpha, planned, _range_squared(list(base_values.values())), span)
    if read is None:
        return None
    cs, (t_low, t_high) = read
    low, high = cs.last
    low, high = min(low, t_low), max(high, t_high)
    # the regression the check tolerates: the margin, min_effect, or none
    within = float(spec.margin or 0.0) if spec.mode == "non_inferiority" else spec.min_effect
    return settle_comparison(
        low, high, higher_is_better=hib, fail_beyond=within or 0.0, pass_within=within
    )


def _threshold(
    spec: CheckSpec,
    order: Sequence[str],
    cand: Mapping[str, float],
    base: RunArtifact | None,
    planned: int,
    batch_ends: Sequence[int],
    clusters: Clusters | None,
) -> Settled:
    scope = None if spec.scope is None else set(spec.scope)
    ids = [i for i in order if i in cand and (scope is None or i in scope)]
    sample = _Sample.of(ids, [cand[i] for i in ids], order, batch_ends, clusters)
    prior = None
    if base is not None:
        try:
            prior = _range_squared(list(base.result.values(spec.metric).values()))
        except EvalkitError:
            prior = None
    read = sample.sequence(0.05, planned, prior, declared_range(spec.metric))
    if read is None:
        return None
    low, high = read[0].last
    mean = float(sample.values.mean())  # the fixed-n verdict reads the mean: keep it inside
    low, high = min(low, mean), max(high, mean)
    assert spec.op is not None
    assert spec.threshold is not None
    return settle_threshold(low, high, op=spec.op, threshold=float(spec.threshold))


def settle_checks(
    checks: Sequence[CheckSpec],
    candidate: RunArtifact,
    baseline: RunArtifact | None,
    order: Sequence[str],
    *,
    planned: int,
    batch_ends: Sequence[int],
    clusters: Clusters | None = None,
) -> list[CheckState]:
    """The state of every blocking check after the cases in ``order`` (as run so far).

    ``candidate`` holds the rows run; ``batch_ends`` the number of cases run at each
    look so far (the last is ``len(order)``); ``planned`` the cases the run may reach;
    ``clusters`` each case's cluster, when declared: the sequences then read whole
    clusters (the order runs them whole).
    """
    states: list[CheckState] = []
    for spec in checks:
        if not spec.is_blocking:
            continue
        why = None
        if spec.is_vs_reference:
            why = "a drift check compares with the reference"
        elif _is_aggregate(spec.metric, candidate):
            why = f"{spec.metric} is an aggregate (no per-case mean to follow)"
        elif spec.is_vs_baseline and baseline is None:
            why = "there is no baseline to compare with"
        if why is not None:
            states.append(CheckState(spec.id, None, why))
            continue
        rows = [r for r in candidate.result.per_query if r.error is None]
        cand = {r.query_id: r.metrics[spec.metric] for r in rows if spec.metric in r.metrics}
        try:
            if spec.is_vs_baseline:
                assert baseline is not None
                hib = _polarity(spec.metric, candidate, baseline)
                outcome = _comparison(
                    spec, order, cand, baseline, planned, batch_ends, hib, clusters
                )
            else:
                outcome = _threshold(spec, order, cand, baseline, planned, batch_ends, clusters)
        except (EvalkitError, ValueError) as exc:  # the gate on the cases run reports it
            states.append(CheckState(spec.id, None, str(exc)))
            continue
        states.append(CheckState(spec.id, outcome))
    return states
