"""The per-slice section of every report (issue 28), from one set of cells."""

from __future__ import annotations

import math
from typing import Any, Final

from evalkit._util.pvalues import pvalue
from evalkit.gate.slices import SliceReport, SliceVerdict
from evalkit.report import summary as S
from evalkit.report.escape import md, one_line
from evalkit.report.summary import json_record
from evalkit.report.svg import ForestRow, forest_plot

HEADERS: Final = (
    "check",
    "metric",
    "slice",
    "n",
    "baseline",
    "candidate",
    "Δ",
    "interval",
    "p (bad side)",
    "FDR-adjusted p",
    "status",
)
#: Moved slices listed in the PR comment before the rest are counted, not listed.
MARKDOWN_SHOWN: Final = 10

#: What each slice status is called, in every report.
SLICE_WORDS: Final = {
    "regressed": "regressed",
    "improved": "improved",
    "no-change": "no significant change",
    "too-small": "too small, not tested",
    "no-baseline": "no baseline cases",
    "error": "error",
}


def _interval(v: SliceVerdict) -> str:
    """``99.45% CI [-0.1103, -0.0097]``: labelled with its own level, which is the FDR
    step-up's (two-sided 1 − 2ℓ), not the check's."""
    if v.ci_low is None or v.ci_high is None or v.confidence is None:
        return ""
    return f"{S.confidence(v.confidence)} CI {S.interval(v.ci_low, v.ci_high)}"


def _p(v: SliceVerdict, p: float | None) -> str:
    """A bad-side p, or ``—`` beside "improved": there it is near 1 and says nothing
    the word does not (the interval lies wholly on the good side)."""
    if p is None:
        return ""
    return "—" if v.status == "improved" else pvalue(p)


def slice_cells(v: SliceVerdict) -> tuple[str, ...]:
    """One slice's row, in :data:`HEADERS` order, as every format prints it."""
    n = f"{v.n_paired}/{v.n_cases}" if v.n_paired != v.n_cases else str(v.n_cases)
    return (
        one_line(v.check_id, S.NAME_LEN),
        one_line(v.metric, S.NAME_LEN),
        one_line(v.slice, S.NAME_LEN),
        n,
        S.num(v.baseline_value) if v.baseline_value is not None else "",
        S.num(v.candidate_value) if v.candidate_value is not None else "",
        S.signed(v.delta) if v.delta is not None else "",
        _interval(v),
        _p(v, v.p_value),
        _p(v, v.p_adjusted),
        SLICE_WORDS[v.status],
    )


def summary_line(report: SliceReport) -> str:
    """``1 of 2 slice tests regressed (false discoveries held at q = 0.05 by …)``."""
    regressed = sum(1 for v in report.verdicts if v.status == "regressed")
    improved = sum(1 for v in report.verdicts if v.status == "improved")
    tested = report.n_tested
    text = f"{regressed} of {tested} slice {'test' if tested == 1 else 'tests'} regressed"
    if improved:
        text += f", {improved} improved"
    text += f" (false discoveries held at q = {report.q:g} by {report.method_name})"
    skipped = len(report.verdicts) - tested
    if skipped:
        text += f"; {skipped} not tested (too small or no baseline cases)"
    return text


def slice_text(report: SliceReport, width: int | None = None) -> str:
    """Every slice, under one summary line: a fixed-width table, or one short block per
    slice where ``width`` is too narrow for it, so no figure is cut mid-number."""
    rows = [HEADERS, *(slice_cells(v) for v in report.verdicts)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADERS))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    head = f"Slices: {summary_line(report)}"
    if width is not None and max(len(line) for line in lines) > width:
        lines = [line for cells in rows[1:] for line in _block(cells)]
    if width is not None and len(head) > width:
        import textwrap

        head = "\n".join(textwrap.wrap(head, width, subsequent_indent="  ", break_long_words=False))
    return "\n".join([head, *lines]) + "\n"


def _is(p: str) -> str:
    """``=0.0196``, or ``<0.0001`` as it stands (never ``=<0.0001``)."""
    return p if p.startswith("<") else f"={p}"


def _block(cells: tuple[str, ...]) -> list[str]:
    """One slice as short lines: what was decided, the change, then its p-values."""
    check, metric, where, n, base, cand, delta, interval, p, adjusted, status = cells
    change = [f"{base} → {cand}" if base or cand else "", f"Δ {delta}" if delta else ""]
    shown = p not in ("", "—")
    tests = [
        f"FDR-adjusted p{_is(adjusted)}" if shown and adjusted else "",
        f"(p{_is(p)})" if shown else "",
        f"check {check}",
    ]
    return [
        f"{where}  {metric}  n={n}  {status}",
        *(
            "    " + "  ".join(f for f in part if f)
            for part in ([*change, interval], tests)
            if any(part)
        ),
    ]


def slice_json(report: SliceReport) -> dict[str, Any]:
    """The ``slices`` object of the JSON report (docs/report-schema.md)."""
    verdicts = [
        json_record(
            v,
            """check_id metric slice status n_cases n_paired baseline_value candidate_value
            delta ci_low ci_high confidence p_value p_adjusted procedure message""",
        )
        for v in report.verdicts
    ]
    return json_record(
        report, "dimensions method why q min_cases level n_tested verdicts", verdicts=verdicts
    )


def slice_markdown(report: SliceReport) -> str:
    """The PR comment's slice section: only the slices that moved, and how many were tested."""
    moved = [v for v in report.verdicts if v.moved]
    tested = report.n_tested
    head = (
        f"**Slices**: {len(moved)} of {tested} slice test(s) moved "
        f"({report.method_name}, q = {report.q:g}"
    )
    skipped = len(report.verdicts) - tested
    head += f"; {skipped} not tested: too small or no baseline cases)" if skipped else ")"
    if not moved:
        return head + ".\n\n"
    order = sorted(moved, key=lambda v: (v.status != "regressed", v.p_adjusted or 1.0))
    keep = (0, 2, 6, 7, 9, 10)  # check, slice, Δ, interval, FDR-adjusted p, status
    # an interval's bounds stay on one line: "95% CI" / "[-0.1103, -0.0097]"
    cells = [
        [md(slice_cells(v)[i], S.NAME_LEN).replace(", ", ",&nbsp;") for i in keep]
        for v in order[:MARKDOWN_SHOWN]
    ]
    rows = ["| " + " | ".join(row) + " |\n" for row in cells]
    table = "| " + " | ".join(HEADERS[i] for i in keep) + " |\n" + "|---" * len(keep) + "|\n"
    more = (
        f"\n… {len(moved) - MARKDOWN_SHOWN} more in the JSON report\n"
        if len(moved) > MARKDOWN_SHOWN
        else ""
    )
    return f"{head}:\n\n{table}{''.join(rows)}{more}\n"


def slice_forest(report: SliceReport) -> str:
    """A forest plot of every tested slice, its interval at the step-up's level."""
    rows = [
        ForestRow(
            label=f"{v.slice} ({v.check_id})",
            metric=v.metric,
            delta=v.delta,
            ci_low=v.ci_low,
            ci_high=v.ci_high,
            confidence=v.confidence,
            p_value=v.p_adjusted if v.p_adjusted is not None else math.nan,
            higher_is_better=v.higher_is_better,
            status="fail" if v.status == "regressed" else "pass",
            p_label="FDR-adjusted p",
            instead_of_p="improved" if v.status == "improved" else None,
        )
        for v in report.verdicts
        if v.tested
        and v.delta is not None
        and v.ci_low is not None
        and v.ci_high is not None
        and v.confidence is not None
    ]
    return forest_plot(rows) if rows else ""
