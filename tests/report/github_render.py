"""Render a comment body the way GitHub shows it: cmark-gfm, then GitHub's markdown CSS.

GitHub turns a comment into HTML with its fork of cmark (``cmarkgfm`` binds the same C
library, with the same extensions: tables, strikethrough, autolinks, tag filter), lets
raw ``<details>``/``<summary>`` through, turns a ``> [!WARNING]`` blockquote into an
alert box, and styles the result with the ``.markdown-body`` stylesheet that
``github-markdown-css`` 5.9.0 (npm; vendored in ``github_css/``, MIT) extracts from github.com. A
PR comment's body is about 780 CSS pixels wide on a desktop browser.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Literal

import cmarkgfm
from cmarkgfm.cmark import Options

CSS_DIR = Path(__file__).parent / "github_css"
COMMENT_WIDTH = 780  # px: the body of a comment in a PR's conversation tab
Theme = Literal["light", "dark"]
BACKGROUND = {"light": "#ffffff", "dark": "#0d1117"}
EXTENSIONS = ["table", "strikethrough", "autolink", "tagfilter", "tasklist"]

_ALERT = re.compile(
    r"<blockquote>\n<p>\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\s*(?:<br />)?\n?",
)


def to_html(markdown: str) -> str:
    """The HTML GitHub's parser makes of ``markdown`` (alerts included)."""
    out = cmarkgfm.markdown_to_html_with_extensions(
        markdown, options=Options.CMARK_OPT_UNSAFE, extensions=EXTENSIONS
    )

    def alert(m: re.Match[str]) -> str:
        kind = m.group(1).lower()
        return (
            f'<blockquote class="markdown-alert markdown-alert-{kind}">'
            f'<p class="markdown-alert-title">{kind.title()}</p>\n<p>'
        )

    return str(_ALERT.sub(alert, out))


def page(markdown: str, theme: Theme, width: int = COMMENT_WIDTH) -> str:
    """A whole page: the comment body ``width`` px wide in GitHub's ``theme``."""
    css = (CSS_DIR / f"github-markdown-{theme}.css").read_text(encoding="utf-8")
    return (
        "<!DOCTYPE html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(markdown.splitlines()[1] if markdown.count(chr(10)) else '')}"
        f"</title><style>{css}</style><style>"
        f"html,body{{margin:0;background:{BACKGROUND[theme]}}}"
        f".markdown-body{{box-sizing:border-box;width:{width}px;padding:16px}}"
        "</style></head><body><article class='markdown-body'>"
        f"{to_html(markdown)}</article></body></html>"
    )


# Per table cell: how many lines its text takes (a cell stretches to its row's height,
# so the text's own box is measured, not the cell's).
CELL_LINES_JS = """
JSON.stringify(Array.from(document.querySelectorAll('table')).map(t =>
  Array.from(t.querySelectorAll('tr')).map(tr =>
    Array.from(tr.children).map(td => {
      const r = document.createRange();
      r.selectNodeContents(td);
      const h = r.getBoundingClientRect().height;
      return [td.innerText, Math.round(h / parseFloat(getComputedStyle(td).lineHeight))];
    }))))
"""

# The widest element's right edge: anything past the comment's width scrolls sideways.
OVERFLOW_JS = """
Math.max(...Array.from(document.querySelectorAll('.markdown-body table')).map(
  t => t.scrollWidth - t.clientWidth), 0)
"""
