"""The markdown report: the body of the sticky PR comment and the step summary.

Layout, most important first (the order truncation protects them in)::

    <!-- evalkit report config=NAME -->        hidden marker that finds the sticky comment
    ### ❌ FAIL: 3 of 5 checks passed; blocking: a, b
    provenance (candidate / baseline, or a loud "no baseline")
    how many significance tests ran and the chance of a false alarm
    notes
    the checks table
    why each non-passing check did not pass
    failed cases and their errors
    goldens diff (added / removed / changed)
    most regressed cases per check
    per-check details, each collapsed, with every paired case

Every piece of untrusted text goes through :func:`evalkit.report.escape.md`.
The whole body stays under ``max_chars`` (counted in UTF-8 bytes, so it is under
the limit however GitHub counts) by :func:`evalkit.report._layout.fit`.
"""

from __future__ import annotations

from evalkit._util.units import suffix, unit_of
from evalkit.errors import InputError
from evalkit.gate.model import CaseDelta, CheckVerdict, GateReport, RunSummary
from evalkit.report import summary as S
from evalkit.report._layout import Part, Rows, Section, fit, render
from evalkit.report.escape import marker_name, md, safe_url
from evalkit.report.slices import slice_markdown

GITHUB_LIMIT = 65_536  # GitHub rejects a comment body of this many characters or more
DEFAULT_BUDGET = 60_000
MIN_BUDGET = 10_000

# Per-field caps (characters of the original text), so one hostile value cannot eat the
# budget: ids and names are cut long before they stop being recognisable.
ID_LEN = 120
NAME_LEN = 80
MESSAGE_LEN = 400
ERROR_LEN = 300
NOTE_LEN = 400
INLINE_LIST = 5  # goldens-diff lists up to this long are shown open, longer ones collapse
FAILED_OPEN = 10  # failed-case tables up to this long are shown open

# Truncation priorities: lower is dropped first.
P_CASE_DETAILS = 1
P_WORST = 2
P_GOLDENS = 3
P_FAILED = 4
P_WHY = 5
P_TABLE = 6


def comment_marker(config_name: str) -> str:
    """The hidden first line that identifies this config's sticky comment."""
    return f"<!-- evalkit report config={marker_name(config_name)} -->"


def render_markdown(
    report: GateReport,
    *,
    config_name: str,
    max_chars: int = DEFAULT_BUDGET,
    details_url: str | None = None,
) -> str:
    """The PR-comment body for ``report``: deterministic, escaped, under ``max_chars``."""
    if not MIN_BUDGET <= max_chars < GITHUB_LIMIT:
        raise InputError(
            f"max_chars={max_chars}: the markdown budget must be between {MIN_BUDGET:,} and "
            f"{GITHUB_LIMIT - 1:,} (GitHub rejects a comment of {GITHUB_LIMIT:,} characters)"
        )
    url = safe_url(details_url) if details_url is not None else None
    doc = _document(report, config_name, url)
    fit(doc, max_chars)
    return render(doc)


# ----------------------------------------------------------------------------- document


def _document(report: GateReport, config_name: str, url: str | None) -> list[Part]:
    doc: list[Part] = [comment_marker(config_name) + "\n", _headline(report) + "\n\n"]
    doc.append(_provenance(report))
    line = S.multiplicity(report)
    if line is not None:
        doc.append(line + "\n\n")
    doc.extend(_notes(report))
    doc.append(_checks_table(report))
    doc.extend(_why(report))
    doc.extend(_caveats(report))
    doc.extend(_failed_cases(report))
    doc.extend(_goldens(report))
    if report.slices is not None:  # report/slices.py: the slices that moved
        doc.append(slice_markdown(report.slices))
    doc.extend(_most_regressed(report))
    doc.extend(_details(report))
    if url is not None:
        doc.append(f"Full report and per-case rows: [JSON report and artifact]({url})\n")
    return doc


def _headline(report: GateReport) -> str:
    h = S.headline(report)
    text = f"### {h.icon} {h.word}: {h.counts()}"
    if h.named:
        names = ", ".join(f"**{md(n, NAME_LEN)}**" for n in h.named)
        more = f" and {h.more} more" if h.more else ""
        text += f"; {h.named_label}: {names}{more}"
    return text


def _run_line(label: str, run: RunSummary) -> str:
    bits = [f"**{label}** {md(run.name, NAME_LEN)}", f"{run.n_cases:,} cases"]
    sha = S.short_sha(run.git_commit)
    if sha is not None:
        bits.append(f"commit {sha}")
    elif run.git_commit:
        bits.append(f"commit {md(run.git_commit, 40)}")
    # The candidate's creation time changes on every run; leaving it out keeps the sticky
    # comment byte-identical when nothing else changed, so it is not rewritten.
    if run.created_at and label != "Candidate":
        bits.append(f"created {md(run.created_at, 40)}")
    return " · ".join(bits)


def _reference(report: GateReport) -> str:
    """The drift checks' reference: its run line, or a loud warning that there is none."""
    ref = report.reference
    if ref is not None and ref.run is not None:
        return _run_line("Reference", ref.run) + f" · {md(ref.detail, NOTE_LEN)}\n\n"
    missing = S.no_reference(report)
    if missing is None:
        return ""
    return (
        f"> [!{'CAUTION' if missing.blocking else 'WARNING'}]\n"
        f"> **{missing.lead()}**: {md(missing.detail, NOTE_LEN)}. {missing.consequence()}\n\n"
    )


def _provenance(report: GateReport) -> str:
    return _baseline_provenance(report) + _reference(report)


def _baseline_provenance(report: GateReport) -> str:
    lines = [_run_line("Candidate", report.candidate)]
    coverage = S.coverage_line(report)
    if coverage is not None:
        before, selection, after = coverage
        lines.append(f"**{before}{md(selection, NAME_LEN)}{after}**")
    if report.baseline is not None:
        lines.append(_run_line("Baseline", report.baseline))
        return "  \n".join(lines) + "\n\n"
    text = "  \n".join(lines) + "\n\n"
    n_vs = sum(1 for v in report.verdicts if v.kind == "vs_baseline")
    if n_vs == 0:
        if report.reference is not None:
            return text
        return text + "No baseline (no check compares against one).\n\n"
    blocking = any(v.kind == "vs_baseline" and v.blocking for v in report.verdicts)
    consequence = (
        "and `require_baseline` makes that a blocking failure"
        if blocking
        else "so they could not detect a regression and do not block"
    )
    return text + (
        "> [!WARNING]\n"
        f"> **No baseline**: {n_vs} vs_baseline check(s) had nothing to compare against, "
        f"{consequence}. Promote a run of the default branch as the baseline.\n\n"
    )


def _notes(report: GateReport) -> list[Part]:
    notes = [md(n, NOTE_LEN) for n in report.notes]
    bad = S.non_finite_fields(report)
    if bad:
        shown = ", ".join(bad[:5]) + (f" and {len(bad) - 5} more" if len(bad) > 5 else "")
        notes.append(f"Some statistics are not finite (NaN or infinite) and show as n/a: {shown}")
    if not notes:
        return []
    rows = [f"- {n}\n" for n in notes]
    return [Rows(rows, P_WHY, unit="notes", closing="\n", floor=len(rows))]


def _caveats(report: GateReport) -> list[Part]:
    """Statistical warnings at a glance: a "pass" on 30 skewed cases is weaker evidence."""
    found = S.caveats(report)
    if not found:
        return []
    rows = [
        f"- ⚠️ {', '.join(md(c, NAME_LEN) for c in checks)}: {md(warning, MESSAGE_LEN)}\n"
        for warning, checks in found
    ]
    return [Rows(rows, P_WHY, unit="caveats", head="**Read with care**\n\n", closing="\n")]


_TABLE_HEAD = (
    "| | check | metric | status | result | coverage | W / L / T | detects ≥ (80% power) |\n"
    "|---|---|---|---|---|---|---|---|\n"
)


def _metric_cell(v: CheckVerdict) -> str:
    arrow = {True: " ↑", False: " ↓", None: ""}[v.higher_is_better]
    return md(v.metric, NAME_LEN) + arrow


def _checks_table(report: GateReport) -> Part:
    if not report.verdicts:
        return "No checks are configured, so nothing was gated.\n\n"
    rows = [
        f"| {S.STATUS_ICON[v.status]} | {md(v.check_id, NAME_LEN)} | {_metric_cell(v)} "
        f"| {S.status_word(v)} | {S.result(v)} | {v.covered}/{v.total} cases "
        f"| {S.wlt(v)} | {S.mde(v)} |\n"
        for v in report.verdicts
    ]
    return Rows(rows, P_TABLE, unit="checks", head=_TABLE_HEAD, closing="\n", floor=len(rows))


def _why(report: GateReport) -> list[Part]:
    rows = [
        f"- {S.STATUS_ICON[v.status]} **{md(v.check_id, NAME_LEN)}**: "
        f"{md(v.message, MESSAGE_LEN)}\n"
        for v in report.verdicts
        if v.status != "pass"
    ]
    if not rows:
        return []
    return [Rows(rows, P_WHY, unit="checks", closing="\n", floor=len(rows))]


def _collapsible(summary: str, rows: Rows, *, open_: bool = False) -> Rows:
    """Wrap ``rows`` in ``<details>`` whose tags live in the always-emitted parts."""
    tag = "<details open>" if open_ else "<details>"
    rows.opening = f"{tag}\n<summary>{summary}</summary>\n\n" + rows.opening
    rows.closing = rows.closing + "\n</details>\n\n"
    return rows


def _failed_cases(report: GateReport) -> list[Part]:
    failed = report.candidate.failed
    if not failed:
        return []
    title = f"#### 💥 {len(failed):,} of {report.candidate.n_cases:,} cases failed to run\n\n"
    rows = Rows(
        [
            f"| {md(cid, ID_LEN)} | {md(err or '(no message)', ERROR_LEN)} |\n"
            for cid, err in failed
        ],
        P_FAILED,
        head="| case | error |\n|---|---|\n",
        floor=FAILED_OPEN,
        soft=100,
    )
    if len(failed) > FAILED_OPEN:
        rows = _collapsible(f"All {len(failed):,} failed cases and their errors", rows)
    else:
        rows.closing = "\n"
    return [title, Section([rows], P_FAILED, "Failed cases omitted to fit the comment.\n\n")]


def _goldens(report: GateReport) -> list[Part]:
    diff = report.goldens_diff
    if diff.empty:
        return []
    counts = (
        f"{len(diff.added):,} added · {len(diff.removed):,} removed · {len(diff.changed):,} changed"
    )
    head = (
        f"**Goldens changed since the baseline**: {counts}. vs_baseline checks compared only "
        "the cases present and unchanged on both sides.\n\n"
    )
    lists: list[str | Rows] = []
    for label, ids in (("Added", diff.added), ("Removed", diff.removed), ("Changed", diff.changed)):
        if not ids:
            continue
        rows = Rows([f"- {md(i, ID_LEN)}\n" for i in ids], P_GOLDENS, floor=INLINE_LIST, soft=50)
        if len(ids) > INLINE_LIST:
            lists.append(_collapsible(f"{label} ({len(ids):,})", rows))
        else:
            rows.opening = f"{label}:\n\n"
            rows.closing = "\n"
            lists.append(rows)
    return [head, Section(lists, P_GOLDENS, "Goldens diff lists omitted to fit the comment.\n\n")]


def _delta_head(v: CheckVerdict) -> str:
    return f"| case | {S.against(v)} | candidate | Δ |\n|---|---|---|---|\n"


def _delta_row(d: CaseDelta) -> str:
    values = f"{S.num(d.baseline)} | {S.num(d.candidate)} | {S.signed(d.delta)}"
    return f"| {md(d.case_id, ID_LEN)} | {values} |\n"


def _most_regressed(report: GateReport) -> list[Part]:
    blocks: list[str | Rows] = []
    for v in report.verdicts:
        if not v.worst_cases:
            continue
        c = v.comparison
        losses = f" ({S.plural(c.losses, 'loss', 'losses')} in all)" if c is not None else ""
        n = len(v.worst_cases)
        summary = (
            f"{S.STATUS_ICON[v.status]} {md(v.check_id, NAME_LEN)}, {md(v.metric, NAME_LEN)}: "
            f"{'the' if n == 1 else n} most regressed {'case' if n == 1 else 'cases'}{losses}"
        )
        rows = Rows([_delta_row(d) for d in v.worst_cases], P_WORST, head=_delta_head(v), floor=10)
        blocks.append(_collapsible(summary, rows, open_=v.status != "pass"))
    if not blocks:
        return []
    return [
        Section(
            ["#### Most regressed cases\n\n", *blocks],
            P_WORST,
            "Most-regressed case lists omitted to fit the comment.\n\n",
        )
    ]


def _stats(v: CheckVerdict) -> list[str]:
    kind = v.kind if v.mode is None else f"{v.kind} ({md(v.mode, NAME_LEN)})"
    lines = [
        md(v.message, MESSAGE_LEN),
        f"{kind}, level {v.level}" + (f", {S.direction(v)}" if S.direction(v) else ""),
        f"coverage {v.covered}/{v.total} cases",
    ]
    u = unit_of(v.metric)
    if v.observed is not None:
        lines.append(f"observed {S.num(v.observed, u)}")
    if v.kind == "threshold" and v.threshold is not None:
        sym = S.op_symbol(v.op) or md(v.op or "?", 8)
        lines.append(f"threshold {sym} {S.num(v.threshold, u)}")
    c = v.comparison
    if c is not None:
        lines += [
            f"paired means: {S.against(v)} {S.num(c.baseline_value, u)}"
            + (
                f", candidate {S.num(c.candidate_value, u)}"
                if c.candidate_value is not None
                else ""
            )
            + f", Δ {S.signed(c.delta, u)}, "
            f"{S.confidence(c.confidence)} CI [{S.signed(c.ci_low)}, {S.signed(c.ci_high)}]"
            f"{suffix(v.metric)}, "
            + S.p_text(c.deciding_p, c.p_label)
            + (f" (unadjusted {S.p_text(c.p_value)})" if c.p_adjusted is not None else ""),
            f"{md(c.method, NAME_LEN)} over {c.n_paired:,} paired cases, "
            f"{c.n_resamples:,} resamples; wins / losses / ties {c.wins} / {c.losses} / {c.ties}",
        ]
        if c.mde is not None:
            lines.append(f"detects a true change of ≥ {S.num(c.mde, u)} with 80% power")
        if c.margin is not None:
            lines.append(f"non-inferiority margin {S.num(c.margin, u)}")
        lines += [f"warning: {md(w, MESSAGE_LEN)}" for w in c.warnings]
    return [f"- {line}\n" for line in lines]


def _details(report: GateReport) -> list[Part]:
    blocks: list[str | Rows] = []
    for v in report.verdicts:
        summary = f"{S.STATUS_ICON[v.status]} {md(v.check_id, NAME_LEN)}: {S.status_word(v)}"
        hib = v.higher_is_better
        deltas = S.worst_first(S.case_deltas(v), hib)
        rows = Rows(
            [
                f"| {md(d.case_id, ID_LEN)} | {S.num(d.baseline)} | {S.num(d.candidate)} "
                f"| {S.signed(d.delta)} | {S.outcome(d, hib)} |\n"
                for d in deltas
            ],
            P_CASE_DETAILS,
            floor=0,
            soft=100,
            opening="".join(_stats(v)) + ("\n" if deltas else ""),
            head=f"| case | {S.against(v)} | candidate | Δ | outcome |\n|---|---|---|---|---|\n",
        )
        blocks.append(_collapsible(summary, rows))
    if not blocks:
        return []
    return [
        Section(
            ["#### Per-check details\n\n", *blocks],
            P_CASE_DETAILS,
            "Per-check details omitted to fit the comment (see the JSON report/artifact).\n\n",
        )
    ]


__all__ = ["DEFAULT_BUDGET", "GITHUB_LIMIT", "comment_marker", "render_markdown"]
