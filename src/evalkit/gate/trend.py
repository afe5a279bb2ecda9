"""A metric's trend across promotions: each step's value, Δ against the previous, its CI."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from evalkit._model.results import RunResult
from evalkit._spec.artifact import RunArtifact, read_artifact
from evalkit._util.figures import json_float
from evalkit._util.units import reading
from evalkit.errors import EvalkitError

#: The label of the candidate when it is appended as the trend's last point.
CANDIDATE_LABEL = "candidate"


class Promotion(Protocol):
    """A promoted run as the trend reads it: a label, its artefact file, where it came from."""

    @property
    def label(self) -> str: ...

    @property
    def path(self) -> Path: ...

    @property
    def sha(self) -> str | None: ...

    @property
    def promoted_at(self) -> datetime | None: ...


@dataclass(frozen=True)
class TrendStep:
    """One step of the trend: this point minus the previous one, paired by case id."""

    delta: float | None  # None when the two runs could not be compared at all
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    significant: bool  # the interval excludes 0 (and the metric is comparable)
    n_paired: int
    note: str = ""  # why the step is not comparable, or what was left out
    confidence: float = 0.95  # the level of [ci_low, ci_high], as compare decided it

    @property
    def compared(self) -> bool:
        return self.delta is not None

    @classmethod
    def unpaired(cls, note: str) -> TrendStep:
        """A step whose two runs could not be compared at all, and why."""
        return cls(None, None, None, None, False, 0, note)


@dataclass(frozen=True)
class TrendPoint:
    """One promotion (or the candidate) on one metric's trend."""

    label: str
    entry: Promotion | None  # None for the candidate
    value: float | None  # the metric over that run's successful cases; None if not recorded
    step: TrendStep | None  # against the previous point; None for the first point

    @property
    def is_candidate(self) -> bool:
        return self.entry is None


@dataclass(frozen=True)
class MetricTrend:
    """One metric across the history, oldest point first."""

    metric: str
    higher_is_better: bool | None
    confidence: float  # the level of every step's interval
    points: tuple[TrendPoint, ...]


@dataclass(frozen=True)
class DriftTrend:
    """What the HTML report draws under the drift checks."""

    trends: Sequence[MetricTrend] = ()
    note: str | None = None  # why there is no trend
    reference_at: int | None = None  # the pinned reference's point, when it is a promotion


def _run_value(art: RunArtifact, metric: str) -> float | None:
    """The metric over the run's successful cases, as ``evalkit show`` prints it."""
    if metric not in art.metrics:
        return None
    ok = [r for r in art.result.per_query if r.error is None]
    if not ok:
        return None
    try:
        return RunResult(art.name, ok).value(metric)
    except EvalkitError:
        return None


def _steps(
    newer: RunArtifact, older: RunArtifact, metrics: Sequence[str], n_resamples: int, seed: int
) -> dict[str, TrendStep]:
    from evalkit.gate.compare import compare_artifacts

    try:
        rows = {
            r.metric: r for r in compare_artifacts(newer, older, n_resamples=n_resamples, seed=seed)
        }
    except EvalkitError as exc:
        return dict.fromkeys(metrics, TrendStep.unpaired(str(exc)))
    steps: dict[str, TrendStep] = {}
    for metric in metrics:
        row = rows.get(metric)
        if row is None:
            steps[metric] = TrendStep.unpaired(f"{metric} is not recorded on both sides")
            continue
        steps[metric] = TrendStep(
            delta=row.delta,
            ci_low=row.ci_low,
            ci_high=row.ci_high,
            p_value=row.p_value,
            significant=row.significant,
            n_paired=row.n,
            note=row.note,
            confidence=row.confidence,
        )
    return steps


def metric_trends(
    entries: Sequence[Promotion],
    metrics: Sequence[str] | None = None,
    *,
    candidate: RunArtifact | Path | None = None,
    n_resamples: int = 10_000,
    seed: int = 42,
) -> list[MetricTrend]:
    """Per metric, per promotion (oldest first, then ``candidate``): value, Δ, CI of Δ."""
    runs: list[tuple[str, Promotion | None, RunArtifact]] = [
        (e.label, e, read_artifact(e.path)) for e in entries
    ]
    if candidate is not None:
        art = read_artifact(candidate) if isinstance(candidate, Path) else candidate
        runs.append((CANDIDATE_LABEL, None, art))
    if metrics is None:  # every metric any run recorded, in first-seen order
        metrics = list(dict.fromkeys(m for _, _, art in runs for m in art.metrics))
    steps: list[dict[str, TrendStep]] = [{}]
    for (_, _, older), (_, _, newer) in itertools.pairwise(runs):
        steps.append(_steps(newer, older, metrics, n_resamples, seed))
    trends: list[MetricTrend] = []
    for metric in metrics:
        points = tuple(
            TrendPoint(label, entry, _run_value(art, metric), step.get(metric) if i else None)
            for i, ((label, entry, art), step) in enumerate(zip(runs, steps, strict=True))
        )
        levels = [p.step.confidence for p in points if p.step is not None and p.step.compared]
        polarity = _polarity(metric, [r[2] for r in runs])
        trends.append(MetricTrend(metric, polarity, levels[0] if levels else 0.95, points))
    return trends


def _polarity(metric: str, arts: Sequence[RunArtifact]) -> bool | None:
    """The direction the newest run recording ``metric`` gives it."""
    newest = next((a for a in reversed(arts) if metric in a.metrics), None)
    return None if newest is None else newest.metrics[metric].higher_is_better


def _fmt(value: float | None, spec: str = "+.4f") -> str:
    return "-" if value is None else format(value, spec)


def render_trend(trend: MetricTrend) -> str:
    """A plain-text table of one metric's trend (``evalkit history``)."""
    better = {True: "higher is better", False: "lower is better", None: ""}[trend.higher_is_better]
    level = f"{trend.confidence:.0%}"
    said = reading(trend.metric, better)  # latency: the values and Δs below are in ms
    lines = [f"{trend.metric}{f' ({said})' if said else ''}"]
    lines.append(
        f"  {'promotion':<18} {'value':>8} {'Δ vs prev':>9}  {level + ' CI of Δ':<20} {'n':>5}"
    )
    for point in trend.points:
        step = point.step
        if step is None:
            delta, ci, n, note = "", "", "", ""
        elif not step.compared:
            delta, ci, n, note = "-", "-", "0", f"  not compared: {step.note}"
        else:
            delta = _fmt(step.delta)
            ci = f"[{_fmt(step.ci_low)}, {_fmt(step.ci_high)}]"
            n = str(step.n_paired)
            note = "  significant" if step.significant else ""
            if step.note:
                note += f"  ({step.note})"
        row = f"  {point.label:<18} {_fmt(point.value, '.4f'):>8} {delta:>9}  {ci:<20} {n:>5}"
        lines.append((row + note).rstrip())
    return "\n".join(lines)


def trends_as_dicts(trends: Sequence[MetricTrend]) -> list[dict[str, Any]]:
    """JSON-ready trends (``evalkit history --json``)."""
    out: list[dict[str, Any]] = []
    for trend in trends:
        points = []
        for p in trend.points:
            point: dict[str, Any] = {
                "label": p.label,
                "sha": p.entry.sha if p.entry else None,
                "promoted_at": p.entry.promoted_at.isoformat()
                if p.entry and p.entry.promoted_at
                else None,
                "candidate": p.is_candidate,
                "value": json_float(p.value),
                "step": None,
            }
            if p.step is not None:  # every field but the level, which the trend carries
                point["step"] = {
                    k: json_float(v) if isinstance(v, float) else v
                    for k, v in asdict(p.step).items()
                    if k != "confidence"
                }
            points.append(point)
        out.append(
            {
                "metric": trend.metric,
                "higher_is_better": trend.higher_is_better,
                "confidence": trend.confidence,
                "points": points,
            }
        )
    return out
