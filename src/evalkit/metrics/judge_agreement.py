"""Check the judge: agreement between an LLM judge's grades and the goldens' ``human_grade``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from evalkit._model.digest import sha256_json
from evalkit._model.registry import MetricDef, define
from evalkit.errors import ConfigError, MetricError
from evalkit.metrics.agreement import agreement, spearman, weighted_kappa
from evalkit.metrics.answer_keys import HUMAN_GRADE_KEY, graded_answer, human_grade

if TYPE_CHECKING:
    from evalkit._model.golden_cases import GoldenCase, GoldenSet
    from evalkit._model.results import Row, TargetResponse


KAPPA = "judge_agreement_kappa"
SPEARMAN = "judge_agreement_spearman"
Statistic = Literal["kappa", "spearman"]
VERSION = "1"


@dataclass(frozen=True)
class CheckSet:
    """The human-graded cases of one judge metric, and what the judge is compared on."""

    judge_metric: str
    human: Mapping[str, int]
    fixed: Mapping[str, tuple[GoldenCase, str]]
    judge: Callable[[TargetResponse, GoldenCase], float] | None

    @classmethod
    def of(
        cls,
        judge_metric: str,
        scale: int,
        goldens: GoldenSet,
        judge: Callable[[TargetResponse, GoldenCase], float] | None,
    ) -> CheckSet:
        grades = ((case, human_grade(case, scale)) for case in goldens)
        human = {case.id: grade for case, grade in grades if grade is not None}
        graded = ((case, graded_answer(case)) for case in goldens)
        fixed = {case.id: (case, text) for case, text in graded if text is not None}
        return cls(judge_metric, human, fixed, judge)

    def compared(self, rows: Sequence[Row]) -> tuple[list[Row], list[tuple[GoldenCase, str]]]:
        """The rows whose judge grade is compared, and the graded answers the judge grades."""
        ran = [row for row in rows if row.query_id in self.human]
        graded = [
            row
            for row in ran
            if row.query_id not in self.fixed and self.judge_metric in row.metrics
        ]
        seen = {row.query_id for row in ran}
        fixed = [] if self.judge is None else [v for k, v in self.fixed.items() if k in seen]
        return graded, fixed

    def pairs(self, rows: Sequence[Row]) -> tuple[list[float], list[float]]:
        """The judge's and the humans' grades, case by case (file order of the rows)."""
        from evalkit._model.results import TargetResponse

        graded, fixed = self.compared(rows)
        judge = [_judge_grade(row, self.judge_metric) for row in graded]
        people = [float(self.human[row.query_id]) for row in graded]
        for case, text in fixed:
            assert self.judge is not None  # compared() gives no fixed answer without a judge
            response = TargetResponse(text=text)
            # A grade already made in this process (the gate after a run) is not paid twice.
            recorded = getattr(self.judge, "grade_of", None)
            done = recorded(response, case) if callable(recorded) else None
            score = getattr(done, "score", None)
            value = float(score) if isinstance(score, int) else self.judge(response, case)
            judge.append(float(value))
            people.append(float(self.human[case.id]))
        return judge, people


def _judge_grade(row: Row, metric: str) -> float:
    """The judge's grade of the row's answer."""
    from evalkit._model.results import TRIALS_KEY

    meta = row.response.meta if row.response is not None else {}
    first = meta.get(f"{metric}_score")
    if TRIALS_KEY in meta and isinstance(first, int) and not isinstance(first, bool):
        return float(first)
    return row.metrics[metric]


class JudgeAgreement:
    """An aggregate ``(rows) -> float``: κ or ρ between a judge metric and the human grades."""

    # Only human-graded cases count: the gate says so in the check's coverage.
    counted = "human-graded"

    def __init__(self, check: CheckSet, statistic: Statistic, name: str) -> None:
        self.check = check
        self.statistic = statistic
        self.name = name

    @property
    def fingerprint(self) -> str:
        # The human grades and graded answers are goldens, with their own fingerprint;
        # the judge's definition is its own metric's fingerprint.
        payload = {
            "kind": "judge_agreement",
            "statistic": "kappa_quadratic" if self.statistic == "kappa" else "spearman",
            "judge_metric": self.check.judge_metric,
            "version": VERSION,
        }
        return sha256_json(payload, compact=False)[:16]

    def cases_counted(self, rows: Sequence[Row]) -> int:
        """How many of ``rows`` the statistic is computed on (those with both grades)."""
        graded, fixed = self.check.compared(rows)
        return len(graded) + len(fixed)

    def __call__(self, rows: Sequence[Row]) -> float:
        judge, people = self.check.pairs(rows)
        if len(judge) < 2:
            raise MetricError(
                f"{self.name}: {len(judge)} case(s) of this run have both a "
                f"{self.check.judge_metric!r} grade and a {HUMAN_GRADE_KEY}; "
                "agreement needs at least 2"
            )
        if self.statistic == "kappa":
            return weighted_kappa(judge, people, "quadratic")
        return spearman(judge, people)


def _judge_of(metric: str) -> Callable[[TargetResponse, GoldenCase], float] | None:
    """The registered judge of ``metric``, to grade fixed answers (None if not registered)."""
    from evalkit._model.registry import get_metric

    try:
        return get_metric(metric).fn
    except MetricError:
        return None


def register_judge_agreement(
    judges: Sequence[tuple[str, int]],
    goldens: GoldenSet,
    listed: Sequence[str] = (),
    *,
    where: str = "",
) -> list[str]:
    """Register the agreement aggregates for ``judges`` (``(metric, scale)`` pairs)."""
    prefix = f"{where}: " if where else ""
    registered: list[str] = []
    for metric, scale in judges:
        try:
            check = CheckSet.of(metric, scale, goldens, _judge_of(metric))
        except MetricError as exc:
            raise ConfigError(f"{prefix}{exc}") from None
        suffix = "" if len(judges) == 1 else f".{metric}"
        statistics: tuple[tuple[str, Statistic], ...] = ((KAPPA, "kappa"), (SPEARMAN, "spearman"))
        for base, statistic in statistics:
            name = base + suffix
            if name in listed and len(check.human) < 2:
                raise ConfigError(
                    f"{prefix}metric {name!r} needs at least 2 golden cases with "
                    f"{HUMAN_GRADE_KEY} (an integer on the judge's 1..{scale} scale); "
                    f"found {len(check.human)}"
                )
            fn = JudgeAgreement(check, statistic, name)
            # Cohen's kappa and Spearman's rho both lie in [-1, 1].
            define(MetricDef(name, "aggregate", fn, True, VERSION, bounds=(-1.0, 1.0)))
            registered.append(name)
    return registered


def agreement_notes(
    rows: Sequence[Row],
    judges: Sequence[tuple[str, int]],
    goldens: GoldenSet,
    *,
    seed: int = 0,
    n_resamples: int = 2000,
) -> list[str]:
    """One report line per judge with human grades to compare against (none otherwise)."""
    notes: list[str] = []
    for metric, scale in judges:
        check = CheckSet.of(metric, scale, goldens, _judge_of(metric))
        if not check.human:
            continue
        judge, people = check.pairs(rows)
        label = f"{metric}: "
        try:
            result = agreement(judge, people, n_resamples=n_resamples, seed=seed)
        except MetricError as exc:
            notes.append(f"{label}judge-human agreement not computed ({exc})")
            continue
        notes.append(label + result.line())
    return notes
