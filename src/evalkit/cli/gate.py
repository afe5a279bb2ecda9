"""``evalkit gate``: decide every check, print the verdict, write the reports asked for."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalkit.cli.common import (
    DEFAULT_CONFIG,
    CaseOpt,
    ConcurrencyOpt,
    ConfigOpt,
    DebugOpt,
    JudgeCacheOnlyOpt,
    KeywordOpt,
    progress_bar,
    refuse_stdout_artefact,
    report_failed_cases,
    stdout_may_close,
    warn_line,
    write_document,
)

if TYPE_CHECKING:
    from evalkit._spec.artifact import RunArtifact
    from evalkit._spec.checks import CheckSpec
    from evalkit.gate.model import GateReport
    from evalkit.gate.trend import DriftTrend


MarkdownOpt = Annotated[
    Path | None, typer.Option(help="Write the markdown report here ('-': stdout).")
]
JsonOpt = Annotated[
    Path | None, typer.Option("--json", help="Write the JSON report here ('-': stdout).")
]
HtmlOpt = Annotated[Path | None, typer.Option(help="Write the HTML report here ('-': stdout).")]
JunitOpt = Annotated[
    Path | None,
    typer.Option(help="Write the checks as JUnit XML here ('-': stdout); docs/junit.md."),
]


StopEarlyOpt = Annotated[
    bool | None,
    typer.Option(
        "--stop-early/--no-stop-early",
        show_default=False,
        help=(
            "Run the cases in a seeded random order in batches and stop once every "
            "blocking check is settled (default: on when evalkit.yaml has stop_early:); "
            "docs/early-stopping.md."
        ),
    ),
]
ResumeOpt = Annotated[
    bool,
    typer.Option(
        show_default=False,
        help="stop_early: keep the cases an interrupted gate finished; go on in its order.",
    ),
]


def gate(
    config: ConfigOpt = DEFAULT_CONFIG,
    candidate: Annotated[
        Path | None, typer.Option(help="Use this run artefact instead of running the target.")
    ] = None,
    baseline: Annotated[
        Path | None, typer.Option(help="Baseline artefact (default: the config's baseline).")
    ] = None,
    reference: Annotated[
        Path | None,
        typer.Option(help="Reference artefact for drift (vs_reference) checks; docs/drift.md."),
    ] = None,
    markdown: MarkdownOpt = None,
    json_out: JsonOpt = None,
    html: HtmlOpt = None,
    junit: JunitOpt = None,
    out: Annotated[
        Path | None, typer.Option(help="Where to write the candidate's run artefact.")
    ] = None,
    require_baseline: Annotated[
        bool,
        typer.Option(show_default=False, help="Fail vs_baseline checks when there is no baseline."),
    ] = False,
    require_reference: Annotated[
        bool,
        typer.Option(show_default=False, help="Block on drift checks when there is no reference."),
    ] = False,
    concurrency: ConcurrencyOpt = None,
    judge_cache_only: JudgeCacheOnlyOpt = False,
    keyword: KeywordOpt = None,
    case: CaseOpt = None,
    stop_early: StopEarlyOpt = None,
    resume: ResumeOpt = False,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Decide every check: the candidate against the baseline.

    The candidate is run from the config, or read from --candidate. -k/--case decide
    on some cases only: the verdict is then "incomplete" (exit 4) unless a blocking
    check failed (exit 1), never a pass of the whole golden set.
    """
    from evalkit._app.pipeline import GateAsk, gate_config
    from evalkit._spec.case_filter import CaseFilter
    from evalkit._spec.config import load_config
    from evalkit._util.stdout_path import stdout_flag

    reports = {"--markdown": markdown, "--json": json_out, "--html": html, "--junit": junit}
    to_stdout = stdout_flag(reports)
    refuse_stdout_artefact(out)
    cfg = load_config(config)
    ask = GateAsk(
        candidate=candidate,
        baseline=baseline,
        reference=reference,
        out=out,
        concurrency=concurrency,
        cache_only=judge_cache_only,
        cases=CaseFilter.of(keyword, case),
        require_baseline=require_baseline,
        require_reference=require_reference,
        reports=reports,
        stop_early=stop_early,
        resume=resume,
    )
    with progress_bar() as progress:
        done = gate_config(
            cfg,
            ask,
            on_start=lambda total: progress.start(total, f"running {cfg.name}"),
            on_row=progress.advance,
            on_checks=say_margins,
        )
    report = done.report
    print_verdict(report, to_stderr=to_stdout is not None)
    write_reports(report, cfg.name, markdown, json_out, html, done.trend, junit)
    report_failed_cases(done.candidate, done.run_out, done.written)
    raise typer.Exit(report.exit_code)


def say_margins(specs: Sequence[CheckSpec], baseline: RunArtifact) -> None:
    """Before the run, on stderr: each non-inferiority margin the eval cannot resolve at
    its size, with the rate it costs and the fix (report/advice.py)."""
    from evalkit.report.advice import before_run_line, margins_before_run

    for advice in margins_before_run(specs, baseline):
        warn_line(before_run_line(advice))


def print_verdict(report: GateReport, *, to_stderr: bool) -> None:
    """The terminal report: on stdout, or on stderr when ``-`` gave stdout to a document
    (the CI log still shows the verdict; stdout holds only the document)."""
    from evalkit.report.terminal import render_terminal

    if not to_stderr:
        with stdout_may_close():
            render_terminal(report)
        return
    from rich.console import Console

    from evalkit.report.terminal import CAPTURE_WIDTH

    console = Console(stderr=True, highlight=False, emoji=False)
    if not console.is_terminal and "COLUMNS" not in os.environ:
        console.width = CAPTURE_WIDTH  # as on stdout: a CI log keeps each row on one line
    render_terminal(report, console=console)


def write_reports(
    report: GateReport,
    config_name: str,
    markdown: Path | None,
    json_path: Path | None,
    html: Path | None,
    trend: Callable[[], DriftTrend] | None = None,
    junit: Path | None = None,
) -> None:
    """``trend``: the drift trend for the HTML page, computed only when one is written."""
    if junit is not None:
        from evalkit.report.junit import render_junit

        write_document(junit, render_junit(report, config_name=config_name))
    if markdown is not None:
        from evalkit.report.markdown import render_markdown

        write_document(markdown, render_markdown(report, config_name=config_name))
    if json_path is not None:
        from evalkit.report.json_report import dumps

        write_document(json_path, dumps(report))
    if html is not None:
        from evalkit.report.html import render_html

        drawn = trend() if trend is not None else None
        write_document(html, render_html(report, trend=drawn))
