"""Repeated trials for stochastic targets: each case run k times, the case stays the unit."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import variance
from typing import TYPE_CHECKING, Any

from evalkit._model.results import TRIALS_KEY, CaseResult, RunResult
from evalkit.errors import InputError

TrialCallback = Callable[[int, int, CaseResult], None]  # (trial, case index, row)

if TYPE_CHECKING:
    from evalkit._engine.execute import RowCallback
    from evalkit._model.golden_cases import GoldenCase, GoldenSet
    from evalkit._model.results import Row
    from evalkit.targets.base import Target


def merge_case(case_id: str, trials: Sequence[CaseResult]) -> CaseResult:
    """One case's row from its trials (in trial order): the mean, or the first failure."""
    failed = next(((t, row) for t, row in enumerate(trials, 1) if row.error), None)
    if failed is not None:
        number, row = failed
        return CaseResult(case_id, row.response, {}, error=f"trial {number}: {row.error}")
    values = {m: [row.metrics[m] for row in trials] for m in trials[0].metrics}
    first = trials[0].response
    if first is not None:
        first.meta[TRIALS_KEY] = values
    means = {m: math.fsum(v) / len(v) for m, v in values.items()}
    return CaseResult(case_id, first, means)


def evaluate_repeated(
    target: Target,
    goldens: GoldenSet | Iterable[GoldenCase],
    metrics: Sequence[str],
    *,
    repeats: int,
    on_row: RowCallback | None = None,
    on_trial: TrialCallback | None = None,
    done_trials: Mapping[str, Mapping[int, CaseResult]] | None = None,
    **options: Any,
) -> RunResult[CaseResult]:
    """:func:`evalkit.evaluate` ``repeats`` times, one row per case (:func:`merge_case`)."""
    from evalkit._engine.execute import evaluate
    from evalkit.metrics.judge_consistency import regrading

    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise InputError(f"repeats must be an integer >= 1, got {repeats!r}")
    cases = list(goldens)
    if repeats == 1:
        return evaluate(target, cases, metrics, on_row=on_row, **options)
    if options.get("skip"):
        raise InputError("a repeated run resumes per trial: pass done_trials, not skip")
    options.pop("skip", None)
    trials: dict[str, dict[int, CaseResult]] = {
        case.id: {t: row for t, row in (done_trials or {}).get(case.id, {}).items() if t <= repeats}
        for case in cases
    }

    def finished(trial: int, index: int, row: CaseResult) -> None:
        have = trials[row.case_id]
        have[trial] = row
        if on_trial is not None:
            on_trial(trial, index, row)
        if on_row is not None and len(have) == repeats:
            on_row(index, merge_case(row.case_id, [have[t] for t in range(1, repeats + 1)]))

    name = None
    for trial in range(1, repeats + 1):
        skip = [case.id for case in cases if trial in trials[case.id]]
        if len(skip) == len(cases):
            continue

        def record(index: int, row: CaseResult, trial: int = trial) -> None:
            finished(trial, index, row)

        # The first trial of a judged case is graded twice (judge self-consistency).
        with regrading(metrics, on=trial == 1):
            ran = evaluate(target, cases, metrics, skip=skip, on_row=record, **options)
        name = ran.name
    rows = [merge_case(c.id, [trials[c.id][t] for t in range(1, repeats + 1)]) for c in cases]
    return RunResult(name or options.get("name") or target.name, rows)


@dataclass(frozen=True)
class TrialSpread:
    """How much of a metric's case-to-case spread is trial noise."""

    metric: str
    n_cases: int
    trials: int
    flaky: tuple[str, ...]
    within_share: float  # of the variance of the case means; nan when they do not vary
    se_ratio_double_trials: float  # new SE / old SE when k doubles
    se_ratio_double_cases: float  # ... when the cases double (same spread)

    def line(self) -> str:
        flaky = f"{len(self.flaky)} of {self.n_cases} case(s) flaky" + (
            f" ({', '.join(self.flaky[:5])}{', …' if len(self.flaky) > 5 else ''})"
            if self.flaky
            else ""
        )
        if math.isnan(self.within_share):
            return (
                f"{self.metric}: {self.trials} trials per case, {flaky}; the case means do not vary"
            )
        cut_trials = 1 - self.se_ratio_double_trials
        cut_cases = 1 - self.se_ratio_double_cases
        advice = (
            "more trials are the cheaper lever only when new cases cannot be written"
            if cut_trials < cut_cases
            else "more trials help as much as more cases"
        )
        return (
            f"{self.metric}: {self.trials} trials per case, {flaky}; "
            f"{self.within_share:.0%} of the variance of the case means is trial noise: "
            f"doubling the trials would cut the standard error by {cut_trials:.0%}, doubling "
            f"the cases by {cut_cases:.0%} ({advice})"
        )


def _trials(row: Row) -> Mapping[str, Sequence[float]] | None:
    response = row.response
    if response is None:
        return None
    found = response.meta.get(TRIALS_KEY)
    return found if isinstance(found, Mapping) else None


def trial_spread(rows: Sequence[Row], metric: str) -> TrialSpread | None:
    """The spread of ``metric`` over rows that carry trials (``None`` when none do)."""
    per_case: list[tuple[str, list[float]]] = []
    for row in rows:
        trials = _trials(row)
        if trials is not None and metric in trials:
            per_case.append((row.query_id, [float(v) for v in trials[metric]]))
    if len(per_case) < 2:
        return None
    k = min(len(v) for _, v in per_case)
    if k < 2:
        return None
    flaky = tuple(cid for cid, v in per_case if max(v) != min(v))
    means = [math.fsum(v) / len(v) for _, v in per_case]
    within = math.fsum(variance(v) for _, v in per_case) / len(per_case)
    of_means = variance(means)
    if of_means <= 0:
        return TrialSpread(metric, len(per_case), k, flaky, math.nan, 1.0, 1.0)
    noise = within / k
    share = min(1.0, noise / of_means)
    between = max(0.0, of_means - noise)
    double_trials = math.sqrt((between + noise / 2) / (between + noise))
    return TrialSpread(metric, len(per_case), k, flaky, share, double_trials, math.sqrt(0.5))


def trial_notes(rows: Sequence[Row], metrics: Iterable[str]) -> list[str]:
    """One report line per per-case metric of a repeated run (none for a single trial)."""
    notes = []
    for metric in metrics:
        spread = trial_spread(rows, metric)
        if spread is not None:
            notes.append(spread.line())
    return notes
