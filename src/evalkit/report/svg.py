"""The HTML report's plots, drawn as inline SVG by our own code (no library, no CDN)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from evalkit._util.units import reading, unit_of
from evalkit.gate.model import CaseDelta
from evalkit.report import summary as S
from evalkit.report.escape import html_text

if TYPE_CHECKING:
    from evalkit.gate.trend import MetricTrend, TrendPoint

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
    p_label: str = "p"  # what p_value is: "p", "Holm-adjusted p", "p vs margin"
    # said instead of the p where the p would mislead (an improved slice: its bad-side p
    # is near 1, and the word says what the interval does)
    instead_of_p: str | None = None


def _f(x: float) -> str:
    """Coordinates with two decimals: enough for a screen, stable across platforms."""
    return f"{x:.2f}"


def _scale(row: ForestRow) -> float:
    values = [abs(v) for v in (row.delta, row.ci_low, row.ci_high) if math.isfinite(v)]
    if row.margin is not None and math.isfinite(row.margin):
        values.append(abs(row.margin))
    top = max(values, default=0.0)
    return top * 1.15 if top > 0 else 1.0


LABEL_CHARS = 80  # a forest row's label is cut here (…)
BAR_H = 30  # a forest row's bar, in CSS pixels at every width


def _svg_open(cls: str, height: float, title: str) -> list[str]:
    """An SVG that scales with its container: its own coordinates in ``viewBox``, the
    width of the page, the height from the aspect ratio (nothing clips when it shrinks)."""
    return [
        f'<svg class="{cls}" role="img" viewBox="0 0 {WIDTH} {_f(height)}" width="100%" '
        f'preserveAspectRatio="xMinYMin meet" xmlns="http://www.w3.org/2000/svg">',
        f"<title>{title}</title>",
    ]


def _line(x1: float, y1: float, x2: float, y2: float, extra: str) -> str:
    # non-scaling: the bar is stretched to the page's width, its strokes are not
    return (
        f'<line x1="{_f(x1)}" y1="{_f(y1)}" x2="{_f(x2)}" y2="{_f(y2)}" {extra} '
        'vector-effect="non-scaling-stroke"/>'
    )


def forest_plot(rows: Sequence[ForestRow]) -> str:
    """Δ with its CI, one row per comparison, each on its own symmetric axis."""
    mid, half = WIDTH / 2, WIDTH / 2 - 8
    out = [
        '<div class="forest-plot">',
        '<p class="axis-note">Δ (candidate − baseline), each row on its own scale; '
        "shaded side = regression; dashed = non-inferiority margin</p>",
    ]
    for row in rows:
        m = _scale(row)

        def x(v: float, m: float = m) -> float:
            return mid + max(-1.0, min(1.0, v / m)) * half

        u = unit_of(row.metric)
        stats = (
            f"Δ {S.signed(row.delta, u)} {S.interval(row.ci_low, row.ci_high, row.metric)} "
            f"{S.confidence(row.confidence)}, "
            + (row.instead_of_p or S.p_text(row.p_value, row.p_label))
        )
        out.append(
            f'<div class="frow" data-status="{html_text(row.status)}">'
            f'<p class="ftext"><span class="id flabel">{html_text(row.label, LABEL_CHARS)}'
            f'</span> <span class="fstats">{html_text(stats)}</span></p>'
        )
        bar = [
            f'<svg class="forest" role="img" viewBox="0 0 {WIDTH} {BAR_H}" width="100%" '
            f'height="{BAR_H}" preserveAspectRatio="none" xmlns="http://www.w3.org/2000/svg">',
            f"<title>{html_text(row.label, LABEL_CHARS)}: {html_text(stats)}</title>",
            f'<g class="row" data-status="{html_text(row.status)}">',
        ]
        if row.higher_is_better is not None:
            bad_x = 0 if row.higher_is_better else mid
            bar.append(
                f'<rect x="{_f(bad_x)}" y="2" width="{_f(mid)}" height="{BAR_H - 4}" '
                'class="badside"/>'
            )
        bar.append(_line(mid, 0, mid, BAR_H, 'class="zero"'))
        if (
            row.margin is not None
            and math.isfinite(row.margin)
            and row.higher_is_better is not None
        ):
            mx = x(-row.margin if row.higher_is_better else row.margin)
            bar.append(_line(mx, 2, mx, BAR_H - 2, 'class="margin"'))
        colour = STATUS_COLOURS.get(row.status, "#424242")
        cy = BAR_H / 2
        if math.isfinite(row.ci_low) and math.isfinite(row.ci_high):
            bar.append(
                _line(x(row.ci_low), cy, x(row.ci_high), cy, f'stroke="{colour}" stroke-width="3"')
            )
        if math.isfinite(row.delta):
            dx = x(row.delta)
            bar.append(_line(dx, cy - 9, dx, cy + 9, f'stroke="{colour}" stroke-width="5"'))
        bar += ["</g>", "</svg>"]
        out += bar
        out.append(
            f'<p class="fticks"><span>{S.signed(-m, u)}</span><span>0</span>'
            f"<span>{S.signed(m, u)}</span></p></div>"
        )
    out.append("</div>")
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
    counts = Counter(S.outcome(d, higher_is_better) for d in finite)
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
        f'<p class="plot-title"><span class="id">{html_text(title, 120)}</span>: '
        f"{legend}{note}</p>",
        *_svg_open("diff", height, f"Per-case differences: {html_text(title, 120)}"),
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


CHAR_W = 6.6  # an upper estimate of one 11px tick character's width, to keep labels apart


def _band(prev: float | None, point: TrendPoint) -> tuple[float, float] | None:
    """Where ``point`` could plausibly be, given the previous value and this step's CI."""
    step = point.step
    if prev is None or step is None or step.ci_low is None or step.ci_high is None:
        return None
    if not (math.isfinite(step.ci_low) and math.isfinite(step.ci_high) and math.isfinite(prev)):
        return None
    return prev + step.ci_low, prev + step.ci_high


def _tip(point: TrendPoint, confidence: float, metric: str) -> str:
    step, unit = point.step, unit_of(metric)
    text = f"{point.label}: {S.num(point.value, unit)}"
    if step is not None and step.compared:
        text += (
            f" (Δ {S.signed(step.delta, unit)} vs previous, {S.confidence(confidence)} CI "
            f"{S.interval(step.ci_low, step.ci_high, metric)}, "
            f"n={step.n_paired})"
        )
    elif step is not None:
        text += f" (not compared: {step.note})"
    return text


def _shown_labels(xs: list[float], labels: list[str], keep: int | None) -> set[int]:
    """Indices whose x label is drawn, none overlapping: the last (the candidate) and
    ``keep`` first, then left to right whatever still fits (every point has a tooltip)."""
    n = len(xs)
    spans = []  # the last label ends at its point, the others are centred on theirs
    for i, (x, text) in enumerate(zip(xs, labels, strict=True)):
        w = len(text) * CHAR_W
        spans.append((x - w, x) if n > 1 and i == n - 1 else (x - w / 2, x + w / 2))
    chosen: list[int] = []
    for i in [n - 1, *([keep] if keep is not None else []), *range(n)]:
        if i in chosen or i < 0:
            continue
        lo, hi = spans[i]
        if all(hi + 8 <= spans[j][0] or spans[j][1] + 8 <= lo for j in chosen):
            chosen.append(i)
    return set(chosen)


def trend_plot(
    trend: MetricTrend,
    *,
    reference_at: int | None = None,
    candidate_status: str | None = None,
) -> str:
    """One metric across promotions, the candidate last; ``trend``'s labels are untrusted.

    ``reference_at``: the index of the pinned reference's point, ringed and drawn as a level.
    """
    points = trend.points
    n = len(points)
    height, top, bottom, left, right = 270, 34, 56, 76, 24
    plot_w, plot_h = WIDTH - left - right, height - top - bottom
    values = [p.value if p.value is not None and math.isfinite(p.value) else None for p in points]
    bands = [_band(values[i - 1] if i else None, p) for i, p in enumerate(points)]
    seen = [v for v in values if v is not None] + [e for b in bands if b for e in b]
    lo, hi = (min(seen), max(seen)) if seen else (0.0, 1.0)
    pad = (hi - lo) * 0.08 or max(abs(hi) * 0.01, 1e-3)
    lo, hi = lo - pad, hi + pad

    def x(i: int) -> float:
        return left + (plot_w / 2 if n == 1 else i * plot_w / (n - 1))

    def y(v: float) -> float:
        return top + (hi - v) / (hi - lo) * plot_h

    ref_index = reference_at if reference_at is not None and 0 <= reference_at < n else None
    better = S.BETTER[trend.higher_is_better]
    unit = unit_of(trend.metric)
    said = reading(trend.metric, better)
    title = (
        f"{trend.metric}{f' ({said})' if said else ''} across {n - 1 if n else 0} step(s); "
        f"band: each step's {S.confidence(trend.confidence)} CI of Δ from the previous point"
    )
    out = [
        *_svg_open("trend", height, f"Trend across promotions: {html_text(trend.metric, 120)}"),
        f'<text x="{left}" y="16" class="axis"><tspan class="label">'
        f"{html_text(title, 200)}</tspan></text>",
    ]
    for tick in (hi - pad, (hi + lo) / 2, lo + pad):
        out.append(
            f'<line x1="{left}" y1="{_f(y(tick))}" x2="{WIDTH - right}" y2="{_f(y(tick))}" '
            'class="grid"/>'
            f'<text x="{left - 6}" y="{_f(y(tick) + 4)}" text-anchor="end" class="tick">'
            f"{S.num(tick, unit)}</text>"
        )
    for i, band in enumerate(bands):
        prev = values[i - 1]  # band is None at i = 0 (no previous point)
        if band is None or prev is None:
            continue
        step = points[i].step
        worse = (
            step is not None
            and step.significant
            and step.delta is not None
            and trend.higher_is_better is not None
            and (step.delta < 0) == trend.higher_is_better
        )
        out.append(
            f'<polygon class="band{" worse" if worse else ""}" points="'
            f"{_f(x(i - 1))},{_f(y(prev))} {_f(x(i))},{_f(y(band[1]))} "
            f'{_f(x(i))},{_f(y(band[0]))}"/>'
        )
    level = values[ref_index] if ref_index is not None else None
    if level is not None:
        out.append(
            f'<line x1="{left}" y1="{_f(y(level))}" x2="{WIDTH - right}" y2="{_f(y(level))}" '
            'class="reference"/>'
            f'<text x="{WIDTH - right}" y="{_f(y(level) - 4)}" text-anchor="end" class="tick">'
            "reference</text>"
        )
    run: list[str] = []
    for i, v in enumerate([*values, None]):  # a None ends a stretch of the line
        if v is not None:
            run.append(f"{_f(x(i))},{_f(y(v))}")
            continue
        if len(run) > 1:
            out.append(f'<polyline class="line" points="{" ".join(run)}"/>')
        run = []
    texts = [html_text(p.label, 40) for p in points]
    labels = _shown_labels([x(i) for i in range(n)], [p.label[:40] for p in points], ref_index)
    for i, (point, v) in enumerate(zip(points, values, strict=True)):
        tip = html_text(_tip(point, trend.confidence, trend.metric), 300)
        if v is not None:
            if point.is_candidate:
                colour = STATUS_COLOURS.get(candidate_status or "", "#1565c0")
                out.append(
                    f'<circle class="candidate" cx="{_f(x(i))}" cy="{_f(y(v))}" r="7" '
                    f'fill="{colour}"><title>{tip}</title></circle>'
                )
            else:
                ring = ' stroke="#ef6c00" stroke-width="3"' if i == ref_index else ""
                out.append(
                    f'<circle class="point" cx="{_f(x(i))}" cy="{_f(y(v))}" r="4.5" '
                    f'fill="#1f2328"{ring}><title>{tip}</title></circle>'
                )
        if i in labels:
            anchor = "end" if i == n - 1 and n > 1 else "middle"
            out.append(
                f'<text x="{_f(x(i))}" y="{height - bottom + 18}" text-anchor="{anchor}" '
                f'class="tick">{texts[i]}</text>'
            )
    out.append(
        f'<text x="{left + plot_w / 2}" y="{height - 8}" text-anchor="middle" class="axis">'
        "promotions, oldest first; the candidate is the last point</text>"
    )
    out.append("</svg>")
    return "\n".join(out)
