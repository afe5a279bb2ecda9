"""What every command shares: its help layout, the options declared once, output and errors.

Imported by every command module, so it imports only typer and the leaves: a command's
use case is imported inside the command, when it runs (``evalkit --help`` stays fast).
"""

from __future__ import annotations

import os
import re
import sys
import textwrap
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, cast

import typer
import typer.core

from evalkit._util.limits import MAX_CONCURRENCY
from evalkit.exit_codes import ExitCode

if TYPE_CHECKING:
    # Typer vendors its own click: the types its commands are handed.
    from typer._click import Context as ClickContext
    from typer._click import HelpFormatter

    from evalkit._app.pipeline import RunInterrupted
    from evalkit._spec.artifact import RunArtifact


class Command(typer.core.TyperCommand):
    """A command whose arguments read as their metavar alone in ``--help``.

    Typer writes an argument as ``RUN <list[Path]>``: a Python type where a user looks
    for what to type.  An argument given a metavar is written ``RUN`` (``RUN...`` when it
    takes several), the way an option with a metavar already is.
    """

    def format_options(self, ctx: ClickContext, formatter: HelpFormatter) -> None:
        arguments: list[tuple[str, str]] = []
        options: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if param.param_type_name == "argument":
                if param.metavar is not None:
                    several = "..." if param.nargs != 1 else ""
                    record = (param.metavar + several, record[1])
                arguments.append(record)
            elif param.param_type_name == "option":
                options.append(record)
        for title, records in (("Arguments", arguments), ("Options", options)):
            if records:
                with formatter.section(title):
                    formatter.write_dl(records)


# ----------------------------------------------------------------------------- the session


@dataclass
class Session:
    """Process-wide options, set by the root callback before any command runs."""

    debug: bool


def enable_debug(ctx: typer.Context, value: bool) -> None:
    session = ctx.find_root().obj
    if value and isinstance(session, Session):
        session.debug = True


DEBUG_HELP = "Show the traceback of an error on stderr (exit codes stay the same); EVALKIT_DEBUG=1"

# ----------------------------------------------------------------------------- shared options

DEFAULT_CONFIG = Path("evalkit.yaml")

# Also accepted after the command (`evalkit gate … --debug`), where users type it.
DebugOpt = Annotated[
    bool, typer.Option("--debug", callback=enable_debug, hidden=True, help=DEBUG_HELP)
]
#: ``--cluster FIELD`` (compare, power): cases sharing the field move together (docs/clusters.md).
ClusterOpt = Annotated[
    str | None,
    typer.Option(
        "--cluster",
        metavar="FIELD",
        help="Cases sharing this golden field (e.g. metadata.doc_id) move together: infer "
        "by cluster, as the gate does with clusters: declared.",
    ),
]
ConfigOpt = Annotated[
    Path, typer.Option("--config", "-c", help="Path to evalkit.yaml.", show_default=True)
]
KeywordOpt = Annotated[
    list[str] | None,
    typer.Option(
        "-k",
        metavar="WORD",
        help="Only the cases whose id contains WORD (ignoring case); repeatable.",
    ),
]
CaseOpt = Annotated[
    list[str] | None,
    typer.Option("--case", metavar="ID", help="Only the case with this id; repeatable."),
]
ConcurrencyOpt = Annotated[
    int | None,
    typer.Option(min=1, max=MAX_CONCURRENCY, help="Cases in flight at once (overrides config)."),
]
JudgeCacheOnlyOpt = Annotated[
    bool,
    typer.Option(show_default=False, help="Grade only from the judge cache; a miss is an error."),
]
AllowFailedOpt = Annotated[
    bool,
    typer.Option(
        show_default=False, help="Write OUT even when cases failed (else: OUT's name + .failed)."
    ),
]
RunArg = Annotated[Path, typer.Argument(metavar="RUN", help="A run artefact (.json or .json.gz).")]

# ----------------------------------------------------------------------------- output


def discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


@contextmanager
def stdout_may_close() -> Iterator[None]:
    """Let the reader of stdout leave early (``| head -1``): the command still finishes."""
    try:
        yield
    except BrokenPipeError:
        discard_stdout()


def terminal_width() -> int | None:
    """The width a table printed to stdout must fit, or None where nothing wraps it.

    The gate's policy (rich's, in report/terminal.py): ``COLUMNS`` when set, else the
    terminal's width when stdout is one; a pipe or a CI log gets the unwrapped table, so
    its rows stay one line each for grep.
    """
    columns = os.environ.get("COLUMNS", "").strip()
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    if sys.stdout.isatty():
        import shutil

        return shutil.get_terminal_size().columns
    return None


def _wrap(line: str, width: int, indent: str = "") -> list[str]:
    """``line`` wrapped at spaces only: a word, number or id longer than the line stays whole."""
    return textwrap.wrap(
        line, width, subsequent_indent=indent, break_on_hyphens=False, break_long_words=False
    )


def say_prose(text: str) -> None:
    """A sentence to read on stdout, wrapped at spaces to :func:`terminal_width` (whole
    where nothing wraps it), so the terminal never breaks a word or a number."""
    width = terminal_width()
    if width is not None:
        text = "\n".join("\n".join(_wrap(line, width)) for line in text.split("\n"))
    say("\n".join(line.rstrip() for line in text.split("\n")))


_LABEL = re.compile(r"^(\s*(?:[^\s:]+(?: [^\s:]+)?:\s+|[-*•] )?)")


def say_lines(text: str) -> None:
    """Lines of a listing on stdout, each one longer than :func:`terminal_width` wrapped
    at spaces under its own label (``expected:  …`` continues under the text, not under
    ``expected``), an id longer than the line kept whole; no line ends in a space."""
    width = terminal_width()
    out: list[str] = []
    for line in text.split("\n"):
        line = line.rstrip()
        if width is None or len(line) <= width:
            out.append(line)
            continue
        label = _LABEL.match(line)
        hang = len(label.group(1)) if label is not None else 0
        out.extend(_wrap(line, width, " " * (hang if hang <= width // 2 else 4)))
    say("\n".join(out))


def say(text: str = "") -> None:
    """Print to stdout, control characters spelled out (a run name or path from a file
    cannot retitle the terminal); a reader that left early (``| head -1``) changes nothing
    else."""
    from evalkit._util.visible import visible

    with stdout_may_close():
        typer.echo(visible(text))


def warn_line(message: str) -> None:
    """A warning on stderr, ``⚠ …``, wrapped at spaces to the terminal's width (COLUMNS)."""
    width = terminal_width()
    text = f"⚠ {message}"
    if width is not None:
        text = "\n".join(_wrap(text, width, "  "))
    typer.echo(text, err=True)


def err(message: str) -> None:
    """``evalkit: message`` on stderr; control characters quoted from a target, judge or
    file are spelled out (:func:`evalkit._util.visible.visible`), never emitted."""
    _stderr(f"evalkit: {message}")


def _stderr(line: str) -> None:
    from evalkit._util.visible import visible

    typer.echo(visible(line), err=True)


def write_document(path: Path, text: str) -> None:
    """Write a report to ``path``, or to stdout when it is ``-`` (docs/stdout.md)."""
    from evalkit._util.stdout_path import is_stdout

    if not is_stdout(path):
        from evalkit._util.atomic import write_text_atomic

        write_text_atomic(path, text)
        return
    with stdout_may_close():
        sys.stdout.write(text)
        sys.stdout.flush()


def refuse_stdout_artefact(out: Path | None) -> None:
    """``--out -`` of a command that runs a target: refused, naming why OUT is a file."""
    from evalkit._util.stdout_path import refuse_stdout

    # A run with failed cases goes beside OUT, and its checkpoint is named after it.
    refuse_stdout("--out", out, "a run's artefact is a file that gate, promote and --resume read")


class Progress:
    """A progress bar on stderr when it is a terminal (a no-op otherwise), fed per row."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._task: Any = None

    def start(self, total: int, label: str) -> None:
        if not sys.stderr.isatty() or total < 2:
            return
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, TimeRemainingColumn
        from rich.progress import Progress as Bar

        self._bar = Bar(
            "[progress.description]{task.description}",
            BarColumn(),
            MofNCompleteColumn(),
            TimeRemainingColumn(),
            console=Console(stderr=True),
            transient=True,
        )
        self._task = self._bar.add_task(label, total=total)
        self._bar.start()

    def advance(self, _index: int, _row: Any) -> None:
        if self._bar is not None:
            self._bar.advance(self._task)

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def report_failed_cases(
    art: RunArtifact, requested: Path | None = None, written: Path | None = None
) -> None:
    """List the failed cases on stderr; say where the run went when it was set aside.

    When every case failed it is one line (the first error names the culprit).
    """
    failed = art.failed
    if not failed:
        return
    aside = ""
    if requested is not None and written is not None and written != requested:
        state = "is left as it was" if requested.exists() else "is not written"
        aside = (
            f"{requested} {state}: a run with failed cases goes to {written} instead "
            "(pass --allow-failed to write it anyway)"
        )
    if len(failed) == len(art.result):
        first = f"the first: {failed[0].case_id}: {failed[0].error}"
        err(f"all {len(failed)} case(s) failed; {first}{'; ' + aside if aside else ''}")
        return
    err(f"{len(failed)} of {len(art.result)} case(s) failed; the rest were kept:")
    for row in failed[:20]:
        _stderr(f"  {row.case_id}: {row.error}")
    if len(failed) > 20:
        _stderr(f"  … and {len(failed) - 20} more (see the artefact)")
    if aside:
        err(aside)


@contextmanager
def progress_bar() -> Iterator[Progress]:
    """A run's progress bar, gone before anything else is printed; an interrupted run
    then says what its checkpoint kept."""
    from evalkit._app.pipeline import RunInterrupted

    progress = Progress()
    try:
        yield progress
    except RunInterrupted as stop:
        progress.stop()
        raise typer.Exit(report_interrupt(stop)) from None
    finally:
        progress.stop()


# ----------------------------------------------------------------------------- interruptions

# Whether this invocation already said it was interrupted (one line, never two).
interrupt_reported = threading.Event()
# Set by a command that leaves nothing to tear down once its output is flushed (scoring a
# TREC file: no thread, no cache, no plugin, the artefact written): the console script
# then ends the process at once (evalkit.cli.session.process_main).
nothing_to_tear_down = threading.Event()


def report_interrupt(stop: KeyboardInterrupt) -> ExitCode:
    """One stderr line for a Ctrl-C or SIGTERM, and its exit code (130 or 143).

    A run that was stopped (``evalkit run``, or the gate running its target) says what its
    checkpoint kept and how to go on from there.
    """
    from evalkit._util.signals import terminated

    interrupt_reported.set()
    how = "terminated (SIGTERM)" if terminated() else "interrupted"
    # Only a run raises RunInterrupted, and a run has imported the pipeline: importing it
    # here (a second or so) would delay the line a cancelled job has seconds to print.
    pipeline: Any = sys.modules.get("evalkit._app.pipeline")
    if pipeline is None or not isinstance(stop, pipeline.RunInterrupted):
        err(how)
    elif (run := cast("RunInterrupted", stop)).saved:
        err(
            f"{how}: {run.saved} of {run.total} {run.unit} are saved in "
            f"{run.checkpoint}; rerun with --resume to run only the rest"
        )
    else:
        err(f"{how} before any case finished; nothing was saved")
    return ExitCode.TERMINATED if terminated() else ExitCode.INTERRUPTED
