"""The HTML report at three window widths in headless Chromium: the plots scale with the
window and no text is cut, on the 300-case fixture (passing and failing) and the examples
(issue 44)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers.cli import evalkit

from . import png
from .cdp import Browser

ROOT = Path(__file__).parents[2]
WIDTHS = (360, 800, 1600)
CASES = {
    "fixture-pass": (ROOT / "tests" / "data" / "report300", ("--config", "evalkit.yaml")),
    "fixture-fail": (ROOT / "tests" / "data" / "report300", ("--config", "evalkit-fail.yaml")),
    "custom_client": (
        ROOT / "examples" / "custom_client",
        ("--config", "evalkit.yaml", "--baseline", "baseline.json"),
    ),
    "slices": (ROOT / "examples" / "slices", ("--config", "evalkit.yaml")),
}

# Every SVG text inside its SVG's box, and every element's text inside the page's width.
CUT_JS = """JSON.stringify({
  svg: [...document.querySelectorAll('svg text')].filter(t => {
    const s = t.ownerSVGElement.getBoundingClientRect(), r = t.getBoundingClientRect();
    return r.left < s.left - 0.5 || r.right > s.right + 0.5
        || r.top < s.top - 0.5 || r.bottom > s.bottom + 0.5;
  }).map(t => t.textContent),
  page: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  wide: [...document.querySelectorAll('body *')].filter(e => {
    const r = e.getBoundingClientRect();
    return r.width > 0 && r.right > document.documentElement.clientWidth + 0.5
        && !e.closest('.table-wrap');
  }).map(e => e.tagName + '.' + e.className).slice(0, 5),
  svgs: [...document.querySelectorAll('svg')].map(s => s.getBoundingClientRect().width),
})"""


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for name, (folder, args) in CASES.items():
        work = tmp_path_factory.mktemp(name) / folder.name
        shutil.copytree(folder, work, ignore=shutil.ignore_patterns(".evalkit"))
        page = work / "report.html"
        done = evalkit("gate", *args, "--out", work / "run.json", "--html", page, cwd=work)
        assert done.returncode in (0, 1), done.stdout + done.stderr
        out[name] = page
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_no_text_is_cut_from_360_to_1600_px(
    browser: Browser, pages: dict[str, Path], name: str
) -> None:
    for width in WIDTHS:
        browser.open(pages[name].as_uri(), width=width, height=1200)
        assert browser.problems() == [], (name, width)
        seen = json.loads(browser.evaluate(CUT_JS))
        assert seen["svg"] == [], (name, width, seen["svg"])
        assert seen["page"] == 0, (name, width, seen)
        assert seen["wide"] == [], (name, width, seen["wide"])
        # the plots scale with the window: as wide as the page's column, never fixed
        column = browser.evaluate("document.body.clientWidth")
        assert all(w <= column for w in seen["svgs"]), (name, width, seen["svgs"])
        assert min(seen["svgs"]) > 0.5 * (min(width, 1000) - 48), (name, width, seen["svgs"])
        image = png.decode(browser.screenshot(scale=0.25))
        assert float(image.gray().std()) > 8.0


def test_the_why_is_in_the_details_not_the_table(pages: dict[str, Path]) -> None:
    page = pages["fixture-fail"].read_text()
    table = page.split('<table class="checks">', 1)[1].split("</table>", 1)[0]
    assert "<th>why</th>" not in table
    assert "cannot be ruled out" not in table
    details = page.split("<h2>How each check decided</h2>", 1)[1]
    assert "cannot be ruled out" in details


def test_the_check_sees_cut_text(browser: Browser, tmp_path: Path) -> None:
    """Control: a label past its viewBox and a line wider than the window are caught."""
    page = tmp_path / "cut.html"
    page.write_text(
        '<!DOCTYPE html><html><body><svg viewBox="0 0 100 20" width="100%">'
        '<text x="90" y="15">a long label</text></svg>'
        f'<p style="white-space:nowrap">{"x" * 300}</p></body></html>'
    )
    browser.open(page.as_uri(), width=360, height=400)
    seen = json.loads(browser.evaluate(CUT_JS))
    assert seen["svg"] == ["a long label"]
    assert seen["page"] > 0
    assert seen["wide"]  # the label again, as an element past the window
