"""Reporters: one gate report, shown four ways.

- :func:`render_terminal` — rich table for people at a terminal;
- :func:`render_markdown` — the sticky PR comment / step summary (escaped, size-capped);
- :func:`render_json` / :func:`dumps` — machine-readable, schema in docs/report-schema.md;
- :func:`render_html` / :func:`render_compare_html` — one self-contained page with SVG plots.

Reporters only present: every number comes from :class:`evalkit.gate.model.GateReport`.
rich is imported only when a terminal report is rendered.
"""

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
