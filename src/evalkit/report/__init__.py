"""Reporters: one gate report, shown four ways."""

from __future__ import annotations

from typing import TYPE_CHECKING

from evalkit.report.html import render_compare_html, render_html
from evalkit.report.json_report import dumps, render_json
from evalkit.report.markdown import comment_marker, render_markdown

if TYPE_CHECKING:
    from evalkit.report.terminal import render_terminal


def __getattr__(name: str) -> object:
    """``render_terminal``, imported on first use: only a terminal report loads rich."""
    if name == "render_terminal":
        from evalkit.report.terminal import render_terminal

        return render_terminal
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "comment_marker",
    "dumps",
    "render_compare_html",
    "render_html",
    "render_json",
    "render_markdown",
    "render_terminal",
]
