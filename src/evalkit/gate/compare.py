"""``evalkit compare``: paired tables of runs against a reference run.

Paired by the gate's rule over the cases every run shares; each metric's comparisons
are one Holm family (docs/design/code-notes.md).  Rendering: evalkit.report.compare_tables.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from evalkit._model.metric_identity import describe_params
from evalkit._model.results import RunResult
from evalkit._spec.artifact import MetricInfo, RunArtifact
from evalkit.errors import ComparisonError, EvalkitError, InputError
from evalkit.gate.inputs import goldens_diff, label, shown
from evalkit.gate.procedure import case_deltas, pair_for_gate

if TYPE_CHECKING:
    from evalkit.gate.slices import SliceReport
    from evalkit.stats.clustered_decide import ClusterLabels
    from evalkit.stats.pairing import CaseMatch
    from evalkit.stats.procedures import Evaluator

#: The corrections ``evalkit compare`` offers (max-T resamples the metrics of one pair).
COMPARE_CORRECTIONS: Final = ("holm", "none")

#: What a row says about its run against the reference.
BETTER, WORSE, NO_CHANGE, INCOMPARABLE = "better", "worse", "no detectable change", "incomparable"
HIGHER, LOWER = "higher", "lower"  # significant, for a metric of unknown direction


@dataclass(frozen=True)
class CompareRow:
    """One metric of one run against the reference, on the paired cases (run minus reference)."""

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
    confidence: float = 0.95  # the level of [ci_low, ci_high]
    p_adjusted: float | None = None  # the corrected p that decides (None: no correction)
    correction: str = "none"

    @property
    def direction(self) -> str:
        """better / worse / no detectable change / incomparable (higher / lower: no polarity)."""
        if self.incomparable:
            return INCOMPARABLE
        if not self.significant:
            return NO_CHANGE
        up = self.ci_low > 0
        if self.higher_is_better is None:
            return HIGHER if up else LOWER
        return BETTER if up == self.higher_is_better else WORSE

    @property
    def deciding_p(self) -> float:
        """The p the decision reads: the adjusted one under a correction."""
        return self.p_value if self.p_adjusted is None else self.p_adjusted


def _why_unpaired(a: RunArtifact, b: RunArtifact, changed: set[str]) -> str:
    """Name both files and the reason no case pairs: none shared, all failed, all changed."""
    la, lb = label(a), label(b)
    b_ids = set(b.result.ids())
    shared = [i for i in a.result.ids() if i in b_ids]
    if not shared:
        return (
            f"{la} and {lb} share no case (first cases: {shown(a.result.ids(), 3)} vs "
            f"{shown(b.result.ids(), 3)}); they were made from different golden sets"
        )
    failed = {
        r.query_id for art in (a, b) for r in art.result.per_query if getattr(r, "error", None)
    }
    unchanged = [i for i in shared if i not in changed]
    if not unchanged:
        return (
            f"{la} and {lb}: every one of the {len(shared)} shared case(s) changed in the "
            f"goldens between the two runs: {shown(shared)}"
        )
    return (
        f"{la} and {lb}: the {len(unchanged)} shared case(s) failed in one run or the other: "
        f"{shown([i for i in unchanged if i in failed])}"
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


@dataclass(frozen=True)
class RunComparison:
    """One compared run: its label and one row per metric, in the table's metric order."""

    artifact: RunArtifact
    label: str
    rows: tuple[CompareRow, ...]


@dataclass(frozen=True)
class CompareTable:
    """Runs against a reference on the cases every run shares, corrected per metric."""

    reference: RunArtifact
    reference_label: str
    comparisons: tuple[RunComparison, ...]  # in the order the runs were given
    metrics: tuple[str, ...]
    reference_values: dict[str, float]  # each metric's mean over the paired cases
    n: int  # paired cases
    correction: str
    alpha: float
    notes: tuple[str, ...] = ()

    def row(self, index: int, metric: str) -> CompareRow:
        return self.comparisons[index].rows[self.metrics.index(metric)]


def run_labels(arts: Sequence[RunArtifact]) -> list[str]:
    """Each run's full name; its file where two runs share a name (one config's runs do)."""
    names = [a.name for a in arts]
    return [str(a.source) if names.count(a.name) > 1 and a.source else a.name for a in arts]


def _common_cases(
    runs: Sequence[RunArtifact], reference: RunArtifact
) -> tuple[list[RunResult[Any]], RunResult[Any], list[str], str]:
    """Each run and the reference on the ids paired in every run, those ids, what was left out."""
    matches = []
    for art in runs:
        match = pair_for_gate(art.result.per_query, art, reference, goldens_diff(art, reference))
        if not match.ids:
            raise ComparisonError(_why_unpaired(art, reference, set(match.changed)))
        matches.append(match)
    shared = set.intersection(*(set(m.ids) for m in matches))
    ids = [i for i in matches[0].ids if i in shared]
    if not ids:
        raise ComparisonError(
            f"no case is paired in every run: {', '.join(label(a) for a in runs)} against "
            f"{label(reference)} pair {', '.join(str(len(m.ids)) for m in matches)} case(s) "
            "but none in common; compare fewer runs at a time"
        )
    ref_run: RunResult[Any] = RunResult(reference.name, [matches[0].rows_b[i] for i in ids])
    paired: list[RunResult[Any]] = [
        RunResult(a.name, [m.rows_a[i] for i in ids]) for a, m in zip(runs, matches, strict=True)
    ]
    return paired, ref_run, ids, _left_out(matches, shared)


def _left_out(matches: Sequence[CaseMatch], shared: set[str]) -> str:
    """Why the reference's other cases are not in the table, or "" when none is left out."""
    failed: set[str] = set()
    changed: set[str] = set()
    missing: set[str] = set()
    for m in matches:
        failed.update(m.failed_a, m.failed_b)
        changed.update(m.changed)
        missing.update(m.only_b)
    ref_ids = set(matches[0].rows_b)
    left = ref_ids - shared
    if not left:
        return ""
    parts = [
        f"{len(group & left)} {why}"
        for group, why in (
            (failed, "failed in some run"),
            (changed, "with a changed golden"),
            (missing, "not in every run"),
        )
        if group & left
    ]
    return (
        f"{len(left)} of the reference's {len(ref_ids)} case(s) left out ({', '.join(parts)}): "
        f"{shown(sorted(left))}"
    )


def _shared_metrics(runs: Sequence[RunArtifact], reference: RunArtifact) -> tuple[list[str], str]:
    everyone = [m for m in runs[0].metrics if all(m in a.metrics for a in (*runs, reference))]
    if not everyone:
        names = " vs ".join(", ".join(a.metrics) or "none" for a in (*runs, reference))
        files = " and ".join(label(a) for a in (*runs, reference))
        raise ComparisonError(f"{files} record no metric in common ({names})")
    seen = {m for a in (*runs, reference) for m in a.metrics}
    rest = sorted(seen - set(everyone))
    note = f"not recorded by every run, left out: {', '.join(rest)}" if rest else ""
    return everyone, note


def _compare_one(
    run: RunResult[Any],
    ref: RunResult[Any],
    metric: str,
    infos: tuple[MetricInfo, MetricInfo],
    *,
    alpha: float,
    n_resamples: int,
    seed: int,
    clusters: ClusterLabels | None = None,
) -> tuple[CompareRow, Evaluator]:
    """One metric of one run against the reference, by the gate's default procedure.

    The interval, p and direction come from one procedure (stats.procedures), so
    the row cannot say "better" beside an interval that contains 0.
    """
    from evalkit.stats.clustered_decide import evaluator_by_cluster
    from evalkit.stats.ties import WinLossTie, count

    info_run, info_ref = infos
    note = _definition_note(info_run, info_ref)
    hib = info_run.higher_is_better
    try:
        evaluator, paired = evaluator_by_cluster(
            run,
            ref,
            metric,
            clusters=clusters,
            n_resamples=n_resamples,
            seed=seed,
            refuse_maximum=False,
        )
        res = evaluator.decide(alpha)
    except EvalkitError as exc:
        raise ComparisonError(f"metric {metric!r}: {exc}") from None
    wlt = WinLossTie(0, 0, 0)
    if info_run.kind == "case":
        wlt = count(case_deltas(run, ref, metric, hib)[1])
    row = CompareRow(
        metric=metric,
        kind=info_run.kind,
        higher_is_better=hib,
        # means over the paired cases, the ones delta is computed on
        value_a=run.value(metric),
        value_b=ref.value(metric),
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
        confidence=res.confidence,
    )
    return row, evaluator


def _corrected(
    rows: list[CompareRow], evaluators: list[Evaluator], correction: str, alpha: float
) -> list[CompareRow]:
    """One metric's rows with Holm's adjustment across its comparable comparisons."""
    from evalkit.stats.correction import holm
    from evalkit.stats.procedures import corrected_alpha

    tested = [i for i, r in enumerate(rows) if not r.incomparable]
    if correction == "none" or not tested:
        return rows
    out = list(rows)
    adjusted = holm([rows[i].p_value for i in tested])
    for i, p_adj in zip(tested, adjusted, strict=True):
        level = corrected_alpha(alpha, rows[i].p_value, p_adj)
        decision = evaluators[i].decide(level)
        out[i] = replace(
            rows[i],
            ci_low=decision.low,
            ci_high=decision.high,
            confidence=decision.confidence,
            significant=decision.excludes_null,
            p_adjusted=p_adj,
            correction=correction,
        )
    return out


def check_compare_correction(correction: str) -> str:
    from evalkit.stats.correction import check_correction

    chosen = check_correction(correction)
    if chosen not in COMPARE_CORRECTIONS:
        raise InputError(
            f"--correction {chosen} is not available for compare: max-T resamples the "
            "metrics of one pair of runs, not several runs; use holm (the default) or none"
        )
    return chosen


def compare_runs(
    runs: Sequence[RunArtifact],
    reference: RunArtifact,
    *,
    correction: str = "holm",
    alpha: float = 0.05,
    n_resamples: int = 10_000,
    seed: int = 42,
    cluster: str | None = None,
) -> CompareTable:
    """Every metric all the runs recorded, each run against ``reference``, two-sided.

    ``cluster`` (``--cluster FIELD``): infer by the cases' clusters under that field, as
    the gate does with ``clusters:`` declared (the assignment the runs recorded, else the
    field in the rows' meta)."""
    if not runs:
        raise InputError("compare needs at least one run besides the reference")
    if not 0.0 < alpha < 1.0:
        raise InputError(f"alpha must lie strictly between 0 and 1, got {alpha!r}")
    correction = check_compare_correction(correction)
    paired_runs, ref_run, ids, left_note = _common_cases(runs, reference)
    metrics, metric_note = _shared_metrics(runs, reference)
    clusters, cluster_note = _clusters(cluster, runs, reference, ids)
    table_rows: list[list[CompareRow]] = [[] for _ in runs]
    for metric in metrics:
        rows: list[CompareRow] = []
        evaluators: list[Evaluator] = []
        for art, run in zip(runs, paired_runs, strict=True):
            infos = (art.metrics[metric], reference.metrics[metric])
            row, evaluator = _compare_one(
                run,
                ref_run,
                metric,
                infos,
                alpha=alpha,
                n_resamples=n_resamples,
                seed=seed,
                clusters=clusters,
            )
            rows.append(row)
            evaluators.append(evaluator)
        for k, row in enumerate(_corrected(rows, evaluators, correction, alpha)):
            table_rows[k].append(row)
    labels = run_labels([*runs, reference])
    return CompareTable(
        reference=reference,
        reference_label=labels[-1],
        comparisons=tuple(
            RunComparison(art, lab, tuple(rows))
            for art, lab, rows in zip(runs, labels[:-1], table_rows, strict=True)
        ),
        metrics=tuple(metrics),
        reference_values={m: ref_run.value(m) for m in metrics},
        n=len(ids),
        correction=correction,
        alpha=alpha,
        notes=tuple(n for n in (left_note, metric_note, cluster_note) if n),
    )


def _clusters(
    name: str | None, runs: Sequence[RunArtifact], reference: RunArtifact, ids: Sequence[str]
) -> tuple[ClusterLabels | None, str]:
    """The cases' clusters under ``--cluster NAME`` and the line that counts them."""
    if name is None:
        return None, ""
    from evalkit.stats.clustered_decide import cluster_labels, clustering_of

    labels = cluster_labels(name, reference, *runs)
    clustering = clustering_of(list(ids), labels)
    own = f"; {clustering.own} without one, each its own cluster" if clustering.own else ""
    return labels, (
        f"{clustering.n} cases in {clustering.count} clusters by {name}{own}: inferred by cluster"
    )


def choose_reference(
    runs: Sequence[Path], reference: Path | None, *, html: Path | None = None
) -> tuple[list[Path], Path]:
    """The compared files, in the order given, and the reference file.

    The reference is ``--reference`` (one of the runs, or a further file), else the
    last run, so ``compare A B`` is A against B.  A run given twice is refused: its
    two rows would be one run compared twice, inflating the correction's family.
    """
    import os

    given = list(runs)
    if reference is None:
        if len(given) < 2:
            raise InputError(
                "compare needs two runs or more (the last is the reference), or --reference RUN"
            )
        ref, compared = given[-1], given[:-1]
    else:
        ref = reference
        same = [i for i, p in enumerate(given) if os.path.realpath(p) == os.path.realpath(ref)]
        compared = [p for i, p in enumerate(given) if i != (same[-1] if same else -1)]
        if not compared:
            raise InputError(f"nothing to compare with the reference {ref}: name another run")
    seen: dict[str, Path] = {}
    for path in compared:
        key = os.path.realpath(path)
        if key in seen:
            raise InputError(f"{path} is given twice (as {seen[key]} and {path}): each run once")
        seen[key] = path
    if html is not None and len(compared) > 1:
        raise InputError(
            f"--html draws two runs, and {len(compared)} runs are compared with {ref}: "
            "drop --html, or write --format markdown"
        )
    return compared, ref


def compare_artifacts(
    a: RunArtifact, b: RunArtifact, *, n_resamples: int = 10_000, seed: int = 42
) -> list[CompareRow]:
    """Every metric both artefacts recorded, A against B (the two-run table)."""
    table = compare_runs([a], b, n_resamples=n_resamples, seed=seed)
    return list(table.comparisons[0].rows)


def compare_slices(
    run: RunArtifact,
    reference: RunArtifact,
    dimensions: Sequence[str],
    *,
    metrics: Sequence[str] | None = None,
    n_resamples: int = 10_000,
    seed: int = 42,
    cluster: str | None = None,
) -> SliceReport:
    """``evalkit compare RUN REF --by DIMENSION[,...]``: every shared metric slice by slice.

    The gate's own family computation (:func:`evalkit.gate.slices.slice_family`) with the
    default settings (q = 0.05, ``auto``, 30 cases), on the gate's pairing and with the
    run's recorded slices; the family is the dimension's slices × every shared metric
    with a known direction (or ``metrics``, ``--metric``), so its figures equal a gate
    whose ``per_slice`` checks gate those metrics on those dimensions.
    """
    from evalkit._util.suggest import did_you_mean
    from evalkit.gate.slices import SliceSettings, SliceTest, slice_family

    recorded = run.goldens.slices if run.goldens is not None else None
    if recorded is None:
        raise InputError(
            f"{label(run)}: records no slice assignment, so --by has nothing to group by; "
            "declare slices: in evalkit.yaml and re-run it"
        )
    for dimension in dimensions:
        if dimension not in recorded.dimensions:
            raise InputError(
                f"--by {dimension}: {label(run)} records slices by "
                f"{', '.join(recorded.dimensions)}{did_you_mean(dimension, recorded.dimensions)}"
            )
    shared, _ = _shared_metrics([run], reference)
    for metric in metrics or ():
        if metric not in shared:
            raise InputError(
                f"--metric {metric}: not a metric both runs record (they share "
                f"{', '.join(shared) or 'none'}){did_you_mean(metric, shared)}"
            )
    chosen = list(metrics) if metrics else shared
    (cand,), base, ids, _ = _common_cases([run], reference)
    tests = [
        SliceTest(metric, metric, hib, cand, base, tuple(run.result.ids()))
        for metric in chosen
        if (hib := run.metrics[metric].higher_is_better) is not None
    ]
    clusters, _ = _clusters(cluster, [run], reference, ids)
    return slice_family(
        tests,
        recorded,
        SliceSettings(),
        n_resamples=n_resamples,
        seed=seed,
        dimensions=dimensions,
        clusters=clusters,
    )
