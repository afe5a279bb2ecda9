"""The real gate behind the Action: config -> candidate run -> gate -> report files."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from evalkit._app.early_stop import settings_in_force
from evalkit._app.isolated_target import isolated_target
from evalkit._app.pipeline import GateAsk, prepare, run_and_decide
from evalkit._app.reference_lookup import reference_from_fetch, report_trends
from evalkit._app.store_opening import open_config_store
from evalkit._spec.artifact import RunArtifact, read_artifact
from evalkit._spec.config import LoadedConfig
from evalkit.action.contract import FailingCheck, GateOutcome, GateRequest
from evalkit.gate.inputs import refuse_other_config
from evalkit.gate.model import GateReport
from evalkit.gate.reference import Reference
from evalkit.report.html import render_html
from evalkit.report.json_report import dumps
from evalkit.report.markdown import render_markdown


def pipeline_gate(request: GateRequest) -> GateOutcome:
    """Run the configured candidate and gate it against the baseline the action fetched."""
    cfg = request.config
    baseline = read_artifact(request.baseline_path) if request.baseline_path else None
    if baseline is not None:
        # Before running the target: another config's baseline is refused, not compared.
        refuse_other_config(baseline, cfg.name, request.baseline_detail or "baseline")
    # The store's pinned reference, when a drift check asked for one
    # (evalkit._app.reference_lookup).
    fetched = request.reference
    reference = None if fetched is None else reference_from_fetch(fetched, cfg.name)
    out = request.output_dir
    out.mkdir(parents=True, exist_ok=True)
    run_out = out / f"candidate-{request.config_name}.json"
    report, candidate_path = _run_and_decide(request, cfg, baseline, reference, run_out)
    markdown = render_markdown(
        report,
        config_name=request.config_name,
        details_url=request.details_url,
        baseline_detail=request.baseline_detail,
    )
    md_path = out / f"report-{request.config_name}.md"
    json_path = out / f"report-{request.config_name}.json"
    md_path.write_text(markdown, encoding="utf-8")
    json_path.write_text(dumps(report), encoding="utf-8")
    # The drift trend reads the promotions through the Action's own store (GitHub access);
    # only when a drift check ran (report_trends returns nothing otherwise: no fetch).
    store = request.store or open_config_store(cfg)  # None: a test's request, no GitHub
    trend = report_trends(
        cfg, report, Path(candidate_path), reference, store=store, work=out / "history-in"
    )
    html_path = out / f"report-{request.config_name}.html"
    html_path.write_text(render_html(report, trend=trend), encoding="utf-8")
    failing = [
        FailingCheck(v.check_id, v.message)
        for v in report.verdicts
        if v.status in ("fail", "error", "incomparable")
    ]
    return GateOutcome(
        exit_code=report.exit_code,
        verdict=report.verdict,
        blocking_failures=len(report.blocking_failures),
        markdown=markdown,
        failing_checks=failing,
        candidate_path=Path(candidate_path),
        report_paths={"markdown": md_path, "json": json_path, "html": html_path},
        checks_path=cfg.resolve(cfg.model.checks),
    )


def _run_and_decide(
    request: GateRequest,
    cfg: LoadedConfig,
    baseline: RunArtifact | None,
    reference: Reference | None,
    run_out: Path,
) -> tuple[GateReport, Path]:
    """`evalkit gate`'s run and decision (evalkit._app.pipeline.run_and_decide), with the
    Action's isolated target; a promotion never stops early."""
    ask = GateAsk(stop_early=None if request.stop_early else False)
    stopping = settings_in_force(cfg, ask)
    target = None
    if request.isolate_target and cfg.model.target.python is not None:
        # An http target is out of this process already. Plugins would be imported
        # here, with the token: isolated_target refuses them before anything runs.
        target = isolated_target(cfg)
    try:
        prepared = prepare(cfg)
        if stopping is not None:
            _drop_stale_checkpoint(run_out, prepared.config.root, request.log)
        report, _, written = run_and_decide(
            prepared,
            ask,
            baseline,
            stopping,
            run_out,
            notes=(request.baseline_detail,),
            reference=reference,
            target=target,
            allow_failed=True,
        )
    finally:
        if target is not None:
            target.close()
    assert written is not None  # the Action always runs its candidate (no --candidate)
    return report, written


def _drop_stale_checkpoint(run_out: Path, root: Path, log: Callable[[str], None] | None) -> None:
    """A job never resumes another's run: a checkpoint left in a workspace the runner did
    not clean (self-hosted) is an earlier job's, and would refuse this one."""
    from evalkit._engine.checkpoint import checkpoint_path

    stale = checkpoint_path(run_out, root)
    if stale.exists():
        stale.unlink()
        if log is not None:
            log(f"evalkit: removed {stale}, an earlier job's checkpoint")
