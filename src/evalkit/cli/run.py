"""``evalkit run`` and ``evalkit merge``: a config's run to an artefact, shards to one run.

``evalkit run --trec-run RUN --qrels QRELS ...`` is the older spelling of
``evalkit score`` (:mod:`evalkit.cli.trec`): still accepted, with the same output
and exit codes, and hidden from ``run --help``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalkit.cli.common import (
    DEFAULT_CONFIG,
    AllowFailedOpt,
    CaseOpt,
    ConcurrencyOpt,
    ConfigOpt,
    DebugOpt,
    JudgeCacheOnlyOpt,
    KeywordOpt,
    err,
    progress_bar,
    refuse_stdout_artefact,
    report_failed_cases,
    say,
)
from evalkit.exit_codes import ExitCode

if TYPE_CHECKING:
    from evalkit._app.pipeline import RunStart
    from evalkit._app.runs import RunAsk, RunDone
    from evalkit._spec.case_filter import CaseFilter

# The older TREC spelling on `run`: accepted, not advertised (`evalkit score`).
_TrecRunOpt = Annotated[Path | None, typer.Option(hidden=True, help="See evalkit score.")]
_QrelsOpt = Annotated[Path | None, typer.Option(hidden=True, help="See evalkit score.")]
_MetricsOpt = Annotated[str | None, typer.Option(hidden=True, help="See evalkit score.")]
_LevelOpt = Annotated[int, typer.Option(min=1, hidden=True, help="See evalkit score.")]
_QueriesOpt = Annotated[
    str | None, typer.Option("--queries", hidden=True, help="See evalkit score.")
]


def run(
    config: ConfigOpt = DEFAULT_CONFIG,
    out: Annotated[Path | None, typer.Option(help="Where to write the run artefact.")] = None,
    concurrency: ConcurrencyOpt = None,
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
    judge_cache_only: JudgeCacheOnlyOpt = False,
    allow_failed: AllowFailedOpt = False,
    trec_run: _TrecRunOpt = None,
    qrels: _QrelsOpt = None,
    metrics: _MetricsOpt = None,
    relevance_level: _LevelOpt = 1,
    queries: _QueriesOpt = None,
    keyword: KeywordOpt = None,
    case: CaseOpt = None,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Run the target over the golden set and write a run artefact.

    Each finished case is saved at once in a checkpoint under .evalkit/checkpoints/;
    after an interruption or failed cases, --resume runs only the cases not yet done.
    A run with failed cases never replaces OUT: it is written beside it
    (base.json -> base.failed.json) unless --allow-failed.
    -k/--case run only some cases (default OUT: the config's output + .subset).
    To score an existing TREC run file: evalkit score.
    """
    from evalkit._app.runs import RunAsk

    if trec_run is None and qrels is None:
        refuse_stdout_artefact(out)
    cases: CaseFilter | None = None
    if keyword or case:  # else no filter, and no loading its module (a TREC run needs none)
        from evalkit._spec.case_filter import CaseFilter

        cases = CaseFilter.of(keyword, case)
    ask = RunAsk(
        config=config,
        out=out,
        concurrency=concurrency,
        rate_limit=rate_limit,
        case_timeout=case_timeout,
        resume=resume,
        shard=shard,
        cache_only=judge_cache_only,
        allow_failed=allow_failed,
        cases=cases,
    )
    if trec_run is not None or qrels is not None:
        from evalkit.cli.trec import score_trec_from_run

        score_trec_from_run(ask, trec_run, qrels, metrics, relevance_level, queries)
        return
    _refuse_trec_flags(metrics, queries, relevance_level)
    _run_and_report(ask)


def _refuse_trec_flags(metrics: str | None, queries: str | None, relevance_level: int) -> None:
    from evalkit.errors import ConfigError

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


def _run_and_report(ask: RunAsk) -> None:
    from evalkit._app.runs import run_config

    with progress_bar() as progress:

        def started(plan: RunStart, name: str) -> None:
            _say_resumed(plan)
            progress.start(plan.to_run, f"running {name}")

        done = run_config(ask, on_start=started, on_row=progress.advance)
    _report_run(done)


def _say_resumed(plan: RunStart) -> None:
    if plan.resumed:
        unit = "case(s)" if plan.trials == 1 else "trial(s)"
        again = f"; {plan.retried} failed {unit} run again" if plan.retried else ""
        done = (
            f"{plan.done} of {plan.total} case(s)"
            if plan.trials == 1
            else f"{plan.trials_done} of {plan.total * plan.trials} trial(s) "
            f"({plan.done} of {plan.total} case(s) complete)"
        )
        err(f"resuming {plan.checkpoint}: {done} already done{again}")
    elif plan.resume_requested:
        err(f"nothing to resume at {plan.checkpoint}; running every case")


def _report_run(done: RunDone) -> None:
    outcome = done.outcome
    art = outcome.artifact
    where = f", shard {outcome.shard}" if outcome.shard is not None else ""
    if art.subset is not None:
        where = f" of {done.golden_cases}, subset: {art.subset}"
    say(f"wrote {outcome.path} ({len(art.result)} cases{where})")
    report_failed_cases(art, outcome.requested, outcome.path)
    if not art.failed:
        return
    if len(art.failed) < len(art.result):
        err(
            f"finished cases are kept in {outcome.checkpoint}; "
            "rerun with --resume to retry the rest"
        )
    raise typer.Exit(ExitCode.RUNTIME)


def merge(
    shards: Annotated[
        list[Path],
        typer.Argument(
            metavar="SHARD", help="Every shard's artefact (from `evalkit run --shard i/N`)."
        ),
    ],
    out: Annotated[Path, typer.Option(help="Where to write the merged run artefact.")],
    allow_failed: AllowFailedOpt = False,
    debug: DebugOpt = False,  # noqa: ARG001 (handled by its callback)
) -> None:
    """Merge the artefacts of a sharded run into one run artefact.

    Refuses shards of different configs, golden sets, metric definitions or
    commits, a shard given twice or missing, and duplicate or missing cases.
    A merged run with failed cases is written beside OUT unless --allow-failed.
    """
    from evalkit._app.runs import merge_shard_files

    refuse_stdout_artefact(out)
    merged, path = merge_shard_files(shards, out, allow_failed=allow_failed)
    say(f"wrote {path} ({len(merged.result)} cases from {len(shards)} shards)")
    report_failed_cases(merged, out, path)
    if merged.failed:
        raise typer.Exit(ExitCode.RUNTIME)
