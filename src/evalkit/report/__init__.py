"""Reporters: one gate report, shown four ways."""

from __future__ import annotations

from evalkit.report.html import render_compare_html, render_html
from evalkit.report.json_report import dumps, render_json
from evalkit.report.markdown import comment_marker, render_markdown
from evalkit.report.terminal import render_terminal

__all__ = [
    "comment_marker",
    "dumps",
    "render_compare_html",
    "render_html",
    "render_json",
    "render_markdown",
    "render_terminal",
]
