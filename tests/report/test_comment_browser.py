"""The PR comment as a reviewer sees it: cmark-gfm and GitHub's CSS in headless Chromium.

Each bundled example's comment is rendered 780 px wide in GitHub's light and dark
themes, and what a person would notice is asserted from the page itself: no table
cell of the checks runs past two lines, no table is wider than the comment, every
status mark is visible on both backgrounds and unlike every other. The reviewed
screenshots in docs/img/ are refreshed with ``EVALKIT_UPDATE_GOLDEN=1``.

Needs Debian's ``chromium`` and ``fonts-noto-color-emoji`` (without an emoji font the
marks render as boxes); skipped when absent, except under CI.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from evalkit.gate.model import GateReport
from evalkit.report import summary as S
from evalkit.report.markdown import GITHUB_LIMIT, render_markdown

from . import github_render as G
from . import png
from .cdp import Browser
from .samples import (
    drift,
    failing,
    identical_rerun,
    many,
    no_baseline,
    no_reference,
    passing,
    repeats,
    warned,
)

DOCS = Path(__file__).parents[2] / "docs" / "img"
UPDATE = os.environ.get("EVALKIT_UPDATE_GOLDEN") == "1"
EMOJI_FONT = Path("/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf")

BUNDLED: dict[str, Callable[[], GateReport]] = {
    "pass": passing,
    "fail": failing,
    "no-baseline": no_baseline,
    "drift": drift,
    "repeats": repeats,
    "identical-rerun": identical_rerun,
    "warn": warned,
    "no-reference": no_reference,
    "200-checks": many,
}
# The screenshots the docs show: (example, theme).
SHOTS = [("fail", "light"), ("fail", "dark"), ("no-baseline", "light"), ("200-checks", "dark")]
SHOT_HEIGHT = 720  # the part a reviewer skims: headline, conditions, the checks


@pytest.fixture(scope="module")
def gh(browser: Browser) -> Browser:
    if not EMOJI_FONT.exists():
        if os.environ.get("CI"):
            pytest.fail("no emoji font; CI must run: apt-get install -y fonts-noto-color-emoji")
        pytest.skip("no emoji font (apt-get install -y fonts-noto-color-emoji)")
    return browser


def _show(browser: Browser, markdown: str, theme: G.Theme, tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}-{theme}.html"
    path.write_text(G.page(markdown, theme), encoding="utf-8")
    browser.open(path.as_uri(), width=G.COMMENT_WIDTH, height=SHOT_HEIGHT)
    assert browser.problems() == []


def _shot(browser: Browser, x: float, y: float, w: float, h: float, scale: float = 1) -> bytes:
    clip = {"x": x, "y": y, "width": w, "height": h, "scale": scale}
    data = browser.call("Page.captureScreenshot", format="png", clip=clip)["data"]
    return base64.b64decode(data)


def _top_tables(browser: Browser) -> list[list[list[tuple[str, int]]]]:
    """Each table outside a collapsed section: rows of (cell text, lines it takes)."""
    js = G.CELL_LINES_JS.replace(
        "document.querySelectorAll('table')",
        "Array.from(document.querySelectorAll('table')).filter(t => !t.closest('details'))",
    )
    tables: list[list[list[tuple[str, int]]]] = json.loads(browser.evaluate(js))
    return tables


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("name", sorted(BUNDLED))
def test_checks_table_reads_at_a_glance(
    gh: Browser, tmp_path: Path, name: str, theme: G.Theme
) -> None:
    markdown = render_markdown(BUNDLED[name](), config_name="evalkit")
    _show(gh, markdown, theme, tmp_path, name)
    tables = _top_tables(gh)
    assert tables, "the checks table is in view"
    checks = tables[0]
    head = [cell for cell, _ in checks[0]]
    assert head[:3] == ["status", "check", "metric"]
    assert head[3].startswith("result")
    tall = [(cell, lines) for row in checks for cell, lines in row if lines > 2]
    assert not tall, tall
    # No Δ, interval or p is broken over two lines: they are one unbreakable piece each.
    for row in checks[1:]:
        for cell, _ in row[3:5]:
            assert "\n" not in cell, cell
    assert gh.evaluate(G.OVERFLOW_JS) == 0  # nothing scrolls sideways


def _luminance(rgb: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    c = rgb.astype(np.float64) / 255.0
    c = np.where(c <= 0.03928, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    out: npt.NDArray[np.float64] = 0.2126 * c[..., 0] + 0.7152 * c[..., 1] + 0.0722 * c[..., 2]
    return out


def _glyphs(browser: Browser, glyphs: list[str], theme: G.Theme, tmp_path: Path) -> list[png.Image]:
    markdown = "<!-- glyphs -->\n" + "\n\n".join(glyphs) + "\n"
    _show(browser, markdown, theme, tmp_path, "glyphs")
    boxes = json.loads(
        browser.evaluate(
            "JSON.stringify(Array.from(document.querySelectorAll('.markdown-body p')).map(p => {"
            "const r = document.createRange(); r.selectNodeContents(p);"
            "const b = r.getBoundingClientRect(); return [b.x, b.y, b.width, b.height]; }))"
        )
    )
    return [png.decode(_shot(browser, x, y, w, h, scale=4)) for x, y, w, h in boxes]


def _ink(image: png.Image, theme: G.Theme) -> float:
    """The share of the mark's box at 3:1 contrast or more against the page (WCAG's bar
    for a graphic a person must see)."""
    bg = _luminance(np.array([int(G.BACKGROUND[theme][i : i + 2], 16) for i in (1, 3, 5)]))
    lum = _luminance(image.pixels[..., :3])
    ratio = (np.maximum(lum, bg) + 0.05) / (np.minimum(lum, bg) + 0.05)
    return float((ratio >= 3).mean())


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_every_status_mark_is_visible_and_unlike_the_others(
    gh: Browser, tmp_path: Path, theme: G.Theme
) -> None:
    statuses = sorted(S.STATUS_ICON)
    marks = [S.STATUS_ICON[s] for s in statuses]
    assert len(set(marks)) == len(marks)
    images = _glyphs(gh, marks, theme, tmp_path)
    for status, image in zip(statuses, images, strict=True):
        assert _ink(image, theme) >= 0.05, (status, theme, _ink(image, theme))
    for i, a in enumerate(images):
        for j in range(i + 1, len(images)):
            b = images[j]
            h, w = min(a.height, b.height), min(a.width, b.width)
            diff = np.abs(a.pixels[:h, :w, :3].astype(int) - b.pixels[:h, :w, :3].astype(int))
            assert diff.mean() > 20, (statuses[i], statuses[j], float(diff.mean()))


def test_the_legibility_check_can_fail(gh: Browser, tmp_path: Path) -> None:
    """The old no-baseline mark (❔, pale grey) is invisible on white by the same measure,
    and looks like ❓ in the dark theme's shapes."""
    (pale,) = _glyphs(gh, ["❔"], "light", tmp_path)
    assert _ink(pale, "light") < 0.05


def test_200_checks_fit_the_comment_and_the_summary(gh: Browser, tmp_path: Path) -> None:
    markdown = render_markdown(many(200, id_len=120), config_name="evalkit")
    assert len(markdown) < GITHUB_LIMIT
    _show(gh, markdown, "light", tmp_path, "200-long")
    # Failures are in view, the passing checks folded, nothing cut without a note.
    visible = gh.evaluate(
        "Array.from(document.querySelectorAll('table')).filter(t => !t.closest('details'))"
        "[0].querySelectorAll('tbody tr').length"
    )
    assert visible == sum(1 for v in many(200, id_len=120).verdicts if v.status != "pass")
    text = gh.evaluate("document.body.innerText")
    assert "passing checks" in text
    assert "not shown" in text or "omitted to fit the comment" in text


@pytest.mark.parametrize(("name", "theme"), SHOTS)
def test_docs_screenshots(gh: Browser, tmp_path: Path, name: str, theme: G.Theme) -> None:
    """docs/img/comment-*.png: the reviewed look, refreshed with EVALKIT_UPDATE_GOLDEN=1."""
    markdown = render_markdown(BUNDLED[name](), config_name="evalkit")
    _show(gh, markdown, theme, tmp_path, name)
    height = min(gh.call("Page.getLayoutMetrics")["cssContentSize"]["height"], SHOT_HEIGHT)
    shot = _shot(gh, 0, 0, G.COMMENT_WIDTH, height)
    path = DOCS / f"comment-{name}-{theme}.png"
    if UPDATE:
        path.write_bytes(shot)
    assert path.exists(), f"run with EVALKIT_UPDATE_GOLDEN=1 to create {path}"
    assert png.size(path.read_bytes())[0] == G.COMMENT_WIDTH
