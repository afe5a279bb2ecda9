"""The ``evalkit`` command line: a thin shell over :mod:`evalkit._app.pipeline`.

Exit codes are :class:`evalkit.exit_codes.ExitCode` (the one table, with what each
means: :data:`evalkit.exit_codes.MEANINGS`).  Errors are one line on stderr; ``--debug`` (or
``EVALKIT_DEBUG=1``) adds the traceback, never a different exit code.  A reader
that closes stdout early (``| head -1``) does not change the exit code.
Heavy modules are imported inside commands so ``evalkit --help`` stays fast.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
import typer.core

from evalkit._util.limits import MAX_CONCURRENCY, MAX_RESAMPLES, MAX_SIMULATED_CASES
from evalkit._util.paths import refuse_overwriting_inputs
from evalkit.exit_codes import ExitCode

if TYPE_CHECKING:
    # Typer vendors its own click: the types its commands are handed.
    from typer._click import Context as ClickContext
    from typer._click import HelpFormatter

    from evalkit._app.pipeline import Prepared
    from evalkit._spec.artifact import RunArtifact
    from evalkit._spec.trec import TrecScoring
    from evalkit.gate.model import GateReport
    from evalkit.gate.trend import DriftTrend
    from evalkit.metrics.batch import QuerySelection

app = typer.Typer(
    name="evalkit",
    help="Per-case evals with paired significance: run, compare, and gate changes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


class _Command(typer.core.TyperCommand):
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


@dataclass
class _Session:
    """Process-wide options, set by the root callback before any command runs."""

    debug: bool


def _debug_from_env() -> bool:
    return os.environ.get("EVALKIT_DEBUG", "") not in ("", "0")


def _print_version(value: bool) -> None:
    if value:
        from evalkit._version import __version__

        typer.echo(f"evalkit {__version__}")
        raise typer.Exit(ExitCode.OK)


def _enable_debug(ctx: typer.Context, value: bool) -> None:
    session = ctx.find_root().obj
    if value and isinstance(session, _Session):
        session.debug = True


DEBUG_HELP = "Show the traceback of an error on stderr (exit codes stay the same); EVALKIT_DEBUG=1"

# Also accepted after the command (`evalkit gate … --debug`), where users type it.
DebugOpt = Annotated[
    bool, typer.Option("--debug", callback=_enable_debug, hidden=True, help=DEBUG_HELP)
]


@app.callback()
def _root(
    debug: Annotated[
        bool, typer.Option("--debug", callback=_enable_debug, help=DEBUG_HELP + ".")
    ] = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the evalkit version and exit.",
        ),
    ] = False,
) -> None:
    """Per-case evals with paired significance: run, compare, and gate changes."""


def _discard_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass


def _say(text: str = "") -> None:
    """Print to stdout; a reader that left early (``| head -1``) changes nothing else."""
    with _stdout_may_close():
        typer.echo(text)


@contextmanager
def _stdout_may_close() -> Iterator[None]:
    """Let the reader of stdout leave early (``| head -1``): the command still finishes."""
    try:
        yield
    except BrokenPipeError:
        _discard_stdout()


def _err(message: str) -> None:
    typer.echo(f"evalkit: {message}", err=True)


def _progress(total: int, label: str) -> tuple[Any, Any]:
    """A progress bar on stderr when it is a terminal; a no-op otherwise."""
    if not sys.stderr.isatty() or total < 2:
        return None, None
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    progress = Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=True,
    )
    task = progress.add_task(label, total=total)
    return progress, task


def _print_terminal(report: GateReport) -> None:
    from evalkit.report.terminal import render_terminal

    render_terminal(report)


def _write_reports(
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

        _write_text(markdown, render_markdown(report, config_name=config_name))
    if json_path is not None:
        from evalkit.report.json_report import dumps

        _write_text(json_path, dumps(report))
    if html is not None:
        from evalkit.report.html import render_html

        drawn = trend() if trend is not None else None
        _write_text(html, render_html(report, trend=drawn))


def _write_text(path: Path, text: str) -> None:
    from evalkit._util.atomic import write_text_atomic

    write_text_atomic(path, text)


class _Progress:
    """A progress bar on stderr when it is a terminal (a no-op otherwise), fed per row."""

    def __init__(self) -> None:
        self._bar: Any = None
        self._task: Any = None

    def start(self, total: int, label: str) -> None:
        self._bar, self._task = _progress(total, label)
        if self._bar is not None:
            self._bar.start()

    def advance(self, _index: int, _row: Any) -> None:
        if self._bar is not None:
            self._bar.advance(self._task)

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _report_failed_cases(
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
        _err(f"all {len(failed)} case(s) failed; {first}{'; ' + aside if aside else ''}")
        return
    _err(f"{len(failed)} of {len(art.result)} case(s) failed; the rest were kept:")
    for row in failed[:20]:
        typer.echo(f"  {row.case_id}: {row.error}", err=True)
    if len(failed) > 20:
        typer.echo(f"  … and {len(failed) - 20} more (see the artefact)", err=True)
    if aside:
        _err(aside)


@app.command(cls=_Command)
def run(
    config: ConfigOpt = Path("evalkit.yaml"),
    out: Annotated[Path | None, typer.Option(help="Where to write the run artefact.")] = None,
    concurrency: Annotated[
        int | None,
        typer.Option(
            min=1, max=MAX_CONCURRENCY, help="Cases in flight at once (overrides config)."
        ),
    ] = None,
    rate_limit: Annotated[
        float | None,
        typer.Option(help="At most this many case starts per second (overrides config)."),
    ] = None,
    case_timeout: Annotated[
        float | None,
        typer.Option(help="Seconds after which an unfinished case fails (overrides config)."),
    ] = None,
    resume: Annotated[
        bool,
        typer.Option(
            show_default=False,
            help="Keep the cases an interrupted run finished; run only the rest.",
        ),
    ] = False,
    shard: Annotated[
        str | None,
        typer.Option(
            metavar="i/N",
            help="Run only shard i of N (from 1); combine the shards with `evalkit merge`.",
        ),
    ] = None,
    judge_cache_only: Annotated[
        bool,
        typer.Option(
            show_default=False, help="Grade only from the judge cache; a miss is an error."
        ),
    ] = False,
    allow_failed: Annotated[
        bool,
        typer.Option(
            show_default=False,
            help="Write OUT even when cases failed (else: OUT's name + .failed).",
        ),
    ] = False,
    trec_run: Annotated[
        Path | None,
        typer.Option(help="Score this TREC run file instead of running a target (no config)."),
    ] = None,
    qrels: Annotated[
        Path | None, typer.Option(help="TREC qrels for --trec-run (graded labels kept).")
    ] = None,
    metrics: Annotated[
        str | None,
        typer.Option(help="With --trec-run: comma-separated metrics, e.g. ndcg@10,map@100."),
    ] = None,
    relevance_level: Annotated[
        int, typer.Option(min=1, help="With --trec-run: lowest grade counted as relevant.")
    ] = 1,
    queries: Annotated[
        str | None,
        typer.Option(
            "--queries",
            metavar="both|qrels|run",
            show_default=False,
            help="With --trec-run, the queries scored: both (default, as trec_eval): ranked "
            "and judged; qrels (trec_eval -c): every judged one, an unranked one as an "
            "empty ranking (0); run: every ranked one, all must be judged.",
        ),
    ] = None,
    keyword: KeywordOpt = None,
    case: CaseOpt = None,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Run the target over the golden set and write a run artefact.

    Each finished case is saved at once in a checkpoint under .evalkit/checkpoints/;
    after an interruption or failed cases, --resume runs only the cases not yet done.
    A run with failed cases never replaces OUT: it is written beside it
    (base.json -> base.failed.json) unless --allow-failed.
    With --trec-run, score an existing TREC run file against --qrels instead.
    -k/--case run only some cases (default OUT: the config's output + .subset).
    """
    from evalkit._spec.case_filter import CaseFilter
    from evalkit.errors import ConfigError

    cases = CaseFilter.of(keyword, case)

    if trec_run is not None or qrels is not None:
        # Scoring a file runs no target: a target flag here would be silently ignored.
        for flag, given in (
            ("--config", config != Path("evalkit.yaml")),
            ("--concurrency", concurrency is not None),
            ("--rate-limit", rate_limit is not None),
            ("--case-timeout", case_timeout is not None),
            ("--resume", resume),
            ("--shard", shard is not None),
            ("--judge-cache-only", judge_cache_only),
            ("--allow-failed", allow_failed),
            ("-k/--case", cases is not None),
        ):
            if given:
                raise ConfigError(
                    f"{flag} applies to running a target; scoring a TREC run "
                    f"(--trec-run/--qrels) runs none: drop {flag}"
                )
        _score_trec(trec_run, qrels, metrics, out, relevance_level, queries or "both")
        return
    if metrics is not None:
        raise ConfigError("--metrics goes with --trec-run; a target run takes its from the config")
    if queries is not None:
        raise ConfigError(
            "--queries goes with --trec-run; a target run scores every case of its goldens"
        )
    if relevance_level != 1:
        raise ConfigError(
            "--relevance-level goes with --trec-run; a target run's metrics take their "
            "parameters from the config"
        )
    from evalkit._app.pipeline import (
        RunInterrupted,
        RunStart,
        config_inputs,
        run_output_path,
        run_to_artifact,
    )
    from evalkit._engine.shards import parse_shard

    spec = parse_shard(shard) if shard is not None else None
    prepared = _prepare_run(config, concurrency, rate_limit, case_timeout, judge_cache_only)
    out_flag = "--out" if out is not None else f"output ({prepared.config.path})"
    refuse_overwriting_inputs(
        {out_flag: run_output_path(prepared.config, out, spec, cases)},
        config_inputs(prepared.config),
    )
    progress = _Progress()

    def started(plan: RunStart) -> None:
        if plan.resumed:
            unit = "case(s)" if plan.trials == 1 else "trial(s)"
            again = f"; {plan.retried} failed {unit} run again" if plan.retried else ""
            done = (
                f"{plan.done} of {plan.total} case(s)"
                if plan.trials == 1
                else f"{plan.trials_done} of {plan.total * plan.trials} trial(s) "
                f"({plan.done} of {plan.total} case(s) complete)"
            )
            _err(f"resuming {plan.checkpoint}: {done} already done{again}")
        elif plan.resume_requested:
            _err(f"nothing to resume at {plan.checkpoint}; running every case")
        progress.start(plan.to_run, f"running {prepared.config.name}")

    try:
        outcome = run_to_artifact(
            prepared,
            out,
            shard=spec,
            resume=resume,
            allow_failed=allow_failed,
            on_start=started,
            on_row=progress.advance,
            cases=cases,
        )
    except RunInterrupted as stop:
        progress.stop()
        raise typer.Exit(_report_interrupt(stop)) from None
    finally:
        progress.stop()
    art = outcome.artifact
    where = f", shard {spec}" if spec is not None else ""
    if art.subset is not None:
        where = f" of {len(prepared.goldens)}, subset: {art.subset}"
    _say(f"wrote {outcome.path} ({len(art.result)} cases{where})")
    _report_failed_cases(art, outcome.requested, outcome.path)
    if not art.failed:
        return
    if len(art.failed) < len(art.result):
        _err(
            f"finished cases are kept in {outcome.checkpoint}; "
            "rerun with --resume to retry the rest"
        )
    raise typer.Exit(ExitCode.RUNTIME)


def _prepare_run(
    config: Path,
    concurrency: int | None,
    rate_limit: float | None,
    case_timeout: float | None,
    judge_cache_only: bool,
) -> Prepared:
    """Load the config with the command line's overrides, and prepare the eval."""
    import math

    from evalkit._app.pipeline import prepare
    from evalkit._spec.config import load_config
    from evalkit.errors import InputError

    for flag, value in (("--rate-limit", rate_limit), ("--case-timeout", case_timeout)):
        if value is not None and not (math.isfinite(value) and value > 0):
            raise InputError(f"{flag} must be a positive number, got {value:g}")
    cfg = load_config(config)
    overrides = {
        key: value
        for key, value in (
            ("concurrency", concurrency),
            ("rate_limit", rate_limit),
            ("case_timeout_s", case_timeout),
        )
        if value is not None
    }
    if overrides:
        cfg.model = cfg.model.model_copy(update=overrides)
    return prepare(cfg, cache_only=judge_cache_only)


def _score_trec(
    trec_run: Path | None,
    qrels: Path | None,
    metrics: str | None,
    out: Path | None,
    relevance_level: int,
    queries: str,
) -> None:
    """``evalkit run --trec-run RUN --qrels QRELS --metrics … --out FILE``."""
    from evalkit._app.pipeline import score_trec_to_artifact
    from evalkit._spec.artifact import write_artifact
    from evalkit._util.atomic import check_writable
    from evalkit._util.suggest import did_you_mean
    from evalkit.errors import ConfigError

    if queries not in QUERY_SELECTIONS:
        raise ConfigError(
            f"--queries must be both, qrels or run, got {queries!r}"
            f"{did_you_mean(queries, QUERY_SELECTIONS)}"
        )

    missing = [
        flag
        for flag, value in (("--trec-run", trec_run), ("--qrels", qrels), ("--metrics", metrics))
        if value is None
    ]
    if out is None:
        missing.append("--out")
    if missing:
        raise ConfigError(f"scoring a TREC run needs {', '.join(missing)}")
    assert trec_run is not None
    assert qrels is not None
    assert metrics is not None
    assert out is not None
    names = [m.strip() for m in metrics.split(",") if m.strip()]
    if not names:
        raise ConfigError("--metrics names no metric; e.g. --metrics ndcg@10,map@100")
    check_writable(out)
    art, scoring = score_trec_to_artifact(
        trec_run, qrels, names, relevance_level=relevance_level, queries=queries
    )
    path = write_artifact(art, out)
    _say(f"wrote {path} ({len(art.result)} queries scored from {trec_run})")
    for note in _trec_query_notes(scoring, trec_run.name):
        _err(f"note: {note}")


QUERY_SELECTIONS: tuple[QuerySelection, ...] = ("both", "qrels", "run")
# Query ids a note names before it only counts the rest.
SHOWN_QUERY_IDS = 10


def _trec_query_notes(scoring: TrecScoring, run_name: str) -> list[str]:
    """What scoring did with the queries the run and the qrels do not share.

    Said whichever --queries was chosen: a judged query that silently vanishes from the
    mean makes a system look better than trec_eval -c says it is.
    """

    def ids(items: tuple[str, ...]) -> str:
        shown = ", ".join(items[:SHOWN_QUERY_IDS])
        rest = len(items) - SHOWN_QUERY_IDS
        return shown + (f" (+{rest} more)" if rest > 0 else "")

    def count(n: int, what: str) -> str:
        return f"{n} {what} quer{'y' if n == 1 else 'ies'}"

    notes: list[str] = []
    unranked = scoring.unranked
    if unranked and scoring.queries == "qrels":
        notes.append(
            f"{count(len(unranked), 'judged')} with no ranking in {run_name} scored as an "
            f"empty ranking (0, as trec_eval -c): {ids(unranked)}"
        )
    elif unranked:
        notes.append(
            f"{count(len(unranked), 'judged')} with no ranking in {run_name} left out: "
            f"{ids(unranked)}; --queries qrels scores them as 0 (trec_eval -c)"
        )
    if scoring.unjudged:
        notes.append(
            f"{count(len(scoring.unjudged), 'ranked')} not in the qrels left out: "
            f"{ids(scoring.unjudged)}"
        )
    return notes


@app.command(cls=_Command)
def merge(
    shards: Annotated[
        list[Path],
        typer.Argument(
            metavar="SHARD", help="Every shard's artefact (from `evalkit run --shard i/N`)."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Where to write the merged run artefact.")],
    allow_failed: Annotated[
        bool,
        typer.Option(
            show_default=False,
            help="Write OUT even when cases failed (else: OUT's name + .failed).",
        ),
    ] = False,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Merge the artefacts of a sharded run into one run artefact.

    Refuses shards of different configs, golden sets, metric definitions or
    commits, a shard given twice or missing, and duplicate or missing cases.
    A merged run with failed cases is written beside OUT unless --allow-failed.
    """
    from evalkit._app.pipeline import write_run
    from evalkit._engine.shards import merge as merge_shards
    from evalkit._spec.artifact import read_artifact
    from evalkit._util.atomic import check_writable

    check_writable(out)
    refuse_overwriting_inputs({"--out": out}, {f"shard artefact {path}": path for path in shards})
    artefacts = [read_artifact(path) for path in shards]
    merged = merge_shards(artefacts, sources=[str(path) for path in shards])
    path = write_run(merged, out, allow_failed=allow_failed)
    _say(f"wrote {path} ({len(merged.result)} cases from {len(artefacts)} shards)")
    _report_failed_cases(merged, out, path)
    if merged.failed:
        raise typer.Exit(ExitCode.RUNTIME)


@app.command(cls=_Command)
def gate(
    config: ConfigOpt = Path("evalkit.yaml"),
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
    concurrency: Annotated[
        int | None, typer.Option(min=1, max=MAX_CONCURRENCY, help="Cases in flight at once.")
    ] = None,
    judge_cache_only: Annotated[
        bool,
        typer.Option(
            show_default=False, help="Grade only from the judge cache; a miss is an error."
        ),
    ] = False,
    keyword: KeywordOpt = None,
    case: CaseOpt = None,
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
    )
    progress = _Progress()
    try:
        done = gate_config(
            cfg,
            ask,
            on_start=lambda total: progress.start(total, f"running {cfg.name}"),
            on_row=progress.advance,
        )
    finally:
        progress.stop()
    report = done.report
    with _stdout_may_close():
        _print_terminal(report)
    _write_reports(report, cfg.name, markdown, json_out, html, lambda: done.trend(cfg))
    _report_failed_cases(done.candidate, done.run_out, done.written)
    raise typer.Exit(report.exit_code)


@app.command(cls=_Command)
def promote(
    run_file: Annotated[
        Path | None,
        typer.Argument(
            metavar="RUN", help="The run artefact to promote (default: the config's output)."
        ),
    ] = None,
    config: ConfigOpt = Path("evalkit.yaml"),
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Make a run the configured baseline file, like a snapshot update.

    The file is the config's baseline: {path: …}.  Refuses a run with failed
    cases, a shard, or a run of another config; the gate then compares every
    later candidate with this run.
    """
    from evalkit._app.pipeline import promote_run
    from evalkit._spec.config import load_config

    done = promote_run(load_config(config), run_file)
    art = done.artifact
    commit = (
        f"commit {art.git_commit[:7]}{' (dirty)' if art.git_dirty else ''}, "
        if (art.git_commit)
        else ""
    )
    _say(
        f"promoted {done.run} to the baseline {done.baseline} "
        f"({len(art.result)} cases, {commit}created {art.created_at})"
    )
    if done.replaced is not None and done.run.resolve() != done.baseline.resolve():
        old = done.replaced
        # "of commit …, created …" with a commit, plain "created …" without one
        of_commit = f" of commit {old.git_commit[:7]}," if old.git_commit else ""
        _say(f"it replaces the baseline{of_commit} created {old.created_at}")


@app.command(cls=_Command)
def history(
    config: ConfigOpt = Path("evalkit.yaml"),
    metric: Annotated[
        list[str] | None,
        typer.Option(
            "--metric",
            "-m",
            metavar="<metric>",
            help="Metric to trend (repeatable; default: the checked ones).",
        ),
    ] = None,
    candidate: Annotated[
        Path | None, typer.Option(help="A run artefact drawn as the trend's last point.")
    ] = None,
    limit: Annotated[int, typer.Option(min=0, help="Newest promotions shown (0: all).")] = 20,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write promotions and trends as JSON here.")
    ] = None,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """List the baseline's promotions and each checked metric's trend.

    Per metric and promotion: its value, and the change from the promotion
    before with its confidence interval.
    """
    from evalkit._app.promotions import (
        github_access_from_env,
        history_json,
        history_view,
        render_history,
    )
    from evalkit._spec.config import load_config

    view = history_view(
        load_config(config),
        metrics=metric,
        candidate=candidate,
        limit=limit,
        access=github_access_from_env(os.environ),
    )
    _say(render_history(view))
    if json_out is not None:
        _write_text(json_out, history_json(view))


@app.command(cls=_Command)
def pin(
    ref: Annotated[
        str,
        typer.Argument(
            metavar="REF",
            help="A tag or release (v1.2), a date (2026-11-30) or '3 promotions ago'.",
        ),
    ],
    config: ConfigOpt = Path("evalkit.yaml"),
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Pin a promotion as the drift checks' reference (until re-pinned)."""
    from evalkit._app.promotions import pin_reference
    from evalkit._spec.config import load_config

    done = pin_reference(load_config(config), ref)
    # done.detail starts "reference <path>:", which after "pinned the reference" said it twice
    _say(f"pinned the reference in {done.location}: {done.record.describe()}")


def _check_alpha(alpha: float) -> None:
    """Refuse a level outside (0, 1) before any run is read (NaN fails both comparisons)."""
    from evalkit.errors import InputError

    if not 0.0 < alpha < 1.0:
        raise InputError(f"--alpha must lie strictly between 0 and 1, got {alpha:g}")


@app.command(cls=_Command)
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
        Path | None, typer.Option(help="Write an HTML report here (two runs only).")
    ] = None,
    by: Annotated[
        str | None,
        typer.Option(
            "--by",
            metavar="DIMENSION",
            help="Also compare slice by slice (a declared slice dimension; two runs only).",
        ),
    ] = None,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Paired table of every metric: runs against a reference run.

    compare A B is A against B (delta = A - B).  With more runs, each is compared
    with the reference on the cases every run shares, and each metric's
    p-values are Holm-adjusted across its comparisons (--correction none: not).
    Each row says better, worse or no detectable change.
    """
    from evalkit._spec.artifact import read_artifact
    from evalkit._util.atomic import check_writable
    from evalkit.gate.compare import choose_reference, compare_runs
    from evalkit.report.compare_tables import check_format, render_compare_table

    check_format(fmt)
    _check_alpha(alpha)
    compared, ref = choose_reference(runs, reference, html=html)
    if by is not None and (len(compared) != 1 or fmt != "text"):
        from evalkit.errors import InputError

        raise InputError(
            "--by compares two runs in the text format: give one run and the reference, "
            "without --format"
        )
    check_writable(html)
    refuse_overwriting_inputs(
        {"--html": html},
        {f"reference run {ref}": ref, **{f"compared run {p}": p for p in compared}},
    )
    arts = [read_artifact(path) for path in compared]
    base = read_artifact(ref)
    table = compare_runs(
        arts, base, correction=correction, alpha=alpha, n_resamples=n_resamples, seed=seed
    )
    text = render_compare_table(table, fmt)
    if by is not None:  # the gate's per-slice family (gate/slices.py), on these two runs
        from evalkit.gate.compare import compare_slices
        from evalkit.report.slices import slice_text

        slices = compare_slices(arts[0], base, by, n_resamples=n_resamples, seed=seed)
        text = text.rstrip("\n") + "\n\n" + slice_text(slices)
    with _stdout_may_close():
        typer.echo(text, nl=not text.endswith("\n"))
    if html is not None:
        from evalkit.report.html import render_compare_html

        _write_text(html, render_compare_html(list(table.comparisons[0].rows), arts[0], base))


@app.command(cls=_Command)
def show(
    artefact: Annotated[
        Path, typer.Argument(metavar="RUN", help="A run artefact (.json or .json.gz).")
    ],
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
    config: ConfigOpt = Path("evalkit.yaml"),
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Summarise a run artefact: provenance, metrics, failed cases.

    With --case ID: that case's output against the expected answer or the
    relevant ids (read from --goldens, or the config's golden file), its
    metric values, latency and error.
    """
    from evalkit._app.show import find_row, lookup_golden, lookup_qrels, render_case, render_show
    from evalkit._model.formats import ARTIFACT_SCHEMA_VERSION as SCHEMA_VERSION
    from evalkit._spec.artifact import read_artifact

    if case is None:
        from evalkit.errors import InputError

        for flag, given in (
            ("--goldens", goldens is not None),
            ("--qrels", qrels is not None),
            ("--config", config != Path("evalkit.yaml")),
        ):
            if given:
                raise InputError(
                    f"{flag} goes with --case ID (it is where the expected answers are read)"
                )
    art = read_artifact(artefact)
    if case is None:
        version = art.read_schema_version
        how = (
            "current"
            if version == SCHEMA_VERSION
            else f"read through migration to {SCHEMA_VERSION}"
        )
        _say(f"{artefact}: artefact schema_version {version} ({how})")
        _say(render_show(art))
        return
    find_row(art, case)  # an unknown id fails before any golden file is read
    if qrels is not None and goldens is not None:
        from evalkit.errors import InputError

        raise InputError("give --goldens or --qrels, not both: one says what was expected")
    if qrels is not None:
        golden = lookup_qrels(case, qrels)
    else:
        golden = lookup_golden(
            case, goldens=goldens, config=config, config_given=config != Path("evalkit.yaml")
        )
    _say(render_case(art, case, golden))


@app.command(cls=_Command)
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
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """How large a true change this eval detects, and how often.

    Both simulated (--n-sim evals per effect) and analytic (normal approximation).
    """
    from evalkit._spec.artifact import read_artifact
    from evalkit.errors import ConfigError, InputError
    from evalkit.stats.significance import power_table

    chosen: list[float] | None = None
    if effects is not None:
        try:
            chosen = [float(x) for x in effects.split(",") if x.strip()]
        except ValueError:
            raise ConfigError(
                f"--effects must be numbers separated by commas, got {effects!r}"
            ) from None
    a = read_artifact(artefact)
    b = read_artifact(baseline) if baseline is not None else None
    size = n if n is not None else len(a.result)
    if size * n_sim > MAX_SIMULATED_CASES:
        raise ConfigError(
            f"--n-sim {n_sim} evals of {size} cases is {size * n_sim:,} simulated cases, more "
            f"than {MAX_SIMULATED_CASES:,}; lower --n-sim, or pass --n-sim 0 for the analytic "
            "figures only"
        )
    try:
        table = power_table(
            a.result,
            None if b is None else b.result,
            metric=metric,
            effects=chosen,
            n=n,
            alpha=alpha,
            n_sim=n_sim,
            seed=seed,
        )
    except InputError as exc:
        # The statistics name runs; two artefacts of one config share a run name.
        files = str(artefact) if baseline is None else f"{artefact} vs {baseline}"
        raise type(exc)(f"{files}: {exc}") from None
    _say(
        f"{metric}: n = {table.n} cases, σ_d = {table.sd_diff:.4g} ({table.sd_source}), "
        f"alpha = {table.alpha:g}"
    )
    _say(f"smallest effect detected with {table.target_power:.0%} power: ±{table.mde:.4g}\n")
    header = f"{'true effect':>12}  {'detected':>9}  {'analytic':>9}"
    _say(header)
    _say("-" * len(header))
    for row in table.rows:
        simulated = "-" if row.simulated is None else f"{row.simulated:.0%}"
        _say(f"{row.effect:>+12.4g}  {simulated:>9}  {row.analytic:>9.0%}")
    if table.n_sim:
        _say(
            f"\n(detected: {table.n_sim} simulated evals per effect, {table.method} at "
            f"alpha {table.alpha:g}; analytic: normal approximation)"
        )


@app.command(cls=_Command)
def export(
    artefact: Annotated[
        Path, typer.Argument(metavar="RUN", help="A run artefact (.json or .json.gz).")
    ],
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
    from evalkit._spec.artifact import read_artifact
    from evalkit._spec.export import write_csv
    from evalkit._util.atomic import check_writable

    if str(csv) == "-":  # the Unix convention: the CSV itself is the output, nothing else
        art = read_artifact(artefact)
        with _stdout_may_close():
            write_csv(art.result, sys.stdout, include_output=include_output)
            sys.stdout.flush()
        return
    check_writable(csv)
    refuse_overwriting_inputs({"--csv": csv}, {"artefact": artefact})
    art = read_artifact(artefact)
    path = write_csv(art.result, csv, include_output=include_output)
    _say(f"wrote {path} ({len(art.result)} rows)")


@app.command(cls=_Command)
def action(
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Entry point of the GitHub Action (reads INPUT_*, GITHUB_*)."""
    from evalkit.action.gate_runner import pipeline_gate
    from evalkit.action.run import run_action

    raise typer.Exit(run_action(os.environ, pipeline_gate))


@app.command(cls=_Command)
def comment(
    from_dir: Annotated[
        Path, typer.Option("--from", help="The report bundle a fork's gate run uploaded.")
    ],
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Post a fork PR's report as the sticky comment.

    The workflow_run companion of a gate run on a fork's pull request.
    """
    from evalkit.action.run import post_comment_from_dir

    raise typer.Exit(post_comment_from_dir(from_dir, os.environ))


def _usage_problem(exc: BaseException) -> str | None:
    """The one-line message of a click usage error, or None for anything else.

    Typer vendors its own copy of click, so match by shape rather than class.
    """
    if type(exc).__name__ == "Abort":
        return "interrupted"
    format_message = getattr(exc, "format_message", None)
    if not callable(format_message) or not hasattr(exc, "exit_code"):
        return None
    # click's "no arguments, so here is the help" error carries the whole help as its
    # message (plain help) or none (rich help): either way, one line says what is wrong.
    if type(exc).__name__ == "NoArgsIsHelpError":
        message = "no command given"
    else:
        message = " ".join(str(format_message()).split()) or "no command given"
    ctx = getattr(exc, "ctx", None)
    command_path = getattr(ctx, "command_path", None)
    if command_path:
        message += f" (see '{command_path} --help')"
    return message


def main(argv: list[str] | None = None) -> int:
    """The CLI in-process: maps evalkit errors to one stderr line and returns the exit code.

    ``--debug`` adds the traceback on stderr but never changes the exit code.  SIGINT and
    SIGTERM stop it promptly whichever thread receives them (:func:`evalkit._util.signals.guard`).
    """
    args = list(sys.argv[1:] if argv is None else argv)
    session = _Session(debug=_debug_from_env())
    from evalkit._util.signals import guard

    with guard():
        return _dispatch(args, session)


def process_main() -> None:
    """The ``evalkit`` command: :func:`main`, then the process ends with its exit code.

    After an interruption the process ends as soon as stdout and stderr are flushed
    (:func:`evalkit._util.signals.exit_now`): the checkpoint is on disk by then, and a cancelled
    job has only seconds before SIGKILL.
    """
    code = main()
    if code in (ExitCode.INTERRUPTED, ExitCode.TERMINATED):
        from evalkit._util.signals import exit_now

        exit_now(code)
    sys.exit(code)


def _dispatch(args: list[str], session: _Session) -> int:
    from evalkit._util.signals import terminated

    _show_run_warnings()
    _interrupt_reported.clear()
    try:
        code = app(args=args, prog_name="evalkit", standalone_mode=False, obj=session)
    except typer.Exit as exc:
        if exc.exit_code == ExitCode.INTERRUPTED and terminated():
            return ExitCode.TERMINATED
        return int(exc.exit_code)
    except KeyboardInterrupt as exc:
        return _report_interrupt(exc)
    except BrokenPipeError:
        # The reader (`| head -1`) stopped listening: not a failure of evalkit's.
        _discard_stdout()
        return ExitCode.OK
    except Exception as exc:
        if session.debug:
            traceback.print_exc()
        return _report_error(exc)
    # Typer answers a KeyboardInterrupt inside a command with a silent 130: say it here,
    # unless the command already did (a run says what its checkpoint kept).
    if code == ExitCode.INTERRUPTED and not _interrupt_reported.is_set():
        return _report_interrupt(KeyboardInterrupt())
    if code == ExitCode.INTERRUPTED and terminated():
        return ExitCode.TERMINATED
    return int(code) if isinstance(code, int) else ExitCode.OK


# Whether this invocation already said it was interrupted (one line, never two).
_interrupt_reported = threading.Event()


def _report_interrupt(stop: KeyboardInterrupt) -> ExitCode:
    """One stderr line for a Ctrl-C or SIGTERM, and its exit code (130 or 143).

    A run that was stopped (``evalkit run``, or the gate running its target) says what its
    checkpoint kept and how to go on from there.
    """
    from evalkit._app.pipeline import RunInterrupted
    from evalkit._util.signals import terminated

    _interrupt_reported.set()
    how = "terminated (SIGTERM)" if terminated() else "interrupted"
    if not isinstance(stop, RunInterrupted):
        _err(how)
    elif stop.saved:
        _err(
            f"{how}: {stop.saved} of {stop.total} {stop.unit} are saved in "
            f"{stop.checkpoint}; rerun with --resume to run only the rest"
        )
    else:
        _err(f"{how} before any case finished; nothing was saved")
    return ExitCode.TERMINATED if terminated() else ExitCode.INTERRUPTED


def _show_run_warnings() -> None:
    """A run's own warnings (client saturation, a judge's changed request field) as
    ``evalkit: warning: ...`` on stderr."""
    import warnings

    from evalkit.errors import EvalkitWarning

    default = warnings.showwarning

    def show(message: Warning | str, category: type[Warning], *args: Any, **kwargs: Any) -> None:
        if issubclass(category, EvalkitWarning):
            _err(f"warning: {message}")
        else:
            default(message, category, *args, **kwargs)

    warnings.showwarning = show


def _report_error(exc: Exception) -> ExitCode:
    """One stderr line for ``exc``, and the exit code it ends the process with."""
    from evalkit._util.signals import terminated
    from evalkit.errors import EvalkitError

    usage = _usage_problem(exc)
    if usage == "interrupted" and terminated():
        _err("terminated")
        return ExitCode.TERMINATED
    if usage is not None:
        _err(usage)
        return ExitCode.INTERRUPTED if usage == "interrupted" else ExitCode.INPUT
    message = " ".join(str(exc).split()) or type(exc).__name__
    if isinstance(exc, EvalkitError):
        _err(message)
        return exc.exit_code
    _err(f"internal error: {type(exc).__name__}: {message} (rerun with --debug for details)")
    return ExitCode.RUNTIME


if __name__ == "__main__":  # pragma: no cover
    process_main()
