"""What a reviewer should do about a report: the false-alarm risk, margins too tight for
the eval's size, and each statistical warning split into its advice and its reasoning.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from evalkit._spec.checks import DEFAULT_ALPHA
from evalkit._util.units import unit_of
from evalkit.gate.model import GateReport
from evalkit.report import summary as S

if TYPE_CHECKING:
    from evalkit._spec.artifact import RunArtifact
    from evalkit._spec.checks import CheckSpec

#: A family of this many compared checks has a risk worth a sentence whatever its rate.
SEVERAL_CHECKS: Final = 3
#: Above this chance of a false fail the risk is said even for one or two checks.
HIGH_RISK: Final = 0.10
#: A non-inferiority margin this many half-widths of its interval from 0 fails an
#: unchanged system at exactly the check's one-sided level α/2.
RESOLVED_HALF_WIDTHS: Final = 2.0


@dataclass(frozen=True)
class MarginAdvice:
    """A non-inferiority margin the eval cannot resolve: the rate it costs and the fix."""

    check_id: str  # untrusted
    margin: float
    n: int
    rate: float  # chance an unchanged system fails the check
    allowed: float  # the check's one-sided level α/2
    fix_margin: float  # the smallest margin (2 significant digits, up) that resolves
    fix_cases: int  # the cases that resolve the margin as it is
    metric: str = ""

    def sentence(self) -> str:
        """``margin 0.0050 is too tight for 300 cases: …; use a margin ≥ 0.018 or ≥ 3,900
        cases.`` (no check id: the caller puts it beside its check)."""
        u = unit_of(self.metric)
        return (
            f"margin {S.num(self.margin, u)} is too tight for {self.n:,} cases: an unchanged "
            f"system fails this check {S.percent(self.rate)} of the time (its level allows "
            f"{S.percent(self.allowed)}). Use a margin of at least {_sig(self.fix_margin)} "
            f"or at least {self.fix_cases:,} cases."
        )


def _sig(x: float) -> str:
    return f"{x:.2g}" if x < 1e-4 or x >= 1e6 else f"{x:.6f}".rstrip("0").rstrip(".")


def _ceil_sig(x: float, digits: int = 2) -> float:
    """``x`` rounded up to ``digits`` significant digits (0.01734 → 0.018)."""
    if not (math.isfinite(x) and x > 0):
        return x
    step = 10.0 ** (math.floor(math.log10(x)) - digits + 1)
    return round(math.ceil(x / step - 1e-9) * step, 12)


def advise_margin(
    check_id: str, metric: str, margin: float, n: int, rate: float, allowed: float, widths: float
) -> MarginAdvice | None:
    """The advice for a margin ``widths`` half-widths of its interval from 0 (None when
    that cannot be read: no width, no cases)."""
    if not (widths > 0 and math.isfinite(widths) and n > 0 and margin > 0):
        return None
    scale = RESOLVED_HALF_WIDTHS / widths
    return MarginAdvice(
        check_id=check_id,
        margin=margin,
        n=n,
        rate=rate,
        allowed=allowed,
        fix_margin=_ceil_sig(abs(margin) * scale),
        # the half-width falls as 1/√n: the margin resolves at n·(2/w)² cases
        fix_cases=math.ceil(n * scale * scale),
        metric=metric,
    )


def margin_advice(report: GateReport) -> dict[str, MarginAdvice]:
    """Per check id: the advice for each non-inferiority margin the family-wise estimate
    found too tight (stats.familywise owns that judgement and its measured rate)."""
    fw = report.familywise
    if fw is None or not fw.near_margin:
        return {}
    by_id = {v.check_id: v for v in report.verdicts}
    out: dict[str, MarginAdvice] = {}
    for check_id, rate, widths in fw.near_margin:
        v = by_id.get(check_id)
        c = v.comparison if v is not None else None
        if v is None or c is None or c.margin is None:
            continue
        advice = advise_margin(
            check_id, v.metric, c.margin, c.n_paired, rate, (1.0 - c.confidence) / 2, widths
        )
        if advice is not None:
            out[check_id] = advice
    return out


@dataclass(frozen=True)
class Risk:
    """The header's second line: the chance the gate fails with nothing changed."""

    rate: float
    bound: bool  # "at most" rather than "about"
    tests: int
    culprit: str | None  # untrusted: the check whose margin drives the rate

    def before(self) -> str:
        how = "up to" if self.bound else "about"
        if self.culprit is not None:
            return f"Unchanged runs fail this gate {how} {S.percent(self.rate)}: "
        return (
            f"Unchanged runs fail one of these {self.tests} compared checks {how} "
            f"{S.percent(self.rate)} of the time."
        )

    def after(self) -> str:
        """Follows the culprit's name when there is one."""
        return "'s margin is too tight." if self.culprit is not None else ""


def risk(report: GateReport) -> Risk | None:
    """The family-wise risk, only where it changes the reading: several compared checks,
    or a chance above :data:`HIGH_RISK`."""
    fw = report.familywise
    n = report.n_vs_baseline_tests
    if n == 0:
        return None
    if fw is not None and math.isfinite(fw.rate):
        rate, bound = fw.rate, not fw.estimated
    elif report.alpha_familywise is not None and math.isfinite(report.alpha_familywise):
        rate, bound = report.alpha_familywise, True
    else:
        return None
    if n < SEVERAL_CHECKS and rate <= HIGH_RISK:
        return None
    culprit = None
    if fw is not None and fw.near_margin and rate > HIGH_RISK:
        culprit = max(fw.near_margin, key=lambda m: m[1])[0]
    return Risk(rate, bound, n, culprit)


_ADVICE: Final = (
    # (how the statistics' warning starts, what a reviewer is told to do): the one place
    # of this wording; the warning itself, whole, is in the check's details.
    (
        re.compile(r"only (?P<n>[\d,]+) cases: a bootstrap of a whole-run aggregate"),
        "Only {n} cases for a whole-run aggregate: treat a borderline result as undecided, "
        "or add cases.",
    ),
    (
        re.compile(r"only (?P<n>[\d,]+) cases"),
        "Only {n} cases: treat a borderline result as undecided, or add cases.",
    ),
    (
        re.compile(r"the per-case differences are heavily skewed"),
        "A few extreme cases drive this result: read the most changed cases before trusting it.",
    ),
    (
        re.compile(r"no case improved"),
        "No case improved: if the change is meant to help a few cases, check that the "
        "eval holds some of them.",
    ),
)
_PARENTHESES = re.compile(r" ?\([^()]*\)")


def advice_for(warning: str) -> str:
    """What a statistical warning tells a reviewer to do, in a sentence or two."""
    for pattern, advice in _ADVICE:
        found = pattern.match(warning)
        if found is not None:
            return advice.format(**found.groupdict())
    # Another warning: its first clause, without the figures in parentheses.
    text = warning
    while _PARENTHESES.search(text):
        text = _PARENTHESES.sub("", text)
    return _sentence(text.partition("; ")[0])


@dataclass(frozen=True)
class CheckWarning:
    """A warning in view beside its check: what is wrong and what to do."""

    check_id: str  # untrusted
    advice: str  # untrusted (from the statistics' text)


def in_view(report: GateReport) -> list[CheckWarning]:
    """The warnings a reviewer sees, each beside its check, in the checks file's order:
    a margin too tight for the eval's size always; a statistical caveat only where it can
    change how the verdict reads (the check did not pass, or is borderline)."""
    margins = margin_advice(report)
    out: list[CheckWarning] = []
    for v in report.verdicts:
        advice = margins.get(v.check_id)
        if advice is not None:
            out.append(CheckWarning(v.check_id, advice.sentence()))
        if v.comparison is None or not (v.status != "pass" or S.borderline(v)):
            continue
        for warning in v.comparison.warnings:
            out.append(CheckWarning(v.check_id, advice_for(warning)))
    return out


def _sentence(text: str) -> str:
    text = text.strip()
    return (text[:1].upper() + text[1:]) + ("" if text.endswith(".") else ".")


def margins_before_run(specs: Sequence[CheckSpec], baseline: RunArtifact) -> list[MarginAdvice]:
    """The non-inferiority margins the eval cannot resolve, judged before anything runs
    from the baseline's spread alone."""
    import numpy as np

    from evalkit.stats.familywise import TestedCheck, familywise_rate

    rows = {row.case_id: row for row in baseline.result.per_query}
    out: list[MarginAdvice] = []
    for spec in specs:
        if spec.vs_baseline != "non_inferiority" or spec.margin is None or spec.margin <= 0:
            continue
        ids = spec.scope if spec.scope is not None else tuple(rows)
        values = [
            float(value)
            for cid in ids
            if (row := rows.get(cid)) is not None and row.error is None
            if isinstance(value := row.metrics.get(spec.metric), int | float)
            and math.isfinite(value)
        ]
        if len(values) < 2:
            continue
        spread = np.asarray(values, dtype=np.float64)
        alpha = spec.alpha if spec.alpha is not None else DEFAULT_ALPHA
        tested = TestedCheck(
            diffs=spread - float(spread.mean()),
            procedure="t",
            alpha=alpha,
            higher_is_better=True,
            tested_value=-spec.margin,
            corrected=False,
            mode="non_inferiority",
            check_id=spec.id,
        )
        rate = familywise_rate([tested], "none", seed=0)
        for check_id, share, widths in rate.near_margin:
            advice = advise_margin(
                check_id, spec.metric, spec.margin, len(values), share, alpha / 2, widths
            )
            if advice is not None:
                out.append(advice)
    return out


def before_run_line(advice: MarginAdvice) -> str:
    """One line for ``evalkit gate`` to say before it runs (untrusted: the check id)."""
    return (
        f"{advice.check_id}: {advice.sentence()} (Estimated before the run from the "
        "baseline's spread.)"
    )
