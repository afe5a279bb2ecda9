"""``evalkit compare`` tables as text, GitHub markdown and CSV."""

from __future__ import annotations

import csv
import io
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field

from evalkit._util.pvalues import pvalue
from evalkit._util.units import unit_of
from evalkit.errors import InputError
from evalkit.gate.compare import CompareRow, CompareTable
from evalkit.report.escape import md, one_line
from evalkit.report.summary import confidence, pack

Escape = Callable[[object], str]

FORMATS = ("text", "markdown", "csv")

#: The CSV columns, in order (docs: docs/cli.md, "evalkit compare").
CSV_COLUMNS = (
    "metric",
    "run",
    "run_file",
    "reference",
    "reference_file",
    "n",
    "value",
    "reference_value",
    "delta",
    "ci_low",
    "ci_high",
    "confidence",
    "p_value",
    "p_adjusted",
    "correction",
    "wins",
    "losses",
    "ties",
    "direction",
    "note",
)


@dataclass
class _Grid:
    headers: list[str]
    right: list[bool]  # right-aligned (numeric) columns
    rows: list[list[str]] = field(default_factory=list)


def _corrected(table: CompareTable) -> bool:
    return table.correction != "none" and len(table.comparisons) > 1


def _direction(r: CompareRow) -> str:
    return r.note if r.incomparable else r.direction


def _wlt(r: CompareRow) -> str:
    return f"{r.wins}/{r.losses}/{r.ties}" if r.kind == "case" else "-"


def _metric(name: str, esc: Escape) -> str:
    """The metric as a row names it, with the unit its values are in: ``latency_p95 (ms)``."""
    unit = unit_of(name)
    return esc(name) + (f" ({unit})" if unit else "")


def _ci(r: CompareRow) -> str:
    return f"[{r.ci_low:+.4f}, {r.ci_high:+.4f}]"


def _pair_grid(table: CompareTable, esc: Escape) -> _Grid:
    (only,) = table.comparisons
    level = f"{confidence(1 - table.alpha)} CI"
    headers = ["metric", esc(only.label), esc(table.reference_label), "delta", level, "p"]
    headers += ["W/L/T", "direction"]
    grid = _Grid(headers, [False, True, True, True, False, True, False, False])
    for r in only.rows:
        grid.rows.append(
            [
                _metric(r.metric, esc),
                f"{r.value_a:.4f}",
                f"{r.value_b:.4f}",
                f"{r.delta:+.4f}",
                _ci(r),
                pvalue(r.deciding_p),
                _wlt(r),
                esc(_direction(r)),
            ]
        )
    return grid


def _many_grid(table: CompareTable, esc: Escape, *, repeat_metric: bool) -> _Grid:
    corrected = _corrected(table)
    headers = ["metric", "run", "value", "delta", "CI", "level", "p", "W/L/T", "direction"]
    right = [False, False, True, True, False, True, True, False, False]
    if corrected:
        headers[6] = f"p ({table.correction})"
    else:
        headers[4] = f"{confidence(1 - table.alpha)} CI"
        del headers[5], right[5]
    grid = _Grid(headers, right)
    for metric in table.metrics:
        for k, comparison in enumerate(table.comparisons):
            r = table.row(k, metric)
            shown = _metric(metric, esc) if k == 0 or repeat_metric else ""
            cells = [shown, esc(comparison.label), f"{r.value_a:.4f}", f"{r.delta:+.4f}", _ci(r)]
            if corrected:
                cells.append(confidence(r.confidence))
            cells += [pvalue(r.deciding_p), _wlt(r), esc(_direction(r))]
            grid.rows.append(cells)
        blank = [""] * (len(headers) - 4)
        grid.rows.append(
            [
                _metric(metric, esc) if repeat_metric else "",
                esc(table.reference_label),
                f"{table.reference_values[metric]:.4f}",
                *blank,
                "reference",
            ]
        )
    return grid


def _title(table: CompareTable, esc: Escape) -> str:
    runs = ", ".join(esc(c.label) for c in table.comparisons)
    ref = esc(table.reference_label)
    if len(table.comparisons) == 1:
        return f"comparing {runs} against {ref}, paired on {table.n} cases"
    return (
        f"comparing {runs} against the reference {ref}, paired on {table.n} cases "
        f"(delta = run - {ref})"
    )


def _files(table: CompareTable, esc: Escape) -> str:
    """Which file each label stands for, when a label is not the file itself."""
    pairs = [(c.label, c.artifact.source) for c in table.comparisons]
    pairs.append((table.reference_label, table.reference.source))
    named = [f"{esc(lab)} = {esc(src)}" for lab, src in pairs if src and lab != str(src)]
    return f"files: {'; '.join(named)}" if named else ""


def _footnotes(table: CompareTable, esc: Escape) -> list[str]:
    notes: list[str] = []
    if _corrected(table):
        notes.append(
            f"p: {table.correction}-adjusted across the {len(table.comparisons)} comparisons of "
            f"each metric (unadjusted p in --format csv); each CI is at the level at which its "
            f"own test decides as the adjusted p does at alpha {table.alpha:g}"
        )
    notes.extend(esc(n) for n in table.notes)
    return notes


def _draw_text(grid: _Grid) -> list[str]:
    widths = [
        max(len(h), *(len(row[i]) for row in grid.rows)) if grid.rows else len(h)
        for i, h in enumerate(grid.headers)
    ]

    def line(cells: list[str]) -> str:
        parts = [
            c.rjust(w) if right else c.ljust(w)
            for c, w, right in zip(cells, widths, grid.right, strict=True)
        ]
        return "  ".join(parts).rstrip()

    header = line(grid.headers)
    return [header, "-" * len(header), *(line(row) for row in grid.rows)]


def _draw_markdown(grid: _Grid) -> list[str]:
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(cells) + " |"

    rule = ["---:" if right else "---" for right in grid.right]
    return [line(grid.headers), line(rule), *(line(row) for row in grid.rows)]


def _grid(table: CompareTable, esc: Escape, *, repeat_metric: bool) -> _Grid:
    if len(table.comparisons) == 1:
        return _pair_grid(table, esc)
    return _many_grid(table, esc, repeat_metric=repeat_metric)


#: Where footnotes wrap: prose reads better narrower than a wide table.
NOTE_WIDTH = 88


def _draw_blocks(grid: _Grid, width: int, *, run_column: bool) -> list[str]:
    """The grid as one short block per metric, for a terminal narrower than the table."""
    lines: list[str] = []
    first = 2 if run_column else 1
    for row in grid.rows:
        metric, direction = row[0], row[-1]
        pieces = [
            head + ("" if cell.startswith("<") else " ") + cell  # p<0.0001, as the gate says
            for head, cell in zip(grid.headers[first:-1], row[first:-1], strict=True)
            if cell not in ("", "-")
        ]
        if run_column:
            if metric:
                lines.append(metric)
            lines.append(f"  {row[1]}: {direction}")
            lines += pack(pieces, width, "      ")
        else:
            lines.append(f"{metric}: {direction}")
            lines += pack(pieces, width, "    ")
    return lines


def _wrapped(text: str, width: int | None) -> list[str]:
    """A title or a files line: whole when nothing wraps it, else at spaces only."""
    if width is None or len(text) <= width:
        return [text]
    return textwrap.wrap(text, width, break_on_hyphens=False, break_long_words=False)


def render_text(table: CompareTable, width: int | None = None) -> str:
    """The terminal table, its title first and its footnotes after."""
    esc: Escape = one_line
    lines = _wrapped(_title(table, esc), width)
    files = _files(table, esc)
    if files:
        lines += _wrapped(files, width)
    grid = _grid(table, esc, repeat_metric=False)
    drawn = _draw_text(grid)
    if width is not None and max(len(line) for line in drawn) > width:
        drawn = _draw_blocks(grid, width, run_column=len(table.comparisons) > 1)
    lines += drawn
    notes = _footnotes(table, esc)
    if notes:
        note_width = min(NOTE_WIDTH, width or NOTE_WIDTH)
        lines.append("")
        lines += [textwrap.fill(n, note_width, break_on_hyphens=False) for n in notes]
    return "\n".join(lines)


def render_markdown(table: CompareTable) -> str:
    """A GitHub-flavoured markdown table (untrusted names made inert), for PRs and papers."""
    esc: Escape = md
    lines = [f"**{_title(table, esc)}**", ""]
    files = _files(table, esc)
    if files:
        lines += [files, ""]
    lines += _draw_markdown(_grid(table, esc, repeat_metric=True))
    notes = _footnotes(table, esc)
    if notes:
        lines += ["", *(f"- {n}" for n in notes)]
    return "\n".join(lines)


def _number(value: float | None) -> str:
    return "" if value is None else repr(float(value))


def render_csv(table: CompareTable) -> str:
    """One record per metric and compared run (``CSV_COLUMNS``), numbers at full precision."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for metric in table.metrics:
        for k, comparison in enumerate(table.comparisons):
            r = table.row(k, metric)
            numbers = (r.value_a, r.value_b, r.delta, r.ci_low, r.ci_high, r.confidence)
            counts = (r.wins, r.losses, r.ties) if r.kind == "case" else ("", "", "")
            writer.writerow(
                [
                    metric,
                    comparison.label,
                    comparison.artifact.source or "",
                    table.reference_label,
                    table.reference.source or "",
                    r.n,
                    *map(_number, (*numbers, r.p_value, r.p_adjusted)),
                    r.correction,
                    *counts,
                    r.direction,
                    r.note,
                ]
            )
    return out.getvalue()


def check_format(fmt: str) -> str:
    if fmt not in FORMATS:
        from evalkit._util.suggest import did_you_mean

        raise InputError(
            f"--format {fmt!r} is not one of {', '.join(FORMATS)}{did_you_mean(fmt, FORMATS)}"
        )
    return fmt


def render_compare_table(table: CompareTable, fmt: str = "text", width: int | None = None) -> str:
    """The table in ``fmt``: ``text`` (fitted to ``width`` when given), ``markdown`` or
    ``csv`` (both for files and pages, never wrapped); another ``fmt`` is an InputError."""
    if check_format(fmt) == "text":
        return render_text(table, width)
    renderers = {"markdown": render_markdown, "csv": render_csv}
    return renderers[fmt](table)
