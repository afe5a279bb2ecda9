"""Looking at finished runs: ``evalkit compare``, ``show``, ``export`` and ``power``."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from evalkit._util.limits import MAX_RESAMPLES
from evalkit.cli.common import (
    DEFAULT_CONFIG,
    ClusterOpt,
    ConfigOpt,
    DebugOpt,
    RunArg,
    say,
    say_lines,
    say_prose,
    stdout_may_close,
    terminal_width,
    write_document,
)


def compare(
    runs: Annotated[
        list[Path],
        typer.Argument(
            metavar="RUN",
            help="Run artefacts; the last is the reference unless --reference names one.",
        ),
    ],
    reference: Annotated[
        Path | None,
        typer.Option(
            "--reference", "-r", metavar="RUN", help="The run every other run is compared with."
        ),
    ] = None,
    correction: Annotated[
        str, typer.Option(metavar="holm|none", help="Across each metric's comparisons.")
    ] = "holm",
    fmt: Annotated[
        str,
        typer.Option(
            "--format", metavar="text|markdown|csv", help="markdown: for a PR; csv: for a paper."
        ),
    ] = "text",
    n_resamples: Annotated[
        int, typer.Option(min=1, max=MAX_RESAMPLES, help="Resamples of a resampling procedure.")
    ] = 10_000,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the resampling.")] = 42,
    alpha: Annotated[
        float,
        typer.Option(metavar="A", help="Significance level of each verdict; intervals are 1 - A."),
    ] = 0.05,
    html: Annotated[
        Path | None, typer.Option(help="Write an HTML report here (two runs only; '-': stdout).")
    ] = None,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            metavar="DIMENSION",
            help="Also compare slice by slice (declared slice dimensions, e.g. tags or "
            "tags,lang; two runs only).",
        ),
    ] = None,
    slice_metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            metavar="METRIC",
            help="With --by: a metric of the slice table (repeatable; default: all shared).",
        ),
    ] = None,
    cluster: ClusterOpt = None,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Paired table of every metric: runs against a reference run.

    compare A B is A against B (delta = A - B).  With more runs, each is compared with the
    reference on the cases every run shares, and each metric's p-values are Holm-adjusted
    across its comparisons (--correction none: not).  Each row says better, worse or no
    detectable change."""
    from evalkit._app.inspect_runs import compare_files

    done = compare_files(
        runs,
        reference,
        correction=correction,
        fmt=fmt,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
        html=html,
        by=by,
        slice_metrics=slice_metric or (),
        width=terminal_width(),
        cluster=cluster,
    )
    _print_compared(done.text, done.html, html)


def _print_compared(text: str, page: str | None, html: Path | None) -> None:
    """The table, and the page: with --html -, the page holds stdout and the table goes to
    stderr (docs/stdout.md)."""
    from evalkit._util.stdout_path import is_stdout

    with stdout_may_close():
        typer.echo(text, nl=not text.endswith("\n"), err=is_stdout(html))
    if html is not None and page is not None:
        write_document(html, page)


def show(
    artefact: RunArg,
    case: Annotated[
        str | None,
        typer.Option("--case", metavar="ID", help="Show this case: output, expected, metrics."),
    ] = None,
    goldens: Annotated[
        Path | None,
        typer.Option(help="With --case: the golden file (default: the config's goldens)."),
    ] = None,
    qrels: Annotated[
        Path | None, typer.Option(help="With --case: TREC qrels (for a scored TREC run).")
    ] = None,
    config: ConfigOpt = DEFAULT_CONFIG,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Summarise a run artefact: provenance, metrics, failed cases.

    With --case ID: that case's output against the expected answer or the
    relevant ids (read from --goldens, or the config's golden file), its
    metric values, latency and error.
    """
    from evalkit._app.show import show_run

    named = None if config == DEFAULT_CONFIG else config
    for text in show_run(artefact, case=case, goldens=goldens, qrels=qrels, config=named):
        say_lines(text)


def export(
    artefact: RunArg,
    csv: Annotated[
        Path, typer.Option("--csv", help="Write the per-case rows here as CSV ('-': stdout).")
    ],
    include_output: Annotated[
        bool,
        typer.Option(show_default=False, help="Add each case's output (ids or text) as a column."),
    ] = False,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Write a run's per-case rows as CSV: id, metrics, latency, error."""
    from evalkit._app.inspect_runs import export_csv
    from evalkit._util.stdout_path import is_stdout

    if is_stdout(csv):  # the Unix convention: the CSV itself is the output, nothing else
        with stdout_may_close():
            export_csv(artefact, sys.stdout, include_output=include_output)
            sys.stdout.flush()
        return
    art, path = export_csv(artefact, csv, include_output=include_output)
    say(f"wrote {path} ({len(art.result)} rows)")


def power(
    artefact: Annotated[
        Path, typer.Argument(metavar="RUN", help="A run artefact (the candidate).")
    ],
    baseline: Annotated[
        Path | None,
        typer.Argument(metavar="BASELINE", help="Baseline artefact: pairs cases for the real σ_d."),
    ] = None,
    metric: Annotated[str, typer.Option(help="Per-case metric to analyse.")] = "ndcg@10",
    effects: Annotated[
        str | None, typer.Option(help="Comma-separated true effects, e.g. 0.02,0.05,0.1.")
    ] = None,
    n: Annotated[int | None, typer.Option(min=2, help="Eval size to plan for.")] = None,
    alpha: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Two-sided significance level.")
    ] = 0.05,
    n_sim: Annotated[int, typer.Option(min=0, help="Simulated evals per effect.")] = 1000,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the simulations.")] = 42,
    cluster: ClusterOpt = None,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """How large a true change this eval detects, and how often.

    Both simulated (--n-sim evals per effect) and analytic (normal approximation).
    """
    from evalkit._app.inspect_runs import power_of_files

    table = power_of_files(
        artefact,
        baseline,
        metric=metric,
        effects=effects,
        n=n,
        alpha=alpha,
        n_sim=n_sim,
        seed=seed,
        cluster=cluster,
    )
    say_prose(
        f"{metric}: n = {table.n} cases, σ_d = {table.sd_diff:.4g} ({table.sd_source}), "
        f"alpha = {table.alpha:g}"
    )
    say_prose(f"smallest effect detected with {table.target_power:.0%} power: ±{table.mde:.4g}\n")
    header = f"{'true effect':>12}  {'detected':>9}  {'analytic':>9}"
    say(header)
    say("-" * len(header))
    for row in table.rows:
        simulated = "-" if row.simulated is None else f"{row.simulated:.0%}"
        say(f"{row.effect:>+12.4g}  {simulated:>9}  {row.analytic:>9.0%}")
    if table.n_sim:
        say_prose(
            f"\n(detected: {table.n_sim} simulated evals per effect, {table.method} at "
            f"alpha {table.alpha:g}; analytic: "
            + (
                "t with the clusters' df)"
                if table.method == "cluster-t"
                else "normal approximation)"
            )
        )
