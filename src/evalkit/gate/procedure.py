"""The gate: checks × candidate run × optional baseline (and reference) → one verdict per check.

A pure function of its inputs (no files, network or clock), so every decision
can be reproduced from the two artefacts and the checks file.  The verdicts and the
report it returns are :mod:`evalkit.gate.model`; presentation lives in
:mod:`evalkit.report`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from evalkit._model.metric_identity import describe_params
from evalkit._model.results import Row, RunResult
from evalkit._spec.artifact import RunArtifact
from evalkit._spec.checks import CheckSpec
from evalkit._util.arrays import IntArray
from evalkit._util.figures import num, signed
from evalkit._util.pvalues import p_text
from evalkit._util.units import suffix
from evalkit.errors import CheckError, EvalkitError, InputError, MetricError
from evalkit.gate.inputs import (
    GoldensDiff,
    account_for_failed_baseline,
    failed_baseline_note,
    goldens_diff,
    ran_in_scope,
    shown,
)
from evalkit.gate.reference import Reference, wants_reference
from evalkit.gate.slices import SliceReport, SliceTest, slice_family
from evalkit.stats.clustered_decide import ClusteredEvaluator, cluster_notes, evaluator_by_cluster
from evalkit.stats.correction import holm
from evalkit.stats.diagnostics import warnings_for
from evalkit.stats.familywise import FamilywiseRate, TestedCheck, familywise_rate
from evalkit.stats.pairing import registered_polarity
from evalkit.stats.power import detectable_regression
from evalkit.stats.procedures import (
    BOOTSTRAP_SHOWN_UP_TO,
    DEFAULT_GATE_METHOD,
    RESAMPLING,
    Evaluator,
    corrected_alpha,
)
from evalkit.stats.rule import fails
from evalkit.stats.ties import WinLossTie, case_outcomes, count

if TYPE_CHECKING:
    from evalkit.stats.pairing import CaseMatch

from evalkit.gate.model import (
    WORST_CASES,
    CaseDelta,
    CheckVerdict,
    Comparison,
    GateOptions,
    GateReport,
    ReferenceReport,
    Status,
    run_summary,
)

# ----------------------------------------------------------------------------- helpers


def _polarity(metric: str, *arts: RunArtifact | None) -> bool:
    """Direction from the registry, else from the stored provenance."""
    hib = registered_polarity(metric)
    if hib is None:
        for art in arts:
            info = art.metrics.get(metric) if art is not None else None
            if info is not None and info.higher_is_better is not None:
                return info.higher_is_better
        raise MetricError(
            f"metric {metric!r} has no known direction: register it with higher_is_better"
        )
    return hib


def _is_aggregate(metric: str, art: RunArtifact) -> bool:
    info = art.metrics.get(metric)
    if info is not None:
        return info.kind == "aggregate"
    from evalkit._model.registry import get_metric

    return get_metric(metric).kind == "aggregate"


def _scoped_rows(spec: CheckSpec, art: RunArtifact) -> list[Row]:
    """Rows a check covers; raises CheckError when any of them produced no result."""
    rows = art.result.per_query
    if spec.scope:
        return list(spec.select(rows))
    failed = [r.query_id for r in rows if r.error is not None]
    if failed:
        shown = ", ".join(failed[:5]) + (" ..." if len(failed) > 5 else "")
        raise CheckError(
            f"check {spec.id!r}: {len(failed)} of {len(rows)} case(s) produced no result: "
            f"{shown}. A check must evaluate every case it covers"
        )
    return list(rows)


def _value(metric: str, rows: Sequence[Any], art: RunArtifact, check_id: str) -> float:
    sub = RunResult(art.name, list(rows))
    if _is_aggregate(metric, art):
        return sub.aggregate(metric)
    if not rows:
        raise CheckError(f"check {check_id!r}: no cases to evaluate")
    if all(metric not in r.metrics for r in rows):
        computed = ", ".join(art.result.metric_names()) or "none"
        raise CheckError(
            f"check {check_id!r}: metric {metric!r} was not computed in run {art.name!r} "
            f"(computed: {computed}); add it to the config's metrics"
        )
    return sub.mean(metric)


# ----------------------------------------------------------------------------- threshold


def _alpha(spec: CheckSpec) -> float:
    """A vs_baseline check's alpha (CheckSpec fills in the default on construction)."""
    assert spec.alpha is not None
    return spec.alpha


def _margin(spec: CheckSpec) -> float:
    """A non_inferiority check's margin (CheckSpec requires one)."""
    assert spec.margin is not None
    return float(spec.margin)


def _fields(spec: CheckSpec, cand: RunArtifact, kind: str, **more: Any) -> dict[str, Any]:
    """The verdict fields every outcome of a check shares."""
    total = len(spec.scope) if spec.scope else len(cand.result)
    return {
        "check_id": spec.id,
        "metric": spec.metric,
        "kind": kind,
        "level": spec.level,
        "total": total,
        **more,
    }


def _threshold(spec: CheckSpec, cand: RunArtifact) -> CheckVerdict:
    base = _fields(spec, cand, "threshold", op=spec.op, threshold=spec.threshold)
    try:
        rows = _scoped_rows(spec, cand)
        base.update(_counted(spec.metric, rows, cand))
        observed = _value(spec.metric, rows, cand, spec.id)
    except EvalkitError as exc:
        base.setdefault("covered", len(ran_in_scope(spec, cand)))
        return CheckVerdict(**base, status="error", message=str(exc))
    ok = spec.compare(observed)
    status: Status = "pass" if ok else ("fail" if spec.level == "block" else "warn")
    rel = "meets" if ok else "misses"
    assert spec.threshold is not None  # a threshold check always has one (CheckSpec validates)
    u = suffix(spec.metric)
    # The value in the tables' digits; the threshold as the user wrote it.
    message = f"{spec.metric} = {num(observed)}{u} {rel} {spec.op} {spec.threshold:g}{u}"
    if not ok and spec.scope and not _is_aggregate(spec.metric, cand):
        message += _missed_cases(spec, rows)
    base.setdefault("covered", len(rows))
    return CheckVerdict(**base, status=status, message=message, observed=observed)


def _counted(metric: str, rows: Sequence[Row], art: RunArtifact) -> dict[str, Any]:
    """An aggregate that counts some of the rows (judge agreement) sets the coverage."""
    if not _is_aggregate(metric, art):
        return {}
    from evalkit._model.registry import CountsSomeCases, get_metric

    try:
        fn: object = get_metric(metric).fn
    except EvalkitError:
        return {}  # not registered here: _value says so
    if not isinstance(fn, CountsSomeCases):
        return {}
    return {"covered": fn.cases_counted(rows), "counts": fn.counted}


MISSED_SHOWN = 10


def _missed_cases(spec: CheckSpec, rows: Sequence[Row]) -> str:
    """Name the scoped cases whose own value misses the line: the ones to look at first."""
    missed = [
        r.query_id
        for r in rows
        if isinstance(value := r.metrics.get(spec.metric), int | float)
        and math.isfinite(value)
        and not spec.compare(value)
    ]
    if not missed:
        return ""
    shown = ", ".join(missed[:MISSED_SHOWN])
    if len(missed) > MISSED_SHOWN:
        shown += f" and {len(missed) - MISSED_SHOWN} more"
    return f"; {len(missed)} of the {len(rows)} scoped case(s) miss it on their own: {shown}"


# ----------------------------------------------------------------------------- vs baseline


@dataclass(frozen=True)
class Against:
    """The stored run a comparison check is decided against, and how its verdict reads.

    One evaluation (:func:`_vs_baseline`) decides vs_baseline and vs_reference checks
    alike; this says which side it is, so the words and the missing case differ and
    nothing else can.
    """

    artifact: RunArtifact | None
    diff: GoldensDiff
    kind: Literal["vs_baseline", "vs_reference"] = "vs_baseline"
    # vs_reference only: why there is no reference (the store's own sentence)
    missing_detail: str = ""

    @property
    def word(self) -> str:
        return "reference" if self.kind == "vs_reference" else "baseline"

    def missing(self, spec: CheckSpec, options: GateOptions) -> dict[str, Any]:
        """Status, message and blocking of a check with nothing to compare against."""
        blocks = spec.level == "block"
        if self.kind == "vs_reference":
            if options.require_reference and blocks:
                fix = "; require_reference is set, so this blocks"
            else:
                fix = "; not a pass: pin one (docs/drift.md)"
            message = f"no reference to compare against: {self.missing_detail}{fix}"
            return {**self.none_paired(options), "message": message}
        if options.require_baseline:
            status, fix = "fail" if blocks else "no-baseline", " and require_baseline is set"
        else:
            status, fix = "no-baseline", "; promote one from the default branch"
        return {"status": status, "message": f"no baseline to compare against{fix}"}

    def none_paired(self, options: GateOptions) -> dict[str, Any]:
        """Status (and blocking) when no case in scope pairs with the stored run."""
        if self.kind == "vs_reference":
            return {"status": "no-reference", "required": options.require_reference}
        return {"status": "no-baseline"}


def _incomparable_reason(metric: str, cand: RunArtifact, base: RunArtifact) -> str | None:
    ci, bi = cand.metrics.get(metric), base.metrics.get(metric)
    if ci is None or bi is None:
        return None
    if ci.judge is not None and bi.judge is not None and ci.judge.model != bi.judge.model:
        return (
            f"judge model changed ({bi.judge.model} → {ci.judge.model}); scores from "
            "different judges are not comparable: promote a new baseline made with the new judge"
        )
    if ci.judge is not None and bi.judge is not None and ci.judge != bi.judge:
        return "judge rubric or scale changed; promote a new baseline graded with the current judge"
    if ci.params != bi.params:
        return (
            f"{metric} was computed with different parameters (baseline "
            f"{describe_params(bi.params)}, candidate {describe_params(ci.params)}); values "
            "of different metric instances are not comparable: score both runs with the same "
            "parameters"
        )
    if ci.fingerprint != bi.fingerprint:
        return (
            f"the definition of {metric} changed (fingerprint {bi.fingerprint} → "
            f"{ci.fingerprint}); re-run the baseline with this evalkit and metric code, "
            "or promote the candidate as the new baseline"
        )
    return None


def _vs_baseline(
    spec: CheckSpec,
    cand: RunArtifact,
    against: Against,
    options: GateOptions,
    pairs: dict[str, tuple[RunResult[Any], RunResult[Any]]],
    evaluators: dict[str, Evaluator],
) -> CheckVerdict:
    """Decide one comparison check against the baseline, or the reference."""
    base = against.artifact
    common = _fields(spec, cand, against.kind, mode=spec.mode)
    try:
        rows = _scoped_rows(spec, cand)
        observed = _value(spec.metric, rows, cand, spec.id)
        hib = _polarity(spec.metric, cand, base)
    except EvalkitError as exc:
        return CheckVerdict(
            **common, status="error", message=str(exc), covered=len(ran_in_scope(spec, cand))
        )
    common.update(higher_is_better=hib, observed=observed)
    if base is None:
        return CheckVerdict(**common, **against.missing(spec, options), covered=len(rows))
    reason = _incomparable_reason(spec.metric, cand, base)
    if reason is not None:
        return CheckVerdict(**common, status="incomparable", message=reason, covered=len(rows))
    match = pair_for_gate(rows, cand, base, against.diff)
    paired_ids = match.ids
    if not paired_ids:
        return CheckVerdict(
            **common,
            **against.none_paired(options),
            message=f"none of the {len(rows)} case(s) in scope exist unchanged in the "
            f"{against.word}",
            covered=0,
        )
    cand_run: RunResult[Any] = RunResult(cand.name, [match.rows_a[i] for i in paired_ids])
    base_run: RunResult[Any] = RunResult(base.name, [match.rows_b[i] for i in paired_ids])
    pairs[spec.id] = (cand_run, base_run)
    common["covered"] = len(paired_ids)
    try:
        comparison, worst, evaluators[spec.id] = _compare(
            spec, cand_run, base_run, hib, cand, options
        )
    except EvalkitError as exc:
        return CheckVerdict(**common, status="error", message=str(exc))
    status, message = _decide(spec, comparison, hib)
    message += left_out_note(match, against.word)
    return CheckVerdict(
        **common, status=status, message=message, comparison=comparison, worst_cases=worst
    )


def pair_for_gate(
    rows: Sequence[Row], cand: RunArtifact, base: RunArtifact, diff: GoldensDiff
) -> CaseMatch:
    """The gate's pairing: successful cases on both sides whose golden did not change."""
    from evalkit.stats.pairing import match_cases

    return match_cases(
        rows,
        base.result.per_query,
        (cand.name, base.name),
        drop_failed=True,
        changed=diff.changed,
    )


def left_out_note(match: CaseMatch, word: str) -> str:
    """Say which of the candidate's cases the comparison left out, and why."""
    parts = []
    if match.only_a:
        parts.append(f"{len(match.only_a)} not in the {word}")
    if match.failed_b:
        parts.append(f"{len(match.failed_b)} failed in the {word}")
    if match.changed:
        parts.append(f"{len(match.changed)} with a changed golden")
    if not parts:
        return ""
    return f" ({', '.join(parts)}: left out; before, after and Δ are over the paired cases)"


def _tested_value(spec: CheckSpec, hib: bool) -> float:
    """The difference the check tests against: 0, or the margin or min_effect on the bad side."""
    if spec.mode == "non_inferiority":
        margin = _margin(spec)
        return -margin if hib else margin
    if spec.min_effect is not None:
        return -spec.min_effect if hib else spec.min_effect
    return 0.0


def case_deltas(
    cand_run: RunResult[Any], base_run: RunResult[Any], metric: str, hib: bool | None
) -> tuple[list[CaseDelta], IntArray]:
    """Each paired case's values, and its polarity-aware, lattice-exact outcome (stats.ties)."""
    cv, bv = cand_run.values(metric), base_run.values(metric)
    deltas = [CaseDelta(i, cv[i], bv[i], cv[i] - bv[i]) for i in cv]
    a, b = np.array([d.candidate for d in deltas]), np.array([d.baseline for d in deltas])
    return deltas, case_outcomes(a, b, hib)


def _compare(
    spec: CheckSpec,
    cand_run: RunResult[Any],
    base_run: RunResult[Any],
    hib: bool,
    cand: RunArtifact,
    options: GateOptions,
) -> tuple[Comparison, tuple[CaseDelta, ...], Evaluator]:
    alpha = _alpha(spec)
    method = spec.method or DEFAULT_GATE_METHOD
    try:
        # the deciding procedure, kept to give its interval at any level (_correct)
        evaluator, paired = evaluator_by_cluster(
            cand_run,
            base_run,
            spec.metric,
            clusters=options.clusters,
            method=method,
            n_resamples=options.n_resamples,
            seed=options.seed,
        )
        decision = evaluator.decide(alpha, _tested_value(spec, hib))
    except InputError as exc:  # e.g. too few clusters for any valid answer
        raise MetricError(f"check {spec.id!r}: {exc}") from None
    clustering = evaluator.clustering if isinstance(evaluator, ClusteredEvaluator) else None
    worst: tuple[CaseDelta, ...] = ()
    deltas: list[CaseDelta] = []
    wlt = WinLossTie(0, 0, 0)
    mde = None
    if not _is_aggregate(spec.metric, cand):
        deltas, signs = case_deltas(cand_run, base_run, spec.metric, hib)
        wlt = count(signs)
        regressed = [d for d, sign in zip(deltas, signs.tolist(), strict=True) if sign < 0]
        regressed.sort(key=lambda d: (-abs(d.delta), d.case_id))
        worst = tuple(regressed[:WORST_CASES])
    if isinstance(evaluator, ClusteredEvaluator):
        mde = evaluator.detectable(alpha)
    elif paired.diffs is not None:
        detectable = detectable_regression(
            paired.diffs,
            alpha,
            higher_is_better=hib,
            method=evaluator.procedure,
            seed=options.seed,
        )
        mde = detectable if detectable > 0 else None
    bootstrap_ci = None
    if (
        clustering is None
        and paired.diffs is not None
        and evaluator.procedure != "bootstrap"
        and len(paired.ids) <= BOOTSTRAP_SHOWN_UP_TO
    ):
        # the spec's interval, one click away from the one that decided (#23)
        shown, _ = evaluator_by_cluster(
            cand_run,
            base_run,
            spec.metric,
            method="bootstrap",
            n_resamples=options.n_resamples,
            seed=options.seed,
        )
        boot = shown.decide(alpha, decision.null)
        bootstrap_ci = (boot.low, boot.high, boot.confidence)
    stat_warnings = warnings_for(
        n=len(paired.ids),
        method=evaluator.procedure,
        kind="case" if paired.diffs is not None else "aggregate",
        diffs=paired.diffs,
        higher_is_better=hib,
    )
    if clustering is not None:
        stat_warnings = (*cluster_notes(clustering, evaluator.procedure), *stat_warnings)
    comparison = Comparison(
        # both means over the paired cases, the ones delta is computed on
        baseline_value=base_run.value(spec.metric),
        candidate_value=cand_run.value(spec.metric),
        delta=decision.estimate,
        ci_low=decision.low,
        ci_high=decision.high,
        confidence=decision.confidence,
        p_value=decision.p_value,
        method=method,
        n_paired=len(cand_run),
        n_resamples=options.n_resamples if evaluator.procedure in RESAMPLING else 0,
        wins=wlt.wins,
        losses=wlt.losses,
        ties=wlt.ties,
        mde=mde,
        margin=spec.margin,
        min_effect=spec.min_effect,
        warnings=tuple(w.message for w in stat_warnings),
        deltas=tuple(deltas),
        procedure=evaluator.procedure,
        tested_value=decision.null,
        bootstrap_ci=bootstrap_ci,
        clusters=None if clustering is None else clustering.count,
        own_clusters=None if clustering is None else clustering.own,
    )
    return comparison, worst, evaluator


def _decide(spec: CheckSpec, c: Comparison, hib: bool) -> tuple[Status, str]:
    """Status from the interval (DESIGN §5); its dual p agrees by construction.

    One rule decides every mode (:func:`evalkit.stats.rule.fails` against
    ``tested_value``: 0, or the margin or min_effect δ on the bad side); the modes
    differ only in how the verdict reads.
    """
    level = f"{c.confidence:.0%}" if c.p_adjusted is None else f"{c.confidence:.2%}"
    u = suffix(spec.metric)
    ci = (
        f"Δ {signed(c.delta)}{u}, {level} CI [{signed(c.ci_low)}, {signed(c.ci_high)}]{u} "
        f"({c.decided_by})"
    )
    mode = spec.mode or "no_significant_regression"
    failed = fails(mode, c.ci_low, c.ci_high, c.tested_value, hib)
    status: Status = ("fail" if spec.level == "block" else "warn") if failed else "pass"
    worse_side = c.ci_low if hib else c.ci_high  # the interval's end on the bad side
    bound = f"(bound {signed(worse_side)}{u})"
    if mode == "non_inferiority":
        margin = _margin(spec)
        p_shown = f"{p_text(c.deciding_p, c.p_label)} (tests Δ = {c.tested_value:+g}{u})"
        if failed:
            why = f"a drop larger than the margin {margin:g}{u} cannot be ruled out {bound}"
        else:
            why = f"the worst plausible change is within the margin ±{margin:g}{u}"
        return status, f"{ci}, {p_shown}: {why}"
    # The corrected verdict shows the adjusted p and the interval at the level that
    # decides exactly as the adjusted p does (see stats.procedures.corrected_alpha).
    p_shown = p_text(c.deciding_p, c.p_label)
    if c.p_adjusted is not None:
        p_shown += f" (unadjusted {p_text(c.p_value)})"
    if c.min_effect is not None:
        effect = f"min_effect {c.min_effect:g}{u}"
        if failed:
            why = f"a regression significantly larger than {effect}"
        elif (worse_side > c.tested_value) if hib else (worse_side < c.tested_value):
            why = f"any regression larger than {effect} is ruled out {bound}"
        else:
            why = f"no regression significantly larger than {effect}"
    elif failed:
        why = "significant regression"
    elif c.ci_low > 0 if hib else c.ci_high < 0:
        why = "significant improvement"
    else:
        why = "no significant regression"
    return status, f"{ci}, {p_shown}: {why}"


# ----------------------------------------------------------------------------- entry point


def _correct(
    checks: Sequence[CheckSpec],
    verdicts: list[CheckVerdict],
    pairs: Mapping[str, tuple[RunResult[Any], RunResult[Any]]],
    evaluators: Mapping[str, Evaluator],
    options: GateOptions,
) -> list[str]:
    """Adjust the no_significant_regression checks' tests for multiplicity (holm, or maxt
    where one shared resampling exists, else Holm); returns notes for the report."""
    tested = [
        i
        for i, v in enumerate(verdicts)
        if v.comparison is not None and v.mode == "no_significant_regression"
    ]
    if options.correction == "none" or not tested:
        return []
    method = options.correction
    notes: list[str] = []
    raw = [verdicts[i].comparison.p_value for i in tested]  # type: ignore[union-attr]
    adjusted: dict[int, float] = {}
    if method == "maxt":
        joint = _maxt(verdicts, tested, pairs, options)
        if joint is None:
            method = "holm"
            notes.append(
                "correction maxt needs every tested check to pair the same cases of the same "
                "run on a per-case metric, each metric once; Holm's correction was used instead"
            )
        else:
            # max-T's inflation of its own null's p, applied to the deciding procedure's p
            # (so the corrected p and interval stay that procedure's), never below it
            adjusted = {
                i: min(1.0, p * max(1.0, inflation))
                for i, inflation, p in zip(tested, joint, raw, strict=True)
            }
    if method == "holm":
        adjusted = dict(zip(tested, holm(raw), strict=True))
    for i, p_adj in adjusted.items():
        v = verdicts[i]
        assert v.comparison is not None
        assert v.higher_is_better is not None
        spec = checks[i]
        level = corrected_alpha(_alpha(spec), v.comparison.p_value, p_adj)
        decision = evaluators[v.check_id].decide(level, v.comparison.tested_value)
        comparison = replace(
            v.comparison,
            ci_low=decision.low,
            ci_high=decision.high,
            confidence=decision.confidence,
            correction=method,
            p_adjusted=p_adj,
        )
        status, message = _decide(spec, comparison, v.higher_is_better)
        if v.covered < v.total:
            word = "reference" if v.kind == "vs_reference" else "baseline"
            message += f" ({v.total - v.covered} case(s) not in the {word} or changed since)"
        verdicts[i] = replace(v, status=status, message=message, comparison=comparison)
    return notes


def _maxt(
    verdicts: list[CheckVerdict],
    tested: list[int],
    pairs: Mapping[str, tuple[RunResult[Any], RunResult[Any]]],
    options: GateOptions,
) -> list[float] | None:
    """Per check, max-T's adjusted p over its raw p on one shared null (None: impossible)."""
    from evalkit.stats.significance import paired_bootstrap_many

    keys = {tuple(pairs[verdicts[i].check_id][0].ids()) for i in tested}
    metrics = [verdicts[i].metric for i in tested]
    per_case = all(verdicts[i].comparison.deltas for i in tested)  # type: ignore[union-attr]
    # one shared null needs one other side: drift checks pair with another run
    one_side = len({verdicts[i].kind for i in tested}) == 1
    # max-T's joint null flips cases one by one: with declared clusters it is not the null
    # of these data, so Holm (valid under any dependence) decides instead
    clustered = options.clusters is not None
    if (
        len(keys) != 1
        or len(set(metrics)) != len(metrics)
        or not per_case
        or not one_side
        or clustered
    ):
        return None
    cand_run, base_run = pairs[verdicts[tested[0]].check_id]
    methods = {verdicts[i].comparison.procedure for i in tested}  # type: ignore[union-attr]
    # The sign-flip null for every per-case procedure (t has no resampled null of its
    # own); the centred bootstrap null when every check asked for the bootstrap.
    null = "bootstrap" if methods == {"bootstrap"} else "permutation"
    joint = paired_bootstrap_many(
        cand_run,
        base_run,
        metrics,
        options.n_resamples,
        options.seed,
        method=null,
        correction="maxt",
    )
    return [
        float(r.p_adjusted) / r.p_value if r.p_adjusted is not None and r.p_value > 0 else 1.0
        for r in joint.results
    ]


def _familywise(
    checks: Sequence[CheckSpec],
    verdicts: list[CheckVerdict],
    options: GateOptions,
) -> FamilywiseRate:
    """The chance this gate fails falsely, for the decision it makes (stats.familywise)."""
    specs = {spec.id: spec for spec in checks}
    tested = [v for v in verdicts if v.comparison is not None]
    case_orders = {tuple(d.case_id for d in v.comparison.deltas) for v in tested if v.comparison}
    # the simulation draws independent cases: with declared clusters the report gives the
    # bound that holds under any dependence instead
    shared = len(case_orders) == 1 and options.clusters is None
    entries = []
    for v in tested:
        c = v.comparison
        assert c is not None
        assert v.higher_is_better is not None
        diffs = np.array([d.delta for d in c.deltas]) if shared and c.deltas else None
        entries.append(
            TestedCheck(
                diffs=diffs,
                procedure=c.procedure,
                alpha=_alpha(specs[v.check_id]),
                higher_is_better=v.higher_is_better,
                tested_value=c.tested_value,
                corrected=c.p_adjusted is not None,
                mode=v.mode or "no_significant_regression",
                check_id=v.check_id,
            )
        )
    return familywise_rate(entries, _used_correction(tested, "none"), options.seed)


def _used_correction(verdicts: Sequence[CheckVerdict], otherwise: str) -> str:
    """The correction that decided: Holm where max-T could not run (_correct's note)."""
    used = {
        v.comparison.correction
        for v in verdicts
        if v.comparison is not None and v.comparison.p_adjusted is not None
    }
    return used.pop() if used else otherwise


# ----------------------------------------------------------------------------- slices


def _slices(
    checks: Sequence[CheckSpec],
    verdicts: Sequence[CheckVerdict],
    candidate: RunArtifact,
    pairs: Mapping[str, tuple[RunResult[Any], RunResult[Any]]],
    options: GateOptions,
) -> SliceReport | None:
    """Every per_slice check compared slice by slice, as one FDR family (gate.slices).

    Slices come from the candidate's recorded assignment (the pipeline puts the goldens'
    current one there); the baseline needs none: its cases pair by id.
    """
    wanted = [(spec, v) for spec, v in zip(checks, verdicts, strict=True) if spec.per_slice]
    goldens = candidate.goldens
    if not wanted or goldens is None or goldens.slices is None:
        return None
    tests = []
    for spec, v in wanted:
        if v.comparison is None or spec.id not in pairs or v.higher_is_better is None:
            continue  # no baseline, incomparable or an error: the check says so itself
        cand_run, base_run = pairs[spec.id]
        in_scope = spec.scope if spec.scope is not None else tuple(candidate.result.ids())
        tests.append(
            SliceTest(
                spec.id,
                spec.metric,
                v.higher_is_better,
                cand_run,
                base_run,
                tuple(in_scope),
                spec.method or DEFAULT_GATE_METHOD,
            )
        )
    return slice_family(
        tests,
        goldens.slices,
        options.slices,
        n_resamples=options.n_resamples,
        seed=options.seed,
        clusters=options.clusters,
    )


def _fail_regressed_slices(
    checks: Sequence[CheckSpec], verdicts: list[CheckVerdict], slices: SliceReport
) -> list[CheckVerdict]:
    """A per_slice check fails when any of its slices regressed after FDR control."""
    out = []
    for spec, v in zip(checks, verdicts, strict=True):
        regressed = slices.regressed(v.check_id) if spec.per_slice else []
        if not regressed:
            out.append(v)
            continue
        bad: Status = "fail" if spec.level == "block" else "warn"
        u = suffix(spec.metric)
        named = ", ".join(
            f"{s.slice} (Δ {signed(s.delta or 0.0)}{u}, n={s.n_paired}, "
            f"{p_text(s.p_adjusted, 'FDR-adjusted p')})"
            for s in regressed
        )
        message = (
            f"{v.message}; {len(regressed)} slice(s) regressed significantly after "
            f"{slices.method_name} control at q = {slices.q:g}: {named}"
        )
        out.append(replace(v, status=bad if v.status == "pass" else v.status, message=message))
    return out


# ----------------------------------------------------------------------------- vs reference


def prepare_reference(
    checks: Sequence[CheckSpec], candidate: RunArtifact, reference: Reference | None
) -> tuple[Against, ReferenceReport] | None:
    """The reference side of one gate, or None when no check compares with a reference."""
    if not wants_reference(checks):
        return None
    ref = reference if reference is not None else Reference.none()
    n = len(candidate.result)
    if ref.artifact is None:
        report = ReferenceReport(ref.status, ref.detail, ref.source, n_cases=n, sha=ref.sha)
        word = "expired" if ref.status == "expired" else "missing"
        detail = f"{word} ({ref.detail})" if ref.detail else word
        return Against(None, GoldensDiff(), "vs_reference", detail), report
    diff = goldens_diff(candidate, ref.artifact)
    report = ReferenceReport(
        ref.status,
        ref.detail,
        ref.source,
        run=run_summary(ref.artifact),
        goldens_diff=diff,
        comparable=n - len(diff.added) - len(diff.changed),
        n_cases=n,
        sha=ref.sha or ref.artifact.git_commit,
    )
    return Against(ref.artifact, diff, "vs_reference"), report


def _reference_notes(
    report: ReferenceReport, reference: RunArtifact | None, baseline: RunArtifact | None
) -> list[str]:
    """Report-level lines: what still pairs with the reference, what failed in it."""
    out: list[str] = []
    d = report.goldens_diff
    if report.run is not None and not d.empty:
        parts = [
            f"{len(ids)} {word}"
            for ids, word in ((d.added, "added"), (d.removed, "removed"), (d.changed, "changed"))
            if ids
        ]
        changed = f"; changed: {shown(list(d.changed))}" if d.changed else ""
        out.append(
            f"goldens changed since the reference ({', '.join(parts)}): {report.comparable} of "
            f"{report.n_cases} case(s) remain comparable, and drift checks are decided on "
            f"those{changed}"
        )
    if report.run is not None and baseline is not None and report.run == run_summary(baseline):
        out.append(
            "the reference is the current baseline, so each drift check repeats its "
            "per-PR comparison until later promotions land"
        )
    failed = failed_baseline_note(reference, "reference")
    if failed:
        out.append(failed)
    return out


def evaluate_gate(
    checks: Sequence[CheckSpec],
    candidate: RunArtifact,
    baseline: RunArtifact | None = None,
    options: GateOptions | None = None,
    *,
    reference: Reference | None = None,
) -> GateReport:
    """Decide every check.  Never raises for a check's own problem: it becomes ``error``.

    ``reference`` is what vs_reference (drift) checks compare with
    (:mod:`evalkit.gate.reference`); without one they are ``no-reference``, never a pass.
    """
    opts = options or GateOptions()
    diff = goldens_diff(candidate, baseline) if baseline is not None else GoldensDiff()
    sides = {"vs_baseline": Against(baseline, diff)}
    prepared = prepare_reference(checks, candidate, reference)
    if prepared is not None:
        sides["vs_reference"] = prepared[0]
    verdicts: list[CheckVerdict] = []
    pairs: dict[str, tuple[RunResult[Any], RunResult[Any]]] = {}
    evaluators: dict[str, Evaluator] = {}
    for spec in checks:
        if spec.vs_reference is not None or spec.vs_baseline is not None:
            side = sides["vs_reference" if spec.vs_reference is not None else "vs_baseline"]
            verdicts.append(_vs_baseline(spec, candidate, side, opts, pairs, evaluators))
        else:
            verdicts.append(_threshold(spec, candidate))
    notes = _correct(checks, verdicts, pairs, evaluators, opts)
    # Failed baseline (or reference) cases never turn a check green (gate.inputs' one rule).
    verdicts = [
        account_for_failed_baseline(v, spec, candidate, sides[v.kind].artifact)
        if v.kind in sides
        else v
        for v, spec in zip(verdicts, checks, strict=True)
    ]
    if any(spec.vs_baseline is not None for spec in checks):
        notes.extend(filter(None, [failed_baseline_note(baseline)]))
    if prepared is not None:
        notes.extend(_reference_notes(prepared[1], prepared[0].artifact, baseline))
    slices = _slices(checks, verdicts, candidate, pairs, opts)
    if slices is not None:
        verdicts = _fail_regressed_slices(checks, verdicts, slices)
    if diff.reassigned:
        notes.append(
            f"{len(diff.reassigned)} case(s) moved to other slices since the baseline (still "
            f"paired; per-slice figures use the current slices): {shown(list(diff.reassigned))}"
        )
    tests = [v for v in verdicts if v.comparison is not None]
    familywise = _familywise(checks, verdicts, opts) if tests else None
    if familywise is not None and slices is not None and slices.n_tested:
        familywise = familywise.with_slices(slices.q, slices.method_name)
    return GateReport(
        verdicts=tuple(verdicts),
        candidate=run_summary(candidate),
        baseline=run_summary(baseline) if baseline is not None else None,
        goldens_diff=diff,
        n_vs_baseline_tests=len(tests),
        alpha_familywise=None if familywise is None else familywise.rate,
        correction=_used_correction(verdicts, opts.correction),
        familywise=familywise,
        notes=(*opts.extra_notes, *notes),
        reference=None if prepared is None else prepared[1],
        slices=slices,
    )
