"""The HTML report: one self-contained page with the checks table and plots."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalkit._util.pvalues import p_label
from evalkit._util.units import unit_of
from evalkit.gate.model import CaseDelta, GateReport, RunSummary
from evalkit.report import advice as A
from evalkit.report import summary as S
from evalkit.report.details import detail_lines
from evalkit.report.escape import html_text, visible
from evalkit.report.slices import slice_forest
from evalkit.report.svg import ForestRow, difference_plot, forest_plot, trend_plot

if TYPE_CHECKING:
    from evalkit._spec.artifact import RunArtifact
    from evalkit.gate.compare import CompareRow
    from evalkit.gate.trend import DriftTrend

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
SHOW_FAILED = 200
SHOW_IDS = 200

_CSS = """
:root { color-scheme: light; --fg: #1f2328; --muted: #59636e; --line: #d1d9e0; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif;
       color: var(--fg); margin: 0 auto; padding: 24px; max-width: 1000px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--line);
     padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 6px; }
.badge { display: inline-block; padding: 2px 10px; border-radius: 12px; color: #fff;
         font-weight: 700; letter-spacing: .03em; }
.pass { background: #2e7d32; } .fail { background: #c62828; } .warn { background: #ef6c00; }
.error { background: #6a1b9a; } .no-baseline { background: #757575; }
.no-reference { background: #b26a00; }
.incomparable { background: #c62828; } .incomplete { background: #ef6c00; }
.muted, .prov { color: var(--muted); }
.alert { border-left: 4px solid #ef6c00; background: #fff4e5; padding: 8px 12px; margin: 12px 0; }
table { border-collapse: collapse; width: 100%; margin: 8px 0; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td .badge { font-size: 12px; padding: 1px 8px; }
td.result { min-width: 12em; }
.id { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; overflow-wrap: break-word; }
svg { display: block; width: 100%; height: auto; margin: 8px 0; }
p.plot-title { margin: 14px 0 0; font-weight: 600; overflow-wrap: anywhere; }
.forest-plot .axis-note { color: var(--muted); font-size: 12px; margin: 4px 0; }
.frow { padding: 4px 6px; } .frow:nth-of-type(even) { background: #f6f8fa; }
.frow p { margin: 0; } .ftext { overflow-wrap: anywhere; }
.flabel { font-weight: 600; } .fstats { font-family: ui-monospace, monospace; font-size: 12px; }
.fticks { display: flex; justify-content: space-between; color: var(--muted); font-size: 11px; }
svg.forest { height: 30px; margin: 2px 0; }
@media (max-width: 640px) {
  table.checks thead { display: none; }
  table.checks, table.checks tbody, table.checks tr, table.checks td { display: block; }
  table.checks tr { border: 1px solid var(--line); margin: 8px 0; }
  table.checks td { border: 0; padding: 2px 8px; }
  table.checks td[data-label]::before { content: attr(data-label) ": "; color: var(--muted); }
  td.num { text-align: left; white-space: normal; }
}
.warnings li { margin: 2px 0; }
.table-wrap { overflow-x: auto; }
svg text { font: 12px system-ui, sans-serif; fill: var(--fg); }
svg .axis { fill: var(--muted); } svg .tick { fill: var(--muted); font-size: 11px; }
svg .label { font-weight: 600; }
svg .badside { fill: #fdecea; }
svg .zero { stroke: #59636e; stroke-width: 1; }
svg .margin { stroke: #ef6c00; stroke-width: 1.5; stroke-dasharray: 4 3; }
svg .grid { stroke: #eaeef2; stroke-width: 1; }
svg .band { fill: #1565c0; fill-opacity: .16; } svg .band.worse { fill: #c62828; fill-opacity: .3; }
svg .line { fill: none; stroke: #1f2328; stroke-width: 2; }
svg .reference { stroke: #ef6c00; stroke-width: 1.5; stroke-dasharray: 6 4; }
details.check { margin: 6px 0; border: 1px solid var(--line); border-radius: 6px;
                padding: 4px 10px; }
details.check summary { cursor: pointer; }
details.check ul { margin: 6px 0; padding-left: 20px; }
ul.ids { columns: 3; font-family: ui-monospace, monospace; font-size: 12px; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
"""


@dataclass(frozen=True)
class _Plot:
    title: str
    deltas: tuple[CaseDelta, ...]
    higher_is_better: bool | None


def _page(title: str, body: list[str]) -> str:
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en">',
            "<head>",
            '<meta charset="utf-8">',
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            '<link rel="icon" href="data:,">',
            f"<title>{title}</title>",
            f"<style>{_CSS}</style>",
            "</head>",
            "<body>",
            *body,
            "<footer>Generated by evalkit. Every number is derived from the per-case rows "
            "in the run artefacts.</footer>",
            "</body>",
            "</html>",
            "",
        ]
    )


def _badge(status: str, text: str | None = None) -> str:
    return f'<span class="badge {html_text(status)}">{html_text(text or status)}</span>'


def _run_line(label: str, run: RunSummary) -> str:
    bits = [fixed + (html_text(t, n) if t is not None else "") for fixed, t, n in S.run_pieces(run)]
    return f"<strong>{label}</strong> " + " · ".join(bits)


def _header(report: GateReport) -> list[str]:
    h = S.headline(report)
    line = html_text(h.counts())
    if h.named:
        names = ", ".join(f'<span class="id">{html_text(n, S.NAME_LEN)}</span>' for n in h.named)
        more = f" and {h.more} more" if h.more else ""
        line += f"; {h.named_label}: {names}{more}"
    coverage = S.coverage_line(report)
    if coverage is not None:
        before, selection, after = coverage
        line += f'</p><p class="alert">{html_text(before)}{html_text(selection, S.NAME_LEN)}'
        line += html_text(after)
    out = [f"<h1>evalkit gate {_badge(h.verdict, h.word)}</h1>", f"<p>{line}</p>"]
    r = A.risk(report)
    if r is not None:
        culprit = f'<span class="id">{html_text(r.culprit, S.NAME_LEN)}</span>' if r.culprit else ""
        out.append(f'<p class="alert">{html_text(r.before())}{culprit}{html_text(r.after())}</p>')
    runs = _run_line("Candidate", report.candidate) + "<br>"
    if report.baseline is not None:
        runs += _run_line("Baseline", report.baseline)
    ref = report.reference
    if ref is not None and ref.run is not None:
        runs += f"<br>{_run_line('Reference', ref.run)} · {html_text(ref.detail, S.MESSAGE_LEN)}"
    out.append(f'<p class="prov">{runs}</p>')
    unbased = S.no_baseline(report)
    if unbased is not None:
        out.append(
            f'<p class="alert"><strong>No baseline</strong>: {html_text(unbased[0])}. '
            f"{S.PROMOTE_ONE} (how, for the configured baseline store: the note below).</p>"
        )
    missing = S.no_reference(report)
    if missing is not None:
        out.append(
            f'<p class="alert"><strong>{html_text(missing.lead())}</strong>: '
            f"{html_text(missing.detail, S.MESSAGE_LEN)}. {html_text(missing.consequence())}</p>"
        )
    out += [f'<p class="muted">{html_text(n, S.MESSAGE_LEN)}</p>' for n in report.notes]
    bad = S.non_finite_line(report)
    if bad is not None:
        out.append(f'<p class="alert">{html_text(bad)}</p>')
    return out


def _breakable(escaped: str) -> str:
    """Escaped text that may wrap after ``_`` when a table column is narrow: long check
    ids and metric names otherwise push the table past the page."""
    return escaped.replace("_", "_<wbr>")


def _checks_table(report: GateReport) -> list[str]:
    if not report.verdicts:
        return ["<p>No checks are configured, so nothing was gated.</p>"]
    out = [
        '<div class="table-wrap"><table class="checks"><thead><tr><th>check</th><th>metric</th>'
        "<th>status</th><th>result</th>"
        "<th>coverage</th><th>W / L / T</th><th>detects ≥ (80% power)</th>"
        "</tr></thead><tbody>"
    ]
    for v in report.verdicts:
        out.append(
            f'<tr data-status="{html_text(v.status)}">'
            f'<td class="id">{_breakable(html_text(v.check_id, S.NAME_LEN))}</td>'
            f"<td>{_breakable(html_text(v.metric, S.NAME_LEN))}{S.ARROW[v.higher_is_better]}</td>"
            f"<td>{_badge(v.status, S.status_word(v))}</td>"
            f'<td class="result">{html_text(S.result(v))}</td>'
            f'<td class="num" data-label="coverage">{html_text(v.coverage)}</td>'
            f'<td class="num" data-label="W / L / T">{html_text(S.wlt(v))}</td>'
            f'<td class="num" data-label="detects ≥">{html_text(S.mde(v))}</td>'
            "</tr>"
        )
    out.append("</tbody></table></div>")
    warnings = A.in_view(report)
    if warnings:
        items = "".join(
            f'<li>⚠️ <span class="id">{html_text(w.check_id, S.NAME_LEN)}</span>: '
            f"{html_text(w.advice, S.MESSAGE_LEN)}</li>"
            for w in warnings
        )
        out.append(f'<ul class="warnings">{items}</ul>')
    return out


def _check_details(report: GateReport) -> list[str]:
    """Each check's statistics in a collapsed block: why it has its status, the procedure
    that decided, its interval and p, the bootstrap interval beside it and why it did not
    decide, and the check's warnings whole; first, how the family was decided."""
    out: list[str] = []
    items = "".join(f"<li>{html_text(line)}</li>" for line in S.how_decided(report))
    if items:
        out.append(
            '<details class="check"><summary>How the checks were decided</summary>'
            f"<ul>{items}</ul></details>"
        )
    for v in report.verdicts:
        items = "".join(f"<li>{html_text(line)}</li>" for line in detail_lines(v, visible))
        out.append(
            f'<details class="check"><summary><span class="id">{html_text(v.check_id, S.NAME_LEN)}'
            f"</span> ({html_text(v.metric, S.NAME_LEN)}) {_badge(v.status, S.status_word(v))}"
            f"</summary><ul>{items}</ul></details>"
        )
    return out


def _delta_table(
    deltas: Sequence[CaseDelta], higher_is_better: bool | None, against: str = "baseline"
) -> str:
    rows = "".join(
        f'<tr><td class="id">{html_text(d.case_id, S.ID_LEN)}</td>'
        f'<td class="num">{S.num(d.baseline)}</td>'
        f'<td class="num">{S.num(d.candidate)}</td><td class="num">{S.signed(d.delta)}</td>'
        f"<td>{S.outcome(d, higher_is_better)}</td></tr>"
        for d in deltas
    )
    return (
        f'<div class="table-wrap"><table><thead><tr><th>case</th><th>{against}</th>'
        "<th>candidate</th><th>Δ</th>"
        f"<th>outcome</th></tr></thead><tbody>{rows}</tbody></table></div>"
    )


def _plots(forest: list[ForestRow], diffs: list[_Plot]) -> list[str]:
    out: list[str] = []
    if forest:
        out += ["<h2>Δ with its confidence interval</h2>", forest_plot(forest)]
    if diffs:
        out.append("<h2>Per-case differences</h2>")
        out += [difference_plot(p.deltas, p.higher_is_better, p.title) for p in diffs]
    return out


def _more(n: int) -> str:
    return f'<p class="muted">{S.more_not_shown(n)}</p>'


def _failed_and_goldens(report: GateReport) -> list[str]:
    out: list[str] = []
    failed = report.candidate.failed
    if failed:
        out.append(f"<h2>{S.failed_to_run(report.candidate)}</h2>")
        rows = "".join(
            f'<tr><td class="id">{html_text(cid, S.ID_LEN)}</td>'
            f"<td>{html_text(err or '(no message)', S.ERROR_LEN)}</td></tr>"
            for cid, err in failed[:SHOW_FAILED]
        )
        out.append(
            f"<table><thead><tr><th>case</th><th>error</th></tr></thead><tbody>{rows}</tbody></table>"
        )
        if len(failed) > SHOW_FAILED:
            out.append(_more(len(failed) - SHOW_FAILED))
    diff = report.goldens_diff
    if not diff.empty:
        out.append("<h2>Goldens changed since the baseline</h2>")
        out.append(f"<p>{S.goldens_counts(diff)}; {S.GOLDENS_SCOPE}.</p>")
        for label, ids in S.goldens_lists(diff):
            items = "".join(f"<li>{html_text(i, S.ID_LEN)}</li>" for i in ids[:SHOW_IDS])
            out.append(f'<h3>{label} ({len(ids):,})</h3><ul class="ids">{items}</ul>')
            if len(ids) > SHOW_IDS:
                out.append(_more(len(ids) - SHOW_IDS))
    return out


_WORST_FIRST = ("fail", "error", "incomparable", "warn", "no-reference", "pass")


def _trends(report: GateReport, drawn: DriftTrend | None) -> list[str]:
    """Each drift-checked metric across promotions, the candidate last (drift.md)."""
    if report.reference is None or drawn is None or (not drawn.trends and drawn.note is None):
        return []
    out = ["<h2>Trend across promotions</h2>"]
    if drawn.note:
        out.append(f'<p class="muted">{html_text(drawn.note, S.MESSAGE_LEN)}</p>')
    for trend in drawn.trends:
        statuses = [
            v.status
            for v in report.verdicts
            if v.kind == "vs_reference" and v.metric == trend.metric
        ]
        worst = min(statuses, key=_WORST_FIRST.index, default=None)
        out.append(trend_plot(trend, reference_at=drawn.reference_at, candidate_status=worst))
    return out


def render_html(report: GateReport, *, trend: DriftTrend | None = None) -> str:
    """One self-contained HTML page for a gate report (no script, no external resource);
    ``trend`` (:func:`evalkit._app.reference_lookup.report_trends`) is drawn under the checks."""
    forest: list[ForestRow] = []
    diffs: list[_Plot] = []
    worst: list[str] = []
    for v in report.verdicts:
        c = v.comparison
        if c is None:
            continue
        forest.append(
            ForestRow(
                label=v.check_id,
                metric=v.metric,
                delta=c.delta,
                ci_low=c.ci_low,
                ci_high=c.ci_high,
                confidence=c.confidence,
                p_value=c.deciding_p,
                higher_is_better=v.higher_is_better,
                status=v.status,
                margin=c.margin,
                p_label=c.p_label,
            )
        )
        if c.deltas:
            diffs.append(_Plot(f"{v.check_id} ({v.metric})", c.deltas, v.higher_is_better))
        if v.worst_cases:
            worst.append(
                f'<h3><span class="id">{html_text(v.check_id, S.NAME_LEN)}</span> '
                f"({html_text(v.metric, S.NAME_LEN)}) {_badge(v.status)}</h3>"
            )
            ordered = S.worst_first(v.worst_cases, v.higher_is_better)  # 48 before 108
            worst.append(_delta_table(ordered, v.higher_is_better, S.against(v)))
    h = S.headline(report)
    body = [
        *_header(report),
        "<h2>Checks</h2>",
        *_checks_table(report),
        *(["<h2>How each check decided</h2>", *_check_details(report)] if report.verdicts else []),
        *_trends(report, trend),
        *_plots(forest, diffs),
    ]
    if report.slices is not None and report.slices.n_tested:
        body += ["<h2>Slices: Δ with its FDR-level interval</h2>", slice_forest(report.slices)]
    if worst:
        body += ["<h2>Most regressed cases</h2>", *worst]
    body += _failed_and_goldens(report)
    return _page(html_text(f"evalkit gate: {h.word}, {h.counts()}"), body)


# ----------------------------------------------------------------------------- compare


def _paired_deltas(metric: str, a: RunArtifact, b: RunArtifact) -> tuple[CaseDelta, ...]:
    """Per-case Δ (A − B) over the cases ``evalkit compare`` paired (the gate's pairing)."""
    from evalkit.gate.inputs import goldens_diff
    from evalkit.gate.procedure import pair_for_gate

    match = pair_for_gate(a.result.per_query, a, b, goldens_diff(a, b))
    out = []
    for cid in match.ids:
        ma, mb = match.rows_a[cid].metrics, match.rows_b[cid].metrics
        if metric in ma and metric in mb:
            x, y = float(ma[metric]), float(mb[metric])
            out.append(CaseDelta(cid, x, y, x - y))
    return tuple(out)


def render_compare_html(
    rows: Sequence[CompareRow], candidate: RunArtifact, baseline: RunArtifact
) -> str:
    """One self-contained HTML page comparing two runs metric by metric (A minus B)."""
    from evalkit.gate.compare import INCOMPARABLE, WORSE

    a, b = html_text(candidate.name, S.NAME_LEN), html_text(baseline.name, S.NAME_LEN)
    n = rows[0].n if rows else 0
    # two runs: one comparison, so every row's interval has the same level, 1 - alpha
    level = S.confidence(rows[0].confidence) if rows else S.confidence(0.95)
    body = [
        f"<h1>evalkit compare: {a} vs {b}</h1>",
        f'<p class="prov">A (candidate) {a} · B (baseline) {b} · paired on {n:,} cases</p>',
        "<h2>Metrics</h2>",
        "<table><thead><tr><th>metric</th><th>B</th><th>A</th><th>Δ (A − B)</th>"
        f"<th>{level} CI</th><th>p</th><th>W / L / T</th><th>verdict</th></tr></thead><tbody>",
    ]
    forest: list[ForestRow] = []
    diffs: list[_Plot] = []
    for r in rows:
        # the words of the text and markdown tables (CompareRow.direction owns them)
        status = {WORSE: "fail", INCOMPARABLE: "incomparable"}.get(r.direction, "pass")
        verdict = r.note if r.incomparable else r.direction + (f" ({r.note})" if r.note else "")
        wlt = f"{r.wins} / {r.losses} / {r.ties}" if r.kind == "case" else "—"
        u = unit_of(r.metric)
        body.append(
            f"<tr><td>{html_text(r.metric, S.NAME_LEN)}{S.ARROW[r.higher_is_better]}</td>"
            f'<td class="num">{S.num(r.value_b, u)}</td><td class="num">{S.num(r.value_a, u)}</td>'
            f'<td class="num">{S.signed(r.delta, u)}</td>'
            f'<td class="num">{S.interval(r.ci_low, r.ci_high, r.metric)}</td>'
            f'<td class="num">{S.pvalue(r.deciding_p)}</td><td class="num">{wlt}</td>'
            f"<td>{_badge(status, verdict)}</td></tr>"
        )
        forest.append(
            ForestRow(
                label=r.metric,
                metric=r.metric,
                delta=r.delta,
                ci_low=r.ci_low,
                ci_high=r.ci_high,
                confidence=r.confidence,
                p_value=r.deciding_p,
                p_label=p_label(r.correction if r.p_adjusted is not None else "none", False),
                higher_is_better=r.higher_is_better,
                status=status,
            )
        )
        if r.kind == "case":
            deltas = _paired_deltas(r.metric, candidate, baseline)
            if deltas:
                diffs.append(_Plot(r.metric, deltas, r.higher_is_better))
    body.append("</tbody></table>")
    body += _plots(forest, diffs)
    worst: list[str] = []
    for p in diffs:
        ordered = S.worst_first(p.deltas, p.higher_is_better)
        regressed = [d for d in ordered if S.outcome(d, p.higher_is_better) == "loss"][:10]
        if regressed:
            worst += [
                f"<h3>{html_text(p.title, S.NAME_LEN)}</h3>",
                _delta_table(regressed, p.higher_is_better),
            ]
    if worst:
        body += ["<h2>Most regressed cases</h2>", *worst]
    return _page(html_text(f"evalkit compare: {candidate.name} vs {baseline.name}", 200), body)
