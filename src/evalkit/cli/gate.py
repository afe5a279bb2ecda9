"""``evalkit gate``: decide every check, print the verdict, write the reports asked for."""

from __future__ import annotations

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
    Progress,
    report_failed_cases,
    stdout_may_close,
    warn_line,
    write_text,
)

if TYPE_CHECKING:
    from evalkit._spec.artifact import RunArtifact
    from evalkit._spec.checks import CheckSpec
    from evalkit.gate.model import GateReport
    from evalkit.gate.trend import DriftTrend


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
    markdown: Annotated[Path | None, typer.Option(help="Write the markdown report here.")] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the JSON report here.")
    ] = None,
    html: Annotated[Path | None, typer.Option(help="Write the HTML report here.")] = None,
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
    stop_early: Annotated[
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
    ] = None,
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
        reports={"--markdown": markdown, "--json": json_out, "--html": html},
        stop_early=stop_early,
    )
    progress = Progress()
    try:
        done = gate_config(
            cfg,
            ask,
            on_start=lambda total: progress.start(total, f"running {cfg.name}"),
            on_row=progress.advance,
            on_checks=say_margins,
        )
    finally:
        progress.stop()
    report = done.report
    with stdout_may_close():
        from evalkit.report.terminal import render_terminal

        render_terminal(report)
    write_reports(report, cfg.name, markdown, json_out, html, done.trend)
    report_failed_cases(done.candidate, done.run_out, done.written)
    raise typer.Exit(report.exit_code)


def say_margins(specs: Sequence[CheckSpec], baseline: RunArtifact) -> None:
    """Before the run, on stderr: each non-inferiority margin the eval cannot resolve at
    its size, with the rate it costs and the fix (report/advice.py)."""
    from evalkit.report.advice import before_run_line, margins_before_run

    for advice in margins_before_run(specs, baseline):
        warn_line(before_run_line(advice))


def write_reports(
    report: GateReport,
    config_name: str,
    markdown: Path | None,
    json_path: Path | None,
    html: Path | None,
    trend: Callable[[], DriftTrend] | None = None,
) -> None:
    """``trend``: the drift trend for the HTML page, computed only when one is written."""
    if markdown is not None:
        from evalkit.report.markdown import render_markdown

        write_text(markdown, render_markdown(report, config_name=config_name))
    if json_path is not None:
        from evalkit.report.json_report import dumps

        write_text(json_path, dumps(report))
    if html is not None:
        from evalkit.report.html import render_html

        drawn = trend() if trend is not None else None
        write_text(html, render_html(report, trend=drawn))
