"""The HTML report in a real headless Chromium: loads clean, draws plots, is not blank.

Needs Debian's ``chromium`` (``apt-get install -y chromium``).  Skipped with a reason
when it is absent, except under CI, where it must run.
"""

from __future__ import annotations

import os
from pathlib import Path

from evalkit.report.html import render_html

from . import png
from .cdp import Browser
from .samples import big, failing, hostile, warned

DOCS_SHOT = Path(__file__).parents[2] / "docs" / "img" / "report.png"
UPDATE = os.environ.get("EVALKIT_UPDATE_GOLDEN") == "1"


def _open(browser: Browser, html: str, tmp_path: Path, name: str = "report.html") -> None:
    path = tmp_path / name
    path.write_text(html, encoding="utf-8")
    browser.open(path.as_uri())


def _non_blank(image: png.Image) -> bool:
    return float(image.gray().std()) > 8.0 and image.distinct_colours() > 16


def test_gate_report_loads_without_console_errors(browser: Browser, tmp_path: Path) -> None:
    _open(browser, render_html(failing()), tmp_path)
    assert browser.problems() == []
    assert browser.evaluate("document.title").startswith("evalkit gate: FAIL")
    # Both plots were drawn: one forest plot row per comparison, one bar per case.
    assert browser.evaluate("document.querySelectorAll('svg.forest g.row').length") == 2
    assert browser.evaluate("document.querySelectorAll('svg.diff').length") == 2
    assert browser.evaluate("document.querySelectorAll('svg.diff rect.loss').length") == 34 + 30
    box = browser.evaluate("JSON.stringify(document.querySelector('svg.forest').getBBox())")
    assert '"width":0' not in box


def test_drift_trend_is_drawn_in_the_browser(browser: Browser, tmp_path: Path) -> None:
    from evalkit.gate.trend import DriftTrend

    from .samples import drift
    from .test_report_trend import make_trend

    trend = make_trend([0.77 - 0.004 * i for i in range(11)])
    _open(browser, render_html(drift(), trend=DriftTrend([trend], None, 0)), tmp_path)
    assert browser.problems() == []
    assert browser.evaluate("document.querySelectorAll('svg.trend circle').length") == 11
    assert browser.evaluate("document.querySelectorAll('svg.trend polygon.band').length") == 10
    box = browser.evaluate("JSON.stringify(document.querySelector('svg.trend polyline').getBBox())")
    assert '"width":0' not in box


def test_screenshot_is_not_blank(browser: Browser, tmp_path: Path) -> None:
    _open(browser, render_html(warned()), tmp_path)
    image = png.decode(browser.screenshot(scale=0.25))
    assert (image.width, image.height) == (275, 450)
    assert _non_blank(image)
    # The fail colour of the plots is on screen, not only in the source.
    red = (image.pixels[..., 0] > 150) & (image.pixels[..., 1] < 80) & (image.pixels[..., 2] < 80)
    assert red.sum() > 20


def test_hostile_text_stays_text_in_the_browser(browser: Browser, tmp_path: Path) -> None:
    _open(browser, render_html(hostile()), tmp_path)
    assert browser.problems() == []
    assert browser.evaluate("document.scripts.length") == 0
    assert browser.evaluate("document.body.innerText").count("<script>alert(1)</script>") > 10


def test_5000_case_report_renders(browser: Browser, tmp_path: Path) -> None:
    _open(browser, render_html(big(5_000)), tmp_path)
    assert browser.problems() == []
    assert browser.evaluate("document.querySelectorAll('svg.diff rect').length") == 3 * 1_000


def test_harness_sees_errors_and_blank_pages(browser: Browser, tmp_path: Path) -> None:
    """The checks above can fail: a broken page is caught, a blank one is blank."""
    _open(browser, "<!DOCTYPE html><script>console.error('boom'); undefinedFn()</script>", tmp_path)
    problems = browser.problems()
    assert any("console.error: boom" in p for p in problems)
    assert any(p.startswith("exception:") for p in problems)
    _open(browser, "<!DOCTYPE html><html><body></body></html>", tmp_path, "blank.html")
    blank = png.decode(browser.screenshot(scale=0.25))
    assert (blank.pixels[..., :3] == 255).all()  # known answer for the decoder: pure white
    assert not _non_blank(blank)


def test_png_decoder_reads_known_pixels() -> None:
    rgb = bytes([255, 0, 0, 0, 255, 0, 0, 0, 255, 10, 20, 30])
    image = png.decode(png.encode_rgb(2, 2, rgb))
    assert image.pixels.tolist() == [[[255, 0, 0], [0, 255, 0]], [[0, 0, 255], [10, 20, 30]]]
    assert image.distinct_colours() == 4


def test_docs_screenshot(browser: Browser, tmp_path: Path) -> None:
    """docs/img/report.png: the README's picture; refreshed with EVALKIT_UPDATE_GOLDEN=1."""
    _open(browser, render_html(failing()), tmp_path)
    shot = browser.screenshot(scale=0.75, full_page=True)
    width, height = png.size(shot)
    assert width == 825
    assert height > 1_000  # the whole page: table, both plots, the case tables
    if UPDATE:
        DOCS_SHOT.parent.mkdir(parents=True, exist_ok=True)
        DOCS_SHOT.write_bytes(shot)
    assert DOCS_SHOT.exists(), "run with EVALKIT_UPDATE_GOLDEN=1 to create docs/img/report.png"
    assert png.size(DOCS_SHOT.read_bytes())[0] == 825
