"""The repository's markdown as the doc tests read it: code blocks, sections, headings, links."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)
_HEADING = re.compile(r"^(#{1,6}) +(.+?) *$", re.M)
# [text](target) and ![alt](target); the target ends at the first space or ")".
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def pages() -> list[Path]:
    """README.md and every page under docs/, the design notes included."""
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


def blocks(text: str, lang: str) -> list[str]:
    """The bodies of the fenced code blocks of one language, in order."""
    return [body for kind, body in _FENCE.findall(text) if kind == lang]


def prose(text: str) -> str:
    """``text`` without its fenced code blocks (a ``# comment`` in YAML is no heading)."""
    return _FENCE.sub("", text)


def section(text: str, heading: str) -> str:
    """From the heading line ``heading`` to the next heading of the same or a higher level."""
    match = re.search(rf"^(#+) {re.escape(heading)} *$", prose(text), re.M)
    assert match, f"no heading {heading!r}"
    body = prose(text)[match.end() :]
    level = len(match.group(1))
    end = re.search(rf"^#{{1,{level}}} ", body, re.M)
    return body if end is None else body[: end.start()]


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(text: str) -> set[str]:
    """Every anchor a page's headings make (a repeated heading gets ``-1``, ``-2``, ...)."""
    seen: dict[str, int] = {}
    found = set()
    for _, title in _HEADING.findall(prose(text)):
        base = slug(title)
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def links(text: str) -> list[str]:
    """Every link and image target outside code blocks."""
    return _LINK.findall(prose(text))
