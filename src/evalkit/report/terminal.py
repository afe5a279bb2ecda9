"""The terminal report: a headline, a rich table of the checks, and why anything failed."""

from __future__ import annotations

import io
import os
import re

from rich import box
from rich.console import Console, RenderableType
from rich.table import Table
from rich.text import Text

from evalkit.errors import InputError
from evalkit.gate.model import CheckVerdict, GateReport, RunSummary
from evalkit.report import advice as A
from evalkit.report import summary as S
from evalkit.report.escape import one_line
from evalkit.report.slices import slice_text
from evalkit.report.summary import ID_LEN, MESSAGE_LEN, NAME_LEN

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
    "no-baseline": "–",  # skipped: nothing to compare with yet
    "no-reference": "?",  # a drift check that could not run: never a pass
    "incomparable": "≠",
}
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
        return trim_lines(buf.getvalue())
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
        with console.capture() as captured:
            _print(console, report)
        console.file.write(trim_lines(captured.get()))
        console.file.flush()
        return None
    _print(console, report)  # the caller's console (recording, say): printed as it is
    return None


_TRAILING = re.compile(r"(?:[ \t]|\x1b\[[0-9;]*m)+$")
_SGR = re.compile(r"\x1b\[[0-9;]*m")


def trim_lines(text: str) -> str:
    """Every line without its trailing spaces (the colour codes after them are kept): rich
    pads a wrapped line and a table's last column, and a pasted log keeps them."""
    out = []
    for line in text.split("\n"):
        tail = _TRAILING.search(line)
        out.append(line if tail is None else line[: tail.start()] + "".join(_SGR.findall(tail[0])))
    return "\n".join(out)


def _raise_broken_pipe() -> None:
    raise BrokenPipeError("stdout was closed by its reader")


def _say(console: Console, line: RenderableType, indent: int = 0) -> None:
    """One line, wrapped at spaces to the width (a word longer than the line is folded,
    never cut), each continuation indented by ``indent``: no line is wider than the
    terminal, so none is broken by it mid-number."""
    if not isinstance(line, Text):
        console.print(line, soft_wrap=False, overflow="fold")
        return
    # the first line takes the whole width, the rest the width less their indent
    head, *more = line.wrap(console, console.width, overflow="fold")
    offset = len(head.plain)
    head.rstrip()
    console.print(head, soft_wrap=True)
    if not more:
        return
    rest = line[offset:]
    rest = rest[len(rest.plain) - len(rest.plain.lstrip(" ")) :]
    for piece in rest.wrap(console, max(console.width - indent, 20), overflow="fold"):
        piece.rstrip()
        console.print(Text(" " * indent) + piece, soft_wrap=True)


def _t(text: object, max_len: int = NAME_LEN, style: str = "") -> Text:
    return Text(one_line(text, max_len), style=style)


def _headline(report: GateReport, width: int) -> Text:
    """The verdict and the blocking checks on one line: as many names as fit ``width``
    (at least one), the rest counted."""
    h = S.headline(report)
    names = [*h.named]
    while True:
        line = Text()
        line.append(h.word, style=VERDICT_STYLE[h.verdict])
        line.append(f": {h.counts()}")
        more = h.more + len(h.named) - len(names)
        if names:
            line.append(f"; {h.named_label}: ")
            line.append(Text(", ").join(_t(name, style="bold") for name in names))
            if more:
                line.append(f" and {more} more")
        if line.cell_len <= width or len(names) <= 1:
            return line
        names.pop()


def _run_line(label: str, run: RunSummary) -> list[Text]:
    """The run's provenance as its pieces, which :func:`_say_pieces` keeps whole when it wraps."""
    pieces = [
        Text(fixed).append(_t(text, n)) if text else Text(fixed)
        for fixed, text, n in S.run_pieces(run)
    ]
    pieces[0] = Text().append(f"{label} ", style="bold").append(pieces[0])
    return pieces


def _say_pieces(console: Console, pieces: list[Text], sep: str = " · ") -> None:
    """Pieces joined by ``sep``, wrapped between pieces (never inside one that fits)."""
    line: Text | None = None
    for piece in pieces:
        if line is not None and line.cell_len + len(sep) + piece.cell_len <= console.width:
            line.append(sep).append(piece)
            continue
        if line is not None:
            _say(console, line, 2)
        line = piece.copy() if line is None else Text("  ").append(piece)
    if line is not None:
        _say(console, line, 2)


def _result(v: CheckVerdict, shared: float | None, before_after: bool = True) -> str:
    """Δ and its interval (with before → after), or the value against its threshold."""
    text = ", ".join(S.change_parts(v))
    c = v.comparison
    if c is not None:
        if before_after:
            text = f"{S.before_after(v, c)}: {text}"
        if c.confidence != shared:
            text += f" {S.confidence(c.confidence)} CI"
        if v.kind == "vs_reference":
            text = "vs reference: " + text
    return text


def _table(report: GateReport, before_after: bool) -> Table:
    """The checks as one table whose cells never wrap (the caller checks that it fits)."""
    shared = S.shared_confidence(report)
    partial = any(v.covered != v.total for v in report.verdicts)
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True)
    result = f"result ({S.confidence(shared)} CI)" if shared is not None else "result"
    for name in ("", "check", "metric", "status", result, "p"):
        table.add_column(name, no_wrap=True)
    for name in ["cases"] * partial + ["W/L/T", "detects ≥"]:
        table.add_column(name, justify="right", no_wrap=True)
    for v in report.verdicts:
        style = STATUS_STYLE[v.status]
        metric = _t(v.metric)
        metric.append(S.ARROW[v.higher_is_better])
        cells: list[RenderableType] = [
            _t(STATUS_MARK[v.status], style=style),
            _t(v.check_id),
            metric,
            _t(S.status_word(v), style=style),
            _result(v, shared, before_after),
            S.p_cell(v),
        ]
        if partial:
            cells.append(S.partial_cases(v))
        cells += [S.wlt(v).replace(" / ", "/"), S.mde(v)]
        table.add_row(*cells)
    return table


def _blocks(console: Console, report: GateReport, warnings: dict[str, list[str]]) -> None:
    """The checks as blocks when no table fits: a line that names the check, then its
    numbers indented, each wrapped at spaces, so no id, bound or p is cut."""
    shared = S.shared_confidence(report)
    if shared is not None:
        _say(console, Text(f"Intervals are {S.confidence(shared)} confidence intervals.", "dim"))
    for v in report.verdicts:
        style = STATUS_STYLE[v.status]
        head = _t(f"{STATUS_MARK[v.status]} ", style=style)
        head.append(_t(v.check_id, style="bold"))
        head.append("  ").append(_t(v.metric)).append(S.ARROW[v.higher_is_better])
        head.append("  ").append(_t(S.status_word(v), style=style))
        console.print(head, overflow="fold")
        bits = [_result(v, shared)]
        if v.comparison is not None:
            bits.append(S.p_cell(v))
        bits.append(v.coverage)
        if v.comparison is not None:
            bits += [f"W/L/T {S.wlt(v).replace(' / ', '/')}", f"detects ≥ {S.mde(v)}"]
        for line in S.pack(bits, console.width, "    "):
            # A piece longer than the line itself is folded, never cut.
            _say(console, Text(line), 4)
        for advice in warnings.get(v.check_id, ()):
            _say(console, Text("    ").append(_warning(None, advice)), 6)


def _checks(console: Console, report: GateReport, warnings: dict[str, list[str]]) -> bool:
    """A table when it fits the width, else one block per check (wrapped by block), each
    with its warnings; True when the warnings were said (under their checks)."""
    wide = console.options.update_width(100_000)  # rich clamps a measurement to its width
    for before_after in (True, False):
        table = _table(report, before_after)
        if console.measure(table, options=wide).maximum <= console.width:
            console.print(table)
            full = S.full_coverage(report)  # the table has no cases column then
            if full is not None:
                _say(console, full)
            return False
    _blocks(console, report, warnings)
    return True


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
        _say_pieces(console, [*_run_line("Reference", ref.run), _t(ref.detail, MESSAGE_LEN)])
    missing = S.no_reference(report)
    if missing is not None:
        text = _t(f"{missing.lead()}: ", MESSAGE_LEN, style="bold yellow")
        text.append(_t(missing.detail, MESSAGE_LEN))
        text.append(_t(f". {missing.consequence()}", MESSAGE_LEN, style="bold yellow"))
        _say(console, text)


def _risk(report: GateReport) -> Text | None:
    r = A.risk(report)
    if r is None:
        return None
    line = Text(r.before(), style="yellow")
    if r.culprit is not None:
        line.append(_t(r.culprit, style="bold")).append(r.after(), style="yellow")
    return line


def _warning(v_id: str | None, advice: str) -> Text:
    line = _t("⚠ ", style="yellow")
    if v_id is not None:
        line.append(_t(v_id, style="bold")).append(": ")
    line.append(_t(advice, MESSAGE_LEN))
    return line


def _print(console: Console, report: GateReport) -> None:
    _say(console, _headline(report, console.width), 2)
    risk = _risk(report)
    if risk is not None:
        _say(console, risk, 2)
    _say_pieces(console, _run_line("Candidate", report.candidate))
    coverage = S.coverage_line(report)
    if coverage is not None:
        before, selection, after = coverage
        _say(console, Text(before, style="bold yellow").append(_t(selection)).append(after))
    if report.baseline is not None:
        _say_pieces(console, _run_line("Baseline", report.baseline))
    elif (unbased := S.no_baseline(report)) is not None:
        why = f"{S.PROMOTE_ONE} (how, for the configured baseline store: the note below)."
        _say(console, Text(f"No baseline: {unbased[0]}. {why}", style="bold yellow"))
    _say_reference(console, report)
    for note in report.notes:
        _say(console, _t(note, MESSAGE_LEN, style="dim"), 2)
    bad = S.non_finite_line(report)
    if bad is not None:
        _say(console, Text(bad, style="yellow"))
    warnings: dict[str, list[str]] = {}
    for w in A.in_view(report):
        warnings.setdefault(w.check_id, []).append(w.advice)
    if report.verdicts:
        if not _checks(console, report, warnings):
            for v in report.verdicts:
                for advice in warnings.get(v.check_id, ()):
                    _say(console, _warning(v.check_id, advice), 2)
        decided = S.deciding_procedures(report)
        if decided is not None:
            # the rest of each check's statistics (the family-wise rate, the bootstrap
            # interval beside the deciding one) is in the HTML, markdown and JSON reports
            _say(console, _t(decided, MESSAGE_LEN, style="dim"))
    else:
        _say(console, "No checks are configured, so nothing was gated.")
    for v in report.verdicts:
        if v.status != "pass":
            _say(console, _why(v), 4)
    _print_failed(console, report)
    _print_goldens(console, report)
    _print_slices(console, report)
    _print_worst(console, report)


def _print_slices(console: Console, report: GateReport) -> None:
    """Every slice of the per-slice checks (report/slices.py: the table compare --by prints)."""
    if report.slices is not None and report.slices.verdicts:
        for line in slice_text(report.slices, console.width).splitlines():
            _say(console, Text(line))


def _more(n: int, unit: str = "cases") -> str:
    return "  " + S.more_not_shown(n, unit)


def _print_failed(console: Console, report: GateReport) -> None:
    failed = report.candidate.failed
    if not failed:
        return
    _say(console, Text(f"{S.failed_to_run(report.candidate)}:", style="bold magenta"))
    for cid, err in failed[:SHOW_FAILED]:
        line = Text("  ")
        line.append(_t(cid, ID_LEN, style="bold")).append(": ").append(
            _t(err or "(no message)", MESSAGE_LEN)
        )
        _say(console, line)
    if len(failed) > SHOW_FAILED:
        _say(console, _more(len(failed) - SHOW_FAILED))


def _print_goldens(console: Console, report: GateReport) -> None:
    diff = report.goldens_diff
    if diff.empty:
        return
    _say(
        console, f"Goldens changed since the baseline: {S.goldens_counts(diff)}. {S.GOLDENS_SCOPE}."
    )
    for label, ids in S.goldens_lists(diff):
        line = Text(f"  {label.lower()}: ")
        line.append(Text(", ").join(_t(cid, ID_LEN) for cid in ids[:SHOW_IDS]))
        if len(ids) > SHOW_IDS:
            line.append(f" and {len(ids) - SHOW_IDS:,} more")
        _say(console, line)


def _print_worst(console: Console, report: GateReport) -> None:
    for v in report.verdicts:
        if v.status == "pass" or not v.worst_cases:
            continue
        head = Text("Most regressed for ")
        head.append(_t(v.check_id, style="bold")).append(":")
        _say(console, head)
        for d in S.worst_first(v.worst_cases, v.higher_is_better)[:SHOW_WORST]:
            line = Text("  ")
            line.append(_t(d.case_id, ID_LEN))
            line.append(f"  {S.num(d.baseline)} → {S.num(d.candidate)} ({S.signed(d.delta)})")
            _say(console, line)
        shown = min(len(v.worst_cases), SHOW_WORST)
        # every loss counts, not only the few the gate kept as the worst (gate.WORST_CASES)
        losses = v.comparison.losses if v.comparison is not None else len(v.worst_cases)
        if losses > shown:
            _say(console, _more(losses - shown, "losses" if losses - shown > 1 else "loss"))
