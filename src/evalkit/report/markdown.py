"""The markdown report: the body of the sticky PR comment and the step summary."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from evalkit.errors import InputError
from evalkit.gate.model import CaseDelta, CheckVerdict, GateReport, RunSummary
from evalkit.report import advice as A
from evalkit.report import summary as S
from evalkit.report._layout import Part, Rows, Section, fit, render
from evalkit.report.details import detail_lines
from evalkit.report.escape import marker_name, md, safe_url
from evalkit.report.links import docs_url
from evalkit.report.slices import slice_markdown
from evalkit.report.summary import ERROR_LEN, ID_LEN, MESSAGE_LEN, NAME_LEN

GITHUB_LIMIT = 65_536  # GitHub rejects a comment body of this many characters or more
#: Changed cases listed per check, worst first: the comment is read, not searched; the
#: JSON report and the HTML page hold every case.
CASE_ROWS = 10
DEFAULT_BUDGET = 60_000
MIN_BUDGET = 10_000

INLINE_LIST = 5  # goldens-diff lists up to this long are shown open, longer ones collapse
FAILED_OPEN = 10  # failed-case tables up to this long are shown open

# Truncation priorities: lower is dropped first.
P_CASE_DETAILS = 1
P_PASSED = 2
P_WORST = 3
P_GOLDENS = 4
P_FAILED = 5
P_WHY = 6
P_TABLE = 7
ALL_OPEN = 15  # up to this many checks, one table in the checks file's order


def comment_marker(config_name: str) -> str:
    """The hidden first line that identifies this config's sticky comment."""
    return f"<!-- evalkit report config={marker_name(config_name)} -->"


def render_markdown(
    report: GateReport,
    *,
    config_name: str,
    max_chars: int = DEFAULT_BUDGET,
    details_url: str | None = None,
    baseline_detail: str | None = None,
) -> str:
    """The PR-comment body for ``report``: deterministic, escaped, under ``max_chars``.

    ``baseline_detail`` is the store's sentence on where the baseline came from (one of
    ``report.notes``); when there is no baseline it is said in the "No baseline" line
    instead of again as a note.
    """
    if not MIN_BUDGET <= max_chars < GITHUB_LIMIT:
        raise InputError(
            f"max_chars={max_chars}: the markdown budget must be between {MIN_BUDGET:,} and "
            f"{GITHUB_LIMIT - 1:,} (GitHub rejects a comment of {GITHUB_LIMIT:,} characters)"
        )
    url = safe_url(details_url) if details_url is not None else None
    doc = _document(report, config_name, url, baseline_detail)
    fit(doc, max_chars)
    return render(doc)


# ----------------------------------------------------------------------------- document


def _document(
    report: GateReport, config_name: str, url: str | None, baseline_detail: str | None
) -> list[Part]:
    why = baseline_detail if report.baseline is None and baseline_detail in report.notes else None
    doc: list[Part] = [comment_marker(config_name) + "\n", _headline(report) + "\n\n"]
    doc.append(_provenance(report))
    doc.extend(_conditions(report, why))
    doc.extend(_checks_tables(report))
    full = S.full_coverage(report)  # the line under the table, when the coverage is full
    doc.append(full + "\n\n" if full is not None else "")
    doc.extend(_warnings(report))
    doc.extend(_why(report))
    doc.extend(_notes(report, why))
    doc.append(_how(report))
    doc.extend(_failed_cases(report))
    doc.extend(_goldens(report))
    if report.slices is not None:  # report/slices.py: the slices that moved
        doc.append(slice_markdown(report.slices))
    doc.extend(_details(report))
    if url is not None:
        doc.append(f"Full report and per-case rows: [JSON report and artifact]({url})\n")
    return doc


def _headline(report: GateReport) -> str:
    """The verdict and the blocking checks, and a second line only where the family-wise
    risk changes the reading (report/advice.py)."""
    h = S.headline(report)
    text = f"### {h.icon} {h.word}: {h.counts()}"
    if h.named:
        names = ", ".join(f"**{md(n, NAME_LEN)}**" for n in h.named)
        more = f" and {h.more} more" if h.more else ""
        text += f"; {h.named_label}: {names}{more}"
    r = A.risk(report)
    if r is not None:
        culprit = f"**{md(r.culprit, NAME_LEN)}**" if r.culprit is not None else ""
        text += f"\n\n{r.before()}{culprit}{r.after()}"
    return text


def _run_line(label: str, run: RunSummary) -> str:
    bits = [
        fixed + (md(text, n) if text is not None else "") for fixed, text, n in S.run_pieces(run)
    ]
    return f"**{label}** " + " · ".join(bits)


def _provenance(report: GateReport) -> str:
    lines = [_run_line("Candidate", report.candidate)]
    if report.baseline is not None:
        lines.append(_run_line("Baseline", report.baseline))
    ref = report.reference
    if ref is not None and ref.run is not None:
        lines.append(_run_line("Reference", ref.run) + f" · {md(ref.detail, MESSAGE_LEN)}")
    return "  \n".join(lines) + "\n\n"


def _conditions(report: GateReport, why: str | None) -> list[Part]:
    """Everything that changes how the whole table reads, each said once, in one box."""
    lines: list[str] = []
    blocking = False
    # A stop where every check settled is how the user asked the gate to run, not a
    # warning: alone, it is a note; a subset or a spent budget is a warning.
    stopped = report.stopped_early
    alarming = not (stopped is not None and stopped.settled)
    coverage = S.coverage_line(report)
    if coverage is not None:
        before, selection, after = coverage
        lines.append(f"**{before}{md(selection, NAME_LEN)}{after}**")
    unbased = S.no_baseline(report)
    if unbased is not None:
        blocking |= unbased[1]
        # The store's own sentence says how to get one, for its kind of store.
        fix = f" ({md(why, MESSAGE_LEN)})" if why else f". {S.PROMOTE_ONE}"
        lines.append(f"**No baseline**: {unbased[0]}{fix}.")
    missing = S.no_reference(report)
    if missing is not None:
        blocking |= missing.blocking
        then = missing.consequence().removesuffix(".")
        lines.append(
            f"**{missing.lead()}**: {md(missing.detail, MESSAGE_LEN)}. {then} "
            f"([drift checks]({docs_url('drift.md')}))."
        )
    bad = S.non_finite_line(report)
    if bad is not None:
        lines.append(bad)
    if not lines:
        return []
    alarming |= len(lines) > (coverage is not None)
    kind = "CAUTION" if blocking else "WARNING" if alarming else "NOTE"
    return [
        f"> [!{kind}]\n" + "".join(f"> {line}\n>\n" for line in lines[:-1]) + f"> {lines[-1]}\n\n"
    ]


def _head(report: GateReport, partial: bool, with_p: bool = True) -> str:
    level = S.shared_confidence(report)
    result = f"result ({S.confidence(level)} CI)" if level is not None else "result"
    cols = ["status", "check", "metric", result] + ["p"] * with_p + ["cases"] * partial
    return "| " + " | ".join(cols) + " |\n" + "|---" * len(cols) + "|\n"


_SEPARATOR = re.compile(r"(&#95;|[./-])")
BREAK_EVERY = 4  # visible characters between break opportunities, at the least


def _breakable(text: str) -> str:
    """A long id, escaped, with a break opportunity after some of its ``_ . - /``, so a
    narrow cell wraps it between words rather than widening the table past the comment."""
    escaped = md(text, NAME_LEN)
    if len(text) < 16:
        return escaped
    out: list[str] = []
    run = 0
    for piece in _SEPARATOR.split(escaped):
        out.append(piece)
        run += 1 if piece.startswith("&#") else len(piece)
        if _SEPARATOR.fullmatch(piece) and run >= BREAK_EVERY:
            out.append("<wbr>")
            run = 0
    return "".join(out)


def _nb(text: str) -> str:
    """Spaces that do not break: a cell wraps between pieces, never inside Δ, a CI or a p."""
    return text.replace(" ", "&nbsp;")


def _row(
    v: CheckVerdict,
    shared: float | None,
    partial: bool,
    with_p: bool = True,
    before_after: bool = True,
) -> str:
    """One check's row; a row that did not pass says before → after where the table has
    the room (not past ALL_OPEN checks, where the ids need the width)."""
    # Δ and its interval may go on two lines, each whole: "Δ -0.0412" / "[-0.0650, -0.0170]";
    # a row that did not pass says before → after on a line of its own, then Δ [interval].
    c = v.comparison
    moved = c is not None and v.status != "pass" and before_after
    parts = []
    for part in S.change_parts(v):
        delta, bracket, interval = part.partition(" [")
        gap = "&nbsp;" if moved else " "
        parts.append(_nb(delta) + (gap + _nb("[" + interval) if bracket else ""))
    if c is not None:
        if c.confidence != shared:
            parts[0] += f" {S.confidence(c.confidence)}&nbsp;CI"
        if moved:
            line = ("reference " if v.kind == "vs_reference" else "") + S.before_after(v, c)
            if len(parts) > 1:  # the margin: on the first line, so the cell stays two
                line += f" ({parts.pop().replace('&nbsp;', ' ')})"
            parts[0] = _nb(line + ":") + " " + parts[0]
        elif v.kind == "vs_reference":
            parts[0] = "vs&nbsp;reference: " + parts[0]
    cells = [
        _nb(f"{S.STATUS_ICON[v.status]} {S.short_word(v)}"),
        _breakable(v.check_id),
        _breakable(v.metric) + _nb(S.ARROW[v.higher_is_better]),
        ", ".join(parts),
    ]
    if with_p:  # "p vs margin=0.0012" may wrap after its words, never inside the number
        cells.append(S.p_cell(v))
    if partial:
        cells.append(S.partial_cases(v))
    return "| " + " | ".join(cells) + " |\n"


def _checks_tables(report: GateReport) -> list[Part]:
    """One short row per check; past ALL_OPEN checks, the passing ones fold away."""
    if not report.verdicts:
        return ["No checks are configured, so nothing was gated.\n\n"]
    shared = S.shared_confidence(report)
    verdicts = list(report.verdicts)

    def table(verdicts: list[CheckVerdict], priority: int, unit: str, **kw: Any) -> Rows:
        # A cases column only where one of the table's rows does not cover its cases
        partial = any(v.covered != v.total for v in verdicts)
        with_p = any(v.comparison is not None for v in verdicts)  # else a column of blanks
        room = len(report.verdicts) <= ALL_OPEN
        rows = [_row(v, shared, partial, with_p, room) for v in verdicts]
        return Rows(rows, priority, unit=unit, head=_head(report, partial, with_p), **kw)

    shown, passed = verdicts, []
    if len(verdicts) > ALL_OPEN:  # failures first: at scale the reader looks for what went wrong
        shown = [v for v in verdicts if v.status != "pass"]
        passed = [v for v in verdicts if v.status == "pass"]
    parts: list[Part] = []
    if shown:
        parts.append(table(shown, P_TABLE, "checks", closing="\n", floor=len(shown)))
    if passed:
        passing = table(passed, P_PASSED, "passing checks", floor=0)
        summary = (
            f"{S.STATUS_ICON['pass']} {S.plural(len(passed), 'passing check', 'passing checks')}"
        )
        parts.append(
            Section(
                [_collapsible(summary, passing)],
                P_PASSED,
                f"{summary} not listed to fit the comment (see the JSON report/artifact).\n\n",
            )
        )
    return parts


def _how(report: GateReport) -> str:
    """How the checks were decided and the family-wise rate's reasoning, folded: the
    header says the rate where it changes the reading."""
    body = "".join(f"- {md(line, MESSAGE_LEN * 2)}\n" for line in S.how_decided(report))
    if not body:
        return ""
    return f"<details>\n<summary>How the checks were decided</summary>\n\n{body}\n</details>\n\n"


def _warnings(report: GateReport) -> list[Part]:
    """Each warning in view beside its check's name, saying what to do."""
    rows = [
        f"- ⚠️ **{md(w.check_id, NAME_LEN)}**: {md(w.advice, MESSAGE_LEN)}\n"
        for w in A.in_view(report)
    ]
    return _all_listed(rows, "warnings")


def _why(report: GateReport) -> list[Part]:
    """Why a check did not pass, where its row cannot say: an error or an incomparable."""
    rows = [
        f"- {S.STATUS_ICON[v.status]} **{md(v.check_id, NAME_LEN)}**: "
        f"{md(v.message, MESSAGE_LEN)}\n"
        for v in report.verdicts
        if v.status in ("error", "incomparable")
    ]
    return _all_listed(rows, "checks")


def _all_listed(rows: list[str], unit: str) -> list[Part]:
    """A list kept whole (it says why): none when empty."""
    return [Rows(rows, P_WHY, unit=unit, closing="\n", floor=len(rows))] if rows else []


def _notes(report: GateReport, said: str | None) -> list[Part]:
    notes, trials, per_metric = S.split_notes(tuple(n for n in report.notes if n != said))
    rows = [f"- {md(n, MESSAGE_LEN)}\n" for n in notes]
    if trials is not None:
        rows.append(f"- Repeats: {md(trials, MESSAGE_LEN)} (per metric below)\n")
    parts = _all_listed(rows, "notes")
    if trials is not None:
        lines = Rows([f"- {md(n, MESSAGE_LEN)}\n" for n in per_metric], P_WORST, unit="notes")
        parts.append(_collapsible("Trial noise, per metric", lines))
    return parts


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
    title = f"#### 💥 {S.failed_to_run(report.candidate)}\n\n"
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
    head = (
        f"**Goldens changed since the baseline**: {S.goldens_counts(diff)}. {S.GOLDENS_SCOPE}.\n\n"
    )
    lists: list[str | Rows] = []
    for label, ids in S.goldens_lists(diff):
        rows = Rows([f"- {md(i, ID_LEN)}\n" for i in ids], P_GOLDENS, floor=INLINE_LIST, soft=50)
        if len(ids) > INLINE_LIST:
            lists.append(_collapsible(f"{label} ({len(ids):,})", rows))
        else:
            rows.opening = f"{label}:\n\n"
            rows.closing = "\n"
            lists.append(rows)
    return [head, Section(lists, P_GOLDENS, "Goldens diff lists omitted to fit the comment.\n\n")]


def _details(report: GateReport) -> list[Part]:
    """Per check, folded (open for a blocking failure): how it decided, then the cases
    that changed, worst first, and how many tied."""
    blocks: list[str | Rows] = []
    for v in report.verdicts:
        summary = f"{S.STATUS_ICON[v.status]} {md(v.check_id, NAME_LEN)}: {S.status_word(v)}"
        hib = v.higher_is_better
        changed, ties = S.changed_worst_first(S.case_deltas(v), hib)
        stats = "".join(f"- {line}\n" for line in detail_lines(v, md, lambda n: f"`{n}`"))
        if changed or ties:
            summary += f" ({_moved(changed, ties, hib)})"
        rows = Rows(
            [
                f"| {md(d.case_id, ID_LEN)} | {S.num(d.baseline)} | {S.num(d.candidate)} "
                f"| {S.signed(d.delta)} | {S.outcome(d, hib)} |\n"
                for d in changed[:CASE_ROWS]
            ],
            P_CASE_DETAILS,
            unit="changed cases",
            total=len(changed),
            floor=0,
            opening=stats + ("\n" if changed else ""),
            head=f"| case | {S.against(v)} | candidate | Δ | outcome |\n|---|---|---|---|---|\n",
        )
        blocks.append(_collapsible(summary, rows, open_=v.blocking and v.status != "pass"))
    if not blocks:
        return []
    return [
        Section(
            ["#### Per-check details\n\n", *blocks],
            P_CASE_DETAILS,
            "Per-check details omitted to fit the comment (see the JSON report/artifact).\n\n",
        )
    ]


def _moved(changed: list[CaseDelta], ties: int, hib: bool | None) -> str:
    """``18 worse, 5 better, 277 tied``: the cases the table lists, and those it leaves out."""
    counts = Counter(S.outcome(d, hib) for d in changed)
    words = {"loss": "worse", "win": "better", "down": "down", "up": "up", S.NA: "n/a"}
    bits = [f"{counts[k]:,} {word}" for k, word in words.items() if counts[k]]
    return ", ".join([*bits, f"{ties:,} tied"])
