"""What the gate refuses to decide on: inputs that would make a verdict a lie."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from evalkit.errors import ArtifactError, CheckError, ComparisonError, InputError

if TYPE_CHECKING:
    from evalkit._model.golden_cases import GoldenSet
    from evalkit._spec.artifact import RunArtifact
    from evalkit.gate.model import CheckVerdict

SHOWN_IDS = 10

# What to do about a stored run that cannot serve, per role (the reference is pinned).
_REMAKE = {"baseline": "make a new baseline", "reference": "pin a newer reference"}


@dataclass(frozen=True)
class GoldensDiff:
    """How the golden set moved between baseline and candidate."""

    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    # Cases in both whose slices differ (both runs record a slice assignment): still
    # paired (a slice label does not change what a case asks), but reported.
    reassigned: tuple[str, ...] = ()

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.changed)


def goldens_diff(candidate: RunArtifact, baseline: RunArtifact) -> GoldensDiff:
    """Which cases the candidate added, dropped or changed (by golden fingerprint)."""
    cand_ids = candidate.result.ids()
    base_ids = set(baseline.result.ids())
    cand_set = set(cand_ids)
    changed: list[str] = []
    if candidate.goldens is not None and baseline.goldens is not None:
        cfp, bfp = candidate.goldens.cases, baseline.goldens.cases
        changed = [
            i for i in cand_ids if i in base_ids and i in cfp and i in bfp and cfp[i] != bfp[i]
        ]
    reassigned: tuple[str, ...] = ()
    cs = candidate.goldens.slices if candidate.goldens is not None else None
    bs = baseline.goldens.slices if baseline.goldens is not None else None
    if cs is not None and bs is not None:
        reassigned = cs.reassigned(bs)
    return GoldensDiff(
        added=tuple(i for i in cand_ids if i not in base_ids),
        removed=tuple(i for i in baseline.result.ids() if i not in cand_set),
        changed=tuple(changed),
        reassigned=reassigned,
    )


def shown(ids: Sequence[str], limit: int = SHOWN_IDS) -> str:
    """``a, b, c (+7 more)``: a bounded list of ids for a one-line message."""
    head = ", ".join(ids[:limit])
    return head + (f" (+{len(ids) - limit} more)" if len(ids) > limit else "")


def label(art: RunArtifact) -> str:
    """The artefact's file when it was read from one, else its run name."""
    source = getattr(art, "source", None)
    return str(source) if source else f"run {art.name!r}"


def ran_in_scope(spec: Any, art: RunArtifact) -> list[Any]:
    """The rows a check covers that produced a result (did not fail)."""
    scope = set(spec.scope) if spec.scope else None
    return [
        r
        for r in art.result.per_query
        if (scope is None or r.query_id in scope) and not getattr(r, "error", None)
    ]


def _failed_ids(art: RunArtifact) -> list[str]:
    return [r.query_id for r in art.result.per_query if getattr(r, "error", None)]


# ----------------------------------------------------------------------------- candidate


def check_candidate(
    candidate: RunArtifact,
    goldens: GoldenSet,
    checks: Iterable[Any],
    *,
    config_name: str | None = None,
) -> None:
    """Refuse a candidate that is not a full, current answer to ``goldens``."""
    where = label(candidate)
    source = goldens.source or "the goldens"
    if config_name and candidate.config_name and candidate.config_name != config_name:
        raise ArtifactError(
            f"{where}: the candidate was made by config {candidate.config_name!r}, but this gate "
            f"runs config {config_name!r}; gate it with that config or re-run the candidate"
        )
    golden_ids = goldens.ids()
    row_ids = set(candidate.result.ids())
    missing = [i for i in golden_ids if i not in row_ids]
    if missing:
        raise ArtifactError(
            f"{where}: no row for {len(missing)} of the {len(golden_ids)} golden case(s) in "
            f"{source}: {shown(missing)}; a gate covers every golden case: re-run the candidate "
            "(`evalkit run`) or merge every shard"
        )
    known = set(golden_ids)
    extra = [i for i in candidate.result.ids() if i not in known]
    if extra:
        raise ArtifactError(
            f"{where}: {len(extra)} row(s) for case(s) {source} does not have: {shown(extra)}; "
            "the candidate was made from another golden set: re-run it with this config"
        )
    if candidate.goldens is None:
        raise ArtifactError(
            f"{where}: the candidate records no golden-case fingerprints, so the gate cannot "
            f"tell whether it answers {source} as it is now; make it with `evalkit run`"
        )
    recorded = candidate.goldens.cases
    current = goldens.case_fingerprints()
    changed = [i for i in golden_ids if recorded.get(i) != current[i]]
    if changed:
        raise ArtifactError(
            f"{where}: stale candidate: {len(changed)} golden case(s) changed in {source} since "
            f"it was made: {shown(changed)}; re-run the candidate against the current goldens"
        )
    for spec in checks:
        _check_metric_recorded(spec, candidate, "candidate")


def _check_metric_current(spec: Any, art: RunArtifact) -> None:
    """The candidate's numbers must come from the metric as it is defined now."""
    from evalkit._spec.artifact import metric_info

    recorded = art.metrics[spec.metric]
    now = metric_info(spec.metric)
    if recorded.kind != now.kind:
        raise ArtifactError(
            f"{label(art)}: check {spec.id!r}: the candidate records {spec.metric!r} as a "
            f"metric of kind {recorded.kind!r}, but it is registered with kind {now.kind!r}; "
            "the artefact was edited or made by other code: re-run it"
        )
    if recorded.fingerprint != now.fingerprint:
        raise ArtifactError(
            f"{label(art)}: check {spec.id!r}: {spec.metric!r} was computed with another "
            f"definition (fingerprint {recorded.fingerprint} -> {now.fingerprint} now); "
            "re-run the candidate with this evalkit and metric code"
        )


def _check_metric_recorded(spec: Any, art: RunArtifact, role: str) -> None:
    """A check's metric must be in the artefact, with a value on every case that ran."""
    where = label(art)
    metric = spec.metric
    if metric not in art.metrics:
        raise CheckError(
            f"{where}: check {spec.id!r} gates metric {metric!r}, which the {role} does not "
            f"record (it records: {', '.join(art.metrics) or 'none'}); re-run it with a config "
            f"whose metrics include {metric!r}"
        )
    if role == "candidate":
        _check_metric_current(spec, art)
    if art.metrics[metric].kind != "case":
        _check_aggregate_computable(spec, art, role)
        return
    lacking = [r.query_id for r in ran_in_scope(spec, art) if metric not in r.metrics]
    if lacking:
        raise CheckError(
            f"{where}: check {spec.id!r}: metric {metric!r} has no value on {len(lacking)} "
            f"case(s) of the {role} that ran: {shown(lacking)}; the artefact was edited or "
            "truncated: re-run it"
        )


def _check_aggregate_computable(spec: Any, art: RunArtifact, role: str) -> None:
    """A whole-run aggregate must be computable from the rows that ran (else exit 2, not 1)."""
    from evalkit._model.results import RunResult
    from evalkit.errors import MetricError

    usable = ran_in_scope(spec, art)
    if not usable:
        return  # every case failed: the run's own failure is reported (exit 3)
    try:
        RunResult(art.name, usable).aggregate(spec.metric)
    except MetricError as exc:
        raise CheckError(f"{label(art)}: check {spec.id!r} ({role}): {exc}") from None


# ----------------------------------------------------------------------------- baseline


def check_baseline(
    baseline: RunArtifact,
    candidate: RunArtifact,
    checks: Sequence[Any],
    *,
    role: str = "baseline",
) -> None:
    """Refuse a baseline the user chose that no vs_baseline check could be paired with."""
    where = label(baseline)
    compared = [
        spec
        for spec in checks
        if (spec.vs_reference if role == "reference" else spec.vs_baseline) is not None
    ]
    remake = _REMAKE[role]
    # Another config's baseline is refused where it is found (refuse_other_config).
    if baseline.path != candidate.path:
        raise ComparisonError(
            f"{where}: a {baseline.path} run cannot be the {role} of a {candidate.path} run "
            f"({label(candidate)})"
        )
    if baseline.goldens is None and compared:
        raise ArtifactError(
            f"{where}: the {role} records no golden-case fingerprints, so the gate cannot "
            "tell which cases changed since it was made; make it with `evalkit run`"
        )
    base_rows = {r.query_id: r for r in baseline.result.per_query}
    changed = set(goldens_diff(candidate, baseline).changed)
    for spec in compared:
        _check_metric_recorded(spec, baseline, role)
        scope = list(spec.scope) if spec.scope else candidate.result.ids()
        shared = [i for i in scope if i in base_rows]
        if not shared:
            raise ComparisonError(
                f"{where}: check {spec.id!r}: the {role} shares none of the {len(scope)} "
                f"case(s) it covers (the {role}'s cases: {shown(list(base_rows))}); it was "
                f"made from another golden set: pass the {role} of this one"
            )
        unchanged = [i for i in shared if i not in changed]
        if not unchanged:
            raise ComparisonError(
                f"{where}: check {spec.id!r}: every one of the {len(shared)} shared case(s) "
                f"changed in the goldens since the {role} was made: {shown(shared)}; "
                f"{remake} from the current goldens"
            )
        usable = [i for i in unchanged if not getattr(base_rows[i], "error", None)]
        if not usable:
            raise ComparisonError(
                f"{where}: check {spec.id!r}: {len(unchanged)} {role} case(s) failed, so "
                f"none can be paired: {shown(unchanged)}; {remake} once the target answers"
            )


# ----------------------------------------------------------------------------- failed baseline


def account_for_failed_baseline(
    verdict: CheckVerdict,
    spec: Any,
    candidate: RunArtifact,
    baseline: RunArtifact | None,
) -> CheckVerdict:
    """Say which baseline (or reference) cases failed, and never let them turn a check green."""
    if baseline is None or verdict.status == "error":
        return verdict
    failed = set(_failed_ids(baseline))
    if not failed:
        return verdict
    role = "reference" if verdict.kind == "vs_reference" else "baseline"
    scope = list(spec.scope) if spec.scope else candidate.result.ids()
    cand_failed = set(_failed_ids(candidate))
    hit = [i for i in scope if i in failed and i not in cand_failed]
    if not hit:
        return verdict
    reason = f"{len(hit)} {role} case(s) failed: {shown(hit)}"
    if verdict.comparison is None and verdict.status in ("no-baseline", "no-reference"):
        return replace(
            verdict,
            message=f"{reason}; no case in scope could be paired, so nothing was compared",
        )
    if verdict.comparison is None:
        return verdict
    decided = f"decided on {verdict.covered} of {verdict.total} case(s); {reason}"
    if verdict.status == "pass":
        return replace(
            verdict,
            status="warn",
            message=f"{verdict.message}; {decided} — not a pass: "
            + ("re-pin the reference" if role == "reference" else "re-make the baseline"),
        )
    return replace(verdict, message=f"{verdict.message}; {decided}")


def failed_baseline_note(baseline: RunArtifact | None, role: str = "baseline") -> str | None:
    """A report-level line naming the baseline's failed cases (None when there are none)."""
    if baseline is None:
        return None
    failed = _failed_ids(baseline)
    if not failed:
        return None
    fix = "re-pin a reference" if role == "reference" else "re-make the baseline"
    return (
        f"{len(failed)} {role} case(s) failed and could not be paired: {shown(failed)} "
        f"({label(baseline)}); {fix} so every case is compared"
    )


def refuse_other_config(baseline: RunArtifact, config_name: str, origin: str) -> None:
    """A baseline recorded for another config is refused, never compared."""
    recorded = baseline.config_name
    if recorded is not None and recorded != config_name:
        raise InputError(
            f"{origin}: this baseline is config {recorded!r}, not {config_name!r}; give each "
            "config its own artifact name (baseline.name) or promote one for "
            f"{config_name!r}"
        )
