"""The HTML report's structure: self-contained, escaped, plots drawn from the right data."""

from __future__ import annotations

import dataclasses
import math
import re
from html.parser import HTMLParser

from evalkit._model.results import CaseResult, RunResult
from evalkit._spec.artifact import MetricInfo, RunArtifact
from evalkit.gate.compare import CompareRow
from evalkit.gate.model import CaseDelta
from evalkit.report.html import CSP, render_compare_html, render_html
from evalkit.report.svg import COLOURS, difference_plot

from .samples import HOSTILE, SCENARIOS, big, failing, hostile, warned


class _Doc(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _parse(html: str) -> _Doc:
    doc = _Doc()
    doc.feed(html)
    doc.close()
    return doc


def test_page_is_self_contained_for_every_scenario() -> None:
    for make in SCENARIOS.values():
        page = render_html(make())
        doc = _parse(page)
        assert f'content="{CSP}"' in page
        assert not any(tag == "script" for tag, _ in doc.tags)
        for _, attrs in doc.tags:
            for name in ("src", "href"):
                assert attrs.get(name) in (None, "data:,"), attrs
        assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "").replace(
            "http://localhost:3001", ""
        )


def test_hostile_text_is_text() -> None:
    page = render_html(hostile())
    doc = _parse(page)
    allowed = {"html", "head", "meta", "link", "title", "style", "body", "h1", "h2", "h3", "p"}
    allowed |= {"span", "strong", "br", "table", "thead", "tbody", "tr", "th", "td", "ul", "li"}
    allowed |= {"svg", "g", "rect", "line", "circle", "text", "tspan", "footer", "details"}
    allowed |= {"summary", "wbr", "div"}
    assert {tag for tag, _ in doc.tags} <= allowed
    text = "".join(doc.text)
    for tag in ("check-id", "metric", "failed-error", "added", "delta-id", "note", "cand-name"):
        assert f"{tag}:<script>alert(1)</script>" in text, tag
    statuses = {a.get("data-status") for t, a in doc.tags if "data-status" in a}
    assert statuses <= {"fail", "pass"}
    assert HOSTILE not in page  # never verbatim


def test_forest_plot_has_one_row_per_comparison_with_margin() -> None:
    page = render_html(warned())
    assert page.count('<g class="row"') == 1
    assert 'class="margin"' in page  # the non-inferiority margin is drawn
    assert "Δ -0.0060 [-0.0310, +0.0180] 95%, p vs margin=0.6200" in page
    # the plots scale with the window: no fixed pixel width anywhere
    assert 'width="900"' not in page
    assert page.count('width="100%"') == page.count("<svg ")


def test_difference_plot_samples_large_runs_and_counts_all() -> None:
    page = render_html(big(5_000))
    assert page.count("showing 1,000 of 5,000 at evenly spaced ranks") == 3
    assert len(re.findall(r"<rect [^>]*class=\"(?:win|loss|tie)\"", page)) == 3_000
    v = big(5_000).verdicts[0]
    assert v.comparison is not None
    c = v.comparison
    assert f"{c.wins} wins · {c.losses} losses · {c.ties} ties" in page


def test_difference_plot_colours_follow_polarity() -> None:
    ds = (CaseDelta("faster", 90.0, 100.0, -10.0), CaseDelta("slower", 120.0, 100.0, 20.0))
    lower_better = difference_plot(ds, higher_is_better=False, title="latency")
    assert f'fill="{COLOURS["win"]}" class="win"><title>faster' in lower_better
    assert f'fill="{COLOURS["loss"]}" class="loss"><title>slower' in lower_better
    higher_better = difference_plot(ds, higher_is_better=True, title="score")
    assert 'class="loss"><title>faster' in higher_better
    assert "1 wins · 1 losses · 0 ties" in higher_better


def test_non_finite_statistics_do_not_break_the_page() -> None:
    report = failing()
    v = report.verdicts[1]
    assert v.comparison is not None
    comp = dataclasses.replace(v.comparison, ci_low=math.nan, delta=math.inf)
    report = dataclasses.replace(report, verdicts=(dataclasses.replace(v, comparison=comp),))
    page = render_html(report)
    assert "Δ n/a [n/a, -0.0170]" in page
    # no value reads nan; the one line that names the fault says "(NaN or infinite)"
    assert "nan" not in page.lower().replace("n/a", "").replace("(nan or infinite)", "")
    assert "not finite (NaN or infinite) and show as n/a: checks[0].comparison.delta" in page


def test_output_is_deterministic() -> None:
    assert render_html(failing()) == render_html(failing())


def _artifact(name: str, values: dict[str, float]) -> RunArtifact:
    rows = [CaseResult(cid, None, {"score": v}) for cid, v in values.items()]
    return RunArtifact(
        result=RunResult(name, rows),
        path="target",
        metrics={"score": MetricInfo("score", "case", True, "fp1")},
        evalkit_version="0.1.0",
        created_at="2026-11-30T12:00:00Z",
    )


def test_compare_page_plots_per_case_deltas_from_the_artefacts() -> None:
    cand = _artifact("new <b>", {"a": 0.9, "b": 0.2, "c": 0.5, "d": 0.7})
    base = _artifact("old", {"a": 0.5, "b": 0.6, "c": 0.5, "e": 0.1})
    row = CompareRow(
        metric="score",
        kind="case",
        higher_is_better=True,
        value_a=0.5333,
        value_b=0.5333,
        delta=0.0,
        ci_low=-0.4,
        ci_high=0.4,
        p_value=1.0,
        significant=False,
        n=3,
        wins=1,
        losses=1,
        ties=1,
    )
    page = render_compare_html([row], cand, base)
    assert "<h1>evalkit compare: new &lt;b&gt; vs old</h1>" in page
    assert "1 wins · 1 losses · 1 ties" in page  # paired on a, b, c only
    assert "<title>b: 0.6000 → 0.2000 (Δ -0.4000, loss)</title>" in page
    assert "no detectable change" in page  # the text table's words (CompareRow.direction)
    assert '<g class="row"' in page
