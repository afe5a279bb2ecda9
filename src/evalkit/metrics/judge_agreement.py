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

__all__ = [
    "KAPPA",
    "SPEARMAN",
    "CheckSet",
    "JudgeAgreement",
    "agreement_names",
    "agreement_notes",
    "human_grades",
    "register_judge_agreement",
]

KAPPA = "judge_agreement_kappa"
SPEARMAN = "judge_agreement_spearman"
Statistic = Literal["kappa", "spearman"]
VERSION = "1"


def human_grades(goldens: GoldenSet, scale: int) -> dict[str, int]:
    """``{case id: human grade}`` for the cases that carry one (validated against the scale)."""
    out: dict[str, int] = {}
    for case in goldens:
        grade = human_grade(case, scale)
        if grade is not None:
            out[case.id] = grade
    return out


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
        human = human_grades(goldens, scale)
        graded = ((case, graded_answer(case)) for case in goldens)
        fixed = {case.id: (case, text) for case, text in graded if text is not None}
        return cls(judge_metric, human, fixed, judge)

    def compared_ids(self, rows: Sequence[Row]) -> list[str]:
        """The cases :meth:`pairs` compares, without grading anything (file order of rows)."""
        ids: list[str] = []
        for row in rows:
            if row.query_id not in self.human:
                continue
            if row.query_id in self.fixed:
                if self.judge is not None:
                    ids.append(row.query_id)
            elif self.judge_metric in row.metrics:
                ids.append(row.query_id)
        return ids

    def pairs(self, rows: Sequence[Row]) -> tuple[list[float], list[float]]:
        """The judge's and the humans' grades, case by case (file order of the rows)."""
        from evalkit._model.results import TargetResponse

        judge: list[float] = []
        people: list[float] = []
        seen: set[str] = set()
        for row in rows:
            seen.add(row.query_id)
            if row.query_id in self.fixed or row.query_id not in self.human:
                continue
            if self.judge_metric in row.metrics:
                judge.append(_judge_grade(row, self.judge_metric))
                people.append(float(self.human[row.query_id]))
        for case_id, (case, text) in self.fixed.items():
            if case_id not in seen or self.judge is None:
                continue
            response = TargetResponse(text=text)
            # A grade already made in this process (the gate after a run) is not paid twice.
            recorded = getattr(self.judge, "grade_of", None)
            done = recorded(response, case) if callable(recorded) else None
            score = getattr(done, "score", None)
            value = float(score) if isinstance(score, int) else self.judge(response, case)
            judge.append(float(value))
            people.append(float(self.human[case_id]))
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
        return len(self.check.compared_ids(rows))

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


def agreement_names(judge_metrics: Sequence[str]) -> dict[str, tuple[str, Statistic]]:
    """``{aggregate name: (judge metric, statistic)}`` for the configured judges."""
    out: dict[str, tuple[str, Statistic]] = {}
    for metric in judge_metrics:
        suffix = "" if len(judge_metrics) == 1 else f".{metric}"
        out[KAPPA + suffix] = (metric, "kappa")
        out[SPEARMAN + suffix] = (metric, "spearman")
    return out


def register_judge_agreement(
    judges: Sequence[tuple[str, int]],
    goldens: GoldenSet,
    listed: Sequence[str] = (),
    *,
    where: str = "",
) -> list[str]:
    """Register the agreement aggregates for ``judges`` (``(metric, scale)`` pairs)."""
    names = agreement_names([metric for metric, _ in judges])
    scales = dict(judges)
    prefix = f"{where}: " if where else ""
    registered: list[str] = []
    for name, (metric, statistic) in names.items():
        try:
            check = CheckSet.of(metric, scales[metric], goldens, _judge_of(metric))
        except MetricError as exc:
            raise ConfigError(f"{prefix}{exc}") from None
        human = check.human
        if name in listed and len(human) < 2:
            raise ConfigError(
                f"{prefix}metric {name!r} needs at least 2 golden cases with "
                f"{HUMAN_GRADE_KEY} (an integer on the judge's 1..{scales[metric]} scale); "
                f"found {len(human)}"
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
