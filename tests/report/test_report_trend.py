"""The HTML report's trend across promotions (issue #16): drawn from evalkit.gate.trend's steps.

Every mark is checked against the numbers it stands for: one point per value, one band
per compared step spanning exactly previous value + that step's CI, the dashed level at
the pinned reference's value, the candidate last and coloured by its drift verdict.
"""

from __future__ import annotations

import dataclasses
import random
import re
import xml.etree.ElementTree as ET
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from evalkit._store.history import HistoryEntry, entry_label
from evalkit.gate.trend import CANDIDATE_LABEL, DriftTrend, MetricTrend, TrendPoint, TrendStep
from evalkit.report.html import render_html
from evalkit.report.svg import STATUS_COLOURS, trend_plot

from .samples import HOSTILE, drift, no_reference, passing

SVG = "{http://www.w3.org/2000/svg}"
T0 = datetime(2026, 9, 1, 10, 0, tzinfo=UTC)


def make_trend(
    values: list[float | None], *, seed: int = 0, skip: int | None = None
) -> MetricTrend:
    """Promotions with these values, the last one the candidate; step ``skip`` not compared."""
    rng = random.Random(seed)
    points = []
    for i, value in enumerate(values):
        last = i == len(values) - 1
        sha = f"{i:02d}" + "a" * 38
        when = T0 + timedelta(days=7 * i)
        entry = (
            None
            if last
            else HistoryEntry(sha, when, None, Path(f"p{i}.json"), entry_label(sha, when))
        )
        step = None
        if i:
            prev = values[i - 1]
            if i == skip or prev is None or value is None:
                step = TrendStep(None, None, None, None, False, 0, "no case in common")
            else:
                delta = value - prev
                half = rng.uniform(0.002, 0.02)
                step = TrendStep(delta, delta - half, delta + half, 0.3, abs(delta) > half, 100)
        label = entry.label if entry is not None else CANDIDATE_LABEL
        points.append(TrendPoint(label, entry, value, step))
    return MetricTrend("ndcg@10", True, 0.95, tuple(points))


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def scale(root: ET.Element, values: list[float | None]) -> tuple[float, float]:
    """(slope, intercept) of value → y, from the circles of the lowest and highest value.

    Every other mark must then sit on the same affine map (the plot's only freedom is
    its scale); the labelled grid values must agree to their printed precision.
    """
    ys = [float(c.get("cy", "nan")) for c in root.iter(f"{SVG}circle")]
    known = [v for v in values if v is not None]
    lo, hi = known.index(min(known)), known.index(max(known))
    slope = (ys[hi] - ys[lo]) / (known[hi] - known[lo])
    assert slope < 0  # higher values are drawn higher up
    intercept = ys[lo] - slope * known[lo]
    for t in root.iter(f"{SVG}text"):
        if t.get("class") == "tick" and re.fullmatch(r"-?\d+\.\d+", t.text or ""):
            assert float(t.get("y", "nan")) - 4 == pytest.approx(
                slope * float(t.text or "nan") + intercept, abs=1.5
            )
    return slope, intercept


@pytest.mark.parametrize("seed", range(8))
def test_every_point_and_band_is_where_its_numbers_say(seed: int) -> None:
    rng = random.Random(seed)
    n = rng.randint(2, 25)
    values: list[float | None] = [0.7 - 0.004 * i + rng.gauss(0, 0.003) for i in range(n)]
    trend = make_trend(values, seed=seed)
    root = parse(trend_plot(trend, candidate_status="fail"))
    slope, intercept = scale(root, values)
    circles = list(root.iter(f"{SVG}circle"))
    assert len(circles) == n
    for circle, value in zip(circles, values, strict=True):
        assert value is not None
        assert float(circle.get("cy", "nan")) == pytest.approx(slope * value + intercept, abs=0.05)
    assert circles[-1].get("class") == "candidate"
    assert circles[-1].get("fill") == STATUS_COLOURS["fail"]
    assert float(circles[-1].get("cx", "0")) > max(float(c.get("cx", "0")) for c in circles[:-1])
    bands = list(root.iter(f"{SVG}polygon"))
    assert len(bands) == n - 1
    for band, point, prev in zip(bands, trend.points[1:], values[:-1], strict=True):
        corners = [tuple(map(float, xy.split(","))) for xy in (band.get("points") or "").split()]
        step = point.step
        assert step is not None
        assert step.ci_low is not None
        assert step.ci_high is not None
        assert prev is not None
        ys = sorted(y for _, y in corners[1:])
        assert ys[0] == pytest.approx(slope * (prev + step.ci_high) + intercept, abs=0.05)
        assert ys[1] == pytest.approx(slope * (prev + step.ci_low) + intercept, abs=0.05)
        assert ("worse" in (band.get("class") or "")) == (
            step.significant and (step.delta or 0) < 0
        )
    lines = list(root.iter(f"{SVG}polyline"))
    assert len(lines) == 1
    assert len((lines[0].get("points") or "").split()) == n


def test_an_unpaired_step_leaves_a_gap_in_the_bands_and_a_missing_value_in_the_line() -> None:
    trend = make_trend([0.70, 0.69, None, 0.68, 0.67], skip=4)
    root = parse(trend_plot(trend))
    assert len(list(root.iter(f"{SVG}circle"))) == 4
    assert len(list(root.iter(f"{SVG}polygon"))) == 1  # steps 2, 3 (None) and 4 (skipped) have none
    assert [len((p.get("points") or "").split()) for p in root.iter(f"{SVG}polyline")] == [2, 2]
    tips = [t.text or "" for t in root.iter(f"{SVG}title")]
    assert any("not compared: no case in common" in t for t in tips)


def test_the_pinned_reference_is_ringed_and_drawn_as_a_level() -> None:
    values: list[float | None] = [0.71, 0.72, 0.70, 0.69, 0.68]
    trend = make_trend(values)
    root = parse(trend_plot(trend, reference_at=1))
    slope, intercept = scale(root, values)
    levels = [line for line in root.iter(f"{SVG}line") if line.get("class") == "reference"]
    assert len(levels) == 1
    assert float(levels[0].get("y1", "nan")) == pytest.approx(slope * 0.72 + intercept, abs=0.05)
    ringed = [c for c in root.iter(f"{SVG}circle") if c.get("stroke")]
    assert [c.get("cy") for c in ringed] == [list(root.iter(f"{SVG}circle"))[1].get("cy")]
    assert not [
        x for x in parse(trend_plot(trend)).iter(f"{SVG}line") if x.get("class") == "reference"
    ]


def test_a_single_point_and_a_flat_trend_still_draw() -> None:
    for values in ([0.5], [0.5, 0.5, 0.5]):
        root = parse(trend_plot(make_trend(list(values))))
        assert len(list(root.iter(f"{SVG}circle"))) == len(values)


def test_labels_are_escaped_and_thinned_to_fit() -> None:
    trend = make_trend([0.7 - 0.001 * i for i in range(40)])
    hostile = dataclasses.replace(trend.points[0], label=HOSTILE)
    trend = dataclasses.replace(trend, points=(hostile, *trend.points[1:]))
    svg = trend_plot(trend)
    assert "<script>" not in svg
    root = parse(svg)
    bottom = [
        t
        for t in root.iter(f"{SVG}text")
        if t.get("class") == "tick"
        and t.get("text-anchor") in ("start", "middle", "end")
        and not re.fullmatch(r"-?\d+\.\d+|reference", t.text or "")
    ]
    assert 2 <= len(bottom) <= 10
    assert bottom[-1].text == CANDIDATE_LABEL


def test_the_html_report_draws_the_trend_beside_the_checks_only_for_drift() -> None:
    trend = make_trend([0.77, 0.76, 0.75, 0.74])
    page = render_html(drift(), trend=DriftTrend([trend], None, 1))
    assert page.count('<svg class="trend"') == 1
    assert page.index("<h2>Trend across promotions</h2>") < page.index(
        "Δ with its confidence interval"
    )
    assert page.index("<h2>Checks</h2>") < page.index("<h2>Trend across promotions</h2>")
    assert STATUS_COLOURS["fail"] in page.split('<svg class="trend"', 1)[1].split("</svg>", 1)[0]
    assert '<svg class="trend"' not in render_html(
        passing(), trend=DriftTrend([trend])
    )  # no drift check
    noted = render_html(
        no_reference(),
        trend=DriftTrend(note="trend across promotions not drawn: no promotion kept yet"),
    )
    assert "trend across promotions not drawn: no promotion kept yet" in noted
