"""``evalkit compare`` and ``evalkit show``: paired tables over stored artefacts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from evalkit import _callable_module, checks
from evalkit.artifact import MetricInfo, RunArtifact
from evalkit.errors import ComparisonError, EvalkitError
from evalkit.gate import goldens_diff, pair_for_gate
from evalkit.metric_identity import describe_params
from evalkit.results import RunResult


@dataclass(frozen=True)
class CompareRow:
    """One metric compared across two runs on the same cases (A minus B)."""

    metric: str
    kind: str
    higher_is_better: bool | None
    value_a: float
    value_b: float
    delta: float
    ci_low: float
    ci_high: float
    p_value: float
    significant: bool
    n: int
    wins: int
    losses: int
    ties: int
    note: str = ""
    incomparable: bool = False  # the two runs' definitions of the metric differ


def _paired_runs(a: RunArtifact, b: RunArtifact) -> tuple[RunResult[Any], RunResult[Any]]:
    """The gate's pairing (:func:`evalkit.gate.pair_for_gate`), so both count the same cases."""
    match = pair_for_gate(a.result.per_query, a, b, goldens_diff(a, b))
    if not match.ids:
        raise ComparisonError(
            f"runs {a.name!r} and {b.name!r} share no unchanged, successful cases to pair"
        )
    return (
        RunResult(a.name, [match.rows_a[i] for i in match.ids]),
        RunResult(b.name, [match.rows_b[i] for i in match.ids]),
    )


def _definition_note(info_a: MetricInfo, info_b: MetricInfo) -> str:
    """Why two runs' values of a metric are not comparable, or "" when they are."""
    if info_a.fingerprint == info_b.fingerprint:
        return ""
    if info_a.params != info_b.params:
        return (
            f"incomparable: parameters differ ({describe_params(info_b.params)} vs "
            f"{describe_params(info_a.params)})"
        )
    return "incomparable: definition changed"


def compare_artifacts(
    a: RunArtifact, b: RunArtifact, *, n_resamples: int = 10_000, seed: int = 42
) -> list[CompareRow]:
    """Every metric both artefacts recorded, two-sided, by the gate's default procedure.

    The interval, p and "REAL" come from one procedure (stats.procedures), so the
    row cannot say "REAL" beside an interval that contains 0.
    """
    import numpy as np

    from evalkit.stats.procedures import evaluator_for
    from evalkit.stats.ties import WinLossTie, case_outcomes, count

    run_a, run_b = _paired_runs(a, b)
    shared = [m for m in a.metrics if m in b.metrics]
    if not shared:
        raise ComparisonError(f"runs {a.name!r} and {b.name!r} record no metric in common")
    rows: list[CompareRow] = []
    for metric in shared:
        info_a, info_b = a.metrics[metric], b.metrics[metric]
        note = _definition_note(info_a, info_b)
        hib = info_a.higher_is_better
        try:
            evaluator, paired = evaluator_for(
                run_a, run_b, metric, n_resamples=n_resamples, seed=seed
            )
            res = evaluator.decide(0.05)
        except EvalkitError as exc:
            raise ComparisonError(f"metric {metric!r}: {exc}") from None
        wlt = WinLossTie(0, 0, 0)
        if info_a.kind == "case":
            va, vb = run_a.values(metric), run_b.values(metric)
            ids = list(va)
            signs = case_outcomes(
                np.array([va[i] for i in ids]), np.array([vb[i] for i in ids]), hib
            )
            wlt = count(signs)
        rows.append(
            CompareRow(
                metric=metric,
                kind=info_a.kind,
                higher_is_better=hib,
                # means over the paired cases, the ones delta is computed on
                value_a=run_a.value(metric),
                value_b=run_b.value(metric),
                delta=res.estimate,
                ci_low=res.low,
                ci_high=res.high,
                p_value=res.p_value,
                significant=res.excludes_null and not note,
                n=len(paired.ids),
                wins=wlt.wins,
                losses=wlt.losses,
                ties=wlt.ties,
                note=note,
                incomparable=bool(note),
            )
        )
    return rows


def render_compare_table(rows: list[CompareRow], name_a: str, name_b: str) -> str:
    """A plain-text table: values, Δ with its 95% CI and p, wins/losses/ties."""
    header = (
        f"{'metric':<18} {name_b[:10]:>10} {name_a[:10]:>10} {'delta':>9}  "
        f"{'95% CI':<21} {'p':>7}  {'W/L/T':<11} verdict"
    )
    lines = [f"comparing {name_a} (A) against {name_b} (B), paired on {rows[0].n} cases", header]
    lines.append("-" * len(header))
    for r in rows:
        verdict = "REAL" if r.significant else "not significant"
        if r.incomparable:
            verdict = r.note
        elif r.note:
            verdict += f" ({r.note})"
        wlt = f"{r.wins}/{r.losses}/{r.ties}" if r.kind == "case" else "-"
        lines.append(
            f"{r.metric:<18} {r.value_b:>10.4f} {r.value_a:>10.4f} {r.delta:>+9.4f}  "
            f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]  {r.p_value:>7.4f}  {wlt:<11} {verdict}"
        )
    return "\n".join(lines)


def render_show(art: RunArtifact) -> str:
    """Provenance, each recorded metric's value, and the failed cases."""
    lines = [
        f"run:       {art.name}",
        f"cases:     {len(art.result)} ({len(art.failed)} failed)",
        f"created:   {art.created_at}  evalkit {art.evalkit_version}",
        f"git:       {art.git_commit or 'unknown'}{' (dirty)' if art.git_dirty else ''}",
        f"target:    {art.target_name or '-'}",
    ]
    if art.config_name:
        lines.append(f"config:    {art.config_name}")
    if art.goldens is not None:
        lines.append(f"goldens:   {art.goldens.fingerprint[:16]}")
    lines.append("")
    lines.append(f"{'metric':<20} {'kind':<9} {'better':<7} value")
    ok_rows = [r for r in art.result.per_query if r.error is None]
    ok = RunResult(art.name, ok_rows)
    for name, info in art.metrics.items():
        better = {True: "higher", False: "lower", None: "?"}[info.higher_is_better]
        try:
            value = f"{ok.value(name):.4f}" if ok_rows else "-"
        except EvalkitError as exc:
            value = f"unavailable ({exc})"
        lines.append(f"{name:<20} {info.kind:<9} {better:<7} {value}")
    if art.failed:
        lines.append("")
        lines.append("failed cases:")
        lines.extend(f"  {r.case_id}: {r.error}" for r in art.failed[:50])
        if len(art.failed) > 50:
            lines.append(f"  … and {len(art.failed) - 50} more")
    return "\n".join(lines)


# `from evalkit import compare; compare(0.7, ">=", 0.6)` (0.2.0's threshold
# function) must keep working once this module is imported.
_callable_module.make_callable(__name__, checks.compare)
