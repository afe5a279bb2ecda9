"""What the gate decides, as data: each check's verdict, the run summaries, the report.

The report model the reporters read (:mod:`evalkit.report`) and the procedure fills
(:mod:`evalkit.gate.procedure`); nothing here decides anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

from evalkit._model.results import CaseResult
from evalkit._spec.artifact import RunArtifact
from evalkit._util.pvalues import p_label
from evalkit.exit_codes import ExitCode
from evalkit.gate.inputs import GoldensDiff
from evalkit.gate.slices import SliceReport, SliceSettings
from evalkit.stats.familywise import FamilywiseRate
from evalkit.stats.procedures import PROCEDURE_NAMES

if TYPE_CHECKING:
    from evalkit._spec.case_filter import Subset

Status = Literal["pass", "fail", "warn", "no-baseline", "no-reference", "incomparable", "error"]
# "incomplete": decided on a subset of the cases (-k/--case) with nothing blocking.
Overall = Literal["pass", "warn", "fail", "error", "incomplete"]

WORST_CASES = 10


@dataclass(frozen=True)
class CaseDelta:
    """One case's values on both sides; ``delta`` is candidate minus baseline."""

    case_id: str
    candidate: float
    baseline: float
    delta: float


@dataclass(frozen=True)
class Comparison:
    """The statistics behind a vs_baseline verdict.

    ``baseline_value`` and ``candidate_value`` are the means over the paired
    cases -- the same cases ``delta`` is computed on -- so before → after and Δ
    always agree, whatever was left out of the pairing.
    """

    baseline_value: float
    delta: float
    ci_low: float
    ci_high: float
    confidence: float
    p_value: float
    method: str
    n_paired: int
    n_resamples: int
    wins: int
    losses: int
    ties: int
    mde: float | None = None
    margin: float | None = None
    warnings: tuple[str, ...] = ()
    # Every paired case, in the candidate's order (empty for aggregates): the reports'
    # per-case details and the HTML difference plot are drawn from it.
    deltas: tuple[CaseDelta, ...] = ()
    # Set when the checks file asks for a multiple-comparison correction.
    correction: str = "none"
    p_adjusted: float | None = None
    # The procedure that decided (stats.procedures: t, bootstrap, permutation);
    # the interval and p above are its own, so they agree with the status.
    procedure: str = "bootstrap"
    # The Δ the p-value tests: 0, or the margin on the bad side for non_inferiority.
    tested_value: float = 0.0
    candidate_value: float | None = None
    # The spec's percentile bootstrap interval (low, high, confidence: the check's own,
    # uncorrected) where another procedure decided: shown in the details, with why it
    # did not decide.  None where the bootstrap decided, for aggregates, or above
    # stats.procedures.BOOTSTRAP_SHOWN_UP_TO paired cases.
    bootstrap_ci: tuple[float, float, float] | None = None
    # With declared clusters: the clusters the paired cases fall in, and how many of
    # those cases declared none (each its own cluster).
    clusters: int | None = None
    own_clusters: int | None = None
    # no_significant_regression's min_effect δ: the p tests Δ = ∓δ (tested_value).
    min_effect: float | None = None

    @property
    def decided_by(self) -> str:
        """The deciding procedure in words (``paired t``), as every report names it."""
        return PROCEDURE_NAMES.get(self.procedure, self.procedure)

    @property
    def deciding_p(self) -> float:
        """The p the status was decided by: the adjusted one under a correction."""
        return self.p_value if self.p_adjusted is None else self.p_adjusted

    @property
    def p_label(self) -> str:
        """How :attr:`deciding_p` is labelled wherever it is printed (evalkit._util.pvalues)."""
        return p_label(
            self.correction if self.p_adjusted is not None else "none",
            self.margin is not None,
            self.min_effect is not None,
        )


@dataclass(frozen=True)
class CheckVerdict:
    """Everything a reviewer needs to trust one check's status at a glance."""

    check_id: str
    metric: str
    # vs_reference: a drift check, compared with the pinned reference (evalkit.gate.reference)
    kind: Literal["threshold", "vs_baseline", "vs_reference"]
    level: Literal["block", "warn"]
    status: Status
    message: str
    covered: int
    total: int
    observed: float | None = None
    op: str | None = None
    threshold: float | None = None
    mode: str | None = None
    higher_is_better: bool | None = None
    comparison: Comparison | None = None
    worst_cases: tuple[CaseDelta, ...] = ()
    # A no-reference verdict blocks only when the checks file sets require_reference.
    required: bool = False
    # Which cases an aggregate counted when not every covered row (e.g. "human-graded").
    counts: str | None = None

    @property
    def coverage(self) -> str:
        """``16/16 cases``, or ``12/24 cases (human-graded)`` for a metric counting some."""
        which = f" ({self.counts})" if self.counts else ""
        return f"{self.covered}/{self.total} cases{which}"

    @property
    def blocking(self) -> bool:
        """True when this verdict stops the merge."""
        if self.level != "block":
            return False
        return self.status in ("fail", "error", "incomparable") or (
            self.status == "no-reference" and self.required
        )


@dataclass(frozen=True)
class RunSummary:
    name: str
    n_cases: int
    failed: tuple[tuple[str, str], ...]
    git_commit: str | None
    created_at: str
    config_name: str | None


@dataclass(frozen=True)
class ReferenceReport:
    """The drift checks' side of the report: what the reference was and what still pairs.

    ``status`` is the store's answer (found / missing / expired); ``comparable`` counts
    the candidate's cases present in the reference with an unchanged golden, out of
    ``n_cases`` (the candidate's), so a report can say how many remain comparable.
    """

    status: str
    detail: str
    source: str
    run: RunSummary | None = None
    goldens_diff: GoldensDiff = field(default_factory=GoldensDiff)
    comparable: int = 0
    n_cases: int = 0
    sha: str | None = None


@dataclass(frozen=True)
class StoppedEarly:
    """A gate that ran some cases in a seeded random order and stopped (stop_early:).

    ``settled``: every blocking check was settled by its anytime-valid confidence
    sequence, so the verdict holds for the whole golden set; otherwise a budget ran out
    first and the run is incomplete: the fixed-n verdict on the cases run, never a pass.
    """

    cases_run: int
    cases_total: int
    reason: str
    settled: bool
    cost_usd: float | None = None
    cost_usd_estimated_full: float | None = None
    undecided: tuple[str, ...] = ()  # blocking checks not settled when it stopped

    def line(self) -> str:
        """``stopped after 140 of 1,000 cases: every check settled (anytime-valid); ...``."""
        text = f"stopped after {self.cases_run:,} of {self.cases_total:,} cases: {self.reason}"
        if self.cost_usd is not None:
            text += f"; judge cost ${self.cost_usd:,.2f}"
            if self.cost_usd_estimated_full is not None:
                text += f" of an estimated ${self.cost_usd_estimated_full:,.2f}"
        if self.undecided:
            text += f"; undecided: {', '.join(self.undecided)}"
        return text

    def coverage(self) -> str:
        """``140/1,000 cases (stopped early)``: never mistaken for a subset gate."""
        return f"{self.cases_run:,}/{self.cases_total:,} cases (stopped early)"


@dataclass(frozen=True)
class GateReport:
    verdicts: tuple[CheckVerdict, ...]
    candidate: RunSummary
    baseline: RunSummary | None
    goldens_diff: GoldensDiff
    n_vs_baseline_tests: int
    alpha_familywise: float | None
    correction: str = "none"
    notes: tuple[str, ...] = ()
    # How alpha_familywise was obtained (estimated for this gate's decision, or a bound).
    familywise: FamilywiseRate | None = None
    # Set when a check compares with the reference (vs_reference): evalkit.gate.reference.
    reference: ReferenceReport | None = None
    # Set when the gate ran on some cases only (-k/--case): never a pass of the whole.
    subset: Subset | None = None
    # Set when a check compares slice by slice (per_slice: true): evalkit.gate.slices.
    slices: SliceReport | None = None
    # Set when the gate stopped before the last case (stop_early:): evalkit._app.early_stop.
    stopped_early: StoppedEarly | None = None

    @property
    def blocking_failures(self) -> list[CheckVerdict]:
        return [v for v in self.verdicts if v.blocking]

    @property
    def verdict(self) -> Overall:
        """The headline: error (the run broke), fail, incomplete (a subset), warn, or pass."""
        if self.candidate.failed:
            return "error"
        if self.blocking_failures:
            return "fail"
        if self.subset is not None:
            return "incomplete"
        if self.stopped_early is not None and not self.stopped_early.settled:
            return "incomplete"  # a budget ran out before every check was settled
        # A drift check that could not run is never green (docs/drift.md).
        if any(v.status in _NOT_GREEN for v in self.verdicts):
            return "warn"
        return "pass"

    @property
    def exit_code(self) -> ExitCode:
        """OK on pass or warn, CHECK_FAILED when a blocking check failed, RUNTIME when
        cases of the candidate run failed, INCOMPLETE when nothing blocked on a subset."""
        return _EXIT_CODES[self.verdict]


_NOT_GREEN: Final = ("fail", "warn", "error", "incomparable", "no-baseline", "no-reference")

_EXIT_CODES: dict[Overall, ExitCode] = {
    "pass": ExitCode.OK,
    "warn": ExitCode.OK,
    "fail": ExitCode.CHECK_FAILED,
    "error": ExitCode.RUNTIME,
    "incomplete": ExitCode.INCOMPLETE,
}


@dataclass(frozen=True)
class GateOptions:
    n_resamples: int = 10_000
    seed: int = 42
    require_baseline: bool = False
    correction: str = "none"
    extra_notes: tuple[str, ...] = field(default_factory=tuple)
    require_reference: bool = False
    # How per-slice checks control false discoveries (evalkit.yaml `slices:`).
    slices: SliceSettings = field(default_factory=SliceSettings)
    # Each case's cluster (evalkit.yaml `clusters:`), when declared: every vs_baseline,
    # non-inferiority, drift and per-slice verdict is then inferred by cluster
    # (evalkit.stats.clustered_decide).
    clusters: Mapping[str, str | None] | None = None


def run_summary(art: RunArtifact) -> RunSummary:
    """A run as the report names it: name, size, failed cases, commit, time, config."""
    failed = tuple(
        (r.case_id, r.error or "")
        for r in art.result.per_query
        if isinstance(r, CaseResult) and r.error is not None
    )
    return RunSummary(
        art.name, len(art.result), failed, art.git_commit, art.created_at, art.config_name
    )
