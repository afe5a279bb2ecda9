"""The terminal report: a headline, a rich table of the checks, and why anything failed.

Colour follows rich's own detection (a TTY, ``NO_COLOR``, ``FORCE_COLOR``) unless
``color`` says otherwise.  Checks appear in the checks file's order, every run, so
the same check is on the same line run after run; the headline and the "why" list
name the failures.  Untrusted text is passed to rich as :class:`rich.text.Text`
(never parsed as markup) after :func:`evalkit.report.escape.one_line` has spelled
out control characters, so a case id cannot inject ANSI escapes or rich markup.
"""

from __future__ import annotations

import io
import os
from typing import TYPE_CHECKING

from evalkit.errors import InputError
from evalkit.gate.model import CheckVerdict, GateReport, RunSummary
from evalkit.report import summary as S
from evalkit.report.escape import one_line

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.text import Text

STATUS_STYLE = {
    "pass": "green",
    "fail": "bold red",
    "warn": "yellow",
    "error": "bold magenta",
    "no-baseline": "yellow",
    "no-reference": "bold yellow",
    "incomparable": "bold red",
}
VERDICT_STYLE = {
    "pass": "bold green",
    "warn": "bold yellow",
    "fail": "bold red",
    "error": "bold magenta",
    "incomplete": "bold yellow",
}
STATUS_MARK = {
    "pass": "✓",
    "fail": "✗",
    "warn": "!",
    "error": "✗",
    "no-baseline": "?",
    "no-reference": "?",
    "incomparable": "≠",
}
NAME_LEN = 80
ID_LEN = 120
MESSAGE_LEN = 400
SHOW_FAILED = 10
SHOW_IDS = 5
SHOW_WORST = 5
CAPTURE_WIDTH = 160


def render_terminal(
    report: GateReport,
    *,
    console: Console | None = None,
    color: bool | None = None,
    width: int | None = None,
    capture: bool = False,
) -> str | None:
    """Print the report to ``console`` (default: a new stdout console) and return None.

    With ``capture=True`` nothing is printed and the text is returned instead, with
    ANSI colour only when ``color`` is true (``width`` defaults to 160 there).
    ``color``: ``None`` lets rich decide (TTY and ``NO_COLOR``), ``True``/``False`` force it;
    it applies to the console this function creates, so it cannot be combined with
    ``console``.
    """
    from rich.console import Console

    if console is not None and (color is not None or capture):
        raise InputError(
            "render_terminal: pass either console=, or color=/capture= for a console "
            "it creates, not both"
        )
    if capture:
        buf = io.StringIO()
        out = Console(
            file=buf,
            force_terminal=bool(color),
            no_color=not color,
            color_system="standard" if color else None,
            width=width or CAPTURE_WIDTH,
            highlight=False,
            emoji=False,
            legacy_windows=False,
        )
        _print(out, report)
        return buf.getvalue()
    if console is None:
        console = Console(
            force_terminal=True if color else None,
            no_color=True if color is False else None,
            width=width,
            highlight=False,
            emoji=False,
        )
        if width is None and not console.is_terminal and "COLUMNS" not in os.environ:
            console.width = CAPTURE_WIDTH  # CI logs: rich's 80-column default wraps the table
        # A reader leaving early (`| head -1`) is the caller's to handle; rich's own
        # answer, SystemExit(1), would read as a failed check.
        console.on_broken_pipe = _raise_broken_pipe  # type: ignore[method-assign]
    _print(console, report)
    return None


def _raise_broken_pipe() -> None:
    raise BrokenPipeError("stdout was closed by its reader")


def _say(console: Console, line: RenderableType) -> None:
    """One line, soft-wrapped: the terminal wraps it, so a copied id or message stays whole."""
    console.print(line, soft_wrap=True)


def _prose(console: Console, line: RenderableType) -> None:
    """A warning to read, not to copy: wrapped at word boundaries to the width."""
    console.print(line, soft_wrap=False, overflow="fold")


def _t(text: object, max_len: int = NAME_LEN, style: str = "") -> Text:
    from rich.text import Text

    return Text(one_line(text, max_len), style=style)


def _headline(report: GateReport) -> Text:
    from rich.text import Text

    h = S.headline(report)
    line = Text()
    line.append(h.word, style=VERDICT_STYLE[h.verdict])
    line.append(f": {h.counts()}")
    if h.named:
        line.append(f"; {h.named_label}: ")
        for i, name in enumerate(h.named):
            if i:
                line.append(", ")
            line.append(_t(name, style="bold"))
        if h.more:
            line.append(f" and {h.more} more")
    return line


def _run_line(label: str, run: RunSummary) -> Text:
    from rich.text import Text

    line = Text()
    line.append(f"{label} ", style="bold")
    line.append(_t(run.name))
    line.append(f" · {run.n_cases:,} cases")
    sha = S.short_sha(run.git_commit)
    if sha is not None:
        line.append(f" · commit {sha}")
    elif run.git_commit:
        line.append(" · commit ").append(_t(run.git_commit, 40))
    if run.created_at:
        line.append(" · created ").append(_t(run.created_at, 40))
    return line


def _table(report: GateReport) -> RenderableType:
    from rich import box
    from rich.table import Table

    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for name, justify in (
        ("", "left"),
        ("check", "left"),
        ("metric", "left"),
        ("status", "left"),
        ("result", "left"),
        ("coverage", "right"),
        ("W/L/T", "right"),
        ("detects ≥", "right"),
    ):
        table.add_column(name, justify=justify)  # type: ignore[arg-type]
    for v in report.verdicts:
        style = STATUS_STYLE[v.status]
        arrow = {True: " ↑", False: " ↓", None: ""}[v.higher_is_better]
        metric = _t(v.metric)
        metric.append(arrow)
        table.add_row(
            _t(STATUS_MARK[v.status], style=style),
            _t(v.check_id),
            metric,
            _t(S.status_word(v), style=style),
            _t(S.result(v), 200),
            f"{v.covered}/{v.total}",
            S.wlt(v),
            S.mde(v),
        )
    return table


def _why(v: CheckVerdict) -> Text:
    line = _t(f"{STATUS_MARK[v.status]} ", style=STATUS_STYLE[v.status])
    line.append(_t(v.check_id, style="bold"))
    line.append(": ")
    line.append(_t(v.message, MESSAGE_LEN))
    return line


def _say_reference(console: Console, report: GateReport) -> None:
    """The drift checks' reference (a run line), or the loud line saying there is none."""
    ref = report.reference
    if ref is not None and ref.run is not None:
        line = _run_line("Reference", ref.run)
        line.append(" · ")
        line.append(_t(ref.detail, MESSAGE_LEN))
        _say(console, line)
    missing = S.no_reference(report)
    if missing is not None:
        text = _t(f"{missing.lead()}: ", MESSAGE_LEN, style="bold yellow")
        text.append(_t(missing.detail, MESSAGE_LEN))
        text.append(_t(f". {missing.consequence()}", MESSAGE_LEN, style="bold yellow"))
        _say(console, text)


def _print(console: Console, report: GateReport) -> None:
    from rich.text import Text

    _say(console, _headline(report))
    _say(console, _run_line("Candidate", report.candidate))
    coverage = S.coverage_line(report)
    if coverage is not None:
        before, selection, after = coverage
        _prose(console, Text(before, style="bold yellow").append(_t(selection)).append(after))
    if report.baseline is not None:
        _say(console, _run_line("Baseline", report.baseline))
    elif any(v.kind == "vs_baseline" for v in report.verdicts):
        _prose(
            console,
            Text(
                "No baseline: vs_baseline checks had nothing to compare against. "
                "Promote a run of the default branch as the baseline (how, for the "
                "configured baseline store: the note below).",
                style="bold yellow",
            ),
        )
    _say_reference(console, report)
    line = S.multiplicity(report)
    if line is not None:
        _say(console, line)
    for note in report.notes:
        _say(console, _t(note, MESSAGE_LEN, style="dim"))
    bad = S.non_finite_fields(report)
    if bad:
        _say(console, Text(f"Not finite (shown as n/a): {', '.join(bad[:5])}", style="yellow"))
    if report.verdicts:
        console.print(_table(report))
    else:
        _say(console, "No checks are configured, so nothing was gated.")
    for v in report.verdicts:
        if v.status != "pass":
            _say(console, _why(v))
    for warning, checks in S.caveats(report):
        text = f"⚠ read with care ({', '.join(checks)}): {warning}"
        _prose(console, _t(text, MESSAGE_LEN * 2, style="yellow"))
    _print_failed(console, report)
    _print_goldens(console, report)
    _print_slices(console, report)
    _print_worst(console, report)


def _print_slices(console: Console, report: GateReport) -> None:
    """Every slice of the per-slice checks (report/slices.py: the table compare --by prints)."""
    from rich.text import Text

    from evalkit.report.slices import slice_text

    if report.slices is not None and report.slices.verdicts:
        for line in slice_text(report.slices).splitlines():
            _say(console, Text(line))


def _more(n: int, unit: str = "cases") -> str:
    return f"  … {n:,} more {unit} not shown (see the JSON report/artifact)"


def _print_failed(console: Console, report: GateReport) -> None:
    from rich.text import Text

    failed = report.candidate.failed
    if not failed:
        return
    _say(
        console,
        Text(
            f"{len(failed):,} of {report.candidate.n_cases:,} cases failed to run:",
            style="bold magenta",
        ),
    )
    for cid, err in failed[:SHOW_FAILED]:
        line = Text("  ")
        line.append(_t(cid, ID_LEN, style="bold")).append(": ").append(
            _t(err or "(no message)", MESSAGE_LEN)
        )
        _say(console, line)
    if len(failed) > SHOW_FAILED:
        _say(console, _more(len(failed) - SHOW_FAILED))


def _print_goldens(console: Console, report: GateReport) -> None:
    from rich.text import Text

    diff = report.goldens_diff
    if diff.empty:
        return
    _say(
        console,
        f"Goldens changed since the baseline: {len(diff.added):,} added, "
        f"{len(diff.removed):,} removed, {len(diff.changed):,} changed "
        "(vs_baseline checks compared the unchanged cases only)",
    )
    for label, ids in (("added", diff.added), ("removed", diff.removed), ("changed", diff.changed)):
        if ids:
            line = Text(f"  {label}: ")
            for i, cid in enumerate(ids[:SHOW_IDS]):
                if i:
                    line.append(", ")
                line.append(_t(cid, ID_LEN))
            if len(ids) > SHOW_IDS:
                line.append(f" and {len(ids) - SHOW_IDS:,} more")
            _say(console, line)


def _print_worst(console: Console, report: GateReport) -> None:
    from rich.text import Text

    for v in report.verdicts:
        if v.status == "pass" or not v.worst_cases:
            continue
        head = Text("Most regressed for ")
        head.append(_t(v.check_id, style="bold")).append(":")
        _say(console, head)
        for d in v.worst_cases[:SHOW_WORST]:
            line = Text("  ")
            line.append(_t(d.case_id, ID_LEN))
            line.append(f"  {S.num(d.baseline)} → {S.num(d.candidate)} ({S.signed(d.delta)})")
            _say(console, line)
        shown = min(len(v.worst_cases), SHOW_WORST)
        # every loss counts, not only the few the gate kept as the worst (gate.WORST_CASES)
        losses = v.comparison.losses if v.comparison is not None else len(v.worst_cases)
        if losses > shown:
            _say(console, _more(losses - shown, "losses" if losses - shown > 1 else "loss"))


__all__ = ["render_terminal"]
