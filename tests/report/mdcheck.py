"""Render markdown the way GitHub's parser would shape it, and inspect the result.

markdown-it-py (a dependency of rich) with raw HTML on and GFM tables enabled parses
our comment body; the checks below look at the *structure* it produced, so they fail
if escaping lets untrusted text open a tag, a link, a code span or a table cell.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from markdown_it import MarkdownIt


def to_html(markdown: str) -> str:
    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    return str(md.render(markdown))


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.starts: list[str] = []
        self.ends: list[str] = []
        self.comments: list[str] = []
        self.text: list[str] = []
        self.rows: list[int] = []
        self._cells = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.starts.append(tag)
        if tag == "tr":
            self._cells = 0
        elif tag in ("td", "th"):
            self._cells += 1
        elif tag == "br":
            self.text.append("\n")

    def handle_endtag(self, tag: str) -> None:
        self.ends.append(tag)
        if tag == "tr":
            self.rows.append(self._cells)

    def handle_comment(self, data: str) -> None:
        self.comments.append(data)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(markdown: str) -> _Tags:
    tags = _Tags()
    tags.feed(to_html(markdown))
    tags.close()
    return tags


def visible_text(markdown: str) -> str:
    """What a reader sees (word joiners and zero-width spaces removed: both invisible)."""
    return "".join(parse(markdown).text).replace("\u2060", "").replace("\u200b", "")


def raw_text(markdown: str) -> str:
    """What a reader sees, invisible characters kept (GitHub's mention linker sees them)."""
    return "".join(parse(markdown).text)


MENTION = re.compile(r"(?<![\w`])@[A-Za-z0-9]")
ISSUE_REF = re.compile(r"#[0-9]")


def tables(markdown: str) -> list[list[int]]:
    """Cell counts of each row of each table, in order (one list per table)."""
    out: list[list[int]] = []
    for block in to_html(markdown).split("<table>")[1:]:
        tags = _Tags()
        tags.feed(block.split("</table>")[0])
        out.append(tags.rows)
    return out
