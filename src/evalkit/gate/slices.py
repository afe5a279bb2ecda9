"""Per-slice verdicts: which kind of query got worse, with false discoveries controlled.

Each slice is decided by the check's own procedure; all the slice tests of one gate are
one FDR family (:mod:`evalkit.stats.fdr`), as ``compare --by`` computes them too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any, Final, Literal

from evalkit._model.results import RunResult
from evalkit._model.slices import SliceAssignment, SliceKey
from evalkit.errors import EvalkitError
from evalkit.stats.clustered_decide import ClusterLabels, evaluator_by_cluster
from evalkit.stats.fdr import FDR_NAMES, FdrMethod, choose_method, one_sided_p, step_up
from evalkit.stats.procedures import DEFAULT_GATE_METHOD, Evaluator
from evalkit.stats.rule import fails

SliceStatus = Literal["regressed", "improved", "no-change", "too-small", "no-baseline", "error"]
#: The level the raw p is read at: any level gives the same p (it is the interval's dual).
_READ_LEVEL: Final = 0.05


@dataclass(frozen=True)
class SliceSettings:
    """``slices:`` of evalkit.yaml as the gate uses it."""

    q: float = 0.05
    method: str = "auto"  # auto | bh | by
    min_cases: int = 30


@dataclass(frozen=True)
class SliceTest:
    """One metric compared slice by slice: the paired runs and which cases are in scope."""

    check_id: str
    metric: str
    higher_is_better: bool
    candidate: RunResult[Any]  # the paired candidate rows (unchanged cases in the baseline)
    baseline: RunResult[Any]  # the same cases' baseline rows
    in_scope: tuple[str, ...]  # the candidate's cases the check covers (paired or not)
    method: str = DEFAULT_GATE_METHOD


@dataclass(frozen=True)
class SliceVerdict:
    """One slice of one tested metric."""

    check_id: str
    metric: str
    slice: str  # "tags=billing"
    status: SliceStatus
    n_cases: int  # the candidate's cases of the slice the check covers
    n_paired: int  # of those, paired with the baseline
    higher_is_better: bool
    delta: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    confidence: float | None = None
    p_value: float | None = None  # one-sided, on the bad side
    p_adjusted: float | None = None  # the FDR-adjusted p (the smallest q that rejects)
    procedure: str | None = None
    baseline_value: float | None = None
    candidate_value: float | None = None
    message: str = ""

    @property
    def tested(self) -> bool:
        return self.status in ("regressed", "improved", "no-change")

    @property
    def moved(self) -> bool:
        """Regressed after FDR control, or its interval lies wholly on the good side."""
        return self.status in ("regressed", "improved")


@dataclass(frozen=True)
class SliceReport:
    """Every slice of every per-slice test of one gate, and how the family was controlled."""

    dimensions: tuple[str, ...]
    method: FdrMethod
    why: str
    q: float
    min_cases: int
    level: float  # one-sided: a slice regressed exactly when its p ≤ level
    verdicts: tuple[SliceVerdict, ...]

    @property
    def n_tested(self) -> int:
        return sum(1 for v in self.verdicts if v.tested)

    @property
    def method_name(self) -> str:
        return FDR_NAMES[self.method]

    def regressed(self, check_id: str | None = None) -> list[SliceVerdict]:
        return [
            v
            for v in self.verdicts
            if v.status == "regressed" and (check_id is None or v.check_id == check_id)
        ]


@dataclass
class _Pending:
    verdict: SliceVerdict
    evaluator: Evaluator | None
    cases: frozenset[str]


def slice_family(
    tests: Sequence[SliceTest],
    assignment: SliceAssignment,
    settings: SliceSettings,
    *,
    n_resamples: int,
    seed: int,
    dimensions: Sequence[str] | None = None,
    clusters: ClusterLabels | None = None,
) -> SliceReport:
    """Compare every test slice by slice and control the FDR across all of them.

    ``dimensions`` narrows to some declared dimensions (``compare --by``); a slice none
    of whose cases a test covers is not listed for that test.
    """
    dims = tuple(dimensions) if dimensions is not None else assignment.dimensions
    slices = {k: v for k, v in assignment.slices().items() if k.dimension in dims}
    pending: list[_Pending] = []
    for test in tests:
        for key, members in slices.items():
            item = _one(test, key, members, settings, (n_resamples, seed), clusters)
            if item is not None:
                pending.append(item)
    tested = [p for p in pending if p.evaluator is not None]
    method, why = choose_method(settings.method, [p.cases for p in tested])
    result = step_up([p.verdict.p_value or 0.0 for p in tested], settings.q, method)
    adjusted = dict(zip(map(id, tested), result.adjusted, strict=True))
    out = tuple(
        p.verdict
        if p.evaluator is None
        else _decided(p.verdict, p.evaluator, result.level, adjusted[id(p)])
        for p in pending
    )
    return SliceReport(dims, method, why, settings.q, settings.min_cases, result.level, out)


def _one(
    test: SliceTest,
    key: SliceKey,
    members: Sequence[str],
    settings: SliceSettings,
    resampling: tuple[int, int],
    clusters: ClusterLabels | None,
) -> _Pending | None:
    n_resamples, seed = resampling
    scope = set(test.in_scope)
    in_slice = [c for c in members if c in scope]
    if not in_slice:
        return None
    keep = set(in_slice)
    cand = [r for r in test.candidate.per_query if r.query_id in keep]
    base = [r for r in test.baseline.per_query if r.query_id in keep]
    common: dict[str, Any] = {
        "check_id": test.check_id,
        "metric": test.metric,
        "slice": str(key),
        "n_cases": len(in_slice),
        "n_paired": len(cand),
        "higher_is_better": test.higher_is_better,
    }

    def untested(status: SliceStatus, message: str) -> _Pending:
        return _Pending(SliceVerdict(**common, status=status, message=message), None, frozenset())

    if not cand:
        return untested(
            "no-baseline", f"none of its {len(in_slice)} case(s) is in the baseline unchanged"
        )
    if len(cand) < settings.min_cases:
        return untested(
            "too-small",
            f"{len(cand)} paired case(s), below the {settings.min_cases} a "
            "per-slice test needs: too small, not tested",
        )
    cand_run: RunResult[Any] = RunResult(test.candidate.name, cand)
    base_run: RunResult[Any] = RunResult(test.baseline.name, base)
    try:
        evaluator, _ = evaluator_by_cluster(
            cand_run,
            base_run,
            test.metric,
            clusters=clusters,
            method=test.method,
            n_resamples=n_resamples,
            seed=seed,
        )
        read = evaluator.decide(_READ_LEVEL, 0.0)
        before, after = base_run.value(test.metric), cand_run.value(test.metric)
    except EvalkitError as exc:
        return untested("error", str(exc))
    p_one = one_sided_p(read.p_value, read.estimate, 0.0, test.higher_is_better)
    verdict = SliceVerdict(
        **common,
        status="no-change",
        delta=read.estimate,
        p_value=p_one,
        procedure=evaluator.procedure,
        baseline_value=before,
        candidate_value=after,
    )
    return _Pending(verdict, evaluator, frozenset(keep))


def _decided(
    verdict: SliceVerdict, evaluator: Evaluator, level: float, p_adjusted: float
) -> SliceVerdict:
    """The slice's interval at the step-up's level, and its status read from it."""
    try:
        decision = evaluator.decide(min(2.0 * level, 0.999999), 0.0)
    except EvalkitError as exc:  # by cluster: too few clusters for the family's level
        return replace(verdict, status="error", message=str(exc))
    hib = verdict.higher_is_better
    regressed = fails("no_significant_regression", decision.low, decision.high, 0.0, hib)
    improved = decision.low > 0.0 if hib else decision.high < 0.0
    status: SliceStatus = "regressed" if regressed else ("improved" if improved else "no-change")
    return replace(
        verdict,
        status=status,
        ci_low=decision.low,
        ci_high=decision.high,
        confidence=decision.confidence,
        p_adjusted=p_adjusted,
    )
