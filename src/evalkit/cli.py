"""The ``evalkit`` command line: a thin shell over :mod:`evalkit.pipeline`.

Exit codes: 0 every blocking check passed; 1 a blocking check failed;
2 usage or input error (bad config, checks, goldens, artefact); 3 runtime
error (target unreachable, cases failed, GitHub API failure).  Errors are one
line on stderr; ``--debug`` (or ``EVALKIT_DEBUG=1``) shows the traceback.
Heavy modules are imported inside commands so ``evalkit --help`` stays fast.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from evalkit.artifact import RunArtifact
    from evalkit.gate import GateReport

app = typer.Typer(
    name="evalkit",
    help="Per-case evals with paired significance: run, compare, and gate changes.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

EXIT_OK, EXIT_FAIL, EXIT_INPUT, EXIT_RUNTIME = 0, 1, 2, 3

ConfigOpt = Annotated[
    Path, typer.Option("--config", "-c", help="Path to evalkit.yaml.", show_default=True)
]


def _debug() -> bool:
    return os.environ.get("EVALKIT_DEBUG", "") not in ("", "0")


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
) -> None:
    if markdown is not None:
        from evalkit.report.markdown import render_markdown

        _write_text(markdown, render_markdown(report, config_name=config_name))
    if json_path is not None:
        from evalkit.report.json_report import dumps

        _write_text(json_path, dumps(report))
    if html is not None:
        from evalkit.report.html import render_html

        _write_text(html, render_html(report))


def _write_text(path: Path, text: str) -> None:
    from evalkit.errors import ConfigError

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write report: {exc.strerror or exc}") from None


def _run_with_progress(prepared: Any, **kwargs: Any) -> Any:
    from evalkit.pipeline import run_candidate

    total = len(prepared.goldens) - len(kwargs.get("skip", ()))
    progress, task = _progress(total, f"running {prepared.config.name}")
    user_cb = kwargs.pop("on_row", None)

    def on_row(index: int, row: Any) -> None:
        if user_cb is not None:
            user_cb(index, row)
        if progress is not None:
            progress.advance(task)

    if progress is None:
        return run_candidate(prepared, on_row=on_row, **kwargs)
    with progress:
        return run_candidate(prepared, on_row=on_row, **kwargs)


def _report_failed_cases(art: RunArtifact) -> None:
    failed = art.failed
    if not failed:
        return
    if len(failed) == len(art.result):
        _err(f"all {len(failed)} case(s) failed; the first: {failed[0].case_id}: {failed[0].error}")
        return
    _err(f"{len(failed)} of {len(art.result)} case(s) failed; the rest were kept:")
    for row in failed[:20]:
        typer.echo(f"  {row.case_id}: {row.error}", err=True)
    if len(failed) > 20:
        typer.echo(f"  … and {len(failed) - 20} more (see the artefact)", err=True)


@app.command()
def run(
    config: ConfigOpt = Path("evalkit.yaml"),
    out: Annotated[Path | None, typer.Option(help="Where to write the run artefact.")] = None,
    concurrency: Annotated[
        int | None, typer.Option(min=1, help="Cases in flight at once (overrides config).")
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
        typer.Option(help="Keep the cases an interrupted run finished; run only the rest."),
    ] = False,
    shard: Annotated[
        str | None,
        typer.Option(
            metavar="i/N",
            help="Run only shard i of N (from 1); combine the shards with `evalkit merge`.",
        ),
    ] = None,
    judge_cache_only: Annotated[
        bool, typer.Option(help="Grade only from the judge cache; a miss is an error.")
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
) -> None:
    """Run the configured target over the golden set and write a run artefact.

    Each finished case is saved at once in OUT.checkpoint.jsonl; after an
    interruption or failed cases, --resume runs only the cases not yet done.
    With --trec-run, score an existing TREC run file against --qrels instead.
    """
    import math

    if trec_run is not None or qrels is not None:
        _score_trec(trec_run, qrels, metrics, out, relevance_level)
        return
    if metrics is not None:
        from evalkit.errors import ConfigError

        raise ConfigError("--metrics goes with --trec-run; a target run takes its from the config")

    from evalkit.artifact import write_artifact
    from evalkit.checkpoint import Checkpoint, checkpoint_path, read_checkpoint, run_identity
    from evalkit.config import load_config
    from evalkit.errors import InputError
    from evalkit.pipeline import Prepared, prepare, to_artifact
    from evalkit.results import CaseResult, RunResult
    from evalkit.shards import parse_shard, select_shard

    spec = parse_shard(shard) if shard is not None else None
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
    prepared = prepare(cfg, cache_only=judge_cache_only)
    todo = prepared
    out_path = out or cfg.output_path
    if spec is not None:
        todo = Prepared(cfg, select_shard(prepared.goldens, spec), prepared.checks)
        if out is None:  # shards of one matrix must not overwrite each other's artefact
            name = out_path.name
            ext = ".json.gz" if name.endswith(".json.gz") else out_path.suffix
            out_path = out_path.with_name(f"{name.removesuffix(ext)}.{spec.slug}{ext}")
    identity = run_identity(cfg.model, prepared.goldens, None if spec is None else str(spec))
    ckpt_path = checkpoint_path(out_path)
    total = len(todo.goldens)
    with Checkpoint.open(ckpt_path, identity, resume=resume) as ckpt:
        done = ckpt.completed
        if resume and ckpt.resumed:
            retried = len(ckpt.failed_before.keys() - done.keys())
            again = f"; {retried} failed case(s) run again" if retried else ""
            _err(f"resuming {ckpt_path}: {len(done)} of {total} case(s) already done{again}")
        elif resume:
            _err(f"nothing to resume at {ckpt_path}; running every case")
        try:
            fresh = _run_with_progress(
                todo, skip=list(done), on_row=lambda _index, row: ckpt.append(row)
            )
        except KeyboardInterrupt:
            # Count from the file: the signal may land between a row's write and its tally.
            saved = read_checkpoint(ckpt_path)
            kept = len(saved.completed) if saved is not None else 0
            if kept:
                _err(
                    f"interrupted: {kept} of {total} case(s) are saved in {ckpt_path}; "
                    "rerun with --resume to run only the rest"
                )
            else:
                _err("interrupted before any case finished; nothing was saved")
            raise typer.Exit(130) from None
        new_rows: dict[str, CaseResult] = {row.case_id: row for row in fresh.per_query}
        rows = [done[c.id] if c.id in done else new_rows[c.id] for c in todo.goldens]
        result = RunResult(fresh.name, rows)
        art = to_artifact(prepared, result, result.name)
        art.config_fingerprint = identity.config
        art.shard = identity.shard
        art.truncated_ids = frozenset(ckpt.truncated_ids)
        path = write_artifact(art, out_path)
        if not art.failed:
            ckpt.discard()
    where = f", shard {spec}" if spec is not None else ""
    typer.echo(f"wrote {path} ({len(result)} cases{where})")
    _report_failed_cases(art)
    if art.failed:
        if len(art.failed) < len(art.result):
            _err(f"finished cases are kept in {ckpt_path}; rerun with --resume to retry the rest")
        raise typer.Exit(EXIT_RUNTIME)


def _score_trec(
    trec_run: Path | None,
    qrels: Path | None,
    metrics: str | None,
    out: Path | None,
    relevance_level: int,
) -> None:
    """``evalkit run --trec-run RUN --qrels QRELS --metrics … --out FILE``."""
    from evalkit.artifact import build_artifact, write_artifact
    from evalkit.errors import ConfigError
    from evalkit.execute import resolve_metrics
    from evalkit.trec import score_trec_run

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
    case_defs, _ = resolve_metrics(names)
    result = score_trec_run(
        trec_run,
        qrels,
        [d.name for d in case_defs],
        relevance_level=relevance_level,
        name=trec_run.name,
    )
    art = build_artifact(
        result, names, target_name=trec_run.name, params={"relevance_level": relevance_level}
    )
    path = write_artifact(art, out)
    typer.echo(f"wrote {path} ({len(result)} queries scored from {trec_run})")


@app.command()
def merge(
    shards: Annotated[
        list[Path], typer.Argument(help="Every shard's artefact (from `evalkit run --shard i/N`).")
    ],
    out: Annotated[Path, typer.Option(help="Where to write the merged run artefact.")],
) -> None:
    """Merge the artefacts of a sharded run into one run artefact.

    Refuses shards of different configs, golden sets, metric definitions or
    commits, a shard given twice or missing, and duplicate or missing cases.
    """
    from evalkit.artifact import read_artifact, write_artifact
    from evalkit.shards import merge as merge_shards

    artefacts = [read_artifact(path) for path in shards]
    merged = merge_shards(artefacts, sources=[str(path) for path in shards])
    path = write_artifact(merged, out)
    typer.echo(f"wrote {path} ({len(merged.result)} cases from {len(artefacts)} shards)")
    _report_failed_cases(merged)
    if merged.failed:
        raise typer.Exit(EXIT_RUNTIME)


@app.command()
def gate(
    config: ConfigOpt = Path("evalkit.yaml"),
    candidate: Annotated[
        Path | None, typer.Option(help="Use this run artefact instead of running the target.")
    ] = None,
    baseline: Annotated[
        Path | None, typer.Option(help="Baseline artefact (default: the config's baseline).")
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
        bool, typer.Option(help="Fail vs_baseline checks when there is no baseline.")
    ] = False,
    concurrency: Annotated[int | None, typer.Option(min=1, help="Cases in flight at once.")] = None,
    judge_cache_only: Annotated[
        bool, typer.Option(help="Grade only from the judge cache; a miss is an error.")
    ] = False,
) -> None:
    """Run (or load) the candidate, compare it with the baseline, and decide every check."""
    from evalkit.artifact import read_artifact, write_artifact
    from evalkit.config import load_config
    from evalkit.pipeline import gate as run_gate
    from evalkit.pipeline import load_baseline, prepare, to_artifact

    cfg = load_config(config)
    if require_baseline:
        cfg.model = cfg.model.model_copy(update={"require_baseline": True})
    prepared = prepare(cfg, cache_only=judge_cache_only)
    if candidate is not None:
        cand = read_artifact(candidate)
    else:
        result = _run_with_progress(prepared, concurrency=concurrency)
        cand = to_artifact(prepared, result, result.name)
        write_artifact(cand, out or cfg.output_path)
    base = load_baseline(cfg, baseline)
    report = run_gate(prepared, cand, base)
    _print_terminal(report)
    _write_reports(report, cfg.name, markdown, json_out, html)
    _report_failed_cases(cand)
    raise typer.Exit(report.exit_code)


@app.command()
def compare(
    a: Annotated[Path, typer.Argument(help="Candidate run artefact.")],
    b: Annotated[Path, typer.Argument(help="Baseline run artefact.")],
    n_resamples: Annotated[int, typer.Option(min=1)] = 10_000,
    seed: int = 42,
    html: Annotated[Path | None, typer.Option(help="Write an HTML report here.")] = None,
) -> None:
    """Paired comparison of every metric two artefacts share (A minus B)."""
    from evalkit.artifact import read_artifact
    from evalkit.compare import compare_artifacts, render_compare_table

    cand, base = read_artifact(a), read_artifact(b)
    rows = compare_artifacts(cand, base, n_resamples=n_resamples, seed=seed)
    typer.echo(render_compare_table(rows, cand.name, base.name))
    if html is not None:
        from evalkit.report.html import render_compare_html

        _write_text(html, render_compare_html(rows, cand, base))


@app.command()
def show(
    artefact: Annotated[Path, typer.Argument(help="A run artefact (.json or .json.gz).")],
) -> None:
    """Summarise a run artefact: provenance, metric values, failed cases."""
    from evalkit.artifact import read_artifact
    from evalkit.compare import render_show

    typer.echo(render_show(read_artifact(artefact)))


@app.command()
def power(
    artefact: Annotated[Path, typer.Argument(help="A run artefact (the candidate).")],
    baseline: Annotated[
        Path | None, typer.Argument(help="Baseline artefact: pairs cases for the real σ_d.")
    ] = None,
    metric: Annotated[str, typer.Option(help="Per-case metric to analyse.")] = "ndcg@10",
    effects: Annotated[
        str | None, typer.Option(help="Comma-separated true effects, e.g. 0.02,0.05,0.1.")
    ] = None,
    n: Annotated[int | None, typer.Option(min=2, help="Eval size to plan for.")] = None,
    alpha: Annotated[float, typer.Option(min=0.0, max=1.0)] = 0.05,
    n_sim: Annotated[int, typer.Option(min=0, help="Simulated evals per effect.")] = 1000,
    seed: int = 42,
) -> None:
    """How large a true change this eval detects, and how often (simulated and analytic)."""
    from evalkit.artifact import read_artifact
    from evalkit.errors import ConfigError
    from evalkit.significance import power_table

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
    typer.echo(
        f"{metric}: n = {table.n} cases, σ_d = {table.sd_diff:.4g} ({table.sd_source}), "
        f"alpha = {table.alpha:g}"
    )
    typer.echo(f"smallest effect detected with {table.target_power:.0%} power: ±{table.mde:.4g}\n")
    header = f"{'true effect':>12}  {'detected':>9}  {'analytic':>9}"
    typer.echo(header)
    typer.echo("-" * len(header))
    for row in table.rows:
        simulated = "-" if row.simulated is None else f"{row.simulated:.0%}"
        typer.echo(f"{row.effect:>+12.4g}  {simulated:>9}  {row.analytic:>9.0%}")
    if table.n_sim:
        typer.echo(
            f"\n(detected: {table.n_sim} simulated evals per effect, {table.method} at "
            f"alpha {table.alpha:g}; analytic: normal approximation)"
        )


@app.command()
def export(
    artefact: Annotated[Path, typer.Argument(help="A run artefact (.json or .json.gz).")],
    csv: Annotated[Path, typer.Option("--csv", help="Write the per-case rows here as CSV.")],
    include_output: Annotated[
        bool, typer.Option(help="Add each case's output (ids or text) as a column.")
    ] = False,
) -> None:
    """Export a run's per-case rows (id, every metric, latency, error) as CSV."""
    from evalkit.artifact import read_artifact
    from evalkit.export import write_csv

    art = read_artifact(artefact)
    path = write_csv(art.result, csv, include_output=include_output)
    typer.echo(f"wrote {path} ({len(art.result)} rows)")


@app.command()
def action() -> None:
    """Entry point of the GitHub Action (reads INPUT_* and GITHUB_* from the environment)."""
    from evalkit.github.action import run_action
    from evalkit.github.gate_adapter import pipeline_gate

    raise typer.Exit(run_action(os.environ, pipeline_gate))


@app.command()
def comment(
    from_dir: Annotated[
        Path, typer.Option("--from", help="The report bundle a fork's gate run uploaded.")
    ],
) -> None:
    """Post a fork PR's report as the sticky comment (the workflow_run companion)."""
    from evalkit.github.action import post_comment_from_dir

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
    message = " ".join(str(format_message()).split())
    ctx = getattr(exc, "ctx", None)
    command_path = getattr(ctx, "command_path", None)
    if command_path:
        message += f" (see '{command_path} --help')"
    return message


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point: maps evalkit errors to one stderr line and an exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = _debug()
    if "--debug" in args:
        args.remove("--debug")
        debug = True
    try:
        code = app(args=args, prog_name="evalkit", standalone_mode=False)
    except typer.Exit as exc:
        return int(exc.exit_code)
    except KeyboardInterrupt:
        _err("interrupted")
        return 130
    except Exception as exc:
        if debug:
            raise
        from evalkit.errors import InputError, RuntimeFailure

        usage = _usage_problem(exc)
        if usage is not None:
            _err(usage)
            return 130 if usage == "interrupted" else EXIT_INPUT
        message = " ".join(str(exc).split()) or type(exc).__name__
        if isinstance(exc, InputError):
            _err(message)
            return EXIT_INPUT
        if isinstance(exc, RuntimeFailure):
            _err(message)
            return EXIT_RUNTIME
        _err(f"internal error: {type(exc).__name__}: {message} (rerun with --debug for details)")
        return EXIT_RUNTIME
    return code if isinstance(code, int) else EXIT_OK


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
