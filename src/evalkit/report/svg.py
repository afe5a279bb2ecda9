"""The HTML report's plots, drawn as inline SVG by our own code (no library, no CDN).

Two plots:

- :func:`forest_plot` — one row per comparison: Δ as a dot, its confidence interval as a
  bar, zero as a line, the regression side shaded, a non-inferiority margin dashed.
  Each row has its own symmetric scale (labelled at both ends), because the rows are
  different metrics in different units: one shared axis would make a latency Δ of 12 ms
  dwarf an nDCG Δ of 0.02.
- :func:`difference_plot` — every paired case's Δ, sorted, as a bar from zero, coloured
  win / loss / tie by the metric's polarity; hovering a bar shows the case (SVG
  ``<title>``, so no script is needed).  Above :data:`MAX_BARS` cases, bars are taken at
  evenly spaced ranks of the sorted deltas, which keeps the curve's shape and its extremes.

All text is escaped with :func:`evalkit.report.escape.html_text`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from evalkit.gate import CaseDelta
from evalkit.report import summary as S
from evalkit.report.escape import html_text
from evalkit.units import suffix, unit_of

MAX_BARS = 1_000
WIDTH = 900
COLOURS = {
    "win": "#2e7d32",
    "loss": "#c62828",
    "tie": "#9e9e9e",
    "up": "#1565c0",
    "down": "#6a1b9a",
    "n/a": "#9e9e9e",
}
STATUS_COLOURS = {
    "pass": "#2e7d32",
    "fail": "#c62828",
    "warn": "#ef6c00",
    "error": "#6a1b9a",
    "no-baseline": "#757575",
    "no-reference": "#b26a00",
    "incomparable": "#c62828",
}


@dataclass(frozen=True)
class ForestRow:
    label: str
    metric: str
    delta: float
    ci_low: float
    ci_high: float
    confidence: float
    p_value: float
    higher_is_better: bool | None
    status: str  # a key of STATUS_COLOURS
    margin: float | None = None


def _f(x: float) -> str:
    """Coordinates with two decimals: enough for a screen, stable across platforms."""
    return f"{x:.2f}"


def _scale(row: ForestRow) -> float:
    values = [abs(v) for v in (row.delta, row.ci_low, row.ci_high) if math.isfinite(v)]
    if row.margin is not None and math.isfinite(row.margin):
        values.append(abs(row.margin))
    top = max(values, default=0.0)
    return top * 1.15 if top > 0 else 1.0


def forest_plot(rows: Sequence[ForestRow]) -> str:
    """Δ with its CI, one row per comparison, each on its own symmetric axis."""
    row_h, top = 46, 28
    label_w, text_w = 230, 300
    plot_x0, plot_x1 = label_w, WIDTH - text_w
    mid = (plot_x0 + plot_x1) / 2
    half = (plot_x1 - plot_x0) / 2 - 6
    height = top + row_h * len(rows) + 8
    out = [
        f'<svg class="forest" role="img" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg">',
        "<title>Forest plot: each comparison's difference with its confidence interval</title>",
        f'<text x="{_f(mid)}" y="16" text-anchor="middle" class="axis">'
        "Δ (candidate − baseline), each row on its own scale; shaded side = regression</text>",
    ]
    for i, row in enumerate(rows):
        y = top + i * row_h
        cy = y + row_h / 2 - 4
        m = _scale(row)

        def x(v: float, m: float = m) -> float:
            return mid + max(-1.0, min(1.0, v / m)) * half

        out.append(f'<g class="row" data-status="{html_text(row.status)}">')
        if i % 2 == 0:
            out.append(f'<rect x="0" y="{_f(y)}" width="{WIDTH}" height="{row_h}" class="stripe"/>')
        if row.higher_is_better is not None:
            bad_x = plot_x0 if row.higher_is_better else mid
            out.append(
                f'<rect x="{_f(bad_x)}" y="{_f(y + 4)}" width="{_f(mid - plot_x0)}" '
                f'height="{row_h - 16}" class="badside"/>'
            )
        out.append(
            f'<line x1="{_f(mid)}" y1="{_f(y + 2)}" x2="{_f(mid)}" y2="{_f(y + row_h - 10)}" '
            'class="zero"/>'
        )
        if (
            row.margin is not None
            and math.isfinite(row.margin)
            and row.higher_is_better is not None
        ):
            mx = x(-row.margin if row.higher_is_better else row.margin)
            out.append(
                f'<line x1="{_f(mx)}" y1="{_f(y + 4)}" x2="{_f(mx)}" y2="{_f(y + row_h - 12)}" '
                'class="margin"/>'
            )
        colour = STATUS_COLOURS.get(row.status, "#424242")
        if math.isfinite(row.ci_low) and math.isfinite(row.ci_high):
            out.append(
                f'<line x1="{_f(x(row.ci_low))}" y1="{_f(cy)}" x2="{_f(x(row.ci_high))}" '
                f'y2="{_f(cy)}" stroke="{colour}" stroke-width="3" stroke-linecap="round"/>'
            )
        if math.isfinite(row.delta):
            out.append(f'<circle cx="{_f(x(row.delta))}" cy="{_f(cy)}" r="5" fill="{colour}"/>')
        out.append(
            f'<text x="{_f(plot_x0 - 8)}" y="{_f(cy + 4)}" text-anchor="end" class="label">'
            f"{html_text(row.label, 40)}</text>"
        )
        u = unit_of(row.metric)
        out.append(
            f'<text x="{_f(plot_x0)}" y="{_f(y + row_h - 2)}" class="tick">{S.signed(-m, u)}</text>'
            f'<text x="{_f(plot_x1)}" y="{_f(y + row_h - 2)}" text-anchor="end" class="tick">'
            f"{S.signed(m, u)}</text>"
        )
        stats = (
            f"Δ {S.signed(row.delta, u)} [{S.signed(row.ci_low)}, {S.signed(row.ci_high)}]"
            f"{suffix(row.metric)} "
            f"{S.confidence(row.confidence)}, p={S.pvalue(row.p_value)}"
        )
        out.append(
            f'<text x="{_f(plot_x1 + 10)}" y="{_f(cy + 4)}" class="stats">{html_text(stats)}</text>'
        )
        out.append("</g>")
    out.append("</svg>")
    return "\n".join(out)


def _sample(deltas: list[CaseDelta]) -> list[CaseDelta]:
    n = len(deltas)
    if n <= MAX_BARS:
        return deltas
    return [deltas[round(i * (n - 1) / (MAX_BARS - 1))] for i in range(MAX_BARS)]


def difference_plot(deltas: Sequence[CaseDelta], higher_is_better: bool | None, title: str) -> str:
    """Sorted per-case Δ as bars, coloured by outcome; ``title`` is untrusted."""
    finite = [d for d in deltas if math.isfinite(d.delta)]
    ordered = sorted(finite, key=lambda d: (d.delta, d.case_id))
    shown = _sample(ordered)
    counts = {"win": 0, "loss": 0, "tie": 0, "up": 0, "down": 0}
    for d in finite:
        counts[S.outcome(d, higher_is_better)] += 1
    height, top, bottom, left, right = 240, 30, 26, 70, 16
    plot_h = height - top - bottom
    plot_w = WIDTH - left - right
    zero_y = top + plot_h / 2
    m = max((abs(d.delta) for d in shown), default=0.0) or 1.0
    bar_w = plot_w / max(len(shown), 1)
    if higher_is_better is None:
        legend = f"{counts['up']} up · {counts['down']} down · {counts['tie']} ties"
    else:
        legend = f"{counts['win']} wins · {counts['loss']} losses · {counts['tie']} ties"
    note = (
        f" (showing {len(shown):,} of {len(ordered):,} at evenly spaced ranks)"
        if len(shown) < len(ordered)
        else ""
    )
    out = [
        f'<svg class="diff" role="img" viewBox="0 0 {WIDTH} {height}" width="{WIDTH}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg">',
        f"<title>Per-case differences: {html_text(title, 120)}</title>",
        f'<text x="{left}" y="16" class="axis"><tspan class="label">{html_text(title, 120)}'
        f"</tspan>: {legend}{note}</text>",
        f'<line x1="{left}" y1="{_f(zero_y)}" x2="{WIDTH - right}" y2="{_f(zero_y)}" '
        'class="zero"/>',
        f'<text x="{left - 6}" y="{top + 4}" text-anchor="end" class="tick">{S.signed(m)}</text>',
        f'<text x="{left - 6}" y="{_f(zero_y + 4)}" text-anchor="end" class="tick">0</text>',
        f'<text x="{left - 6}" y="{top + plot_h}" text-anchor="end" class="tick">'
        f"{S.signed(-m)}</text>",
        f'<text x="{left + plot_w / 2}" y="{height - 6}" text-anchor="middle" class="axis">'
        f"cases, sorted by Δ (candidate − baseline)</text>",
    ]
    for i, d in enumerate(shown):
        kind = S.outcome(d, higher_is_better)
        h = abs(d.delta) / m * (plot_h / 2)
        y = zero_y - h if d.delta > 0 else zero_y
        values = f"{S.num(d.baseline)} → {S.num(d.candidate)} (Δ {S.signed(d.delta)}, {kind})"
        tip = f"{d.case_id}: {values}"
        out.append(
            f'<rect x="{_f(left + i * bar_w)}" y="{_f(y)}" width="{_f(max(bar_w, 0.5))}" '
            f'height="{_f(max(h, 0.75))}" fill="{COLOURS[kind]}" class="{kind}">'
            f"<title>{html_text(tip, 200)}</title></rect>"
        )
    out.append("</svg>")
    return "\n".join(out)


__all__ = ["MAX_BARS", "ForestRow", "difference_plot", "forest_plot"]
