"""Check the judge: agreement between an LLM judge's grades and the goldens' ``human_grade``.

For each configured judge metric ``M`` (scale ``K``), the cases whose golden
carries ``human_grade`` (an integer in ``1..K``) are the check set.  Two
aggregates are registered so a threshold check can gate on them:

=================================  ======================================  ========
name                               value                                   polarity
=================================  ======================================  ========
``judge_agreement_kappa``          quadratic-weighted Cohen's κ of the      higher
                                   judge's and the humans' grades
``judge_agreement_spearman``       Spearman's ρ of the same pairs           higher
=================================  ======================================  ========

With more than one judge each name gets the judge's metric as a suffix
(``judge_agreement_kappa.helpfulness``).  The gate report carries one line per
judge with both κ's (quadratic and linear), ρ, and their bootstrap intervals
(:func:`agreement_notes`).  A golden ``human_grade`` off the judge's scale is
refused when the goldens are loaded; a listed agreement metric with fewer than
two human-graded cases is refused before any case runs.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from evalkit.errors import ConfigError, MetricError
from evalkit.metrics.agreement import agreement, spearman, weighted_kappa
from evalkit.metrics.answer_keys import HUMAN_GRADE_KEY, human_grade
from evalkit.registry import MetricDef, define

if TYPE_CHECKING:
    from evalkit.goldens import GoldenSet
    from evalkit.results import Row

__all__ = [
    "KAPPA",
    "SPEARMAN",
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


def _pairs(
    rows: Sequence[Row], judge_metric: str, human: Mapping[str, int]
) -> tuple[list[float], list[float]]:
    judge: list[float] = []
    people: list[float] = []
    for row in rows:
        if row.query_id in human and judge_metric in row.metrics:
            judge.append(row.metrics[judge_metric])
            people.append(float(human[row.query_id]))
    return judge, people


class JudgeAgreement:
    """An aggregate ``(rows) -> float``: κ or ρ between a judge metric and the human grades."""

    def __init__(
        self, judge_metric: str, human: Mapping[str, int], statistic: Statistic, name: str
    ) -> None:
        self.judge_metric = judge_metric
        self.human = dict(human)
        self.statistic = statistic
        self.name = name

    @property
    def fingerprint(self) -> str:
        # The human grades are part of the goldens, which have their own fingerprint.
        payload = {
            "kind": "judge_agreement",
            "statistic": "kappa_quadratic" if self.statistic == "kappa" else "spearman",
            "judge_metric": self.judge_metric,
            "version": VERSION,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]

    def __call__(self, rows: Sequence[Row]) -> float:
        judge, people = _pairs(rows, self.judge_metric, self.human)
        if len(judge) < 2:
            raise MetricError(
                f"{self.name}: {len(judge)} case(s) of this run have both a "
                f"{self.judge_metric!r} grade and a {HUMAN_GRADE_KEY}; agreement needs at least 2"
            )
        if self.statistic == "kappa":
            return weighted_kappa(judge, people, "quadratic")
        return spearman(judge, people)


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
    """Register the agreement aggregates for ``judges`` (``(metric, scale)`` pairs).

    ``listed`` are the metrics the config computes: one of ours listed with
    fewer than two human-graded cases raises :class:`ConfigError` now, before
    any paid grading.  Returns the registered names.
    """
    names = agreement_names([metric for metric, _ in judges])
    scales = dict(judges)
    prefix = f"{where}: " if where else ""
    registered: list[str] = []
    for name, (metric, statistic) in names.items():
        try:
            human = human_grades(goldens, scales[metric])
        except MetricError as exc:
            raise ConfigError(f"{prefix}{exc}") from None
        if name in listed and len(human) < 2:
            raise ConfigError(
                f"{prefix}metric {name!r} needs at least 2 golden cases with "
                f"{HUMAN_GRADE_KEY} (an integer on the judge's 1..{scales[metric]} scale); "
                f"found {len(human)}"
            )
        fn = JudgeAgreement(metric, human, statistic, name)
        define(MetricDef(name, "aggregate", fn, True, VERSION))
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
        human = human_grades(goldens, scale)
        judge, people = _pairs(rows, metric, human)
        if not human:
            continue
        label = f"{metric}: "
        try:
            result = agreement(judge, people, n_resamples=n_resamples, seed=seed)
        except MetricError as exc:
            notes.append(f"{label}judge-human agreement not computed ({exc})")
            continue
        notes.append(label + result.line())
    return notes
