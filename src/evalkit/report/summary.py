"""What every reporter says the same way: icons, numbers, the headline, a verdict's result.

Strings built here hold no untrusted text, so each reporter pastes them in unescaped.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

# p_text and pvalue are the reporters' p formatters too (one owner: evalkit._util.pvalues)
from evalkit._util.figures import json_float
from evalkit._util.figures import num as num
from evalkit._util.figures import signed as signed
from evalkit._util.pvalues import p_text as p_text
from evalkit._util.pvalues import pvalue as pvalue
from evalkit._util.units import suffix, unit_of
from evalkit.gate.inputs import GoldensDiff
from evalkit.gate.model import CaseDelta, CheckVerdict, Comparison, GateReport, RunSummary

# Solid emoji, legible on light and dark backgrounds, each unlike the others.
STATUS_ICON = {
    "pass": "✅",
    "fail": "❌",
    "warn": "⚠️",
    "error": "💥",
    "no-baseline": "🔵",  # not compared: nothing to compare with yet, not a failure
    "no-reference": "❓",  # louder than no-baseline: a drift check that did not run
    "incomparable": "🚫",
}
VERDICT_ICON = {"pass": "✅", "warn": "⚠️", "fail": "❌", "error": "💥", "incomplete": "🔶"}
OP_SYMBOL = {"<=": "≤", ">=": "≥", "==": "="}  # every op CheckSpec allows
NA = "n/a"
#: After a metric's name: which way is better; and in words.
ARROW = {True: " ↑", False: " ↓", None: ""}
BETTER = {True: "higher is better", False: "lower is better", None: ""}
HEADLINE_NAMES = 3  # blocking checks named in the headline before "+N more"
# Per-field caps (characters of the original text), so one hostile value cannot eat a
# report: ids and names are cut long before they stop being recognisable.
NAME_LEN = 80
ID_LEN = 120
MESSAGE_LEN = 400
ERROR_LEN = 300


def json_record(record: Any, keys: str, **given: Any) -> dict[str, Any]:
    """``record``'s ``keys`` (fields or properties) in that order as JSON values, ``given``
    ones as given: a float field or value through :func:`json_float`, a tuple as a list."""
    floats = set(_float_names(record))
    out: dict[str, Any] = {}
    for key in keys.split():
        if key in given:
            out[key] = given[key]
            continue
        value = getattr(record, key)
        if key in floats or isinstance(value, float):
            value = json_float(value)
        elif isinstance(value, tuple):
            value = list(value)
        out[key] = value
    return out


def plural(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def interval(low: float | None, high: float | None, metric: str = "") -> str:
    """``[-0.0650, -0.0170]`` (`` ms`` after it for a latency): every report's interval."""
    return f"[{signed(low)}, {signed(high)}]{suffix(metric)}"


def failed_to_run(run: RunSummary) -> str:
    """``2 of 100 cases failed to run``."""
    return f"{len(run.failed):,} of {run.n_cases:,} cases failed to run"


def more_not_shown(n: int, unit: str = "cases") -> str:
    """What a report says of the rows it leaves out."""
    return f"… {n:,} more {unit} not shown (see the JSON report/artifact)"


def goldens_counts(diff: GoldensDiff) -> str:
    """``2 added · 1 removed · 1 changed``: the goldens' change since the baseline."""
    return (
        f"{len(diff.added):,} added · {len(diff.removed):,} removed · {len(diff.changed):,} changed"
    )


GOLDENS_SCOPE = "vs_baseline checks compared only the cases present and unchanged on both sides"


def goldens_lists(diff: GoldensDiff) -> list[tuple[str, tuple[str, ...]]]:
    """The goldens' added, removed and changed ids, each list that has any, in that order."""
    lists = (("Added", diff.added), ("Removed", diff.removed), ("Changed", diff.changed))
    return [(label, ids) for label, ids in lists if ids]


def pack(pieces: list[str], width: int, indent: str = "") -> list[str]:
    """``pieces`` two spaces apart after ``indent``, as many to a line as fit ``width`` (a
    longer one alone): a plain-text layout that never splits a figure between lines."""
    lines: list[str] = []
    line = ""
    for piece in pieces:
        joined = f"{line}  {piece}" if line else indent + piece
        if line and len(joined) > width:
            lines.append(line)
            joined = indent + piece
        line = joined
    if line:
        lines.append(line)
    return lines


def percent(x: float) -> str:
    return f"{x * 100:.1f}%"


def confidence(c: float) -> str:
    """``0.95`` → ``95%``; ``0.975`` → ``97.5%``; an FDR or Holm step's ``0.98181…`` →
    ``98.18%`` (two decimals at most: a level, not a figure to compute with)."""
    return f"{round(c * 100, 2):g}%" if math.isfinite(c) else NA


_WORDS = {"no-baseline": "no baseline", "no-reference": "no reference"}


def status_word(v: CheckVerdict) -> str:
    word: str = _WORDS.get(v.status, v.status)
    if v.level == "warn" and v.status in ("fail", "error", "incomparable"):
        word += " (non-blocking)"
    elif v.status == "no-reference":
        word += " (blocking)" if v.blocking else " (not a pass)"
    return word


def short_word(v: CheckVerdict) -> str:
    """The status in a table cell: the word alone, the condition's sentence says the rest."""
    if v.status in ("no-baseline", "no-reference"):
        return _WORDS[v.status]
    return status_word(v)


def against(v: CheckVerdict) -> str:
    """What a comparison check compared with: ``baseline`` or ``reference`` (a drift check)."""
    return "reference" if v.kind == "vs_reference" else "baseline"


def result(v: CheckVerdict) -> str:
    """The verdict's numbers in one line: observed vs threshold, or Δ with its CI and p."""
    c = v.comparison
    if v.status == "error":
        return "error (see below)"
    if v.kind == "threshold" or c is None:
        why = _need(v) if v.kind == "threshold" else _WORDS.get(v.status, v.status)
        return f"{num(v.observed, unit_of(v.metric))} ({why})"
    delta, *extra = change_parts(v)
    head = "vs reference: " if v.kind == "vs_reference" else ""
    tail = f"{confidence(c.confidence)} CI, {p_text(c.deciding_p, c.p_label)}"
    return ", ".join([f"{head}{before_after(v, c)}: {delta} {tail}", *extra])


def before_after(v: CheckVerdict, c: Comparison) -> str:
    """``0.7377 → 0.6965``: the means over the paired cases, the ones Δ is computed on."""
    u = unit_of(v.metric)
    after = c.candidate_value if c.candidate_value is not None else v.observed
    return f"{num(c.baseline_value, u)} → {num(after, u)}"


def partial_cases(v: CheckVerdict) -> str:
    """A cases cell: ``280/300`` (and what the metric counted) when some went uncovered."""
    counts = f" {v.counts}" if v.counts else ""
    return "" if v.covered == v.total else f"{v.covered:,}/{v.total:,}{counts}"


def change_parts(v: CheckVerdict) -> list[str]:
    """A table cell's result (the value against its threshold, or Δ and its interval), in
    the pieces a narrow cell may wrap between (never inside one).

    The interval's level is the table's (:func:`shared_confidence`); a reporter whose
    checks differ in level writes it beside the interval.
    """
    c = v.comparison
    u = unit_of(v.metric)
    if v.status == "error" or (c is None and v.observed is None):
        return ["—"]
    if v.kind == "threshold":
        return [num(v.observed, u), _need(v)]
    if c is None:
        return [num(v.observed, u)]
    parts = [f"Δ {signed(c.delta, u)} {interval(c.ci_low, c.ci_high, v.metric)}"]
    if c.margin is not None:
        parts.append(f"margin {num(c.margin, u)}")
    if c.min_effect is not None:
        parts.append(f"min_effect {num(c.min_effect, u)}")
    return parts


def _need(v: CheckVerdict) -> str:
    """``needs ≥ 0.8000``: a threshold check's bound."""
    return f"needs {OP_SYMBOL[str(v.op)]} {num(v.threshold, unit_of(v.metric))}"


def shared_confidence(report: GateReport) -> float | None:
    """The interval level every comparison in ``report`` shares (``None``: none, or mixed)."""
    levels = {v.comparison.confidence for v in report.verdicts if v.comparison is not None}
    return levels.pop() if len(levels) == 1 else None


def deciding_procedures(report: GateReport) -> str | None:
    """``Decided by paired t (a, b); percentile bootstrap (c).``: which procedure gave
    each compared check its interval and p, grouped, in the order the checks run
    (``Decided by paired t (every compared check).`` where one did for all)."""
    groups: dict[str, list[str]] = {}
    for v in report.verdicts:
        if v.comparison is not None:
            groups.setdefault(v.comparison.decided_by, []).append(v.check_id)
    if not groups:
        return None
    if len(groups) == 1:
        (method,) = groups
        return f"Decided by {method} (every compared check)."
    # a long family is counted, not listed: the sentence must stay a sentence
    named = {
        m: ", ".join(ids) if len(ids) <= 3 else plural(len(ids), "check", "checks")
        for m, ids in groups.items()
    }
    return "Decided by " + "; ".join(f"{m} ({who})" for m, who in named.items()) + "."


def how_decided(report: GateReport) -> list[str]:
    """The lines of "How the checks were decided": the procedures, then the family's risk."""
    return [x for x in (deciding_procedures(report), multiplicity(report)) if x]


def p_cell(v: CheckVerdict) -> str:
    """The deciding p with its label (``p``, ``p vs margin``, ``Holm-adjusted p``), or ``""``."""
    c = v.comparison
    return "" if c is None else p_text(c.deciding_p, c.p_label)


def borderline(v: CheckVerdict) -> bool:
    """True when the deciding p is near the level (a third to three times α) or unknown:
    only then can a caveat ("small n", "skewed") change how the verdict reads."""
    c = v.comparison
    if c is None:
        return False
    alpha = 1.0 - c.confidence
    p = c.deciding_p
    if not (math.isfinite(p) and math.isfinite(alpha)):
        return True
    return alpha / 3 <= p <= 3 * alpha


def full_coverage(report: GateReport) -> str | None:
    """The one sentence that stands for a coverage column with nothing to say, or None
    when some check did not cover all of its cases (the table then shows which)."""
    if not report.verdicts or any(v.covered != v.total for v in report.verdicts):
        return None
    if report.stopped_early is not None:
        return f"Every check covered the {report.stopped_early.coverage()}."
    n = report.candidate.n_cases
    # with declared clusters, the clusters those cases fall in (evalkit.yaml `clusters:`)
    counts = {v.comparison.clusters for v in report.verdicts if v.comparison is not None}
    counts.discard(None)
    clusters = f" in {counts.pop():,} clusters" if len(counts) == 1 else ""
    if {v.total for v in report.verdicts} == {n}:
        return f"Every check covered all {n:,} cases{clusters}."
    return f"Every check covered all of its cases{clusters}."


def wlt(v: CheckVerdict) -> str:
    c = v.comparison
    if c is None or c.wins + c.losses + c.ties == 0:
        return "—"
    return f"{c.wins} / {c.losses} / {c.ties}"


def mde(v: CheckVerdict) -> str:
    c = v.comparison
    return num(c.mde, unit_of(v.metric)) if c is not None and c.mde is not None else "—"


def outcome(d: CaseDelta, higher_is_better: bool | None, tie_tolerance: float = 1e-12) -> str:
    if not math.isfinite(d.delta):
        return NA
    if abs(d.delta) <= tie_tolerance:
        return "tie"
    if higher_is_better is None:
        return "up" if d.delta > 0 else "down"
    return "win" if (d.delta > 0) == higher_is_better else "loss"


_DIGITS = re.compile(r"(\d+)")


def natural_key(case_id: str) -> tuple[tuple[int, int, str], ...]:
    """Sorts ``2`` before ``10`` and ``q2`` before ``q10``; text runs compare as text."""
    return tuple(
        (0, int(part), part) if part.isdigit() else (1, 0, part)
        for part in _DIGITS.split(case_id)
        if part
    )


def worst_first(deltas: tuple[CaseDelta, ...], higher_is_better: bool | None) -> list[CaseDelta]:
    """Most regressed first (largest move in the bad direction), equals by case id
    in natural order (``2`` before ``10``)."""
    sign = -1.0 if higher_is_better is not False else 1.0

    def key(d: CaseDelta) -> tuple[float, tuple[tuple[int, int, str], ...]]:
        bad = sign * d.delta if math.isfinite(d.delta) else math.inf
        return (-bad, natural_key(d.case_id))

    return sorted(deltas, key=key)


def changed_worst_first(
    deltas: tuple[CaseDelta, ...], higher_is_better: bool | None
) -> tuple[list[CaseDelta], int]:
    """The cases that moved, worst first, and how many tied (left out: a tie says nothing
    a count cannot)."""
    changed = tuple(d for d in deltas if outcome(d, higher_is_better) != "tie")
    return worst_first(changed, higher_is_better), len(deltas) - len(changed)


def case_deltas(v: CheckVerdict) -> tuple[CaseDelta, ...]:
    """Every paired case if the gate kept them, else the worst cases it listed."""
    c = v.comparison
    if c is not None and c.deltas:
        return c.deltas
    return v.worst_cases


@dataclass(frozen=True)
class Headline:
    """The one-line verdict, with the untrusted check ids left for the caller to escape."""

    verdict: str  # pass | warn | fail | error
    icon: str
    word: str  # PASS | WARN | FAIL | ERROR
    passed: int
    n_checks: int
    failed_cases: int
    n_cases: int
    named_label: str  # "blocking" or "not blocking"
    named: tuple[str, ...]  # check ids, at most HEADLINE_NAMES
    more: int  # further ids not named
    subset: tuple[int, int] | None = None  # (cases decided, cases in the golden set)

    def counts(self) -> str:
        text = f"{self.passed} of {self.n_checks} checks passed"
        if self.subset is not None:
            text += f" on {self.subset[0]:,} of {self.subset[1]:,} cases only"
        if self.failed_cases:
            text = f"{self.failed_cases:,} of {self.n_cases:,} cases failed to run; " + text
        return text


def headline(report: GateReport) -> Headline:
    verdict = report.verdict
    sub = report.subset
    blocking = [v.check_id for v in report.blocking_failures]
    if blocking:
        label, ids = "blocking", blocking
    else:
        label = "not blocking"
        ids = [v.check_id for v in report.verdicts if v.status in _ATTENTION]
    return Headline(
        verdict=verdict,
        icon=VERDICT_ICON[verdict],
        word=verdict.upper(),
        passed=sum(1 for v in report.verdicts if v.status == "pass"),
        n_checks=len(report.verdicts),
        failed_cases=len(report.candidate.failed),
        n_cases=report.candidate.n_cases,
        named_label=label,
        named=tuple(ids[:HEADLINE_NAMES]),
        more=max(len(ids) - HEADLINE_NAMES, 0),
        subset=None if sub is None else (sub.n_selected, sub.n_total),
    )


SUBSET_WARNING = "not a verdict on the whole golden set; run the gate without -k/--case for one"


def coverage_line(report: GateReport) -> tuple[str, str, str] | None:
    """For a gate on a subset: (text before the selection, the selection as the user
    typed it, to escape, text after).  A stopped gate's line says the count once; the
    coverage footer says which cases every check covered."""
    sub = report.subset
    stopped = report.stopped_early
    if stopped is not None:  # nothing typed by the user in it: the selection part is empty
        line = stopped.line()
        return (line[:1].upper() + line[1:], "", "")
    if sub is None:
        return None
    return (
        f"Coverage: {sub.n_selected:,} of {sub.n_total:,} cases (subset: ",
        sub.selection,
        f"): {SUBSET_WARNING}",
    )


_ATTENTION = ("fail", "warn", "error", "incomparable", "no-reference")


@dataclass(frozen=True)
class NoReference:
    """The loud line for drift checks with no reference; ``detail`` is untrusted text."""

    status: str  # missing | expired
    detail: str
    n_checks: int
    blocking: bool

    def lead(self) -> str:
        return f"No reference ({self.status})"

    def consequence(self) -> str:
        checks = plural(self.n_checks, "drift check", "drift checks")
        if self.blocking:
            return f"{checks} could not run, and `require_reference` makes that a blocking failure."
        return f"{checks} could not run, which is not a pass. Pin a reference with `evalkit pin`."


def no_reference(report: GateReport) -> NoReference | None:
    """Set when drift checks were configured but there was no reference to compare with."""
    ref = report.reference
    if ref is None or ref.run is not None:
        return None
    drift = [v for v in report.verdicts if v.kind == "vs_reference"]
    return NoReference(ref.status, ref.detail, len(drift), any(v.blocking for v in drift))


PROMOTE_ONE = "Promote a run of the default branch as the baseline"


def no_baseline(report: GateReport) -> tuple[str, bool] | None:
    """What vs_baseline checks with no baseline mean (a sentence), and whether it blocks."""
    vs = [v for v in report.verdicts if v.kind == "vs_baseline"]
    if report.baseline is not None or not vs:
        return None
    checks = plural(len(vs), "vs_baseline check", "vs_baseline checks")
    blocking = any(v.blocking for v in vs)  # require_baseline
    then = (
        "and `require_baseline` makes that a blocking failure"
        if blocking
        else "so a regression could not be detected, and that does not block"
    )
    return f"{checks} had nothing to compare against, {then}", blocking


def non_finite_line(report: GateReport) -> str | None:
    """Which statistics are NaN or infinite (each shown as n/a), the first five named."""
    bad = non_finite_fields(report)
    if not bad:
        return None
    shown = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
    return f"Some statistics are not finite (NaN or infinite) and show as n/a: {shown}"


def multiplicity(report: GateReport) -> str | None:
    """How many significance tests ran and the chance that at least one false-alarmed."""
    n = report.n_vs_baseline_tests
    if n == 0:
        return None
    drift = sum(1 for v in report.verdicts if v.kind == "vs_reference" and v.comparison)
    # Drift tests are in the same family as the vs_baseline ones (docs/drift.md).
    what = f"{n - drift} vs_baseline + {drift} vs_reference" if drift else f"{n} vs_baseline"
    note = report.familywise.near_margin_note() if report.familywise is not None else None
    after = "" if note is None else f" {note}"
    if n == 1 or report.alpha_familywise is None:
        return f"{what} test ran.{after}"
    fw = report.alpha_familywise
    if report.familywise is not None and math.isfinite(fw):
        chance = report.familywise.describe(report.correction)
    else:
        chance = f"{percent(fw) if math.isfinite(fw) else NA} (correction: {report.correction})"
    sentence = (
        f"{what} tests ran: if nothing had changed, the chance that at least one "
        f"of them fails falsely is {chance}."
    )
    return sentence + after


# A repeated run's per-metric trial-noise note (evalkit._engine.trials.TrialSpread.line).
_TRIAL_NOTE = re.compile(r"^(?P<metric>.+?): (?P<k>\d+) trials per case, ")
_TRIAL_SHARE = re.compile(r"; (?P<share>\d+)% of the variance of the case means is trial noise")


def split_notes(notes: tuple[str, ...]) -> tuple[list[str], str | None, list[str]]:
    """The notes, less a repeated run's per-metric trial-noise lines, and those lines said
    in one (untrusted: metric names) and whole."""
    trial = [(m, note) for note in notes if (m := _TRIAL_NOTE.match(note)) is not None]
    if len(trial) < 2:  # one line is already one line
        return list(notes), None, []
    rest = [note for note in notes if _TRIAL_NOTE.match(note) is None]
    lines = [note for _, note in trial]
    shares = [int(s["share"]) for line in lines if (s := _TRIAL_SHARE.search(line))]
    k = min(int(m["k"]) for m, _ in trial)
    text = f"{k} trials per case on {plural(len(trial), 'metric', 'metrics')}"
    if shares:
        lo, hi = min(shares), max(shares)
        share = f"{lo}%" if lo == hi else f"{lo}–{hi}%"
        text += f"; trial noise is {share} of the variance of the case means"
    return rest, text, lines


#: A piece of a line: fixed words, then untrusted text (None: none) and its length cap.
Piece = tuple[str, str | None, int]


def run_pieces(run: RunSummary) -> list[Piece]:
    """``NAME · 300 cases · commit abc1234 · created …``: a run's provenance, which each
    reporter writes after its label, escaping the untrusted parts its own way."""
    pieces: list[Piece] = [("", run.name, 80), (f"{run.n_cases:,} cases", None, 0)]
    sha = short_sha(run.git_commit)
    if sha is not None:
        pieces.append((f"commit {sha}", None, 0))
    elif run.git_commit:
        pieces.append(("commit ", run.git_commit, 40))
    # The candidate's too: a reader can tell a fresh report from yesterday's.
    if run.created_at:
        pieces.append(("created ", run.created_at, 40))
    return pieces


def short_sha(sha: str | None) -> str | None:
    """The first 7 characters of a hex commit id; anything else is not a commit id."""
    if sha is None:
        return None
    s = sha.strip()
    if 4 <= len(s) <= 64 and all(ch in "0123456789abcdefABCDEF" for ch in s):
        return s[:7].lower()
    return None


def non_finite_fields(report: GateReport) -> list[str]:
    """Paths (as in the JSON report) of statistics that are NaN or infinite."""
    return [path for path, value in _floats(report) if not math.isfinite(value)]


def _floats(report: GateReport) -> Iterator[tuple[str, float]]:
    """Every float field of the records the JSON report writes, by its path there."""
    yield from _record_floats("multiplicity", report)  # its one float: alpha_familywise
    if report.stopped_early is not None:
        yield from _record_floats("stopped_early", report.stopped_early)
    for i, v in enumerate(report.verdicts):
        base = f"checks[{i}]"
        yield from _record_floats(base, v)
        c = v.comparison
        if c is not None:
            yield from _record_floats(f"{base}.comparison", c)
            if c.bootstrap_ci is not None:
                for name, value in zip(("low", "high", "confidence"), c.bootstrap_ci, strict=True):
                    yield f"{base}.comparison.bootstrap_ci.{name}", value
            yield from _case_floats(f"{base}.comparison.deltas", c.deltas)
        yield from _case_floats(f"{base}.worst_cases", v.worst_cases)


def _record_floats(path: str, record: Any) -> Iterator[tuple[str, float]]:
    """``record``'s float fields that hold a value (:func:`json_record` writes each)."""
    for name in _float_names(record):
        value = getattr(record, name)
        if value is not None:
            yield f"{path}.{name}", float(value)


def _float_names(record: Any) -> list[str]:
    """The fields of the dataclass ``record`` declared as a float (or None)."""
    return [f.name for f in fields(record) if str(f.type).startswith("float")]


def _case_floats(path: str, deltas: tuple[CaseDelta, ...]) -> Iterator[tuple[str, float]]:
    """Per-case values, named only where their sum is not finite (naming each is slow)."""
    for j, d in enumerate(deltas):
        if not math.isfinite(float(d.candidate) + float(d.baseline) + float(d.delta)):
            for name in ("candidate", "baseline", "delta"):
                yield f"{path}[{j}].{name}", float(getattr(d, name))
